// Naive unary kernels: the test oracle for unary.cpp. One element at a time through
// scalar libm (no vmath.h, no simd, no threads), with independent algorithms for the
// functions libm lacks (digamma, erf_inv).
#include <cmath>
#include <limits>
#include <type_traits>

#include "backend/cpu/complex_math.h"
#include "backend/cpu/kernels.h"
#include "support/dtype_switch.h"

namespace jx::cpu {
namespace {

double digamma_ref(double x) {
  if (std::isnan(x) || x == -INFINITY) return NAN;
  if (x == INFINITY) return INFINITY;
  if (x <= 0 && x == std::floor(x)) return NAN;
  double r = 0;
  if (x < 0) {  // psi(x) = psi(1 - x) - pi / tan(pi x); tan has period pi: reduce exactly
    r = -M_PI / std::tan(M_PI * (x - std::nearbyint(x)));
    x = 1 - x;
  }
  while (x < 10) {
    r -= 1 / x;
    x += 1;
  }
  double x2 = 1 / (x * x);
  // Asymptotic series (Bernoulli numbers): log x - 1/2x - sum B2k / (2k x^2k).
  double s = x2 * (1.0 / 12 - x2 * (1.0 / 120 - x2 * (1.0 / 252 - x2 * (1.0 / 240 - x2 / 132))));
  return r + std::log(x) - 0.5 / x - s;
}

double erf_inv_ref(double x) {
  if (std::isnan(x) || std::fabs(x) > 1) return NAN;
  if (std::fabs(x) == 1) return std::copysign(INFINITY, x);
  if (x == 0) return x;
  // Winitzki's closed-form start, then Newton on erf.
  const double a = 0.147;
  double ln = std::log(1 - x * x);
  double t = 2 / (M_PI * a) + ln / 2;
  double y = std::copysign(std::sqrt(std::sqrt(t * t - ln / a) - t), x);
  for (int i = 0; i < 6; ++i) {
    double d = (std::erf(y) - x) / (2 / std::sqrt(M_PI) * std::exp(-y * y));
    if (!std::isfinite(d)) break;
    y -= d;
  }
  return y;
}

template <class C>
C ipow(C x, int64_t y) {
  if constexpr (std::is_floating_point_v<C>) {
    if (y == 0) return C(1);
    uint64_t e = y < 0 ? uint64_t(-y) : uint64_t(y);
    C acc = C(0);
    bool have = false;
    for (; e; e >>= 1) {
      if (e & 1) {
        acc = have ? acc * x : x;
        have = true;
      }
      if (e > 1) x = x * x;
    }
    return y < 0 ? C(1) / acc : acc;
  } else {
    using U = std::make_unsigned_t<C>;
    U r = 1;
    for (int64_t i = 0; i < y; ++i) r = U(r * U(x));
    return C(r);
  }
}

template <class C>
C neg_wrap(C x) {
  if constexpr (std::is_integral_v<C>) return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(x));
  else return -x;
}

// One element; returns double for floats (converted back by the caller) or the int itself.
template <class C>
auto ref_one(UnaryOp op, C x, int64_t p) {
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case UnaryOp::Neg: return C(-x);
      case UnaryOp::Sign: return std::isnan(x) ? x : (x > 0 ? C(1) : x < 0 ? C(-1) : x);
      case UnaryOp::Floor: return C(std::floor(x));
      case UnaryOp::Ceil: return C(std::ceil(x));
      case UnaryOp::Round: return C(std::round(x));
      case UnaryOp::RoundEven: return C(std::nearbyint(x));
      case UnaryOp::IsFinite: return C(std::isfinite(x) ? 1 : 0);
      case UnaryOp::Exp: return C(std::exp(x));
      case UnaryOp::Exp2: return C(std::exp2(x));
      case UnaryOp::Log: return C(std::log(x));
      case UnaryOp::Log1p: return C(std::log1p(x));
      case UnaryOp::Expm1: return C(std::expm1(x));
      case UnaryOp::Tanh: return C(std::tanh(x));
      case UnaryOp::Logistic: return C(C(1) / (C(1) + std::exp(-x)));
      case UnaryOp::Sin: return C(std::sin(x));
      case UnaryOp::Cos: return C(std::cos(x));
      case UnaryOp::Tan: return C(std::tan(x));
      case UnaryOp::Asin: return C(std::asin(x));
      case UnaryOp::Acos: return C(std::acos(x));
      case UnaryOp::Atan: return C(std::atan(x));
      case UnaryOp::Sinh: return C(std::sinh(x));
      case UnaryOp::Cosh: return C(std::cosh(x));
      case UnaryOp::Asinh: return C(std::asinh(x));
      case UnaryOp::Acosh: return C(std::acosh(x));
      case UnaryOp::Atanh: return C(std::atanh(x));
      case UnaryOp::Abs: return C(std::fabs(x));
      case UnaryOp::Sqrt: return C(std::sqrt(x));
      case UnaryOp::Rsqrt: return C(C(1) / std::sqrt(x));
      case UnaryOp::Cbrt: return C(std::cbrt(x));
      case UnaryOp::Square: return C(x * x);
      case UnaryOp::IntegerPow: return ipow<C>(x, p);
      case UnaryOp::Lgamma: return C(std::lgamma(double(x)));
      case UnaryOp::Digamma: return C(digamma_ref(double(x)));
      case UnaryOp::Erf: return C(std::erf(x));
      case UnaryOp::Erfc: return C(std::erfc(x));
      case UnaryOp::ErfInv: return C(erf_inv_ref(double(x)));
      case UnaryOp::Copy: return x;
      default: break;
    }
  } else if constexpr (std::is_same_v<C, bool>) {
    if (op == UnaryOp::Not) return C(!x);
    if (op == UnaryOp::Copy) return x;
  } else {
    using U = std::make_unsigned_t<C>;
    constexpr int bits = int(sizeof(C) * 8);
    switch (op) {
      case UnaryOp::Neg: return neg_wrap(x);
      case UnaryOp::Sign: return C(x > C(0) ? 1 : (x == C(0) ? 0 : -1));
      case UnaryOp::Abs: return x < C(0) ? neg_wrap(x) : x;
      case UnaryOp::Square: return ipow<C>(x, 2);
      case UnaryOp::IntegerPow: return ipow<C>(x, p);
      case UnaryOp::Not: return C(~x);
      case UnaryOp::PopulationCount: {
        int c = 0;
        for (U u = U(x); u; u = U(u >> 1)) c += int(u & 1);
        return C(c);
      }
      case UnaryOp::Clz: {
        int c = 0;
        for (int b = bits - 1; b >= 0 && !((U(x) >> b) & 1); --b) ++c;
        return C(c);
      }
      case UnaryOp::Copy: return x;
      default: break;
    }
  }
  throw InternalError("jx internal error: unary_reference called with an unsupported dtype");
}

}  // namespace

