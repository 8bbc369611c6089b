// The rejection samplers (gamma, loggamma, beta, dirichlet, chisquare, t, poisson) under
// tracing: staged with lax::while_loop they must give what the eager loops give (both follow
// jax/_src/random.py; the eager path is checked against JAX's values in samplers_test and
// stats_test). Covers alpha < 1 (the boost step), lam below and above 10 (poisson's Knuth vs
// transformed rejection), jit with a traced key and/or traced parameters, and vmap over keys
// against a loop over the same keys. gamma under jit, t and poisson are compared bit for bit;
// loggamma, beta, dirichlet and vmapped gamma within a few ulps (see alphas16).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "jx/jit.h"
#include "jx/jx.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace lax = jx::lax;
using jx::Array;
using jx::DType;
using jx::Shape;

namespace {

// Bitwise equality of values, dtype and shape (to_vector<double> is exact for every
// float/int dtype used here, so equal doubles mean equal bits, -0 and NaN aside; neither
// occurs in these samples).
void expect_same(const Array& got, const Array& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  const auto g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_EQ(g[i], w[i]) << "element " << i;
}

// Equality up to `max_ulp` units in the last place (float32/float64), for the samplers whose
// final step is lax::log / exp / log1p: see alphas16 for why those are not yet bit-exact.
int64_t ordered_bits(double v, DType dt) {
  if (dt == DType::Float32) {
    int32_t b;
    const float f = float(v);
    std::memcpy(&b, &f, 4);
    return b < 0 ? int64_t(INT32_MIN) - b : b;
  }
  int64_t b;
  std::memcpy(&b, &v, 8);
  return b < 0 ? INT64_MIN - b : b;
}

void expect_ulps(const Array& got, const Array& want, int64_t max_ulp) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  const auto g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    const int64_t d = ordered_bits(g[i], got.dtype()) - ordered_bits(w[i], got.dtype());
    EXPECT_LE(d < 0 ? -d : d, max_ulp) << "element " << i << ": " << g[i] << " vs " << w[i];
  }
}

// Relative closeness, for dirichlet: its softmax takes exp(lg - max(lg)), which turns a 1-ulp
// difference of a log-gamma of size ~20 into ~20 ulps of a tiny probability.
void expect_rel(const Array& got, const Array& want, double rtol) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  const auto g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_LE(std::fabs(g[i] - w[i]), rtol * std::fabs(w[i])) << "element " << i;
}

Array row(const Array& keys, int64_t i) {
  return lax::reshape(lax::slice_in_dim(keys, i, i + 1, 1, 0), Shape{2});
}

// The outputs of f(row(keys, i)) stacked along a new leading axis.
template <class F>
Array loop_over_keys(F f, const Array& keys) {
  std::vector<Array> outs;
  for (int64_t i = 0; i < keys.shape()[0]; ++i) {
    Array o = f(row(keys, i));
    Shape s{1};
    for (int64_t d : o.shape()) s.push_back(d);
    outs.push_back(lax::reshape(o, s));
  }
  return lax::concatenate(outs, 0);
}

// A mix of alphas below 1 (boosted), at 1, and above; some make the inner redraw loop run.
Array alphas(DType dt) {
  return jnp::array(std::vector<double>{0.05, 0.3, 0.9, 1.0, 1.5, 2.5, 7.0, 40.0, 0.6, 3.0, 0.2,
                                        12.0},
                    Shape{12})
      .astype(dt);
}

// Sixteen alphas, for the samplers whose output goes through lax::log / exp / pow. The CPU
// kernels of those (src/backend/cpu/vmath.h) call libmvec in the vector body of a loop and
// scalar libm in its tail, which differ in the last bit for some inputs, so a value depends
// on where it sits in the array, and eager and compiled execution (and vmap's [keys*n]
// arrays vs a loop's [n]) lay them out differently: e.g. lax::log of the 12 values
// alpha - 1/3 differs between eager and jit in elements 8..11 only. The samples themselves
// (accept/reject decisions) agree; only these last-ulp roundings differ, hence expect_ulps.
Array alphas16(DType dt) {
  return jnp::array(std::vector<double>{0.05, 0.3, 0.9, 1.0, 1.5, 2.5, 7.0, 40.0, 0.6, 3.0, 0.2,
                                        12.0, 0.75, 5.5, 1.25, 0.1},
                    Shape{16})
      .astype(dt);
}

}  // namespace

