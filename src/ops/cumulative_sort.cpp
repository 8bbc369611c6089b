// Cumulative primitives (cumsum, cumprod, cummax, cummin, cumlogsumexp; params `axis`,
// `reverse`) and the multi-operand sort (params `dimension`, `is_stable`, `num_keys`).
// Batching shifts the axis past the batch dim, as JAX's _cumred_batch_rule and
// _sort_batch_rule.
#include <limits>

#include "backend/cpu/reduce.h"
#include "ops/ad_rules.h"
#include "ops/batching.h"
#include "ops/common.h"
#include "transforms/bind.h"

namespace jx::ops {
namespace {

struct CumSpec {
  Prim prim;
  cpu::CumOp op;
};
constexpr CumSpec kCum[] = {
    {Prim::Cumsum, cpu::CumOp::Sum},       {Prim::Cumprod, cpu::CumOp::Prod},
    {Prim::Cummax, cpu::CumOp::Max},       {Prim::Cummin, cpu::CumOp::Min},
    {Prim::Cumlogsumexp, cpu::CumOp::LogSumExp},
};

cpu::CumOp cum_op(Prim p) {
  for (const auto& s : kCum)
    if (s.prim == p) return s.op;
  throw InternalError("jx internal error: not a cumulative primitive");
}

template <Prim P>
Avals cum_abstract_eval(std::span<const Aval> in, const Params& p) {
  const char* op = name(P);
  const Aval& x = in[0];
  const cpu::CumOp c = cum_op(P);
  if (c == cpu::CumOp::LogSumExp && !is_floating(x.dtype))
    throw DTypeError(str("[", op, "] needs a floating dtype, got ", aval_str(x)));
  if ((c == cpu::CumOp::Sum || c == cpu::CumOp::Prod) && x.dtype == DType::Bool)
    throw DTypeError(str("[", op, "] does not accept ", aval_str(x),
                         "; convert bools to an integer dtype first (jnp::", op, " does)"));
  const int64_t nd = int64_t(x.shape.size());
  const int64_t axis = p.i("axis");
  if (axis < 0 || axis >= nd)
    throw IndexError(str("[", op, "] axis ", axis, " is out of bounds for ", aval_str(x),
                         nd == 0 ? "; a scalar has no axis to accumulate along" : ""));
  return {x};
}

template <Prim P>
void cum_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& x = detail::impl_of(in[0]);
  cpu::cumulative(cum_op(P), x.dtype, x.buffer->data(), x.shape.data(), int(x.shape.size()),
                  int(p.i("axis")), p.b("reverse"), detail::raw_data(out[0]));
}

// ---- sort ----
Avals sort_abstract_eval(std::span<const Aval> in, const Params& p) {
  if (in.empty()) throw ValueError("[sort] needs at least one operand");
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].shape != in[0].shape)
      throw ShapeError(str("[sort] all operands must have the same shape, got ", avals_str(in)));
  const int64_t nd = int64_t(in[0].shape.size());
  const int64_t dim = p.i("dimension");
  if (dim < 0 || dim >= nd)
    throw IndexError(str("[sort] dimension ", dim, " is out of bounds for ", aval_str(in[0]),
                         nd == 0 ? "; a scalar cannot be sorted" : ""));
  const int64_t nk = p.i("num_keys");
  if (nk < 1 || nk > int64_t(in.size()))
    throw ValueError(str("[sort] num_keys must be in 1..", in.size(), " (the number of operands), got ",
                         nk));
  return Avals(in.begin(), in.end());
}

void sort_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const int n = int(in.size());
  std::vector<DType> dts;
  std::vector<const void*> src;
  std::vector<void*> dst;
  for (int i = 0; i < n; ++i) {
    const auto& x = detail::impl_of(in[size_t(i)]);
    dts.push_back(x.dtype);
    src.push_back(x.buffer->data());
    dst.push_back(detail::raw_data(out[size_t(i)]));
  }
  const Shape& s = detail::impl_of(in[0]).shape;
  cpu::sort(n, dts.data(), src.data(), dst.data(), s.data(), int(s.size()), int(p.i("dimension")),
            int(p.i("num_keys")), p.b("is_stable"));
}


// ---- autodiff ----
using namespace ad_rules;

Arrays cumsum_jvp(std::span<const Array>, std::span<const Array>, std::span<const Array> t,
                  const Params& p) {
  if (is_zero(t[0])) return {Array()};
  return {lax::cumsum(t[0], p.i("axis"), p.b("reverse"))};
}

Arrays cumsum_transpose(std::span<const Array> ct, std::span<const Array>, std::span<const Aval>,
                        std::span<const bool>, const Params& p) {
  if (is_zero(ct[0])) return {Array()};
  return {lax::cumsum(ct[0], p.i("axis"), !p.b("reverse"))};
}

