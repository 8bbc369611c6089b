// Binary elementwise primitives: arithmetic, bitwise, shifts, comparisons. Dtype rules as
// jax/_src/lax/lax.py: mul/add/sub/div/rem need a numeric dtype (jnp maps bool + and * to
// or/and), pow/atan2/nextafter a floating one, bitwise ops ints or bool, shifts ints.
// Autodiff rules follow jax/_src/lax/lax.py, including their choices at kinks; batching is
// ops::batching::elementwise (JAX's defbroadcasting); code generation matches the kernels
// of src/backend/cpu/binary.cpp.
#include "backend/cpu/kernels.h"
#include "ops/ad_rules.h"
#include "ops/batching.h"
#include "ops/common.h"
#include "ops/emit_prelude.h"
#include "support/check.h"

namespace jx::ops {
namespace {

enum class Allowed { Numeric, Float, Inexact, IntOrBool, Int, Any };

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
    {Prim::Pow, cpu::BinaryOp::Pow, Allowed::Inexact, false},
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
    // Two real parts (float32 or float64) in, complex64 or complex128 out.
    {Prim::Complex, cpu::BinaryOp::Complex, Allowed::Float, false},
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
    case Allowed::Inexact: return is_inexact(t);
    case Allowed::IntOrBool: return is_integer(t) || t == DType::Bool;
    case Allowed::Int: return is_integer(t);
    case Allowed::Any: return true;
  }
  return false;
}

const char* allowed_str(Allowed a) {
  switch (a) {
    case Allowed::Numeric: return "a numeric (non-bool) dtype";
    case Allowed::Float: return "a floating dtype";
    case Allowed::Inexact: return "a floating or complex dtype";
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
                         s.allowed == Allowed::Float || s.allowed == Allowed::Inexact
                             ? "; convert with astype, or use the jnp function, which promotes"
                             : "; convert with astype"));
  Shape shape = elementwise_shape(op, in);
  // As lax's naryop: the result is weak only when every operand is (comparisons too).
  if (s.compare) return {Aval{shape, DType::Bool, all_weak(in)}};
  if constexpr (P == Prim::Complex) {
    if (in[0].dtype != DType::Float32 && in[0].dtype != DType::Float64)
      throw DTypeError(str("[complex] needs float32 or float64 parts, got ", avals_str(in),
                           "; convert them with astype(jx::float32)"));
    return {Aval{shape, complex_dtype(in[0].dtype), all_weak(in)}};
  }
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

// ---- autodiff ----

// 1 where x equals the result z, halved where y does too: max/min split the tangent
// evenly at ties, as JAX's _balanced_eq.
Array balanced_eq(const Array& x, const Array& z, const Array& y) {
  auto c = [&](double v) { return ad_rules::constant(v, z); };
  return lax::div(lax::select(lax::eq(x, z), c(1.0), c(0.0)),
                  lax::select(lax::eq(y, z), c(2.0), c(1.0)));
}

// The contribution of operand I's (non-zero) tangent g to the output tangent.
template <Prim P, int I>
Array binary_tangent(const Array& g, const Array& x, const Array& y, const Array& ans) {
  auto c = [&](double v) { return ad_rules::constant(v, ans); };
  if constexpr (P == Prim::Add) {
    return g;
  } else if constexpr (P == Prim::Sub) {
    return I == 0 ? g : lax::neg(g);
  } else if constexpr (P == Prim::Mul) {
    return I == 0 ? lax::mul(g, y) : lax::mul(x, g);
  } else if constexpr (P == Prim::Div) {
    if constexpr (I == 0) return lax::div(g, y);
    return lax::mul(lax::mul(lax::neg(g), x), lax::integer_pow(y, -2));
  } else if constexpr (P == Prim::Rem) {
    // d rem(x, y)/dy = -trunc(x / y).
    if constexpr (I == 0) return g;
    Array q = lax::div(x, y);
    return lax::mul(lax::neg(g), lax::mul(lax::sign(q), lax::floor(lax::abs(q))));
  } else if constexpr (P == Prim::Pow) {
    if constexpr (I == 0) return lax::mul(g, lax::mul(y, lax::pow(x, lax::sub(y, c(1.0)))));
    // log(x) is replaced by log(1) = 0 at x == 0, so 0 ** y has a finite y-derivative.
    Array safe_x = lax::select(lax::eq(x, c(0.0)), c(1.0), x);
    return lax::mul(g, lax::mul(lax::log(safe_x), ans));
  } else if constexpr (P == Prim::Max || P == Prim::Min) {
    return I == 0 ? lax::mul(g, balanced_eq(x, ans, y)) : lax::mul(g, balanced_eq(y, ans, x));
  } else if constexpr (P == Prim::Complex) {
    // Linear: complex(dx, 0) + complex(0, dy).
    Array zero = ad_rules::zeros_like(g);
    return I == 0 ? lax::complex(g, zero) : lax::complex(zero, g);
  } else if constexpr (P == Prim::Atan2) {
    Array denom = lax::add(lax::square(x), lax::square(y));
    if constexpr (I == 0) return lax::mul(g, lax::div(y, denom));
    return lax::div(lax::mul(g, lax::neg(x)), denom);
  } else {
    static_assert(P == Prim::Add, "no tangent formula for this primitive");
  }
}

