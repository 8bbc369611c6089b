// jnp: linalg.
#pragma once
#include "jx/array.h"

namespace jx::numpy {}  // namespace jx::numpy
