// pmap over CPU devices and the collectives: every collective against values computed by
// hand-written loops, for axis sizes 1, 2 and 3, both ways they run (pmap's replica
// threads meeting in a rendezvous, and vmap(axis_name)'s batching rules); jvp against vjp
// of each linear collective; pmap equals vmap; data-parallel gradient averaging and grad
// of a pmapped loss equal the single-device gradients; errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>

#include "jx/jx.h"
#include "core/array_impl.h"
#include "jx/parallel.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using Fn = std::function<Array(const Array&)>;

class Pmap : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { jx::set_cpu_device_count(3); }
};

// [n, rest...] with distinct, exactly representable values.
Array input(int64_t n, jx::Shape rest) {
  jx::Shape s{n};
  for (int64_t d : rest) s.push_back(d);
  return jnp::reshape(jnp::arange(s.numel()).astype(jx::float32) * 0.5f + 1.0f, s);
}

std::vector<float> values(const Array& a) { return a.astype(jx::float32).to_vector<float>(); }

// f per replica over axis "i", run by pmap and by vmap(axis_name); both must give `want`.
void expect_both_ways(const Fn& f, const Array& x, const std::vector<float>& want, const std::string& what) {
  Array by_pmap = jx::pmap(f, {.axis_name = "i"})(x);
  Array by_vmap = jx::vmap(f, {.axis_name = "i"})(x);
  EXPECT_EQ(values(by_pmap), want) << what << " (pmap)";
  EXPECT_EQ(values(by_vmap), want) << what << " (vmap)";
  EXPECT_EQ(by_pmap.shape(), by_vmap.shape()) << what;
}

TEST_F(Pmap, DevicesAreTheConfiguredCpuDevices) {
  EXPECT_EQ(jx::device_count(), 3);
  EXPECT_EQ(jx::local_device_count(), 3);
  std::vector<jx::Device> d = jx::devices();
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[2].id, 2);
  EXPECT_EQ(d[1].str(), "cpu:1");
}

TEST_F(Pmap, AllReducesMatchLoops) {
  for (int64_t n : {1, 2, 3}) {
    Array x = input(n, {2, 3});
    std::vector<float> xv = values(x), sum(size_t(n * 6)), mx(sum.size()), mn(sum.size());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < 6; ++k) {
        float s = 0, hi = -1e30f, lo = 1e30f;
        for (int64_t j = 0; j < n; ++j) {
          s += xv[size_t(j * 6 + k)];
          hi = std::max(hi, xv[size_t(j * 6 + k)]);
          lo = std::min(lo, xv[size_t(j * 6 + k)]);
        }
        sum[size_t(i * 6 + k)] = s;
        mx[size_t(i * 6 + k)] = hi;
        mn[size_t(i * 6 + k)] = lo;
      }
    std::vector<float> mean = sum;
    for (float& v : mean) v /= float(n);
    expect_both_ways([](const Array& v) { return lax::psum(v, "i"); }, x, sum, "psum n=" + std::to_string(n));
    expect_both_ways([](const Array& v) { return lax::pmean(v, "i"); }, x, mean, "pmean");
    expect_both_ways([](const Array& v) { return lax::pmax(v, "i"); }, x, mx, "pmax");
    expect_both_ways([](const Array& v) { return lax::pmin(v, "i"); }, x, mn, "pmin");
  }
}

TEST_F(Pmap, AllGatherMatchesLoops) {
  for (int64_t n : {1, 2, 3}) {
    Array x = input(n, {2, 3});
    std::vector<float> xv = values(x), axis0, axis1, tiled;
    for (int64_t i = 0; i < n; ++i) {
      axis0.insert(axis0.end(), xv.begin(), xv.end());  // every replica: x itself
      for (int64_t a = 0; a < 2; ++a)                    // [2, n, 3]: x[j][a][b] at [a][j][b]
        for (int64_t j = 0; j < n; ++j)
          for (int64_t b = 0; b < 3; ++b) axis1.push_back(xv[size_t(j * 6 + a * 3 + b)]);
      tiled.insert(tiled.end(), xv.begin(), xv.end());  // [2n, 3]: the rows of every replica
    }
    const std::string tag = " n=" + std::to_string(n);
    expect_both_ways([](const Array& v) { return lax::all_gather(v, "i"); }, x, axis0, "all_gather axis 0" + tag);
    expect_both_ways([](const Array& v) { return lax::all_gather(v, "i", 1); }, x, axis1, "all_gather axis 1" + tag);
    expect_both_ways([](const Array& v) { return lax::all_gather(v, "i", 0, true); }, x, tiled, "all_gather tiled" + tag);
  }
}

