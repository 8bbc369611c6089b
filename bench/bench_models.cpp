// The tutorial's models as whole jitted steps, beside PyTorch's same workloads in
// ../shared/peers/torch_bench.py (`--only cnn,resnet,infer`; bench/models.sh runs both and
// prints the ratios):
//   - the CNN train step (examples/train_cnn's: conv 32 - relu - max pool - conv 64 - relu -
//     dense 256 - dropout 0.1 - dense 10, softmax cross-entropy, chain(clip_by_global_norm(1),
//     adamw(1e-3, weight_decay 1e-4)), batch 32 and 128, random float32 input [b, 28, 28, 1];
//   - the ResNet train step (examples/train_resnet's model: BatchNorm in training mode, the
//     batch_stats collection updated through nn::Mutable), batch 32 and 128, input [b, 32, 32, 3]
//     as PyTorch's ResNet takes;
//   - CNN inference, batch 1000 (deterministic apply, jitted);
//   - the CNN train step's time to first result from a fresh jit: cold (empty kernel cache, the
//     C++ compiler runs) and warm (kernels loaded from the disk cache).
// Every step donates the old state, as train_cnn does, and reads the loss back each call (so
// the time includes finishing the step, as PyTorch's `loss` does).
#include <benchmark/benchmark.h>

#include "../examples/train_resnet/resnet.h"
#include "cnn_step.h"
#include "first_call.h"
#include "jx/jx.h"
#include "jx/parallel.h"
#include "nn/tutorial_models.h"

