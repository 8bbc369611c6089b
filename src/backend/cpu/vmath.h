// Vectorizable element functions for the fast CPU kernels.
//
// GCC calls glibc's vector math (libmvec: _ZGVeN16v_expf, ...) from a `#pragma omp simd`
// loop only when the scalar function is declared `omp declare simd`; glibc's <math.h>
// does that only under -ffast-math, which would also break NaN/Inf. So we redeclare the
// functions here with the pragma (the declarations match glibc's, so they merge with
// <math.h>'s). Functions without a vector variant (logistic, erf_inv, lgamma, digamma)
// are composed from ones that have one, so their loops still vectorize. Include this
// header only in fast-kernel files: the reference kernels must stay plain scalar libm.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX512F__) || defined(__AVX__)
#include <immintrin.h>
#endif

#define JX_VMATH_DECL1(name)                     \
  _Pragma("omp declare simd notinbranch") float name##f(float) noexcept; \
  _Pragma("omp declare simd notinbranch") double name(double) noexcept;
#define JX_VMATH_DECL2(name)                     \
  _Pragma("omp declare simd notinbranch") float name##f(float, float) noexcept; \
  _Pragma("omp declare simd notinbranch") double name(double, double) noexcept;

extern "C" {
JX_VMATH_DECL1(exp)
JX_VMATH_DECL1(exp2)
JX_VMATH_DECL1(expm1)
JX_VMATH_DECL1(log)
JX_VMATH_DECL1(log1p)
JX_VMATH_DECL1(sin)
JX_VMATH_DECL1(cos)
JX_VMATH_DECL1(tan)
JX_VMATH_DECL1(asin)
JX_VMATH_DECL1(acos)
JX_VMATH_DECL1(atan)
JX_VMATH_DECL1(sinh)
JX_VMATH_DECL1(cosh)
JX_VMATH_DECL1(tanh)
JX_VMATH_DECL1(asinh)
JX_VMATH_DECL1(acosh)
JX_VMATH_DECL1(atanh)
JX_VMATH_DECL1(cbrt)
JX_VMATH_DECL1(erf)
JX_VMATH_DECL1(erfc)
JX_VMATH_DECL2(pow)
JX_VMATH_DECL2(atan2)
}
#undef JX_VMATH_DECL1
#undef JX_VMATH_DECL2

