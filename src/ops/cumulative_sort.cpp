// Cumulative primitives (cumsum, cumprod, cummax, cummin, cumlogsumexp; params `axis`,
// `reverse`) and the multi-operand sort (params `dimension`, `is_stable`, `num_keys`).
#include "backend/cpu/reduce.h"
#include "ops/common.h"

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

template <Prim P>
void reg_cum() {
  PrimitiveInfo& pi = mutable_info(P);
  pi.abstract_eval = cum_abstract_eval<P>;
  pi.impl = cum_impl<P>;
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
}

}  // namespace jx::ops
