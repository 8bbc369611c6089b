// Scalar complex arithmetic that the eager kernels (through complex_math.h) and the code jit
// generates (pasted by compiler/codegen.cpp into namespace jx_cx) both run, so that compiled
// and eager complex results agree bit for bit. This file includes nothing and opens no
// namespace: its includer provides <cmath>, <complex>, <cstdint> and <type_traits> and the
// namespace. No contraction-sensitive expression may appear here: jx is compiled with GCC's
// default -ffp-contract=fast, generated code with -ffp-contract=off, so every product that
// meets an addition goes through prod().
//
// NumPy is the model: multiplication is the plain formula (as NumPy's and XLA's, so that an
// infinite operand gives NaN parts where C99 Annex G would recover an infinity), division
// is Smith's algorithm (NumPy's), pow is NumPy's npy_cpow, and the transcendental functions
// are glibc's c* functions (what std:: calls and NumPy uses), which carry C99 Annex G's
// branch cuts and special values.

// A product rounded on its own. GCC contracts a*b + c into an FMA (-ffp-contract=fast, its
// default), and in a*b - c*d it may fuse either product, differently in vectorized and
// scalar code: an element's bits would depend on its position, and x/x or z*conj(z) would
// get a tiny nonzero imaginary part. fma(a, b, -0) is round(a * b) exactly (signed zeros
// included) and is never fused further; without FMA hardware nothing is contracted.
template <class R>
inline R prod(R a, R b) {
#ifdef __FMA__
  if constexpr (!std::is_same_v<R, long double>) return std::fma(a, b, R(-0.0));
#endif
  return a * b;
}

// |z|. For float, glibc's hypotf written out (glibc 2.35+ computes it this way: the
// squares are exact in double, so the one rounding of their sum and the square root's
// give its result), which lets a loop over it vectorize where a call to hypotf does not:
// equal to glibc 2.36's hypotf bit for bit, NaN payloads included, on 200M random bit
// patterns and every pair of special values; 2x faster in a loop. double keeps hypot.
inline bool is_signaling_nan(float x) {
  uint32_t u;
  __builtin_memcpy(&u, &x, sizeof u);
  return (u & 0x7fffffffu) > 0x7f800000u && (u & 0x00400000u) == 0;
}
template <class R>
inline R abs(std::complex<R> z) {
  const R x = z.real(), y = z.imag();
  if constexpr (std::is_same_v<R, float>) {
    if (!std::isfinite(x) || !std::isfinite(y)) {
      if ((std::isinf(x) || std::isinf(y)) && !is_signaling_nan(x) && !is_signaling_nan(y)) return R(INFINITY);
      return x + y;
    }
    const double dx = x, dy = y;
    return float(std::sqrt(prod(dx, dx) + prod(dy, dy)));
  } else {
    return std::hypot(x, y);
  }
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
    if (n == 2) return mul(a, a);
    if (n == 3) return mul(a, mul(a, a));
    if (n > -100 && n < 100) {
      if (n < 0) n = -n;
      std::complex<R> acc{R(1), R(0)}, p = a;
      for (int64_t mask = 1;; mask <<= 1) {
        if (n & mask) acc = mul(acc, p);
        if (n < (mask << 1)) break;
        p = mul(p, p);
      }
      return br < 0 ? div(std::complex<R>{R(1), R(0)}, acc) : acc;
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
      acc = first ? x : mul(acc, x);
      first = false;
    }
    e >>= 1;
    if (e > 0) x = mul(x, x);
  }
  return recip ? div(std::complex<R>{R(1), R(0)}, acc) : acc;
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
  const W t = prod(wx, W(2) + wx) + prod(wy, wy);
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
  return {R(prod(std::expm1(wx), std::cos(wy)) - prod(W(2) * s, s)), R(std::exp(wx) * std::sin(wy))};
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

// lax.max / lax.min as JAX lowers them for complex (mlir.py's _minmax_hlo): x is kept when
// it is greater (less) than y in the lexicographic order of (real, imag), y otherwise. Every
// comparison with a NaN part is false, so such a pair gives y: unlike NumPy's maximum, a NaN
// does not propagate, and max(x, y) may differ from max(y, x). Ties give y (signed zeros).
template <class R>
inline std::complex<R> lex_max(std::complex<R> x, std::complex<R> y) {
  const bool pick_x = x.real() == y.real() ? x.imag() > y.imag() : x.real() > y.real();
  return pick_x ? x : y;
}

template <class R>
inline std::complex<R> lex_min(std::complex<R> x, std::complex<R> y) {
  const bool pick_x = x.real() == y.real() ? x.imag() < y.imag() : x.real() < y.real();
  return pick_x ? x : y;
}
