// jax.scipy.stats' univariate distributions (jax/_src/scipy/stats/*.py), composed from
// jx::scipy::special and jnp with JAX's formulas: the same support checks (-inf outside),
// the same dtypes, and the same derivatives.
#include <cmath>
#include <numbers>
#include <vector>

#include "jx/lax.h"
#include "jx/numpy.h"
#include "jx/scipy.h"
#include "scipy/common.h"

namespace jx::scipy::stats {

namespace jnp = jx::numpy;
namespace sp = jx::scipy::special;
using detail::inexact;
using detail::k;
using detail::kInf;

namespace {

Array minus_inf_where(const Array& outside, const Array& log_probs) {
  return jnp::where(outside, jnp::full_like(log_probs, -kInf), log_probs);
}

}  // namespace

// ---- norm ----

Array norm::logpdf(const Array& x_in, const Array& loc_in, const Array& scale_in) {
  auto v = inexact({x_in, loc_in, scale_in}, "norm.logpdf");
  const Array &x = v[0], &loc = v[1], &scale = v[2];
  Array scale_sqrd = jnp::square(scale);
  Array log_normalizer = jnp::log(k(x, 2.0 * std::numbers::pi) * scale_sqrd);
  Array quadratic = jnp::square(x - loc) / scale_sqrd;
  return (log_normalizer + quadratic) / k(x, -2.0);
}

Array norm::pdf(const Array& x, const Array& loc, const Array& scale) {
  return jnp::exp(logpdf(x, loc, scale));
}

Array norm::cdf(const Array& x_in, const Array& loc_in, const Array& scale_in) {
  auto v = inexact({x_in, loc_in, scale_in}, "norm.cdf");
  return sp::ndtr((v[0] - v[1]) / v[2]);
}

Array norm::logcdf(const Array& x_in, const Array& loc_in, const Array& scale_in) {
  auto v = inexact({x_in, loc_in, scale_in}, "norm.logcdf");
  return sp::log_ndtr((v[0] - v[1]) / v[2]);
}

Array norm::sf(const Array& x_in, const Array& loc_in, const Array& scale_in) {
  auto v = inexact({x_in, loc_in, scale_in}, "norm.sf");
  return cdf(-v[0], -v[1], v[2]);
}

Array norm::logsf(const Array& x_in, const Array& loc_in, const Array& scale_in) {
  auto v = inexact({x_in, loc_in, scale_in}, "norm.logsf");
  return logcdf(-v[0], -v[1], v[2]);
}

Array norm::ppf(const Array& q_in, const Array& loc_in, const Array& scale_in) {
  auto v = inexact({q_in, loc_in, scale_in}, "norm.ppf");
  return sp::ndtri(v[0]) * v[2] + v[1];
}

Array norm::isf(const Array& q_in, const Array& loc_in, const Array& scale_in) {
  auto v = inexact({q_in, loc_in, scale_in}, "norm.isf");
  return ppf(k(v[0], 1.0) - v[0], v[1], v[2]);
}

// ---- bernoulli ----

Array bernoulli::logpmf(const Array& k_in, const Array& p_in, const Array& loc_in) {
  auto v = inexact({k_in, p_in, loc_in}, "bernoulli.logpmf");
  const Array &kk = v[0], &p = v[1], &loc = v[2];
  Array x = kk - loc;
  Array log_probs = sp::xlogy(x, p) + sp::xlog1py(k(kk, 1.0) - x, -p);
  return minus_inf_where((x < k(kk, 0.0)) | (x > k(kk, 1.0)), log_probs);
}

Array bernoulli::pmf(const Array& kk, const Array& p, const Array& loc) {
  return jnp::exp(logpmf(kk, p, loc));
}

// ---- poisson ----

Array poisson::logpmf(const Array& k_in, const Array& mu_in, const Array& loc_in) {
  auto v = inexact({k_in, mu_in, loc_in}, "poisson.logpmf");
  const Array &kk = v[0], &mu = v[1], &loc = v[2];
  Array x = kk - loc;
  Array log_probs = sp::xlogy(x, mu) - sp::gammaln(x + 1.0) - mu;
  return minus_inf_where((x < k(kk, 0.0)) | (jnp::round(kk) != kk), log_probs);
}

Array poisson::pmf(const Array& kk, const Array& mu, const Array& loc) {
  return jnp::exp(logpmf(kk, mu, loc));
}

// ---- beta ----

Array beta::logpdf(const Array& x_in, const Array& a_in, const Array& b_in, const Array& loc_in,
                   const Array& scale_in) {
  auto v = inexact({x_in, a_in, b_in, loc_in, scale_in}, "beta.logpdf");
  const Array &x = v[0], &a = v[1], &b = v[2], &loc = v[3], &scale = v[4];
  Array one = k(x, 1.0);
  Array shape_term = -sp::betaln(a, b);
  Array y = (x - loc) / scale;
  Array log_linear_term = sp::xlogy(a - one, y) + sp::xlog1py(b - one, -y);
  Array log_probs = shape_term + log_linear_term - jnp::log(scale);
  return minus_inf_where((x > loc + scale) | (x < loc), log_probs);
}

Array beta::pdf(const Array& x, const Array& a, const Array& b, const Array& loc,
                const Array& scale) {
  return jnp::exp(logpdf(x, a, b, loc, scale));
}

// ---- gamma ----

Array gamma::logpdf(const Array& x_in, const Array& a_in, const Array& loc_in,
                    const Array& scale_in) {
  auto v = inexact({x_in, a_in, loc_in, scale_in}, "gamma.logpdf");
  const Array &x = v[0], &a = v[1], &loc = v[2], &scale = v[3];
  Array y = (x - loc) / scale;
  Array log_linear_term = sp::xlogy(a - k(x, 1.0), y) - y;
  Array shape_terms = sp::gammaln(a) + jnp::log(scale);
  return minus_inf_where(x < loc, log_linear_term - shape_terms);
}

Array gamma::pdf(const Array& x, const Array& a, const Array& loc, const Array& scale) {
  return jnp::exp(logpdf(x, a, loc, scale));
}

// ---- uniform ----

Array uniform::logpdf(const Array& x_in, const Array& loc_in, const Array& scale_in) {
  auto v = inexact({x_in, loc_in, scale_in}, "uniform.logpdf");
  const Array &x = v[0], &loc = v[1], &scale = v[2];
  Array log_probs = -jnp::log(scale);
  return minus_inf_where((x > loc + scale) | (x < loc), log_probs);
}

Array uniform::pdf(const Array& x, const Array& loc, const Array& scale) {
  return jnp::exp(logpdf(x, loc, scale));
}

// ---- expon ----

Array expon::logpdf(const Array& x_in, const Array& loc_in, const Array& scale_in) {
  auto v = inexact({x_in, loc_in, scale_in}, "expon.logpdf");
  const Array &x = v[0], &loc = v[1], &scale = v[2];
  Array linear_term = (x - loc) / scale;
  return minus_inf_where(x < loc, -(linear_term + jnp::log(scale)));
}

Array expon::pdf(const Array& x, const Array& loc, const Array& scale) {
  return jnp::exp(logpdf(x, loc, scale));
}

// ---- laplace ----

Array laplace::logpdf(const Array& x_in, const Array& loc_in, const Array& scale_in) {
  auto v = inexact({x_in, loc_in, scale_in}, "laplace.logpdf");
  const Array &x = v[0], &loc = v[1], &scale = v[2];
  Array linear_term = jnp::abs(x - loc) / scale;
  return -(linear_term + jnp::log(k(x, 2.0) * scale));
}

Array laplace::pdf(const Array& x, const Array& loc, const Array& scale) {
  return jnp::exp(logpdf(x, loc, scale));
}

Array laplace::cdf(const Array& x_in, const Array& loc_in, const Array& scale_in) {
  auto v = inexact({x_in, loc_in, scale_in}, "laplace.cdf");
  const Array& x = v[0];
  Array diff = (x - v[1]) / v[2];
  Array half = k(x, 0.5);
  return jnp::where(diff <= k(x, 0.0), half * jnp::exp(diff), k(x, 1.0) - half * jnp::exp(-diff));
}

// ---- cauchy ----

Array cauchy::logpdf(const Array& x_in, const Array& loc_in, const Array& scale_in) {
  auto v = inexact({x_in, loc_in, scale_in}, "cauchy.logpdf");
  const Array &x = v[0], &loc = v[1], &scale = v[2];
  Array scaled_x = (x - loc) / scale;
  Array normalize_term = jnp::log(k(x, std::numbers::pi) * scale);
  return -(normalize_term + jnp::log1p(scaled_x * scaled_x));
}

Array cauchy::pdf(const Array& x, const Array& loc, const Array& scale) {
  return jnp::exp(logpdf(x, loc, scale));
}

// ---- logistic ----

Array logistic::logpdf(const Array& x_in, const Array& loc_in, const Array& scale_in) {
  auto v = inexact({x_in, loc_in, scale_in}, "logistic.logpdf");
  const Array& scale = v[2];
  Array x = (v[0] - v[1]) / scale;
  Array two = k(x, 2.0);
  Array half_x = x / two;
  // -2 log(e^(x/2) + e^(-x/2)) = log(e^x / (1 + e^x)^2), without overflow.
  return -two * jnp::logaddexp(half_x, -half_x) - jnp::log(scale);
}

Array logistic::pdf(const Array& x, const Array& loc, const Array& scale) {
  return jnp::exp(logpdf(x, loc, scale));
}

Array logistic::cdf(const Array& x_in, const Array& loc_in, const Array& scale_in) {
  auto v = inexact({x_in, loc_in, scale_in}, "logistic.cdf");
  return sp::expit((v[0] - v[1]) / v[2]);
}

}  // namespace jx::scipy::stats
