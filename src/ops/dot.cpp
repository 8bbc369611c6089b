// Contractions: dot_general (XLA's DotGeneral). Output dims: batch, lhs free, rhs free.
#include <algorithm>
#include <numeric>
#include <optional>

#include "backend/cpu/dot.h"
#include "ops/ad_rules.h"
#include "ops/batching.h"
#include "ops/common.h"
#include "transforms/bind.h"

namespace jx::ops {
namespace {

const char* kOp = "dot_general";

std::string pair_str(const Aval& l, const Aval& r) { return str(aval_str(l), " · ", aval_str(r)); }

void check_dims(const char* what, const std::vector<int64_t>& dims, const Aval& x,
                std::vector<int>& used, const Aval& l, const Aval& r) {
  const int64_t nd = int64_t(x.shape.size());
  for (int64_t d : dims) {
    if (d < 0 || d >= nd)
      throw IndexError(str("[dot_general] ", what, " ", list_str(dims),
                           " is out of range for an operand of rank ", nd, ": ", pair_str(l, r),
                           "; dimension numbers are non-negative and below the rank"));
    if (used[size_t(d)]++)
      throw ValueError(str("[dot_general] ", what, " ", list_str(dims), " repeats dimension ", d,
                           " of ", aval_str(x), " (each dimension may be batch or contracting, "
                           "and appear once): ", pair_str(l, r)));
  }
}

// JAX's _validate_preferred_element_type.
void check_preferred(DType input, DType pref, const Aval& l, const Aval& r) {
  if (is_complex(input) != is_complex(pref))
    throw DTypeError(str("[dot_general] preferred_element_type ", dtype_name(pref),
                         " is incompatible with the operands ", pair_str(l, r),
                         "; complex operands need a complex preferred type, and only they"));
  const bool in_int = is_integer(input), pref_int = is_integer(pref);
  const bool in_float = is_floating(input), pref_float = is_floating(pref);
  if (!(in_int && pref_float)) {
    if ((in_int && !pref_int) || (in_float && !pref_float))
      throw DTypeError(str("[dot_general] preferred_element_type ", dtype_name(pref),
                           " is incompatible with the operands ", pair_str(l, r),
                           "; the allowed (input, preferred) kinds are (integer, integer), "
                           "(integer, floating) and (floating, floating)"));
    if (is_signed_integer(input) && !is_signed_integer(pref))
      throw DTypeError(str("[dot_general] preferred_element_type ", dtype_name(pref),
                           " must have the same signedness as the operands ", pair_str(l, r)));
  }
  if (itemsize(pref) < itemsize(input))
    throw DTypeError(str("[dot_general] preferred_element_type ", dtype_name(pref),
                         " must not be narrower than the operands ", pair_str(l, r)));
}

Avals dot_general_abstract_eval(std::span<const Aval> in, const Params& p) {
  const Aval &l = in[0], &r = in[1];
  require_same_dtype(kOp, in);
  const auto &lc = p.ints("lhs_contracting"), &rc = p.ints("rhs_contracting");
  const auto &lb = p.ints("lhs_batch"), &rb = p.ints("rhs_batch");
  if (lc.size() != rc.size())
    throw ShapeError(str("[dot_general] lhs_contracting ", list_str(lc), " and rhs_contracting ",
                         list_str(rc), " must have the same length: ", pair_str(l, r)));
  if (lb.size() != rb.size())
    throw ShapeError(str("[dot_general] lhs_batch ", list_str(lb), " and rhs_batch ",
                         list_str(rb), " must have the same length: ", pair_str(l, r)));
  std::vector<int> lused(l.shape.size(), 0), rused(r.shape.size(), 0);
  check_dims("lhs_batch", lb, l, lused, l, r);
  check_dims("lhs_contracting", lc, l, lused, l, r);
  check_dims("rhs_batch", rb, r, rused, l, r);
  check_dims("rhs_contracting", rc, r, rused, l, r);
  for (size_t i = 0; i < lb.size(); ++i)
    if (l.shape[size_t(lb[i])] != r.shape[size_t(rb[i])])
      throw ShapeError(str("[dot_general] batch dimensions differ: ", pair_str(l, r), "; lhs dim ",
                           lb[i], " has size ", l.shape[size_t(lb[i])], ", rhs dim ", rb[i],
                           " has size ", r.shape[size_t(rb[i])]));
  for (size_t i = 0; i < lc.size(); ++i)
    if (l.shape[size_t(lc[i])] != r.shape[size_t(rc[i])])
      throw ShapeError(str("[dot_general] contracting dimensions differ: ", pair_str(l, r),
                           "; lhs dim ", lc[i], " has size ", l.shape[size_t(lc[i])],
                           ", rhs dim ", rc[i], " has size ", r.shape[size_t(rc[i])],
                           "; transpose an operand or choose other contracting dimensions"));
  Shape out;
  for (int64_t d : lb) out.push_back(l.shape[size_t(d)]);
  for (size_t d = 0; d < l.shape.size(); ++d)
    if (!lused[d]) out.push_back(l.shape[d]);
  for (size_t d = 0; d < r.shape.size(); ++d)
    if (!rused[d]) out.push_back(r.shape[d]);
  if (p.has("preferred_element_type")) {
    DType pref = p.dtype("preferred_element_type");
    check_preferred(l.dtype, pref, l, r);
    return {Aval{out, pref, false}};
  }
  return {Aval{out, l.dtype, all_weak(in)}};
}

void dot_general_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& l = detail::impl_of(in[0]);
  const auto& r = detail::impl_of(in[1]);
  cpu::DotDims d{p.ints("lhs_contracting"), p.ints("rhs_contracting"), p.ints("lhs_batch"),
                 p.ints("rhs_batch")};
  cpu::dot_general(l.dtype, out[0].dtype(), l.buffer->data(), l.shape.data(), int(l.shape.size()),
                   r.buffer->data(), r.shape.data(), int(r.shape.size()), d,
                   detail::raw_data(out[0]));
}


// ---- autodiff: dot_general is bilinear (JAX: ad.defbilinear) ----

lax::DotDimensionNumbers dnums_of(const Params& p) {
  return {p.ints("lhs_contracting"), p.ints("rhs_contracting"), p.ints("lhs_batch"),
          p.ints("rhs_batch")};
}

std::optional<DType> preferred_of(const Params& p) {
  if (p.has("preferred_element_type")) return p.dtype("preferred_element_type");
  return std::nullopt;
}

Arrays dot_general_jvp(std::span<const Array> primals, std::span<const Array>,
                       std::span<const Array> tangents, const Params& p) {
  const auto dn = dnums_of(p);
  const auto pref = preferred_of(p);
  Array out;
  if (!ad_rules::is_zero(tangents[0]))
    out = lax::dot_general(tangents[0], primals[1], dn, pref);
  if (!ad_rules::is_zero(tangents[1]))
    out = ad_rules::add_tangents(out, lax::dot_general(primals[0], tangents[1], dn, pref));
  return {out};
}

std::vector<int64_t> remaining(int64_t ndim, const std::vector<int64_t>& a,
                               const std::vector<int64_t>& b) {
  std::vector<int64_t> r;
  for (int64_t d = 0; d < ndim; ++d)
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end())
      r.push_back(d);
  return r;
}

