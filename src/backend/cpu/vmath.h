// Vectorizable element functions for the fast CPU kernels.
//
// GCC calls glibc's vector math (libmvec: _ZGVeN16v_expf, ...) from a `#pragma omp simd`
// loop only when the scalar function is declared `omp declare simd`; glibc's <math.h>
// does that only under -ffast-math, which would also break NaN/Inf. So we redeclare the
// functions here with the pragma (the declarations match glibc's, so they merge with
// <math.h>'s). Functions without a vector variant (logistic, lgamma, digamma) are
// composed from ones that have one, so their loops still vectorize; float32 erf_inv has
// an explicit vector form (erf_inv_block). Include this
// header only in fast-kernel files: the reference kernels must stay plain scalar libm.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX512F__) || defined(__AVX__) || defined(__SSE__)
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

// erf_inv as XLA's CPU backend computes it, so that jax.random.normal and truncated_normal
// are reproduced bit for bit. JAX lowers lax.erf_inv to chlo.erf_inv, which XLA expands
// (stablehlo ChloLegalizeToStablehlo: erfInv32 / erfInv64) into
//   w = -log1p(x * -x); polynomial in (w - c) or (sqrt(w) - c'); result p * x;
//   |x| == 1 -> x * inf.
// float16/bfloat16 are computed in float32 and rounded (the caller upcasts). XLA's CPU
// compiler always allows FMA contraction, so every `c + p * w` below is one fused
// multiply-add (std::fma; this project builds with -ffp-contract=off, so the plain
// expressions are not contracted behind our back). log1p and log are XLA CPU's own
// (xla/codegen/intrinsic/log1p.cc: a Cephes rational for |x| < sqrt(2) - 1, else
// log(1 + x); log: the Cephes/Eigen polynomial of xla/backends/cpu/codegen/
// polynomial_approximations.cc for float32, libm for float64).
namespace xla_detail {

// XLA CPU's float32 log (GenerateVF32Log). Branch-free and always inlined (too large for
// GCC's default inlining), so a loop over it alone vectorizes.
[[gnu::always_inline]] inline float log_f32(float v) {
  // Subnormals (and non-positive inputs, overridden at the end) are clamped to 2^-126.
  // The clamp is done on the bits (positive floats order like their integers): GCC does
  // not vectorize this loop with std::fmax or a float compare feeding the bit tricks.
  int32_t clamped = std::bit_cast<int32_t>(v);
  clamped = clamped > 0x00800000 ? clamped : 0x00800000;
  const float mant = std::bit_cast<float>((clamped & ~0x7f800000) | 0x3f000000);
  const int32_t biased = clamped >> 23;
  const bool below = mant < 0.707106781186547524f;
  float e = (1.0f + float(biased - 0x7f)) - (below ? 1.0f : 0.0f);
  const float t = (mant - 1.0f) + (below ? mant : 0.0f);
  const float t2 = t * t, t3 = t2 * t;
  float y = std::fma(t, 7.0376836292E-2f, -1.1514610310E-1f);
  float y1 = std::fma(t, -1.2420140846E-1f, +1.4249322787E-1f);
  float y2 = std::fma(t, +2.0000714765E-1f, -2.4999993993E-1f);
  y = std::fma(y, t, 1.1676998740E-1f);
  y1 = std::fma(y1, t, -1.6668057665E-1f);
  y2 = std::fma(y2, t, +3.3333331174E-1f);
  y = std::fma(y, t3, y1);
  y = std::fma(y, t3, y2);
  y = std::fma(y, t3, -2.12194440e-4f * e);  // (y * t3) + q1 * e, the product fused
  float r = std::fma(-0.5f, t2, t) + y;
  r = std::fma(0.693359375f, e, r);
  r = ((v < 0.0f) | (v != v)) ? NAN : r;
  r = v == 0.0f ? -INFINITY : r;
  return v == INFINITY ? INFINITY : r;
}

// Cephes' log1p rational, x + (-x^2/2 + x^3 P(x)/Q(x)), polynomials in Horner form with
// fused steps starting from 0 (as XLA's EvaluatePolynomial).
template <class T>
[[gnu::always_inline]] inline T log1p_rational(T x) {
  const T num[7] = {T(4.5270000862445199635215E-5), T(4.9854102823193375972212E-1),
                    T(6.5787325942061044846969E0),  T(2.9911919328553073277375E1),
                    T(6.0949667980987787057556E1),  T(5.7112963590585538103336E1),
                    T(2.0039553499201281259648E1)};
  const T den[7] = {T(1.), T(1.5062909083469192043167E1), T(8.3047565967967209469434E1),
                    T(2.2176239823732856465394E2), T(3.0909872225312059774938E2),
                    T(2.1642788614495947685003E2), T(6.0118660497603843919306E1)};
  T n = T(0), d = T(0);
#pragma GCC unroll 7
  for (int i = 0; i < 7; ++i) {
    n = std::fma(n, x, num[i]);
    d = std::fma(d, x, den[i]);
  }
  const T x2 = x * x;
  return x + std::fma(T(-0.5), x2, (x * x2) * (n / d));
}

[[gnu::always_inline]] inline float log1p_f32(float x) {
  const float small = log1p_rational(x);
  const float large = log_f32(x + 1.0f);
  return std::fabs(x) < 0.41421356237309504880f ? small : large;
}

// libm's scalar log, kept out of line so that a `#pragma omp simd` caller does not swap in
// libmvec's vector log (a different rounding); XLA calls the scalar one for float64.
[[gnu::noinline]] inline double libm_log(double x) { return std::log(x); }

inline double log1p_f64(double x) {
  const bool small = x >= -0.29289321881345247560 && x <= 0.41421356237309504880;
  return small ? log1p_rational(x) : libm_log(x + 1.0);
}

}  // namespace xla_detail

