// Complex64/complex128 for the fast kernels and their references: the scalar arithmetic of
// complex_scalar.h (shared with generated code) and the op tables. Internal to backend/cpu.
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "backend/cpu/kernels.h"
#include "jx/error.h"

namespace jx::cpu::cx {

template <class T>
struct is_complex : std::false_type {};
template <class R>
struct is_complex<std::complex<R>> : std::true_type {};
template <class T>
inline constexpr bool is_complex_v = is_complex<T>::value;

#include "backend/cpu/complex_scalar.h"

inline const char* unary_name(UnaryOp op) {
  static const char* const names[] = {
      "neg", "sign", "floor", "ceil", "round", "round_even", "is_finite", "exp", "exp2",
      "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos",
      "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "abs", "sqrt", "rsqrt", "cbrt",
      "square", "integer_pow", "not", "population_count", "clz", "lgamma", "digamma", "erf",
      "erfc", "erf_inv", "copy", "real", "imag", "conj"};
  static_assert(sizeof(names) / sizeof(names[0]) == size_t(UnaryOp::Conj) + 1);
  return names[size_t(op)];
}

inline const char* binary_name(BinaryOp op) {
  static const char* const names[] = {
      "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "and",
      "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical", "eq", "ne",
      "lt", "le", "gt", "ge", "complex"};
  static_assert(sizeof(names) / sizeof(names[0]) == size_t(BinaryOp::Complex) + 1);
  return names[size_t(op)];
}

[[noreturn]] inline void unsupported(const char* what, const char* op, DType dtype) {
  throw TypeError(std::string(what) + " " + op + " does not support dtype " + dtype_name(dtype));
}

// The unary ops that take a complex operand; the others throw TypeError (bind rejects
// them first).
constexpr bool unary_supported(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: case UnaryOp::Sign: case UnaryOp::IsFinite: case UnaryOp::Exp:
    case UnaryOp::Log: case UnaryOp::Log1p: case UnaryOp::Expm1: case UnaryOp::Tanh:
    case UnaryOp::Sin: case UnaryOp::Cos: case UnaryOp::Tan: case UnaryOp::Sinh:
    case UnaryOp::Cosh: case UnaryOp::Asin: case UnaryOp::Acos: case UnaryOp::Atan:
    case UnaryOp::Asinh: case UnaryOp::Acosh: case UnaryOp::Atanh: case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt: case UnaryOp::Square: case UnaryOp::IntegerPow: case UnaryOp::Copy:
    case UnaryOp::Abs: case UnaryOp::Real: case UnaryOp::Imag: case UnaryOp::Conj:
      return true;
    default:
      return false;
  }
}

// Abs, Real and Imag write the real dtype; IsFinite writes bool.
template <UnaryOp op, class R>
using unary_out_t = std::conditional_t<
    op == UnaryOp::IsFinite, bool,
    std::conditional_t<op == UnaryOp::Abs || op == UnaryOp::Real || op == UnaryOp::Imag, R,
                       std::complex<R>>>;

template <UnaryOp op, class R>
inline unary_out_t<op, R> unary(std::complex<R> x, int64_t p) {
  using Cx = std::complex<R>;
  if constexpr (op == UnaryOp::Neg) return Cx(-x.real(), -x.imag());
  else if constexpr (op == UnaryOp::Sign) return cx::sign(x);
  else if constexpr (op == UnaryOp::IsFinite) return std::isfinite(x.real()) && std::isfinite(x.imag());
  else if constexpr (op == UnaryOp::Exp) return std::exp(x);
  else if constexpr (op == UnaryOp::Log) return std::log(x);
  else if constexpr (op == UnaryOp::Log1p) return cx::log1p(x);
  else if constexpr (op == UnaryOp::Expm1) return cx::expm1(x);
  else if constexpr (op == UnaryOp::Tanh) return std::tanh(x);
  else if constexpr (op == UnaryOp::Sin) return std::sin(x);
  else if constexpr (op == UnaryOp::Cos) return std::cos(x);
  else if constexpr (op == UnaryOp::Tan) return std::tan(x);
  else if constexpr (op == UnaryOp::Sinh) return std::sinh(x);
  else if constexpr (op == UnaryOp::Cosh) return std::cosh(x);
  else if constexpr (op == UnaryOp::Asin) return std::asin(x);
  else if constexpr (op == UnaryOp::Acos) return std::acos(x);
  else if constexpr (op == UnaryOp::Atan) return std::atan(x);
  else if constexpr (op == UnaryOp::Asinh) return std::asinh(x);
  else if constexpr (op == UnaryOp::Acosh) return std::acosh(x);
  else if constexpr (op == UnaryOp::Atanh) return std::atanh(x);
  else if constexpr (op == UnaryOp::Sqrt) return std::sqrt(x);
  else if constexpr (op == UnaryOp::Rsqrt) return cx::div(Cx(R(1), R(0)), std::sqrt(x));
  else if constexpr (op == UnaryOp::Square) return cx::mul(x, x);
  else if constexpr (op == UnaryOp::IntegerPow) return cx::integer_pow(x, p);
  else if constexpr (op == UnaryOp::Abs) return cx::abs(x);
  else if constexpr (op == UnaryOp::Real) return x.real();
  else if constexpr (op == UnaryOp::Imag) return x.imag();
  else if constexpr (op == UnaryOp::Conj) return Cx(x.real(), -x.imag());
  else return x;  // Copy
}