std::vector<int64_t> iota(int64_t start, size_t n) {
  std::vector<int64_t> r(n);
  std::iota(r.begin(), r.end(), start);
  return r;
}

std::vector<int64_t> argsort(const std::vector<int64_t>& v) {
  std::vector<int64_t> idx = iota(0, v.size());
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
    return v[size_t(a)] < v[size_t(b)];
  });
  return idx;
}

// JAX's _dot_general_transpose_lhs: the cotangent g (dims: batch, lhs free, rhs free) is
// contracted with y over y's free dims, giving (batch, x free, x contracting ordered as
// y's contracting dims), then transposed back into x's dim order. `swap` is the rhs case,
// where x's free dims come second in g.
Array transpose_operand(const Array& g, Array y, const Aval& x, const std::vector<int64_t>& xc,
                        const std::vector<int64_t>& yc, const std::vector<int64_t>& xb,
                        const std::vector<int64_t>& yb, bool swap) {
  const std::vector<int64_t> x_kept = remaining(int64_t(x.shape.size()), xc, xb);
  const std::vector<int64_t> y_kept = remaining(y.ndim(), yc, yb);
  const int64_t nb = int64_t(xb.size());
  const std::vector<int64_t> ans_batch = iota(0, xb.size());
  const std::vector<int64_t> ans_y =
      swap ? iota(nb, y_kept.size()) : iota(nb + int64_t(x_kept.size()), y_kept.size());
  // With preferred_element_type, g is wider than y; XLA computes a mixed dot in the wider
  // type, and our dot_general takes one dtype.
  if (y.dtype() != g.dtype()) y = lax::convert_element_type(y, g.dtype(), y.weak_type());
  std::vector<int64_t> xc_by_y;
  for (int64_t k : argsort(yc)) xc_by_y.push_back(xc[size_t(k)]);
  // dot(g, y) gives x's dims as (batch, kept, contracting); dot(y, g) as (batch,
  // contracting, kept). Take the order that needs no transpose when there is one (e.g.
  // the weight gradient x^T g of a matmul), instead of always transposing after.
  std::vector<int64_t> order_gy = xb, order_yg = xb;
  order_gy.insert(order_gy.end(), x_kept.begin(), x_kept.end());
  order_gy.insert(order_gy.end(), xc_by_y.begin(), xc_by_y.end());
  order_yg.insert(order_yg.end(), xc_by_y.begin(), xc_by_y.end());
  order_yg.insert(order_yg.end(), x_kept.begin(), x_kept.end());
  const std::vector<int64_t> identity = iota(0, order_gy.size());
  bool y_first = argsort(order_gy) != identity && argsort(order_yg) == identity;
  Array r = y_first ? lax::dot_general(y, g, {y_kept, ans_y, yb, ans_batch})
                    : lax::dot_general(g, y, {ans_y, y_kept, ans_batch, yb});
  const std::vector<int64_t> perm = argsort(y_first ? order_yg : order_gy);
  if (perm != identity) r = lax::transpose(r, perm);
  if (r.dtype() != x.dtype) r = lax::convert_element_type(r, x.dtype, x.weak);
  return r;
}

