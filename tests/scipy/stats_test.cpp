// jx::scipy::stats: values against SciPy 1.10 float64 goldens (tests/golden/gen_scipy.py)
// in float64 and float32, out-of-support values, dtypes, derivatives by check_grads, jit and
// vmap against eager, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "jx/scipy.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"
#include "testing/golden.h"
#include "scipy/scipy_checks.h"

namespace {

using namespace jx::testing::scipy;
namespace jnp = jx::numpy;
namespace st = jx::scipy::stats;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::check_grads;
using jx::testing::expect_error;


using Loc = std::function<Array(const Array&, const Array&, const Array&)>;

struct LocScaleCase {
  const char* golden;  // "<golden>" at (0, 1) and "<golden>_loc_scale" at (0.5, 2)
  Loc fn;
  bool standard = true;  // has a (0, 1) golden
  double tol64 = kF64;
};

TEST(ScipyStats, LocScaleFamiliesMatchSciPy) {
  const std::vector<LocScaleCase> cases = {
      {"norm_logpdf", st::norm::logpdf},
      {"norm_pdf", st::norm::pdf, false},
      // log_ndtr's series (order 3, as JAX) is good to ~2e-11 relative near -20.
      {"norm_cdf", st::norm::cdf},
      {"norm_logcdf", st::norm::logcdf, true, 2e-11},
      {"norm_sf", st::norm::sf},
      {"norm_logsf", st::norm::logsf, true, 2e-11},
      {"laplace_logpdf", st::laplace::logpdf},
      {"laplace_pdf", st::laplace::pdf, false},
      {"laplace_cdf", st::laplace::cdf},
      {"cauchy_logpdf", st::cauchy::logpdf},
      {"cauchy_pdf", st::cauchy::pdf, false},
      {"logistic_logpdf", st::logistic::logpdf},
      {"logistic_pdf", st::logistic::pdf, false},
      {"logistic_cdf", st::logistic::cdf},
      {"uniform_logpdf", st::uniform::logpdf},
      {"uniform_pdf", st::uniform::pdf, false},
      {"expon_logpdf", st::expon::logpdf},
      {"expon_pdf", st::expon::pdf, false},
  };
  const Array x = golden("stats_x");
  const Array x32 = x.astype(DType::Float32);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.golden);
    const std::string name = c.golden;
    const std::string ls = name + "_loc_scale";
    bool has_ls = false;
    for (const auto& g : kGoldens) has_ls |= ls == g.name;
    if (c.standard) {
      Array y = c.fn(x, 0.0, 1.0);
      EXPECT_EQ(y.dtype(), DType::Float64);
      expect_golden(name, y, c.tol64);
      Array y32 = c.fn(x32, 0.0, 1.0);
      EXPECT_EQ(y32.dtype(), DType::Float32);
      expect_golden(name, y32, kF32);
    }
    if (has_ls) {
      expect_golden(ls, c.fn(x, 0.5, 2.0), c.tol64);
      expect_golden(ls, c.fn(x32, 0.5, 2.0), kF32);
    }
  }
  // The defaults are loc 0, scale 1.
  expect_golden("norm_logpdf", st::norm::logpdf(x), kF64);
  expect_golden("logistic_cdf", st::logistic::cdf(x), kF64);
}

TEST(ScipyStats, NormQuantiles) {
  const Array q = golden("norm_q");
  expect_golden("norm_ppf", st::norm::ppf(q), kF64);
  expect_golden("norm_ppf_loc_scale", st::norm::ppf(q, 0.5, 2.0), kF64);
  expect_golden("norm_isf_loc_scale", st::norm::isf(golden("norm_isf_q"), 0.5, 2.0), kF64);
  // ppf inverts cdf in float32 too, in the centre.
  const Array p32 = jnp::array<float>({0.125f, 0.5f, 0.875f});
  jx::testing::expect_close(st::norm::cdf(st::norm::ppf(p32)), p32, 1e-6, 1e-6, "cdf(ppf)");
}

