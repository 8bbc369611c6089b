// Unary elementwise primitives: abstract eval (lax's dtype rules), eager impl, the
// autodiff rules of jax/_src/lax/lax.py, batching (the batch dim stays where it is, as
// JAX's defvectorized) and code generation. The output keeps the input's shape and weak
// type; is_finite gives bool.
#include <cmath>
#include <numbers>

#include "backend/cpu/kernels.h"
#include "ops/ad_rules.h"
#include "ops/batching.h"
#include "ops/common.h"
#include "ops/emit_prelude.h"
#include "support/check.h"

namespace jx::ops {
namespace {

// Accepted dtypes, as the dtype sets of jax/_src/lax/lax.py.
enum class Accept { Float, Inexact, Numeric, SignedOrInexact, Int, IntOrBool, Complex, Any };

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
    {Prim::IsFinite, cpu::UnaryOp::IsFinite, Accept::Inexact},
    {Prim::Exp, cpu::UnaryOp::Exp, Accept::Inexact},
    {Prim::Exp2, cpu::UnaryOp::Exp2, Accept::Float},
    {Prim::Log, cpu::UnaryOp::Log, Accept::Inexact},
    {Prim::Log1p, cpu::UnaryOp::Log1p, Accept::Inexact},
    {Prim::Expm1, cpu::UnaryOp::Expm1, Accept::Inexact},
    {Prim::Tanh, cpu::UnaryOp::Tanh, Accept::Inexact},
    {Prim::Logistic, cpu::UnaryOp::Logistic, Accept::Float},
    {Prim::Sin, cpu::UnaryOp::Sin, Accept::Inexact},
    {Prim::Cos, cpu::UnaryOp::Cos, Accept::Inexact},
    {Prim::Tan, cpu::UnaryOp::Tan, Accept::Inexact},
    {Prim::Asin, cpu::UnaryOp::Asin, Accept::Inexact},
    {Prim::Acos, cpu::UnaryOp::Acos, Accept::Inexact},
    {Prim::Atan, cpu::UnaryOp::Atan, Accept::Inexact},
    {Prim::Sinh, cpu::UnaryOp::Sinh, Accept::Inexact},
    {Prim::Cosh, cpu::UnaryOp::Cosh, Accept::Inexact},
    {Prim::Asinh, cpu::UnaryOp::Asinh, Accept::Inexact},
    {Prim::Acosh, cpu::UnaryOp::Acosh, Accept::Inexact},
    {Prim::Atanh, cpu::UnaryOp::Atanh, Accept::Inexact},
    {Prim::Abs, cpu::UnaryOp::Abs, Accept::SignedOrInexact},
    {Prim::Sqrt, cpu::UnaryOp::Sqrt, Accept::Inexact},
    {Prim::Rsqrt, cpu::UnaryOp::Rsqrt, Accept::Inexact},
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
    {Prim::Real, cpu::UnaryOp::Real, Accept::Complex},
    {Prim::Imag, cpu::UnaryOp::Imag, Accept::Complex},
    {Prim::Conj, cpu::UnaryOp::Conj, Accept::Complex},
};

const UnarySpec& spec_of(Prim p) {
  for (const auto& s : kSpecs)
    if (s.prim == p) return s;
  throw InternalError("jx internal error: not a unary primitive");
}

bool accepts(Accept a, DType t) {
  switch (a) {
    case Accept::Float: return is_floating(t);
    case Accept::Inexact: return is_inexact(t);
    case Accept::Numeric: return t != DType::Bool;
    case Accept::SignedOrInexact: return is_inexact(t) || is_signed_integer(t);
    case Accept::Int: return is_integer(t);
    case Accept::IntOrBool: return is_integer(t) || t == DType::Bool;
    case Accept::Complex: return is_complex(t);
    case Accept::Any: return true;
  }
  return false;
}

const char* accept_str(Accept a) {
  switch (a) {
    case Accept::Float: return "a floating dtype";
    case Accept::Inexact: return "a floating or complex dtype";
    case Accept::Numeric: return "a numeric (non-bool) dtype";
    case Accept::SignedOrInexact: return "a signed integer, floating or complex dtype";
    case Accept::Complex: return "a complex dtype (jnp::real/imag/conj also take real arrays)";
    case Accept::Int: return "an integer dtype";
    case Accept::IntOrBool: return "an integer or bool dtype";
    case Accept::Any: return "any dtype";
  }
  return "";
}

const char* fix_hint(Accept a) {
  switch (a) {
    case Accept::Float:
    case Accept::Inexact:
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
    if (params.i("y") < 0 && !is_inexact(in[0].dtype))
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
  DType out = in[0].dtype;
  if constexpr (P == Prim::IsFinite) out = DType::Bool;
  if constexpr (P == Prim::Abs || P == Prim::Real || P == Prim::Imag) out = real_dtype(out);
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

// ---- autodiff: the tangent of the output given a non-zero input tangent g, written with
// lax ops so it works under any trace. Formulas (and their forms, which fix the values at
// kinks and the rounding) are JAX's defjvp/defjvp2 rules.

// polygamma(1, x), digamma's derivative (JAX's rule is polygamma(1, x); jx has no polygamma
// primitive), composed of lax ops so that it is itself differentiable: reflection below
// 1/2 (psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)), six steps of the recurrence
// psi1(z) = psi1(z + 1) + 1/z^2, then the asymptotic series at z + 6 >= 6.5, whose first
// omitted term (3617/510 / y^17) is below 1e-13.
Array trigamma(const Array& x) {
  auto c = [&](double v) { return ad_rules::constant(v, x); };
  Array reflect = lax::lt(x, c(0.5));
  Array z = lax::select(reflect, lax::sub(c(1.0), x), x);
  Array acc = lax::integer_pow(z, -2);
  for (int k = 1; k < 6; ++k) acc = lax::add(acc, lax::integer_pow(lax::add(z, c(k)), -2));
  Array y = lax::add(z, c(6.0));
  Array r = lax::integer_pow(y, -2);
  // 1/y + 1/(2y^2) + sum_k B_2k / y^(2k+1) for k = 1..7, in Horner form in 1/y^2.
  Array series = c(7.0 / 6.0);
  for (double coef : {-691.0 / 2730.0, 5.0 / 66.0, -1.0 / 30.0, 1.0 / 42.0, -1.0 / 30.0, 1.0 / 6.0})
    series = lax::add(lax::mul(series, r), c(coef));
  series = lax::add(lax::mul(series, lax::div(c(1.0), y)), c(0.5));
  series = lax::mul(lax::add(lax::mul(series, lax::div(c(1.0), y)), c(1.0)), lax::div(c(1.0), y));
  Array psi1_z = lax::add(acc, series);
  Array s = lax::sin(lax::mul(c(std::numbers::pi), x));
  Array reflected = lax::sub(lax::div(c(std::numbers::pi * std::numbers::pi), lax::square(s)), psi1_z);
  return lax::select(reflect, reflected, psi1_z);
}

template <Prim P>
Array unary_tangent(const Array& g, const Array& x, const Array& ans, const Params& params) {
  auto c = [&](double v) { return ad_rules::constant(v, x); };
  if constexpr (P == Prim::Neg) {
    return lax::neg(g);
  } else if constexpr (P == Prim::Copy) {
    return lax::copy(g);
  } else if constexpr (P == Prim::Exp) {
    return lax::mul(g, ans);
  } else if constexpr (P == Prim::Exp2) {
    return lax::mul(lax::log(c(2.0)), lax::mul(g, ans));
  } else if constexpr (P == Prim::Log) {
    return lax::div(g, x);
  } else if constexpr (P == Prim::Log1p) {
    return lax::div(g, lax::add(x, c(1.0)));
  } else if constexpr (P == Prim::Expm1) {
    return lax::mul(g, lax::add(ans, c(1.0)));
  } else if constexpr (P == Prim::Tanh) {
    return lax::mul(lax::add(g, lax::mul(g, ans)), lax::sub(c(1.0), ans));
  } else if constexpr (P == Prim::Logistic) {
    return lax::mul(g, lax::mul(ans, lax::sub(c(1.0), ans)));
  } else if constexpr (P == Prim::Sin) {
    return lax::mul(g, lax::cos(x));
  } else if constexpr (P == Prim::Cos) {
    return lax::neg(lax::mul(g, lax::sin(x)));
  } else if constexpr (P == Prim::Tan) {
    return lax::mul(g, lax::add(c(1.0), lax::square(ans)));
  } else if constexpr (P == Prim::Asin) {
    return lax::mul(g, lax::rsqrt(lax::sub(c(1.0), lax::square(x))));
  } else if constexpr (P == Prim::Acos) {
    return lax::mul(g, lax::neg(lax::rsqrt(lax::sub(c(1.0), lax::square(x)))));
  } else if constexpr (P == Prim::Atan) {
    return lax::div(g, lax::add(c(1.0), lax::square(x)));
  } else if constexpr (P == Prim::Sinh) {
    return lax::mul(g, lax::cosh(x));
  } else if constexpr (P == Prim::Cosh) {
    return lax::mul(g, lax::sinh(x));
  } else if constexpr (P == Prim::Asinh) {
    return lax::mul(g, lax::rsqrt(lax::add(lax::square(x), c(1.0))));
  } else if constexpr (P == Prim::Acosh) {
    Array d = lax::mul(lax::sqrt(lax::sub(x, c(1.0))), lax::sqrt(lax::add(x, c(1.0))));
    return lax::mul(g, lax::div(c(1.0), d));
  } else if constexpr (P == Prim::Atanh) {
    return lax::mul(lax::div(c(1.0), lax::add(c(1.0), x)), lax::div(g, lax::sub(c(1.0), x)));
  } else if constexpr (P == Prim::Abs) {
    if (is_complex(x.dtype())) {
      // d|z| = re(conj(z) dz) / |z|, and 0 at z == 0 (JAX divides by |z| with 0 replaced by 1).
      Array r = ad_rules::constant(1.0, ans);
      Array safe = lax::select(lax::eq(ans, ad_rules::constant(0.0, ans)), r, ans);
      return lax::real(lax::mul(g, lax::div(lax::conj(x), lax::convert_element_type(safe, x.dtype()))));
    }
    // d|x| = +g at x == 0, as JAX (select(x >= 0, g, -g)).
    return lax::select(lax::ge(x, c(0.0)), g, lax::neg(g));
  } else if constexpr (P == Prim::Real) {
    return lax::real(g);
  } else if constexpr (P == Prim::Imag) {
    return lax::imag(g);
  } else if constexpr (P == Prim::Conj) {
    return lax::conj(g);
  } else if constexpr (P == Prim::Sqrt) {
    return lax::mul(g, lax::div(c(0.5), ans));
  } else if constexpr (P == Prim::Rsqrt) {
    return lax::mul(g, lax::mul(c(-0.5), lax::div(ans, x)));
  } else if constexpr (P == Prim::Cbrt) {
    return lax::mul(g, lax::mul(c(1.0 / 3.0), lax::integer_pow(ans, -2)));
  } else if constexpr (P == Prim::Square) {
    return lax::mul(g, lax::mul(c(2.0), x));
  } else if constexpr (P == Prim::IntegerPow) {
    int64_t y = params.i("y");
    if (y == 0) return ad_rules::zeros_like(g);
    return lax::mul(g, lax::mul(c(double(y)), lax::integer_pow(x, y - 1)));
  } else if constexpr (P == Prim::Lgamma) {
    return lax::mul(g, lax::digamma(x));
  } else if constexpr (P == Prim::Digamma) {
    return lax::mul(g, trigamma(x));
  } else if constexpr (P == Prim::Erf) {
    return lax::mul(c(2.0 / std::sqrt(std::numbers::pi)),
                    lax::mul(g, lax::exp(lax::neg(lax::square(x)))));
  } else if constexpr (P == Prim::Erfc) {
    return lax::mul(c(-2.0 / std::sqrt(std::numbers::pi)),
                    lax::mul(g, lax::exp(lax::neg(lax::square(x)))));
  } else if constexpr (P == Prim::ErfInv) {
    return lax::mul(g, lax::mul(c(std::sqrt(std::numbers::pi) / 2.0), lax::exp(lax::square(ans))));
  } else {
    static_assert(P == Prim::Neg, "no tangent formula for this primitive");
  }
}

template <Prim P>
Arrays unary_jvp(std::span<const Array> primals, std::span<const Array> outs,
                 std::span<const Array> tangents, const Params& params) {
  // Integer outputs have no tangent space (JAX's float0): the tangent is zero.
  if (ad_rules::is_zero(tangents[0]) || !is_inexact(outs[0].dtype())) return {Array()};
  return {unary_tangent<P>(tangents[0], primals[0], outs[0], params)};
}

// The transposes of the complex parts, as JAX's: real and imag map a real cotangent back
// to complex(ct, 0) and complex(0, -ct); conj's is conj. With them, grad of a real-valued
// function of complex inputs is conj(df/dz) * 2 in JAX's convention (grad(|z|^2) = 2 z̄).
template <Prim P>
Arrays parts_transpose(std::span<const Array> cts, std::span<const Array>,
                       std::span<const Aval>, std::span<const bool>, const Params&) {
  if (ad_rules::is_zero(cts[0])) return {Array()};
  const Array& t = cts[0];
  if constexpr (P == Prim::Conj) return {lax::conj(t)};
  Array zero = ad_rules::zeros_like(t);
  if constexpr (P == Prim::Real) return {lax::complex(t, zero)};
  return {lax::complex(zero, lax::neg(t))};
}

Arrays neg_transpose(std::span<const Array> cts, std::span<const Array>, std::span<const Aval>,
                     std::span<const bool>, const Params&) {
  return {ad_rules::is_zero(cts[0]) ? Array() : lax::neg(cts[0])};
}

Arrays copy_transpose(std::span<const Array> cts, std::span<const Array>, std::span<const Aval>,
                      std::span<const bool>, const Params&) {
  return {ad_rules::is_zero(cts[0]) ? Array() : lax::copy(cts[0])};
}

// ---- code generation: one output element as a C++ expression (ops/emit_prelude.h). The
// forms match the kernels of src/backend/cpu/unary.cpp: integers wrap, rounding goes
// through nearbyint, rsqrt is 1 / sqrt. lgamma, digamma and erf_inv use jx's own
// approximations (vmath.h) and stay library calls.

// The libm function of a primitive that is exactly one <cmath> call (float overloads for
// float operands, so that GCC's vector variants apply); nullptr otherwise.
const char* libm_name(Prim p) {
  switch (p) {
    case Prim::Exp: return "std::exp";
    case Prim::Exp2: return "std::exp2";
    case Prim::Log: return "std::log";
    case Prim::Log1p: return "std::log1p";
    case Prim::Expm1: return "std::expm1";
    case Prim::Tanh: return "std::tanh";
    case Prim::Sin: return "std::sin";
    case Prim::Cos: return "std::cos";
    case Prim::Tan: return "std::tan";
    case Prim::Asin: return "std::asin";
    case Prim::Acos: return "std::acos";
    case Prim::Atan: return "std::atan";
    case Prim::Sinh: return "std::sinh";
    case Prim::Cosh: return "std::cosh";
    case Prim::Asinh: return "std::asinh";
    case Prim::Acosh: return "std::acosh";
    case Prim::Atanh: return "std::atanh";
    case Prim::Sqrt: return "std::sqrt";
    case Prim::Cbrt: return "std::cbrt";
    case Prim::Erf: return "std::erf";
    case Prim::Erfc: return "std::erfc";
    default: return nullptr;
  }
}

// Complex operands: the expressions of the complex kernels (backend/cpu/complex_math.h's
// cx::unary), through the same scalar functions (jx_cx::, complex_scalar.h).
template <Prim P>
std::string complex_unary_emit(const std::string& x, DType t, const Params& params) {
  const std::string C = c_type(t);
  if constexpr (P == Prim::Neg) return str("(-", x, ")");
  else if constexpr (P == Prim::Sign) return str("jx_cx::sign", x);
  else if constexpr (P == Prim::IsFinite)
    return str("((bool)(std::isfinite(", x, ".real()) && std::isfinite(", x, ".imag())))");
  else if constexpr (P == Prim::Log1p) return str("jx_cx::log1p", x);
  else if constexpr (P == Prim::Expm1) return str("jx_cx::expm1", x);
  else if constexpr (P == Prim::Abs) return str("jx_cx::abs(", x, ")");
  else if constexpr (P == Prim::Rsqrt) return str("jx_cx::div(", C, "(1, 0), std::sqrt", x, ")");
  else if constexpr (P == Prim::Square) return str("jx_cx::mul(", x, ", ", x, ")");
  else if constexpr (P == Prim::IntegerPow) return str("jx_cx::integer_pow(", x, ", ", params.i("y"), "LL)");
  else if constexpr (P == Prim::Real) return str(x, ".real()");
  else if constexpr (P == Prim::Imag) return str(x, ".imag()");
  else if constexpr (P == Prim::Conj) return str("std::conj", x);
  else if constexpr (P == Prim::Copy) return x;
  else if constexpr (P == Prim::Exp || P == Prim::Log || P == Prim::Tanh || P == Prim::Sin ||
                     P == Prim::Cos || P == Prim::Tan || P == Prim::Asin || P == Prim::Acos ||
                     P == Prim::Atan || P == Prim::Sinh || P == Prim::Cosh || P == Prim::Asinh ||
                     P == Prim::Acosh || P == Prim::Atanh || P == Prim::Sqrt)
    return str(libm_name(P), x);  // <complex>'s overloads: glibc's cexp, clog, ...
  else return "";  // not defined on complex (abstract eval rejects it first)
}

template <Prim P>
std::string unary_emit(std::span<const std::string> args, std::span<const Aval> in,
                       const Params& params) {
  const DType t = in[0].dtype;
  if (!emit::expressible(in, P == Prim::IsFinite ? DType::Bool : t)) return "";
  const std::string T = c_type(t);
  const std::string x = emit::paren(args[0]);
  if (is_complex(t)) return complex_unary_emit<P>(x, t, params);
  const bool fl = is_floating(t);
  auto helper = [&](const char* fn) { return emit::call(fn, args); };
  if constexpr (P == Prim::Neg) {
    return fl ? str("(-", x, ")") : str("((", T, ")(uint64_t(0) - (uint64_t)", x, "))");
  } else if constexpr (P == Prim::Sign) {
    return helper("jx_sign");
  } else if constexpr (P == Prim::Floor) {
    return helper("jx_floor");
  } else if constexpr (P == Prim::Ceil) {
    return helper("jx_ceil");
  } else if constexpr (P == Prim::Round) {
    return helper(params.i("rounding_method") == 1 ? "jx_round_even" : "jx_round_away");
  } else if constexpr (P == Prim::IsFinite) {
    return str("((bool)std::isfinite", x, ")");
  } else if constexpr (P == Prim::Logistic) {
    return helper("jx_logistic");
  } else if constexpr (P == Prim::Abs) {
    return helper(fl ? "std::fabs" : "jx_abs");
  } else if constexpr (P == Prim::Rsqrt) {
    return str("((", T, ")1 / std::sqrt", x, ")");
  } else if constexpr (P == Prim::Square) {
    return str("jx_ipow_c<2>(", args[0], ")");
  } else if constexpr (P == Prim::IntegerPow) {
    return str("jx_ipow_c<", params.i("y"), ">(", args[0], ")");
  } else if constexpr (P == Prim::Not) {
    return t == DType::Bool ? str("(!", x, ")") : str("((", T, ")~", x, ")");
  } else if constexpr (P == Prim::PopulationCount) {
    return helper("jx_popcount");
  } else if constexpr (P == Prim::Clz) {
    return helper("jx_clz");
  } else if constexpr (P == Prim::Copy) {
    return x;
  } else if constexpr (P == Prim::Lgamma || P == Prim::Digamma || P == Prim::ErfInv ||
                       P == Prim::Real || P == Prim::Imag || P == Prim::Conj) {
    return "";  // jx's own approximations; the complex parts have real operands only there
  } else {
    const char* fn = libm_name(P);
    JX_CHECK(fn, "no emit form for ", name(P));
    return helper(fn);
  }
}

// How a primitive differentiates.
enum class Ad { Smooth, Linear, Zero };

// Primitives without a tangent formula (their tangent is zero).
template <Prim P>
constexpr bool kNoFormula = P == Prim::Sign || P == Prim::Floor || P == Prim::Ceil ||
                            P == Prim::Round || P == Prim::IsFinite || P == Prim::Not ||
                            P == Prim::PopulationCount || P == Prim::Clz;

template <Prim P>
void reg(Ad ad = Ad::Smooth) {
  PrimitiveInfo& pi = mutable_info(P);
  pi.abstract_eval = unary_abstract_eval<P>;
  pi.impl = unary_impl<P>;
  pi.batch = batching::elementwise<P>;
  pi.emit = unary_emit<P>;
  if constexpr (!kNoFormula<P>) pi.jvp = unary_jvp<P>;
  if constexpr (P == Prim::Neg) pi.transpose = neg_transpose;
  if constexpr (P == Prim::Copy) pi.transpose = copy_transpose;
  if constexpr (P == Prim::Real || P == Prim::Imag || P == Prim::Conj)
    pi.transpose = parts_transpose<P>;
  JX_CHECK((pi.jvp != nullptr) == (ad == Ad::Smooth || ad == Ad::Linear));
  JX_CHECK((pi.transpose != nullptr) == (ad == Ad::Linear));
  pi.zero_tangent = ad == Ad::Zero;
  pi.not_linear = ad != Ad::Linear;
}

}  // namespace

void register_unary() {
  reg<Prim::Neg>(Ad::Linear);
  reg<Prim::Sign>(Ad::Zero);
  reg<Prim::Floor>(Ad::Zero);
  reg<Prim::Ceil>(Ad::Zero);
  reg<Prim::Round>(Ad::Zero);
  reg<Prim::IsFinite>(Ad::Zero);
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
  reg<Prim::Not>(Ad::Zero);
  reg<Prim::PopulationCount>(Ad::Zero);
  reg<Prim::Clz>(Ad::Zero);
  reg<Prim::Lgamma>();
  reg<Prim::Digamma>();
  reg<Prim::Erf>();
  reg<Prim::Erfc>();
  reg<Prim::ErfInv>();
  reg<Prim::Copy>(Ad::Linear);
  reg<Prim::Real>(Ad::Linear);
  reg<Prim::Imag>(Ad::Linear);
  reg<Prim::Conj>(Ad::Linear);
}

}  // namespace jx::ops