TEST_F(Pmap, PsumScatterMatchesLoops) {
  for (int64_t n : {1, 2, 3}) {
    Array x = input(n, {n, 3});  // replica j: [n, 3]
    std::vector<float> xv = values(x), want;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t b = 0; b < 3; ++b) {
        float s = 0;
        for (int64_t j = 0; j < n; ++j) s += xv[size_t((j * n + i) * 3 + b)];
        want.push_back(s);
      }
    expect_both_ways([](const Array& v) { return lax::psum_scatter(v, "i"); }, x, want,
                     "psum_scatter n=" + std::to_string(n));
    Array y = input(n, {2 * n, 3});  // tiled: replica i keeps rows 2i, 2i + 1 of the sum
    std::vector<float> yv = values(y), want_tiled;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t r = 2 * i; r < 2 * i + 2; ++r)
        for (int64_t b = 0; b < 3; ++b) {
          float s = 0;
          for (int64_t j = 0; j < n; ++j) s += yv[size_t((j * 2 * n + r) * 3 + b)];
          want_tiled.push_back(s);
        }
    expect_both_ways([](const Array& v) { return lax::psum_scatter(v, "i", 0, true); }, y, want_tiled,
                     "psum_scatter tiled n=" + std::to_string(n));
  }
}

TEST_F(Pmap, AllToAllMatchesLoops) {
  for (int64_t n : {1, 2, 3}) {
    Array x = input(n, {n, 3});  // replica j: [n, 3]
    std::vector<float> xv = values(x), split0_concat0, split0_concat1;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j)  // [n, 3]: row j is replica j's row i
        for (int64_t b = 0; b < 3; ++b) split0_concat0.push_back(xv[size_t((j * n + i) * 3 + b)]);
      for (int64_t b = 0; b < 3; ++b)  // [3, n]
        for (int64_t j = 0; j < n; ++j) split0_concat1.push_back(xv[size_t((j * n + i) * 3 + b)]);
    }
    const std::string tag = " n=" + std::to_string(n);
    expect_both_ways([](const Array& v) { return lax::all_to_all(v, "i", 0, 0); }, x, split0_concat0,
                     "all_to_all 0->0" + tag);
    expect_both_ways([](const Array& v) { return lax::all_to_all(v, "i", 0, 1); }, x, split0_concat1,
                     "all_to_all 0->1" + tag);
    Array y = input(n, {2 * n, 3});  // tiled, split 0, concat 1: [2, 3n], blocks of 2 rows
    std::vector<float> yv = values(y), tiled;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t b = 0; b < 3; ++b) tiled.push_back(yv[size_t((j * 2 * n + 2 * i + r) * 3 + b)]);
    expect_both_ways([](const Array& v) { return lax::all_to_all(v, "i", 0, 1, true); }, y, tiled,
                     "all_to_all tiled" + tag);
  }
}

TEST_F(Pmap, PpermuteAndAxisIndexMatchLoops) {
  for (int64_t n : {1, 2, 3}) {
    Array x = input(n, {2});
    std::vector<float> xv = values(x), ring, partial, index;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t from = (i + n - 1) % n;
      ring.insert(ring.end(), {xv[size_t(from * 2)], xv[size_t(from * 2 + 1)]});
      const bool gets = n > 1 && i == 1;  // only 0 -> 1
      partial.insert(partial.end(), {gets ? xv[0] : 0.0f, gets ? xv[1] : 0.0f});
      index.push_back(float(i));
    }
    std::vector<std::pair<int64_t, int64_t>> shift;
    for (int64_t j = 0; j < n; ++j) shift.push_back({j, (j + 1) % n});
    const std::string tag = " n=" + std::to_string(n);
    expect_both_ways([&](const Array& v) { return lax::ppermute(v, "i", shift); }, x, ring, "ppermute ring" + tag);
    if (n > 1)
      expect_both_ways([](const Array& v) { return lax::ppermute(v, "i", {{0, 1}}); }, x, partial,
                       "ppermute partial" + tag);
    expect_both_ways([](const Array& v) { return lax::axis_index("i") + v.sum() * 0.0f; }, x, index,
                     "axis_index" + tag);
  }
}