// Runtime-op form for the reference kernels: calls fn(unary<op, R>) for the op.
template <class F>
inline void with_unary_op(UnaryOp op, F&& fn) {
  switch (op) {
#define JX_CX_UN(name) \
  case UnaryOp::name: return fn(std::integral_constant<UnaryOp, UnaryOp::name>{});
    JX_CX_UN(Neg) JX_CX_UN(Sign) JX_CX_UN(IsFinite) JX_CX_UN(Exp) JX_CX_UN(Log)
    JX_CX_UN(Log1p) JX_CX_UN(Expm1) JX_CX_UN(Tanh) JX_CX_UN(Sin) JX_CX_UN(Cos) JX_CX_UN(Tan)
    JX_CX_UN(Sinh) JX_CX_UN(Cosh) JX_CX_UN(Asin) JX_CX_UN(Acos) JX_CX_UN(Atan)
    JX_CX_UN(Asinh) JX_CX_UN(Acosh) JX_CX_UN(Atanh) JX_CX_UN(Sqrt) JX_CX_UN(Rsqrt)
    JX_CX_UN(Square) JX_CX_UN(IntegerPow) JX_CX_UN(Copy) JX_CX_UN(Abs) JX_CX_UN(Real)
    JX_CX_UN(Imag) JX_CX_UN(Conj)
#undef JX_CX_UN
    default:
      break;
  }
}

// The binary ops that take complex operands (Eq/Ne write bool). Max/Min order (real, imag)
// lexicographically, as lax's; the ordered comparisons stay real-only, as lax's (jnp builds
// complex ones from the parts).
constexpr bool binary_supported(BinaryOp op) {
  return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul ||
         op == BinaryOp::Div || op == BinaryOp::Pow || op == BinaryOp::Max ||
         op == BinaryOp::Min || op == BinaryOp::Eq || op == BinaryOp::Ne;
}

template <BinaryOp op, class R>
inline auto binary(std::complex<R> a, std::complex<R> b) {
  if constexpr (op == BinaryOp::Add) return std::complex<R>(a.real() + b.real(), a.imag() + b.imag());
  else if constexpr (op == BinaryOp::Sub) return std::complex<R>(a.real() - b.real(), a.imag() - b.imag());
  else if constexpr (op == BinaryOp::Mul) return cx::mul(a, b);
  else if constexpr (op == BinaryOp::Div) return cx::div(a, b);
  else if constexpr (op == BinaryOp::Pow) return cx::pow(a, b);
  else if constexpr (op == BinaryOp::Max) return cx::lex_max(a, b);
  else if constexpr (op == BinaryOp::Min) return cx::lex_min(a, b);
  else if constexpr (op == BinaryOp::Eq) return bool(a.real() == b.real() && a.imag() == b.imag());
  else return bool(a.real() != b.real() || a.imag() != b.imag());  // Ne
}

template <class F>
inline void with_binary_op(BinaryOp op, F&& fn) {
  switch (op) {
    case BinaryOp::Add: return fn(std::integral_constant<BinaryOp, BinaryOp::Add>{});
    case BinaryOp::Sub: return fn(std::integral_constant<BinaryOp, BinaryOp::Sub>{});
    case BinaryOp::Mul: return fn(std::integral_constant<BinaryOp, BinaryOp::Mul>{});
    case BinaryOp::Div: return fn(std::integral_constant<BinaryOp, BinaryOp::Div>{});
    case BinaryOp::Pow: return fn(std::integral_constant<BinaryOp, BinaryOp::Pow>{});
    case BinaryOp::Max: return fn(std::integral_constant<BinaryOp, BinaryOp::Max>{});
    case BinaryOp::Min: return fn(std::integral_constant<BinaryOp, BinaryOp::Min>{});
    case BinaryOp::Eq: return fn(std::integral_constant<BinaryOp, BinaryOp::Eq>{});
    case BinaryOp::Ne: return fn(std::integral_constant<BinaryOp, BinaryOp::Ne>{});
    default:
      break;
  }
}

}  // namespace jx::cpu::cx
