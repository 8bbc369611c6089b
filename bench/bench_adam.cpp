// The Adam update alone (optim::adam + apply_updates, jitted, params and state donated) over
// ~1.2M float32 parameters, against a 2-thread copy loop moving the same bytes in the same
// run. Per parameter the update reads params, grads, mu, nu and writes params, mu, nu: 7
// floats, 28 bytes; the copy loop copies 3.5 floats per parameter (read + write = 28 bytes).
// PyTorch's Adam.step over the same shapes is `adam` in ../shared/peers/torch_bench.py
// (foreach False/True) and torch_bench.cpp (bench/README.md, "The Adam update").
//
// Trees: "mlp_x4" = the tutorial MLP's shapes (784-256-256-10) four times, 24 leaves,
// 1,077,288 parameters, as torch_bench's adam_step_1.08M_24t; "flat" = one leaf of 1.2M.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "jx/optim.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace optim = jx::optim;
using jx::Array;
using jx::Tree;

namespace {

Tree make_params(bool flat) {
  Tree params = Tree::dict();
  if (flat) {
    params.insert("w", jnp::zeros({1200000}));
    return params;
  }
  const std::vector<int64_t> sizes = {784, 256, 256, 10};
  for (int rep = 0; rep < 4; ++rep)
    for (size_t i = 0; i + 1 < sizes.size(); ++i)
      params.insert("mlp" + std::to_string(rep) + "_Dense_" + std::to_string(i),
                    Tree{{"kernel", jnp::zeros({sizes[i], sizes[i + 1]})}, {"bias", jnp::zeros({sizes[i + 1]})}});
  return params;
}

int64_t count_params(const Tree& t) {
  int64_t n = 0;
  for (const Array& x : jx::tree::leaves(t)) n += x.size();
  return n;
}

// One Adam step as a training loop writes it.
std::pair<Tree, Tree> adam_step(const optim::GradientTransformation& opt, const Tree& params, const Tree& grads,
                                const Tree& state) {
  auto [updates, new_state] = opt.update(grads, state, params);
  return {optim::apply_updates(params, updates), new_state};
}

void BM_adam_jit(benchmark::State& st, bool flat) {
  Tree params = make_params(flat);
  Tree grads = jx::tree::map([](const Array& p) { return jr::normal(jr::PRNGKey(1), p.shape()); }, params);
  auto opt = optim::adam(1e-3);
  Tree state = opt.init(params);
  // The state goes first: TreeDef::children() mis-rebases an empty dict (adam's `{}`) in any
  // argument after the first, which jit's donation path calls (reported; src/tree/treedef.cpp).
  auto step = jx::jit(
      [opt](const Tree& s, const Tree& p, const Tree& g) {
        auto [p2, s2] = adam_step(opt, p, g, s);
        return std::make_pair(s2, p2);
      },
      {.donate_argnums = {0, 1}, .name = "adam_step"});
  for (int i = 0; i < 3; ++i) std::tie(state, params) = step(state, params, grads);  // compile, warm up
  for (auto _ : st) {
    std::tie(state, params) = step(state, params, grads);
    benchmark::DoNotOptimize(params);
  }
  const int64_t n = count_params(params);
  st.counters["params"] = double(n);
  st.SetBytesProcessed(st.iterations() * n * 28);
}
BENCHMARK_CAPTURE(BM_adam_jit, mlp_x4, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_adam_jit, flat, true)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same update eager: each primitive dispatched on its own.
void BM_adam_eager(benchmark::State& st, bool flat) {
  Tree params = make_params(flat);
  Tree grads = jx::tree::map([](const Array& p) { return jr::normal(jr::PRNGKey(1), p.shape()); }, params);
  auto opt = optim::adam(1e-3);
  Tree state = opt.init(params);
  for (auto _ : st) {
    std::tie(params, state) = adam_step(opt, params, grads, state);
    benchmark::DoNotOptimize(params);
  }
  st.SetBytesProcessed(st.iterations() * count_params(params) * 28);
}
BENCHMARK_CAPTURE(BM_adam_eager, mlp_x4, false)->Unit(benchmark::kMillisecond)->UseRealTime();

// The physical limit: a 2-thread copy of 3.5 floats per parameter of the flat tree (read +
// write = the update's 28 bytes per parameter).
void BM_copy_same_bytes(benchmark::State& st) {
  const size_t n = 1200000 * 7 / 2;
  std::vector<float> src(n, 1.0f), dst(n, 0.0f);
  for (auto _ : st) {
    const float* s = src.data();
    float* d = dst.data();
#pragma omp parallel for simd schedule(static)
    for (size_t i = 0; i < n; ++i) d[i] = s[i];
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * int64_t(n) * 8);
}
BENCHMARK(BM_copy_same_bytes)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
