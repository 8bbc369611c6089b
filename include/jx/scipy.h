// jx::scipy: jax.scipy.special, jax.scipy.stats and jax.scipy.linalg, in part (docs/scipy.md).
// Every function is composed from jx::numpy / jx::lax / jx::nn, so grad, jit and vmap go
// through it; the formulas, custom derivatives and edge values are JAX's
// (jax/_src/scipy/special.py, jax/_src/ops/special.py, jax/_src/scipy/stats/*.py).
// Not included by jx/jx.h:
//
//   #include "jx/scipy.h"
//   namespace jsp = jx::scipy;
//   Array lp = jsp::stats::norm::logpdf(x, 0.0, 2.0);
//   Array l = jsp::special::logsumexp(logits, -1);
//   auto [l2, sign] = jsp::special::logsumexp_with_sign(a, jx::none, b);
//
// Dtypes as jnp: integer and bool arguments become float32, weak C++ scalars keep the
// array's dtype, mixed arguments promote. ndtr, ndtri and log_ndtr take only float32 or
// float64 and throw DTypeError otherwise, as JAX's do. Arguments broadcast (NumPy rules);
// shapes that do not broadcast throw ShapeError naming the function.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "jx/array.h"

namespace jx::scipy {

using jx::Array;
using jx::Axes;

namespace special {

// log(sum(b * exp(a))) over `axis` (jx::none: all axes), computed around the max. With b,
// entries where b == 0 are left out, and a negative sum gives NaN; all -inf gives -inf.
// Throws ShapeError when b does not broadcast with a, IndexError for a bad axis.
Array logsumexp(const Array& a, Axes axis = none, const std::optional<Array>& b = std::nullopt,
                bool keepdims = false);
// JAX's logsumexp(..., return_sign=True): (log|sum(b * exp(a))|, sign of the sum), the
// sign -1, 0 or 1 (NaN for NaN sums) and not differentiated.
std::pair<Array, Array> logsumexp_with_sign(const Array& a, Axes axis = none,
                                            const std::optional<Array>& b = std::nullopt,
                                            bool keepdims = false);
// scipy.special.softmax / log_softmax: note the default axis is all axes, as in SciPy
// and jax.scipy (jx::nn's default is the last axis).
Array softmax(const Array& x, Axes axis = none);
Array log_softmax(const Array& x, Axes axis = none);

Array erf(const Array& x);
Array erfc(const Array& x);
Array erfinv(const Array& x);  // NaN outside [-1, 1], +-inf at +-1
// log|Gamma(x)|; +inf at 0 and the negative integers.
Array gammaln(const Array& x);
// Sign of Gamma(x): +-1, +-1 at +-0, NaN at the negative integers, -inf and NaN.
Array gammasgn(const Array& x);
// Gamma(x) = gammasgn(x) * exp(gammaln(x)).
Array gamma(const Array& x);
Array digamma(const Array& x);
// log|B(a, b)|, with SciPy's (cdflib's) correction when max(a, b) >= 8 so that it keeps
// its precision for large arguments.
Array betaln(const Array& a, const Array& b);
// B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), through betaln and the signs.
Array beta(const Array& a, const Array& b);
// n! as Gamma(n + 1) in floating point; 0 for n < 0 (exact=False only).
Array factorial(const Array& n);
// log of the multivariate gamma function Gamma_d(a); d is static. Throws ValueError for
// d < 0. Like JAX (unlike SciPy) it does not check a > (d - 1) / 2.
Array multigammaln(const Array& a, int64_t d);

// x * log(y), 0 where x == 0 (even for y == 0). Custom derivative as JAX's:
// d/dx = log(y), d/dy = x / y.
Array xlogy(const Array& x, const Array& y);
// x * log1p(y), 0 where x == 0.
Array xlog1py(const Array& x, const Array& y);
// -x log x; 0 at 0, -inf for x < 0.
Array entr(const Array& x);
// p log(p / q) for p, q > 0; 0 for p == 0, q >= 0; +inf otherwise.
Array rel_entr(const Array& p, const Array& q);
// rel_entr(p, q) - p + q.
Array kl_div(const Array& p, const Array& q);

// log(p / (1 - p)), custom derivative 1 / (p (1 - p)).
Array logit(const Array& x);
// 1 / (1 + exp(-x)) (lax.logistic).
Array expit(const Array& x);

// The standard normal CDF, from erf/erfc as JAX (accurate in both tails).
Array ndtr(const Array& x);
// Its inverse (Cephes' rational approximations): -inf for p <= 0 and +inf for p >= 1, as
// JAX (SciPy gives NaN outside [0, 1]).
Array ndtri(const Array& p);
// log(ndtr(x)), accurate in the far tails: an asymptotic series below -20 (float64) / -10
// (float32), -ndtr(-x) above 8 / 5. series_order in [0, 30] (ValueError otherwise).
// Custom derivative exp(norm_logpdf(x) - log_ndtr(x)), finite far into the tails.
Array log_ndtr(const Array& x, int series_order = 3);

// ---- on the special primitives of jx/lax/special.h (XLA's algorithms, docs/scipy.md) ----

// Regularized lower / upper incomplete gamma P(a, x), Q(a, x) = 1 - P: lax.igamma and
// lax.igammac. NaN for a < 0, x < 0 or a = x = 0. Differentiable in a and x.
Array gammainc(const Array& a, const Array& x);
Array gammaincc(const Array& a, const Array& x);
// Regularized incomplete beta I_x(a, b); NaN outside a, b >= 0, 0 <= x <= 1.
// Differentiable in x only, as JAX's (a tangent in a or b throws ValueError).
Array betainc(const Array& a, const Array& b, const Array& x);
// Hurwitz zeta(x, q) = sum_k (q + k)^-x (x > 1; NaN for x < 1). JAX requires q, so does
// jx. Differentiable in q: -x zeta(x + 1, q) (JAX: not differentiable).
Array zeta(const Array& x, const Array& q);
// psi^(n)(x), the n-th derivative of digamma. n must have an integer dtype (DTypeError
// otherwise, as JAX's assert); a negative n gives NaN. Differentiable in x.
Array polygamma(const Array& n, const Array& x);
// Modified Bessel functions of the first kind, orders 0 and 1: i0 = exp(|x|) i0e,
// i1 = exp(|x|) i1e (they overflow to inf beyond |x| ~ 713, as SciPy's). i0 has JAX's
// custom derivative i1.
Array i0e(const Array& x);
Array i0(const Array& x);
Array i1e(const Array& x);
Array i1(const Array& x);

}  // namespace special

namespace stats {

// loc and scale default to 0 and 1 (weak scalars: they keep x's dtype).
namespace norm {
Array logpdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
Array pdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
Array cdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
Array logcdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
Array sf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
Array logsf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
Array ppf(const Array& q, const Array& loc = 0.0, const Array& scale = 1.0);
Array isf(const Array& q, const Array& loc = 0.0, const Array& scale = 1.0);
}  // namespace norm

// k in {0, 1} (shifted by loc); -inf log-probability elsewhere.
namespace bernoulli {
Array logpmf(const Array& k, const Array& p, const Array& loc = 0.0);
Array pmf(const Array& k, const Array& p, const Array& loc = 0.0);
Array cdf(const Array& k, const Array& p);  // 0, 1 - p on [0, 1), 1; NaN for p outside [0, 1]
}  // namespace bernoulli

// -inf for k - loc < 0 or a non-integer k.
namespace poisson {
Array logpmf(const Array& k, const Array& mu, const Array& loc = 0.0);
Array pmf(const Array& k, const Array& mu, const Array& loc = 0.0);
// P(K <= k) = Q(floor(k - loc) + 1, mu); 0 for k < loc.
Array cdf(const Array& k, const Array& mu, const Array& loc = 0.0);
}  // namespace poisson

// Support [loc, loc + scale]; -inf outside.
namespace beta {
Array logpdf(const Array& x, const Array& a, const Array& b, const Array& loc = 0.0,
             const Array& scale = 1.0);
Array pdf(const Array& x, const Array& a, const Array& b, const Array& loc = 0.0,
          const Array& scale = 1.0);
// I_y(a, b) with y = (x - loc) / scale clamped to [0, 1]. Differentiable in x, loc, scale.
Array cdf(const Array& x, const Array& a, const Array& b, const Array& loc = 0.0,
          const Array& scale = 1.0);
}  // namespace beta

// Support [loc, inf); -inf below.
namespace gamma {
Array logpdf(const Array& x, const Array& a, const Array& loc = 0.0, const Array& scale = 1.0);
Array pdf(const Array& x, const Array& a, const Array& loc = 0.0, const Array& scale = 1.0);
// P(a, y) and Q(a, y), y = (x - loc) / scale clamped to [0, inf): 0 and 1 below loc.
Array cdf(const Array& x, const Array& a, const Array& loc = 0.0, const Array& scale = 1.0);
Array sf(const Array& x, const Array& a, const Array& loc = 0.0, const Array& scale = 1.0);
}  // namespace gamma

// Chi-squared with df degrees of freedom; support [loc, inf), -inf log-density below.
namespace chi2 {
Array logpdf(const Array& x, const Array& df, const Array& loc = 0.0, const Array& scale = 1.0);
Array pdf(const Array& x, const Array& df, const Array& loc = 0.0, const Array& scale = 1.0);
Array cdf(const Array& x, const Array& df, const Array& loc = 0.0, const Array& scale = 1.0);
Array sf(const Array& x, const Array& df, const Array& loc = 0.0, const Array& scale = 1.0);
}  // namespace chi2

// Student's t with df degrees of freedom.
namespace t {
Array logpdf(const Array& x, const Array& df, const Array& loc = 0.0, const Array& scale = 1.0);
Array pdf(const Array& x, const Array& df, const Array& loc = 0.0, const Array& scale = 1.0);
}  // namespace t

// The multivariate normal N(mean, cov), as JAX's: mean [..., n] (or a scalar: the 1-d
// case), cov [..., n, n] (or a scalar: cov * I). x [..., n]; batch dims of x, mean and
// cov broadcast, and the result has them. cov is factored by lax::linalg::cholesky (a
// matrix that is not positive definite gives NaN); differentiable in x, mean and cov.
// Throws ValueError when cov is neither a scalar nor [..., n, n].
namespace multivariate_normal {
Array logpdf(const Array& x, const Array& mean, const Array& cov);
Array pdf(const Array& x, const Array& mean, const Array& cov);
}  // namespace multivariate_normal

// Support [loc, loc + scale]; -inf outside.
namespace uniform {
Array logpdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
Array pdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
}  // namespace uniform

// Support [loc, inf); -inf below.
namespace expon {
Array logpdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
Array pdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
}  // namespace expon

namespace laplace {
Array logpdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
Array pdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
Array cdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
}  // namespace laplace

namespace cauchy {
Array logpdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
Array pdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
}  // namespace cauchy

namespace logistic {
Array logpdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
Array pdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
Array cdf(const Array& x, const Array& loc = 0.0, const Array& scale = 1.0);
}  // namespace logistic

}  // namespace stats

namespace linalg {
// jax.scipy.linalg.schur: a = z t z^H. output "real" keeps a real matrix real (t
// quasi-triangular); "complex" converts it to complex first (t triangular). On
// lax::linalg::schur, so no derivative.
std::pair<Array, Array> schur(const Array& a, const std::string& output = "real");
}  // namespace linalg

}  // namespace jx::scipy
