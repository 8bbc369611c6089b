// Statistical checks on 1M draws per distribution: mean and variance within 6 standard
// errors, and the Kolmogorov-Smirnov distance to the exact CDF below 0.003 (the 1e-7 tail
// of the KS distribution at n = 1e6 is ~0.0028; a wrong transform misses by far more).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "jx/jx.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
using jx::Array;

namespace {

constexpr int64_t kN = 1'000'000;
constexpr double kPi = 3.14159265358979323846;

double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

struct Moments {
  double mean, var;
};

Moments moments(const std::vector<double>& v) {
  double m = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return {m, s / double(v.size())};
}

double ks(std::vector<double> v, const std::function<double(double)>& cdf) {
  std::sort(v.begin(), v.end());
  const double n = double(v.size());
  double d = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    double f = cdf(v[i]);
    d = std::max({d, std::abs(f - double(i) / n), std::abs(double(i + 1) / n - f)});
  }
  return d;
}

// Checks mean/var (with the distribution's 4th central moment for the variance's error)
// and, given a CDF, the KS distance.
void check(const char* what, const Array& x, double mean, double var, double mu4,
           const std::function<double(double)>& cdf = nullptr) {
  auto v = x.to_vector<double>();
  ASSERT_EQ(int64_t(v.size()), kN) << what;
  Moments m = moments(v);
  const double n = double(v.size());
  EXPECT_NEAR(m.mean, mean, 6 * std::sqrt(var / n)) << what;
  EXPECT_NEAR(m.var, var, 6 * std::sqrt((mu4 - var * var) / n)) << what;
  if (cdf) {
    EXPECT_LT(ks(v, cdf), 0.003) << what;
  }
}

Array key() { return jr::PRNGKey(2024); }

TEST(Stats, Uniform) {
  check("uniform", jr::uniform(key(), {kN}), 0.5, 1.0 / 12, 1.0 / 80,
        [](double x) { return std::clamp(x, 0.0, 1.0); });
  check("uniform[-2,6)", jr::uniform(key(), {kN}, jx::float32, -2.0, 6.0), 2.0, 64.0 / 12,
        std::pow(8.0, 4) / 80, [](double x) { return std::clamp((x + 2) / 8, 0.0, 1.0); });
  check("uniform f64", jr::uniform(key(), {kN}, jx::float64), 0.5, 1.0 / 12, 1.0 / 80,
        [](double x) { return std::clamp(x, 0.0, 1.0); });
}

TEST(Stats, UniformLegacyStream) {
  jx::config::Scoped s(jx::config::threefry_partitionable, false);
  check("uniform legacy", jr::uniform(key(), {kN}), 0.5, 1.0 / 12, 1.0 / 80,
        [](double x) { return std::clamp(x, 0.0, 1.0); });
  check("normal legacy", jr::normal(key(), {kN}), 0, 1, 3, Phi);
}

TEST(Stats, Normal) {
  check("normal", jr::normal(key(), {kN}), 0, 1, 3, Phi);
  check("normal f64", jr::normal(key(), {kN}, jx::float64), 0, 1, 3, Phi);
}

TEST(Stats, TruncatedNormal) {
  const double a = -0.5, b = 2.0;
  const double Z = Phi(b) - Phi(a);
  auto pdf = [](double x) { return std::exp(-x * x / 2) / std::sqrt(2 * kPi); };
  const double mean = (pdf(a) - pdf(b)) / Z;
  const double var = 1 + (a * pdf(a) - b * pdf(b)) / Z - mean * mean;
  check("truncated_normal", jr::truncated_normal(key(), a, b, jx::Shape{kN}), mean, var, 3 * var * var,
        [&](double x) { return std::clamp((Phi(x) - Phi(a)) / Z, 0.0, 1.0); });
}