TEST(TracedGamma, JitEqualsEagerTracedKeyAndAlpha) {
  for (DType dt : {DType::Float32, DType::Float64}) {
    for (int seed : {0, 1, 42}) {
      Array key = jr::PRNGKey(seed);
      Array a = alphas(dt);
      auto f = jx::jit([dt](const Array& k, const Array& al) { return jr::gamma(k, al, {}, dt); });
      expect_same(f(key, a), jr::gamma(key, a, {}, dt));
      // Reshaped parameters and an explicit broadcast shape.
      Array a2 = lax::reshape(a, Shape{3, 4});
      auto g = jx::jit(
          [dt](const Array& k, const Array& al) { return jr::gamma(k, al, Shape{2, 3, 4}, dt); });
      expect_same(g(key, a2), jr::gamma(key, a2, Shape{2, 3, 4}, dt));
    }
  }
}

TEST(TracedGamma, JitWithOnlyKeyOrOnlyAlphaTraced) {
  Array key = jr::PRNGKey(7);
  Array a = alphas(DType::Float32);
  auto key_only = jx::jit([a](const Array& k) { return jr::gamma(k, a); });
  auto alpha_only = jx::jit([key](const Array& al) { return jr::gamma(key, al); });
  const Array want = jr::gamma(key, a);
  expect_same(key_only(key), want);
  expect_same(alpha_only(a), want);
  // Scalar alpha below 1 with a shape: all lanes share alpha but not keys.
  auto scalar = jx::jit([](const Array& k) { return jr::gamma(k, Array(0.25f), Shape{64}); });
  expect_same(scalar(key), jr::gamma(key, Array(0.25f), Shape{64}));
}

TEST(TracedGamma, LoggammaAndChisquareAndTUnderJit) {
  Array key = jr::PRNGKey(3);
  Array a = alphas16(DType::Float32);
  auto lg = jx::jit([](const Array& k, const Array& al) { return jr::loggamma(k, al); });
  expect_ulps(lg(key, a), jr::loggamma(key, a), 4);
  auto chi = jx::jit([](const Array& k, const Array& df) { return jr::chisquare(k, df); });
  expect_ulps(chi(key, a), jr::chisquare(key, a), 4);
  auto tt = jx::jit([](const Array& k, const Array& df) { return jr::t(k, df, Shape{16}); });
  expect_same(tt(key, a), jr::t(key, a, Shape{16}));
}

TEST(TracedGamma, VmapOverKeysEqualsLoop) {
  Array keys = jr::split(jr::PRNGKey(11), 5);
  Array a = alphas16(DType::Float32);
  auto f = [a](const Array& k) { return jr::gamma(k, a); };
  expect_ulps(jx::vmap(f)(keys), loop_over_keys(f, keys), 4);
  auto lg = [a](const Array& k) { return jr::loggamma(k, a, {}, DType::Float64); };
  expect_ulps(jx::vmap(lg)(keys), loop_over_keys(lg, keys), 4);
  // vmap inside jit.
  expect_ulps(jx::jit([f](const Array& k) { return jx::vmap(f)(k); })(keys),
              loop_over_keys(f, keys), 4);
}

TEST(TracedBeta, JitAndVmapEqualEager) {
  Array key = jr::PRNGKey(5);
  Array a = alphas16(DType::Float32);
  Array b = lax::rev(a, {0});
  auto f = jx::jit([](const Array& k, const Array& x, const Array& y) { return jr::beta(k, x, y); });
  expect_ulps(f(key, a, b), jr::beta(key, a, b), 4);
  auto g = jx::jit([](const Array& k) {
    return jr::beta(k, Array(0.5), Array(2.0), Shape{4, 4}, DType::Float64);
  });
  // float64 with a = 0.5: the sample is exp(log(u) / a)-like near 1e-3, where the 1-ulp
  // differences of jitted and eager log/exp (libmvec's variants differ by CPU) grow to ~13
  // ulps (seen on an Intel Xeon); a wrong sampler would be off by far more.
  expect_ulps(g(key), jr::beta(key, Array(0.5), Array(2.0), Shape{4, 4}, DType::Float64), 32);
  Array keys = jr::split(key, 4);
  auto per_key = [a, b](const Array& k) { return jr::beta(k, a, b); };
  expect_ulps(jx::vmap(per_key)(keys), loop_over_keys(per_key, keys), 4);
}

