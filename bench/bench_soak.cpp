// Soak: N jitted training steps of the tutorial CNN (examples/train_cnn's step: conv 32 - relu
// - max pool - conv 64 - relu - dense 256 - dropout 0.1 - dense 10, softmax cross-entropy,
// chain(clip_by_global_norm(1), adamw(1e-3, weight_decay 1e-4)), the state donated), batch
// 32, a fresh random batch and dropout key each step. Every 500 steps it prints the resident
// memory (/proc/self/statm) and the jit cache's counters (jx::jit_stats()).
//
// A verdict, not a Google Benchmark: exits 1 when resident memory grows by more than 5% from
// step 500 (after warm-up) to any later report, or when the jit cache grows after warm-up
// (a new entry, trace or compile), which would mean a leak or a retrace per step.
//
//   build/bench/bench_soak                  10,000 steps (about 2 minutes on 2 cores)
//   build/bench/bench_soak --steps=2000     a shorter run
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "cnn_step.h"
#include "jx/jx.h"

namespace {

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace nn = jx::nn;
namespace optim = jx::optim;
using jx::Array;
using jx::Tree;

// Resident set size in MiB: statm's second field, in pages.
double rss_mib() {
  std::ifstream f("/proc/self/statm");
  long size = 0, resident = 0;
  f >> size >> resident;
  return double(resident) * double(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

struct Report {
  int64_t step = 0;
  double rss = 0;
  jx::JitStats jit{};
};

void print(const Report& r, double loss, double ms_per_step) {
  std::printf("%7lld %9.1f %8lld %10lld %7lld %7lld %9lld %8.4f %8.2f\n", (long long)r.step, r.rss,
              (long long)r.jit.entries, (long long)r.jit.bytes, (long long)r.jit.traces, (long long)r.jit.compiles,
              (long long)r.jit.hits, loss, ms_per_step);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t steps = 10000, every = 500, warmup = 500, batch = 32;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* flag) { return std::atoll(a.c_str() + std::string(flag).size()); };
    if (a.rfind("--steps=", 0) == 0) steps = value("--steps=");
    else if (a.rfind("--every=", 0) == 0) every = value("--every=");
    else if (a.rfind("--warmup=", 0) == 0) warmup = value("--warmup=");
    else if (a.rfind("--batch=", 0) == 0) batch = value("--batch=");
    else {
      std::fprintf(stderr, "usage: %s [--steps=N (10000)] [--every=N (500)] [--warmup=N (500)] [--batch=N (32)]\n",
                   argv[0]);
      return 2;
    }
  }
  if (every < 1 || warmup < every || warmup % every != 0 || steps < warmup + every || batch < 1) {
    std::fprintf(stderr,
                 "bench_soak: need --every >= 1, --warmup a multiple of --every, and --steps >= --warmup + "
                 "--every (got steps %lld, every %lld, warmup %lld)\n",
                 (long long)steps, (long long)every, (long long)warmup);
    return 2;
  }

  Array root = jr::PRNGKey(3);
  auto batch_at = [&](int64_t t) {
    Array k = jr::fold_in(root, uint32_t(t));
    auto [kx, ky, kd] = jr::split<3>(k);
    return std::make_tuple(jr::normal(kx, {batch, 28, 28, 1}), jr::randint(ky, {batch}, 0, 10), kd);
  };
  optim::TrainState state = bench::cnn_state(std::get<0>(batch_at(0)));
  auto step = jx::jit(bench::cnn_step, {.donate_argnums = {0}, .name = "cnn_train_step"});

  std::printf("bench_soak: %lld jitted CNN train steps, batch %lld, a report every %lld steps, warm-up %lld\n",
              (long long)steps, (long long)batch, (long long)every, (long long)warmup);
  std::printf("%7s %9s %8s %10s %7s %7s %9s %8s %8s\n", "step", "rss MiB", "entries", "jit bytes", "traces",
              "compile", "hits", "loss", "ms/step");
  Report at_warmup;
  double max_rss_after = 0;
  bool cache_grew = false;
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t t = 1; t <= steps; ++t) {
    auto [x, y, key] = batch_at(t);
    auto [next, loss] = step(state, x, y, key);
    state = std::move(next);
    float l = loss.item<float>();  // finish the step, as a training loop that logs does
    if (t % every != 0) continue;
    auto t1 = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(t1 - t0).count() / double(every);
    t0 = t1;
    Report r{t, rss_mib(), jx::jit_stats()};
    print(r, l, ms);
    if (t == warmup) {
      at_warmup = r;
    } else if (t > warmup) {
      max_rss_after = std::max(max_rss_after, r.rss);
      if (r.jit.entries != at_warmup.jit.entries || r.jit.bytes != at_warmup.jit.bytes ||
          r.jit.traces != at_warmup.jit.traces || r.jit.compiles != at_warmup.jit.compiles)
        cache_grew = true;
    }
  }
  double growth = (max_rss_after - at_warmup.rss) / at_warmup.rss;
  std::printf("resident memory: %.1f MiB at step %lld, at most %.1f MiB after it (%+.2f%%, limit +5%%)\n",
              at_warmup.rss, (long long)warmup, max_rss_after, 100.0 * growth);
  int status = 0;
  if (growth > 0.05) {
    std::printf("FAIL: resident memory grew by more than 5%% after warm-up\n");
    status = 1;
  }
  if (cache_grew) {
    std::printf("FAIL: the jit cache grew after warm-up (entries, bytes, traces or compiles changed)\n");
    status = 1;
  }
  if (status == 0) std::printf("ok: memory flat and the jit cache bounded\n");
  return status;
}
