// Samplers: JAX's known answers (../shared/reference/prng_known_answers.md: doctests for the
// default mode, testRandomDistributionValues for the legacy stream), goldens from
// threefry_ref.py (tests/golden/gen_random.py), dtypes and shapes, the one-pass uniform
// kernel against the composition of primitives, and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "jx/jx.h"
#include "random/internal.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
using jx::Array;

#include "golden/random_golden.inc"

namespace {

struct Mode {
  explicit Mode(bool partitionable) : s(jx::config::threefry_partitionable, partitionable) {}
  jx::config::Scoped s;
};

struct Composed {
  Composed() { jr::detail::force_composed = true; }
  ~Composed() { jr::detail::force_composed = false; }
};

uint32_t fbits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

void expect_close(const Array& a, const std::vector<double>& want, double rtol, double atol = 1e-6,
                  double scale = 1.0) {
  auto v = a.to_vector<double>();
  for (double& x : v) x *= scale;
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_NEAR(v[i], want[i], atol + rtol * std::abs(want[i])) << "element " << i;
}

// ---- default (partitionable) mode ----

TEST(Uniform, DocstringValue) {
  Array u = jr::uniform(jr::PRNGKey(0));
  EXPECT_EQ(u.dtype(), jx::float32);
  EXPECT_EQ(u.ndim(), 0);
  EXPECT_NEAR(u.item<double>(), 0.947667, 1e-6);
}

TEST(Uniform, InitializerValuesDefaultMode) {
  // jax.nn.initializers.uniform(10.0)(key(42), (2, 3)) = 10 * uniform(key(42), (2, 3)).
  Array u = jr::uniform(jr::PRNGKey(42), {2, 3});
  auto v = u.to_vector<float>();
  const double want[] = {4.887095, 6.797972, 6.162715, 5.610161, 4.506446, 5.858659};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(10.0 * v[size_t(i)], want[i], 2e-6 * want[i]) << i;
}

TEST(Uniform, GoldensBothModesFastAndComposed) {
  for (const auto& g : kUniformGolden) {
    Mode m(g.partitionable);
    Array key = jr::PRNGKey(g.seed);
    Array u = jr::uniform(key, {g.n}, jx::float32, g.lo, g.hi);
    auto v = u.to_vector<float>();
    for (int i = 0; i < g.n; ++i)
      EXPECT_EQ(fbits(v[size_t(i)]), g.bits[size_t(i)])
          << "seed " << g.seed << " [" << g.lo << ", " << g.hi << ") part " << g.partitionable << " i "
          << i;
    // The composition rounds the product and the sum separately where XLA fuses them; they
    // agree wherever the product is exact ([0,1), normal's range) and within an ulp elsewhere.
    // (Double rounding: at most half an ulp of the product, which cancellation can make
    // several ulps of the result.)
    Composed c;
    auto w = jr::uniform(key, {g.n}, jx::float32, g.lo, g.hi).to_vector<float>();
    for (int i = 0; i < g.n; ++i) {
      float want;
      uint32_t b = g.bits[size_t(i)];
      std::memcpy(&want, &b, 4);
      if (g.lo == 0.0f && g.hi == 1.0f) EXPECT_EQ(fbits(w[size_t(i)]), b);
      else EXPECT_NEAR(w[size_t(i)], want, (g.hi - g.lo) * 0x1p-24);
    }
  }
}

TEST(Uniform, FastPathEqualsCompositionOnLargeArrays) {
  for (bool part : {true, false}) {
    Mode m(part);
    for (jx::DType dt : {jx::float32, jx::float64}) {
      Array key = jr::PRNGKey(77);
      Array a = jr::uniform(key, {1001, 301}, dt);
      Composed c;
      Array b = jr::uniform(key, {1001, 301}, dt);
      EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>()) << jx::dtype_name(dt) << part;
    }
  }
}

