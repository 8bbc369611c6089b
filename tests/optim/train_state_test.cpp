// optim::TrainState (flax.training.train_state.TrainState) and its batch_stats variant:
// create and apply_gradients against hand-derived updates; the state as a jit argument and
// result (one jitted step equals one eager step; one trace over several steps; apply_fn
// and tx static, not leaves); an nn::BatchNorm model trained through the batch_stats
// variant.
#include <gtest/gtest.h>

#include "jx/jx.h"
#include "jx/nn.h"
#include "jx/optim.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace nn = jx::nn;
namespace optim = jx::optim;
using jx::Array;
using jx::DType;
using jx::Tree;

// y = x @ w + b
Array linear(const Tree& variables, const Array& x) {
  const Tree& p = variables["params"];
  return jnp::matmul(x, p["w"].array()) + p["b"].array();
}

Tree linear_params() {
  return Tree{{"w", jr::normal(jr::PRNGKey(0), {4, 3})}, {"b", jnp::zeros({3})}};
}

std::pair<optim::TrainState, Array> train_step(const optim::TrainState& state, const Array& x, const Array& y) {
  auto loss_fn = [&](const Tree& params) {
    return jnp::mean(jnp::square(state.apply_fn(Tree{{"params", params}}, x) - y));
  };
  auto [loss, grads] = jx::value_and_grad(loss_fn)(state.params);
  return {state.apply_gradients(grads), loss};
}

TEST(OptimTrainState, CreateAndApplyGradients) {
  Tree params{{"w", jnp::array<float>({1, 2})}};
  auto state = optim::TrainState::create(linear, params, optim::sgd(0.1, {.momentum = 0.9}));
  EXPECT_EQ(state.step.item<int32_t>(), 0);
  EXPECT_EQ(state.opt_state.str(), "[{'trace': {'w': f32[2]}}, {}]");
  Tree g{{"w", jnp::array<float>({1, -1})}};
  auto s1 = state.apply_gradients(g);
  auto s2 = s1.apply_gradients(g);
  EXPECT_EQ(s2.step.item<int32_t>(), 2);
  // w - 0.1 g, then w - 0.1 (g + 0.9 g).
  jx::testing::expect_close(s2.params["w"].array(), jnp::array<float>({1 - 0.1f - 0.19f, 2 + 0.1f + 0.19f}), 1e-6,
                            1e-6, "params");
  jx::testing::expect_close(s2.opt_state[0]["trace"]["w"].array(), jnp::array<float>({1.9f, -1.9f}), 1e-6, 1e-6,
                            "trace");
  EXPECT_THROW(state.apply_gradients(Tree{{"v", jnp::ones({2})}}), jx::ValueError);
}

TEST(OptimTrainState, IsAPytreeWithStaticApplyFnAndTx) {
  auto state = optim::TrainState::create(linear, linear_params(), optim::adam(1e-2));
  auto [leaves, def] = jx::tree::flatten(state);
  // step, b, w, count, mu (b, w), nu (b, w): apply_fn and tx are not leaves.
  EXPECT_EQ(leaves.size(), 8u);
  auto back = jx::tree::unflatten<optim::TrainState>(def, leaves);
  EXPECT_EQ(back.tx.static_id(), state.tx.static_id());
  EXPECT_TRUE(bool(back.apply_fn));
  // Another optimizer is another structure: a jitted step never runs with the wrong tx.
  auto other = optim::TrainState::create(linear, linear_params(), optim::adam(1e-2));
  EXPECT_NE(jx::tree::structure(other), def);
  auto copy = state;
  EXPECT_EQ(jx::tree::structure(copy), def);
}

