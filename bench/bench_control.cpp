// Compiled control flow (docs/compiler.md, "Compiled control flow"):
//   rnn_*     the tanh RNN h <- tanh(h @ W + x_t @ U + b), hidden 64, input 64, batch 32,
//             100 steps through lax::scan, loss = sum(h_T^2); value_and_grad w.r.t. W, U,
//             b (forward scan + reverse scan), eager jx against the compiled program.
//             PyTorch's eager loop with autograd is bench/peers/torch_rnn.py. Goals: jit
//             >= 5x eager jx, >= 3x PyTorch. rnn_ratio alternates the two calls and
//             reports the median eager/jit ratio (robust to a machine whose speed drifts);
//             rnn_switch compares the program compiled with and without a compiler
//             switch (JX_BENCH_AB=NAME=VALUE; skipped without it); rnn_floor times the
//             program's five products alone through the same kernels, a floor for jit.
//   newton_*  sqrt by Newton on 1M float32, x <- 0.5 (x + a / x): 20 iterations through
//             fori_loop (a scan), and a while_loop until max |x^2 - a| < 1e-3 (it
//             stops after 13 iterations for these inputs); against a hand-written 2-thread
//             OpenMP loop doing the same 20 sweeps. Goal: within 1.5x of the hand loop.
// Each compiled benchmark reports the allocator's buffers per call (allocs/call): they do
// not depend on the number of iterations.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend/cpu/small_gemm.h"
#include "compiler/compile.h"
#include "core/allocator.h"
#include "core/array_impl.h"
#include "jx/jx.h"
#include "transforms/jaxpr_transforms.h"

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using Arrays = std::vector<Array>;