// XLA's float32 erf_inv (Giles, "Approximating the erfinv function", GPU Computing Gems).
[[gnu::always_inline]] inline float erf_inv(float x) {
  const float lo[9] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                       -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                       -0.00417768164f,  0.246640727f,    1.50140941f};
  const float hi[9] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                       -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                       0.00943887047f,   1.00167406f,     2.83297682f};
  const float w = -xla_detail::log1p_f32(x * -x);
  const bool lt = w < 5.0f;
  // std::sqrt keeps a libm call for errno on negative input (a branch per element); the SSE
  // instruction is the same correctly rounded sqrt without it. A loop over this function
  // does not vectorize (GCC does not vectorize the scalar sqrt intrinsic, nor std::sqrt
  // without -fno-math-errno): loops use erf_inv_block below, which gives the same bits.
#if defined(__SSE__)
  const float root = _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(w)));
#else
  const float root = std::sqrt(w);
#endif
  const float u = lt ? w - 2.5f : root - 3.0f;
  float p = lt ? lo[0] : hi[0];
#pragma GCC unroll 8
  for (int i = 1; i < 9; ++i) p = std::fma(p, u, lt ? lo[i] : hi[i]);
  // |x| > 1: log1p of a value below -1 is NaN, and NaN w flows through root and p.
  return std::fabs(x) == 1.0f ? x * INFINITY : p * x;
}

// ---- erf_inv(float) on whole vectors ----
// The scalar erf_inv above does not vectorize (its sqrt), so the kernels run this copy:
// the same operations, lane by lane, in the same order, with fused multiply-adds exactly
// where the scalar one has std::fma (written with the FMA instruction; the plain products
// and sums are not contracted, -ffp-contract=off), and the sqrt instruction. Every
// operation is a correctly rounded IEEE one, so each lane gets the scalar function's bits
// (tests/random/erf_inv_exact_test.cpp sweeps the float32 range; NaN payloads may differ).
// AVX-512: 16 lanes; AVX2 + FMA (x86-64-v3): 8 lanes; otherwise erf_inv_block runs the
// scalar function. Jit-generated code does not inline erf_inv: it calls the eager kernel
// (ops/unary.cpp's emit rule returns ""), so eager and jit share this code.
#if defined(__AVX512F__)
#define JX_ERF_INV_LANES 16
#elif defined(__AVX2__) && defined(__FMA__)
#define JX_ERF_INV_LANES 8
#else
#define JX_ERF_INV_LANES 0
#endif

