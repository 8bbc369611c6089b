// jx::nn: Flax linen's module system (nn/module.h), its errors (nn/errors.h), the layers
// (nn/layers.h), jax.nn's functions (nn/functions.h) and initializers (nn/initializers.h).
#pragma once
#include "jx/nn/attention.h"
#include "jx/nn/errors.h"
#include "jx/nn/functions.h"
#include "jx/nn/initializers.h"
#include "jx/nn/layers.h"
#include "jx/nn/layers_linear.h"
#include "jx/nn/module.h"
#include "jx/nn/normalization.h"