TEST(Uniform, DtypesShapesAndRanges) {
  Array key = jr::PRNGKey(3);
  for (jx::DType dt : {jx::float16, jx::bfloat16, jx::float32, jx::float64}) {
    Array u = jr::uniform(key, {4, 1000}, dt, -2.0, 3.0);
    EXPECT_EQ(u.dtype(), dt);
    EXPECT_FALSE(u.weak_type());
    EXPECT_EQ(u.shape(), (jx::Shape{4, 1000}));
    auto v = u.to_vector<double>();
    for (double x : v) {
      EXPECT_GE(x, -2.0);
      EXPECT_LT(x, 3.0);
    }
  }
  EXPECT_EQ(jr::uniform(key, {0, 3}).shape(), (jx::Shape{0, 3}));
  // float16 takes 16 random bits, bfloat16 8 (nmant < 8), as JAX.
  auto h = jr::uniform(key, {5}, jx::float16).to_vector<float>();
  auto b16 = jr::bits(key, {5}, jx::uint16).to_vector<uint32_t>();
  for (size_t i = 0; i < 5; ++i) {
    uint16_t hb = uint16_t((b16[i] >> 6) | 0x3C00u);
    EXPECT_EQ(h[i], float(jx::half(0.0f)) + (jx::half::to_float(hb) - 1.0f)) << i;
  }
  auto bf = jr::uniform(key, {5}, jx::bfloat16).to_vector<float>();
  auto b8 = jr::bits(key, {5}, jx::uint8).to_vector<uint32_t>();
  for (size_t i = 0; i < 5; ++i) {
    uint32_t fb = (uint32_t((b8[i] >> 1) | 0x3F80u)) << 16;
    float f;
    std::memcpy(&f, &fb, 4);
    EXPECT_EQ(bf[i], f - 1.0f) << i;
  }
  // minval/maxval broadcast against shape.
  Array lo = jnp::array<float>({0.f, 10.f, 20.f});
  Array u = jr::uniform(key, {2, 3}, jx::float32, lo, jnp::array<float>({1.f, 11.f, 21.f}));
  auto v = u.to_vector<float>();
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_GE(v[i], float(10 * (i % 3)));
    EXPECT_LT(v[i], float(10 * (i % 3) + 1));
  }
}

TEST(Normal, DefaultModeShapeAndRelationToUniform) {
  Array key = jr::PRNGKey(11);
  Array z = jr::normal(key, {3, 4});
  EXPECT_EQ(z.dtype(), jx::float32);
  EXPECT_EQ(z.shape(), (jx::Shape{3, 4}));
  // z = sqrt(2) * erfinv(u) with u uniform on [nextafter(-1, 0), 1).
  auto u = jr::uniform(key, {3, 4}, jx::float32, std::nextafter(-1.0f, 0.0f), 1.0f).to_vector<double>();
  auto v = z.to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_NEAR(std::erf(v[i] / std::sqrt(2.0)), u[i], 1e-6) << i;
  EXPECT_EQ(jr::normal(key, {2}, jx::float64).dtype(), jx::float64);
  EXPECT_EQ(jr::normal(key, {2}, jx::bfloat16).dtype(), jx::bfloat16);
}

// ---- legacy stream: testRandomDistributionValues (partitionable=False) ----

TEST(LegacyValues, RandomDistributionValues) {
  Mode m(false);
  auto key = [](uint32_t s) { return jr::PRNGKey(s); };
  expect_close(jr::uniform(key(1338574713), {5}), {0.298671, 0.073213, 0.873356, 0.260549, 0.412797},
               2e-6);
  expect_close(jr::normal(key(1193674498), {5}),
               {-1.173234, -1.511662, 0.070593, -0.099764, 1.052845}, 2e-6);
  EXPECT_EQ(jr::randint(key(1319372649), {5}, 0, 10).to_vector<int32_t>(),
            (std::vector<int32_t>{0, 5, 7, 7, 5}));
  expect_close(jr::truncated_normal(key(2846034731u), 0.0, 2.0, jx::Shape{5}),
               {0.582807, 1.709771, 0.159513, 0.861376, 0.36148}, 2e-6);
  EXPECT_EQ(jr::bernoulli(key(1612777541), 0.5, jx::Shape{5}).to_vector<bool>(),
            (std::vector<bool>{false, true, true, true, false}));
  expect_close(jr::exponential(key(1942292768), {5}),
               {0.526067, 0.043046, 0.039932, 0.46427, 0.123886}, 2e-6);
  expect_close(jr::gumbel(key(1179715317), {5}), {2.06701, 0.911726, 0.145736, 0.185427, -0.00711},
               2e-6);
  expect_close(jr::laplace(key(1291781963), {5}),
               {0.578939, -0.204902, 0.555733, 0.911053, -0.96456}, 2e-6);
  expect_close(jr::logistic(key(1466238935), {5}),
               {0.19611, -1.709053, -0.274093, -0.208322, -1.675489}, 2e-6);
  expect_close(jr::cauchy(key(1175914230), {5}), {-0.088416, -10.169713, 3.49677, -1.18056, 0.34556},
               1e-5);
  expect_close(jr::pareto(key(1192560388), 0.5, jx::Shape{5}),
               {2.751398, 1.281863, 87.85448, 1.254542, 2.824487}, 2e-6);
  expect_close(jr::weibull_min(key(1921059088), 1.0, 1.0, {5}),
               {1.605863, 0.841809, 0.224218, 0.4826, 0.027901}, 2e-6);
  EXPECT_EQ(jr::rademacher(key(1719994501), {5}).to_vector<int32_t>(),
            (std::vector<int32_t>{-1, -1, -1, -1, 1}));
  expect_close(jr::maxwell(key(1331627891), {5}), {3.070779, 0.908479, 1.521317, 0.875551, 1.306137},
               2e-6);
}

