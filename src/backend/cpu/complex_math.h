// Scalar complex64/complex128 arithmetic shared by the fast kernels and their references.
// NumPy is the model: multiplication is the plain formula (as NumPy's and XLA's, so that
// an infinite operand gives NaN parts where C99 Annex G would recover an infinity),
// division is Smith's algorithm (NumPy's), pow is NumPy's npy_cpow, and the transcendental
// functions are glibc's c* functions (what std:: calls and NumPy uses), which carry C99
// Annex G's branch cuts and special values. Internal to backend/cpu.
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

// A product rounded on its own. GCC contracts a*b + c into an FMA (-ffp-contract=fast, its
// default), and in a*b - c*d it may fuse either product, differently in vectorized and
// scalar code: an element's bits would depend on its position, and x/x or z*conj(z) would
// get a tiny nonzero imaginary part. fma(a, b, -0) is round(a * b) exactly (signed zeros
// included) and is never fused further; without FMA hardware nothing is contracted.
template <class R>
inline R prod(R a, R b) {
#ifdef __FMA__
  return std::fma(a, b, R(-0.0));
#else
  return a * b;
#endif
}

// NumPy's (and XLA's) formula, each product rounded (prod above).
template <class R>
inline std::complex<R> mul(std::complex<R> a, std::complex<R> b) {
  const R ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  return {prod(ar, br) - prod(ai, bi), prod(ar, bi) + prod(ai, br)};
}

// Smith's algorithm, as NumPy; when it gives NaN in both parts from operands that are not
// NaN (an infinite or zero operand), std::complex division (GCC's, C99 Annex G) recovers
// the infinity or zero that Annex G specifies.
template <class R>
inline std::complex<R> div(std::complex<R> a, std::complex<R> b) {
  const R ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  const R abr = std::fabs(br), abi = std::fabs(bi);
  R re, im;
  if (abr >= abi) {
    if (abr == 0 && abi == 0) {
      re = ar / abr;
      im = ai / abr;
    } else {
      const R rat = bi / br, scl = R(1) / (br + prod(bi, rat));
      re = (ar + prod(ai, rat)) * scl;
      im = (ai - prod(ar, rat)) * scl;
    }
  } else {
    const R rat = br / bi, scl = R(1) / (bi + prod(br, rat));
    re = (prod(ar, rat) + ai) * scl;
    im = (prod(ai, rat) - ar) * scl;
  }
  if (std::isnan(re) && std::isnan(im)) [[unlikely]]
    return a / b;
  return {re, im};
}

// NumPy's npy_cpow: x**0 = 1 (also 0**0), 0**y = 0 for real y > 0 and NaN otherwise,
// integer exponents below 100 in magnitude by repeated multiplication (exact for small
// Gaussian integers), everything else through cpow.
template <class R>
inline std::complex<R> pow(std::complex<R> a, std::complex<R> b) {
  const R br = b.real(), bi = b.imag();
  if (br == 0 && bi == 0) return {R(1), R(0)};
  if (a.real() == 0 && a.imag() == 0) {
    if (br > 0 && bi == 0) return {R(0), R(0)};
    return {R(NAN), R(NAN)};
  }
  if (bi == 0 && br >= R(-100) && br <= R(100) && br == std::trunc(br)) {
    int64_t n = int64_t(br);
    if (n == 1) return a;
    if (n == 2) return cx::mul(a, a);
    if (n == 3) return cx::mul(a, cx::mul(a, a));
    if (n > -100 && n < 100) {
      if (n < 0) n = -n;
      std::complex<R> acc{R(1), R(0)}, p = a;
      for (int64_t mask = 1;; mask <<= 1) {
        if (n & mask) acc = cx::mul(acc, p);
        if (n < (mask << 1)) break;
        p = cx::mul(p, p);
      }
      return br < 0 ? cx::div(std::complex<R>{R(1), R(0)}, acc) : acc;
    }
  }
  return std::pow(a, b);
}

// lax.integer_pow: the multiplication order of the real kernel (unary.cpp), so that a
// complex with zero imaginary part rounds as its real part would.
template <class R>
inline std::complex<R> integer_pow(std::complex<R> x, int64_t y) {
  if (y == 0) return {R(1), R(0)};
  const bool recip = y < 0;
  uint64_t e = recip ? uint64_t(0) - uint64_t(y) : uint64_t(y);
  std::complex<R> acc{R(1), R(0)};
  bool first = true;
  while (e > 0) {
    if (e & 1) {
      acc = first ? x : cx::mul(acc, x);
      first = false;
    }
    e >>= 1;
    if (e > 0) x = cx::mul(x, x);
  }
  return recip ? cx::div(std::complex<R>{R(1), R(0)}, acc) : acc;
}