TEST(Stats, ExponentialLaplaceLogisticGumbel) {
  check("exponential", jr::exponential(key(), {kN}), 1, 1, 9,
        [](double x) { return x < 0 ? 0 : 1 - std::exp(-x); });
  check("laplace", jr::laplace(key(), {kN}), 0, 2, 24,
        [](double x) { return x < 0 ? 0.5 * std::exp(x) : 1 - 0.5 * std::exp(-x); });
  const double lv = kPi * kPi / 3;
  check("logistic", jr::logistic(key(), {kN}), 0, lv, lv * lv * 4.2,
        [](double x) { return 1 / (1 + std::exp(-x)); });
  const double gv = kPi * kPi / 6;
  check("gumbel", jr::gumbel(key(), {kN}), 0.5772156649, gv, gv * gv * 5.4,
        [](double x) { return std::exp(-std::exp(-x)); });
  check("gumbel high", jr::gumbel(key(), {kN}, jx::float32, "high"), 0.5772156649, gv, gv * gv * 5.4,
        [](double x) { return std::exp(-std::exp(-x)); });
}

TEST(Stats, CauchyParetoWeibull) {
  auto c = jr::cauchy(key(), {kN}).to_vector<double>();
  EXPECT_LT(ks(c, [](double x) { return 0.5 + std::atan(x) / kPi; }), 0.003);
  auto p = jr::pareto(key(), 3.0, jx::Shape{kN}).to_vector<double>();
  EXPECT_LT(ks(p, [](double x) { return x < 1 ? 0 : 1 - std::pow(x, -3.0); }), 0.003);
  check("weibull_min(c=2)", jr::weibull_min(key(), 1.0, 2.0, {kN}), std::sqrt(kPi) / 2, 1 - kPi / 4,
        0.25,  // loose 4th moment bound (the true value is smaller)
        [](double x) { return x < 0 ? 0 : 1 - std::exp(-x * x); });
}

TEST(Stats, GammaBetaDirichlet) {
  check("gamma(2)", jr::gamma(key(), 2.0, jx::Shape{kN}), 2, 2, 3 * 2 * 4 + 6 * 2,
        [](double x) { return x < 0 ? 0 : 1 - std::exp(-x) * (1 + x); });
  check("gamma(0.5)", jr::gamma(key(), 0.5, jx::Shape{kN}), 0.5, 0.5, 3 * 0.25 + 6 * 0.5,
        [](double x) { return x < 0 ? 0 : std::erf(std::sqrt(x)); });
  check("gamma(1) f64", jr::gamma(key(), 1.0, jx::Shape{kN}, jx::float64), 1, 1, 9,
        [](double x) { return x < 0 ? 0 : 1 - std::exp(-x); });
  auto lg = jr::loggamma(key(), 0.5, jx::Shape{kN}).to_vector<double>();
  EXPECT_LT(ks(lg, [](double y) { return std::erf(std::sqrt(std::exp(y))); }), 0.003);
  check("beta(2,1)", jr::beta(key(), 2.0, 1.0, jx::Shape{kN}), 2.0 / 3, 1.0 / 18, 0.02,
        [](double x) { return std::clamp(x * x, 0.0, 1.0); });
  check("beta(0.5,0.5)", jr::beta(key(), 0.5, 0.5, jx::Shape{kN}), 0.5, 1.0 / 8, 0.0234375,
        [](double x) { return 2 / kPi * std::asin(std::sqrt(std::clamp(x, 0.0, 1.0))); });
  Array d = jr::dirichlet(key(), jnp::array<float>({1.f, 2.f, 3.f}), jx::Shape{kN / 3});
  auto dv = d.to_vector<double>();
  double s[3] = {0, 0, 0};
  for (size_t i = 0; i < dv.size(); i += 3) {
    EXPECT_NEAR(dv[i] + dv[i + 1] + dv[i + 2], 1.0, 1e-5);
    for (int j = 0; j < 3; ++j) s[j] += dv[i + size_t(j)];
  }
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(s[j] / double(kN / 3), (j + 1) / 6.0, 0.003) << j;
}

