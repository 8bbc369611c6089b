// The jit cache: hits and misses by signature (shapes, static values, weak types), the
// miss explanations of log_compiles, thread safety, LRU eviction by bytes, compile counts
// of grad(jit(f)) in a loop, donate_argnums and debug_nans.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <thread>

#include "jx/jx.h"

namespace jxtest_cache {

using jx::Array;

struct Config {
  Array scale;
  bool train = true;
};
JX_PYTREE(Config, scale, train)

}  // namespace jxtest_cache

namespace {

namespace jnp = jx::numpy;
using jx::Array;
using jxtest_cache::Config;

class JitCache : public ::testing::Test {
 protected:
  void SetUp() override {
    jx::clear_jit_cache();
    jx::reset_jit_stats();
  }
  void TearDown() override { jx::set_jit_cache_bytes(int64_t(1) << 30); }
};

Array ones(std::initializer_list<int64_t> shape) { return jnp::ones(jx::Shape(shape), jx::float32); }

TEST_F(JitCache, SameSignatureHitsNewShapeMisses) {
  auto f = jx::jit([](const Array& x) { return x * 2.0f; });
  f(ones({3}));
  jx::JitStats s = jx::jit_stats();
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.compiles, 1);
  f(ones({3}));
  f(jnp::array<float>({5, 6, 7}));
  s = jx::jit_stats();
  EXPECT_EQ(s.hits, 2);
  EXPECT_EQ(s.compiles, 1);
  f(ones({4}));                     // new shape
  f(ones({3}).astype(jx::float64));  // new dtype
  s = jx::jit_stats();
  EXPECT_EQ(s.misses, 3);
  EXPECT_EQ(s.compiles, 3);
  EXPECT_EQ(s.traces, 3);
}

TEST_F(JitCache, StaticValueAndWeakTypeChangesMiss) {
  auto f = jx::jit([](const Array& x, const Config& c) { return c.train ? x * c.scale : x; });
  Config c{jnp::array<float>({2}), true};
  f(ones({2}), c);
  f(ones({2}), c);
  c.train = false;
  Array r = f(ones({2}), c);
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{1, 1}));
  jx::JitStats s = jx::jit_stats();
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.misses, 2);
  // A C++ scalar is a weakly typed f32[]; a typed one is not: two signatures, as in JAX.
  auto g = jx::jit([](const Array& x) { return x + 1.0f; });
  Array weak = 2.0f;
  Array strong = jnp::array<float>({2}).reshape({});
  EXPECT_TRUE(g(weak).weak_type());
  EXPECT_FALSE(g(strong).weak_type());
  EXPECT_EQ(jx::jit_stats().misses, 4);
}

TEST_F(JitCache, ExplainsEachMiss) {
  jx::config::Scoped log(jx::config::log_compiles, true);
  auto f = jx::jit([](const Array& x, const Config& c) { return x * c.scale; }, {.name = "step"});
  Config c{jnp::array<float>({2}), true};
  ::testing::internal::CaptureStderr();
  f(jnp::zeros({128, 784}), c);
  f(jnp::zeros({64, 784}), c);
  c.train = false;
  f(jnp::zeros({64, 784}), c);
  f(jnp::zeros({64, 784}), c);  // a hit: nothing logged
  std::string log_text = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log_text.find("[jit] compiling 'step' for (f32[128,784], f32[1]): first call"), std::string::npos)
      << log_text;
  EXPECT_NE(log_text.find("[jit] compiling 'step' for (f32[64,784], f32[1]): cache miss: argument 0: "
                          "f32[128,784] -> f32[64,784]"),
            std::string::npos)
      << log_text;
  EXPECT_NE(log_text.find("cache miss: static argument 1/train: true -> false"), std::string::npos) << log_text;
  size_t lines = 0;
  for (char ch : log_text) lines += ch == '\n';
  EXPECT_EQ(lines, 3u) << log_text;
}

TEST_F(JitCache, ExplainsWeakTypeChange) {
  jx::config::Scoped log(jx::config::log_compiles, true);
  auto f = jx::jit([](const Array& x) { return x; }, {.name = "ident"});
  ::testing::internal::CaptureStderr();
  f(Array(1.0f));
  f(jnp::array<float>({1}).reshape({}));
  std::string log_text = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log_text.find("cache miss: argument 0: f32[]{weak_type=True} -> f32[]"), std::string::npos)
      << log_text;
}

