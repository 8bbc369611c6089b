// Binary elementwise primitives: arithmetic, bitwise, shifts, comparisons. Dtype rules as
// jax/_src/lax/lax.py: mul/add/sub/div/rem need a numeric dtype (jnp maps bool + and * to
// or/and), pow/atan2/nextafter a floating one, bitwise ops ints or bool, shifts ints.
#include "backend/cpu/kernels.h"
#include "ops/common.h"

namespace jx::ops {
namespace {

enum class Allowed { Numeric, Float, IntOrBool, Int, Any };

struct BinarySpec {
  Prim prim;
  cpu::BinaryOp op;
  Allowed allowed;
  bool compare;  // output bool
};

constexpr BinarySpec kSpecs[] = {
    {Prim::Add, cpu::BinaryOp::Add, Allowed::Numeric, false},
    {Prim::Sub, cpu::BinaryOp::Sub, Allowed::Numeric, false},
    {Prim::Mul, cpu::BinaryOp::Mul, Allowed::Numeric, false},
    {Prim::Div, cpu::BinaryOp::Div, Allowed::Numeric, false},
    {Prim::Rem, cpu::BinaryOp::Rem, Allowed::Numeric, false},
    {Prim::Pow, cpu::BinaryOp::Pow, Allowed::Float, false},
    {Prim::Max, cpu::BinaryOp::Max, Allowed::Any, false},
    {Prim::Min, cpu::BinaryOp::Min, Allowed::Any, false},
    {Prim::Atan2, cpu::BinaryOp::Atan2, Allowed::Float, false},
    {Prim::Nextafter, cpu::BinaryOp::Nextafter, Allowed::Float, false},
    {Prim::And, cpu::BinaryOp::And, Allowed::IntOrBool, false},
    {Prim::Or, cpu::BinaryOp::Or, Allowed::IntOrBool, false},
    {Prim::Xor, cpu::BinaryOp::Xor, Allowed::IntOrBool, false},
    {Prim::ShiftLeft, cpu::BinaryOp::ShiftLeft, Allowed::Int, false},
    {Prim::ShiftRightArithmetic, cpu::BinaryOp::ShiftRightArithmetic, Allowed::Int, false},
    {Prim::ShiftRightLogical, cpu::BinaryOp::ShiftRightLogical, Allowed::Int, false},
    {Prim::Eq, cpu::BinaryOp::Eq, Allowed::Any, true},
    {Prim::Ne, cpu::BinaryOp::Ne, Allowed::Any, true},
    {Prim::Lt, cpu::BinaryOp::Lt, Allowed::Any, true},
    {Prim::Le, cpu::BinaryOp::Le, Allowed::Any, true},
    {Prim::Gt, cpu::BinaryOp::Gt, Allowed::Any, true},
    {Prim::Ge, cpu::BinaryOp::Ge, Allowed::Any, true},
};

const BinarySpec& spec_of(Prim p) {
  for (const auto& s : kSpecs)
    if (s.prim == p) return s;
  throw InternalError("jx internal error: not a binary primitive");
}

bool allowed(Allowed a, DType t) {
  switch (a) {
    case Allowed::Numeric: return t != DType::Bool;
    case Allowed::Float: return is_floating(t);
    case Allowed::IntOrBool: return !is_floating(t);
    case Allowed::Int: return is_integer(t);
    case Allowed::Any: return true;
  }
  return false;
}

const char* allowed_str(Allowed a) {
  switch (a) {
    case Allowed::Numeric: return "a numeric (non-bool) dtype";
    case Allowed::Float: return "a floating dtype";
    case Allowed::IntOrBool: return "an integer or bool dtype";
    case Allowed::Int: return "an integer dtype";
    case Allowed::Any: return "any dtype";
  }
  return "";
}

template <Prim P>
Avals binary_abstract_eval(std::span<const Aval> in, const Params&) {
  const BinarySpec& s = spec_of(P);
  const char* op = name(P);
  require_same_dtype(op, in);
  if (!allowed(s.allowed, in[0].dtype))
    throw DTypeError(str("[", op, "] needs ", allowed_str(s.allowed), ", got ", avals_str(in),
                         s.allowed == Allowed::Float
                             ? "; convert with astype, or use the jnp function, which promotes"
                             : "; convert with astype"));
  Shape shape = elementwise_shape(op, in);
  // As lax's naryop: the result is weak only when every operand is (comparisons too).
  if (s.compare) return {Aval{shape, DType::Bool, all_weak(in)}};
  return {Aval{shape, in[0].dtype, all_weak(in)}};
}

template <Prim P>
void binary_impl(std::span<const Array> in, std::span<Array> out, const Params&) {
  const auto& a = detail::impl_of(in[0]);
  const auto& b = detail::impl_of(in[1]);
  const auto& o = detail::impl_of(out[0]);
  cpu::binary(spec_of(P).op, a.dtype, a.buffer->data(), a.shape.data(), b.buffer->data(),
              b.shape.data(), o.buffer->data(), o.shape.data(), int(o.shape.size()));
}

template <Prim P>
void reg() {
  PrimitiveInfo& pi = mutable_info(P);
  pi.abstract_eval = binary_abstract_eval<P>;
  pi.impl = binary_impl<P>;
}

}  // namespace

void register_binary() {
  reg<Prim::Add>();
  reg<Prim::Sub>();
  reg<Prim::Mul>();
  reg<Prim::Div>();
  reg<Prim::Rem>();
  reg<Prim::Pow>();
  reg<Prim::Max>();
  reg<Prim::Min>();
  reg<Prim::Atan2>();
  reg<Prim::Nextafter>();
  reg<Prim::And>();
  reg<Prim::Or>();
  reg<Prim::Xor>();
  reg<Prim::ShiftLeft>();
  reg<Prim::ShiftRightArithmetic>();
  reg<Prim::ShiftRightLogical>();
  reg<Prim::Eq>();
  reg<Prim::Ne>();
  reg<Prim::Lt>();
  reg<Prim::Le>();
  reg<Prim::Gt>();
  reg<Prim::Ge>();
}

}  // namespace jx::ops
