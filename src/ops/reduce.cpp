// Reduction primitives: reduce_{sum,prod,max,min,and,or,xor} (param `axes`: sorted, unique,
// in range; the output drops those dims) and argmax/argmin (params `axes` = {axis},
// `index_dtype`). Batching: JAX's defreducer (ops::batching::reducer).
#include "backend/cpu/kernels.h"
#include "backend/cpu/reduce.h"
#include "ops/ad_rules.h"
#include "ops/batching.h"
#include "ops/common.h"

namespace jx::ops {
namespace {

enum class Allowed { Numeric, Any, IntOrBool };

struct ReduceSpec {
  Prim prim;
  cpu::ReduceOp op;
  Allowed allowed;
};

constexpr ReduceSpec kSpecs[] = {
    {Prim::ReduceSum, cpu::ReduceOp::Sum, Allowed::Numeric},
    {Prim::ReduceProd, cpu::ReduceOp::Prod, Allowed::Numeric},
    {Prim::ReduceMax, cpu::ReduceOp::Max, Allowed::Any},
    {Prim::ReduceMin, cpu::ReduceOp::Min, Allowed::Any},
    {Prim::ReduceAnd, cpu::ReduceOp::And, Allowed::IntOrBool},
    {Prim::ReduceOr, cpu::ReduceOp::Or, Allowed::IntOrBool},
    {Prim::ReduceXor, cpu::ReduceOp::Xor, Allowed::IntOrBool},
};

const ReduceSpec& spec_of(Prim p) {
  for (const auto& s : kSpecs)
    if (s.prim == p) return s;
  throw InternalError("jx internal error: not a reduce primitive");
}

// Checks that `axes` is sorted, unique and in range for `x`; returns the reduced flags.
std::vector<bool> check_axes(const char* op, const Aval& x, const std::vector<int64_t>& axes) {
  const int64_t nd = int64_t(x.shape.size());
  std::vector<bool> red(x.shape.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (a < 0 || a >= nd)
      throw IndexError(str("[", op, "] reduction axis ", a, " is out of bounds for ", aval_str(x),
                           "; axes must be in 0..", nd - 1, " (jnp functions accept negative axes)"));
    if (red[size_t(a)])
      throw IndexError(str("[", op, "] axis ", a, " appears twice in axes ", list_str(axes)));
    if (i > 0 && a < axes[i - 1])
      throw ValueError(str("[", op, "] axes ", list_str(axes), " must be sorted"));
    red[size_t(a)] = true;
  }
  return red;
}

Shape reduced_shape(const Shape& s, const std::vector<bool>& red) {
  Shape out;
  for (size_t d = 0; d < s.size(); ++d)
    if (!red[d]) out.push_back(s[d]);
  return out;
}

template <Prim P>
Avals reduce_abstract_eval(std::span<const Aval> in, const Params& p) {
  const ReduceSpec& s = spec_of(P);
  const char* op = name(P);
  const Aval& x = in[0];
  DType t = x.dtype;
  bool ok = s.allowed == Allowed::Any || (s.allowed == Allowed::Numeric && t != DType::Bool) ||
            (s.allowed == Allowed::IntOrBool && (is_integer(t) || t == DType::Bool));
  if (!ok)
    throw DTypeError(str("[", op, "] does not accept ", aval_str(x), "; it needs ",
                         s.allowed == Allowed::Numeric ? "a numeric (non-bool) dtype"
                                                       : "a bool or integer dtype",
                         s.allowed == Allowed::Numeric ? " (convert bools with astype first)" : ""));
  auto red = check_axes(op, x, p.ints("axes"));
  return {Aval{reduced_shape(x.shape, red), t, x.weak}};
}

template <Prim P>
void reduce_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& x = detail::impl_of(in[0]);
  std::vector<bool> red(x.shape.size(), false);
  for (int64_t a : p.ints("axes")) red[size_t(a)] = true;
  if (p.ints("axes").empty()) {  // nothing to reduce: share the operand's buffer
    out[0] = detail::alias_array(in[0], x.shape, out[0].weak_type());
    return;
  }
  std::unique_ptr<bool[]> flags(new bool[x.shape.size() + 1]);
  for (size_t d = 0; d < x.shape.size(); ++d) flags[d] = red[d];
  cpu::reduce(spec_of(P).op, x.dtype, x.buffer->data(), x.shape.data(), int(x.shape.size()),
              flags.get(), detail::raw_data(out[0]));
}

// ---- argmax / argmin ----
template <bool is_max>
Avals arg_abstract_eval(std::span<const Aval> in, const Params& p) {
  const char* op = is_max ? "argmax" : "argmin";
  const Aval& x = in[0];
  const auto& axes = p.ints("axes");
  if (axes.size() != 1)
    throw ValueError(str("[", op, "] needs exactly one axis, got axes ", list_str(axes)));
  DType it = p.dtype("index_dtype");
  if (!is_integer(it))
    throw DTypeError(str("[", op, "] index_dtype must be an integer dtype, got ", dtype_name(it)));
  auto red = check_axes(op, x, axes);
  if (x.shape[size_t(axes[0])] == 0)
    throw ValueError(str("[", op, "] needs a non-empty reduced dimension, but axis ", axes[0],
                         " of ", aval_str(x), " has size 0"));
  return {Aval{reduced_shape(x.shape, red), it, false}};
}

template <bool is_max>
void arg_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& x = detail::impl_of(in[0]);
  const DType it = p.dtype("index_dtype");
  const int axis = int(p.ints("axes")[0]);
  if (it == DType::Int32 || it == DType::Int64) {
    cpu::argreduce(is_max, x.dtype, it, x.buffer->data(), x.shape.data(), int(x.shape.size()),
                   axis, detail::raw_data(out[0]));
    return;
  }
  // Other index dtypes: compute int64 indices, then convert (indices that do not fit wrap,
  // as a narrowing convert does).
  Array wide = detail::empty_array(out[0].shape(), DType::Int64, false);
  cpu::argreduce(is_max, x.dtype, DType::Int64, x.buffer->data(), x.shape.data(),
                 int(x.shape.size()), axis, detail::raw_data(wide));
  cpu::convert(DType::Int64, it, detail::raw_data(wide), detail::raw_data(out[0]),
               out[0].shape().numel());
}


