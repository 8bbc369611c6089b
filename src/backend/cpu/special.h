// Kernels of the special-function primitives (ops/special.cpp): elementwise over operands
// that broadcast by size-1 dims, as the binary kernels. The scalar functions are in
// backend/cpu/special_math.h; every dtype is evaluated in double and rounded once.
#pragma once
#include <cstdint>

#include "jx/dtype.h"

namespace jx::cpu {

enum class SpecialOp {
  Igamma,          // (a, x)
  Igammac,         // (a, x)
  IgammaGradA,     // (a, x)
  Betainc,         // (a, b, x)
  Zeta,            // (x, q)
  Polygamma,       // (n, x)
  BesselI0e,       // (x)
  BesselI1e,       // (x)
};

// Number of operands of `op`: 1, 2 or 3.
int special_arity(SpecialOp op);

// out[i] = op(in[0][i], ...) over `ndim`-d shapes; each operand has dims equal to out's or
// 1 and the floating `dtype` of out. Splits across threads for large outputs.
void special(SpecialOp op, DType dtype, const void* const* in, const int64_t* const* in_shapes,
             void* out, const int64_t* out_shape, int ndim);
// The naive oracle: one multi-index walk, one element at a time, no threads.
void special_reference(SpecialOp op, DType dtype, const void* const* in,
                       const int64_t* const* in_shapes, void* out, const int64_t* out_shape,
                       int ndim);

}  // namespace jx::cpu