Arrays dot_general_transpose(std::span<const Array> cts, std::span<const Array> inputs,
                             std::span<const Aval> avals, std::span<const bool> linear,
                             const Params& p) {
  if (linear[0] && linear[1])
    throw InternalError("[dot_general] transpose: both operands are linear (a bilinear "
                        "primitive is linear in one operand at a time)");
  Arrays out(2);
  const Array& g = cts[0];
  if (ad_rules::is_zero(g)) return out;
  const auto &lc = p.ints("lhs_contracting"), &rc = p.ints("rhs_contracting");
  const auto &lb = p.ints("lhs_batch"), &rb = p.ints("rhs_batch");
  if (linear[0]) out[0] = transpose_operand(g, inputs[1], avals[0], lc, rc, lb, rb, false);
  if (linear[1]) out[1] = transpose_operand(g, inputs[0], avals[1], rc, lc, rb, lb, true);
  return out;
}

// ---- batching (jax's _dot_general_batch_rule): the batch dim joins the dimension numbers.
// Both operands batched: a new leading dot batch dim (output dim 0). One operand batched:
// a free dim of that operand, which lands in the output among that operand's free dims in
// its original order, so no operand is transposed. ----
std::vector<int64_t> bump(const std::vector<int64_t>& dims, int bdim) {
  std::vector<int64_t> r;
  for (int64_t d : dims) r.push_back(d >= bdim ? d + 1 : d);
  return r;
}

// How many of the unbatched operand's free dims come before batch dim `bdim`.
int64_t free_dims_before(int bdim, const std::vector<int64_t>& contracting,
                         const std::vector<int64_t>& batch) {
  int64_t n = 0;
  for (int64_t d = 0; d < bdim; ++d)
    if (std::find(contracting.begin(), contracting.end(), d) == contracting.end() &&
        std::find(batch.begin(), batch.end(), d) == batch.end())
      ++n;
  return n;
}

ops::batching::BatchResult dot_general_batch(std::span<const Array> in, std::span<const int> dims,
                                             const Params& p) {
  using ops::batching::kNotMapped;
  const int lbd = dims[0], rbd = dims[1];
  std::vector<int64_t> lc = p.ints("lhs_contracting"), rc = p.ints("rhs_contracting");
  std::vector<int64_t> lb = p.ints("lhs_batch"), rb = p.ints("rhs_batch");
  int out;
  if (lbd != kNotMapped && rbd != kNotMapped) {
    lb = bump(lb, lbd);
    lb.insert(lb.begin(), lbd);
    rb = bump(rb, rbd);
    rb.insert(rb.begin(), rbd);
    lc = bump(lc, lbd);
    rc = bump(rc, rbd);
    out = 0;
  } else if (lbd != kNotMapped) {
    out = int(int64_t(lb.size()) + free_dims_before(lbd, lc, lb));
    lb = bump(lb, lbd);
    lc = bump(lc, lbd);
  } else {
    const int64_t lhs_free = in[0].ndim() - int64_t(lc.size() + lb.size());
    out = int(int64_t(lb.size()) + lhs_free + free_dims_before(rbd, rc, rb));
    rb = bump(rb, rbd);
    rc = bump(rc, rbd);
  }
  Params q = p;
  q.set("lhs_contracting", lc);
  q.set("rhs_contracting", rc);
  q.set("lhs_batch", lb);
  q.set("rhs_batch", rb);
  return {{bind1(Prim::DotGeneral, {in[0], in[1]}, q)}, {out}};
}

}  // namespace

void register_dot() {
  auto& d = mutable_info(Prim::DotGeneral);
  d.abstract_eval = dot_general_abstract_eval;
  d.impl = dot_general_impl;
  d.jvp = dot_general_jvp;
  d.transpose = dot_general_transpose;
  d.batch = dot_general_batch;
}

}  // namespace jx::ops
