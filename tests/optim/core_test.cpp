// jx::optim's core (optim/transform.h, optimizers.h): trajectories of sgd, adam, nadam,
// adamw and a clipped adamw against Optax's updates written out in NumPy and checked
// against torch.optim (tests/golden/gen_optim_core.py), to 1e-12 relative in float64;
// states through jit and tree flatten/unflatten; chain's state layout; errors.
#include <gtest/gtest.h>

#include "jx/jx.h"
#include "jx/optim.h"
#include "testing/check_grads.h"
#include "optim/test_function.h"
#include "testing/golden.h"

namespace {

namespace jnp = jx::numpy;
namespace optim = jx::optim;
using jx::Array;
using jx::DType;
using jx::Tree;

#include "golden/optim_core_golden.inc"

Array load(const std::string& name) {
  for (const auto& g : kOptimCoreGolden)
    if (name == g.name) return jnp::array(g.values, jx::Shape(g.shape));
  throw std::runtime_error("no golden " + name);
}

using optim_testing::trajectory_loss;
const auto loss = trajectory_loss;

// 25 steps of opt from w0; the parameters after each step, stacked.
Array trajectory(const optim::GradientTransformation& opt, bool jitted = false) {
  Tree params{{"w", load("w0")}};
  Tree state = opt.init(params);
  auto step = [&opt](const Tree& p, const Tree& s) {
    Tree g = jx::grad(loss)(p);
    auto [updates, s2] = opt.update(g, s, p);
    return std::make_pair(optim::apply_updates(p, updates), s2);
  };
  std::vector<Array> out;
  for (int i = 0; i < 25; ++i) {
    std::tie(params, state) = jitted ? jx::jit(step)(params, state) : step(params, state);
    out.push_back(params["w"].array());
  }
  return jnp::stack(out);
}

void expect_trajectory(const std::string& name, const optim::GradientTransformation& opt) {
  SCOPED_TRACE(name);
  jx::testing::expect_named_golden(kOptimCoreGolden, name, trajectory(opt), 1e-12);
}

TEST(OptimCore, TrajectoriesEqualOptaxs) {
  expect_trajectory("sgd", optim::sgd(0.05));
  expect_trajectory("sgd_momentum", optim::sgd(0.05, {.momentum = 0.9}));
  expect_trajectory("sgd_nesterov", optim::sgd(0.05, {.momentum = 0.9, .nesterov = true}));
  expect_trajectory("adam", optim::adam(0.05));
  expect_trajectory("nadam", optim::nadam(0.05));
  expect_trajectory("adamw", optim::adamw(0.05, {.weight_decay = 1e-2}));
  // The tutorial's chain, as it reads in Python.
  expect_trajectory("clip_adamw", optim::chain(optim::clip_by_global_norm(1.0),
                                               optim::adamw(0.05, {.weight_decay = 1e-4})));
  // A schedule driving adam (its float32 learning rate, as JAX's without x64).
  expect_trajectory("adam_linear_schedule", optim::adam(optim::linear_schedule(0.05, 0.01, 20)));
}

TEST(OptimCore, StatesThroughJitAndTrees) {
  auto opt = optim::chain(optim::clip_by_global_norm(1.0), optim::adamw(0.05, {.weight_decay = 1e-4}));
  jx::testing::expect_close(trajectory(opt, /*jitted=*/true), trajectory(opt), 1e-12, 1e-12, "jit");
  Tree params{{"w", load("w0")}, {"b", jnp::zeros({3}, DType::Float64)}};
  Tree state = opt.init(params);
  // chain's state: one entry per transformation; adamw's is itself a chain.
  EXPECT_EQ(state.str(), "[{}, [{'count': i32[], 'mu': {'b': f64[3], 'w': f64[2,3]}, 'nu': {'b': f64[3], "
                         "'w': f64[2,3]}}, {}, {}]]");
  auto [leaves, def] = jx::tree::flatten(state);
  Tree back = jx::tree::unflatten<Tree>(def, leaves);
  EXPECT_EQ(jx::tree::structure(back), jx::tree::structure(state));
  Tree g = jx::tree::map([](const Array& p) { return jnp::ones_like(p); }, params);
  auto [u1, s1] = opt.update(g, state, params);
  auto [u2, s2] = opt.update(g, back, params);
  jx::testing::expect_close(u1["w"].array(), u2["w"].array(), 0, 0, "round trip");
}

TEST(OptimCore, AdamDefaultsAreOptaxs) {
  // One step from zero state: mu_hat = g, nu_hat = g^2, update = -lr * g / (|g| + 1e-8).
  Tree p{{"w", jnp::array<double>({0.0, 0.0})}};
  Tree g{{"w", jnp::array<double>({2.0, -1e-8})}};
  auto opt = optim::adam(1e-3);
  auto [u, s] = opt.update(g, opt.init(p), p);
  EXPECT_NEAR(u["w"].array()(0).item<double>(), -1e-3 * 2.0 / (2.0 + 1e-8), 1e-18);
  EXPECT_NEAR(u["w"].array()(1).item<double>(), 1e-3 * 1e-8 / (1e-8 + 1e-8), 1e-15);
  EXPECT_EQ(s[0]["count"].array().item<int32_t>(), 1);
  // adamw's default weight decay is Optax's 1e-4.
  Tree p1{{"w", jnp::array<double>({1.0})}};
  Tree g0{{"w", jnp::array<double>({0.0})}};
  auto w = optim::adamw(1.0);
  auto [uw, sw] = w.update(g0, w.init(p1), p1);
  EXPECT_NEAR(uw["w"].array()(0).item<double>(), -1e-4, 1e-18);
}

TEST(OptimCore, Errors) {
  Tree p{{"w", jnp::ones({2})}};
  auto w = optim::adamw(1e-3);
  EXPECT_THROW(w.update(p, w.init(p)), jx::ValueError);  // add_decayed_weights needs params
  EXPECT_THROW(optim::adam(1e-3).update(p, Tree::dict(), p), jx::ValueError);
}

}  // namespace