// log(1 + z) accurate for small |z| (NumPy's formula, log|1+z| + i arg(1+z), loses the
// digits of z that 1 + z rounds away): the real part is log1p(2x + x^2 + y^2) / 2,
// computed in a wider type so that it stays accurate near the circle |1 + z| = 1 too.
template <class R>
inline std::complex<R> log1p(std::complex<R> z) {
  const R x = z.real(), y = z.imag();
  if (!std::isfinite(x) || !std::isfinite(y)) return std::log(std::complex<R>(R(1) + x, y));
  using W = std::conditional_t<std::is_same_v<R, float>, double, long double>;
  if constexpr (std::is_same_v<R, double>) {
    // long double's exponent range covers the squares of any double, but not the sum's
    // rounding near 1e4932: beyond 1e300 the plain formula has nothing to lose.
    if (std::fabs(x) > 1e300 || std::fabs(y) > 1e300)
      return std::log(std::complex<R>(R(1) + x, y));
  }
  const W wx = W(x), wy = W(y);
  const W t = wx * (W(2) + wx) + wy * wy;
  return {R(W(0.5) * std::log1p(t)), R(std::atan2(wy, W(1) + wx))};
}

// exp(z) - 1 as NumPy computes it (expm1(x) cos y - 2 sin^2(y/2) avoids the cancellation
// of exp(z) - 1 for small |z|), in double for complex64.
template <class R>
inline std::complex<R> expm1(std::complex<R> z) {
  const R x = z.real(), y = z.imag();
  if (!std::isfinite(x) || !std::isfinite(y)) return std::exp(z) - R(1);
  if (y == 0) return {std::expm1(x), y};  // an exact zero imaginary part, sign kept
  using W = std::conditional_t<std::is_same_v<R, float>, double, R>;
  const W wx = W(x), wy = W(y);
  const W s = std::sin(wy / 2);
  return {R(std::expm1(wx) * std::cos(wy) - 2 * s * s), R(std::exp(wx) * std::sin(wy))};
}

// z / |z| (NumPy 2's sign): 0 at 0; an infinite part gives the unit vector along it,
// two infinite parts or a NaN give NaN.
template <class R>
inline std::complex<R> sign(std::complex<R> z) {
  const R x = z.real(), y = z.imag();
  const R a = std::hypot(x, y);
  if (std::isnan(a)) return {R(NAN), R(NAN)};
  if (std::isinf(a)) {
    if (std::isinf(x)) {
      if (std::isinf(y)) return {R(NAN), R(NAN)};
      return {x > 0 ? R(1) : R(-1), R(0)};
    }
    return {R(0), y > 0 ? R(1) : R(-1)};
  }
  if (a == 0) return {R(0), R(0)};
  return {x / a, y / a};
}

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
  else if constexpr (op == UnaryOp::Abs) return std::hypot(x.real(), x.imag());
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

// The binary ops that take complex operands (Eq/Ne write bool).
constexpr bool binary_supported(BinaryOp op) {
  return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul ||
         op == BinaryOp::Div || op == BinaryOp::Pow || op == BinaryOp::Eq || op == BinaryOp::Ne;
}

template <BinaryOp op, class R>
inline auto binary(std::complex<R> a, std::complex<R> b) {
  if constexpr (op == BinaryOp::Add) return std::complex<R>(a.real() + b.real(), a.imag() + b.imag());
  else if constexpr (op == BinaryOp::Sub) return std::complex<R>(a.real() - b.real(), a.imag() - b.imag());
  else if constexpr (op == BinaryOp::Mul) return cx::mul(a, b);
  else if constexpr (op == BinaryOp::Div) return cx::div(a, b);
  else if constexpr (op == BinaryOp::Pow) return cx::pow(a, b);
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
    case BinaryOp::Eq: return fn(std::integral_constant<BinaryOp, BinaryOp::Eq>{});
    case BinaryOp::Ne: return fn(std::integral_constant<BinaryOp, BinaryOp::Ne>{});
    default:
      break;
  }
}

}  // namespace jx::cpu::cx