// ---- autodiff ----
using namespace ad_rules;

// Operand dims that survive the reduction, in order: broadcast_in_dim's map from the
// reduced output back to the operand.
std::vector<int64_t> kept_dims(size_t ndim, const std::vector<int64_t>& axes) {
  std::vector<bool> red(ndim, false);
  for (int64_t a : axes) red[size_t(a)] = true;
  std::vector<int64_t> kept;
  for (size_t d = 0; d < ndim; ++d)
    if (!red[d]) kept.push_back(int64_t(d));
  return kept;
}

Arrays reduce_sum_jvp(std::span<const Array>, std::span<const Array>, std::span<const Array> t,
                      const Params& p) {
  if (is_zero(t[0])) return {Array()};
  return {lax::reduce_sum(t[0], p.ints("axes"))};
}

Arrays reduce_sum_transpose(std::span<const Array> ct, std::span<const Array>,
                            std::span<const Aval> in_avals, std::span<const bool>,
                            const Params& p) {
  if (is_zero(ct[0])) return {Array()};
  const Aval& a = in_avals[0];
  return {lax::broadcast_in_dim(ct[0], a.shape, kept_dims(a.shape.size(), p.ints("axes")))};
}

// JAX's _reduce_chooser_jvp_rule: the tangent is the mean of the tangents at the positions
// that attain the extremum (ties share it equally).
Arrays reduce_chooser_jvp(std::span<const Array> x, std::span<const Array> out,
                          std::span<const Array> t, const Params& p) {
  if (is_zero(t[0])) return {Array()};
  const auto& axes = p.ints("axes");
  Array ans = lax::broadcast_in_dim(out[0], x[0].shape(), kept_dims(size_t(x[0].ndim()), axes));
  Array loc = lax::convert_element_type(lax::eq(x[0], ans), t[0].dtype());
  Array counts = lax::reduce_sum(loc, axes);
  return {lax::div(lax::reduce_sum(lax::mul(t[0], loc), axes), counts)};
}

