// jx::numpy: NumPy's API with JAX's semantics (immutability, 32-bit defaults, weak types,
// clamped out-of-bounds reads). Composed from jx::lax.
#pragma once
#include "jx/numpy/creation.h"
#include "jx/numpy/fft.h"
#include "jx/numpy/io.h"
#include "jx/numpy/linalg.h"
#include "jx/numpy/manipulation.h"
#include "jx/numpy/math.h"
#include "jx/numpy/reductions.h"
#include "jx/numpy/safetensors.h"
#include "jx/numpy/selection.h"
