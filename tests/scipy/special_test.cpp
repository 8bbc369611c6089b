// jx::scipy::special: values against SciPy 1.10 float64 goldens (tests/golden/gen_scipy.py)
// in float64 and float32, JAX's own edge values where JAX and SciPy differ (hand-derived
// from jax/_src/scipy/special.py), dtypes, derivatives by check_grads, jit and vmap
// against eager, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
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
namespace sp = jx::scipy::special;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::check_grads;
using jx::testing::expect_error;


using Unary = std::function<Array(const Array&)>;
struct UnaryCase {
  const char* golden;
  const char* input;
  Unary fn;
  double tol64 = kF64;
  double tol32 = kF32;
  bool f32 = true;
  double floor64 = 1.0;  // 0: relative error in float64 (the far tails)
};

const std::vector<UnaryCase>& unary_cases() {
  static const std::vector<UnaryCase> cases = {
      {"erf", "x", sp::erf},
      {"erfc", "x", sp::erfc},
      {"expit", "x", sp::expit},
      {"entr", "x", sp::entr},
      {"erfinv", "erfinv_x", sp::erfinv},
      {"gammaln", "gamma_x", sp::gammaln},
      // 171.5 sits at the edge of float64's range (exp(709.8)): lgamma's last-ulp error
      // is multiplied by 709 there. float32 overflows long before (inf vs 9e307).
      {"gamma", "gamma_x", sp::gamma, 1e-12, kF32, false},
      {"gammasgn", "gamma_x", sp::gammasgn},
      {"digamma", "gamma_x", sp::digamma},
      {"factorial", "factorial_x", sp::factorial},
      {"logit", "logit_x", sp::logit},
      // The normal family is checked by relative error in float64, far tails included
      // (ndtr(-37.5) ~ 5e-308, log_ndtr(7.5) ~ -3e-14).
      {"ndtr", "ndtr_x", sp::ndtr, kF64, kF32, true, 0.0},
      // log_ndtr has JAX's accuracy: series_order 3 leaves 1.5e-11 relative at -20.5, and
      // log(ndtr(x)) for 5 < x <= 8 is log of a number near 1 (1e-16 absolute).
      {"log_ndtr", "ndtr_x", [](const Array& x) { return sp::log_ndtr(x); }, 2e-11, kF32, true,
       1e-5},
      {"ndtri", "ndtri_x", sp::ndtri, kF64, kF32, false, 0.0},  // 1e-300 is not a float32
      {"ndtri32", "ndtri32_x", sp::ndtri, kF64, kF32, true, 0.0},
  };
  return cases;
}

TEST(ScipySpecial, UnaryMatchSciPyFloat64AndFloat32) {
  for (const auto& c : unary_cases()) {
    SCOPED_TRACE(c.golden);
    const Array x = golden(c.input);
    Array y = c.fn(x);
    EXPECT_EQ(y.dtype(), DType::Float64);
    expect_golden(c.golden, y, c.tol64, c.floor64);
    if (!c.f32) continue;
    Array y32 = c.fn(x.astype(DType::Float32));
    EXPECT_EQ(y32.dtype(), DType::Float32);
    expect_golden(c.golden, y32, c.tol32);
  }
}

TEST(ScipySpecial, GammaInFloat32UpToItsRange) {
  // The float32 gamma on the finite part of the grid (up to 30.5: 4.8e31 < 3.4e38).
  const std::vector<double> xs = golden("gamma_x").to_vector<double>();
  const std::vector<double> want = golden("gamma").to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!(std::fabs(xs[i]) <= 30.5)) continue;
    const float got = sp::gamma(Array(float(xs[i]))).item<float>();
    EXPECT_NEAR(got, want[i], kF32 * (1 + std::fabs(want[i]))) << "gamma(" << xs[i] << ")";
  }
}

