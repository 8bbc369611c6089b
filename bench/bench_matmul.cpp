// jnp::matmul against oneDNN's sgemm called directly, square float32 matrices, in GFLOP/s,
// so that the ratio (jx's dispatch + allocation overhead) reads off one run. The float64
// rows time jx's own blocked kernel.
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.h>

#include <vector>

#include "jx/jx.h"

namespace {

namespace jnp = jx::numpy;

jx::Array filled(int64_t n, jx::DType t) {
  std::vector<float> v(static_cast<size_t>(n * n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(int(i % 13) - 6) * 0.125f;
  return jnp::array(v, jx::Shape{n, n}).astype(t);
}

void set_flops(benchmark::State& st, int64_t n) {
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * double(n) * double(n) * double(n) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

void BM_jnp_matmul_f32(benchmark::State& st) {
  const int64_t n = st.range(0);
  jx::Array a = filled(n, jx::DType::Float32), b = filled(n, jx::DType::Float32);
  for (auto _ : st) {
    jx::Array c = jnp::matmul(a, b);
    benchmark::DoNotOptimize(c.impl().get());
  }
  set_flops(st, n);
}

void BM_dnnl_sgemm(benchmark::State& st) {
  const int64_t n = st.range(0);
  std::vector<float> a(static_cast<size_t>(n * n)), b(a.size()), c(a.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = b[i] = float(int(i % 13) - 6) * 0.125f;
  for (auto _ : st) {
    dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  set_flops(st, n);
}

void BM_jnp_matmul_f64(benchmark::State& st) {
  const int64_t n = st.range(0);
  jx::Array a = filled(n, jx::DType::Float64), b = filled(n, jx::DType::Float64);
  for (auto _ : st) {
    jx::Array c = jnp::matmul(a, b);
    benchmark::DoNotOptimize(c.impl().get());
  }
  set_flops(st, n);
}

}  // namespace

BENCHMARK(BM_jnp_matmul_f32)->Arg(256)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_dnnl_sgemm)->Arg(256)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_jnp_matmul_f64)->Arg(256)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