TEST(LegacyValues, GammaFamilyAndPoisson) {
  Mode m(false);
  auto key = [](uint32_t s) { return jr::PRNGKey(s); };
  expect_close(jr::gamma(key(1038747260), 0.8, jx::Shape{5}),
               {0.824221, 1.724476, 0.502882, 5.386132, 0.685543}, 1e-5);
  expect_close(jr::loggamma(key(1440221118), 0.8, jx::Shape{5}),
               {0.240559, -3.575443, -0.450946, -2.161372, -2.943277}, 1e-5);
  expect_close(jr::beta(key(923534869), 0.8, 0.9, jx::Shape{5}),
               {0.13259, 0.824893, 0.948363, 0.964155, 0.235448}, 1e-5);
  expect_close(jr::dirichlet(key(1590822961), jnp::array<float>({0.5f, 0.6f, 0.7f}), jx::Shape{2}),
               {0.003128, 0.009694, 0.987178, 0.025938, 0.479091, 0.494971}, 1e-4, 1e-5);
  EXPECT_EQ(jr::poisson(key(1349191556), 5.0, jx::Shape{5}).to_vector<int32_t>(),
            (std::vector<int32_t>{7, 3, 6, 11, 6}));
  // test_loggamma_nan_corner_case.
  expect_close(jr::loggamma(jnp::array<uint32_t>({3200590325u, 713258242u}), 0.0), {-4.595436},
               1e-5);
}

TEST(LegacyValues, InitializerDocstrings) {
  // jax.nn.initializers docstrings, key(42), (2, 3): uniform(10.0) and normal(5.0).
  Mode m(false);
  Array key = jr::PRNGKey(42);
  expect_close(jr::uniform(key, {2, 3}),
               {7.298188, 8.691938, 8.7230015, 2.0818567, 1.8662417, 5.5022564}, 2e-6, 1e-6, 10.0);
  expect_close(jr::normal(key, {2, 3}),
               {3.0613258, 5.6129413, 5.6866574, -4.063663, -4.4520254, 0.63115686}, 2e-6, 1e-6, 5.0);
  // truncated_normal(5.0): truncated_normal(key, -2, 2) * 5 / 0.87962566103423978.
  // truncated_normal(5.0): truncated_normal(key, -2, 2) * stddev.
  expect_close(jr::truncated_normal(key, -2.0, 2.0, jx::Shape{2, 3}),
               {2.9047365, 5.2338114, 5.29852, -3.836303, -4.192359, 0.6022964}, 2e-6, 1e-6, 5.0);
}

TEST(LegacyValues, MultivariateNormalAndOrthogonal) {
  Mode m(false);
  // testRandomDistributionValues: mean = ones((1, 3)), cov = eye(3), shape (2,).
  Array mean = jnp::ones({1, 3});
  Array cov = jnp::array<float>({1, 0, 0, 0, 1, 0, 0, 0, 1}, jx::Shape{3, 3});
  Array mv = jr::multivariate_normal(jr::PRNGKey(3497659512u), mean, cov, jx::Shape{2});
  EXPECT_EQ(mv.shape(), (jx::Shape{2, 3}));
  expect_close(mv, {1.067826, 1.215599, 0.234166, -0.237534, 1.32591, 1.413987}, 2e-6);
  // jax.nn.initializers.orthogonal()(key(42), (2, 3)) is random.orthogonal(key, 2, m=3).
  Array q = jr::orthogonal(jr::PRNGKey(42), 2, {}, jx::float32, 3);
  EXPECT_EQ(q.shape(), (jx::Shape{2, 3}));
  expect_close(q, {0.39026976, 0.72495741, -0.56756169, 0.88047469, -0.47409311, -1.3157725e-04},
               1e-5, 1e-5);
}

