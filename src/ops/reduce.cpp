// Reduction primitives: reduce_{sum,prod,max,min,and,or,xor} (param `axes`: sorted, unique,
// in range; the output drops those dims) and argmax/argmin (params `axes` = {axis},
// `index_dtype`).
#include "backend/cpu/kernels.h"
#include "backend/cpu/reduce.h"
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
            (s.allowed == Allowed::IntOrBool && !is_floating(t));
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

template <Prim P>
void reg() {
  PrimitiveInfo& pi = mutable_info(P);
  pi.abstract_eval = reduce_abstract_eval<P>;
  pi.impl = reduce_impl<P>;
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
  auto& amax = mutable_info(Prim::Argmax);
  amax.abstract_eval = arg_abstract_eval<true>;
  amax.impl = arg_impl<true>;
  amax.zero_tangent = true;
  auto& amin = mutable_info(Prim::Argmin);
  amin.abstract_eval = arg_abstract_eval<false>;
  amin.impl = arg_impl<false>;
  amin.zero_tangent = true;
}

}  // namespace jx::ops
