// Eager-mode costs: dispatch overhead of a tiny op, and elementwise / reduction throughput
// on 16M floats measured against a plain copy in the same run, and the transpose kernel at
// sizes from in-L1 to past L3 against the same copy (bench/README.md).
#include <benchmark/benchmark.h>

#include <cstring>

#include "backend/cpu/shape.h"
#include "core/allocator.h"
#include "jx/jx.h"

namespace jnp = jx::numpy;
using jx::Array;

namespace {

constexpr int64_t kBig = int64_t(16) << 20;  // 16M floats = 64 MB

Array big_input() {
  std::vector<float> v(static_cast<size_t>(kBig));
  for (int64_t i = 0; i < kBig; ++i) v[size_t(i)] = float(i % 1000) * 1e-3f;
  return jnp::array(v);
}

// One-element add: the fixed cost of an eager op (promotion, shape checks, allocation).
void BM_dispatch_add_1elem(benchmark::State& st) {
  Array a = jnp::array<float>({1.0f});
  Array b = jnp::array<float>({2.0f});
  for (auto _ : st) {
    Array c = a + b;
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_dispatch_add_1elem);

// The physical reference: a plain two-thread copy loop of 64 MB into a reused (already
// faulted-in) buffer, the same loop shape as the kernels. Bytes = read + write.
void BM_copy_16M(benchmark::State& st) {
  std::vector<float> src(static_cast<size_t>(kBig), 1.0f), dst(static_cast<size_t>(kBig), 0.0f);
  const float* s = src.data();
  float* d = dst.data();
  for (auto _ : st) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < kBig; ++i) d[i] = s[i];
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * kBig * 8);
}
BENCHMARK(BM_copy_16M)->UseRealTime();

void BM_add_16M(benchmark::State& st) {
  Array x = big_input(), y = big_input();
  for (auto _ : st) {
    Array z = x + y;
    benchmark::DoNotOptimize(z);
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * kBig * 12);  // two reads, one write
}
BENCHMARK(BM_add_16M)->UseRealTime();

void BM_exp_16M(benchmark::State& st) {
  Array x = big_input();
  for (auto _ : st) {
    Array z = jnp::exp(x);
    benchmark::DoNotOptimize(z);
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * kBig * 8);
}
BENCHMARK(BM_exp_16M)->UseRealTime();

void BM_sum_16M(benchmark::State& st) {
  Array x = big_input();
  for (auto _ : st) {
    Array z = jnp::sum(x);
    benchmark::DoNotOptimize(z);
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * kBig * 4);
}
BENCHMARK(BM_sum_16M)->UseRealTime();

// The transpose kernel on [R, C] -> [C, R] into a reused buffer; bytes = read + write, to
// compare with BM_copy_16M. Powers of two put a tile's source rows 4 KB apart.
template <class T>
void BM_transpose(benchmark::State& st) {
  const int64_t shape[2] = {st.range(0), st.range(1)}, perm[2] = {1, 0};
  std::vector<T> src(static_cast<size_t>(shape[0] * shape[1])), dst(src.size());
  for (size_t i = 0; i < src.size(); ++i) src[i] = T(i);
  for (auto _ : st) {
    jx::cpu::transpose(sizeof(T), src.data(), shape, perm, dst.data(), 2);
    benchmark::DoNotOptimize(dst.data());
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * shape[0] * shape[1] * int64_t(sizeof(T)) * 2);
}
BENCHMARK(BM_transpose<float>)
    ->Args({64, 64})->Args({256, 256})->Args({1000, 1000})->Args({1024, 1024})->Args({4096, 1024})
    ->Args({3, 50176})->Args({50176, 3})->UseRealTime();
BENCHMARK(BM_transpose<double>)->Args({256, 256})->Args({1024, 1024})->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