// cumprod/cummax/cummin/cumlogsumexp are differentiated as JAX does: through the parallel
// prefix scan (jax.lax.associative_scan), carrying (primal, tangent) pairs through the
// combine function's own jvp. Same tree, same per-step rules, hence the same values at
// zeros (cumprod) and at ties (max/min split a tangent 0.5/0.5, as lax.max's jvp does).
struct Dual {
  Array p, t;
};

Array sl(const Array& x, int64_t start, int64_t limit, int64_t stride, int64_t axis) {
  return lax::slice_in_dim(x, start, limit, stride, axis);
}
Dual sl(const Dual& d, int64_t start, int64_t limit, int64_t stride, int64_t axis) {
  return {sl(d.p, start, limit, stride, axis), sl(d.t, start, limit, stride, axis)};
}

// (x == z ? 1 : 0) / (y == z ? 2 : 1): lax's _balanced_eq.
Array balanced_eq(const Array& x, const Array& z, const Array& y) {
  Array ex = lax::convert_element_type(lax::eq(x, z), z.dtype());
  Array ey = lax::convert_element_type(lax::eq(y, z), z.dtype());
  return lax::div(ex, lax::add(constant(1.0, z), ey));
}

// jnp.logaddexp's jvp replaces +inf by 0 before exp(x - out).
Array replace_posinf(const Array& x) {
  Array inf = constant(std::numeric_limits<double>::infinity(), x);
  return lax::select(lax::eq(x, lax::broadcast_in_dim(lax::reshape(inf, {}), x.shape(), {})),
                     zeros_like(x), x);
}

Dual combine(Prim op, const Dual& a, const Dual& b) {
  switch (op) {
    case Prim::Cumprod:
      return {lax::mul(a.p, b.p), lax::add(lax::mul(a.t, b.p), lax::mul(a.p, b.t))};
    case Prim::Cummax:
    case Prim::Cummin: {
      Array z = op == Prim::Cummax ? lax::max(a.p, b.p) : lax::min(a.p, b.p);
      return {z, lax::add(lax::mul(a.t, balanced_eq(a.p, z, b.p)),
                          lax::mul(b.t, balanced_eq(b.p, z, a.p)))};
    }
    case Prim::Cumlogsumexp: {
      // lax.logaddexp: max + log1p(exp(-|a - b|)), with NaN-producing deltas (infinities
      // of one sign, NaNs) falling back to a + b.
      Array amax = lax::max(a.p, b.p);
      Array delta = lax::sub(a.p, b.p);
      Array z = lax::select(lax::ne(delta, delta), lax::add(a.p, b.p),
                            lax::add(amax, lax::log1p(lax::exp(lax::neg(lax::abs(delta))))));
      Array zr = replace_posinf(z);
      return {z, lax::add(lax::mul(a.t, lax::exp(lax::sub(replace_posinf(a.p), zr))),
                          lax::mul(b.t, lax::exp(lax::sub(replace_posinf(b.p), zr))))};
    }
    default:
      throw InternalError("jx internal error: no combine function for this primitive");
  }
}

Array concat(const Array& a, const Array& b, int64_t axis) { return lax::concatenate({a, b}, axis); }

// associative_scan's _interleave: a at even positions, b at odd ones, by padding with
// zeros and adding.
Array interleave(const Array& a, const Array& b, int64_t axis) {
  const bool same = a.shape()[size_t(axis)] == b.shape()[size_t(axis)];
  std::vector<lax::PadConfig> pa(size_t(a.ndim())), pb(size_t(b.ndim()));
  pa[size_t(axis)] = {0, same ? 1 : 0, 1};
  pb[size_t(axis)] = {1, same ? 0 : 1, 1};
  Array za = lax::convert_element_type(Array(0), a.dtype());
  return lax::add(lax::pad(a, za, pa), lax::pad(b, za, pb));
}

Dual scan(Prim op, const Dual& e, int64_t axis) {
  const int64_t n = e.p.shape()[size_t(axis)];
  if (n < 2) return e;
  Dual reduced = combine(op, sl(e, 0, n - 1, 2, axis), sl(e, 1, n, 2, axis));
  Dual odd = scan(op, reduced, axis);
  const int64_t m = odd.p.shape()[size_t(axis)];
  Dual even = n % 2 == 0 ? combine(op, sl(odd, 0, m - 1, 1, axis), sl(e, 2, n, 2, axis))
                         : combine(op, odd, sl(e, 2, n, 2, axis));
  Dual first = sl(e, 0, 1, 1, axis);
  even = {concat(first.p, even.p, axis), concat(first.t, even.t, axis)};
  return {interleave(even.p, odd.p, axis), interleave(even.t, odd.t, axis)};
}