namespace simd {

inline constexpr int kErfInvLanes = JX_ERF_INV_LANES;

#if JX_ERF_INV_LANES > 0
using f32v = float __attribute__((vector_size(4 * JX_ERF_INV_LANES)));
using i32v = int __attribute__((vector_size(4 * JX_ERF_INV_LANES)));

[[gnu::always_inline]] inline f32v splat(float c) {
#if JX_ERF_INV_LANES == 16
  return (f32v)_mm512_set1_ps(c);
#else
  return (f32v)_mm256_set1_ps(c);
#endif
}
[[gnu::always_inline]] inline i32v splat_i(int c) {
#if JX_ERF_INV_LANES == 16
  return (i32v)_mm512_set1_epi32(c);
#else
  return (i32v)_mm256_set1_epi32(c);
#endif
}
// a * b + c rounded once (std::fma).
[[gnu::always_inline]] inline f32v fma(f32v a, f32v b, f32v c) {
#if JX_ERF_INV_LANES == 16
  return (f32v)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#else
  return (f32v)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#endif
}
[[gnu::always_inline]] inline f32v fma(f32v a, float b, float c) { return fma(a, splat(b), splat(c)); }
[[gnu::always_inline]] inline f32v sqrt(f32v a) {
#if JX_ERF_INV_LANES == 16
  // (maskz with a full mask: _mm512_sqrt_ps trips GCC 12's -Wmaybe-uninitialized.)
  return (f32v)_mm512_maskz_sqrt_ps(__mmask16(0xffff), (__m512)a);
#else
  return (f32v)_mm256_sqrt_ps((__m256)a);
#endif
}
// Whether every lane of a comparison mask is true.
[[gnu::always_inline]] inline bool all(i32v m) {
#if JX_ERF_INV_LANES == 16
  return _mm512_test_epi32_mask((__m512i)m, (__m512i)m) == 0xffff;
#else
  return _mm256_movemask_ps((__m256)m) == 0xff;
#endif
}
// Lane-wise m ? a : b for a comparison mask m.
[[gnu::always_inline]] inline f32v select(i32v m, f32v a, f32v b) { return m ? a : b; }
[[gnu::always_inline]] inline f32v load(const float* p) {
  f32v v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(float* p, f32v v) { __builtin_memcpy(p, &v, sizeof v); }

// xla_detail::log_f32, lane by lane.
[[gnu::always_inline]] inline f32v log_f32(f32v v) {
  i32v clamped = (i32v)v;
  clamped = clamped > 0x00800000 ? clamped : splat_i(0x00800000);
  const f32v mant = (f32v)((clamped & ~0x7f800000) | 0x3f000000);
  const i32v biased = clamped >> 23;
  const i32v below = mant < 0.707106781186547524f;
  const f32v e = (1.0f + __builtin_convertvector(biased - 0x7f, f32v)) -
                 select(below, splat(1.0f), splat(0.0f));
  const f32v t = (mant - 1.0f) + select(below, mant, splat(0.0f));
  const f32v t2 = t * t, t3 = t2 * t;
  f32v y = fma(t, 7.0376836292E-2f, -1.1514610310E-1f);
  f32v y1 = fma(t, -1.2420140846E-1f, +1.4249322787E-1f);
  f32v y2 = fma(t, +2.0000714765E-1f, -2.4999993993E-1f);
  y = fma(y, t, splat(1.1676998740E-1f));
  y1 = fma(y1, t, splat(-1.6668057665E-1f));
  y2 = fma(y2, t, splat(+3.3333331174E-1f));
  y = fma(y, t3, y1);
  y = fma(y, t3, y2);
  y = fma(y, t3, -2.12194440e-4f * e);
  f32v r = fma(splat(-0.5f), t2, t) + y;
  r = fma(splat(0.693359375f), e, r);
  r = select((v < 0.0f) | (v != v), splat(NAN), r);
  r = select(v == 0.0f, splat(-INFINITY), r);
  return select(v == INFINITY, splat(INFINITY), r);
}

// xla_detail::log1p_rational<float>, lane by lane.
[[gnu::always_inline]] inline f32v log1p_rational(f32v x) {
  const float num[7] = {4.5270000862445199635215E-5f, 4.9854102823193375972212E-1f,
                        6.5787325942061044846969E0f,  2.9911919328553073277375E1f,
                        6.0949667980987787057556E1f,  5.7112963590585538103336E1f,
                        2.0039553499201281259648E1f};
  const float den[7] = {1.f, 1.5062909083469192043167E1f, 8.3047565967967209469434E1f,
                        2.2176239823732856465394E2f, 3.0909872225312059774938E2f,
                        2.1642788614495947685003E2f, 6.0118660497603843919306E1f};
  f32v n = splat(0.0f), d = splat(0.0f);
#pragma GCC unroll 7
  for (int i = 0; i < 7; ++i) {
    n = fma(n, x, splat(num[i]));
    d = fma(d, x, splat(den[i]));
  }
  const f32v x2 = x * x;
  return x + fma(splat(-0.5f), x2, (x * x2) * (n / d));
}

[[gnu::always_inline]] inline f32v log1p_f32(f32v x) {
  const f32v small = log1p_rational(x);
  const f32v large = log_f32(x + 1.0f);
  const f32v ax = (f32v)((i32v)x & 0x7fffffff);
  return select(ax < 0.41421356237309504880f, small, large);
}

// vm::erf_inv(float), lane by lane.
[[gnu::always_inline]] inline f32v erf_inv(f32v x) {
  const float lo[9] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                       -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                       -0.00417768164f,  0.246640727f,    1.50140941f};
  const float hi[9] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                       -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                       0.00943887047f,   1.00167406f,     2.83297682f};
  const f32v w = -log1p_f32(x * -x);
  const i32v lt = w < 5.0f;
  f32v p;
  if (all(lt)) {
    // Every lane in the w < 5 range (|x| < 0.9966; 95% of 16-lane vectors of uniforms):
    // one polynomial, no root.
    const f32v u = w - 2.5f;
    p = splat(lo[0]);
#pragma GCC unroll 8
    for (int i = 1; i < 9; ++i) p = fma(p, u, splat(lo[i]));
  } else {
    // Both ranges (and NaN, which is not < 5), lane by lane. The root of a w < 5 lane is
    // computed and discarded: the instruction does not trap, and w is never negative.
    const f32v u = select(lt, w - 2.5f, sqrt(w) - 3.0f);
    p = select(lt, splat(lo[0]), splat(hi[0]));
#pragma GCC unroll 8
    for (int i = 1; i < 9; ++i) p = fma(p, u, select(lt, splat(lo[i]), splat(hi[i])));
  }
  const f32v ax = (f32v)((i32v)x & 0x7fffffff);
  return select(ax == 1.0f, x * INFINITY, p * x);
}
#endif  // JX_ERF_INV_LANES > 0

}  // namespace simd

