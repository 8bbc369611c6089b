// The fused elementwise chain tanh(x*1.5+0.5) * sigmoid(x) over 10M float32 (issue 6):
// eager jx (five kernels, four intermediates), the compiled executable (one generated
// kernel), and a hand-written loop built by the same toolchain with the same flags
// (JX_CXXFLAGS), so that the comparison isolates what fusion and code generation leave
// on the table. Also compile time of the chain: cold (empty disk cache) and warm (the
// .so found in JX_CACHE_DIR). Goals: compiled >= 3x eager, within 1.5x of the hand loop.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/toolchain.h"
#include "core/array_impl.h"
#include "jx/jx.h"
#include "transforms/jaxpr_transforms.h"

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;

namespace {

constexpr int64_t kN = 10'000'000;

Array input() {
  std::vector<float> v(static_cast<size_t>(kN));
  for (int64_t i = 0; i < kN; ++i) v[size_t(i)] = float(i % 2000) * 1e-3f - 1.0f;
  return jnp::array(v);
}

Array chain(const Array& x) { return jnp::tanh(x * 1.5 + 0.5) * lax::logistic(x); }

jx::ir::Jaxpr chain_jaxpr() {
  auto t = jx::tr::trace_to_jaxpr([](const jx::ops::Arrays& a) -> jx::ops::Arrays { return {chain(a[0])}; },
                                  {jx::ops::Aval{{kN}, jx::DType::Float32, false}});
  return std::move(t.jaxpr);
}

void BM_eager(benchmark::State& st) {
  Array x = input();
  for (auto _ : st) {
    Array y = chain(x);
    benchmark::DoNotOptimize(y);
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * kN * 8);
}
BENCHMARK(BM_eager)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_compiled(benchmark::State& st) {
  Array x = input();
  auto exe = jx::compiler::compile(chain_jaxpr(), {.name = "bench_chain", .donate = {}});
  std::vector<Array> args = {x};
  for (auto _ : st) {
    std::vector<Array> y = exe->run(args);
    benchmark::DoNotOptimize(y);
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * kN * 8);
  st.SetLabel(exe->describe().substr(0, exe->describe().find('\n')));
}
BENCHMARK(BM_compiled)->UseRealTime()->Unit(benchmark::kMillisecond);

// The hand loop, in the form DESIGN.md measured: libm declared `omp declare simd` so that
// GCC calls libmvec, one `parallel for simd` loop, output buffer reused across calls.
const char* kHandSource = R"(
#include <cmath>
#include <cstdint>
extern "C" {
#pragma omp declare simd notinbranch
float tanhf(float) noexcept;
#pragma omp declare simd notinbranch
float expf(float) noexcept;
void hand_chain(const float* x, float* y, int64_t n) {
  #pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = tanhf(x[i] * 1.5f + 0.5f) * (1.0f / (1.0f + expf(-x[i])));
}
}
)";

void BM_hand_loop(benchmark::State& st) {
  auto built = jx::compiler::build_shared_library(kHandSource, "bench_hand");
  if (!built.library) {
    st.SkipWithError(built.error.c_str());
    return;
  }
  auto fn = reinterpret_cast<void (*)(const float*, float*, int64_t)>(built.library->symbol("hand_chain"));
  Array x = input();
  std::vector<float> y(static_cast<size_t>(kN));
  const float* px = jx::detail::data<float>(x);
  for (auto _ : st) {
    fn(px, y.data(), kN);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * kN * 8);
}
BENCHMARK(BM_hand_loop)->UseRealTime()->Unit(benchmark::kMillisecond);

std::string fresh_cache_dir() {
  char tmpl[] = "/tmp/jx_bench_cache_XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  return d ? d : "/tmp";
}

// Passes + fusion + codegen + the system compiler + dlopen, with an empty cache.
void BM_compile_cold(benchmark::State& st) {
  jx::ir::Jaxpr j = chain_jaxpr();
  const char* old = std::getenv("JX_CACHE_DIR");
  std::string saved = old ? old : "";
  for (auto _ : st) {
    ::setenv("JX_CACHE_DIR", fresh_cache_dir().c_str(), 1);
    auto exe = jx::compiler::compile(j, {.name = "bench_cold", .donate = {}});
    benchmark::DoNotOptimize(exe);
  }
  if (old) ::setenv("JX_CACHE_DIR", saved.c_str(), 1);
  else ::unsetenv("JX_CACHE_DIR");
}
BENCHMARK(BM_compile_cold)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(3);

// The same with the .so already in the disk cache (a second process, or a retrace).
void BM_compile_warm(benchmark::State& st) {
  jx::ir::Jaxpr j = chain_jaxpr();
  jx::compiler::compile(j, {.name = "bench_warm", .donate = {}});  // fill the cache
  for (auto _ : st) {
    auto exe = jx::compiler::compile(j, {.name = "bench_warm", .donate = {}});
    benchmark::DoNotOptimize(exe);
  }
}
BENCHMARK(BM_compile_warm)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
BENCHMARK_MAIN();
