// What a fresh jit costs before its first result: trace, optimize, generate code and build it
// (cold: a new, empty kernel cache directory for every timed call, so the C++ compiler runs)
// or load the built kernels from the disk cache (warm: what a second run of a program pays).
// `fresh_jit()` must clear the jit cache (jx::clear_jit_cache()) and return a new jitted
// callable `f` with its arguments bound; each iteration times f's first call and subtracts its
// second (the run itself, with its buffers and caches now warm), so what is left is the
// compile overhead even where one run of f takes as long as the compile.
#pragma once
#include <benchmark/benchmark.h>

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

template <class FreshJit>
void time_first_call(benchmark::State& st, bool cold, FreshJit fresh_jit) {
  using Clock = std::chrono::steady_clock;
  char tmpl[] = "/tmp/jx_bench_cacheXXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  const char* old = std::getenv("JX_CACHE_DIR");
  std::string saved = old ? old : "";
  ::setenv("JX_CACHE_DIR", dir.c_str(), 1);
  if (!cold) fresh_jit()();  // fills the disk cache
  int fresh = 0;
  double first_total = 0;
  for (auto _ : st) {
    if (cold) ::setenv("JX_CACHE_DIR", (dir + "/" + std::to_string(fresh++)).c_str(), 1);
    auto f = fresh_jit();
    auto t0 = Clock::now();
    benchmark::DoNotOptimize(f());
    auto t1 = Clock::now();
    benchmark::DoNotOptimize(f());
    auto t2 = Clock::now();
    double first = std::chrono::duration<double>(t1 - t0).count();
    first_total += first;
    st.SetIterationTime(std::max(0.0, first - std::chrono::duration<double>(t2 - t1).count()));
  }
  st.counters["first_call_ms"] = benchmark::Counter(first_total * 1e3 / double(st.iterations()));
  std::filesystem::remove_all(dir);
  if (old) ::setenv("JX_CACHE_DIR", saved.c_str(), 1);
  else ::unsetenv("JX_CACHE_DIR");
}
