// jax.scipy.stats' distributions (jax/_src/scipy/stats/*.py), composed from
// jx::scipy::special and jnp with JAX's formulas: the same support checks (-inf outside),
// the same dtypes, and the same derivatives.
#include <cmath>
#include <numbers>
#include <utility>
#include <vector>

#include "jx/lax.h"
#include "jx/lax/linalg.h"
#include "jx/numpy.h"
#include "jx/scipy.h"
#include "scipy/common.h"
#include "support/str.h"

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

// SciPy's (and JAX's) step function: 0 below 0, 1 - p on [0, 1), 1 from 1; NaN for a NaN
// argument or p outside [0, 1].
Array bernoulli::cdf(const Array& k_in, const Array& p_in) {
  auto v = inexact({k_in, p_in}, "bernoulli.cdf");
  const Array &kk = v[0], &p = v[1];
  const Array zero = k(kk, 0.0), one = k(kk, 1.0);
  Array invalid = jnp::isnan(kk) | jnp::isnan(p) | (p < zero) | (p > one);
  Array below = jnp::where(kk < zero, zero, jnp::where(kk < one, one - p, one));
  return jnp::where(invalid, k(kk, std::numeric_limits<double>::quiet_NaN()), below);
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

Array poisson::cdf(const Array& k_in, const Array& mu_in, const Array& loc_in) {
  auto v = inexact({k_in, mu_in, loc_in}, "poisson.cdf");
  const Array &kk = v[0], &mu = v[1], &loc = v[2];
  Array x = kk - loc;
  Array p = sp::gammaincc(jnp::floor(k(kk, 1.0) + x), mu);
  return jnp::where(x < k(kk, 0.0), k(kk, 0.0), p);
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

Array beta::cdf(const Array& x_in, const Array& a_in, const Array& b_in, const Array& loc_in,
                const Array& scale_in) {
  auto v = inexact({x_in, a_in, b_in, loc_in, scale_in}, "beta.cdf");
  const Array &x = v[0], &a = v[1], &b = v[2], &loc = v[3], &scale = v[4];
  return sp::betainc(a, b, lax::clamp(k(x, 0.0), (x - loc) / scale, k(x, 1.0)));
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

Array gamma::cdf(const Array& x_in, const Array& a_in, const Array& loc_in,
                 const Array& scale_in) {
  auto v = inexact({x_in, a_in, loc_in, scale_in}, "gamma.cdf");
  const Array &x = v[0], &a = v[1], &loc = v[2], &scale = v[3];
  return sp::gammainc(a, lax::clamp(k(x, 0.0), (x - loc) / scale, k(x, kInf)));
}

// JAX's gamma.sf does not clamp, so it is NaN below loc (igammac of a negative x); jx
// clamps as cdf and as JAX's own chi2.sf do, which gives SciPy's 1.
Array gamma::sf(const Array& x_in, const Array& a_in, const Array& loc_in,
                const Array& scale_in) {
  auto v = inexact({x_in, a_in, loc_in, scale_in}, "gamma.sf");
  const Array &x = v[0], &a = v[1], &loc = v[2], &scale = v[3];
  return sp::gammaincc(a, lax::clamp(k(x, 0.0), (x - loc) / scale, k(x, kInf)));
}

// ---- chi2 ----

// JAX's formula, except (df/2 - 1) log y as xlogy: JAX's product is 0 * -inf = NaN at
// x = loc for df = 2, where the density is 1/2 (SciPy's value, and jx's).
Array chi2::logpdf(const Array& x_in, const Array& df_in, const Array& loc_in,
                   const Array& scale_in) {
  auto v = inexact({x_in, df_in, loc_in, scale_in}, "chi2.logpdf");
  const Array &x = v[0], &df = v[1], &loc = v[2], &scale = v[3];
  Array two = k(x, 2.0);
  Array y = (x - loc) / scale;
  Array df_on_two = df / two;
  Array kernel = sp::xlogy(df_on_two - k(x, 1.0), y) - y / two;
  Array nrml_cnst = -(lax::lgamma(df_on_two) + jnp::log(two) * df / two);
  Array log_probs = nrml_cnst - jnp::log(scale) + kernel;
  return minus_inf_where(x < loc, log_probs);
}

Array chi2::pdf(const Array& x, const Array& df, const Array& loc, const Array& scale) {
  return jnp::exp(logpdf(x, df, loc, scale));
}

namespace {
// chi2(df) is gamma(df / 2, scale 2): the incomplete gamma's arguments, with (x - loc) /
// (2 scale) clamped into the support.
std::pair<Array, Array> chi2_gamma_args(const Array& x_in, const Array& df_in, const Array& loc_in,
                                        const Array& scale_in, const char* op) {
  auto v = inexact({x_in, df_in, loc_in, scale_in}, op);
  const Array &x = v[0], &df = v[1], &loc = v[2], &scale = v[3];
  Array two = k(scale, 2.0);
  return {df / two, lax::clamp(k(x, 0.0), (x - loc) / (scale * two), k(x, kInf))};
}
}  // namespace

Array chi2::cdf(const Array& x_in, const Array& df_in, const Array& loc_in,
                const Array& scale_in) {
  auto [a, z] = chi2_gamma_args(x_in, df_in, loc_in, scale_in, "chi2.cdf");
  return sp::gammainc(a, z);
}

Array chi2::sf(const Array& x_in, const Array& df_in, const Array& loc_in,
               const Array& scale_in) {
  auto [a, z] = chi2_gamma_args(x_in, df_in, loc_in, scale_in, "chi2.sf");
  return sp::gammaincc(a, z);
}

// ---- t ----

Array t::logpdf(const Array& x_in, const Array& df_in, const Array& loc_in,
                const Array& scale_in) {
  auto v = inexact({x_in, df_in, loc_in, scale_in}, "t.logpdf");
  const Array &x = v[0], &df = v[1], &loc = v[2], &scale = v[3];
  Array two = k(x, 2.0);
  Array scaled_x = (x - loc) / scale;
  Array df_over_two = df / two;
  Array df_plus_one_over_two = df_over_two + k(x, 0.5);
  Array normalize_term_const = scale * scale * k(x, std::numbers::pi);
  Array normalize_term_tmp = jnp::log(normalize_term_const * df) / two;
  Array normalize_term =
      lax::lgamma(df_over_two) + normalize_term_tmp - lax::lgamma(df_plus_one_over_two);
  Array quadratic = scaled_x * scaled_x / df;
  return -(normalize_term + df_plus_one_over_two * jnp::log1p(quadratic));
}

Array t::pdf(const Array& x, const Array& df, const Array& loc, const Array& scale) {
  return jnp::exp(logpdf(x, df, loc, scale));
}

// ---- multivariate_normal ----

namespace {

// y = L^-1 d for a lower-triangular L [..., n, n] and vectors d [..., n], batch dims
// broadcast: JAX's jnp.vectorize(triangular_solve(lower=True, transpose_a=True)). A single
// L solves every row of d in one call (d as the right-hand sides of x L^T = d).
Array solve_lower(const Array& L, const Array& d) {
  const int64_t n = L.shape(-1);
  namespace ll = jx::lax::linalg;
  const ll::TriangularSolveOptions opts{.left_side = false, .lower = true, .transpose_a = true};
  if (L.ndim() == 2) {
    const int64_t m = d.size() / std::max<int64_t>(n, 1);
    Array rows = jnp::reshape(d, {m, n});
    return jnp::reshape(ll::triangular_solve(L, rows, opts), d.shape());
  }
  Shape lb(L.shape().begin(), L.shape().end() - 2), db(d.shape().begin(), d.shape().end() - 1);
  Shape batch = numpy::detail::broadcast_shapes("multivariate_normal.logpdf", {lb, db});
  Shape lshape = batch, dshape = batch;
  lshape.push_back(n);
  lshape.push_back(n);
  dshape.push_back(1);
  dshape.push_back(n);
  Array y = ll::triangular_solve(jnp::broadcast_to(L, lshape),
                                 jnp::broadcast_to(jnp::expand_dims(d, -2), dshape), opts);
  return jnp::squeeze(y, -2);
}

}  // namespace

Array multivariate_normal::logpdf(const Array& x_in, const Array& mean_in, const Array& cov_in) {
  auto v = numpy::detail::promote_inexact({x_in, mean_in, cov_in});
  const Array &x = v[0], &mean = v[1], &cov = v[2];
  const double log_2pi = std::log(2.0 * std::numbers::pi);
  if (mean.ndim() == 0)
    return -0.5 * jnp::square(x - mean) / cov - 0.5 * (k(x, log_2pi) + jnp::log(cov));
  const int64_t n = mean.shape(-1);
  const double half_n = 0.5 * double(n);
  if (cov.ndim() == 0) {
    Array y = x - mean;
    return -0.5 * jnp::sum(y * y, -1) / cov - half_n * (k(x, log_2pi) + jnp::log(cov));
  }
  if (cov.ndim() < 2 || cov.shape(-1) != n || cov.shape(-2) != n)
    throw ValueError(str("[multivariate_normal.logpdf] got incompatible shapes: mean ",
                         shape_str(mean.shape()), " needs cov of shape (..., ", n, ", ", n,
                         ") or a scalar, got ", shape_str(cov.shape())));
  Array L = jx::lax::linalg::cholesky(cov);
  Array y = solve_lower(L, x - mean);
  Array log_det_half = jnp::sum(jnp::log(jnp::diagonal(L, 0, -2, -1)), -1);
  return -0.5 * jnp::sum(y * y, -1) - k(x, half_n * log_2pi) - log_det_half;
}

Array multivariate_normal::pdf(const Array& x, const Array& mean, const Array& cov) {
  return jnp::exp(logpdf(x, mean, cov));
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