TEST(TracedDirichlet, JitAndVmapEqualEager) {
  Array key = jr::PRNGKey(9);
  Array alpha = jnp::array(std::vector<float>{0.1f, 0.5f, 1.0f, 4.0f}, Shape{4});
  auto f = jx::jit([](const Array& k, const Array& al) { return jr::dirichlet(k, al, Shape{4}); });
  expect_rel(f(key, alpha), jr::dirichlet(key, alpha, Shape{4}), 4e-6);
  Array alpha2 = jnp::array(
      std::vector<float>{0.3f, 2.0f, 8.0f, 0.7f, 0.9f, 1.1f, 0.2f, 3.0f}, Shape{2, 4});
  auto g = jx::jit([](const Array& k, const Array& al) { return jr::dirichlet(k, al); });
  expect_rel(g(key, alpha2), jr::dirichlet(key, alpha2), 4e-6);
  Array keys = jr::split(key, 4);
  auto per_key = [alpha](const Array& k) { return jr::dirichlet(k, alpha); };
  expect_rel(jx::vmap(per_key)(keys), loop_over_keys(per_key, keys), 4e-6);
}

TEST(TracedPoisson, JitEqualsEagerBothAlgorithms) {
  // Below 10: Knuth; 10 and above: transformed rejection; 0 gives 0.
  Array lam = jnp::array(
      std::vector<float>{0.0f, 0.5f, 3.0f, 9.9f, 10.0f, 25.0f, 300.0f, 1.0f, 12.5f}, Shape{9});
  for (int seed : {0, 1, 2}) {
    Array key = jr::PRNGKey(seed);
    auto f = jx::jit([](const Array& k, const Array& l) { return jr::poisson(k, l); });
    const Array want = jr::poisson(key, lam);
    const Array got = f(key, lam);
    expect_same(got, want);
    EXPECT_EQ(got.to_vector<int32_t>()[0], 0);  // lam == 0 is exactly 0
    // Only-knuth and only-rejection arrays, an int64 result and a broadcast shape.
    auto g = jx::jit([](const Array& k) {
      return jr::poisson(k, Array(4.0f), Shape{2, 8}, DType::Int64);
    });
    expect_same(g(key), jr::poisson(key, Array(4.0f), Shape{2, 8}, DType::Int64));
    auto h = jx::jit([](const Array& k, const Array& l) { return jr::poisson(k, l, Shape{16}); });
    expect_same(h(key, Array(50.0f)), jr::poisson(key, Array(50.0f), Shape{16}));
  }
}

TEST(TracedPoisson, VmapOverKeysEqualsLoop) {
  Array lam = jnp::array(std::vector<float>{0.5f, 3.0f, 9.9f, 10.0f, 25.0f, 300.0f}, Shape{6});
  Array keys = jr::split(jr::PRNGKey(13), 4);
  auto f = [lam](const Array& k) { return jr::poisson(k, lam); };
  expect_same(jx::vmap(f)(keys), loop_over_keys(f, keys));
  // vmap over lam with one key: each lam is a separate draw from the same key.
  Array key = jr::PRNGKey(13);
  auto over_lam = [key](const Array& l) { return jr::poisson(key, l, Shape{3}); };
  Array got = jx::vmap(over_lam)(lam);
  for (int64_t i = 0; i < 6; ++i)
    expect_same(lax::reshape(lax::slice_in_dim(got, i, i + 1, 1, 0), Shape{3}),
                over_lam(lax::reshape(lax::slice_in_dim(lam, i, i + 1, 1, 0), Shape{})));
}