namespace jx::cpu::vm {

// Overloads so templates can call vm::exp(x) for float and double alike.
#define JX_VM1(name)                                        \
  inline float name(float x) { return ::name##f(x); }        \
  inline double name(double x) { return ::name(x); }
JX_VM1(exp)
JX_VM1(exp2)
JX_VM1(expm1)
JX_VM1(log)
JX_VM1(log1p)
JX_VM1(sin)
JX_VM1(cos)
JX_VM1(tan)
JX_VM1(asin)
JX_VM1(acos)
JX_VM1(atan)
JX_VM1(sinh)
JX_VM1(cosh)
JX_VM1(tanh)
JX_VM1(asinh)
JX_VM1(acosh)
JX_VM1(atanh)
JX_VM1(cbrt)
JX_VM1(erf)
JX_VM1(erfc)
#undef JX_VM1
inline float pow(float x, float y) { return ::powf(x, y); }
inline double pow(double x, double y) { return ::pow(x, y); }
inline float atan2(float x, float y) { return ::atan2f(x, y); }
inline double atan2(double x, double y) { return ::atan2(x, y); }

// Rounding through nearbyint, which GCC vectorizes (vrndscale); floor/ceil/trunc/round
// themselves only vectorize under -fno-trapping-math. Exact for every input: when
// |x| >= 2^(mantissa bits) x is already integral and nearbyint returns it unchanged.
// A zero result takes x's sign (ceil(-0.7) = -0.0), which copysign gives for every result.
template <class T>
inline T floor(T x) {
  T t = std::nearbyint(x);
  return std::copysign(t > x ? t - T(1) : t, x);
}
template <class T>
inline T ceil(T x) {
  T t = std::nearbyint(x);
  return std::copysign(t < x ? t + T(1) : t, x);
}
template <class T>
inline T trunc(T x) {
  T t = std::nearbyint(x);
  T a = std::fabs(x), ta = std::fabs(t);
  return std::copysign(ta > a ? ta - T(1) : ta, x);
}
// Half-way cases away from zero (lax.round's default, C's round()).
template <class T>
inline T round_away(T x) {
  T t = trunc(x);
  T r = std::fabs(x - t) >= T(0.5) ? t + std::copysign(T(1), x) : t;
  return std::copysign(r, x);  // keeps -0.0 for -0.4
}

template <class T>
inline T logistic(T x) {
  return T(1) / (T(1) + vm::exp(-x));
}

// erf_inv: Giles' single-precision approximation ("Approximating the erfinv function",
// GPU Computing Gems, 2010), which XLA uses for f32, evaluated in T. For float64 it is a
// starting point (~1e-7 relative where float resolves x) refined by Newton steps: on erf
// for |x| < 0.5, on erfc(y) = 1 - |x| (exact there) in the tails.
template <class T>
inline T erf_inv_giles(T x) {
  T w = -vm::log((T(1) - x) * (T(1) + x));
  T lt = w - T(2.5);
  T p1 = T(2.81022636e-08);
  p1 = T(3.43273939e-07) + p1 * lt;
  p1 = T(-3.5233877e-06) + p1 * lt;
  p1 = T(-4.39150654e-06) + p1 * lt;
  p1 = T(0.00021858087) + p1 * lt;
  p1 = T(-0.00125372503) + p1 * lt;
  p1 = T(-0.00417768164) + p1 * lt;
  p1 = T(0.246640727) + p1 * lt;
  p1 = T(1.50140941) + p1 * lt;
  T gt = std::sqrt(w) - T(3);
  T p2 = T(-0.000200214257);
  p2 = T(0.000100950558) + p2 * gt;
  p2 = T(0.00134934322) + p2 * gt;
  p2 = T(-0.00367342844) + p2 * gt;
  p2 = T(0.00573950773) + p2 * gt;
  p2 = T(-0.0076224613) + p2 * gt;
  p2 = T(0.00943887047) + p2 * gt;
  p2 = T(1.00167406) + p2 * gt;
  p2 = T(2.83297682) + p2 * gt;
  T r = (w < T(5) ? p1 : p2) * x;
  T ax = std::fabs(x);
  r = ax == T(1) ? std::copysign(T(INFINITY), x) : r;
  return ax > T(1) ? T(NAN) : r;
}
inline float erf_inv(float x) { return erf_inv_giles(x); }
inline double erf_inv(double x) {
  const double k = 1.1283791670955126;  // 2/sqrt(pi)
  double y = erf_inv_giles(x);
  double ax = std::fabs(x);
  bool finite = ax < 1.0;
  double ya = finite ? std::fabs(y) : 0.5;
  bool tail = ax >= 0.5;
  double target = tail ? 1.0 - ax : ax;
  for (int it = 0; it < 3; ++it) {  // the third covers 1 - |x| < 2^-24 (polynomial extrapolated)
    double f = tail ? target - vm::erfc(ya) : vm::erf(ya) - target;
    ya -= f / (k * vm::exp(-ya * ya));
  }
  return finite ? std::copysign(ya, x) : y;
}

// Lanczos approximation (g = 7, 9 terms), as XLA's lgamma and digamma.
inline constexpr double kLanczosG = 7.0;
inline constexpr double kLanczosBase = 0.99999999999980993227684700473478;
inline constexpr double kLanczosCoef[8] = {
    676.520368121885098567009190444019, -1259.13921672240287047156078755283,
    771.3234287776530788486528258894,   -176.61502916214059906584551354,
    12.507343278686904814458936853,     -0.13857109526572011689554707,
    9.984369578019570859563e-6,         1.50563273514931155834e-7};

// |sin(pi * x)| with the argument reduced to [-0.5, 0.5] so that it is exact at integers.
template <class T>
inline T abs_sin_pi(T x) {
  T r = x - std::nearbyint(x);
  return std::fabs(vm::sin(T(M_PI) * r));
}

template <class T>
inline T lgamma(T x) {
  const T pi = T(M_PI);
  bool reflect = x < T(0.5);
  T z = (reflect ? -x : x - T(1));  // lgamma(1 - x) uses z = -x
  T sum = T(kLanczosBase);
  for (int i = 0; i < 8; ++i) sum += T(kLanczosCoef[i]) / (z + T(i + 1));
  T t = z + T(kLanczosG + 0.5);
  T log_t = T(std::log(kLanczosG + 0.5)) + vm::log1p(z / T(kLanczosG + 0.5));
  T lg = T(0.91893853320467274178) + (z + T(0.5)) * log_t - t + vm::log(sum);
  T s = abs_sin_pi(x);
  T refl = T(1.1447298858494002) - vm::log(s) - lg;  // log(pi) - log|sin(pi x)| - lgamma(1-x)
  T r = reflect ? refl : lg;
  r = (reflect && s == T(0)) ? T(INFINITY) : r;  // poles at non-positive integers
  r = std::isinf(x) ? T(INFINITY) : r;
  return (void)pi, r;
}

template <class T>
inline T digamma(T x) {
  bool reflect = x < T(0.5);
  T z = (reflect ? -x : x - T(1));
  T num = T(0), den = T(kLanczosBase);
  for (int i = 0; i < 8; ++i) {
    T d = z + T(i + 1);
    T c = T(kLanczosCoef[i]);
    num -= c / (d * d);
    den += c / d;
  }
  T t = z + T(kLanczosG + 0.5);
  T log_t = T(std::log(kLanczosG + 0.5)) + vm::log1p(z / T(kLanczosG + 0.5));
  T y = log_t + num / den - T(kLanczosG) / t;
  // Reflection: digamma(x) = digamma(1 - x) - pi / tan(pi x), with a reduced argument.
  T r = x - std::nearbyint(x);
  T refl = y - T(M_PI) / vm::tan(T(M_PI) * r);
  T out = reflect ? refl : y;
  out = (x <= T(0) && r == T(0)) ? T(NAN) : out;  // poles
  out = x == T(INFINITY) ? T(INFINITY) : out;
  out = x == -T(INFINITY) ? T(NAN) : out;
  return out;
}

}  // namespace jx::cpu::vm