TEST(MultivariateNormal, FactorAndShapes) {
  Array key = jr::PRNGKey(6);
  // cov = L L^T with L = [[2, 0], [1, 3]]: samples = mean + L z, z = normal(key, shape + (2,)).
  Array cov = jnp::array<float>({4, 2, 2, 10}, jx::Shape{2, 2});
  Array mean = jnp::array<float>({1, -1});
  Array x = jr::multivariate_normal(key, mean, cov, jx::Shape{5});
  EXPECT_EQ(x.shape(), (jx::Shape{5, 2}));
  auto z = jr::normal(key, {5, 2}).to_vector<double>();
  auto v = x.to_vector<double>();
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(v[2 * i], 1 + 2 * z[2 * i], 1e-5);
    EXPECT_NEAR(v[2 * i + 1], -1 + z[2 * i] + 3 * z[2 * i + 1], 1e-5);
  }
  // Batch shape from broadcasting mean and cov.
  EXPECT_EQ(jr::multivariate_normal(key, jnp::zeros({4, 2}), cov).shape(), (jx::Shape{4, 2}));
  try {
    jr::multivariate_normal(key, mean, jnp::zeros({3, 3}));
    FAIL();
  } catch (const jx::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[multivariate_normal] requires cov.shape == (..., n, n) for n=2"),
              std::string::npos)
        << e.what();
  }
}

TEST(Orthogonal, OrthonormalAndShapes) {
  Array key = jr::PRNGKey(9);
  for (auto [n, m] : {std::pair<int64_t, int64_t>{4, 4}, {5, 3}, {3, 5}}) {
    Array q = jr::orthogonal(key, n, {2}, jx::float64, m);
    EXPECT_EQ(q.shape(), (jx::Shape{2, n, m}));
    auto v = q.to_vector<double>();
    const int64_t k = std::min(n, m);
    for (int b = 0; b < 2; ++b) {
      const double* Q = v.data() + b * n * m;
      // Columns orthonormal when n >= m, rows when n <= m.
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < k; ++j) {
          double dot = 0;
          for (int64_t t = 0; t < std::max(n, m); ++t)
            dot += n >= m ? Q[t * m + i] * Q[t * m + j] : Q[i * m + t] * Q[j * m + t];
          EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-12);
        }
    }
  }
}

TEST(Randint, GoldensBothModes) {
  for (const auto& g : kRandintGolden) {
    Mode m(g.partitionable);
    EXPECT_EQ(jr::randint(jr::PRNGKey(g.seed), {g.n}, g.lo, g.hi).to_vector<int32_t>(), g.v)
        << "seed " << g.seed << " [" << g.lo << ", " << g.hi << ")";
  }
}

TEST(Randint, DtypesAndBounds) {
  Array key = jr::PRNGKey(8);
  for (jx::DType dt : {jx::int8, jx::uint8, jx::int16, jx::uint16, jx::int32, jx::uint32, jx::int64,
                       jx::uint64}) {
    Array r = jr::randint(key, {2000}, 0, 100, dt);
    EXPECT_EQ(r.dtype(), dt);
    for (int64_t x : r.to_vector<int64_t>()) {
      EXPECT_GE(x, 0);
      EXPECT_LT(x, 100);
    }
  }
  // maxval beyond the dtype's range: the whole range is reachable (0..255 for uint8).
  auto u8 = jr::randint(key, {20000}, 0, 256, jx::uint8).to_vector<int32_t>();
  EXPECT_EQ(*std::max_element(u8.begin(), u8.end()), 255);
  EXPECT_EQ(*std::min_element(u8.begin(), u8.end()), 0);
  auto i8 = jr::randint(key, {20000}, -1000, 1000, jx::int8).to_vector<int32_t>();
  EXPECT_EQ(*std::min_element(i8.begin(), i8.end()), -128);
  EXPECT_EQ(*std::max_element(i8.begin(), i8.end()), 127);
  // maxval <= minval gives minval.
  for (int32_t x : jr::randint(key, {10}, 5, 5).to_vector<int32_t>()) EXPECT_EQ(x, 5);
  for (int32_t x : jr::randint(key, {10}, 5, -3).to_vector<int32_t>()) EXPECT_EQ(x, 5);
  // Array bounds broadcast against shape.
  auto v = jr::randint(key, {1000, 2}, jnp::array<int32_t>({0, 100}), jnp::array<int32_t>({10, 105}))
               .to_vector<int32_t>();
  for (size_t i = 0; i < v.size(); ++i) {
    if (i % 2 == 0) EXPECT_TRUE(v[i] >= 0 && v[i] < 10);
    else EXPECT_TRUE(v[i] >= 100 && v[i] < 105);
  }
}

