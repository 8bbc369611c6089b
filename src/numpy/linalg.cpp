// jnp contractions: dot, matmul, vdot, vecdot, inner, outer, tensordot, kron, trace, and
// Array::dot. Mirrors jax/_src/numpy/tensor_contractions.py: promote, then one
// lax::dot_general (plus free reshapes and, where the output order needs it, a transpose).
#include <algorithm>
#include <numeric>

#include "jx/numpy.h"
#include "numpy/promote.h"
#include "ops/common.h"
#include "support/str.h"

namespace jx::numpy {

namespace {

std::string t_str(const Array& a) { return type_str(a.dtype(), a.shape()); }

std::pair<Array, Array> promote2(const Array& a, const Array& b) {
  auto v = detail::promote({a, b});
  return {v[0], v[1]};
}

// dot_general on promoted operands; a preferred type equal to the promoted one is dropped
// so that weak types survive, as jnp does.
Array contract(const Array& a, const Array& b, const lax::DotDimensionNumbers& dn,
               std::optional<DType> pref) {
  if (pref && *pref == a.dtype() && !a.weak_type()) pref.reset();
  if (pref && *pref == a.dtype()) return lax::convert_element_type(lax::dot_general(a, b, dn), *pref);
  return lax::dot_general(a, b, dn, pref);
}

Array drop_unit_dims(const Array& x, const std::vector<int64_t>& dims) {
  if (dims.empty()) return x;
  Shape s;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (std::find(dims.begin(), dims.end(), i) == dims.end()) s.push_back(x.shape()[size_t(i)]);
  return lax::reshape(x, s);
}

Array transpose_if_needed(const Array& x, const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != int64_t(i)) return lax::transpose(x, perm);
  return x;
}

}  // namespace

Array dot(const Array& a0, const Array& b0, std::optional<DType> pref) {
  auto [a, b] = promote2(a0, b0);
  const int64_t an = a.ndim(), bn = b.ndim();
  lax::DotDimensionNumbers dn;
  if (an > 0 && bn > 0) {
    int64_t bc = bn == 1 ? 0 : bn - 2;
    if (a.shape()[size_t(an - 1)] != b.shape()[size_t(bc)])
      throw ShapeError(str("[dot] contracting dimensions differ: ", t_str(a0), " · ", t_str(b0),
                           "; the last dim of a has size ", a.shape()[size_t(an - 1)], ", dim ",
                           bc, " of b has size ", b.shape()[size_t(bc)]));
    dn.lhs_contracting = {an - 1};
    dn.rhs_contracting = {bc};
  }
  return contract(a, b, dn, pref);
}

Array matmul(const Array& a0, const Array& b0, std::optional<DType> pref) {
  for (int i = 0; i < 2; ++i) {
    const Array& x = i ? b0 : a0;
    if (x.ndim() == 0)
      throw ValueError(str("[matmul] operand ", i, " must have at least one dimension, got ",
                           t_str(x), "; use jnp::multiply to scale by a scalar"));
  }
  auto [a, b] = promote2(a0, b0);
  const bool a_mat = a.ndim() > 1, b_mat = b.ndim() > 1;
  const int64_t a_k = a.shape()[size_t(a.ndim() - 1)];
  const int64_t b_k = b.shape()[size_t(b_mat ? b.ndim() - 2 : 0)];
  if (a_k != b_k)
    throw ShapeError(str("[matmul] contracting dimensions differ: ", t_str(a0), " @ ", t_str(b0),
                         "; a has ", a_k, " columns but b has ", b_k, " rows"));
  // Batch dims, right-aligned; -1 marks a missing one.
  std::vector<int64_t> a_batch(a_mat ? a.shape().begin() : a.shape().end(),
                               a_mat ? a.shape().end() - 2 : a.shape().end());
  std::vector<int64_t> b_batch(b_mat ? b.shape().begin() : b.shape().end(),
                               b_mat ? b.shape().end() - 2 : b.shape().end());
  const size_t nb = std::max(a_batch.size(), b_batch.size());
  a_batch.insert(a_batch.begin(), nb - a_batch.size(), -1);
  b_batch.insert(b_batch.begin(), nb - b_batch.size(), -1);
  const size_t a_off = nb - (a_mat ? size_t(a.ndim() - 2) : 0);
  const size_t b_off = nb - (b_mat ? size_t(b.ndim() - 2) : 0);
  std::vector<int64_t> a_squeeze, b_squeeze, lb, rb, idx_batch, idx_a, idx_b;
  for (size_t i = 0; i < nb; ++i) {
    int64_t ba = a_batch[i], bb = b_batch[i];
    if (ba < 0) {
      idx_b.push_back(int64_t(i));
    } else if (bb < 0) {
      idx_a.push_back(int64_t(i));
    } else if (ba == 1) {
      idx_b.push_back(int64_t(i));
      a_squeeze.push_back(int64_t(i - a_off));
    } else if (bb == 1) {
      idx_a.push_back(int64_t(i));
      b_squeeze.push_back(int64_t(i - b_off));
    } else if (ba == bb) {
      // Positions in the squeezed operands: a keeps its batch and a-only dims before i.
      lb.push_back(int64_t(idx_batch.size() + idx_a.size()));
      rb.push_back(int64_t(idx_batch.size() + idx_b.size()));
      idx_batch.push_back(int64_t(i));
    } else {
      throw ShapeError(str("[matmul] batch dimensions do not broadcast: ", t_str(a0), " @ ",
                           t_str(b0), "; ", ba, " vs ", bb, " at batch axis ", i));
    }
  }
  if (a_mat) idx_a.push_back(int64_t(nb));
  if (b_mat) idx_b.push_back(int64_t(nb) + (a_mat ? 1 : 0));
  std::vector<int64_t> order = idx_batch;
  order.insert(order.end(), idx_a.begin(), idx_a.end());
  order.insert(order.end(), idx_b.begin(), idx_b.end());
  std::vector<int64_t> perm(order.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(),
                   [&](int64_t x, int64_t y) { return order[size_t(x)] < order[size_t(y)]; });
  Array as = drop_unit_dims(a, a_squeeze), bs = drop_unit_dims(b, b_squeeze);
  lax::DotDimensionNumbers dn{{as.ndim() - 1}, {bs.ndim() - 1 - (b_mat ? 1 : 0)}, lb, rb};
  return transpose_if_needed(contract(as, bs, dn, pref), perm);
}

