// What the module system costs eagerly: model.apply of the tutorial's MLP and CNN
// (batch 128) against the same computation written with jnp by hand, on the same
// parameter tree. The bound is 5%. (Under jit the two compile to the same
// program: tests/nn/same_program_test.cpp.)
#include <benchmark/benchmark.h>

#include "jx/jx.h"
#include "nn/tutorial_models.h"

namespace {

namespace jr = jx::random;
using jx::Array;
using jx::Tree;

void BM_mlp(benchmark::State& st) {
  Array x = jr::normal(jr::PRNGKey(1), {128, 28, 28, 1});
  tutorial::MLP model;
  Tree v = model.init(jr::PRNGKey(0), x);
  for (auto _ : st) {
    Array y = st.range(0) ? model.apply(v, x) : tutorial::mlp_by_hand(v, x);
    benchmark::DoNotOptimize(y.impl().get());
  }
}

void BM_cnn(benchmark::State& st) {
  Array x = jr::normal(jr::PRNGKey(1), {128, 28, 28, 1});
  tutorial::CNN model;
  Tree v = model.init(jr::PRNGKey(0), x, true);
  for (auto _ : st) {
    Array y = st.range(0) ? model.apply(v, x, true) : tutorial::cnn_by_hand(v, x);
    benchmark::DoNotOptimize(y.impl().get());
  }
}

}  // namespace

BENCHMARK(BM_mlp)->ArgName("apply")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_cnn)->ArgName("apply")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