TEST(Permutation, GoldensBothModes) {
  for (const auto& g : kPermGolden) {
    Mode m(g.partitionable);
    EXPECT_EQ(jr::permutation(jr::PRNGKey(g.seed), g.n).to_vector<int32_t>(), g.v)
        << "seed " << g.seed << " n " << g.n;
  }
}

TEST(Permutation, ArraysAlongAxes) {
  Array key = jr::PRNGKey(4);
  Array x = jnp::array<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, jx::Shape{3, 4});
  auto perm4 = jr::permutation(key, 4).to_vector<int32_t>();
  auto p = jr::permutation(key, x, 1).to_vector<float>();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(p[size_t(4 * r + c)], float(4 * r + perm4[size_t(c)]));
  auto perm3 = jr::permutation(key, 3).to_vector<int32_t>();
  auto q = jr::permutation(key, x, 0).to_vector<float>();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(q[size_t(4 * r + c)], float(4 * perm3[size_t(r)] + c));
  // 1-d arrays are sorted by their own keys: permutation(key, arange(n)) == permutation(key, n).
  EXPECT_EQ(jr::permutation(key, jnp::array<int32_t>({0, 1, 2, 3, 4, 5, 6})).to_vector<int32_t>(),
            jr::permutation(key, 7).to_vector<int32_t>());
  // independent: each row is a permutation of itself.
  auto ind = jr::permutation(key, x, 1, true).to_vector<float>();
  for (int r = 0; r < 3; ++r) {
    std::vector<float> row(ind.begin() + 4 * r, ind.begin() + 4 * r + 4);
    std::sort(row.begin(), row.end());
    for (int c = 0; c < 4; ++c) EXPECT_EQ(row[size_t(c)], float(4 * r + c));
  }
  EXPECT_EQ(jr::shuffle(key, x, 1).to_vector<float>(), ind);
  EXPECT_EQ(jr::permutation(key, 0).shape(), (jx::Shape{0}));
}

TEST(Choice, ShapesAndSemantics) {
  Array key = jr::PRNGKey(12);
  Array a = jnp::array<float>({10, 20, 30, 40, 50});
  Array c = jr::choice(key, a, {2, 3});
  EXPECT_EQ(c.shape(), (jx::Shape{2, 3}));
  auto idx = jr::randint(key, {2, 3}, 0, 5).to_vector<int32_t>();
  auto cv = c.to_vector<float>();
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(cv[i], 10.0f * float(idx[i] + 1));
  // Without replacement: the first draws of the permutation.
  auto nr = jr::choice(key, 5, {3}, false).to_vector<int32_t>();
  auto perm = jr::permutation(key, 5).to_vector<int32_t>();
  EXPECT_EQ(nr, (std::vector<int32_t>(perm.begin(), perm.begin() + 3)));
  // With p: zero-probability entries never appear; without replacement, distinct.
  Array p = jnp::array<float>({0.0f, 0.5f, 0.0f, 0.5f, 0.0f});
  for (int32_t i : jr::choice(key, 5, {100}, true, p).to_vector<int32_t>()) EXPECT_TRUE(i == 1 || i == 3);
  auto two = jr::choice(key, 5, {2}, false, p).to_vector<int32_t>();
  std::sort(two.begin(), two.end());
  EXPECT_EQ(two, (std::vector<int32_t>{1, 3}));
  // Along an axis of a 2-d array.
  Array m = jnp::array<float>({1, 2, 3, 4, 5, 6}, jx::Shape{2, 3});
  EXPECT_EQ(jr::choice(key, m, {4}, true, std::nullopt, 1).shape(), (jx::Shape{2, 4}));
  try {
    jr::choice(key, 3, {4}, false);
    FAIL();
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[choice] cannot take a larger sample"), std::string::npos);
  }
}

