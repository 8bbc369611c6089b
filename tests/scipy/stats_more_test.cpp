// jx::scipy::stats built on the special and linear-algebra primitives: gamma.cdf/sf,
// poisson.cdf, beta.cdf, chi2, t and multivariate_normal. Values against SciPy 1.10
// float64 goldens (tests/golden/gen_scipy.py) in float64 and float32, out-of-support
// values, derivatives by check_grads, vmap against a loop, jit against eager, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "jx/scipy.h"
#include "scipy/scipy_checks.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"

namespace {

using namespace jx::testing::scipy;
namespace jnp = jx::numpy;
namespace st = jx::scipy::stats;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::check_grads;
using jx::testing::expect_error;
using Arrays = std::vector<Array>;

// float64 against SciPy (relative to |want| + 1 as the other scipy tests); float32 too.
void both(const std::string& name, const std::function<Array(DType)>& f, double tol64 = 1e-13) {
  SCOPED_TRACE(name);
  Array y64 = f(DType::Float64), y32 = f(DType::Float32);
  EXPECT_EQ(y64.dtype(), DType::Float64);
  EXPECT_EQ(y32.dtype(), DType::Float32);
  expect_golden(name, y64, tol64);
  expect_golden(name, y32, kF32);
}

Array in(const char* name, DType t) { return golden(name).astype(t); }

TEST(ScipyStatsMore, CdfsMatchSciPy) {
  // Below loc the CDFs are 0 and the survival functions 1 (jx's gamma.sf clamps like its
  // cdf; JAX's gives NaN there).
  both("gamma_cdf", [](DType t) { return st::gamma::cdf(in("gamma_cdf_x", t), 2.5); });
  both("gamma_cdf_loc_scale",
       [](DType t) { return st::gamma::cdf(in("gamma_cdf_x", t), 2.5, 0.5, 2.0); });
  both("gamma_sf", [](DType t) { return st::gamma::sf(in("gamma_cdf_x", t), 2.5); });
  both("gamma_sf_loc_scale",
       [](DType t) { return st::gamma::sf(in("gamma_cdf_x", t), 2.5, 0.5, 2.0); });
  // k < loc gives 0; a non-integer k counts the integers below it.
  both("poisson_cdf", [](DType t) { return st::poisson::cdf(in("poisson_cdf_k", t), 3.5); });
  both("poisson_cdf_loc",
       [](DType t) { return st::poisson::cdf(in("poisson_cdf_k", t), 3.5, 2.0); });
  both("beta_cdf", [](DType t) { return st::beta::cdf(in("beta_cdf_x", t), 2.5, 1.5); });
  both("beta_cdf_loc_scale",
       [](DType t) { return st::beta::cdf(in("beta_cdf_x", t), 2.5, 1.5, -0.25, 1.5); });
}

TEST(ScipyStatsMore, Chi2AndTMatchSciPy) {
  for (int df : {2, 3}) {
    const std::string s = "_df" + std::to_string(df);
    const double d = df;
    // df = 2 at x = 0: log(1/2) (JAX's (df/2 - 1) log x gives NaN there; jx uses xlogy).
    both("chi2_logpdf" + s, [d](DType t) { return st::chi2::logpdf(in("chi2_x", t), d); });
    both("chi2_pdf" + s, [d](DType t) { return st::chi2::pdf(in("chi2_x", t), d); });
    both("chi2_cdf" + s, [d](DType t) { return st::chi2::cdf(in("chi2_x", t), d); });
    both("chi2_sf" + s, [d](DType t) { return st::chi2::sf(in("chi2_x", t), d); });
  }
  both("chi2_logpdf_loc_scale",
       [](DType t) { return st::chi2::logpdf(in("chi2_x", t), 3.0, 0.5, 2.0); });
  both("chi2_cdf_loc_scale", [](DType t) { return st::chi2::cdf(in("chi2_x", t), 3.0, 0.5, 2.0); });
  for (int df : {1, 3, 1000}) {
    const double d = df;
    both("t_logpdf_df" + std::to_string(df),
         [d](DType t) { return st::t::logpdf(in("t_x", t), d); });
  }
  both("t_pdf_df3", [](DType t) { return st::t::pdf(in("t_x", t), 3.0); });
  both("t_logpdf_loc_scale", [](DType t) { return st::t::logpdf(in("t_x", t), 4.5, 0.5, 2.0); });
}

TEST(ScipyStatsMore, MultivariateNormalMatchesSciPy) {
  both("mvn_logpdf", [](DType t) {
    return st::multivariate_normal::logpdf(in("mvn_x", t), in("mvn_mean", t), in("mvn_cov", t));
  });
  both("mvn_pdf", [](DType t) {
    return st::multivariate_normal::pdf(in("mvn_x", t), in("mvn_mean", t), in("mvn_cov", t));
  });
  // A scalar covariance is cov * I; a scalar mean is the 1-d case.
  both("mvn_logpdf_scalar_cov", [](DType t) {
    return st::multivariate_normal::logpdf(in("mvn_x", t), in("mvn_mean", t), 1.5);
  });
  both("mvn1_logpdf",
       [](DType t) { return st::multivariate_normal::logpdf(in("mvn1_x", t), 0.5, 2.0); });
  // Batch dims of cov broadcast against x's: a stack of two covariances (cov and 2 cov)
  // against x [4, 1, 3] gives [4, 2], each column the unbatched result.
  const Array x = golden("mvn_x"), mean = golden("mvn_mean"), cov = golden("mvn_cov");
  const Array covs = jnp::stack({cov, cov * 2.0});
  Array got = st::multivariate_normal::logpdf(jnp::expand_dims(x, 1), mean, covs);
  ASSERT_EQ(got.shape(), (Shape{4, 2}));
  expect_same(got(jx::slice(), 0), st::multivariate_normal::logpdf(x, mean, cov), 1e-14, "cov");
  expect_same(got(jx::slice(), 1), st::multivariate_normal::logpdf(x, mean, cov * 2.0), 1e-14,
              "2 cov");
  // A matrix that is not positive definite gives NaN (Cholesky's), as JAX.
  const Array bad = jnp::array<double>({{1.0, 2.0}, {2.0, 1.0}});
  EXPECT_TRUE(std::isnan(
      st::multivariate_normal::logpdf(f64({0.0, 0.0}), f64({0.0, 0.0}), bad).item<double>()));
}

// ---- derivatives ----

using jx::testing::Fn;

TEST(ScipyStatsMore, Grads) {
  const jx::testing::GradCheckOptions o1{.order = 1, .atol = 1e-6, .rtol = 1e-5};
  const jx::testing::GradCheckOptions o2{.order = 2, .atol = 1e-6, .rtol = 1e-5};
  const Array x = f64({0.5, 2.0, 6.5});
  // gamma.cdf in x, a and scale (a: order 1, igamma has no second derivative in a).
  EXPECT_NO_THROW(check_grads(
      [](const Arrays& v) { return Arrays{st::gamma::cdf(v[0], v[1], 0.0, v[2])}; },
      {x, f64({2.5}), f64({1.5})}, o1));
  EXPECT_NO_THROW(
      check_grads([](const Arrays& v) { return Arrays{st::gamma::sf(v[0], 2.5)}; }, {x}, o2));
  // poisson.cdf in mu (igammac's x-derivative).
  EXPECT_NO_THROW(check_grads(
      [](const Arrays& v) { return Arrays{st::poisson::cdf(f64({0.0, 2.0, 5.0}), v[0])}; },
      {f64({3.5})}, o2));
  // beta.cdf in x, loc and scale (betainc is differentiable in x only).
  EXPECT_NO_THROW(check_grads(
      [](const Arrays& v) { return Arrays{st::beta::cdf(v[0], 2.5, 1.5, v[1], v[2])}; },
      {f64({0.125, 0.5, 0.75}), f64({-0.25}), f64({1.5})}, o2));
  // chi2 in x and df.
  EXPECT_NO_THROW(check_grads(
      [](const Arrays& v) { return Arrays{st::chi2::logpdf(v[0], v[1])}; }, {x, f64({3.0})}, o2));
  EXPECT_NO_THROW(check_grads([](const Arrays& v) { return Arrays{st::chi2::cdf(v[0], v[1])}; },
                              {x, f64({3.0})}, o1));
  // t in every argument.
  EXPECT_NO_THROW(check_grads(
      [](const Arrays& v) { return Arrays{st::t::logpdf(v[0], v[1], v[2], v[3])}; },
      {f64({-3.0, 0.25, 2.0}), f64({4.5}), f64({0.5}), f64({2.0})}, o2));
  // multivariate_normal in x, mean and cov (through cholesky and triangular_solve).
  const Array cov = golden("mvn_cov");
  EXPECT_NO_THROW(check_grads(
      [](const Arrays& v) { return Arrays{st::multivariate_normal::logpdf(v[0], v[1], v[2])}; },
      {golden("mvn_x"), golden("mvn_mean"), cov}, o2));
  // beta.cdf in a: JAX's betainc has no a-derivative, nor has jx's.
  expect_error<jx::ValueError>(
      [] {
        jx::grad([](const Array& a) { return st::beta::cdf(f64({0.5}), a, 1.5).sum(); })(
            f64({2.5}));
      },
      "[regularized_incomplete_beta] is not differentiable with respect to a");
}

// ---- transformations ----

TEST(ScipyStatsMore, JitEqualsEagerAndVmapEqualsLoop) {
  const Array mean = golden("mvn_mean"), cov = golden("mvn_cov");
  const std::vector<std::pair<const char*, std::function<Array(const Array&)>>> fns = {
      {"gamma.cdf", [](const Array& v) { return st::gamma::cdf(v, 2.5, 0.5, 2.0); }},
      {"poisson.cdf", [](const Array& v) { return st::poisson::cdf(v, 3.5); }},
      {"beta.cdf", [](const Array& v) { return st::beta::cdf(v / 4.0, 2.5, 1.5); }},
      {"chi2.logpdf", [](const Array& v) { return st::chi2::logpdf(v, 3.0); }},
      {"t.logpdf", [](const Array& v) { return st::t::logpdf(v, 4.5); }},
      {"mvn.logpdf",
       [&](const Array& v) { return st::multivariate_normal::logpdf(v, mean, cov); }},
  };
  // [2, 4, 3]: vmap maps the leading dim; mvn reads rows of 3.
  const Array x = jnp::reshape(jnp::arange(-2.0, 4.0, 0.25, DType::Float64), {2, 4, 3});
  for (const auto& [name, f] : fns) {
    SCOPED_TRACE(name);
    expect_same(jx::jit(f)(x), f(x), 1e-15, name);
    std::vector<Array> rows = {f(x(0)), f(x(1))};
    expect_same(jx::vmap(f)(x), jnp::stack(rows), 1e-15, name);
  }
  // vmap over the covariance too: one Cholesky per member.
  auto lp = [](const Array& v, const Array& c) {
    return st::multivariate_normal::logpdf(v, f64({0.5, -1.0, 2.0}), c);
  };
  const Array covs = jnp::stack({cov, cov * 3.0});
  expect_same(jx::vmap(lp)(x, covs), jnp::stack({lp(x(0), cov), lp(x(1), cov * 3.0)}), 1e-14,
              "mvn over cov");
}

TEST(ScipyStatsMore, Errors) {
  expect_error<jx::ValueError>(
      [] { st::multivariate_normal::logpdf(jnp::zeros({3}), jnp::zeros({3}), jnp::zeros({2, 2})); },
      {"[multivariate_normal.logpdf] got incompatible shapes", "mean (3,)", "(..., 3, 3)",
       "(2, 2)"});
  expect_error<jx::ValueError>(
      [] { st::multivariate_normal::logpdf(jnp::zeros({3}), jnp::zeros({3}), jnp::zeros({3})); },
      "got (3,)");
  expect_error<jx::ShapeError>([] { st::gamma::cdf(jnp::zeros({3}), jnp::zeros({2})); },
                               "[gamma.cdf]");
  expect_error<jx::ShapeError>(
      [] { st::t::logpdf(jnp::zeros({3}), 2.0, jnp::zeros({4})); }, "[t.logpdf]");
}

}  // namespace
