// What the module system costs eagerly: model.apply of the tutorial's MLP and CNN
// (batch 128) against the same computation written with jnp by hand, on the same
// parameter tree. The bound is 5%. (Under jit the two compile to the same
// program: tests/nn/same_program_test.cpp.)
#include <benchmark/benchmark.h>

#include "jx/jx.h"

namespace {

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace nn = jx::nn;
using jx::Array;
using jx::Tree;

struct MLP : nn::Module<MLP> {
  Array call(Array x) const {
    x = x.reshape({x.shape(0), -1});
    x = nn::relu(nn::Dense{.features = 512}(x));
    x = nn::relu(nn::Dense{.features = 512}(x));
    return nn::Dense{.features = 10}(x);
  }
};
Array mlp_by_hand(const Tree& v, Array x) {
  const Tree& p = v["params"];
  auto dense = [&](const char* n, const Array& h) { return jnp::matmul(h, p[n]["kernel"].array()) + p[n]["bias"].array(); };
  x = x.reshape({x.shape(0), -1});
  x = nn::relu(dense("Dense_0", x));
  x = nn::relu(dense("Dense_1", x));
  return dense("Dense_2", x);
}

struct CNN : nn::Module<CNN> {
  Array call(Array x) const {
    x = nn::relu(nn::Conv{.features = 32, .kernel_size = {3, 3}}(x));
    x = nn::max_pool(x, {2, 2}, {.strides = {2, 2}});
    x = nn::relu(nn::Conv{.features = 64, .kernel_size = {3, 3}}(x));
    x = x.reshape({x.shape(0), -1});
    x = nn::relu(nn::Dense{.features = 256}(x));
    return nn::Dense{.features = 10}(x);
  }
};
Array cnn_by_hand(const Tree& v, Array x) {
  const Tree& p = v["params"];
  auto conv = [&](const char* n, const Array& h) {
    return jx::lax::conv_general_dilated(h, p[n]["kernel"].array(), {1, 1}, "SAME", {}, {},
                                         {"NHWC", "HWIO", "NHWC"}) + p[n]["bias"].array();
  };
  auto dense = [&](const char* n, const Array& h) { return jnp::matmul(h, p[n]["kernel"].array()) + p[n]["bias"].array(); };
  x = nn::relu(conv("Conv_0", x));
  x = jx::lax::reduce_window_max(x, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  x = nn::relu(conv("Conv_1", x));
  x = x.reshape({x.shape(0), -1});
  x = nn::relu(dense("Dense_0", x));
  return dense("Dense_1", x);
}

template <class Model>
void run(benchmark::State& st, const Model& model, Array (*by_hand)(const Tree&, Array)) {
  Array x = jr::normal(jr::PRNGKey(1), {128, 28, 28, 1});
  Tree v = model.init(jr::PRNGKey(0), x);
  for (auto _ : st) {
    Array y = st.range(0) ? model.apply(v, x) : by_hand(v, x);
    benchmark::DoNotOptimize(y.impl().get());
  }
}

void BM_mlp(benchmark::State& st) { run(st, MLP{}, mlp_by_hand); }
void BM_cnn(benchmark::State& st) { run(st, CNN{}, cnn_by_hand); }

}  // namespace

BENCHMARK(BM_mlp)->ArgName("apply")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_cnn)->ArgName("apply")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