Array vdot(const Array& a, const Array& b, std::optional<DType> pref) {
  if (a.size() != b.size())
    throw ShapeError(str("[vdot] operands must have the same number of elements, got ", t_str(a),
                         " and ", t_str(b)));
  // As jnp.vdot, a complex a is conjugated.
  Array av = lax::reshape(a, Shape{a.size()});
  if (is_complex(av.dtype())) av = lax::conj(av);
  return dot(av, lax::reshape(b, Shape{b.size()}), pref);
}

Array vecdot(const Array& a0, const Array& b0, int64_t axis, std::optional<DType> pref) {
  auto [a, b] = promote2(a0, b0);
  if (is_complex(a.dtype())) a = lax::conj(a);  // the conjugate dot product, as jnp.vecdot
  const int64_t ax = ops::canonical_axis("vecdot", axis, a.ndim());
  const int64_t bx = ops::canonical_axis("vecdot", axis, b.ndim());
  if (a.shape()[size_t(ax)] != b.shape()[size_t(bx)])
    throw ShapeError(str("[vecdot] the contracted axes differ: ", t_str(a0), " and ", t_str(b0),
                         " along axis ", axis));
  a = moveaxis(a, ax, -1);
  b = moveaxis(b, bx, -1);
  // (..., 1, n) @ (..., n, 1) -> (..., 1, 1): one batched dot_general with broadcasting.
  Shape as = a.shape(), bs = b.shape();
  as.insert(as.size() - 1, 1);
  bs.push_back(1);
  Array r = matmul(lax::reshape(a, as), lax::reshape(b, bs), pref);
  Shape rs(r.shape().begin(), r.shape().end() - 2);
  return lax::reshape(r, rs);
}

Array inner(const Array& a0, const Array& b0, std::optional<DType> pref) {
  if (a0.ndim() == 0 || b0.ndim() == 0) {
    Array r = a0 * b0;
    return pref ? lax::convert_element_type(r, *pref) : r;
  }
  return tensordot(a0, b0, TensordotAxes{{-1}, {-1}}, pref);
}

Array outer(const Array& a, const Array& b) {
  return lax::reshape(a, Shape{a.size(), 1}) * lax::reshape(b, Shape{1, b.size()});
}

Array tensordot(const Array& a, const Array& b, int64_t axes, std::optional<DType> pref) {
  if (axes < 0 || axes > std::min(a.ndim(), b.ndim()))
    throw ValueError(str("[tensordot] the number of axes (", axes,
                         ") must be between 0 and the smaller rank of ", t_str(a), " and ",
                         t_str(b)));
  std::vector<int64_t> ax, bx;
  for (int64_t i = 0; i < axes; ++i) {
    ax.push_back(a.ndim() - axes + i);
    bx.push_back(i);
  }
  return tensordot(a, b, TensordotAxes{ax, bx}, pref);
}

