// Eager autodiff cost: value_and_grad of an MLP 784-256-256-10 softmax cross-entropy loss
// at batch 128 against its forward pass alone (goal: at most 3x), and resident memory
// across 10,000 eager grad calls on a small MLP (goal: flat).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "jx/jx.h"

namespace jnp = jx::numpy;
using jx::Array;
using Params = std::map<std::string, Array>;

namespace {

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

Array loss(const Params& p, const Array& x, const Array& labels) {
  Array h = x;
  size_t n = p.size() / 2;
  for (size_t i = 0; i < n; ++i) {
    h = jnp::matmul(h, p.at(pname('w', i))) + p.at(pname('b', i));
    if (i + 1 < n) h = jnp::maximum(h, 0.0);
  }
  Array shifted = h - jx::stop_gradient(jnp::max(h, 1, true));
  Array logp = shifted - jnp::log(jnp::sum(jnp::exp(shifted), 1, true));
  return -jnp::mean(jnp::sum(logp * labels, 1));
}

struct Data {
  Params p = init({784, 256, 256, 10}, 0);
  Array x = jx::random::normal(jx::random::PRNGKey(1), {128, 784});
  Array y = jnp::eye(10)(jx::random::randint(jx::random::PRNGKey(2), {128}, 0, 10));
};

void BM_mlp_forward(benchmark::State& st) {
  Data d;
  for (auto _ : st) benchmark::DoNotOptimize(loss(d.p, d.x, d.y));
}
BENCHMARK(BM_mlp_forward)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_mlp_value_and_grad(benchmark::State& st) {
  Data d;
  auto vg = jx::value_and_grad(loss);
  for (auto _ : st) benchmark::DoNotOptimize(vg(d.p, d.x, d.y));
}
BENCHMARK(BM_mlp_value_and_grad)->Unit(benchmark::kMillisecond)->UseRealTime();

long rss_kb() {
  std::ifstream f("/proc/self/status");
  std::string k;
  long v = 0;
  while (f >> k) {
    if (k == "VmRSS:") {
      f >> v;
      break;
    }
  }
  return v;
}

// 10,000 eager grad calls on a small MLP; RSS after 1,000 and after 10,000 calls.
void BM_grad_memory_10k(benchmark::State& st) {
  Params p = init({32, 64, 10}, 3);
  Array x = jx::random::normal(jx::random::PRNGKey(4), {16, 32});
  Array y = jnp::eye(10)(jnp::arange(16) % 10);
  auto g = jx::grad(loss);
  for (auto _ : st) {
    long after1k = 0;
    for (int i = 0; i < 10000; ++i) {
      benchmark::DoNotOptimize(g(p, x, y));
      if (i == 999) after1k = rss_kb();
    }
    st.counters["rss_MB_after_1k"] = double(after1k) / 1024.0;
    st.counters["rss_MB_after_10k"] = double(rss_kb()) / 1024.0;
  }
}
BENCHMARK(BM_grad_memory_10k)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
