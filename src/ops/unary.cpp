// Unary elementwise primitives: abstract eval (lax's dtype rules) and eager impl.
// The output keeps the input's shape and weak type; is_finite gives bool.
#include "backend/cpu/kernels.h"
#include "ops/common.h"

namespace jx::ops {
namespace {

// Accepted dtypes, as the dtype sets of jax/_src/lax/lax.py (no complex in jx).
enum class Accept { Float, Numeric, SignedOrFloat, Int, IntOrBool, Any };

struct UnarySpec {
  Prim prim;
  cpu::UnaryOp op;
  Accept accept;
};

constexpr UnarySpec kSpecs[] = {
    {Prim::Neg, cpu::UnaryOp::Neg, Accept::Numeric},
    {Prim::Sign, cpu::UnaryOp::Sign, Accept::Numeric},
    {Prim::Floor, cpu::UnaryOp::Floor, Accept::Float},
    {Prim::Ceil, cpu::UnaryOp::Ceil, Accept::Float},
    {Prim::Round, cpu::UnaryOp::Round, Accept::Float},
    {Prim::IsFinite, cpu::UnaryOp::IsFinite, Accept::Float},
    {Prim::Exp, cpu::UnaryOp::Exp, Accept::Float},
    {Prim::Exp2, cpu::UnaryOp::Exp2, Accept::Float},
    {Prim::Log, cpu::UnaryOp::Log, Accept::Float},
    {Prim::Log1p, cpu::UnaryOp::Log1p, Accept::Float},
    {Prim::Expm1, cpu::UnaryOp::Expm1, Accept::Float},
    {Prim::Tanh, cpu::UnaryOp::Tanh, Accept::Float},
    {Prim::Logistic, cpu::UnaryOp::Logistic, Accept::Float},
    {Prim::Sin, cpu::UnaryOp::Sin, Accept::Float},
    {Prim::Cos, cpu::UnaryOp::Cos, Accept::Float},
    {Prim::Tan, cpu::UnaryOp::Tan, Accept::Float},
    {Prim::Asin, cpu::UnaryOp::Asin, Accept::Float},
    {Prim::Acos, cpu::UnaryOp::Acos, Accept::Float},
    {Prim::Atan, cpu::UnaryOp::Atan, Accept::Float},
    {Prim::Sinh, cpu::UnaryOp::Sinh, Accept::Float},
    {Prim::Cosh, cpu::UnaryOp::Cosh, Accept::Float},
    {Prim::Asinh, cpu::UnaryOp::Asinh, Accept::Float},
    {Prim::Acosh, cpu::UnaryOp::Acosh, Accept::Float},
    {Prim::Atanh, cpu::UnaryOp::Atanh, Accept::Float},
    {Prim::Abs, cpu::UnaryOp::Abs, Accept::SignedOrFloat},
    {Prim::Sqrt, cpu::UnaryOp::Sqrt, Accept::Float},
    {Prim::Rsqrt, cpu::UnaryOp::Rsqrt, Accept::Float},
    {Prim::Cbrt, cpu::UnaryOp::Cbrt, Accept::Float},
    {Prim::Square, cpu::UnaryOp::Square, Accept::Numeric},
    {Prim::IntegerPow, cpu::UnaryOp::IntegerPow, Accept::Numeric},
    {Prim::Not, cpu::UnaryOp::Not, Accept::IntOrBool},
    {Prim::PopulationCount, cpu::UnaryOp::PopulationCount, Accept::Int},
    {Prim::Clz, cpu::UnaryOp::Clz, Accept::Int},
    {Prim::Lgamma, cpu::UnaryOp::Lgamma, Accept::Float},
    {Prim::Digamma, cpu::UnaryOp::Digamma, Accept::Float},
    {Prim::Erf, cpu::UnaryOp::Erf, Accept::Float},
    {Prim::Erfc, cpu::UnaryOp::Erfc, Accept::Float},
    {Prim::ErfInv, cpu::UnaryOp::ErfInv, Accept::Float},
    {Prim::Copy, cpu::UnaryOp::Copy, Accept::Any},
};

const UnarySpec& spec_of(Prim p) {
  for (const auto& s : kSpecs)
    if (s.prim == p) return s;
  throw InternalError("jx internal error: not a unary primitive");
}

bool accepts(Accept a, DType t) {
  switch (a) {
    case Accept::Float: return is_floating(t);
    case Accept::Numeric: return t != DType::Bool;
    case Accept::SignedOrFloat: return is_floating(t) || is_signed_integer(t);
    case Accept::Int: return is_integer(t);
    case Accept::IntOrBool: return !is_floating(t);
    case Accept::Any: return true;
  }
  return false;
}

const char* accept_str(Accept a) {
  switch (a) {
    case Accept::Float: return "a floating dtype";
    case Accept::Numeric: return "a numeric (non-bool) dtype";
    case Accept::SignedOrFloat: return "a signed integer or floating dtype";
    case Accept::Int: return "an integer dtype";
    case Accept::IntOrBool: return "an integer or bool dtype";
    case Accept::Any: return "any dtype";
  }
  return "";
}

const char* fix_hint(Accept a) {
  switch (a) {
    case Accept::Float:
      return "; convert with astype(jx::float32), or use the jnp function, which promotes "
             "integers to float";
    case Accept::Int: return "; convert with astype to an integer dtype";
    default: return "; convert with astype";
  }
}

template <Prim P>
Avals unary_abstract_eval(std::span<const Aval> in, const Params& params) {
  const UnarySpec& s = spec_of(P);
  const char* op = name(P);
  if (!accepts(s.accept, in[0].dtype))
    throw DTypeError(str("[", op, "] needs ", accept_str(s.accept), ", got ", aval_str(in[0]),
                         fix_hint(s.accept)));
  if constexpr (P == Prim::IntegerPow) {
    if (params.i("y") < 0 && !is_floating(in[0].dtype))
      throw DTypeError(str("[integer_pow] integers cannot be raised to negative powers, got ",
                           aval_str(in[0]), " ** ", params.i("y"),
                           "; convert the base to a floating dtype first"));
  }
  if constexpr (P == Prim::Round) {
    int64_t m = params.i("rounding_method");
    if (m != 0 && m != 1)
      throw ValueError(str("[round] rounding_method must be 0 (away from zero) or 1 (to nearest "
                           "even), got ", m));
  }
  DType out = P == Prim::IsFinite ? DType::Bool : in[0].dtype;
  return {Aval{in[0].shape, out, in[0].weak}};
}

template <Prim P>
void unary_impl(std::span<const Array> in, std::span<Array> out, const Params& params) {
  const auto& x = detail::impl_of(in[0]);
  cpu::UnaryOp op = spec_of(P).op;
  int64_t p = 0;
  if constexpr (P == Prim::IntegerPow) p = params.i("y");
  if constexpr (P == Prim::Round) {
    if (params.i("rounding_method") == 1) op = cpu::UnaryOp::RoundEven;
  }
  cpu::unary(op, x.dtype, x.buffer->data(), detail::raw_data(out[0]), x.shape.numel(), p);
}

template <Prim P>
void reg() {
  PrimitiveInfo& pi = mutable_info(P);
  pi.abstract_eval = unary_abstract_eval<P>;
  pi.impl = unary_impl<P>;
}

}  // namespace

void register_unary() {
  reg<Prim::Neg>();
  reg<Prim::Sign>();
  reg<Prim::Floor>();
  reg<Prim::Ceil>();
  reg<Prim::Round>();
  reg<Prim::IsFinite>();
  reg<Prim::Exp>();
  reg<Prim::Exp2>();
  reg<Prim::Log>();
  reg<Prim::Log1p>();
  reg<Prim::Expm1>();
  reg<Prim::Tanh>();
  reg<Prim::Logistic>();
  reg<Prim::Sin>();
  reg<Prim::Cos>();
  reg<Prim::Tan>();
  reg<Prim::Asin>();
  reg<Prim::Acos>();
  reg<Prim::Atan>();
  reg<Prim::Sinh>();
  reg<Prim::Cosh>();
  reg<Prim::Asinh>();
  reg<Prim::Acosh>();
  reg<Prim::Atanh>();
  reg<Prim::Abs>();
  reg<Prim::Sqrt>();
  reg<Prim::Rsqrt>();
  reg<Prim::Cbrt>();
  reg<Prim::Square>();
  reg<Prim::IntegerPow>();
  reg<Prim::Not>();
  reg<Prim::PopulationCount>();
  reg<Prim::Clz>();
  reg<Prim::Lgamma>();
  reg<Prim::Digamma>();
  reg<Prim::Erf>();
  reg<Prim::Erfc>();
  reg<Prim::ErfInv>();
  reg<Prim::Copy>();
}

}  // namespace jx::ops