// JAX's _reduce_prod_jvp_rule: a balanced tree of pairwise products differentiated by the
// product rule, which stays exact when the operand holds zeros (unlike t * prod / x).
Arrays reduce_prod_jvp(std::span<const Array> x, std::span<const Array> out,
                       std::span<const Array> t, const Params& p) {
  if (is_zero(t[0])) return {Array()};
  const auto& axes = p.ints("axes");
  const Shape& s = x[0].shape();
  std::vector<int64_t> perm(axes.begin(), axes.end());
  std::vector<int64_t> kept = kept_dims(s.size(), axes);
  perm.insert(perm.end(), kept.begin(), kept.end());
  int64_t n = 1;
  for (int64_t a : axes) n *= s[size_t(a)];
  Shape flat{n};
  for (int64_t d : kept) flat.push_back(s[size_t(d)]);
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
  auto front = [&](const Array& a) {
    return lax::reshape(identity ? a : lax::transpose(a, perm), flat);
  };
  if (n == 0) return {Array()};  // the empty product is the constant 1
  Array xp = front(x[0]), tp = front(t[0]);
  const DType dt = x[0].dtype();
  const Array one = lax::convert_element_type(Array(1), dt);
  const Array zero = lax::convert_element_type(Array(0), dt);
  while (xp.shape()[0] > 1) {
    const int64_t m = xp.shape()[0], m1 = (m + 1) / 2;
    Array x1 = lax::slice_in_dim(xp, 0, m1), x2 = lax::slice_in_dim(xp, m1, m);
    Array t1 = lax::slice_in_dim(tp, 0, m1), t2 = lax::slice_in_dim(tp, m1, m);
    if (m - m1 != m1) {
      std::vector<lax::PadConfig> cfg(size_t(xp.ndim()));
      cfg[0].hi = 1;
      x2 = lax::pad(x2, one, cfg);
      t2 = lax::pad(t2, zero, cfg);
    }
    tp = lax::add(lax::mul(t1, x2), lax::mul(x1, t2));
    xp = lax::mul(x1, x2);
  }
  return {lax::reshape(tp, out[0].shape())};
}

template <Prim P>
void reg() {
  PrimitiveInfo& pi = mutable_info(P);
  pi.abstract_eval = reduce_abstract_eval<P>;
  pi.impl = reduce_impl<P>;
  pi.batch = batching::reducer<P>;
}

}  // namespace

void register_reduce() {
  reg<Prim::ReduceSum>();
  reg<Prim::ReduceProd>();
  reg<Prim::ReduceMax>();
  reg<Prim::ReduceMin>();
  reg<Prim::ReduceAnd>();
  reg<Prim::ReduceOr>();
  reg<Prim::ReduceXor>();
  auto& sum = mutable_info(Prim::ReduceSum);
  sum.jvp = reduce_sum_jvp;
  sum.transpose = reduce_sum_transpose;
  auto& prod = mutable_info(Prim::ReduceProd);
  prod.jvp = reduce_prod_jvp;
  prod.not_linear = true;
  for (Prim c : {Prim::ReduceMax, Prim::ReduceMin}) {
    mutable_info(c).jvp = reduce_chooser_jvp;
    mutable_info(c).not_linear = true;
  }
  for (Prim b : {Prim::ReduceAnd, Prim::ReduceOr, Prim::ReduceXor}) {
    mutable_info(b).zero_tangent = true;
    mutable_info(b).not_linear = true;
  }
  auto& amax = mutable_info(Prim::Argmax);
  amax.abstract_eval = arg_abstract_eval<true>;
  amax.impl = arg_impl<true>;
  amax.zero_tangent = true;
  amax.not_linear = true;
  amax.batch = batching::reducer<Prim::Argmax>;
  auto& amin = mutable_info(Prim::Argmin);
  amin.abstract_eval = arg_abstract_eval<false>;
  amin.impl = arg_impl<false>;
  amin.zero_tangent = true;
  amin.not_linear = true;
  amin.batch = batching::reducer<Prim::Argmin>;
}

}  // namespace jx::ops