TEST(Categorical, ShapesAndDeterministicLimits) {
  Array key = jr::PRNGKey(2);
  Array logits = jnp::array<float>({-1e9f, 0.0f, -1e9f, -1e9f, -1e9f, 0.0f}, jx::Shape{2, 3});
  Array c = jr::categorical(key, logits);
  EXPECT_EQ(c.dtype(), jx::int32);
  EXPECT_EQ(c.to_vector<int32_t>(), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(jr::categorical(key, logits, -1, jx::Shape{5, 2}).shape(), (jx::Shape{5, 2}));
  EXPECT_EQ(jr::categorical(key, logits, 0).shape(), (jx::Shape{3}));
  // Without replacement: k = 3 draws of 3 categories is a permutation per row.
  Array w = jr::categorical(key, jnp::array<float>({0.f, 1.f, 2.f}), -1, jx::Shape{3}, false);
  auto v = w.to_vector<int32_t>();
  std::sort(v.begin(), v.end());
  EXPECT_EQ(v, (std::vector<int32_t>{0, 1, 2}));
}

TEST(Samplers, DtypesShapesAndRanges) {
  Array key = jr::PRNGKey(21);
  for (jx::DType dt : {jx::float16, jx::bfloat16, jx::float32, jx::float64}) {
    const jx::Shape s{3, 7};
    for (Array x : {jr::normal(key, s, dt), jr::exponential(key, s, dt), jr::gumbel(key, s, dt),
                    jr::laplace(key, s, dt), jr::logistic(key, s, dt), jr::cauchy(key, s, dt),
                    jr::truncated_normal(key, -1.0, 1.0, s, dt), jr::gamma(key, 2.0, s, dt),
                    jr::beta(key, 2.0, 3.0, s, dt)}) {
      EXPECT_EQ(x.dtype(), dt);
      EXPECT_EQ(x.shape(), s);
    }
    // truncated_normal's interval is open: clipped to nextafter of each bound.
    for (double x : jr::truncated_normal(key, -1.0, 1.0, jx::Shape{500}, dt).to_vector<double>()) {
      EXPECT_GT(x, -1.0) << jx::dtype_name(dt);
      EXPECT_LT(x, 1.0) << jx::dtype_name(dt);
    }
  }
  EXPECT_EQ(jr::bernoulli(key, 0.3, jx::Shape{4}).dtype(), jx::bool_);
  EXPECT_EQ(jr::bernoulli(key, jnp::array<float>({0.1f, 0.9f})).shape(), (jx::Shape{2}));
  EXPECT_EQ(jr::rademacher(key, {4}, jx::float32).dtype(), jx::float32);
  EXPECT_EQ(jr::poisson(key, 3.0, jx::Shape{4}).dtype(), jx::int32);
  EXPECT_EQ(jr::dirichlet(key, jnp::array<float>({1, 2, 3})).shape(), (jx::Shape{3}));
  EXPECT_EQ(jr::gumbel(key, {6}, jx::float32, "high").shape(), (jx::Shape{6}));
  EXPECT_EQ(jr::bernoulli(key, 0.5, jx::Shape{6}, "high").shape(), (jx::Shape{6}));
}

TEST(Samplers, Errors) {
  Array key = jr::PRNGKey(0);
  auto expect_msg = [](auto&& f, const char* text) {
    try {
      f();
      ADD_FAILURE() << "no error for " << text;
    } catch (const jx::Error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expect_msg([&] { jr::uniform(key, {3}, jx::int32); },
             "[uniform] dtype argument to `uniform` must be a float dtype, got int32");
  expect_msg([&] { jr::normal(key, {3}, jx::uint8); }, "[normal] dtype argument");
  expect_msg([&] { jr::uniform(key, {-1}); }, "[uniform] shape (-1,) has a negative dimension");
  expect_msg([&] { jr::uniform(jnp::array<uint32_t>({1, 2, 3})); }, "[uniform] expects a PRNG key");
  expect_msg([&] { jr::normal(jr::split(key, 3)); }, "[normal] accepts a single key");
  expect_msg([&] { jr::randint(key, {3}, 0, 5, jx::float32); },
             "[randint] only accepts integer dtypes, got float32");
  expect_msg([&] { jr::bernoulli(key, 1); }, "[bernoulli] probability `p` must have a floating dtype");
  expect_msg([&] { jr::uniform(key, {3}, jx::float32, jnp::zeros({2, 3})); },
             "[uniform] parameter shapes must be broadcast-compatible with shape argument");
  expect_msg([&] { jr::uniform(key, {3}, jx::float32, jnp::zeros({2})); },
             "[uniform] incompatible shapes for broadcasting: (3,) and (2,)");
  expect_msg([&] { jr::gamma(key, 1.0, jx::Shape{2}, jx::int32); }, "[gamma] dtype argument");
  expect_msg([&] { jr::permutation(key, 2.5); }, "[permutation] x must be an integer");
}

}  // namespace
