// jx::nn: Flax linen's module system (nn/module.h) and its errors (nn/errors.h).
#pragma once
#include "jx/nn/errors.h"
#include "jx/nn/module.h"
