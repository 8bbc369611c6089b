// The jit front end's fixed cost: a jitted one-element add (flatten, cache lookup, run the
// compiled program, unflatten) against the same add run eagerly, in the same run; and a
// cache hit with a pytree of 64 leaves; the jit/eager ratio is the front end's overhead.
#include <benchmark/benchmark.h>

#include <map>
#include <string>

#include "jx/jx.h"

namespace jnp = jx::numpy;
using jx::Array;

namespace {

void BM_eager_add_1elem(benchmark::State& st) {
  Array a = jnp::array<float>({1.0f});
  Array b = jnp::array<float>({2.0f});
  for (auto _ : st) {
    Array c = a + b;
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_eager_add_1elem);

void BM_jit_add_1elem(benchmark::State& st) {
  Array a = jnp::array<float>({1.0f});
  Array b = jnp::array<float>({2.0f});
  auto add = jx::jit([](const Array& x, const Array& y) { return x + y; });
  add(a, b);  // trace and compile outside the timed loop
  for (auto _ : st) {
    Array c = add(a, b);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_jit_add_1elem);

// Per-call cost that grows with the argument tree: 64 leaves in a dict, plus a static.
void BM_jit_hit_64_leaves(benchmark::State& st) {
  std::map<std::string, Array> params;
  for (int i = 0; i < 64; ++i) {
    std::string key = std::to_string(100 + i);  // "p" + to_string trips GCC 12's -Wrestrict
    key.insert(key.begin(), 'p');
    params[key] = jnp::array<float>({float(i)});
  }
  auto f = jx::jit([](const std::map<std::string, Array>& p, bool train) {
    return train ? p.at("p100") : p.at("p101");
  });
  f(params, true);
  for (auto _ : st) {
    Array c = f(params, true);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_jit_hit_64_leaves);

}  // namespace

BENCHMARK_MAIN();