TEST(ScipySpecial, BinaryMatchSciPy) {
  const Array a = golden("beta_a"), b = golden("beta_b");
  // SciPy's cdflib reduces a < 8 by recurrence before algdiv; JAX's (and so jx's)
  // lgamma(a) + algdiv(a, b) agrees to ~6e-11 relative at (2.5, 1e6).
  expect_golden("betaln", sp::betaln(a, b), 1e-10);
  expect_golden("beta", sp::beta(a, b), 1e-10);
  const Array x = golden("xlogy_x"), y = golden("xlogy_y");
  expect_golden("xlogy", sp::xlogy(x, y), kF64);
  expect_golden("xlog1py", sp::xlog1py(x, y), kF64);
  expect_golden("xlogy", sp::xlogy(x.astype(DType::Float32), y.astype(DType::Float32)), kF32);
  const Array p = golden("rel_entr_p"), q = golden("rel_entr_q");
  expect_golden("rel_entr", sp::rel_entr(p, q), kF64);
  expect_golden("kl_div", sp::kl_div(p, q), kF64);
  const Array m = golden("multigammaln_a");
  for (int d : {1, 2, 3, 5})
    expect_golden("multigammaln_d" + std::to_string(d), sp::multigammaln(m, d), kF64);
  expect_golden("multigammaln_d3", sp::multigammaln(m.astype(DType::Float32), 3), kF32);
}

TEST(ScipySpecial, LogsumexpMatchesSciPy) {
  const Array a = golden("lse_a");
  expect_golden("lse_all", sp::logsumexp(a), kF64);
  expect_golden("lse_axis0", sp::logsumexp(a, 0), kF64);
  expect_golden("lse_axis1", sp::logsumexp(a, -1), kF64);
  expect_golden("lse_axis1_keepdims", sp::logsumexp(a, 1, std::nullopt, true), kF64);
  expect_golden("lse_axis1", sp::logsumexp(a.astype(DType::Float32), 1), kF32);

  const Array m = golden("lse_m"), b = golden("lse_b");
  auto [out, sign] = sp::logsumexp_with_sign(m, 1, b);
  expect_golden("lse_b_axis1", out, kF64);
  expect_golden("lse_b_axis1_sign", sign, 0);
  expect_golden("lse_b_axis1_nosign", sp::logsumexp(m, 1, b), kF64);
  auto [out_all, sign_all] = sp::logsumexp_with_sign(m, jx::none, b);
  expect_golden("lse_b_all", out_all, kF64);
  expect_golden("lse_b_all_sign", sign_all, 0);
  expect_golden("lse_bv_axis1", sp::logsumexp(m, 1, golden("lse_bv")), kF64);

  expect_golden("softmax_all", sp::softmax(m), kF64);
  expect_golden("softmax_axis1", sp::softmax(m, 1), kF64);
  expect_golden("log_softmax_all", sp::log_softmax(m), kF64);
  expect_golden("log_softmax_axis0", sp::log_softmax(m, 0), kF64);
}

TEST(ScipySpecial, LogsumexpEdgeValues) {
  // All -inf gives -inf (sign 0), +inf gives +inf, a size-0 axis gives -inf, as JAX.
  const Array a = f64({-kInf, -kInf});
  EXPECT_EQ(sp::logsumexp(a).item<double>(), -kInf);
  auto [out, sign] = sp::logsumexp_with_sign(a);
  EXPECT_EQ(out.item<double>(), -kInf);
  EXPECT_EQ(sign.item<double>(), 0.0);
  EXPECT_EQ(sp::logsumexp(f64({1.0, kInf})).item<double>(), kInf);
  EXPECT_TRUE(std::isnan(sp::logsumexp(f64({1.0, kNaN})).item<double>()));
  Array empty = sp::logsumexp(jnp::zeros({2, 0}, DType::Float64), 1);
  EXPECT_EQ(empty.to_vector<double>(), std::vector<double>({-kInf, -kInf}));
  // b == 0 drops the entry even where a is +inf; integers become float32.
  EXPECT_NEAR(sp::logsumexp(f64({kInf, 0.0}), jx::none, f64({0.0, 1.0})).item<double>(), 0.0, 0);
  EXPECT_EQ(sp::logsumexp(jnp::array<int32_t>({1, 2})).dtype(), DType::Float32);
}

TEST(ScipySpecial, JaxEdgeValuesWhereSciPyDiffers) {
  // gamma and gammasgn: +-0 give +-inf and +-1, the poles and -inf give NaN (SciPy 1.10:
  // inf, 0 and 1).
  const Array x = f64({0.0, -0.0, -1.0, -4.0, -kInf});
  const std::vector<double> g = sp::gamma(x).to_vector<double>();
  EXPECT_EQ(g[0], kInf);
  EXPECT_EQ(g[1], -kInf);
  EXPECT_TRUE(std::isnan(g[2]) && std::isnan(g[3]) && std::isnan(g[4]));
  const std::vector<double> s = sp::gammasgn(x).to_vector<double>();
  EXPECT_EQ(s[0], 1.0);
  EXPECT_EQ(s[1], -1.0);
  EXPECT_TRUE(std::isnan(s[2]) && std::isnan(s[3]) && std::isnan(s[4]));
  // ndtri saturates outside [0, 1] (SciPy: NaN).
  EXPECT_EQ(sp::ndtri(f64({-0.5, 1.5})).to_vector<double>(), std::vector<double>({-kInf, kInf}));
  // xlogy(0, y) is 0 whatever y is, NaN included (SciPy: NaN).
  EXPECT_EQ(sp::xlogy(f64({0.0, 0.0}), f64({kNaN, -1.0})).to_vector<double>(),
            std::vector<double>({0.0, 0.0}));
  // multigammaln with d == 0 is the empty product: 0.
  EXPECT_EQ(sp::multigammaln(f64({2.5}), 0).to_vector<double>(), std::vector<double>({0.0}));
}

