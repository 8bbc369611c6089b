// The tutorial CNN's two conv layers at batch 128, NHWC/HWIO, 3x3 SAME, float32: forward
// alone (GFLOP/s, against the FMA peak) and forward plus both backward passes (vjp: the
// input and the weight gradient), eager and jitted; and conv + bias + relu, eager against
// jit (which folds the bias and relu into the call). PyTorch's side: bench/peers/torch_conv.py;
// bench/conv.sh runs both and the peak in one go and prints the ratios.
// BM_conv_resnet_8x8: the ResNet's (examples/train_resnet) 3x3 layers at batch 128 on 8x8
// images, forward, with the Winograd path (docs/convolution.md) on and off.
#include <benchmark/benchmark.h>

#include "jx/config.h"
#include "jx/jx.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;

struct Layer {
  int64_t n, h, c, o;
};
const Layer kLayers[] = {{128, 28, 1, 32}, {128, 14, 32, 64}};

Array conv(const Array& x, const Array& w) {
  return lax::conv_general_dilated(x, w, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"});
}

void set_flops(benchmark::State& st, const Layer& l, double passes) {
  st.counters["GFLOP/s"] = benchmark::Counter(
      passes * 2.0 * double(l.n * l.h * l.h * l.c * l.o * 9) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate);
}

void BM_conv_fwd(benchmark::State& st) {
  const Layer& l = kLayers[st.range(0)];
  Array k = jx::random::PRNGKey(0);
  Array x = jx::random::normal(k, {l.n, l.h, l.h, l.c}), w = jx::random::normal(k, {3, 3, l.c, l.o});
  for (auto _ : st) {
    Array y = conv(x, w);
    benchmark::DoNotOptimize(y.impl().get());
  }
  set_flops(st, l, 1);
}

void BM_conv_fwd_bwd(benchmark::State& st) {
  const Layer& l = kLayers[st.range(0)];
  Array k = jx::random::PRNGKey(0);
  Array x = jx::random::normal(k, {l.n, l.h, l.h, l.c}), w = jx::random::normal(k, {3, 3, l.c, l.o});
  Array ct = jx::random::normal(k, {l.n, l.h, l.h, l.o});
  for (auto _ : st) {
    auto [y, f_vjp] = jx::vjp(conv, x, w);
    auto [dx, dw] = f_vjp(ct);
    benchmark::DoNotOptimize(dw.impl().get());
  }
  set_flops(st, l, 3);
}

void BM_conv_fwd_bwd_jit(benchmark::State& st) {
  const Layer& l = kLayers[st.range(0)];
  Array k = jx::random::PRNGKey(0);
  Array x = jx::random::normal(k, {l.n, l.h, l.h, l.c}), w = jx::random::normal(k, {3, 3, l.c, l.o});
  Array ct = jx::random::normal(k, {l.n, l.h, l.h, l.o});
  auto step = jx::jit([](const Array& x, const Array& w, const Array& ct) {
    auto [y, f_vjp] = jx::vjp(conv, x, w);
    auto [dx, dw] = f_vjp(ct);
    return std::make_tuple(y, dx, dw);
  });
  for (auto _ : st) {
    auto out = step(x, w, ct);
    benchmark::DoNotOptimize(std::get<2>(out).impl().get());
  }
  set_flops(st, l, 3);
}

// A conv layer's forward as a model writes it: relu(conv(x, w) + b). Eager runs three
// ops; jit folds the bias and the relu into the convolution's call (the epilogue pass).
Array conv_bias_relu(const Array& x, const Array& w, const Array& b) {
  return jnp::maximum(conv(x, w) + b, 0.0f);
}

void BM_conv_bias_relu(benchmark::State& st) {
  const Layer& l = kLayers[st.range(0)];
  Array k = jx::random::PRNGKey(0);
  Array x = jx::random::normal(k, {l.n, l.h, l.h, l.c}), w = jx::random::normal(k, {3, 3, l.c, l.o});
  Array b = jx::random::normal(k, {l.o});
  auto jitted = jx::jit(conv_bias_relu);
  for (auto _ : st) {
    Array y = st.range(1) ? jitted(x, w, b) : conv_bias_relu(x, w, b);
    benchmark::DoNotOptimize(y.impl().get());
  }
  set_flops(st, l, 1);
}

}  // namespace

void BM_conv_resnet_8x8(benchmark::State& st) {
  const Layer l{128, 8, st.range(0), st.range(1)};
  jx::config::Scoped winograd(jx::config::conv_winograd, st.range(2) != 0);
  Array k = jx::random::PRNGKey(0);
  Array x = jx::random::normal(k, {l.n, l.h, l.h, l.c}), w = jx::random::normal(k, {3, 3, l.c, l.o});
  for (auto _ : st) {
    Array y = conv(x, w);
    benchmark::DoNotOptimize(y.impl().get());
  }
  set_flops(st, l, 1);
}
BENCHMARK(BM_conv_resnet_8x8)
    ->ArgsProduct({{64, 128}, {64, 128}, {0, 1}})
    ->ArgNames({"c", "k", "winograd"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK(BM_conv_bias_relu)->ArgsProduct({{0, 1}, {0, 1}})->ArgNames({"layer", "jit"})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_conv_fwd)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_conv_fwd_bwd)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_conv_fwd_bwd_jit)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
