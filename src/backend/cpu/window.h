// CPU kernels for windowed reductions (XLA's ReduceWindow, SelectAndScatter and the pair
// reduction behind jax's select_and_gather_add). Pointers and shapes in; arrays are
// contiguous row-major. Each entry point has a naive `_reference` beside it: the tests'
// oracle, and the path for every geometry the fast loops do not cover.
//
// Geometry, per dim d: the operand is base-dilated (base_dilation[d] - 1 holes between
// neighbours) and padded by pad_lo[d] before / some amount after; output element o reads
// the window positions p = o * strides[d] + k * window_dilation[d], k < window[d], of that
// padded, dilated operand. Holes and padding hold the reduction's identity.
#pragma once
#include <cstdint>

#include "jx/dtype.h"

namespace jx::cpu {

struct WindowGeom {
  int ndim = 0;
  const int64_t* in_shape = nullptr;   // the operand
  const int64_t* out_shape = nullptr;  // windows per dim
  const int64_t* window = nullptr;
  const int64_t* strides = nullptr;
  const int64_t* pad_lo = nullptr;
  const int64_t* base_dilation = nullptr;
  const int64_t* window_dilation = nullptr;
};

enum class WindowOp { Sum, Max, Min };

// out[o] = op over o's window, starting from the identity (0, -inf/lowest/false,
// +inf/highest/true); a float max/min propagates NaN. Sums accumulate in window order
// (half types in float, signed ints wrapping).
void reduce_window(WindowOp op, DType dtype, const void* x, const WindowGeom& g, void* out);
void reduce_window_reference(WindowOp op, DType dtype, const void* x, const WindowGeom& g,
                             void* out);

// XLA's SelectAndScatter with select = ge (is_ge) or le and scatter = add, as jax runs it
// on CPU: in each window of `operand` (no base dilation; padding holds -inf/lowest for ge,
// +inf/highest for le) the first position initializes the selection and a later candidate
// c replaces the selected s when !(s >= c) (ge) / !(s <= c) (le): the first max (min)
// wins. out (the operand's shape) = 0 plus, at each selected position, the sum of
// `source` (g.out_shape) over the windows that selected it; selections in the padding
// are dropped. Bool adds as or.
void select_and_scatter_add(bool is_ge, DType dtype, const void* source, const void* operand,
                            const WindowGeom& g, void* out);
void select_and_scatter_add_reference(bool is_ge, DType dtype, const void* source,
                                      const void* operand, const WindowGeom& g, void* out);

// jax's select_and_gather_add: a reduce_window over (operand, tangent) pairs from
// (identity, 0) where the accumulator a is replaced by the element e when
// !(a.operand >= e.operand) (ge) / !(a.operand <= e.operand) (le): out[o] is the tangent
// of the first max (min) of o's window, 0 when the window holds only padding, holes or
// values equal to the identity. Floating dtypes.
void select_and_gather_add(bool is_ge, DType dtype, const void* tangents, const void* operand,
                           const WindowGeom& g, void* out);
void select_and_gather_add_reference(bool is_ge, DType dtype, const void* tangents,
                                     const void* operand, const WindowGeom& g, void* out);

}  // namespace jx::cpu
