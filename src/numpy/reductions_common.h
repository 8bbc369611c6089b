// Helpers shared by the jnp reduction files (reductions*.cpp): axis handling, JAX's dtype
// rules for reductions, and small lax compositions.
#pragma once
#include <vector>

#include "jx/lax.h"
#include "jx/numpy.h"
#include "numpy/promote.h"

namespace jx::numpy::rdetail {

// Canonical, sorted reduction axes; none means all. Out-of-range axes throw IndexError
// naming `op`; duplicates throw ValueError, as jnp does.
std::vector<int64_t> reduction_axes(const char* op, int ndim, const Axes& axis);
// The shape `s` with the reduced axes set to 1 (keepdims).
Shape keepdims_shape(const Shape& s, const std::vector<int64_t>& axes);
// Number of elements in the reduced axes.
int64_t reduced_size(const Shape& s, const std::vector<int64_t>& axes);

DType to_inexact(DType t);        // ints/bool -> float32
DType promote_integer(DType t);   // bool/small ints -> int32, small uints -> uint32
DType upcast_f16(DType t);        // float16/bfloat16 -> float32

inline Array cast(const Array& x, DType t) { return lax::convert_element_type(x, t, false); }
// A strong 0-d constant of dtype t.
Array constant(double v, DType t);
// x reshaped to rank `rank` with leading 1s (free).
inline Array to_rank(const Array& x, int rank) { return detail::expand_to_rank(x, size_t(rank)); }
Array nan_mask(const Array& x);
// where(mask, x, fill) with mask broadcast to x's shape (NumPy rules; ShapeError naming op).
Array where_fill(const char* op, const Array& mask, const Array& x, const Array& fill);
// Elementwise binary op with rank equalization (operands already share a dtype).
inline Array bin(detail::LaxBinary f, const Array& a, const Array& b) {
  int r = std::max(a.ndim(), b.ndim());
  return f(to_rank(a, r), to_rank(b, r));
}

}  // namespace jx::numpy::rdetail
