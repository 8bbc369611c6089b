// The tutorial's MLP training step, timed: MLP 784-256-256-10 (ReLU, dropout 0.1), softmax
// cross-entropy, value_and_grad, Adam (lr 1e-3), batch 128 of random float32 inputs. PyTorch's
// same step is `mlp` in ../shared/peers/torch_bench.py (nn.Sequential of Linear/ReLU/Dropout,
// F.cross_entropy, torch.optim.Adam), run at its best configuration (bench/README.md).
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "first_call.h"
#include "jx/jx.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
using jx::Array;

namespace {

struct Linear {
  Array w, b;
};
JX_PYTREE(Linear, w, b)
using Params = std::vector<Linear>;
struct AdamState {
  Params mu, nu;
  Array count;
};
JX_PYTREE(AdamState, mu, nu, count)
struct TrainState {
  Params params;
  AdamState opt;
};
JX_PYTREE(TrainState, params, opt)

TrainState init(Array key) {
  const std::vector<int64_t> sizes = {784, 256, 256, 10};
  TrainState s;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    auto [next, kw, kb] = jr::split<3>(key);
    key = next;
    double bound = 1.0 / std::sqrt(double(sizes[i]));  // nn.Linear's default init
    s.params.push_back({jr::uniform(kw, {sizes[i], sizes[i + 1]}, jx::DType::Float32, -bound, bound),
                        jr::uniform(kb, {sizes[i + 1]}, jx::DType::Float32, -bound, bound)});
  }
  auto zeros = [](const Array& p) { return jnp::zeros_like(p); };
  s.opt = {jx::tree::map(zeros, s.params), jx::tree::map(zeros, s.params), jnp::zeros({}, jx::DType::Int32)};
  return s;
}

Array loss_fn(const Params& params, const Array& x, const Array& labels, const Array& key) {
  Array h = x;
  Array k = key;
  for (size_t i = 0; i < params.size(); ++i) {
    h = jnp::matmul(h, params[i].w) + params[i].b;
    if (i + 1 == params.size()) break;
    auto [next, sub] = jr::split<2>(k);
    k = next;
    h = jnp::where(jr::bernoulli(sub, 0.9, h.shape()), jnp::maximum(h, 0.0) / 0.9, 0.0);
  }
  Array shifted = h - jx::stop_gradient(jnp::max(h, 1, true));
  Array log_probs = shifted - jnp::log(jnp::sum(jnp::exp(shifted), 1, true));
  Array one_hot = (labels.reshape({-1, 1}) == jnp::arange(10)).astype(jx::DType::Float32);
  return -jnp::mean(jnp::sum(log_probs * one_hot, 1));
}

std::pair<TrainState, Array> train_step(const TrainState& s, const Array& x, const Array& labels,
                                        const Array& key) {
  auto [loss, grads] = jx::value_and_grad(loss_fn)(s.params, x, labels, key);
  Params mu = jx::tree::map([](const Array& m, const Array& g) { return 0.9 * m + 0.1 * g; }, s.opt.mu, grads);
  Params nu = jx::tree::map([](const Array& v, const Array& g) { return 0.999 * v + 0.001 * g * g; },
                            s.opt.nu, grads);
  Array count = s.opt.count + 1;
  Array t = count.astype(jx::DType::Float32);
  Array mu_scale = 1.0 / (1.0 - jnp::power(0.9, t)), nu_scale = 1.0 / (1.0 - jnp::power(0.999, t));
  Params params = jx::tree::map(
      [&](const Array& p, const Array& m, const Array& v) {
        return p - 1e-3 * (m * mu_scale) / (jnp::sqrt(v * nu_scale) + 1e-8);
      },
      s.params, mu, nu);
  return {TrainState{params, {mu, nu, count}}, loss};
}

struct Batch {
  Array x = jr::normal(jr::PRNGKey(1), {128, 784});
  Array y = jr::randint(jr::PRNGKey(2), {128}, 0, 10);
};

// Eager: every primitive dispatched one by one; value_and_grad linearizes and transposes.
void BM_train_step_eager(benchmark::State& st) {
  TrainState s = init(jr::PRNGKey(0));
  Batch b;
  Array key = jr::PRNGKey(3);
  for (auto _ : st) {
    auto [next, step_key] = jr::split<2>(key);
    key = next;
    auto [ns, loss] = train_step(s, b.x, b.y, step_key);
    s = std::move(ns);
    benchmark::DoNotOptimize(loss.item<float>());
  }
}
BENCHMARK(BM_train_step_eager)->Unit(benchmark::kMillisecond)->UseRealTime();

// jit: the whole step (forward, backward, Adam) traced once and compiled into fused kernels,
// the old state donated so its buffers hold the new one.
void BM_train_step_jit(benchmark::State& st) {
  TrainState s = init(jr::PRNGKey(0));
  Batch b;
  Array key = jr::PRNGKey(3);
  auto step = jx::jit(train_step, {.donate_argnums = {0}, .name = "train_step"});
  for (int i = 0; i < 3; ++i) {  // compile and warm up outside the timed loop
    auto [ns, loss] = step(s, b.x, b.y, jr::split<2>(key)[1]);
    s = std::move(ns);
  }
  for (auto _ : st) {
    auto [next, step_key] = jr::split<2>(key);
    key = next;
    auto [ns, loss] = step(s, b.x, b.y, step_key);
    s = std::move(ns);
    benchmark::DoNotOptimize(loss.item<float>());
  }
}
BENCHMARK(BM_train_step_jit)->Unit(benchmark::kMillisecond)->UseRealTime();

// Time to the first result of a fresh jit of the step (first_call.h): cold, the C++ compiler
// runs; warm, the kernels come from the disk cache.
void first_call(benchmark::State& st, bool cold) {
  TrainState s0 = init(jr::PRNGKey(0));
  Batch b;
  Array key = jr::PRNGKey(3);
  time_first_call(st, cold, [&] {
    jx::clear_jit_cache();  // forget the traced and compiled step; only the disk cache remains
    return [&, step = jx::jit(train_step, {.name = "train_step"})] { return step(s0, b.x, b.y, key).second.item<float>(); };
  });
}
void BM_train_step_first_call_cold(benchmark::State& st) { first_call(st, true); }
void BM_train_step_first_call_warm(benchmark::State& st) { first_call(st, false); }
BENCHMARK(BM_train_step_first_call_cold)->Iterations(2)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_train_step_first_call_warm)->Iterations(5)->Unit(benchmark::kMillisecond)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