TEST(Stats, ChisquareAndT) {
  check("chisquare(4)", jr::chisquare(key(), 4.0, jx::Shape{kN}), 4, 8, 3 * 64 + 48 * 4,
        [](double x) { return x < 0 ? 0 : 1 - std::exp(-x / 2) * (1 + x / 2); });
  check("t(5)", jr::t(key(), 5.0, {kN}), 0, 5.0 / 3, 100);  // 4th moment 25; bound loose
}

TEST(Stats, Discrete) {
  auto b = jr::bernoulli(key(), 0.3, jx::Shape{kN}).to_vector<double>();
  Moments mb = moments(b);
  EXPECT_NEAR(mb.mean, 0.3, 6 * std::sqrt(0.21 / kN));
  auto bh = jr::bernoulli(key(), 1e-3, jx::Shape{kN}, "high").to_vector<double>();
  EXPECT_NEAR(moments(bh).mean, 1e-3, 6 * std::sqrt(1e-3 / kN));
  auto r = jr::rademacher(key(), {kN}).to_vector<double>();
  EXPECT_NEAR(moments(r).mean, 0, 6 / std::sqrt(double(kN)));
  auto ri = jr::randint(key(), {kN}, 0, 10).to_vector<int32_t>();
  std::vector<double> cnt(10, 0);
  for (int32_t x : ri) cnt[size_t(x)] += 1;
  for (int k = 0; k < 10; ++k) EXPECT_NEAR(cnt[size_t(k)] / kN, 0.1, 6 * std::sqrt(0.09 / kN)) << k;
  for (double lam : {3.0, 25.0}) {  // Knuth and transformed rejection
    auto p = jr::poisson(key(), lam, jx::Shape{kN}).to_vector<double>();
    Moments m = moments(p);
    EXPECT_NEAR(m.mean, lam, 6 * std::sqrt(lam / kN)) << lam;
    EXPECT_NEAR(m.var, lam, 6 * std::sqrt((lam + 2 * lam * lam) / kN)) << lam;
    std::vector<double> hist(200, 0);
    for (double x : p) hist[size_t(std::min(x, 199.0))] += 1;
    double cdf = 0, emp = 0, pmf = std::exp(-lam), d = 0;
    for (int k = 0; k < 100; ++k) {
      cdf += pmf;
      emp += hist[size_t(k)] / kN;
      d = std::max(d, std::abs(cdf - emp));
      pmf *= lam / (k + 1);
    }
    EXPECT_LT(d, 0.003) << lam;
  }
}

TEST(Stats, CategoricalAndChoice) {
  Array logits = jnp::array<float>({0.0f, 1.0f, 2.0f, -1.0f});
  double z = 1 + std::exp(1.0) + std::exp(2.0) + std::exp(-1.0);
  const double p[4] = {1 / z, std::exp(1.0) / z, std::exp(2.0) / z, std::exp(-1.0) / z};
  auto c = jr::categorical(key(), logits, -1, jx::Shape{kN}).to_vector<int32_t>();
  std::vector<double> cnt(4, 0);
  for (int32_t x : c) cnt[size_t(x)] += 1;
  for (int k = 0; k < 4; ++k)
    EXPECT_NEAR(cnt[size_t(k)] / kN, p[k], 6 * std::sqrt(p[k] * (1 - p[k]) / kN)) << k;
  Array pw = jnp::array<float>({0.1f, 0.2f, 0.3f, 0.4f});
  auto ch = jr::choice(key(), 4, {kN}, true, pw).to_vector<int32_t>();
  std::vector<double> cc(4, 0);
  for (int32_t x : ch) cc[size_t(x)] += 1;
  for (int k = 0; k < 4; ++k) {
    double q = 0.1 * (k + 1);
    EXPECT_NEAR(cc[size_t(k)] / kN, q, 6 * std::sqrt(q * (1 - q) / kN)) << k;
  }
}