// o[i] = erf_inv(x[i]) (float32) for i < n, vectorized; bit for bit the scalar function.
// x and o may be the same array.
[[gnu::always_inline]] inline void erf_inv_block(const float* x, float* o, int64_t n) {
#if JX_ERF_INV_LANES > 0
  constexpr int64_t W = simd::kErfInvLanes;
  int64_t i = 0;
  for (; i + W <= n; i += W) simd::store(o + i, simd::erf_inv(simd::load(x + i)));
  if (i < n) {  // the rest through one padded vector (the scalar function is ~8x slower)
    float pad[W] = {};
    __builtin_memcpy(pad, x + i, size_t(n - i) * 4);
    simd::store(pad, simd::erf_inv(simd::load(pad)));
    __builtin_memcpy(o + i, pad, size_t(n - i) * 4);
  }
#else
  for (int64_t i = 0; i < n; ++i) o[i] = erf_inv(x[i]);
#endif
}

// XLA's float64 erf_inv (Giles' double-precision version: three ranges of w).
inline double erf_inv(double x) {
  static constexpr double a[23] = {  // w < 6.25
      -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
      1.115787767802518096e-17,   -1.333171662854620906e-16, 2.0972767875968561637e-17,
      6.6376381343583238325e-15,  -4.0545662729752068639e-14, -8.1519341976054721522e-14,
      2.6335093153082322977e-12,  -1.2975133253453532498e-11, -5.4154120542946279317e-11,
      1.051212273321532285e-09,   -4.1126339803469836976e-09, -2.9070369957882005086e-08,
      4.2347877827932403518e-07,  -1.3654692000834678645e-06, -1.3882523362786468719e-05,
      0.0001867342080340571352,   -0.00074070253416626697512, -0.0060336708714301490533,
      0.24015818242558961693,     1.6536545626831027356};
  static constexpr double b[19] = {  // 6.25 <= w < 16
      2.2137376921775787049e-09,  9.0756561938885390979e-08,  -2.7517406297064545428e-07,
      1.8239629214389227755e-08,  1.5027403968909827627e-06,  -4.013867526981545969e-06,
      2.9234449089955446044e-06,  1.2475304481671778723e-05,  -4.7318229009055733981e-05,
      6.8284851459573175448e-05,  2.4031110387097893999e-05,  -0.0003550375203628474796,
      0.00095328937973738049703,  -0.0016882755560235047313, 0.0024914420961078508066,
      -0.0037512085075692412107,  0.005370914553590063617,    1.0052589676941592334,
      3.0838856104922207635};
  static constexpr double c[17] = {  // w >= 16
      -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
      -3.7894654401267369937e-09, 7.6157012080783393804e-09,  -1.4960026627149240478e-08,
      2.9147953450901080826e-08,  -6.7711997758452339498e-08, 2.2900482228026654717e-07,
      -9.9298272942317002539e-07, 4.5260625972231537039e-06,  -1.9681778105531670567e-05,
      7.5995277030017761139e-05,  -0.00021503011930044477347, -0.00013871931833623122026,
      1.0103004648645343977,      4.8499064014085844221};
  const double w = -xla_detail::log1p_f64(x * -x);
  const bool lt625 = w < 6.25, lt16 = w < 16.0;
  const double u = lt625 ? w - 3.125 : std::sqrt(w) - (lt16 ? 3.25 : 5.0);
  // Each range runs its own coefficient count: 23, 19 or 17 steps.
  const double* coef = lt625 ? a : lt16 ? b : c;
  const int steps = lt625 ? 23 : lt16 ? 19 : 17;
  double p = coef[0];
  for (int i = 1; i < steps; ++i) p = std::fma(p, u, coef[i]);
  return std::fabs(x) == 1.0 ? x * INFINITY : p * x;
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
