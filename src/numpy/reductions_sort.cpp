// jnp sort, argsort, lexsort (jax/_src/numpy/sorting.py): lax.sort along one axis, with an
// iota operand for the indices.
#include "numpy/reductions_common.h"
#include "support/str.h"

namespace jx::numpy {

namespace {

// axis = nullopt flattens (axis 0 of the raveled array).
std::pair<Array, int64_t> sort_operand(const char* op, const Array& a, std::optional<int64_t> axis) {
  if (!axis) return {lax::reshape(a, Shape{a.size()}), 0};
  const int64_t nd = a.ndim();
  if (nd == 0)
    throw IndexError(str("[", op, "] cannot sort a 0-d array along axis ", *axis,
                         "; pass axis = std::nullopt to flatten"));
  if (*axis < -nd || *axis >= nd)
    throw IndexError(str("[", op, "] axis ", *axis, " is out of bounds for an array of rank ", nd,
                         "; valid axes are ", -nd, "..", nd - 1));
  return {a, *axis < 0 ? *axis + nd : *axis};
}

}  // namespace

Array sort(const Array& a, std::optional<int64_t> axis, bool stable, bool descending) {
  auto [x, ax] = sort_operand("sort", a, axis);
  Array r = lax::sort(x, ax, stable);
  return descending ? lax::rev(r, {ax}) : r;
}

Array argsort(const Array& a, std::optional<int64_t> axis, bool stable, bool descending) {
  auto [x, ax] = sort_operand("argsort", a, axis);
  Array iota = lax::broadcasted_iota(DType::Int32, x.shape(), ax);
  // Reversing before a stable sort keeps equal elements in their original order once
  // the result is reversed back.
  if (descending && stable) {
    x = lax::rev(x, {ax});
    iota = lax::rev(iota, {ax});
  }
  Array idx = lax::sort({x, iota}, ax, stable, 1)[1];
  return descending ? lax::rev(idx, {ax}) : idx;
}

Array lexsort(const std::vector<Array>& keys, int64_t axis) {
  if (keys.empty()) throw ValueError("[lexsort] needs at least one key");
  for (const auto& k : keys)
    if (k.shape() != keys[0].shape())
      throw ShapeError(str("[lexsort] all keys need to be the same shape, got ",
                           type_str(keys[0].dtype(), keys[0].shape()), " and ",
                           type_str(k.dtype(), k.shape())));
  const int64_t nd = keys[0].ndim();
  if (nd == 0) throw IndexError("[lexsort] needs keys with ndim >= 1");
  if (axis < -nd || axis >= nd)
    throw IndexError(str("[lexsort] axis ", axis, " is out of bounds for an array of rank ", nd,
                         "; valid axes are ", -nd, "..", nd - 1));
  const int64_t ax = axis < 0 ? axis + nd : axis;
  // NumPy's order: the last key is the primary one.
  std::vector<Array> ops(keys.rbegin(), keys.rend());
  ops.push_back(lax::broadcasted_iota(DType::Int32, keys[0].shape(), ax));
  return lax::sort(ops, ax, true, int64_t(keys.size())).back();
}

}  // namespace jx::numpy