namespace {

constexpr int64_t kHidden = 64, kIn = 64, kBatch = 32, kSteps = 100;
constexpr int64_t kN = 1'000'000;
constexpr int kNewtonIters = 20;

Array uniform(jx::Shape s, uint32_t seed, double scale) {
  return jx::random::uniform(jx::random::PRNGKey(seed), s, jx::DType::Float32, -scale, scale);
}

Array rnn_loss(const Array& W, const Array& U, const Array& b, const Array& h0, const Array& xs) {
  auto [h, hs] = lax::scan(
      [&](const Array& h, const Array& x) {
        Array n = jnp::tanh(jnp::matmul(h, W) + jnp::matmul(x, U) + b);
        return std::make_pair(n, jx::none);
      },
      h0, xs);
  return (h * h).sum();
}

Arrays rnn_step(const Arrays& a) {
  auto [v, g] = jx::value_and_grad<0, 1, 2>(rnn_loss)(a[0], a[1], a[2], a[3], a[4]);
  return {v, std::get<0>(g), std::get<1>(g), std::get<2>(g)};
}

Arrays rnn_args() {
  return {uniform({kHidden, kHidden}, 1, 0.15), uniform({kIn, kHidden}, 2, 0.15), uniform({kHidden}, 3, 0.1),
          jnp::zeros({kBatch, kHidden}, jx::DType::Float32), uniform({kSteps, kBatch, kIn}, 4, 1.0)};
}

std::shared_ptr<const jx::compiler::Executable> compile_flat(const jx::tr::FlatFn& f, const Arrays& args,
                                                             const char* name) {
  std::vector<jx::ops::Aval> in;
  for (const Array& a : args) in.push_back(jx::ops::aval_of(a));
  jx::tr::TracedJaxpr t = jx::tr::trace_to_jaxpr(f, in);
  jx::ir::Jaxpr j = std::move(t.jaxpr);
  const auto n = std::ptrdiff_t(t.consts.size());
  j.constvars.assign(j.invars.begin(), j.invars.begin() + n);
  j.invars.erase(j.invars.begin(), j.invars.begin() + n);
  j.consts = std::move(t.consts);
  auto exe = jx::compiler::compile(j, {.name = name, .donate = {}});
  // JX_BENCH_DESCRIBE=1: print the compiled program's steps (bodies included).
  if (std::getenv("JX_BENCH_DESCRIBE")) std::fprintf(stderr, "%s:\n%s", name, exe->describe().c_str());
  return exe;
}

void report_allocs(benchmark::State& st, const jx::compiler::Executable& exe, const Arrays& args) {
  const uint64_t before = jx::detail::allocator_stats().num_allocs;
  exe.run(args);
  st.counters["allocs/call"] = double(jx::detail::allocator_stats().num_allocs - before);
}

// Newton's answer against sqrt (a correctness check of the compiled loop).
void report_sqrt_error(benchmark::State& st, const jx::compiler::Executable& exe, const Arrays& args) {
  Array x = exe.run(args)[0];
  st.counters["max|x-sqrt(a)|"] = jnp::max(jnp::abs(x - jnp::sqrt(args[0]))).item<double>();
}

void BM_rnn_eager(benchmark::State& st) {
  Arrays args = rnn_args();
  for (auto _ : st) {
    Arrays r = rnn_step(args);
    benchmark::DoNotOptimize(r);
  }
  const uint64_t before = jx::detail::allocator_stats().num_allocs;
  rnn_step(args);
  st.counters["allocs/call"] = double(jx::detail::allocator_stats().num_allocs - before);
}
BENCHMARK(BM_rnn_eager)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_rnn_jit(benchmark::State& st) {
  Arrays args = rnn_args();
  auto exe = compile_flat(rnn_step, args, "bench_rnn");
  for (auto _ : st) {
    Arrays r = exe->run(args);
    benchmark::DoNotOptimize(r);
  }
  report_allocs(st, *exe, args);
  // The compiled gradient against the eager one (float sums may differ in order).
  Arrays want = rnn_step(args), got = exe->run(args);
  double err = 0;
  for (size_t k = 0; k < got.size(); ++k)
    err = std::max(err, jnp::max(jnp::abs(got[k] - want[k])).item<double>());
  st.counters["max|jit-eager|"] = err;
}
BENCHMARK(BM_rnn_jit)->UseRealTime()->Unit(benchmark::kMillisecond);

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// The ratio the goal names, measured so that a slower or faster stretch of a shared
// machine hits both sides alike: each iteration times one eager call and then one call of
// `run`; the counters are the medians of each (eager_ms, NAME_ms) and the median of the
// per-iteration ratios (eager/NAME). Returns the median time of `run` in ms.
template <class Run>
double time_after_eager(benchmark::State& st, const Arrays& args, const std::string& name, Run&& run) {
  std::vector<double> eager, other, ratio;
  using clock = std::chrono::steady_clock;
  for (auto _ : st) {
    const auto t0 = clock::now();
    Arrays e = rnn_step(args);
    const auto t1 = clock::now();
    run();
    const auto t2 = clock::now();
    benchmark::DoNotOptimize(e);
    eager.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    other.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    ratio.push_back(eager.back() / other.back());
  }
  st.counters["eager_ms"] = median(eager);
  st.counters[name + "_ms"] = median(other);
  st.counters["eager/" + name] = median(ratio);
  return median(other);
}

void BM_rnn_ratio(benchmark::State& st) {
  Arrays args = rnn_args();
  auto exe = compile_flat(rnn_step, args, "bench_rnn");
  time_after_eager(st, args, "jit", [&] {
    Arrays j = exe->run(args);
    benchmark::DoNotOptimize(j);
  });
}
BENCHMARK(BM_rnn_ratio)->UseRealTime()->Unit(benchmark::kMillisecond);

// The compiled RNN's arithmetic alone, as a floor for the ratio: its five products (x @ U
// over all steps; per step and row block of 16, h @ W forward and dz @ W^T backward,
// each step reading the previous one's result; dW and dU with the contraction split over
// the threads) through the same register tiles on 2 threads, with nothing else: no tanh,
// no elementwise kernels, no stacking, no driver. Each iteration times one eager call and
// then the products, as rnn_ratio does; eager/floor bounds what any compiled program
// built on these kernels can reach on this machine.
void BM_rnn_floor(benchmark::State& st) {
  if (!jx::cpu::sgemm_tiles_supported(kHidden)) {
    st.SkipWithError("no vector FMA in this build: the tiles do not run");
    return;
  }
  Arrays args = rnn_args();
  const std::vector<float> W = args[0].to_vector<float>(), U = args[1].to_vector<float>(),
                           xs = args[4].to_vector<float>();
  std::vector<float> WT(size_t(kHidden * kHidden));
  for (int64_t i = 0; i < kHidden; ++i)
    for (int64_t j = 0; j < kHidden; ++j) WT[size_t(j * kHidden + i)] = W[size_t(i * kHidden + j)];
  const int64_t rows = kSteps * kBatch, H = kHidden;
  std::vector<float> xu(size_t(rows * H)), hs(size_t((rows + kBatch) * H), 0.5f), dz(size_t((rows + kBatch) * H), 0.5f),
      part(size_t(4 * H * H));
  const double floor_ms = time_after_eager(st, args, "floor", [&] {
#pragma omp parallel num_threads(2)
    {
      const int s = omp_get_thread_num(), P = omp_get_num_threads();
      const int64_t r0 = rows * s / P, r1 = rows * (s + 1) / P, block = kBatch / P;
      jx::cpu::sgemm_tiles(r1 - r0, H, kIn, xs.data() + r0 * kIn, kIn, 1, U.data(), H, xu.data() + r0 * H, false);
#pragma omp barrier
      // hs row block t+1 = (row block t) @ W; dz row block t = (row block t+1) @ W^T.
      for (int64_t t = 0; t < kSteps; ++t) {
        const float* h = hs.data() + (t * kBatch + s * block) * H;
        jx::cpu::sgemm_tiles(block, H, H, h, H, 1, W.data(), H, hs.data() + ((t + 1) * kBatch + s * block) * H, false);
      }
      for (int64_t t = kSteps - 1; t >= 0; --t) {
        const float* d = dz.data() + ((t + 1) * kBatch + s * block) * H;
        jx::cpu::sgemm_tiles(block, H, H, d, H, 1, WT.data(), H, dz.data() + (t * kBatch + s * block) * H, false);
      }
#pragma omp barrier
      // dW = hs^T dz and dU = xs^T dz over this thread's slice of the 3200 rows.
      jx::cpu::sgemm_tiles(H, H, r1 - r0, hs.data() + r0 * H, 1, H, dz.data() + r0 * H, H,
                           part.data() + size_t(2 * s) * size_t(H * H), false);
      jx::cpu::sgemm_tiles(kIn, H, r1 - r0, xs.data() + r0 * kIn, 1, kIn, dz.data() + r0 * H, H,
                           part.data() + size_t(2 * s + 1) * size_t(H * H), false);
    }
    benchmark::DoNotOptimize(part.data());
    benchmark::ClobberMemory();
  });
  const double flops = 2.0 * double(rows) * double(H) * double(H + kIn) * 2 + 2.0 * double(rows) * double(H) * double(H);
  st.counters["GFLOP/s"] = flops / (floor_ms * 1e6);
}
BENCHMARK(BM_rnn_floor)->UseRealTime()->Unit(benchmark::kMillisecond);

// A compiler switch measured on the RNN: JX_BENCH_AB=NAME=VALUE compiles program A as is
// and program B with NAME=VALUE in the environment (JX_SCAN_REMAT=0, ...). Each iteration
// runs eager, one program, eager, the other, alternating which goes first: the call right
// after an eager one finds the caches cold and was measured 5-12% slower, which favoured
// whichever program came second in a fixed order.
void BM_rnn_switch(benchmark::State& st) {
  const char* ab = std::getenv("JX_BENCH_AB");
  const std::string setting = ab ? ab : "";
  const size_t eq = setting.find('=');
  if (eq == std::string::npos || eq == 0) {
    st.SkipWithError("set JX_BENCH_AB=NAME=VALUE, a compiler switch to measure");
    return;
  }
  const std::string name = setting.substr(0, eq);
  const char* old = std::getenv(name.c_str());
  const std::string saved = old ? old : "";
  Arrays args = rnn_args();
  auto a = compile_flat(rnn_step, args, "bench_rnn_a");
  ::setenv(name.c_str(), setting.c_str() + eq + 1, 1);
  auto b = compile_flat(rnn_step, args, "bench_rnn_b");
  if (old) ::setenv(name.c_str(), saved.c_str(), 1);
  else ::unsetenv(name.c_str());
  std::vector<double> ms[2];
  using clock = std::chrono::steady_clock;
  auto timed = [](auto&& f) {
    const auto t0 = clock::now();
    benchmark::DoNotOptimize(f());
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  };
  for (auto _ : st) {
    const int first = int(ms[0].size() + ms[1].size()) / 2 % 2;
    for (int k : {first, 1 - first}) {
      rnn_step(args);
      ms[k].push_back(timed([&] { return (k ? b : a)->run(args); }));
    }
  }
  st.counters["A_ms"] = median(ms[0]);
  st.counters["B_ms"] = median(ms[1]);
  st.counters["B/A"] = median(ms[1]) / median(ms[0]);
}
BENCHMARK(BM_rnn_switch)->UseRealTime()->Unit(benchmark::kMillisecond);

Array newton_input() { return uniform({kN}, 5, 1.0) + 2.0f; }  // a in [1, 3]

Arrays newton_fori(const Arrays& a) {
  const Array& target = a[0];
  return {lax::fori_loop(0, kNewtonIters, [&](const Array&, const Array& x) { return (x + target / x) * 0.5f; },
                         target)};
}

Arrays newton_while(const Arrays& a) {
  const Array& target = a[0];
  return {lax::while_loop([&](const Array& x) { return jnp::max(jnp::abs(x * x - target)) > 1e-3f; },
                          [&](const Array& x) { return (x + target / x) * 0.5f; }, target)};
}

void BM_newton_fori_jit(benchmark::State& st) {
  Arrays args = {newton_input()};
  auto exe = compile_flat(newton_fori, args, "bench_newton_fori");
  for (auto _ : st) {
    Arrays r = exe->run(args);
    benchmark::DoNotOptimize(r);
  }
  report_allocs(st, *exe, args);
  report_sqrt_error(st, *exe, args);
}
BENCHMARK(BM_newton_fori_jit)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_newton_while_jit(benchmark::State& st) {
  Arrays args = {newton_input()};
  auto exe = compile_flat(newton_while, args, "bench_newton_while");
  for (auto _ : st) {
    Arrays r = exe->run(args);
    benchmark::DoNotOptimize(r);
  }
  report_allocs(st, *exe, args);
  report_sqrt_error(st, *exe, args);
}
BENCHMARK(BM_newton_while_jit)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_newton_fori_eager(benchmark::State& st) {
  Arrays args = {newton_input()};
  for (auto _ : st) {
    Arrays r = newton_fori(args);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_newton_fori_eager)->UseRealTime()->Unit(benchmark::kMillisecond);

// The same 20 sweeps written by hand: one output buffer, 2 threads.
void BM_newton_hand(benchmark::State& st) {
  Array a = newton_input();
  const float* target = jx::detail::data<float>(a);
  std::vector<float> x(static_cast<size_t>(kN));
  for (auto _ : st) {
    float* xp = x.data();
    for (int it = 0; it < kNewtonIters; ++it) {
      const float* src = it == 0 ? target : xp;
#pragma omp parallel for simd num_threads(2) schedule(static)
      for (int64_t i = 0; i < kN; ++i) xp[i] = (src[i] + target[i] / src[i]) * 0.5f;
    }
    benchmark::DoNotOptimize(xp);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_newton_hand)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
