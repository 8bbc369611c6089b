#include "ops/ad_rules.h"

#include "core/array_impl.h"

namespace jx::ops::ad_rules {

Array zeros(const Aval& a) {
  return lax::broadcast_in_dim(lax::convert_element_type(Array(0), a.dtype, a.weak), a.shape, {});
}

Array zeros_like(const Array& x) { return zeros(aval_of(x)); }

Array instantiate(const Array& t, const Aval& a) { return t.valid() ? t : zeros(a); }

Array add_tangents(const Array& a, const Array& b) {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  return lax::add(a, b);
}

Array bcast(const Array& t, const Array& like) {
  if (!t.valid() || t.shape() == like.shape()) return t;
  std::vector<int64_t> dims;
  for (int i = 0; i < t.ndim(); ++i) dims.push_back(i);
  return lax::broadcast_in_dim(t, like.shape(), dims);
}

Array unbroadcast(const Array& ct, const Aval& a) {
  if (!ct.valid() || ct.shape() == a.shape) return ct;
  std::vector<int64_t> axes;
  for (size_t i = 0; i < a.shape.size(); ++i)
    if (a.shape[i] == 1 && ct.shape()[i] != 1) axes.push_back(int64_t(i));
  return lax::reshape(lax::reduce_sum(ct, axes), a.shape);
}

Array scale(const Array& t, const Array& c) {
  if (!t.valid()) return t;
  return lax::mul(t, c);
}

Array constant(double v, const Array& like) {
  // Built from a float64 scalar so that float64 rules keep full precision.
  Array d = detail::empty_array({}, DType::Float64, true);
  *detail::data<double>(d) = v;
  Array c = lax::convert_element_type(d, like.dtype(), true);
  return lax::reshape(c, Shape(size_t(like.ndim()), 1));  // lax operands need equal rank
}

}  // namespace jx::ops::ad_rules
