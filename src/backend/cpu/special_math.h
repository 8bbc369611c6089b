// Scalar special functions behind the `special` primitives (backend/cpu/special.cpp):
// igamma, igammac, igamma_grad_a, regularized_incomplete_beta, zeta, polygamma,
// bessel_i0e and bessel_i1e.
//
// The algorithms are XLA's, as JAX lowers these primitives (jax/_src/lax/special.py and
// StableHLO's chlo decompositions): the igamma series and continued fraction with their
// a-derivatives, the modified Lentz continued fraction of betainc, the Euler-Maclaurin
// sum for zeta, polygamma from zeta and the Cephes Chebyshev series of i0e and i1e.
//
// Every dtype is evaluated in double and rounded once (XLA evaluates float32 in float32):
// the loops run per element, so double costs little, and it takes float32 from XLA's
// ~1e-3 relative error at large a (the prefactor a log x - lgamma(a) cancels) to a
// correctly rounded float32 nearly everywhere. Where jx departs from XLA's values it says
// so next to the code; docs/scipy.md lists the departures.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "backend/cpu/vmath.h"

namespace jx::cpu::special_math {

// The entry points are compiled once, never inlined: GCC fuses a * b + c into an FMA
// (-march=native) differently in each inlined copy, so an element's last bit would depend
// on which loop (threaded or not, kernel or reference) computed it.
#define JX_SPECIAL_ENTRY [[gnu::noinline]] inline

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kEps = std::numeric_limits<double>::epsilon();
// -log(DBL_MAX): below it exp() of the igamma prefactor underflows (XLA's `underflow`).
inline const double kMinLogAx = -std::log(std::numeric_limits<double>::max());

// log Gamma for the prefactors: glibc's lgamma_r (reentrant: lgamma itself writes the
// global signgam, which the kernel threads would race on), not XLA's Lanczos lgamma
// (vm::lgamma). Measured against SciPy on a grid of a, x up to 1000: igammac's largest
// relative error is 2.7e-13 with lgamma_r and 1.3e-12 with the Lanczos form.
inline double log_gamma(double x) {
  int sign;
  return ::lgamma_r(x, &sign);
}

// ---- incomplete gamma (XLA's _igamma_series / _igammac_continued_fraction) ----

enum class Mode { Value, Derivative };  // P or Q itself, or its derivative in a

// Series for P(a, x), used for x < 1 or x <= a. Terms c_n = x^n / ((a+1)...(a+n)); in
// Derivative mode their a-derivatives are summed alongside. `enabled` false: no term is
// added (XLA's masked while loop), the caller replaces that value.
template <Mode M>
inline double igamma_series(double ax, double x, double a, bool enabled) {
  double r = a, c = 1, ans = 1, dc_da = 0, dans_da = 0;
  // XLA loops until every element converges; a cap keeps a (huge a, x ~ a) element from
  // running for ever. The series needs about sqrt(74 a) terms at x = a, so 1e6 terms
  // cover a up to 1e10, where double's prefactor has lost 1e-6 anyway.
  for (int64_t it = 0; enabled && it < 1000000; ++it) {
    r += 1;
    dc_da = dc_da * (x / r) - (c * x) / (r * r);
    dans_da += dc_da;
    c *= x / r;
    ans += c;
    enabled = M == Mode::Value ? c / ans > kEps : std::fabs(dc_da / dans_da) > kEps;
  }
  if constexpr (M == Mode::Value) {
    return ans * ax / a;
  } else {
    // d/da log(ax / a) = log x - digamma(a + 1).
    const double dlogax_da = std::log(x) - vm::digamma(a + 1);
    return ax * (ans * dlogax_da + dans_da) / a;
  }
}

// Continued fraction for Q(a, x) (Cephes' igamc), used for x >= 1 and x > a; at most
// 2000 steps, as XLA. In Derivative mode the convergents' a-derivatives ride along.
template <Mode M>
inline double igammac_continued_fraction(double ax, double x, double a, bool enabled) {
  double y = 1 - a, z = x + y + 1, c = 0;
  double pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x;
  double ans = pkm1 / qkm1;
  double dpkm2 = 0, dqkm2 = 0, dpkm1 = 0, dqkm1 = -x;
  double dans = (dpkm1 - ans * dqkm1) / qkm1;
  while (enabled && c < 2000) {
    c += 1;
    y += 1;
    z += 2;
    const double yc = y * c;
    const double pk = pkm1 * z - pkm2 * yc;
    const double qk = qkm1 * z - qkm2 * yc;
    double t = 1;
    if (qk != 0) {
      const double r = pk / qk;
      t = std::fabs((ans - r) / r);
      ans = r;
    }
    const double dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c;
    const double dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c;
    double grad_change = 1;
    if (qk != 0) {
      const double next = (dpk - ans * dqk) / qk;
      grad_change = std::fabs(next - dans);
      dans = next;
    }
    pkm2 = pkm1;
    pkm1 = pk;
    qkm2 = qkm1;
    qkm1 = qk;
    dpkm2 = dpkm1;
    dqkm2 = dqkm1;
    dpkm1 = dpk;
    dqkm1 = dqk;
    if (std::fabs(pk) > 1 / kEps) {  // keep the convergents' numerators and denominators finite
      pkm2 *= kEps;
      pkm1 *= kEps;
      qkm2 *= kEps;
      qkm1 *= kEps;
      dpkm2 *= kEps;
      dqkm2 *= kEps;
      dpkm1 *= kEps;
      dqkm1 *= kEps;
    }
    enabled = M == Mode::Value ? t > kEps : grad_change > kEps;
  }
  if constexpr (M == Mode::Value) {
    return ans * ax;
  } else {
    const double dlogax_da = std::log(x) - vm::digamma(a);
    return ax * (ans * dlogax_da + dans);
  }
}

// x^a e^-x / Gamma(a), the prefactor of every incomplete-gamma evaluation, and whether it
// is large enough to be worth the series (else the result is 0 or 1 at once).
struct GammaPrefactor {
  double ax;
  bool enabled;
};
inline GammaPrefactor gamma_prefactor(double a, double x) {
  const double log_ax = a * std::log(x) - x - log_gamma(a);
  return {std::exp(log_ax), !(log_ax < kMinLogAx)};
}

// P(a, x) = gamma(a, x) / Gamma(a). NaN for x < 0, a < 0, a = x = 0 and NaN arguments.
JX_SPECIAL_ENTRY double igamma(double a, double x) {
  if (std::isnan(a) || std::isnan(x) || x < 0 || a < 0 || (a == 0 && x == 0)) return kNaN;
  if (x == 0) return 0;
  if (x == kInf) return a == kInf ? kNaN : 1;  // XLA: 1 even for a = inf (SciPy, jx: NaN)
  // The limits a -> 0 (a point mass at 0) and a -> inf: XLA's series gives 0 / 0 for
  // a = 0 < x < 1 and inf - inf for a = inf < x; jx returns SciPy's 1 and 0.
  if (a == 0) return 1;
  if (a == kInf) return 0;
  const bool use_cf = x >= 1 && x > a;
  const auto [ax, enabled] = gamma_prefactor(a, x);
  return use_cf ? 1 - igammac_continued_fraction<Mode::Value>(ax, x, a, enabled)
                : igamma_series<Mode::Value>(ax, x, a, enabled);
}

// Q(a, x) = 1 - P(a, x), computed directly where it is small (x >= 1 and x >= a).
JX_SPECIAL_ENTRY double igammac(double a, double x) {
  if (std::isnan(a) || std::isnan(x) || x < 0 || a < 0 || (a == 0 && x == 0) ||
      (a == kInf && x == kInf))
    return kNaN;
  if (x == kInf || a == 0) return 0;
  if (a == kInf) return 1;
  const bool use_series = x < 1 || x < a;
  const auto [ax, enabled] = gamma_prefactor(a, x);
  return use_series ? 1 - igamma_series<Mode::Value>(ax, x, a, enabled)
                    : igammac_continued_fraction<Mode::Value>(ax, x, a, enabled);
}

// dP(a, x)/da. NaN for x < 0, a <= 0 and NaN arguments; 0 at x = 0 and x = inf (XLA: NaN
// at x = inf, from inf - inf in the prefactor).
JX_SPECIAL_ENTRY double igamma_grad_a(double a, double x) {
  if (std::isnan(a) || std::isnan(x) || x < 0 || a <= 0) return kNaN;
  if (x == 0 || x == kInf) return 0;
  const bool use_cf = x > 1 && x > a;
  const auto [ax, enabled] = gamma_prefactor(a, x);
  return use_cf ? -igammac_continued_fraction<Mode::Derivative>(ax, x, a, enabled)
                : igamma_series<Mode::Derivative>(ax, x, a, enabled);
}

// ---- regularized incomplete beta (XLA's regularized_incomplete_beta_impl) ----

// The continued fraction of DLMF 8.17.22 by the modified Lentz method: at most 600 steps,
// converged when a step changes the value by less than eps / 2 (XLA's float64 settings).
inline double betainc_continued_fraction(double a, double b, double x) {
  const double small = kEps / 2, threshold = kEps / 2;
  double c = small, d = 0, h = small;  // the 0th partial denominator is 0: Lentz's tiny start
  for (int it = 1; it < 600; ++it) {
    double num;
    if (it == 1) {
      num = 1;
    } else {
      const double m = double((it - 1) / 2);
      if (it % 2 == 0) {
        // m == 0 has its own form: it avoids 0 * inf when a is tiny (XLA's FTZ note).
        num = m == 0 ? -(a + b) * x / (a + 1)
                     : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
      } else {
        num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
      }
    }
    c = 1 + num / c;
    if (std::fabs(c) < small) c = small;
    d = 1 + num * d;
    if (std::fabs(d) < small) d = small;
    d = 1 / d;
    const double delta = c * d;
    h *= delta;
    if (!(std::fabs(delta - 1) >= threshold)) break;  // XLA also stops on NaN
  }
  return h;
}

// I_x(a, b). NaN outside a, b >= 0, 0 <= x <= 1, for a = b = 0 and NaN arguments. a = 0
// (or b = inf) is a point mass at 0, b = 0 (or a = inf) one at 1.
JX_SPECIAL_ENTRY double betainc(double a, double b, double x) {
  const bool a_zero = a == 0 || b == kInf, b_zero = b == 0 || a == kInf;
  if (std::isnan(a) || std::isnan(b) || std::isnan(x) || a < 0 || b < 0 || x < 0 || x > 1 ||
      (a_zero && b_zero))
    return kNaN;
  if ((b_zero && x != 1) || (a_zero && x == 0)) return 0;
  if ((a_zero && x != 0) || (b_zero && x == 1)) return 1;
  // The fraction converges fast for x < (a + 1) / (a + b + 2); otherwise use
  // I_x(a, b) = 1 - I_(1-x)(b, a) (DLMF 8.17.4).
  const bool direct = x < (a + 1) / (a + b + 2);
  if (!direct) {
    std::swap(a, b);
    x = 1 - x;
  }
  const double cf = betainc_continued_fraction(a, b, x);
  // x^a (1 - x)^b / (a B(a, b)); for a below 2 * DBL_MIN, a Gamma(a) -> 1 is used.
  const double lbeta_small_a = log_gamma(b) - log_gamma(a + b);
  const double factor =
      a < 2 * std::numeric_limits<double>::min()
          ? std::exp(std::log1p(-x) * b - lbeta_small_a)
          : std::exp(std::log(x) * a + std::log1p(-x) * b - (log_gamma(a) + lbeta_small_a)) / a;
  const double r = cf * factor;
  return direct ? r : 1 - r;
}

// ---- Hurwitz zeta (XLA's Zeta: Johansson 2015, formula (5)) ----

// (2j)! / B_2j for j = 12 down to 1 (Cephes' zeta.c table, reversed as XLA's Horner form).
inline constexpr double kZetaCoeffs[12] = {
    -7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15,
    1.1646782814350067249e14,  -2.950130727918164224e12, 7.47242496e10,
    -1.8924375803183791606e9,  47900160.0,               -1209600.0,
    30240.0,                   -720.0,                   12.0};

// zeta(x, q) = sum_k (q + k)^-x. NaN for x < 1, and for q <= 0 unless x is an integer;
// at the poles (integer q <= 0) +inf for even integer x, NaN otherwise (XLA's choice;
// SciPy: +inf). x = 1 gives +inf.
JX_SPECIAL_ENTRY double zeta(double x, double q) {
  if (x == 1) return kInf;
  if (x < 1) return kNaN;
  const bool x_int = x == std::floor(x);
  if (q <= 0) {
    if (!x_int) return kNaN;
    if (q == std::floor(q)) return std::fmod(x, 2) == 0 ? kInf : kNaN;
  }
  if (q == kInf) return 0;  // every term is 0 (XLA: 0 * inf in the tail, NaN)
  // The first 10 terms directly, then Euler-Maclaurin from q + 10 with 12 Bernoulli terms.
  // For q < -1, XLA's fixed ten terms leave q + 10 < 9 (negative below -10) where the
  // expansion no longer holds; jx sums on until the tail starts at 9 or more, as Cephes.
  double acc = q, power_sum = std::pow(q, -x);
  for (int i = 0; i < 9; ++i) {
    acc += 1;
    power_sum += std::pow(acc, -x);
  }
  if (acc + 1 < 9) {
    if (q < -1e6) return kNaN;  // a million terms: not summed
    while (acc + 1 < 9) {
      acc += 1;
      power_sum += std::pow(acc, -x);
    }
  }
  acc += 1;
  const double q_neg_power = std::pow(acc, -x);
  const double correction = q_neg_power * acc / (x - 1);
  const double inv_acc2 = 1 / (acc * acc);
  double horner = 0;
  for (int i = 0; i < 11; ++i) {
    const double product = (x + double(22 - 2 * i)) * (x + double(21 - 2 * i));
    horner = product * (inv_acc2 * (horner + 1 / kZetaCoeffs[i]));
  }
  const double tail = q_neg_power * (0.5 + (x / acc) * (1 / kZetaCoeffs[11] + horner));
  // The sum alone where the tail cannot change it (XLA's test against the smallest
  // subnormal: in practice where the tail term underflows to 0).
  if (std::fabs(q_neg_power) < std::fabs(power_sum) * std::numeric_limits<double>::denorm_min())
    return power_sum;
  return power_sum + correction + tail;
}

// psi^(n)(x): digamma for n = 0, (-1)^(n+1) n! zeta(n + 1, x) above; NaN unless n is a
// natural number.
JX_SPECIAL_ENTRY double polygamma(double n, double x) {
  if (!(n == std::floor(n)) || n < 0) return kNaN;
  if (n == 0) return vm::digamma(x);
  const double sign = 2 * std::fmod(n, 2) - 1;
  // n! from tgamma (exact up to 22!, XLA's exp(lgamma(n + 1)) loses ~eps * log(n!)).
  return sign * std::tgamma(n + 1) * zeta(n + 1, x);
}

// ---- exponentially scaled modified Bessel functions (Cephes i0e, i1e; XLA's form) ----

// Clenshaw's recurrence for a Chebyshev series (Cephes' chbevl).
template <int N>
inline double chbevl(double x, const double (&c)[N]) {
  double b0 = 0, b1 = 0, b2 = 0;
  for (int i = 0; i < N; ++i) {
    b2 = b1;
    b1 = b0;
    b0 = x * b1 - b2 + c[i];
  }
  return 0.5 * (b0 - b2);
}

// exp(-|x|) I0(x): in x/2 - 2 on [0, 8], in 32/|x| - 2 (over sqrt|x|) above.
JX_SPECIAL_ENTRY double bessel_i0e(double x) {
  static constexpr double a[30] = {
      -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
      1.71539128555513303061E-15,  -1.16853328779934516808E-14, 7.67618549860493561688E-14,
      -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
      9.67580903537323691224E-11,  -5.18979560163526290666E-10, 2.65982372468238665035E-9,
      -1.30002500998624804212E-8,  6.04699502254191894932E-8,  -2.67079385394061173391E-7,
      1.11738753912010371815E-6,   -4.41673835845875056359E-6, 1.64484480707288970893E-5,
      -5.75419501008210370398E-5,  1.88502885095841655729E-4,  -5.76375574538582365885E-4,
      1.63947561694133579842E-3,   -4.32430999505057594430E-3, 1.05464603945949983183E-2,
      -2.37374148058994688156E-2,  4.93052842396707084878E-2,  -9.49010970480476444210E-2,
      1.71620901522208775349E-1,   -3.04682672343198398683E-1, 6.76795274409476084995E-1};
  static constexpr double b[25] = {
      -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
      3.46122286769746109310E-17,  -2.82762398051658348494E-16, -3.42548561967721913462E-16,
      1.77256013305652638360E-15,  3.81168066935262242075E-15,  -9.55484669882830764870E-15,
      -4.15056934728722208663E-14, 1.54008621752140982691E-14,  3.85277838274214270114E-13,
      7.18012445138366623367E-13,  -1.79417853150680611778E-12, -1.32158118404477131188E-11,
      -3.14991652796324136454E-11, 1.18891471078464383424E-11,  4.94060238822496958910E-10,
      3.39623202570838634515E-9,   2.26666899049817806459E-8,   2.04891858946906374183E-7,
      2.89137052083475648297E-6,   6.88975834691682398426E-5,   3.36911647825569408990E-3,
      8.04490411014108831608E-1};
  const double z = std::fabs(x);
  return z <= 8 ? chbevl(0.5 * z - 2, a) : chbevl(32 / z - 2, b) / std::sqrt(z);
}

// exp(-|x|) I1(x), odd in x.
JX_SPECIAL_ENTRY double bessel_i1e(double x) {
  static constexpr double a[29] = {
      2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
      -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
      3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
      -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
      9.38153738649577178388E-9,  -4.44505912879632808065E-8, 2.00329475355213526229E-7,
      -8.56872026469545474066E-7, 3.47025130813767847674E-6,  -1.32731636560394358279E-5,
      4.78156510755005422638E-5,  -1.61760815825896745588E-4, 5.12285956168575772895E-4,
      -1.51357245063125314899E-3, 4.15642294431288815669E-3,  -1.05640848946261981558E-2,
      2.47264490306265168283E-2,  -5.29459812080949914269E-2, 1.02643658689847095384E-1,
      -1.76416518357834055153E-1, 2.52587186443633654823E-1};
  static constexpr double b[25] = {
      7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17,
      -3.20952592199342395980E-17, 2.96262899764595013876E-16,  3.30820231092092828324E-16,
      -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
      4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
      -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,
      3.25260358301548823856E-11,  -1.89749581235054123450E-11, -5.58974346219658380687E-10,
      -3.83538038596423702205E-9,  -2.63146884688951950684E-8,  -2.51223623787020892529E-7,
      -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
      7.78576235018280120474E-1};
  const double z = std::fabs(x);
  const double r = z <= 8 ? z * chbevl(0.5 * z - 2, a) : chbevl(32 / z - 2, b) / std::sqrt(z);
  // sign(x) * r, as XLA: 0 at 0 and NaN for NaN.
  return x > 0 ? r : x < 0 ? -r : x;
}

}  // namespace jx::cpu::special_math

#undef JX_SPECIAL_ENTRY