TEST(ScipySpecial, LogNdtrFarTailsAndItsDerivative) {
  // d/dx log ndtr(x) = pdf(x) / cdf(x), which the custom rule forms in log space: at -40
  // (cdf ~ 1e-350, below float64) it is exp(-800 - log sqrt(2 pi) - log_ndtr(-40)) ~ 40.02.
  const double log_ndtr_m40 = -804.6084420137539;  // SciPy 1.10
  const double want = std::exp(-800.0 - 0.5 * std::log(2.0 * std::numbers::pi) - log_ndtr_m40);
  const double got =
      jx::grad([](const Array& x) { return sp::log_ndtr(x); })(jnp::scalar(-40.0, DType::Float64))
          .item<double>();
  EXPECT_NEAR(got, want, 1e-10 * want);
  // float32: the series starts at -10 and still holds at -40.
  const float got32 =
      jx::grad([](const Array& x) { return sp::log_ndtr(x); })(Array(-40.0f)).item<float>();
  EXPECT_NEAR(got32, want, 1e-4 * want);  // float32 log_ndtr(-40) is -804.6 +- 5e-5
  // ndtri's derivative in its tail region (z < 8): 1 / pdf(ndtri(p)).
  const Array p = jnp::scalar(1e-5, DType::Float64);
  const double xq = sp::ndtri(p).item<double>();
  const double dq = jx::grad(sp::ndtri)(p).item<double>();
  const double want_dq = std::sqrt(2.0 * std::numbers::pi) * std::exp(0.5 * xq * xq);
  EXPECT_NEAR(dq, want_dq, 1e-12 * want_dq);
  // Far above, the derivative is the (tiny) pdf / 1.
  const double up =
      jx::grad([](const Array& x) { return sp::log_ndtr(x); })(jnp::scalar(10.0, DType::Float64))
          .item<double>();
  EXPECT_NEAR(up, std::exp(-50.0) / std::sqrt(2.0 * std::numbers::pi), 1e-12 * up);
}

TEST(ScipySpecial, Dtypes) {
  const Array i = jnp::array<int32_t>({0, 1, 2});
  for (const Unary& f : std::vector<Unary>{sp::erf, sp::erfc, sp::gammaln, sp::gamma, sp::expit,
                                           sp::entr, sp::digamma, sp::factorial, sp::logit})
    EXPECT_EQ(f(i).dtype(), DType::Float32);
  EXPECT_EQ(sp::xlogy(i, i).dtype(), DType::Float32);
  EXPECT_EQ(sp::betaln(i, 2.5).dtype(), DType::Float32);
  // A weak C++ scalar keeps the array's dtype.
  const Array x = f64({0.5, 2.0});
  EXPECT_EQ(sp::xlogy(x, 3.0).dtype(), DType::Float64);
  EXPECT_EQ(sp::beta(2.0, x).dtype(), DType::Float64);
  EXPECT_EQ(sp::xlogy(x.astype(DType::Float32), 3.0).dtype(), DType::Float32);
  EXPECT_EQ(sp::logsumexp(x.astype(DType::Float32), jx::none, x).dtype(), DType::Float64);
  EXPECT_EQ(sp::ndtri(x.astype(DType::Float32) / 4.0).dtype(), DType::Float32);
}

// ---- derivatives (float64, interior points) ----

using jx::testing::Fn;

Fn unary_fn(Unary f) {
  return [f](const std::vector<Array>& a) { return std::vector<Array>{f(a[0])}; };
}