TEST_F(JitCache, TwoThreadsShareOneCompile) {
  auto f = jx::jit([](const Array& x) { return jnp::sum(x * x); });
  Array x = jnp::arange(100).astype(jx::float32);
  float want = 0;
  for (int i = 0; i < 100; ++i) want += float(i * i);
  std::atomic<int> wrong{0};
  auto work = [&] {
    for (int i = 0; i < 50; ++i)
      if (f(x).item<float>() != want) ++wrong;
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  EXPECT_EQ(wrong.load(), 0);
  jx::JitStats s = jx::jit_stats();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_EQ(s.hits + s.misses, 100);
}

TEST_F(JitCache, EvictsLeastRecentlyUsedBeyondTheBudget) {
  Array table = jnp::ones({1024}, jx::float32);  // a 4 KB captured constant per entry
  auto f = jx::jit([table](const Array& x) { return jnp::sum(table) + x; });
  f(ones({1}));
  int64_t one_entry = jx::jit_stats().bytes;
  EXPECT_GE(one_entry, 4096);
  // Room for one entry only: each new signature evicts the least recently used one.
  jx::set_jit_cache_bytes(one_entry + one_entry / 2);
  f(ones({2}));
  EXPECT_EQ(jx::jit_stats().evictions, 1);
  EXPECT_EQ(jx::jit_stats().entries, 1);
  f(ones({2}));  // still there: a hit
  EXPECT_EQ(jx::jit_stats().compiles, 2);
  f(ones({1}));  // evicted: compiles again
  EXPECT_EQ(jx::jit_stats().compiles, 3);
  EXPECT_EQ(jx::jit_stats().evictions, 2);
  jx::set_jit_cache_bytes(int64_t(1) << 30);
  f(ones({1}));
  EXPECT_EQ(jx::jit_stats().compiles, 3);
}

TEST_F(JitCache, GradOfJitInALoopCompilesOnce) {
  auto f = jx::jit([](const Array& x) { return jnp::sum(jnp::tanh(x) * x); });
  auto g = jx::grad(f);
  Array x = jnp::array<float>({0.1f, 0.2f});
  g(x);
  jx::JitStats first = jx::jit_stats();
  EXPECT_GE(first.compiles, 2);  // the primal half and the transposed tangent half
  for (int i = 0; i < 5; ++i) g(x * float(i));
  jx::JitStats after = jx::jit_stats();
  EXPECT_EQ(after.compiles, first.compiles);
  EXPECT_EQ(after.traces, first.traces);
  // vmap(jit) too.
  auto v = jx::vmap(f);
  v(jnp::ones({3, 2}));
  int64_t c = jx::jit_stats().compiles;
  v(jnp::zeros({3, 2}));
  EXPECT_EQ(jx::jit_stats().compiles, c);
}

TEST_F(JitCache, DonatedArgumentsAreConsumed) {
  auto step = jx::jit([](const Array& p, const Array& g) { return p - g * 0.5f; },
                      {.donate_argnums = {0}, .name = "step"});
  Array p = jnp::array<float>({1, 2, 3});
  Array g = jnp::array<float>({2, 2, 2});
  Array p2 = step(p, g);
  EXPECT_EQ(p2.to_vector<float>(), (std::vector<float>{0, 1, 2}));
  EXPECT_FALSE(p.is_concrete());  // deleted by the donation
  EXPECT_THROW(p + 1.0f, jx::Error);
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{2, 2, 2}));  // not donated
  Array p3 = step(p2, g);
  EXPECT_EQ(p3.to_vector<float>(), (std::vector<float>{-1, 0, 1}));
  // The same array passed twice is copied, never deleted under the other argument.
  Array q = jnp::array<float>({4});
  EXPECT_EQ(step(q, q).to_vector<float>(), (std::vector<float>{2}));
}

TEST_F(JitCache, DonateArgnumsOutOfRange) {
  auto f = jx::jit([](const Array& x) { return x; }, {.donate_argnums = {2}, .name = "f"});
  try {
    f(ones({1}));
    FAIL() << "expected ValueError";
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[jit] donate_argnums holds 2 but 'f' is called with 1 arguments"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(jx::jit([](const Array& x) { return x; }, {.donate_argnums = {-1}}), jx::ValueError);
}

TEST_F(JitCache, DebugNansNamesThePrimitive) {
  auto step = jx::jit([](const Array& x) { return jnp::log(x) * 2.0f + 1.0f; }, {.name = "step"});
  Array bad = jnp::array<float>({1, -1});
  // Off: NaN flows out silently.
  EXPECT_TRUE(std::isnan(step(bad).to_vector<float>()[1]));
  jx::config::Scoped on(jx::config::debug_nans, true);
  EXPECT_EQ(step(jnp::array<float>({1})).to_vector<float>(), (std::vector<float>{1}));
  try {
    step(bad);
    FAIL() << "expected FloatingPointError";
  } catch (const jx::FloatingPointError& e) {
    EXPECT_EQ(std::string(e.what()), "[jit] debug_nans: invalid value (nan) produced by 'log' in step");
  }
  // Inside a nested jit, the inner primitive is named.
  auto inner = jx::jit([](const Array& x) { return jnp::sqrt(x); }, {.name = "inner"});
  auto outer = jx::jit([&](const Array& x) { return inner(x - 2.0f) + 1.0f; }, {.name = "outer"});
  try {
    outer(jnp::array<float>({1}));
    FAIL() << "expected FloatingPointError";
  } catch (const jx::FloatingPointError& e) {
    EXPECT_NE(std::string(e.what()).find("produced by 'sqrt'"), std::string::npos) << e.what();
  }
}

}  // namespace