Array tensordot(const Array& a0, const Array& b0, const TensordotAxes& axes,
                std::optional<DType> pref) {
  const auto& [a_axes, b_axes] = axes;
  if (a_axes.size() != b_axes.size())
    throw ValueError(str("[tensordot] the axes lists must have equal length, got ",
                         list_str(a_axes), " and ", list_str(b_axes)));
  auto [a, b] = promote2(a0, b0);
  auto ax = ops::canonical_axes("tensordot", a_axes, a.ndim());
  auto bx = ops::canonical_axes("tensordot", b_axes, b.ndim());
  for (size_t i = 0; i < ax.size(); ++i)
    if (a.shape()[size_t(ax[i])] != b.shape()[size_t(bx[i])])
      throw ShapeError(str("[tensordot] contracting dimensions differ: ", t_str(a0), " · ",
                           t_str(b0), "; axis ", ax[i], " of a has size ",
                           a.shape()[size_t(ax[i])], ", axis ", bx[i], " of b has size ",
                           b.shape()[size_t(bx[i])]));
  return contract(a, b, {ax, bx, {}, {}}, pref);
}

// As jnp.cross: the vectors lie along axisa/axisb (size 2 or 3; a 2-vector has z = 0), the
// result's vector along axisc; two 2-vectors give the z component only.
Array cross(const Array& a0, const Array& b0, int64_t axisa, int64_t axisb, int64_t axisc,
            std::optional<int64_t> axis) {
  if (axis) axisa = axisb = axisc = *axis;
  auto [a1, b1] = promote2(a0, b0);
  if (a1.ndim() == 0 || b1.ndim() == 0)
    throw ValueError(str("[cross] needs arrays of vectors, got ", t_str(a0), " and ", t_str(b0)));
  Array a = moveaxis(a1, axisa, -1), b = moveaxis(b1, axisb, -1);
  const int64_t na = a.shape().back(), nb = b.shape().back();
  if ((na != 2 && na != 3) || (nb != 2 && nb != 3))
    throw ValueError(str("[cross] the vectors must have 2 or 3 components, got ", t_str(a0), " (axis ",
                         axisa, ") and ", t_str(b0), " (axis ", axisb, ")"));
  auto comp = [](const Array& v, int64_t i) {
    return i < v.shape().back() ? v(jx::ellipsis, i) : zeros_like(v(jx::ellipsis, 0));
  };
  if (na == 2 && nb == 2) return comp(a, 0) * comp(b, 1) - comp(a, 1) * comp(b, 0);
  Array c = stack({comp(a, 1) * comp(b, 2) - comp(a, 2) * comp(b, 1),
                   comp(a, 2) * comp(b, 0) - comp(a, 0) * comp(b, 2),
                   comp(a, 0) * comp(b, 1) - comp(a, 1) * comp(b, 0)});
  return moveaxis(c, 0, axisc);
}

Array kron(const Array& a0, const Array& b0) {
  auto [a, b] = promote2(a0, b0);
  const int64_t n = std::max(a.ndim(), b.ndim());
  a = detail::expand_to_rank(a, size_t(n));
  b = detail::expand_to_rank(b, size_t(n));
  Shape as, bs, out;
  for (int64_t i = 0; i < n; ++i) {
    int64_t da = a.shape()[size_t(i)], db = b.shape()[size_t(i)];
    as.push_back(da);
    as.push_back(1);
    bs.push_back(1);
    bs.push_back(db);
    out.push_back(da * db);
  }
  return lax::reshape(lax::mul(lax::reshape(a, as), lax::reshape(b, bs)), out);
}

Array trace(const Array& a, int64_t offset, int64_t axis1, int64_t axis2, std::optional<DType> dtype) {
  if (a.ndim() < 2)
    throw ValueError(str("[trace] needs an array of rank >= 2, got ", t_str(a)));
  const int64_t x1 = ops::canonical_axis("trace", axis1, a.ndim());
  const int64_t x2 = ops::canonical_axis("trace", axis2, a.ndim());
  if (x1 == x2)
    throw ValueError(str("[trace] axis1 and axis2 must differ, got ", axis1, " and ", axis2));
  Array m = moveaxis(a, std::vector<int64_t>{x1, x2}, std::vector<int64_t>{-2, -1});
  const int64_t r = a.shape()[size_t(x1)], c = a.shape()[size_t(x2)];
  Array mask = detail::expand_to_rank(eye(r, c, offset, DType::Bool), size_t(m.ndim()));
  Array zero = detail::expand_to_rank(zeros({}, m.dtype()), size_t(m.ndim()));
  m = lax::select_n(mask, {zero, m});
  ReduceOptions opts;
  opts.dtype = dtype;
  return sum(m, Axes{-2, -1}, opts);
}

}  // namespace jx::numpy

namespace jx {
Array Array::dot(const Array& other) const { return numpy::dot(*this, other); }
}  // namespace jx