TEST(ScipySpecial, GradsOfUnaryFunctions) {
  struct Case {
    const char* name;
    Unary fn;
    std::vector<double> at;
    int order = 2;
  };
  const std::vector<Case> cases = {
      {"erf", sp::erf, {-1.5, 0.25, 2.0}},
      {"erfc", sp::erfc, {-1.5, 0.25, 2.0}},
      {"erfinv", sp::erfinv, {-0.75, 0.1, 0.6}},
      {"gammaln", sp::gammaln, {0.5, 2.5, 12.0}},
      {"gamma", sp::gamma, {-1.5, 0.5, 3.25}},
      {"digamma", sp::digamma, {0.5, 2.5, 12.0}, 1},
      {"factorial", sp::factorial, {0.5, 2.5, 4.0}},
      {"expit", sp::expit, {-3.0, 0.25, 2.0}},
      {"logit", sp::logit, {0.1, 0.5, 0.8}},
      {"entr", sp::entr, {0.2, 1.0, 3.5}},
      {"ndtr", sp::ndtr, {-3.0, 0.25, 2.0}},
      // Every log_ndtr branch: series below -20, log(ndtr) between, -ndtr(-x) above 8.
      {"log_ndtr", [](const Array& x) { return sp::log_ndtr(x); }, {-25.0, -3.0, 0.5, 9.0}},
      {"ndtri", sp::ndtri, {0.02, 0.3, 0.5, 0.9}},
      {"multigammaln", [](const Array& a) { return sp::multigammaln(a, 3); }, {1.75, 4.0}},
      {"softmax", [](const Array& a) { return sp::softmax(a); }, {0.5, -1.0, 2.0}},
      {"log_softmax", [](const Array& a) { return sp::log_softmax(a); }, {0.5, -1.0, 2.0}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_NO_THROW(
        check_grads(unary_fn(c.fn), {f64(c.at)}, {.order = c.order, .atol = 1e-5, .rtol = 1e-4}));
  }
}

TEST(ScipySpecial, GradsOfBinaryFunctions) {
  using B = std::function<Array(const Array&, const Array&)>;
  struct Case {
    const char* name;
    B fn;
    std::vector<double> x, y;
  };
  const std::vector<Case> cases = {
      // betaln on both sides of its b >= 8 switch.
      {"betaln", sp::betaln, {0.5, 2.5, 3.0, 12.0}, {1.5, 4.0, 20.0, 9.5}},
      {"beta", sp::beta, {0.5, 2.5, -0.5}, {1.5, 4.0, 2.25}},
      {"xlogy", sp::xlogy, {0.5, -1.5, 2.0}, {0.25, 2.0, 7.0}},
      {"xlog1py", sp::xlog1py, {0.5, -1.5, 2.0}, {-0.25, 2.0, 7.0}},
      {"rel_entr", sp::rel_entr, {0.5, 1.5, 2.0}, {0.25, 2.0, 7.0}},
      {"kl_div", sp::kl_div, {0.5, 1.5, 2.0}, {0.25, 2.0, 7.0}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    B fn = c.fn;
    Fn f = [fn](const std::vector<Array>& a) { return std::vector<Array>{fn(a[0], a[1])}; };
    EXPECT_NO_THROW(check_grads(f, {f64(c.x), f64(c.y)}, {.order = 2, .atol = 1e-5, .rtol = 1e-4}));
  }
}

TEST(ScipySpecial, GradsOfLogsumexp) {
  const Array a = jnp::array<double>({0.5, -1.0, 2.0, 0.25, 1.5, -0.5}, Shape{2, 3});
  const Array b = jnp::array<double>({1.0, 2.0, 0.5, -1.0, 0.5, 1.5}, Shape{2, 3});
  check_grads(
      [](const std::vector<Array>& v) { return std::vector<Array>{sp::logsumexp(v[0], 1)}; }, {a},
      {.order = 2});
  check_grads(
      [](const std::vector<Array>& v) { return std::vector<Array>{sp::logsumexp(v[0], 1, v[1])}; },
      {a, jnp::abs(b)}, {.order = 2});
  // With a negative weight (row 2 sums to -e^0.25 + ... < 0 only partly): the signed
  // version differentiates log|sum| correctly on both signs.
  const Array bneg = jnp::array<double>({1.0, 2.0, 0.5, -3.0, 0.5, 0.25}, Shape{2, 3});
  check_grads(
      [](const std::vector<Array>& v) {
        return std::vector<Array>{sp::logsumexp_with_sign(v[0], 1, v[1]).first};
      },
      {a, bneg}, {.order = 2});
  EXPECT_EQ(sp::logsumexp_with_sign(a, 1, bneg).second.to_vector<double>(),
            std::vector<double>({1.0, -1.0}));
}

// ---- transformations ----

TEST(ScipySpecial, JitEqualsEagerAndVmapEqualsLoop) {
  const Array x = f64({-30.0, -12.0, -2.5, 0.0, 3.0, 9.0});
  const Array p = f64({1e-200, 1e-20, 0.01, 0.3, 0.5, 0.97});
  const std::vector<std::pair<const char*, Unary>> fns = {
      {"log_ndtr", [](const Array& v) { return sp::log_ndtr(v); }},
      {"ndtr", sp::ndtr},
      {"gamma", sp::gamma},
      {"entr", sp::entr},
  };
  for (const auto& [name, f] : fns) {
    SCOPED_TRACE(name);
    expect_same(jx::jit(f)(x), f(x), 4.5e-16, name);  // <= 2 ulps
    expect_same(jx::jit(f)(x.astype(DType::Float32)), f(x.astype(DType::Float32)), 2.4e-7, name);
  }
  expect_same(jx::jit(sp::ndtri)(p), sp::ndtri(p), 4.5e-16, "ndtri");
  // vmap over rows of a [3, 4] batch against a loop.
  const Array m = golden("lse_m"), b = golden("lse_b");
  auto signed_lse = [](const Array& a, const Array& w) {
    auto [out, sign] = sp::logsumexp_with_sign(a, jx::none, w);
    return out * sign;
  };
  auto xlogy = [](const Array& a, const Array& w) { return sp::xlogy(jnp::abs(w), a); };
  std::vector<Array> rows_lse, rows_xlogy;
  for (int64_t i = 0; i < 3; ++i) {
    rows_lse.push_back(signed_lse(m(i), b(i)));
    rows_xlogy.push_back(xlogy(jnp::abs(m(i)), b(i)));
  }
  expect_same(jx::vmap(signed_lse)(m, b), jnp::stack(rows_lse), 1e-15, "lse");
  expect_same(jx::vmap(xlogy)(jnp::abs(m), b), jnp::stack(rows_xlogy), 1e-15, "xlogy");
  auto lnd = [](const Array& v) { return sp::log_ndtr(v); };
  std::vector<Array> rows;
  const Array xs = jnp::reshape(x, {2, 3});
  for (int64_t i = 0; i < 2; ++i) rows.push_back(lnd(xs(i)));
  expect_same(jx::vmap(lnd)(xs), jnp::stack(rows), 1e-15, "log_ndtr");
  EXPECT_EQ(jx::vmap(lnd)(jnp::zeros({0, 3}, DType::Float64)).shape(), (Shape{0, 3}));
}

// ---- errors ----

TEST(ScipySpecial, Errors) {
  const Array a = jnp::zeros({2, 3}, DType::Float64);
  expect_error<jx::ShapeError>([&] { sp::logsumexp(a, 1, jnp::zeros({4})); },
                               {"[logsumexp]", "f64[2,3]", "f32[4]"});
  expect_error<jx::ShapeError>(
      [&] {
        sp::logsumexp_with_sign(a, 1, jnp::zeros({2, 2}));
      },
      {"[logsumexp]", "f32[2,2]"});
  expect_error<jx::IndexError>([&] { sp::logsumexp_with_sign(a, 2); }, "[logsumexp] axis 2");
  expect_error<jx::IndexError>([&] { sp::logsumexp(a, -3); }, "[logsumexp] axis -3");
  expect_error<jx::ShapeError>([&] { sp::xlogy(jnp::zeros({3}), jnp::zeros({4})); },
                               {"[xlogy]", "(3,)", "(4,)"});
  expect_error<jx::ShapeError>([&] { sp::betaln(jnp::zeros({3}), jnp::zeros({2})); }, "[betaln]");
  expect_error<jx::DTypeError>([&] { sp::ndtr(jnp::array<int32_t>({1})); },
                               {"[ndtr]", "float32 and float64", "i32[1]"});
  expect_error<jx::DTypeError>([&] { sp::ndtri(jnp::array<int32_t>({1})); }, "[ndtri]");
  expect_error<jx::DTypeError>([&] { sp::log_ndtr(jnp::zeros({1}, DType::Float16)); },
                               "[log_ndtr]");
  expect_error<jx::ValueError>([&] { sp::log_ndtr(a, 31); }, "[log_ndtr] series_order");
  expect_error<jx::ValueError>([&] { sp::multigammaln(a, -1); }, "[multigammaln]");
}

}  // namespace