template <Prim P>
Arrays cum_scan_jvp(std::span<const Array> x, std::span<const Array>, std::span<const Array> t,
                    const Params& p) {
  if (is_zero(t[0]) || !is_inexact(x[0].dtype())) return {Array()};
  const int64_t axis = p.i("axis");
  const bool reverse = p.b("reverse");
  Dual e{x[0], t[0]};
  if (reverse) e = {lax::rev(e.p, {axis}), lax::rev(e.t, {axis})};
  Dual r = scan(P, e, axis);
  return {reverse ? lax::rev(r.t, {axis}) : r.t};
}

// JAX's _sort_jvp: sort once more with an iota along `dimension` as the last operand to
// get the permutation, then gather every tangent with it (t[idx] with full index arrays).
Arrays sort_jvp(std::span<const Array> x, std::span<const Array>, std::span<const Array> t,
                const Params& p) {
  bool any = false;
  for (const Array& ti : t) any = any || !is_zero(ti);
  if (!any) return Arrays(x.size());
  const Shape& s = x[0].shape();
  if (s.numel() == 0) return Arrays(t.begin(), t.end());  // nothing to permute
  const int64_t nd = int64_t(s.size()), dim = p.i("dimension");
  const DType it = s[size_t(dim)] < std::numeric_limits<int32_t>::max() ? DType::Int32 : DType::Int64;
  std::vector<Array> ops(x.begin(), x.end());
  ops.push_back(lax::broadcasted_iota(it, s, dim));
  Array perm = lax::sort(ops, dim, p.b("is_stable"), p.i("num_keys")).back();
  Shape s1 = s;
  s1.push_back(1);
  std::vector<Array> idx;
  lax::GatherDimensionNumbers dn;
  std::vector<int64_t> sizes;
  for (int64_t d = 0; d < nd; ++d) {
    Array id = d == dim ? perm : lax::broadcasted_iota(it, s, d);
    idx.push_back(lax::reshape(id, s1));
    dn.collapsed_slice_dims.push_back(d);
    dn.start_index_map.push_back(d);
    sizes.push_back(1);
  }
  Array indices = nd == 1 ? idx[0] : lax::concatenate(idx, nd);
  Arrays out;
  for (const Array& ti : t)
    out.push_back(is_zero(ti) ? Array() : lax::gather(ti, indices, dn, sizes));
  return out;
}

// ---- batching ----
using batching::BatchResult;
using batching::kNotMapped;

// The scan runs along the same operand axis, renumbered; the batch dim stays.
template <Prim P>
BatchResult cum_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  Params shifted = p;
  shifted.set("axis", batching::shift_axis(p.i("axis"), dims[0]));
  return {bind(P, in, shifted), {dims[0]}};
}

// Every operand must share one batch dim: the first mapped operand's; unmapped operands are
// broadcast along it (sort permutes each row of them differently).
BatchResult sort_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  int bdim = kNotMapped;
  for (size_t i = 0; i < dims.size() && bdim == kNotMapped; ++i) bdim = dims[i];
  const int64_t size = batching::axis_size(in, dims);
  Arrays args;
  for (size_t i = 0; i < in.size(); ++i)
    args.push_back(batching::materialize_at(in[i], dims[i], size, bdim));
  Params shifted = p;
  shifted.set("dimension", batching::shift_axis(p.i("dimension"), bdim));
  Arrays outs = bind(Prim::Sort, args, shifted);
  return {std::move(outs), std::vector<int>(in.size(), bdim)};
}

template <Prim P>
void reg_cum() {
  PrimitiveInfo& pi = mutable_info(P);
  pi.abstract_eval = cum_abstract_eval<P>;
  pi.impl = cum_impl<P>;
  pi.batch = cum_batch<P>;
  if constexpr (P == Prim::Cumsum) {
    pi.jvp = cumsum_jvp;
    pi.transpose = cumsum_transpose;
  } else {
    pi.jvp = cum_scan_jvp<P>;
    pi.not_linear = true;
  }
}

}  // namespace

void register_cumulative_sort() {
  reg_cum<Prim::Cumsum>();
  reg_cum<Prim::Cumprod>();
  reg_cum<Prim::Cummax>();
  reg_cum<Prim::Cummin>();
  reg_cum<Prim::Cumlogsumexp>();
  auto& s = mutable_info(Prim::Sort);
  s.abstract_eval = sort_abstract_eval;
  s.impl = sort_impl;
  s.jvp = sort_jvp;
  s.batch = sort_batch;
  s.not_linear = true;
}

}  // namespace jx::ops