void unary_reference(UnaryOp op, DType dtype, const void* x, void* out, int64_t n,
                     int64_t param) {
  if (is_complex(dtype)) {
    if (!cx::unary_supported(op)) cx::unsupported("unary op", cx::unary_name(op), dtype);
    auto run = [&](auto r) {
      using R = decltype(r);
      const auto* xs = static_cast<const std::complex<R>*>(x);
      cx::with_unary_op(op, [&](auto tag) {
        constexpr UnaryOp o = decltype(tag)::value;
        auto* os = static_cast<cx::unary_out_t<o, R>*>(out);
        for (int64_t i = 0; i < n; ++i) os[i] = cx::unary<o, R>(xs[i], param);
      });
    };
    if (dtype == DType::Complex64) run(float{});
    else run(double{});
    return;
  }
  if (op == UnaryOp::Real || op == UnaryOp::Conj || op == UnaryOp::Imag) {
    const size_t bytes = itemsize(dtype);
    for (int64_t i = 0; i < n; ++i)
      for (size_t b = 0; b < bytes; ++b)
        static_cast<char*>(out)[size_t(i) * bytes + b] =
            op == UnaryOp::Imag ? char(0) : static_cast<const char*>(x)[size_t(i) * bytes + b];
    return;
  }
  JX_DTYPE_SWITCH(dtype, T, {
    using C = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bhalf>, float, T>;
    const T* xs = static_cast<const T*>(x);
    for (int64_t i = 0; i < n; ++i) {
      C r = ref_one<C>(op, C(xs[i]), param);
      if (op == UnaryOp::IsFinite) static_cast<bool*>(out)[i] = r != C(0);
      else static_cast<T*>(out)[i] = T(r);
    }
  });
}

}  // namespace jx::cpu