// <jvp(t), c> == <t, vjp(c)> for a linear collective under vmap(axis_name), and its
// gradient computed in pmap's threads equals the same gradient computed by vmap.
TEST_F(Pmap, LinearCollectivesTransposeConsistently) {
  const int64_t n = 3;
  std::vector<std::pair<std::string, Fn>> cases = {
      {"psum", [](const Array& v) { return lax::psum(v, "i"); }},
      {"all_gather", [](const Array& v) { return lax::all_gather(v, "i", 1); }},
      {"psum_scatter", [](const Array& v) { return lax::psum_scatter(v, "i"); }},
      {"all_to_all", [](const Array& v) { return lax::all_to_all(v, "i", 0, 1); }},
      {"ppermute", [](const Array& v) { return lax::ppermute(v, "i", {{0, 2}, {2, 1}}); }},
  };
  Array x = input(n, {n, 2});
  Array t = jnp::cos(x);
  for (auto& [name, f] : cases) {
    auto mapped = jx::vmap(f, {.axis_name = "i"});
    auto [y, ty] = jx::jvp(mapped, std::make_tuple(x), std::make_tuple(t));
    Array c = jnp::sin(y * 3.0f);
    auto [y2, pullback] = jx::vjp(mapped, x);
    Array ct = std::get<0>(pullback(c));
    EXPECT_NEAR((ty * c).sum().item<float>(), (t * ct).sum().item<float>(), 1e-3) << name;
    // The same weighted sum differentiated inside each replica, both ways.
    Fn inner = [f = f](const Array& v) {
      return jx::grad([&](const Array& w) { return (f(w) * jnp::sin(f(w))).sum(); })(v);
    };
    Array g_pmap = jx::pmap(inner, {.axis_name = "i"})(x);
    Array g_vmap = jx::vmap(inner, {.axis_name = "i"})(x);
    EXPECT_TRUE(jnp::allclose(g_pmap, g_vmap, 1e-5, 1e-6).item<bool>()) << name;
  }
}

// The shared gradient checker (forward against central differences, reverse against
// forward, to second order) through every collective, over a named vmap axis of size 3.
TEST_F(Pmap, EveryCollectivePassesTheGradientChecker) {
  std::vector<std::pair<std::string, Fn>> cases = {
      {"psum", [](const Array& v) { return lax::psum(v, "i"); }},
      {"pmean", [](const Array& v) { return lax::pmean(v, "i"); }},
      {"pmax", [](const Array& v) { return lax::pmax(v, "i"); }},
      {"pmin", [](const Array& v) { return lax::pmin(v, "i"); }},
      {"all_gather", [](const Array& v) { return lax::all_gather(v, "i", 0, true); }},
      {"psum_scatter", [](const Array& v) { return lax::psum_scatter(v, "i"); }},
      {"all_to_all", [](const Array& v) { return lax::all_to_all(v, "i", 0, 1); }},
      {"ppermute", [](const Array& v) { return lax::ppermute(v, "i", {{0, 1}, {1, 2}, {2, 0}}); }},
  };
  Array x = jx::testing::rand_f64({3, 3, 2}, 7);
  for (auto& [name, f] : cases) {
    auto mapped = jx::vmap([f = f](const Array& v) { return f(v) * jnp::sin(v.sum()); }, {.axis_name = "i"});
    EXPECT_NO_THROW(jx::testing::check_grads([&](const std::vector<Array>& a) { return std::vector<Array>{mapped(a[0])}; },
                                             {x}))
        << name;
  }
}