TEST(ScipyStats, DiscreteMatchSciPy) {
  const Array kb = golden("bernoulli_k");
  expect_golden("bernoulli_logpmf", st::bernoulli::logpmf(kb, 0.3), kF64);
  expect_golden("bernoulli_pmf", st::bernoulli::pmf(kb, 0.3), kF64);
  expect_golden("bernoulli_logpmf_p0", st::bernoulli::logpmf(kb, 0.0), kF64);
  expect_golden("bernoulli_logpmf_p1", st::bernoulli::logpmf(kb, 1.0), kF64);
  expect_golden("bernoulli_logpmf_loc", st::bernoulli::logpmf(kb, 0.3, 1.0), kF64);
  // The cdf, by hand (SciPy's step function; SciPy is not on this machine to regenerate the
  // goldens): 0 below 0, 1 - p on [0, 1), 1 from 1, NaN for NaN k or p outside [0, 1].
  const double nan = std::nan("");
  jx::testing::expect_close(st::bernoulli::cdf(jnp::array<double>({-1, 0, 0.5, 1, 2, nan}), 0.3),
                            jnp::array<double>({0, 0.7, 0.7, 1, 1, nan}), 1e-15, 0, "bernoulli cdf");
  EXPECT_TRUE(std::isnan(st::bernoulli::cdf(jnp::array<double>({0.5}), 1.5).to_vector<double>()[0]));
  EXPECT_EQ(st::bernoulli::cdf(jnp::array<int32_t>({0, 1}), 0.25).dtype(), DType::Float32);
  // Integer k (as JAX: promoted to float32).
  Array ki = jnp::array<int32_t>({-1, 0, 1, 2});
  EXPECT_EQ(st::bernoulli::logpmf(ki, 0.3).dtype(), DType::Float32);
  expect_golden("bernoulli_logpmf", st::bernoulli::logpmf(ki, 0.3), kF32);

  const Array kp = golden("poisson_k");
  expect_golden("poisson_logpmf", st::poisson::logpmf(kp, 3.5), kF64);
  expect_golden("poisson_pmf", st::poisson::pmf(kp, 3.5), kF64);
  expect_golden("poisson_logpmf_mu0", st::poisson::logpmf(kp, 0.0), kF64);
  expect_golden("poisson_logpmf_loc", st::poisson::logpmf(kp, 3.5, 2.0), kF64);
  expect_golden("poisson_logpmf", st::poisson::logpmf(kp.astype(DType::Float32), 3.5), kF32);
}

TEST(ScipyStats, BetaAndGammaMatchSciPy) {
  const Array xb = golden("beta_x");
  expect_golden("beta_logpdf", st::beta::logpdf(xb, 2.5, 1.5), kF64);
  expect_golden("beta_pdf", st::beta::pdf(xb, 2.5, 1.5), kF64);
  expect_golden("beta_logpdf_a1", st::beta::logpdf(xb, 1.0, 3.0), kF64);
  expect_golden("beta_logpdf_loc_scale", st::beta::logpdf(xb, 2.5, 1.5, -0.25, 1.5), kF64);
  expect_golden("beta_logpdf", st::beta::logpdf(xb.astype(DType::Float32), 2.5, 1.5), kF32);
  const Array xg = golden("gamma_stats_x");
  expect_golden("gamma_logpdf", st::gamma::logpdf(xg, 2.5), kF64);
  expect_golden("gamma_pdf", st::gamma::pdf(xg, 2.5), kF64);
  expect_golden("gamma_logpdf_a1", st::gamma::logpdf(xg, 1.0), kF64);
  expect_golden("gamma_logpdf_loc_scale", st::gamma::logpdf(xg, 2.5, 0.5, 2.0), kF64);
  expect_golden("gamma_logpdf", st::gamma::logpdf(xg.astype(DType::Float32), 2.5), kF32);
}

TEST(ScipyStats, BroadcastingAndDtypes) {
  // Parameters broadcast against x: [3, 1] locs by [4] points.
  const Array x = f64({-1.0, 0.0, 0.5, 2.0});
  const Array loc = jnp::reshape(f64({0.0, 0.5, 1.0}), {3, 1});
  Array y = st::norm::logpdf(x, loc, 2.0);
  EXPECT_EQ(y.shape(), (Shape{3, 4}));
  for (int64_t i = 0; i < 3; ++i)
    expect_same(y(i), st::norm::logpdf(x, loc(i, 0), 2.0), 1e-15, "row");
  // Integer x becomes float32; float32 x with float64 parameters promotes to float64.
  EXPECT_EQ(st::expon::logpdf(jnp::array<int32_t>({1, 2})).dtype(), DType::Float32);
  EXPECT_EQ(st::norm::cdf(x.astype(DType::Float32), f64({0.0})).dtype(), DType::Float64);
  EXPECT_EQ(st::gamma::logpdf(x.astype(DType::Float32), 2.0).dtype(), DType::Float32);
}

// ---- derivatives ----

using jx::testing::Fn;

