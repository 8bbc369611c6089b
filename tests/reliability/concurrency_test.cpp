// Four threads at once: the same jitted function (first calls racing on the jit cache) and
// one different jitted function each, eager ops (matmul, conv, reductions, random), grad and
// vmap of grad, jit of grad, and checkpoints (a plain save and an asynchronous
// CheckpointManager) to one directory per thread. Every result equals the one the same work
// gives on one thread, and the racing first calls compile no more than one thread does.
// scripts/sanitize --tsan runs this under ThreadSanitizer (docs/reliability.md).
#include <gtest/gtest.h>

#include <barrier>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "jx/jx.h"
#include "support/str.h"
#include "testing/temp_dir.h"

namespace {

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace ocp = jx::ckpt;
using jx::Array;
using jx::Tree;

constexpr int kThreads = 4;
constexpr int kRounds = 3;

// Every value one thread computes, as plain vectors (compared exactly).
struct Results {
  std::vector<std::vector<float>> values;
  bool operator==(const Results&) const = default;
};

// The functions the threads share: jitted once, called from every thread.
struct Shared {
  std::function<Array(const Array&)> rows;       // one jitted function, the same for all
  std::vector<std::function<Array(const Array&)>> own;  // thread i calls own[i] only
  std::function<Array(const Array&, const Array&)> jit_grad;
};

Shared make_shared_functions() {
  Shared s;
  s.rows = jx::jit([](const Array& x) { return jnp::sum(jnp::tanh(x) * x, 1); }, {.name = "rows"});
  s.own = {
      jx::jit([](const Array& x) { return jnp::exp(-(x * x)); }, {.name = "own0"}),
      jx::jit([](const Array& x) { return jnp::maximum(x, 0.0f) * 2.0f; }, {.name = "own1"}),
      jx::jit([](const Array& x) { return jnp::sin(x) + jnp::cos(x); }, {.name = "own2"}),
      jx::jit([](const Array& x) { return jnp::log1p(x * x); }, {.name = "own3"}),
  };
  s.jit_grad = jx::jit(
      jx::grad([](const Array& w, const Array& x) { return jnp::sum(jnp::tanh(jnp::matmul(x, w))); }),
      {.name = "grad_w"});
  return s;
}

Array loss(const Array& w, const Array& x) { return jnp::sum(jnp::tanh(jnp::matmul(x, w))); }

// One thread's work; `dir` is its own directory for checkpoints.
Results work(int i, const Shared& f, const std::string& dir) {
  std::filesystem::create_directories(dir);
  Results r;
  auto keep = [&](const Array& a) { r.values.push_back(a.astype(jx::float32).ravel().to_vector<float>()); };
  for (int round = 0; round < kRounds; ++round) {
    Array x = jr::normal(jr::fold_in(jr::PRNGKey(i), round), {16, 8});
    Array w = jr::normal(jr::PRNGKey(100 + i), {8, 4});
    keep(f.rows(x));
    keep(f.own[size_t(i)](x));
    // Eager ops, each through the allocator and the oneDNN primitives' caches.
    keep(jnp::matmul(x, jnp::transpose(x)));
    Array img = x.reshape({1, 16, 8, 1});
    Array kernel = jnp::ones({3, 3, 1, 2}, jx::float32);
    keep(jx::lax::conv_general_dilated(img, kernel, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"}));
    keep(jnp::mean(x, 0));
    // Transformations: grad, vmap of grad (per-example gradients), jit of grad.
    keep(jx::grad(loss)(w, x));
    keep(jx::vmap(jx::grad(loss), {.in_axes = {jx::none, 0}})(w, x.reshape({16, 1, 8})));
    keep(f.jit_grad(w, x));
  }
  // Checkpoints: one plain save, and a manager whose saves run on its background thread.
  Array x = jr::normal(jr::PRNGKey(i), {16, 8});
  Tree state{{"x", x}, {"step", jnp::array(int32_t(i))}};
  ocp::save(dir + "/plain", state);
  Tree back = ocp::restore(dir + "/plain", state);
  keep(back["x"].array());
  keep(back["step"].array());
  ocp::CheckpointManager mngr(dir + "/run", {.max_to_keep = 2});
  for (int64_t step = 1; step <= 3; ++step)
    mngr.save(step, Tree{{"x", x * float(step)}, {"step", jnp::array(int32_t(step))}});
  mngr.wait_until_finished();
  EXPECT_EQ(mngr.all_steps(), (std::vector<int64_t>{2, 3}));
  Tree latest = mngr.restore(3, state);
  keep(latest["x"].array());
  keep(latest["step"].array());
  return r;
}

TEST(Concurrency, FourThreadsEqualOneThread) {
  jx::testing::TempDir tmp("jx_concurrency");
  Shared f = make_shared_functions();

  // Four threads, released together so that their first calls race on the empty cache.
  jx::clear_jit_cache();
  jx::reset_jit_stats();
  std::vector<Results> parallel(kThreads);
  std::vector<std::string> errors(kThreads);
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      try {
        parallel[size_t(i)] = work(i, f, jx::str(tmp.path(), "/parallel", i));
      } catch (const std::exception& e) {
        errors[size_t(i)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  jx::JitStats racing = jx::jit_stats();
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(errors[size_t(i)], "") << "thread " << i;

  // The same work on this thread alone, from an empty cache again.
  jx::clear_jit_cache();
  jx::reset_jit_stats();
  for (int i = 0; i < kThreads; ++i) {
    Results alone = work(i, f, jx::str(tmp.path(), "/alone", i));
    ASSERT_EQ(alone.values.size(), parallel[size_t(i)].values.size());
    for (size_t k = 0; k < alone.values.size(); ++k)
      EXPECT_EQ(parallel[size_t(i)].values[k], alone.values[k]) << "thread " << i << ", value " << k;
  }
  jx::JitStats serial = jx::jit_stats();
  // Threads that miss on the same signature at once wait for one trace and compile.
  EXPECT_EQ(racing.compiles, serial.compiles);
  EXPECT_EQ(racing.traces, serial.traces);
  EXPECT_EQ(racing.hits + racing.misses, serial.hits + serial.misses);
  EXPECT_EQ(racing.entries, serial.entries);
}

// The results themselves, against values derived by hand: the shared jitted function on a
// known input, called from four threads at once.
TEST(Concurrency, SharedJitGivesHandDerivedValues) {
  auto f = jx::jit([](const Array& x) { return jnp::sum(x * x); });
  std::vector<float> got(kThreads * 20, -1.0f);
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      Array x = jnp::arange(8).astype(jx::float32) * float(i + 1);  // (i + 1) * (0, 1, ..., 7)
      start.arrive_and_wait();
      for (int k = 0; k < 20; ++k) got[size_t(i * 20 + k)] = f(x).item<float>();
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    float want = float(140 * (i + 1) * (i + 1));  // (i + 1)^2 * (0^2 + 1^2 + ... + 7^2)
    for (int k = 0; k < 20; ++k) EXPECT_EQ(got[size_t(i * 20 + k)], want) << "thread " << i;
  }
}

}  // namespace