namespace {

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace nn = jx::nn;
namespace optim = jx::optim;
using jx::Array;
using jx::Tree;

using bench::cnn_state;
using bench::cnn_step;
using bench::tutorial_optimizer;

// ---- the CNN (bench/cnn_step.h) ----

void BM_cnn_train_step(benchmark::State& st) {
  const int64_t batch = st.range(0);
  Array x = jr::normal(jr::PRNGKey(1), {batch, 28, 28, 1});
  Array y = jr::randint(jr::PRNGKey(2), {batch}, 0, 10);
  optim::TrainState s = cnn_state(x);
  auto step = jx::jit(cnn_step, {.donate_argnums = {0}, .name = "cnn_train_step"});
  Array root = jr::PRNGKey(3);
  uint32_t t = 0;
  for (int i = 0; i < 3; ++i) s = step(s, x, y, jr::fold_in(root, t++)).first;  // compile, warm up
  const double flops = step.lower(s, x, y, root).compile().cost_analysis().flops;  // the cached program
  for (auto _ : st) {
    auto [next, loss] = step(s, x, y, jr::fold_in(root, t++));
    s = std::move(next);
    benchmark::DoNotOptimize(loss.item<float>());
  }
  st.counters["images/s"] = benchmark::Counter(double(batch), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["GFLOP/step"] = flops * 1e-9;
  st.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_cnn_train_step)->ArgName("batch")->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same step data-parallel over this process' CPU devices (jx::pmap, train_cnn
// --data-parallel): each device takes batch / devices images with cores / devices threads,
// pmean averages the gradients, the state stays replicated. Issue 18: at least 0.85 of
// the one-device step's throughput.
void BM_cnn_train_step_data_parallel(benchmark::State& st) {
  const int64_t batch = st.range(0), devices = st.range(1);
  jx::set_cpu_device_count(int(devices));
  Array x = jr::normal(jr::PRNGKey(1), {devices, batch / devices, 28, 28, 1});
  Array y = jr::randint(jr::PRNGKey(2), {devices, batch / devices}, 0, 10);
  optim::TrainState s = cnn_state(x(0));
  auto step = jx::pmap(
      [](const optim::TrainState& s, const Array& x, const Array& labels, const Array& key) {
        tutorial::CNN model;
        auto loss_fn = [&](const Tree& params) {
          Array logits = model.apply(Tree{{"params", params}}, x, false, nn::Rngs{{"dropout", key}});
          return jnp::mean(optim::softmax_cross_entropy_with_integer_labels(logits, labels));
        };
        auto [loss, grads] = jx::value_and_grad(loss_fn)(s.params);
        return std::make_pair(s.apply_gradients(jx::lax::pmean(grads, "batch")), jx::lax::pmean(loss, "batch"));
      },
      {.axis_name = "batch", .in_axes = {jx::none, 0, 0, jx::none}, .out_axes = jx::none, .name = "cnn_dp_step"});
  Array root = jr::PRNGKey(3);
  uint32_t t = 0;
  for (int i = 0; i < 3; ++i) s = step(s, x, y, jr::fold_in(root, t++)).first;
  for (auto _ : st) {
    auto [next, loss] = step(s, x, y, jr::fold_in(root, t++));
    s = std::move(next);
    benchmark::DoNotOptimize(loss.item<float>());
  }
  st.counters["images/s"] = benchmark::Counter(double(batch), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_cnn_train_step_data_parallel)
    ->ArgNames({"batch", "devices"})
    ->Args({128, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_cnn_inference(benchmark::State& st) {
  const int64_t batch = st.range(0);
  Array x = jr::normal(jr::PRNGKey(1), {batch, 28, 28, 1});
  tutorial::CNN model;
  Tree params = model.init(jr::PRNGKey(0), x, true)["params"];
  auto predict = jx::jit([model](const Tree& p, const Array& in) { return model.apply(Tree{{"params", p}}, in, true); },
                         {.name = "cnn_predict"});
  for (int i = 0; i < 3; ++i) predict(params, x).block_until_ready();
  for (auto _ : st) benchmark::DoNotOptimize(predict(params, x).block_until_ready());
  st.counters["images/s"] = benchmark::Counter(double(batch), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_cnn_inference)->ArgName("batch")->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- the ResNet (BatchNorm: batch_stats updated in training) ----

std::pair<Array, Tree> resnet_apply(const Tree& v, const Array& x, bool train) {
  resnet::ResNet model;
  if (!train) return {model.apply(v, x, false), v["batch_stats"]};
  auto [out, mutated] = model.apply(v, x, true, nn::Mutable{"batch_stats"});
  return {out, mutated["batch_stats"]};
}

std::pair<optim::TrainStateWithBatchStats, Array> resnet_step(const optim::TrainStateWithBatchStats& s,
                                                              const Array& x, const Array& labels) {
  auto loss_fn = [&](const Tree& params) {
    auto [logits, stats] = s.apply_fn(Tree{{"params", params}, {"batch_stats", s.batch_stats}}, x, true);
    return std::make_pair(jnp::mean(optim::softmax_cross_entropy_with_integer_labels(logits, labels)), stats);
  };
  auto [loss, stats, grads] = jx::value_and_grad(loss_fn, jx::has_aux)(s.params);
  return {s.apply_gradients(grads, stats), loss};
}

void BM_resnet_train_step(benchmark::State& st) {
  const int64_t batch = st.range(0);
  Array x = jr::normal(jr::PRNGKey(1), {batch, 32, 32, 3});
  Array y = jr::randint(jr::PRNGKey(2), {batch}, 0, 10);
  Tree variables = resnet::ResNet{}.init(jr::PRNGKey(0), x, false);
  auto s = optim::TrainStateWithBatchStats::create(resnet_apply, variables["params"], tutorial_optimizer(),
                                                   variables["batch_stats"]);
  auto step = jx::jit(resnet_step, {.donate_argnums = {0}, .name = "resnet_train_step"});
  for (int i = 0; i < 3; ++i) s = step(s, x, y).first;
  const double flops = step.lower(s, x, y).compile().cost_analysis().flops;
  for (auto _ : st) {
    auto [next, loss] = step(s, x, y);
    s = std::move(next);
    benchmark::DoNotOptimize(loss.item<float>());
  }
  st.counters["images/s"] = benchmark::Counter(double(batch), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["GFLOP/step"] = flops * 1e-9;
  st.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_resnet_train_step)->ArgName("batch")->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- compile time of the CNN step ----

void cnn_step_first_call(benchmark::State& st, bool cold) {
  Array x = jr::normal(jr::PRNGKey(1), {128, 28, 28, 1});
  Array y = jr::randint(jr::PRNGKey(2), {128}, 0, 10);
  optim::TrainState s0 = cnn_state(x);
  Array key = jr::PRNGKey(3);
  time_first_call(st, cold, [&] {
    jx::clear_jit_cache();  // forget the traced and compiled step; only the disk cache remains
    return [&, step = jx::jit(cnn_step, {.name = "cnn_train_step"})] { return step(s0, x, y, key).second.item<float>(); };
  });
}
void BM_cnn_step_compile_cold(benchmark::State& st) { cnn_step_first_call(st, true); }
void BM_cnn_step_compile_warm(benchmark::State& st) { cnn_step_first_call(st, false); }
BENCHMARK(BM_cnn_step_compile_cold)->Iterations(2)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_cnn_step_compile_warm)->Iterations(5)->Unit(benchmark::kMillisecond)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
