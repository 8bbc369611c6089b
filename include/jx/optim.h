// jx::optim: Optax in C++ — gradient transformations and their combinators
// (optim/transform.h), optimizers (optim/optimizers.h), schedules (optim/schedules.h) and
// losses (optim/losses.h). docs/optim.md.
#pragma once
#include "jx/optim/combine.h"
#include "jx/optim/losses.h"
#include "jx/optim/optimizers.h"
#include "jx/optim/optimizers_more.h"
#include "jx/optim/schedules.h"
#include "jx/optim/transform.h"
#include "jx/optim/transforms_more.h"
#include "jx/optim/sharded.h"
#include "jx/optim/train_state.h"
