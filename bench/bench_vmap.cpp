// Per-example gradients (the JAX tutorial's vmap-of-grad): the gradient of the MLP
// 784-256-256-10 softmax cross-entropy loss of bench_grad.cpp, written for ONE example,
// for each of 128 examples at once:
//   vmap_grad      jx::vmap(jx::grad(loss), {.in_axes = {jx::none, 0, 0}}), eager
//   jit_vmap_grad  the same inside jx::jit (traced and compiled before timing)
//   loop_grad      128 eager jx::grad(loss) calls on pre-sliced examples, then each
//                  parameter's 128 gradients stacked, so that it returns what vmap does
// DP-SGD's clipped mean: per-example gradients, each scaled by min(1, C / ||g_i||) (the
// norm over all parameters), then averaged, written as a user writes it (vmap(grad), then
// jnp ops):
//   clipped_mean_jit               jitted: the per_example pass computes the norms and the
//                                  weighted mean from the layers' inputs and output
//                                  gradients, without the [128, 784, 256] gradients
//   clipped_mean_jit_materialized  the same program compiled with JX_PER_EXAMPLE_REWRITE=0
//   clipped_mean_eager             eager (materializes them too)
// bench/peers/torch_vmap.py times PyTorch's functorch.vmap(functorch.grad(...)), its
// autograd loop and functorch's clipped mean on the same workload and prints the ratios
// of one run. Before timing, main() checks once that vmap (and jit of vmap) equals the
// loop and that the jitted clipped mean equals the eager one, and reports the largest
// absolute differences as counters of every benchmark (max_abs_diff_*).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "jx/jx.h"

namespace jnp = jx::numpy;
using jx::Array;
using Params = std::map<std::string, Array>;

namespace {

constexpr int64_t kBatch = 128;

// "w0", "b1", ...: snprintf, since GCC 12 warns falsely (-Wrestrict) on "w" + to_string(i).
std::string pname(char kind, size_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%c%zu", kind, i);
  return buf;
}

Params init(const std::vector<int64_t>& sizes, uint32_t seed) {
  Params p;
  Array key = jx::random::PRNGKey(seed);
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    auto [k, sub] = jx::random::split<2>(key);
    key = k;
    double scale = 1.0 / std::sqrt(double(sizes[i]));
    p[pname('w', i)] = jx::random::normal(sub, {sizes[i], sizes[i + 1]}) * scale;
    p[pname('b', i)] = jnp::zeros({sizes[i + 1]});
  }
  return p;
}

// Cross-entropy of ONE example: x [784], one-hot label [10]. vmap adds the batch axis.
Array loss(const Params& p, const Array& x, const Array& label) {
  Array h = x;
  size_t n = p.size() / 2;
  for (size_t i = 0; i < n; ++i) {
    h = jnp::matmul(h, p.at(pname('w', i))) + p.at(pname('b', i));
    if (i + 1 < n) h = jnp::maximum(h, 0.0);
  }
  Array shifted = h - jx::stop_gradient(jnp::max(h));
  Array logp = shifted - jnp::log(jnp::sum(jnp::exp(shifted)));
  return -jnp::sum(logp * label);
}

struct Data {
  Params p = init({784, 256, 256, 10}, 0);
  Array xs = jx::random::normal(jx::random::PRNGKey(1), {kBatch, 784});
  Array ys = jnp::eye(10)(jx::random::randint(jx::random::PRNGKey(2), {kBatch}, 0, 10));
  // The loop's inputs, sliced once: slicing is not what the loop is measured for.
  std::vector<Array> x_rows, y_rows;
  Data() {
    for (int64_t i = 0; i < kBatch; ++i) {
      x_rows.push_back(xs(i));
      y_rows.push_back(ys(i));
    }
  }
};

const Data& data() {
  static const Data d;
  return d;
}

auto per_example_grad() { return jx::vmap(jx::grad(loss), {.in_axes = {jx::none, 0, 0}}); }

Params loop_grads(const Data& d) {
  auto g = jx::grad(loss);
  std::map<std::string, std::vector<Array>> rows;
  for (int64_t i = 0; i < kBatch; ++i) {
    Params gi = g(d.p, d.x_rows[size_t(i)], d.y_rows[size_t(i)]);
    for (auto& [name, v] : gi) rows[name].push_back(std::move(v));
  }
  Params out;
  for (auto& [name, vs] : rows) out[name] = jnp::stack(vs);
  return out;
}

double max_abs_diff(const Params& a, const Params& b) {
  double m = 0.0;
  for (const auto& [name, va] : a) {
    const Array& vb = b.at(name);
    if (va.shape() != vb.shape()) {
      std::fprintf(stderr, "bench_vmap: %s has shape %s vs %s\n", name.c_str(),
                   jx::shape_str(va.shape()).c_str(), jx::shape_str(vb.shape()).c_str());
      return INFINITY;
    }
    m = std::max(m, jnp::max(jnp::abs(va - vb)).astype(jx::float64).item<double>());
  }
  return m;
}

constexpr double kClip = 1.0;

