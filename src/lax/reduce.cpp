#include <algorithm>

#include "jx/lax.h"
#include "ops/common.h"
#include "transforms/bind.h"

namespace jx::lax {

using ops::Prim;

namespace {

// lax accepts negative axes and any order; the primitive's param is canonical: sorted,
// non-negative, unique.
Array reduce(Prim p, const Array& x, const std::vector<int64_t>& axes) {
  std::vector<int64_t> a = ops::canonical_axes(ops::name(p), axes, x.ndim());
  std::sort(a.begin(), a.end());
  return bind1(p, {x}, {{"axes", a}});
}

Array arg(Prim p, const Array& x, int64_t axis, DType index_dtype) {
  int64_t a = ops::canonical_axis(ops::name(p), axis, x.ndim());
  return bind1(p, {x}, {{"axes", std::vector<int64_t>{a}}, {"index_dtype", index_dtype}});
}

}  // namespace

Array reduce_sum(const Array& x, const std::vector<int64_t>& axes) {
  return reduce(Prim::ReduceSum, x, axes);
}
Array reduce_prod(const Array& x, const std::vector<int64_t>& axes) {
  return reduce(Prim::ReduceProd, x, axes);
}
Array reduce_max(const Array& x, const std::vector<int64_t>& axes) {
  return reduce(Prim::ReduceMax, x, axes);
}
Array reduce_min(const Array& x, const std::vector<int64_t>& axes) {
  return reduce(Prim::ReduceMin, x, axes);
}
Array reduce_and(const Array& x, const std::vector<int64_t>& axes) {
  return reduce(Prim::ReduceAnd, x, axes);
}
Array reduce_or(const Array& x, const std::vector<int64_t>& axes) {
  return reduce(Prim::ReduceOr, x, axes);
}
Array reduce_xor(const Array& x, const std::vector<int64_t>& axes) {
  return reduce(Prim::ReduceXor, x, axes);
}
Array argmax(const Array& x, int64_t axis, DType index_dtype) {
  return arg(Prim::Argmax, x, axis, index_dtype);
}
Array argmin(const Array& x, int64_t axis, DType index_dtype) {
  return arg(Prim::Argmin, x, axis, index_dtype);
}

}  // namespace jx::lax
