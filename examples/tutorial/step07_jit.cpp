// Step 7 of "Migrating from PyTorch to JAX": jit. jax.jit traces a function once per
// argument signature (shapes, dtypes, static values) into a jaxpr, compiles it, and runs
// the compiled program on later calls (PyTorch's closest relatives: torch.compile,
// torch.jit.trace). jx::jit does the same: the jaxpr is optimized, fused and compiled to
// native code with the system C++ compiler, and cached on disk in ~/.cache/jx.
//
//   build/examples/tutorial_step07_jit
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "jx/jx.h"
#include "models.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace optim = jx::optim;
using jx::Array;
using jx::Tree;

const tutorial::MLP model;

// How many times train_step's C++ body has run: a side effect, like a Python print, which
// under jit happens while the function is traced, not when the compiled program runs.
int body_runs = 0;

// Step 6's train step, counting its runs.
std::pair<optim::TrainState, Array> train_step(const optim::TrainState& state, const Array& x,
                                               const Array& y) {
  ++body_runs;
  auto loss = [&](const Tree& params) {
    Array logits = state.apply_fn(Tree{{"params", params}}, x);
    return optim::softmax_cross_entropy_with_integer_labels(logits, y).mean();
  };
  auto [value, grads] = jx::value_and_grad(loss)(state.params);
  return {state.apply_gradients(grads), value};
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int main() {
  auto [data_key, label_key, init_key] = jr::split<3>(jr::PRNGKey(0));
  Array images = jr::normal(data_key, {64, 28, 28, 1});
  Array labels = jr::randint(label_key, {64}, 0, 10);
  Array x = images(jx::slice(0, 32)), y = labels(jx::slice(0, 32));
  auto create_state = [&] {
    return optim::TrainState::create([](const Tree& v, const Array& in) { return model.apply(v, in); },
                                     model.init(init_key, jnp::ones({1, 28, 28, 1}))["params"],
                                     optim::adam(1e-3));
  };

  std::cout << "== jit(train_step): same call signature, traced once ==\n";
  // JAX: train_step = jax.jit(train_step)      (or @jax.jit above the def)
  auto jitted_step = jx::jit(train_step, {.name = "train_step"});
  jx::reset_jit_stats();
  optim::TrainState state = create_state();
  float jit_loss = 0;
  for (int i = 0; i < 5; ++i) {
    auto [next, loss] = jitted_step(state, x, y);
    state = next;
    jit_loss = loss.item<float>();
    std::printf("step %d  loss %.4f\n", i, jit_loss);
  }
  jx::JitStats stats = jx::jit_stats();
  std::printf("5 jitted calls: %lld trace, %lld cache hits; the C++ body ran %d time\n",
              (long long)stats.traces, (long long)stats.hits, body_runs);

  // The compiled step computes what the eager one does (up to float rounding: fusion may
  // order operations differently).
  body_runs = 0;
  optim::TrainState eager = create_state();
  float eager_loss = 0;
  for (int i = 0; i < 5; ++i) {
    auto [next, loss] = train_step(eager, x, y);
    eager = next;
    eager_loss = loss.item<float>();
  }
  std::printf("5 eager calls: the C++ body ran %d times\n", body_runs);
  const float mean_diff = jnp::mean(jnp::abs(eager.params["Dense_0"]["kernel"].array() -
                                             state.params["Dense_0"]["kernel"].array()))
                              .item<float>();
  const bool close = std::abs(jit_loss - eager_loss) <= 1e-4f * eager_loss && mean_diff < 1e-6f;
  std::printf("jit matches eager after 5 steps: %s\n", close ? "yes" : "NO");

  // Speed (not checked: it depends on the machine). The first call above included tracing
  // and compiling, or loading the compiled code from ~/.cache/jx.
  auto t = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) state = jitted_step(state, x, y).first;
  (void)state.step.item<int32_t>();
  double jit_time = seconds_since(t) / 5;
  t = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) eager = train_step(eager, x, y).first;
  (void)eager.step.item<int32_t>();
  double eager_time = seconds_since(t) / 5;
  std::printf("time per step: eager %.2f ms, jitted %.2f ms\n", 1e3 * eager_time, 1e3 * jit_time);

  std::cout << "\n== A new shape is a new signature: one more trace ==\n";
  // JAX retraces for every new input shape; keep batch shapes fixed (drop_last=True).
  jx::reset_jit_stats();
  auto [next, loss] = jitted_step(state, images, labels);  // a batch of 64
  std::printf("batch of 64: loss %.4f, %lld new trace\n", loss.item<float>(),
              (long long)jx::jit_stats().traces);
  // Set JX_LOG_COMPILES=1 (jax_log_compiles) to see each compile and its reason on stderr:
  //   [jit] compiling 'train_step' for (...): cache miss: argument 1: f32[32,28,28,1] -> ...

  std::cout << "\n== Static arguments are decided by C++ type ==\n";
  // JAX: jax.jit(f, static_argnums=1) for a Python bool. In jx an Array is traced and a
  // bool, int, enum or string is static: each value gets its own trace.
  auto scale = jx::jit([](const Array& v, bool twice) {
    std::cout << "  (tracing scale with twice=" << (twice ? "true" : "false") << ")\n";
    return twice ? v * 2.0 : v;
  });
  jx::reset_jit_stats();
  Array a = scale(jnp::array({1.0f, 2.0f}), true);
  std::cout << "scale([1, 2], true) = " << a.repr() << "\n";
  Array b = scale(jnp::array({1.0f, 2.0f}), false);
  std::cout << "scale([1, 2], false) = " << b.repr() << "\n";
  Array c = scale(jnp::array({3.0f, 4.0f}), true);  // cached: no trace
  std::cout << "scale([3, 4], true) = " << c.repr() << "\n";
  std::printf("3 calls, %lld traces: one per value of `twice`\n", (long long)jx::jit_stats().traces);

  std::cout << "\n== What jit traces: the jaxpr ==\n";
  // JAX: print(jax.make_jaxpr(f)(x))
  auto f = [](const Array& v) { return jnp::sum(jnp::tanh(v) * 2.0); };
  std::cout << jx::make_jaxpr(f)(jnp::ones({3})) << "\n";

  // Printing values at run time needs jax.debug.print: it is part of the compiled program.
  std::cout << "\n== jx::debug::print runs every call ==\n";
  auto g = jx::jit([](const Array& v) {
    jx::debug::print("  debug.print: v = {}", v);
    return v + 1.0;
  });
  g(jnp::array({1.0f}));
  g(jnp::array({2.0f}));
  return 0;
}