TEST(ScipyStats, Grads) {
  const Array x = f64({-1.5, 0.25, 2.0});
  const Array loc = f64({0.5, -0.25, 1.0});
  const Array scale = f64({1.5, 0.75, 2.0});
  const std::vector<std::pair<const char*, Loc>> loc_scale = {
      {"norm.logpdf", st::norm::logpdf},         {"norm.cdf", st::norm::cdf},
      {"norm.logcdf", st::norm::logcdf},         {"norm.logsf", st::norm::logsf},
      {"laplace.logpdf", st::laplace::logpdf},   {"cauchy.logpdf", st::cauchy::logpdf},
      {"logistic.logpdf", st::logistic::logpdf}, {"logistic.cdf", st::logistic::cdf},
  };
  for (const auto& [name, fn] : loc_scale) {
    SCOPED_TRACE(name);
    Loc f = fn;
    Fn g = [f](const std::vector<Array>& a) { return std::vector<Array>{f(a[0], a[1], a[2])}; };
    EXPECT_NO_THROW(check_grads(g, {x, loc, scale}, {.order = 2, .atol = 1e-5, .rtol = 1e-4}));
  }
  // expon / uniform inside their support.
  EXPECT_NO_THROW(check_grads(
      [](const std::vector<Array>& a) {
        return std::vector<Array>{st::expon::logpdf(a[0], a[1], a[2])};
      },
      {f64({1.0, 2.5}), f64({0.25, -1.0}), f64({1.5, 0.5})}, {.order = 2}));
  EXPECT_NO_THROW(check_grads(
      [](const std::vector<Array>& a) {
        return std::vector<Array>{st::norm::ppf(a[0], a[1], a[2])};
      },
      {f64({0.05, 0.5, 0.9}), loc, scale}, {.order = 2, .atol = 1e-5, .rtol = 1e-4}));
  EXPECT_NO_THROW(check_grads(
      [](const std::vector<Array>& a) {
        return std::vector<Array>{st::beta::logpdf(a[0], a[1], a[2])};
      },
      {f64({0.2, 0.5, 0.7}), f64({2.5, 1.5, 3.0}), f64({1.5, 4.0, 0.8})},
      {.order = 2, .atol = 1e-5, .rtol = 1e-4}));
  EXPECT_NO_THROW(check_grads(
      [](const std::vector<Array>& a) {
        return std::vector<Array>{st::gamma::logpdf(a[0], a[1], 0.0, a[2])};
      },
      {f64({0.5, 2.0, 4.0}), f64({2.5, 1.5, 3.0}), f64({1.5, 0.5, 2.0})},
      {.order = 2, .atol = 1e-5, .rtol = 1e-4}));
  // Discrete distributions are differentiable in their parameter.
  EXPECT_NO_THROW(check_grads(
      [](const std::vector<Array>& a) {
        return std::vector<Array>{st::poisson::logpmf(f64({0.0, 2.0, 5.0}), a[0])};
      },
      {f64({0.5, 3.5, 2.0})}, {.order = 2}));
  EXPECT_NO_THROW(check_grads(
      [](const std::vector<Array>& a) {
        return std::vector<Array>{st::bernoulli::logpmf(f64({0.0, 1.0, 1.0}), a[0])};
      },
      {f64({0.25, 0.5, 0.9})}, {.order = 2}));
}

// ---- transformations ----

TEST(ScipyStats, JitEqualsEagerAndVmapEqualsLoop) {
  const Array x = golden("stats_x");
  const std::vector<std::pair<const char*, std::function<Array(const Array&)>>> fns = {
      {"norm.logcdf", [](const Array& v) { return st::norm::logcdf(v, 0.5, 2.0); }},
      {"beta.logpdf", [](const Array& v) { return st::beta::logpdf(v, 2.5, 1.5); }},
      {"gamma.logpdf", [](const Array& v) { return st::gamma::logpdf(v, 2.5); }},
      {"logistic.logpdf", [](const Array& v) { return st::logistic::logpdf(v); }},
  };
  for (const auto& [name, f] : fns) {
    expect_same(jx::jit(f)(x), f(x), 4.5e-16, name);  // <= 2 ulps
    expect_same(jx::jit(f)(x.astype(DType::Float32)), f(x.astype(DType::Float32)), 2.4e-7, name);
  }
  // vmap over a batch of (x, mu) pairs against a loop.
  const Array ks = jnp::reshape(f64({0.0, 1.0, 2.0, 3.0, 4.0, 7.0}), {3, 2});
  const Array mus = f64({0.5, 2.0, 6.0});
  auto pois = [](const Array& k, const Array& mu) { return st::poisson::logpmf(k, mu); };
  std::vector<Array> rows;
  for (int64_t i = 0; i < 3; ++i) rows.push_back(pois(ks(i), mus(i)));
  expect_same(jx::vmap(pois)(ks, mus), jnp::stack(rows), 1e-15, "poisson");
}

// ---- errors ----

TEST(ScipyStats, Errors) {
  expect_error<jx::ShapeError>([] { st::norm::logpdf(jnp::zeros({3}), jnp::zeros({2})); },
                               {"[norm.logpdf]", "(3,)", "(2,)"});
  expect_error<jx::ShapeError>([] { st::beta::logpdf(jnp::zeros({3}), 2.0, 2.0, jnp::zeros({4})); },
                               "[beta.logpdf]");
  expect_error<jx::ShapeError>(
      [] {
        st::poisson::pmf(jnp::zeros({3}), jnp::zeros({2, 2}));
      },
      "[poisson.logpmf]");
  expect_error<jx::DTypeError>([] { st::norm::cdf(jnp::zeros({3}, DType::Float16)); }, "[ndtr]");
}

}  // namespace