// Each example's gradient scaled to norm <= kClip, then the mean over examples.
Params clipped_mean(const Params& p, const Array& xs, const Array& ys) {
  Params g = per_example_grad()(p, xs, ys);
  Array norm2;
  for (const auto& [name, v] : g) {
    std::vector<int64_t> axes;
    for (int64_t d = 1; d < v.ndim(); ++d) axes.push_back(d);
    Array s = jnp::sum(jnp::square(v), axes);
    norm2 = norm2.valid() ? norm2 + s : s;
  }
  Array scale = jnp::minimum(1.0, kClip / (jnp::sqrt(norm2) + 1e-6));
  Params out;
  for (const auto& [name, v] : g) {
    jx::Shape s(size_t(v.ndim()), 1);
    s[0] = v.shape()[0];
    out[name] = jnp::mean(v * scale.reshape(s), 0);
  }
  return out;
}

// jit of clipped_mean, compiled now; `materialize` compiles it without the per_example pass.
auto compiled_clipped_mean(bool materialize) {
  auto f = jx::jit(clipped_mean, {.name = materialize ? "clipped_mean_materialized" : "clipped_mean"});
  if (materialize) ::setenv("JX_PER_EXAMPLE_REWRITE", "0", 1);
  const Data& d = data();
  f(d.p, d.xs, d.ys);
  ::unsetenv("JX_PER_EXAMPLE_REWRITE");
  return f;
}

// Set by main() before the benchmarks run.
double g_diff_vmap = NAN, g_diff_jit = NAN, g_diff_clipped = NAN, g_diff_clipped_materialized = NAN;

void add_check_counters(benchmark::State& st) {
  st.counters["max_abs_diff_vmap_vs_loop"] = g_diff_vmap;
  st.counters["max_abs_diff_jit_vs_loop"] = g_diff_jit;
  st.counters["max_abs_diff_clipped_jit_vs_eager"] = g_diff_clipped;
  st.counters["max_abs_diff_clipped_materialized_vs_eager"] = g_diff_clipped_materialized;
}

void BM_per_example_vmap_grad(benchmark::State& st) {
  const Data& d = data();
  auto f = per_example_grad();
  for (auto _ : st) benchmark::DoNotOptimize(f(d.p, d.xs, d.ys));
  add_check_counters(st);
}
BENCHMARK(BM_per_example_vmap_grad)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_per_example_jit_vmap_grad(benchmark::State& st) {
  const Data& d = data();
  auto f = jx::jit(per_example_grad(), {.name = "per_example_grad"});
  f(d.p, d.xs, d.ys);  // trace and compile outside the timed loop
  for (auto _ : st) benchmark::DoNotOptimize(f(d.p, d.xs, d.ys));
  add_check_counters(st);
}
BENCHMARK(BM_per_example_jit_vmap_grad)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_per_example_loop_grad(benchmark::State& st) {
  const Data& d = data();
  for (auto _ : st) benchmark::DoNotOptimize(loop_grads(d));
  add_check_counters(st);
}
BENCHMARK(BM_per_example_loop_grad)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_clipped_mean_jit(benchmark::State& st) {
  const Data& d = data();
  auto f = compiled_clipped_mean(false);
  for (auto _ : st) benchmark::DoNotOptimize(f(d.p, d.xs, d.ys));
  add_check_counters(st);
}
BENCHMARK(BM_clipped_mean_jit)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_clipped_mean_jit_materialized(benchmark::State& st) {
  const Data& d = data();
  auto f = compiled_clipped_mean(true);
  for (auto _ : st) benchmark::DoNotOptimize(f(d.p, d.xs, d.ys));
  add_check_counters(st);
}
BENCHMARK(BM_clipped_mean_jit_materialized)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_clipped_mean_eager(benchmark::State& st) {
  const Data& d = data();
  for (auto _ : st) benchmark::DoNotOptimize(clipped_mean(d.p, d.xs, d.ys));
  add_check_counters(st);
}
BENCHMARK(BM_clipped_mean_eager)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // The numerical check, once and untimed: the three ways must give the same gradients.
  const Data& d = data();
  Params want = loop_grads(d);
  g_diff_vmap = max_abs_diff(per_example_grad()(d.p, d.xs, d.ys), want);
  g_diff_jit = max_abs_diff(jx::jit(per_example_grad())(d.p, d.xs, d.ys), want);
  std::fprintf(stderr, "bench_vmap: max |vmap - loop| = %.3g, max |jit(vmap) - loop| = %.3g\n",
               g_diff_vmap, g_diff_jit);
  Params clipped = clipped_mean(d.p, d.xs, d.ys);
  g_diff_clipped = max_abs_diff(compiled_clipped_mean(false)(d.p, d.xs, d.ys), clipped);
  g_diff_clipped_materialized = max_abs_diff(compiled_clipped_mean(true)(d.p, d.xs, d.ys), clipped);
  std::fprintf(stderr, "bench_vmap: clipped mean: max |jit - eager| = %.3g, without the pass %.3g\n",
               g_diff_clipped, g_diff_clipped_materialized);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