template <Prim P>
Arrays binary_jvp(std::span<const Array> primals, std::span<const Array> outs,
                  std::span<const Array> tangents, const Params&) {
  const Array& ans = outs[0];
  // Integer outputs have no tangent space (JAX's float0): the tangent is zero.
  if (!is_inexact(ans.dtype())) return {Array()};
  Array t;
  if (!ad_rules::is_zero(tangents[0]))
    t = binary_tangent<P, 0>(tangents[0], primals[0], primals[1], ans);
  if (!ad_rules::is_zero(tangents[1]))
    t = ad_rules::add_tangents(t, binary_tangent<P, 1>(tangents[1], primals[0], primals[1], ans));
  // A tangent of an operand with size-1 dims is broadcast up to the output.
  return {ad_rules::bcast(t, ans)};
}

// Transposes: one cotangent per linear operand, summed back down to its shape.
Arrays add_transpose(std::span<const Array> cts, std::span<const Array>,
                     std::span<const Aval> avals, std::span<const bool> linear, const Params&) {
  const Array& ct = cts[0];
  if (ad_rules::is_zero(ct)) return {Array(), Array()};
  return {linear[0] ? ad_rules::unbroadcast(ct, avals[0]) : Array(),
          linear[1] ? ad_rules::unbroadcast(ct, avals[1]) : Array()};
}

Arrays sub_transpose(std::span<const Array> cts, std::span<const Array>,
                     std::span<const Aval> avals, std::span<const bool> linear, const Params&) {
  const Array& ct = cts[0];
  if (ad_rules::is_zero(ct)) return {Array(), Array()};
  return {linear[0] ? ad_rules::unbroadcast(ct, avals[0]) : Array(),
          linear[1] ? ad_rules::unbroadcast(lax::neg(ct), avals[1]) : Array()};
}

// mul is linear in one operand at a time: the other one is a known (primal-side) value.
Arrays mul_transpose(std::span<const Array> cts, std::span<const Array> in,
                     std::span<const Aval> avals, std::span<const bool> linear, const Params&) {
  JX_CHECK(!(linear[0] && linear[1]), "mul of two linear values is not linear");
  const Array& ct = cts[0];
  if (ad_rules::is_zero(ct)) return {Array(), Array()};
  if (linear[0]) return {ad_rules::unbroadcast(lax::mul(ct, in[1]), avals[0]), Array()};
  return {Array(), ad_rules::unbroadcast(lax::mul(in[0], ct), avals[1])};
}

// div is linear in its numerator only.
Arrays div_transpose(std::span<const Array> cts, std::span<const Array> in,
                     std::span<const Aval> avals, std::span<const bool> linear, const Params&) {
  JX_CHECK(linear[0] && !linear[1], "div is linear in its numerator only");
  const Array& ct = cts[0];
  if (ad_rules::is_zero(ct)) return {Array(), Array()};
  return {ad_rules::unbroadcast(lax::div(ct, in[1]), avals[0]), Array()};
}

// complex(re, im)'s transpose, as JAX's: (real(ct), -imag(ct)).
Arrays complex_transpose(std::span<const Array> cts, std::span<const Array>,
                         std::span<const Aval> avals, std::span<const bool> linear,
                         const Params&) {
  const Array& ct = cts[0];
  if (ad_rules::is_zero(ct)) return {Array(), Array()};
  return {linear[0] ? ad_rules::unbroadcast(lax::real(ct), avals[0]) : Array(),
          linear[1] ? ad_rules::unbroadcast(lax::neg(lax::imag(ct)), avals[1]) : Array()};
}

// ---- code generation (ops/emit_prelude.h): one output element as a C++ expression.
// Integer add/sub/mul go through uint64_t, which wraps as the kernels' two's complement
// arithmetic does without C++'s signed-overflow UB (or int promotion of 16-bit operands).