TEST(Stats, PermutationPositionsUniform) {
  // 200k independent shuffles of 5 items in one call: item 0 lands in each slot w.p. 1/5.
  const int64_t rows = 200000;
  std::vector<int32_t> base(static_cast<size_t>(rows * 5));
  for (size_t i = 0; i < base.size(); ++i) base[i] = int32_t(i % 5);
  Array x = jnp::array<int32_t>(base, jx::Shape{rows, 5});
  auto v = jr::permutation(key(), x, 1, true).to_vector<int32_t>();
  std::vector<double> pos(5, 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int c = 0; c < 5; ++c)
      if (v[size_t(r * 5 + c)] == 0) pos[size_t(c)] += 1;
  for (int c = 0; c < 5; ++c) EXPECT_NEAR(pos[size_t(c)] / rows, 0.2, 6 * std::sqrt(0.16 / rows)) << c;
  auto big = jr::permutation(key(), kN).to_vector<int32_t>();
  std::vector<int32_t> sorted(big);
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < kN; ++i) ASSERT_EQ(sorted[size_t(i)], i);
}

TEST(Stats, MultivariateNormalCovariance) {
  Array cov = jnp::array<float>({2.0f, 0.6f, 0.6f, 1.0f}, jx::Shape{2, 2});
  Array mean = jnp::array<float>({1.0f, -2.0f});
  auto v = jr::multivariate_normal(key(), mean, cov, jx::Shape{kN / 2}).to_vector<double>();
  double m0 = 0, m1 = 0;
  for (size_t i = 0; i < v.size(); i += 2) {
    m0 += v[i];
    m1 += v[i + 1];
  }
  const double n = double(v.size() / 2);
  m0 /= n;
  m1 /= n;
  double c00 = 0, c01 = 0, c11 = 0;
  for (size_t i = 0; i < v.size(); i += 2) {
    c00 += (v[i] - m0) * (v[i] - m0);
    c01 += (v[i] - m0) * (v[i + 1] - m1);
    c11 += (v[i + 1] - m1) * (v[i + 1] - m1);
  }
  EXPECT_NEAR(m0, 1.0, 6 * std::sqrt(2.0 / n));
  EXPECT_NEAR(m1, -2.0, 6 * std::sqrt(1.0 / n));
  EXPECT_NEAR(c00 / n, 2.0, 6 * std::sqrt(2 * 4.0 / n));
  EXPECT_NEAR(c01 / n, 0.6, 6 * std::sqrt((2.0 + 0.36) / n));
  EXPECT_NEAR(c11 / n, 1.0, 6 * std::sqrt(2 * 1.0 / n));
}

TEST(Stats, OrthogonalIsHaar) {
  // For Haar-distributed O(3), each entry has mean 0 and variance 1/3, and det = +-1 with
  // equal probability.
  const int64_t b = kN / 9;
  auto v = jr::orthogonal(key(), 3, {b}).to_vector<double>();
  double s = 0, s2 = 0, pos = 0;
  for (int64_t i = 0; i < b; ++i) {
    const double* q = v.data() + i * 9;
    s += q[0];
    s2 += q[4] * q[4];
    double det = q[0] * (q[4] * q[8] - q[5] * q[7]) - q[1] * (q[3] * q[8] - q[5] * q[6]) +
                 q[2] * (q[3] * q[7] - q[4] * q[6]);
    EXPECT_NEAR(std::abs(det), 1.0, 1e-4);
    pos += det > 0;
  }
  EXPECT_NEAR(s / double(b), 0.0, 6 * std::sqrt(1.0 / 3 / double(b)));
  EXPECT_NEAR(s2 / double(b), 1.0 / 3, 6 * std::sqrt(0.2 / double(b)));
  EXPECT_NEAR(pos / double(b), 0.5, 6 * std::sqrt(0.25 / double(b)));
}

TEST(Stats, BitsAreBalanced) {
  auto b = jr::bits(key(), {kN}).to_vector<uint32_t>();
  for (int bit = 0; bit < 32; bit += 7) {
    double ones = 0;
    for (uint32_t x : b) ones += (x >> bit) & 1u;
    EXPECT_NEAR(ones / kN, 0.5, 6 * 0.5 / std::sqrt(double(kN))) << bit;
  }
}

}  // namespace
