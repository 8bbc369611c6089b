// jx::scipy: a first slice of jax.scipy.special and jax.scipy.stats (docs/scipy.md).
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
}  // namespace bernoulli

// -inf for k - loc < 0 or a non-integer k.
namespace poisson {
Array logpmf(const Array& k, const Array& mu, const Array& loc = 0.0);
Array pmf(const Array& k, const Array& mu, const Array& loc = 0.0);
}  // namespace poisson

// Support [loc, loc + scale]; -inf outside.
namespace beta {
Array logpdf(const Array& x, const Array& a, const Array& b, const Array& loc = 0.0,
             const Array& scale = 1.0);
Array pdf(const Array& x, const Array& a, const Array& b, const Array& loc = 0.0,
          const Array& scale = 1.0);
}  // namespace beta

// Support [loc, inf); -inf below.
namespace gamma {
Array logpdf(const Array& x, const Array& a, const Array& loc = 0.0, const Array& scale = 1.0);
Array pdf(const Array& x, const Array& a, const Array& loc = 0.0, const Array& scale = 1.0);
}  // namespace gamma

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

}  // namespace jx::scipy