template <Prim P>
std::string binary_emit(std::span<const std::string> args, std::span<const Aval> in,
                        const Params&) {
  const DType t = in[0].dtype;
  const bool compare = spec_of(P).compare;
  if (!emit::expressible(in, compare ? DType::Bool : t)) return "";
  const std::string T = c_type(t);
  const std::string a = emit::paren(args[0]), b = emit::paren(args[1]);
  const bool fl = is_floating(t);
  auto helper = [&](const char* fn) { return emit::call(fn, args); };
  auto infix = [&](const char* op) { return str("(", a, " ", op, " ", b, ")"); };
  auto arith = [&](const char* op) {
    if (fl) return infix(op);
    return str("((", T, ")((uint64_t)", a, " ", op, " (uint64_t)", b, "))");
  };
  auto bitwise = [&](const char* op) { return str("((", T, ")(", a, " ", op, " ", b, "))"); };
  if (is_complex(t)) {  // the complex kernels' forms (backend/cpu/complex_scalar.h)
    if constexpr (P == Prim::Add) return infix("+");
    else if constexpr (P == Prim::Sub) return infix("-");
    else if constexpr (P == Prim::Mul) return helper("jx_cx::mul");
    else if constexpr (P == Prim::Div) return helper("jx_cx::div");
    else if constexpr (P == Prim::Pow) return helper("jx_cx::pow");
    else if constexpr (P == Prim::Max) return helper("jx_cx::lex_max");
    else if constexpr (P == Prim::Min) return helper("jx_cx::lex_min");
    else if constexpr (P == Prim::Eq) return infix("==");
    else if constexpr (P == Prim::Ne) return infix("!=");
    else return "";  // not defined on complex (abstract eval rejects it first)
  }
  if constexpr (P == Prim::Add) return arith("+");
  else if constexpr (P == Prim::Sub) return arith("-");
  else if constexpr (P == Prim::Mul) return arith("*");
  else if constexpr (P == Prim::Div) return fl ? infix("/") : helper("jx_div");
  else if constexpr (P == Prim::Rem) return helper("jx_rem");
  else if constexpr (P == Prim::Pow) return helper("std::pow");
  else if constexpr (P == Prim::Max) return helper("jx_max");
  else if constexpr (P == Prim::Min) return helper("jx_min");
  else if constexpr (P == Prim::Atan2) return helper("std::atan2");
  else if constexpr (P == Prim::Nextafter) return helper("jx_nextafter");
  else if constexpr (P == Prim::And) return bitwise("&");
  else if constexpr (P == Prim::Or) return bitwise("|");
  else if constexpr (P == Prim::Xor) return bitwise("^");
  else if constexpr (P == Prim::ShiftLeft) return helper("jx_shift_left");
  else if constexpr (P == Prim::ShiftRightArithmetic) return helper("jx_shift_right_arithmetic");
  else if constexpr (P == Prim::ShiftRightLogical) return helper("jx_shift_right_logical");
  else if constexpr (P == Prim::Eq) return infix("==");
  else if constexpr (P == Prim::Ne) return infix("!=");
  else if constexpr (P == Prim::Lt) return infix("<");
  else if constexpr (P == Prim::Le) return infix("<=");
  else if constexpr (P == Prim::Gt) return infix(">");
  else if constexpr (P == Prim::Ge) return infix(">=");
  else if constexpr (P == Prim::Complex) return str(c_type(complex_dtype(t)), "(", a, ", ", b, ")");
  else static_assert(P == Prim::Add, "no emit form for this primitive");
}

template <Prim P>
void reg() {
  PrimitiveInfo& pi = mutable_info(P);
  pi.abstract_eval = binary_abstract_eval<P>;
  pi.impl = binary_impl<P>;
  pi.batch = batching::elementwise<P>;
  pi.emit = binary_emit<P>;
  constexpr bool smooth = P == Prim::Add || P == Prim::Sub || P == Prim::Mul || P == Prim::Div ||
                          P == Prim::Rem || P == Prim::Pow || P == Prim::Max || P == Prim::Min ||
                          P == Prim::Atan2 || P == Prim::Complex;
  if constexpr (smooth) {
    pi.jvp = binary_jvp<P>;
  } else {
    // Bitwise ops, shifts, comparisons and nextafter: piecewise constant (defjvp_zero).
    pi.zero_tangent = true;
  }
  if constexpr (P == Prim::Add) pi.transpose = add_transpose;
  if constexpr (P == Prim::Sub) pi.transpose = sub_transpose;
  if constexpr (P == Prim::Mul) pi.transpose = mul_transpose;
  if constexpr (P == Prim::Div) pi.transpose = div_transpose;
  if constexpr (P == Prim::Complex) pi.transpose = complex_transpose;
  pi.not_linear = pi.transpose == nullptr;
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
  reg<Prim::Complex>();
}

}  // namespace jx::ops