TEST(OptimTrainState, JittedStepEqualsEagerStepAndCompilesOnce) {
  Array x = jr::normal(jr::PRNGKey(1), {8, 4}), y = jr::normal(jr::PRNGKey(2), {8, 3});
  auto state = optim::TrainState::create(linear, linear_params(), optim::adamw(1e-2, {.weight_decay = 1e-2}));
  auto step = jx::jit(train_step);
  auto [eager, eager_loss] = train_step(state, x, y);
  jx::reset_jit_stats();
  auto [jitted, jitted_loss] = step(state, x, y);
  jx::testing::expect_close(jitted.params["w"].array(), eager.params["w"].array(), 1e-6, 1e-6, "params");
  jx::testing::expect_close(jitted.opt_state[0]["nu"]["w"].array(), eager.opt_state[0]["nu"]["w"].array(), 1e-7, 1e-6,
                            "nu");
  jx::testing::expect_close(jitted_loss, eager_loss, 1e-6, 1e-6, "loss");
  EXPECT_EQ(jitted.step.item<int32_t>(), 1);
  EXPECT_EQ(jitted.tx.static_id(), state.tx.static_id());
  auto s = jitted;
  float first_loss = jitted_loss.item<float>(), last_loss = 0;
  for (int i = 0; i < 5; ++i) {
    auto [next, loss] = step(s, x, y);
    s = next;
    last_loss = loss.item<float>();
  }
  EXPECT_EQ(s.step.item<int32_t>(), 6);
  EXPECT_LT(last_loss, first_loss);
  EXPECT_EQ(jx::jit_stats().traces, 1);
  EXPECT_EQ(jx::jit_stats().misses, 1);
  EXPECT_EQ(jx::jit_stats().hits, 5);
}

// The tutorial's step 10 model: Dense, BatchNorm, relu.
struct BatchNormNet : nn::Module<BatchNormNet> {
  Array call(Array x, bool train) const {
    x = nn::Dense{.features = 5}(x);
    x = nn::BatchNorm{}(x, /*use_running_average=*/!train);
    return nn::Dense{.features = 2}(nn::relu(x));
  }
};

TEST(OptimTrainState, BatchStatsVariantTrainsABatchNormModel) {
  BatchNormNet model;
  Array x = jr::normal(jr::PRNGKey(3), {16, 3}) * 2.0 + 1.0, y = jr::normal(jr::PRNGKey(4), {16, 2});
  Tree variables = model.init(jr::PRNGKey(0), x, false);
  auto apply = [model](const Tree& v, const Array& in, bool train) -> std::pair<Array, Tree> {
    if (!train) return {model.apply(v, in, false), v["batch_stats"]};
    auto [out, mutated] = model.apply(v, in, true, nn::Mutable{"batch_stats"});
    return {out, mutated["batch_stats"]};
  };
  auto state = optim::TrainStateWithBatchStats::create(apply, variables["params"], optim::adam(1e-2),
                                                       variables["batch_stats"]);
  auto train_step = [](const optim::TrainStateWithBatchStats& s, const Array& in, const Array& target) {
    auto loss_fn = [&](const Tree& params) {
      auto [out, stats] = s.apply_fn(Tree{{"params", params}, {"batch_stats", s.batch_stats}}, in, true);
      return std::make_pair(jnp::mean(jnp::square(out - target)), stats);
    };
    auto [loss, stats, grads] = jx::value_and_grad(loss_fn, jx::has_aux)(s.params);
    return std::make_pair(s.apply_gradients(grads, stats), loss);
  };
  auto [eager, eager_loss] = train_step(state, x, y);
  auto step = jx::jit(train_step);
  jx::reset_jit_stats();
  auto [jitted, jitted_loss] = step(state, x, y);
  jx::testing::expect_close(jitted_loss, eager_loss, 1e-6, 1e-5, "loss");
  const Array& mean = jitted.batch_stats["BatchNorm_0"]["mean"].array();
  jx::testing::expect_close(mean, eager.batch_stats["BatchNorm_0"]["mean"].array(), 1e-6, 1e-5, "batch mean");
  // The running mean moved from its initial zeros by (1 - momentum) * batch mean.
  EXPECT_GT(jnp::max(jnp::abs(mean)).item<float>(), 0.0f);
  auto s = jitted;
  for (int i = 0; i < 3; ++i) s = step(s, x, y).first;
  EXPECT_EQ(s.step.item<int32_t>(), 4);
  EXPECT_EQ(jx::jit_stats().traces, 1);
  // Evaluation reads the running statistics and leaves them unchanged.
  auto [out, stats] = s.apply_fn(s.variables(), x, false);
  EXPECT_EQ(out.shape(), jx::Shape({16, 2}));
  jx::testing::expect_close(stats["BatchNorm_0"]["var"].array(), s.batch_stats["BatchNorm_0"]["var"].array(), 0, 0,
                            "eval keeps stats");
}

}  // namespace