TEST_F(Pmap, EqualsVmapWithoutCollectivesAndHonorsAxes) {
  Array x = input(3, {4});
  Array w = jnp::arange(4).astype(jx::float32);
  auto f = [](const Array& a, const Array& b) { return jnp::sin(a) * b + 1.0f; };
  Array p = jx::pmap(f, {.in_axes = {0, jx::none}})(x, w);
  Array v = jx::vmap(f, {.in_axes = {0, jx::none}})(x, w);
  EXPECT_EQ(values(p), values(v));
  // out_axes 1 stacks the replicas second; out_axes none returns the replicated value.
  Array p1 = jx::pmap([](const Array& a) { return a * 2.0f; }, {.out_axes = 1})(x);
  EXPECT_EQ(p1.shape(), (jx::Shape{4, 3}));
  EXPECT_EQ(values(p1), values(jnp::transpose(x * 2.0f)));
  Array total = jx::pmap([](const Array& a) { return lax::psum(a, "i"); }, {.axis_name = "i", .out_axes = jx::none})(x);
  EXPECT_EQ(values(total), values(x.sum(std::vector<int64_t>{0})));
}

// donate_argnums as jit's: the caller's arrays are deleted, the values are those of the
// same step without donation, and a single replica that owns the buffer updates it in
// place. Replicas that share one unmapped argument each work on a copy.
TEST_F(Pmap, DonatedArgumentsAreConsumedAndReusedInPlace) {
  auto step = [](const Array& p, const Array& g) { return p - lax::pmean(g, "i") * 0.5f; };
  for (int64_t n : {1, 2, 3}) {
    auto plain = jx::pmap(step, {.axis_name = "i", .in_axes = {jx::none, 0}, .out_axes = jx::none});
    auto donating = jx::pmap(step, {.axis_name = "i", .in_axes = {jx::none, 0}, .out_axes = jx::none,
                                    .donate_argnums = {0}});
    Array g = input(n, {1000});
    Array want = plain(jnp::ones({1000}), g);
    Array p = jnp::ones({1000}) * 1.0f;
    const void* buffer = jx::detail::raw_data(p);
    Array q = donating(p, g);
    EXPECT_FALSE(p.is_concrete()) << n;
    EXPECT_THROW(p + 1.0f, jx::Error);
    EXPECT_EQ(values(q), values(want)) << n;
    if (n == 1) {
      EXPECT_EQ(jx::detail::raw_data(q), buffer) << "updated in place";
    }
    EXPECT_EQ(values(g), values(input(n, {1000})));  // not donated
  }
  // Mapped donated arguments, and one passed twice (donated and not): kept for the other.
  Array x = input(2, {3});
  Array doubled = jx::pmap([](const Array& a) { return a * 2.0f; }, {.donate_argnums = {0}})(x);
  EXPECT_FALSE(x.is_concrete());
  EXPECT_EQ(values(doubled), values(input(2, {3}) * 2.0f));
  Array y = input(2, {3});
  Array sum = jx::pmap([](const Array& a, const Array& b) { return a + b; }, {.donate_argnums = {0}})(y, y);
  EXPECT_TRUE(y.is_concrete());
  EXPECT_EQ(values(sum), values(input(2, {3}) * 2.0f));
  EXPECT_THROW(jx::pmap([](const Array& a) { return a; }, {.donate_argnums = {1}})(input(1, {1})), jx::ValueError);
  EXPECT_THROW(jx::pmap([](const Array& a) { return a; }, {.donate_argnums = {-1}}), jx::ValueError);
}

Array loss_fn(const Array& w, const Array& x, const Array& y) { return jnp::mean(jnp::square(jnp::matmul(x, w) - y)); }

TEST_F(Pmap, DataParallelGradientAveragingEqualsOneDevice) {
  Array w = jnp::reshape(jnp::arange(8).astype(jx::float32) * 0.1f - 0.3f, {4, 2});
  Array x = jnp::sin(jnp::reshape(jnp::arange(24).astype(jx::float32), {6, 4}));
  Array y = jnp::cos(jnp::reshape(jnp::arange(12).astype(jx::float32), {6, 2}));
  Array single = jx::grad(loss_fn)(w, x, y);
  auto step = jx::pmap(
      [](const Array& w, const Array& xb, const Array& yb) { return lax::pmean(jx::grad(loss_fn)(w, xb, yb), "batch"); },
      {.axis_name = "batch", .in_axes = {jx::none, 0, 0}});
  Array per_device = step(w, jnp::reshape(x, {3, 2, 4}), jnp::reshape(y, {3, 2, 2}));
  ASSERT_EQ(per_device.shape(), (jx::Shape{3, 4, 2}));
  for (int64_t d = 0; d < 3; ++d)
    EXPECT_TRUE(jnp::allclose(per_device(d), single, 1e-5, 1e-7).item<bool>()) << "device " << d;
  // The replicas ran one compiled program.
  jx::reset_jit_stats();
  step(w, jnp::reshape(x, {3, 2, 4}), jnp::reshape(y, {3, 2, 2}));
  EXPECT_EQ(jx::jit_stats().compiles, 0);
  EXPECT_EQ(jx::jit_stats().hits, 3);
}

