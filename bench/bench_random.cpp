// jx::random throughput: bits (uint32) and uniform (float32) on 64M values, reported as
// GB/s of output, beside a memset of the same 256 MB (the write-bandwidth limit) in the
// same run. Also the composition of primitives (what a traced key runs) for comparison.
// The PyTorch peer, on this machine (../shared/peers/README.md for the tuned environment):
//   python3 -c "import torch,time; x=torch.empty(64<<20); torch.rand(64<<20,out=x);
//     t=time.perf_counter(); [torch.rand(64<<20,out=x) for _ in range(10)];
//     print(256*10/1024/(time.perf_counter()-t),'GB/s')"
// and for the normal rows torch.randn(n) at n = 1M, 10M, 16M, timed as
// bench/peers/torch_foundation.py times torch.rand (median of 5 runs, 2 threads).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "jx/jx.h"
#include "random/internal.h"

namespace jr = jx::random;
using jx::Array;

namespace {

constexpr int64_t kN = int64_t(64) << 20;  // 64M values = 256 MB of 32-bit output

void BM_memset_256MB(benchmark::State& st) {
  std::vector<uint32_t> dst(static_cast<size_t>(kN), 1u);
  for (auto _ : st) {
#pragma omp parallel for schedule(static)
    for (int t = 0; t < 16; ++t) {
      size_t chunk = size_t(kN) / 16;
      std::memset(dst.data() + t * chunk, t, chunk * 4);
    }
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * kN * 4);
}
BENCHMARK(BM_memset_256MB)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_bits_u32_64M(benchmark::State& st) {
  Array key = jr::PRNGKey(0);
  for (auto _ : st) {
    Array b = jr::bits(key, {kN});
    benchmark::DoNotOptimize(b);
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * kN * 4);
}
BENCHMARK(BM_bits_u32_64M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_uniform_f32_64M(benchmark::State& st) {
  Array key = jr::PRNGKey(0);
  for (auto _ : st) {
    Array u = jr::uniform(key, {kN});
    benchmark::DoNotOptimize(u);
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * kN * 4);
}
BENCHMARK(BM_uniform_f32_64M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_uniform_f32_64M_legacy(benchmark::State& st) {
  jx::config::Scoped s(jx::config::threefry_partitionable, false);
  Array key = jr::PRNGKey(0);
  for (auto _ : st) {
    Array u = jr::uniform(key, {kN});
    benchmark::DoNotOptimize(u);
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * kN * 4);
}
BENCHMARK(BM_uniform_f32_64M_legacy)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_uniform_f32_64M_composed(benchmark::State& st) {
  jr::detail::force_composed = true;
  Array key = jr::PRNGKey(0);
  for (auto _ : st) {
    Array u = jr::uniform(key, {kN});
    benchmark::DoNotOptimize(u);
  }
  jr::detail::force_composed = false;
  st.SetBytesProcessed(int64_t(st.iterations()) * kN * 4);
}
BENCHMARK(BM_uniform_f32_64M_composed)->Unit(benchmark::kMillisecond)->UseRealTime();

// normal on one concrete key: threefry, uniform, erf_inv and the scale in one pass.
void BM_normal_f32(benchmark::State& st, int64_t n) {
  Array key = jr::PRNGKey(0);
  for (auto _ : st) {
    Array z = jr::normal(key, {n});
    benchmark::DoNotOptimize(z);
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * n * 4);
}
BENCHMARK_CAPTURE(BM_normal_f32, 1M, int64_t(1) << 20)->Name("BM_normal_f32_1M")
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_normal_f32, 10M, int64_t(10000000))->Name("BM_normal_f32_10M")
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_normal_f32, 16M, int64_t(16) << 20)->Name("BM_normal_f32_16M")
    ->Unit(benchmark::kMillisecond)->UseRealTime();

// Where normal's time goes, 10M values: the same draw as separate full-array passes
// (uniform kernel, eager erf_inv, eager multiply; the path before the fused kernel), and
// the eager erf_inv alone on a uniform array.
constexpr int64_t kN10 = 10000000;

Array normal_uniform_10M() {
  return jr::uniform(jr::PRNGKey(0), {kN10}, jx::float32,
                     Array(double(std::nextafter(-1.0f, 0.0f))), Array(1.0));
}

void BM_normal_f32_10M_unfused(benchmark::State& st) {
  Array sqrt2 = jx::lax::convert_element_type(Array(M_SQRT2), jx::float32).reshape({1});
  for (auto _ : st) {
    Array z = jx::lax::mul(sqrt2, jx::lax::erf_inv(normal_uniform_10M()));
    benchmark::DoNotOptimize(z);
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * kN10 * 4);
}
BENCHMARK(BM_normal_f32_10M_unfused)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_normal_f32_10M_part_uniform(benchmark::State& st) {
  for (auto _ : st) {
    Array u = normal_uniform_10M();
    benchmark::DoNotOptimize(u);
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * kN10 * 4);
}
BENCHMARK(BM_normal_f32_10M_part_uniform)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_normal_f32_10M_part_erf_inv(benchmark::State& st) {
  Array u = normal_uniform_10M();
  for (auto _ : st) {
    Array e = jx::lax::erf_inv(u);
    benchmark::DoNotOptimize(e);
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * kN10 * 4);
}
BENCHMARK(BM_normal_f32_10M_part_erf_inv)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