TEST_F(Pmap, GradAndJitOfAPmappedLossEqualOneDevice) {
  Array w = jnp::arange(3).astype(jx::float32) * 0.25f;
  Array xs = jnp::reshape(jnp::arange(18).astype(jx::float32) * 0.1f, {3, 2, 3});
  auto per_device = jx::pmap([](const Array& w, const Array& xb) { return jnp::sin(xb * w).sum(); },
                             {.axis_name = "d", .in_axes = {jx::none, 0}});
  auto total = [&](const Array& w) { return per_device(w, xs).sum(); };
  auto single = [&](const Array& w) { return jnp::sin(jnp::reshape(xs, {6, 3}) * w).sum(); };
  EXPECT_TRUE(jnp::allclose(jx::grad(total)(w), jx::grad(single)(w), 1e-5, 1e-6).item<bool>());
  EXPECT_NEAR(jx::jit(total)(w).item<float>(), single(w).item<float>(), 1e-4);
}

TEST_F(Pmap, ErrorsNameTheAxisAndTheFix) {
  try {
    lax::psum(jnp::ones({2}), "i");
    FAIL();
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[psum] unbound axis name 'i'"), std::string::npos) << e.what();
  }
  try {
    jx::pmap([](const Array& a) { return a; })(jnp::ones({4, 2}));
    FAIL();
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("size 4 but this process has 3 CPU device(s)"), std::string::npos)
        << e.what();
  }
  // A replica that fails ends the call with its error; the others leave their psum.
  jx::config::Scoped eager(jx::config::disable_jit, true);
  auto f = jx::pmap(
      [](const Array& a) {
        if (lax::axis_index("i").item<int32_t>() == 1) throw std::runtime_error("replica 1 failed");
        return lax::psum(a, "i");
      },
      {.axis_name = "i"});
  try {
    f(jnp::ones({3, 2}));
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "replica 1 failed");
  }
}

}  // namespace

namespace {

// BatchNorm(axis_name) in training: each device normalizes with the whole batch's
// statistics and records the whole batch's running averages, as one device does.
TEST_F(Pmap, BatchNormWithAnAxisNameUsesTheGlobalBatchStatistics) {
  namespace nn = jx::nn;
  Array x = jnp::sin(jnp::reshape(jnp::arange(6 * 4 * 3).astype(jx::float32), {6, 4, 3})) * 2.0f + 0.5f;
  auto apply = [](const jx::Tree& v, const Array& in, const std::optional<std::string>& axis) {
    nn::BatchNorm bn{.use_running_average = false, .momentum = 0.9, .axis_name = axis};
    auto [y, mutated] = bn.apply(v, in, nn::Mutable{"batch_stats"});
    return std::make_pair(y, jx::Tree(mutated["batch_stats"]));
  };
  jx::Tree v = nn::BatchNorm{.use_running_average = false}.init(jx::random::PRNGKey(0), x);
  auto [y_one, stats_one] = apply(v, x, std::nullopt);
  auto per_device = jx::pmap([&](const Array& xb) { return apply(v, xb, "batch"); },
                             {.axis_name = "batch", .out_axes = {0, jx::none}});
  auto [y_three, stats_three] = per_device(jnp::reshape(x, {3, 2, 4, 3}));
  EXPECT_TRUE(jnp::allclose(jnp::reshape(y_three, {6, 4, 3}), y_one, 1e-5, 1e-6).item<bool>());
  EXPECT_TRUE(jnp::allclose(stats_three["mean"].array(), stats_one["mean"].array(), 1e-5, 1e-6).item<bool>());
  EXPECT_TRUE(jnp::allclose(stats_three["var"].array(), stats_one["var"].array(), 1e-5, 1e-6).item<bool>());
}

}  // namespace
