// jx::optim's remaining optimizers and transformations (optim/optimizers_more.h,
// transforms_more.h): 25-step float64 trajectories against Optax's updates written out in
// NumPy and cross-checked with torch.optim where the two agree
// (tests/golden/gen_optim_optimizers.py), to 1e-12 relative; each alias's defaults; a
// schedule; states through jit and tree flatten/unflatten with Optax's field names;
// add_noise's determinism; errors.
#include <gtest/gtest.h>

#include <cmath>

#include "jx/jx.h"
#include "jx/optim.h"
#include "testing/check_grads.h"
#include "optim/test_function.h"
#include "testing/golden.h"

namespace {

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace optim = jx::optim;
using jx::Array;
using jx::DType;
using jx::Tree;

#include "golden/optim_optimizers_golden.inc"

Array load(const std::string& name) {
  for (const auto& g : kOptimOptimizersGolden)
    if (name == g.name) return jnp::array(g.values, jx::Shape(g.shape));
  throw std::runtime_error("no golden " + name);
}

using optim_testing::trajectory_loss;
const auto loss = trajectory_loss;

// `steps` steps of opt from w0; the parameters after each step, stacked.
Array trajectory(const optim::GradientTransformation& opt, int steps = 25, bool jitted = false) {
  Tree params{{"w", load("w0")}};
  Tree state = opt.init(params);
  auto step = [&opt](const Tree& p, const Tree& s) {
    Tree g = jx::grad(loss)(p);
    auto [updates, s2] = opt.update(g, s, p);
    return std::make_pair(optim::apply_updates(p, updates), s2);
  };
  auto jstep = jx::jit(step);
  std::vector<Array> out;
  for (int i = 0; i < steps; ++i) {
    std::tie(params, state) = jitted ? jstep(params, state) : step(params, state);
    out.push_back(params["w"].array());
  }
  return jnp::stack(out);
}

void expect_trajectory(const std::string& name, const optim::GradientTransformation& opt,
                       int steps = 25) {
  SCOPED_TRACE(name);
  jx::testing::expect_named_golden(kOptimOptimizersGolden, name, trajectory(opt, steps), 1e-12);
}

TEST(OptimOptimizers, TrajectoriesEqualOptaxs) {
  expect_trajectory("adamax", optim::adamax(0.05));
  expect_trajectory("adamaxw", optim::adamaxw(0.05, {.weight_decay = 1e-2}));
  expect_trajectory("amsgrad", optim::amsgrad(0.05));
  expect_trajectory("amsgrad_paper", optim::amsgrad(0.05, {.bias_correction_mu = false,
                                                           .bias_correction_nu = false}));
  expect_trajectory("radam", optim::radam(0.05));
  expect_trajectory("radam_eps0", optim::radam(0.05, {.eps = 0.0}));
  expect_trajectory("radam_nesterov", optim::radam(0.05, {.nesterov = true}));
  expect_trajectory("adagrad", optim::adagrad(0.1));
  expect_trajectory("adagrad_eps0", optim::adagrad(0.1, {.eps = 0.0}));
  expect_trajectory("adadelta", optim::adadelta());
  expect_trajectory("adadelta_wd", optim::adadelta(0.5, {.weight_decay = 1e-2}));
  expect_trajectory("adafactor", optim::adafactor(0.05));
  expect_trajectory("adafactor_factored", optim::adafactor(0.05, {.min_dim_size_to_factor = 2}));
  expect_trajectory("adafactor_momentum",
                    optim::adafactor(0.05, {.min_dim_size_to_factor = 2,
                                            .multiply_by_parameter_scale = false,
                                            .clipping_threshold = std::nullopt,
                                            .momentum = 0.9,
                                            .weight_decay_rate = 1e-2}));
  expect_trajectory("rmsprop", optim::rmsprop(0.01));
  expect_trajectory("rmsprop_torch", optim::rmsprop(0.01, {.eps_in_sqrt = false}));
  expect_trajectory(
      "rmsprop_centered_momentum",
      optim::rmsprop(0.01, {.eps_in_sqrt = false, .centered = true, .momentum = 0.9}));
  expect_trajectory("rmsprop_nesterov_bc", optim::rmsprop(0.01, {.initial_scale = 1.0,
                                                                 .momentum = 0.9,
                                                                 .nesterov = true,
                                                                 .bias_correction = true}));
  expect_trajectory("rmsprop_centered_bc",
                    optim::rmsprop(0.01, {.eps = 1e-2, .centered = true, .bias_correction = true}));
  expect_trajectory("lamb", optim::lamb(0.05, {.weight_decay = 1e-2}));
  expect_trajectory("lars", optim::lars(1.0, {.weight_decay = 1e-2, .trust_coefficient = 0.05}));
  expect_trajectory("lars_nesterov",
                    optim::lars(1.0, {.trust_coefficient = 0.05, .nesterov = true}));
  expect_trajectory("lion", optim::lion(0.01));
  expect_trajectory("novograd", optim::novograd(0.05));
  expect_trajectory("novograd_wd", optim::novograd(0.05, {.weight_decay = 1e-2}));
  expect_trajectory("yogi", optim::yogi(0.05));
  expect_trajectory("adabelief", optim::adabelief(0.05));
  expect_trajectory("adabelief_nesterov_wd",
                    optim::adabelief(0.05, {.weight_decay = 1e-2, .nesterov = true}));
  // The noise is jax.random.normal's for the same keys (the generator uses the threefry
  // reference), so these match Optax run under JAX bit for bit up to float64 rounding.
  expect_trajectory("noisy_sgd", optim::noisy_sgd(0.05));
  expect_trajectory("noisy_sgd_key7",
                    optim::chain(optim::add_noise(0.1, 0.55, jr::PRNGKey(7)), optim::scale(-0.05)));
}

TEST(OptimOptimizers, TransformationTrajectoriesEqualOptaxs) {
  expect_trajectory("ema", optim::chain(optim::ema(0.9), optim::scale(-0.05)));
  expect_trajectory("ema_nodebias",
                    optim::chain(optim::ema(0.9, /*debias=*/false), optim::scale(-0.05)));
  expect_trajectory("clip", optim::chain(optim::clip(0.5), optim::scale(-0.1)));
  expect_trajectory("clip_by_block_rms",
                    optim::chain(optim::clip_by_block_rms(0.5), optim::scale(-0.1)));
  expect_trajectory("adaptive_grad_clip",
                    optim::chain(optim::adaptive_grad_clip(0.1), optim::scale(-0.1)));
  expect_trajectory("centralize", optim::chain(optim::centralize(), optim::scale(-0.1)));
  expect_trajectory("keep_params_nonnegative",
                    optim::chain(optim::scale(-0.3), optim::keep_params_nonnegative()));
  expect_trajectory("param_block_norm",
                    optim::chain(optim::scale_by_param_block_norm(), optim::scale(-0.05)));
  expect_trajectory("trust_ratio",
                    optim::chain(optim::scale_by_trust_ratio(
                                     {.min_norm = 0.5, .trust_coefficient = 0.1, .eps = 1e-3}),
                                 optim::scale(-1.0)));
  expect_trajectory(
      "stddev_eps_outside",
      optim::chain(optim::scale_by_stddev(
                       {.decay = 0.95, .eps = 1e-4, .initial_scale = 0.1, .eps_in_sqrt = false}),
                   optim::scale(-0.01)));
}

TEST(OptimOptimizers, ScheduleDrivesAnOptimizer) {
  // Linear warm-up 0.01 -> 0.05 over 10 steps, in float64 (the schedules of schedules.h
  // give float32 values, as JAX without x64 does).
  optim::Schedule warmup = [](const Array& count) {
    return jnp::minimum(count.astype(DType::Float64), 10.0) * 0.04 / 10.0 + 0.01;
  };
  expect_trajectory("schedule_adamax", optim::adamax(warmup));
  // The float32 schedule of schedules.h drives the same optimizer to float32 accuracy.
  jx::testing::expect_named_golden(
      kOptimOptimizersGolden, "schedule_adamax",
      trajectory(optim::adamax(optim::linear_schedule(0.01, 0.05, 10))), 1e-6);
}

TEST(OptimOptimizers, AliasDefaultsAreOptaxs) {
  // Three steps of each alias given only its learning rate, against the generator's
  // functions whose Python defaults are Optax's.
  expect_trajectory("default_adamax", optim::adamax(1e-2), 3);
  expect_trajectory("default_adamaxw", optim::adamaxw(1e-2), 3);
  expect_trajectory("default_amsgrad", optim::amsgrad(1e-2), 3);
  expect_trajectory("default_radam", optim::radam(1e-2), 3);
  expect_trajectory("default_adagrad", optim::adagrad(1e-2), 3);
  expect_trajectory("default_adadelta", optim::adadelta(), 3);
  expect_trajectory("default_adafactor", optim::adafactor(), 3);
  expect_trajectory("default_rmsprop", optim::rmsprop(1e-2), 3);
  expect_trajectory("default_lamb", optim::lamb(1e-2), 3);
  expect_trajectory("default_lars", optim::lars(1e-2), 3);
  expect_trajectory("default_lion", optim::lion(1e-2), 3);
  expect_trajectory("default_novograd", optim::novograd(1e-2), 3);
  expect_trajectory("default_yogi", optim::yogi(1e-2), 3);
  expect_trajectory("default_adabelief", optim::adabelief(1e-2), 3);
  expect_trajectory("default_noisy_sgd", optim::noisy_sgd(1e-2), 3);
}

// Optax's state layouts: chain's list of states, each with Optax's field names.
TEST(OptimOptimizers, StateFieldsAreOptaxs) {
  Tree p{{"w", jnp::zeros({2, 3}, DType::Float64)}};
  auto str = [&](const optim::GradientTransformation& t) { return t.init(p).str(); };
  EXPECT_EQ(str(optim::adamax(1.0)),
            "[{'count': i32[], 'mu': {'w': f64[2,3]}, 'nu': {'w': f64[2,3]}}, {}]");
  EXPECT_EQ(str(optim::amsgrad(1.0)),
            "[{'count': i32[], 'mu': {'w': f64[2,3]}, 'nu': {'w': f64[2,3]}, 'nu_max': {'w': "
            "f64[2,3]}}, {}]");
  EXPECT_EQ(str(optim::adagrad(1.0)), "[{'sum_of_squares': {'w': f64[2,3]}}, {}]");
  EXPECT_EQ(str(optim::rmsprop(1.0)), "[{'nu': {'w': f64[2,3]}}, {}, {}]");
  EXPECT_EQ(str(optim::rmsprop(1.0, {.centered = true, .momentum = 0.9, .bias_correction = true})),
            "[{'count': i32[], 'mu': {'w': f64[2,3]}, 'nu': {'w': f64[2,3]}}, {}, {'trace': {'w': "
            "f64[2,3]}}]");
  EXPECT_EQ(str(optim::adadelta()), "[{}, {'e_g': {'w': f64[2,3]}, 'e_x': {'w': f64[2,3]}}, {}]");
  EXPECT_EQ(str(optim::adafactor()),
            "[{'count': i32[], 'v_row': {'w': f64[1]}, 'v_col': {'w': f64[1]}, 'v': {'w': "
            "f64[2,3]}}, {}, {}, {}]");
  EXPECT_EQ(str(optim::adafactor(1.0, {.min_dim_size_to_factor = 2, .momentum = 0.9})),
            "[{'count': i32[], 'v_row': {'w': f64[2]}, 'v_col': {'w': f64[3]}, 'v': {'w': "
            "f64[1]}}, {}, {}, {}, "
            "{'count': i32[], 'ema': {'w': f32[2,3]}}, {}]");
  EXPECT_EQ(str(optim::lars(1.0)), "[{}, {'inner_state': {}}, {}, {'trace': {'w': f64[2,3]}}]");
  EXPECT_EQ(str(optim::lion(1.0)), "[{'count': i32[], 'mu': {'w': f64[2,3]}}, {}, {}]");
  EXPECT_EQ(str(optim::novograd(1.0)),
            "[{'count': i32[], 'mu': {'w': f64[2,3]}, 'nu': {'w': f64[]}}, {}]");
  EXPECT_EQ(str(optim::noisy_sgd(1.0)), "[{'count': i32[], 'rng_key': u32[2]}, {}]");
  EXPECT_EQ(str(optim::zero_nans()), "{'found_nan': {'w': bool[]}}");
}

TEST(OptimOptimizers, StatesThroughJitAndTrees) {
  std::vector<std::pair<std::string, optim::GradientTransformation>> opts{
      {"radam", optim::radam(0.05)},
      {"novograd", optim::novograd(0.05)},
      {"adafactor", optim::adafactor(0.05, {.min_dim_size_to_factor = 2, .momentum = 0.9})},
      {"lars", optim::lars(1.0, {.trust_coefficient = 0.05})},
      {"noisy_sgd", optim::noisy_sgd(0.05)},
      {"rmsprop",
       optim::rmsprop(0.01,
                      {.eps = 1e-2, .centered = true, .momentum = 0.9, .bias_correction = true})},
      {"zero_nans_yogi", optim::chain(optim::zero_nans(), optim::yogi(0.05))},
  };
  Tree params{{"w", load("w0")}, {"b", jnp::array<double>({0.5, -0.25, 1.0})}};
  Tree grads = jx::grad([](const Tree& p) {
    return loss(Tree{{"w", p["w"]}}) + jnp::sum(jnp::square(p["b"].array()));
  })(params);
  for (const auto& [name, opt] : opts) {
    SCOPED_TRACE(name);
    try {
      jx::testing::expect_close(trajectory(opt, 5, /*jitted=*/true), trajectory(opt, 5), 1e-14,
                                1e-12, "jit");
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << e.what();
    }
    Tree state = opt.update(grads, opt.init(params), params).second;
    auto [leaves, def] = jx::tree::flatten(state);
    Tree back = jx::tree::unflatten<Tree>(def, leaves);
    EXPECT_EQ(jx::tree::structure(back), jx::tree::structure(state));
    auto [u1, s1] = opt.update(grads, state, params);
    auto [u2, s2] = opt.update(grads, back, params);
    jx::testing::expect_close(u1["w"].array(), u2["w"].array(), 0, 0, "round trip w");
    jx::testing::expect_close(u1["b"].array(), u2["b"].array(), 0, 0, "round trip b");
    // The state keeps its structure (and so its jit cache entry) from step to step.
    EXPECT_EQ(jx::tree::structure(s1), jx::tree::structure(state));
  }
}

TEST(OptimOptimizers, AddNoiseIsDeterministicForAKey) {
  auto opt = [](int seed) {
    return optim::chain(optim::add_noise(0.1, 0.55, jr::PRNGKey(seed)), optim::scale(-0.05));
  };
  Array a = trajectory(opt(3)), b = trajectory(opt(3)), c = trajectory(opt(4));
  jx::testing::expect_close(a, b, 0, 0, "same key");
  EXPECT_GT(jnp::max(jnp::abs(a - c)).item<double>(), 1e-3);
  // The state's key advances: the noise differs from step to step.
  Tree p{{"w", jnp::zeros({4}, DType::Float64)}};
  auto t = optim::add_noise(1.0, 0.0, jr::PRNGKey(0));
  auto [n1, s1] = t.update(p, t.init(p));
  auto [n2, s2] = t.update(p, s1);
  EXPECT_GT(jnp::max(jnp::abs(n1["w"].array() - n2["w"].array())).item<double>(), 1e-3);
  // Each step: split(key) -> (next, sample), one key per leaf from split(sample, leaves).
  auto [next, sample] = jr::split<2>(jr::PRNGKey(0));
  jx::testing::expect_close(
      n1["w"].array(), jr::normal(jr::split(sample, 1)(0), {4}, DType::Float64), 0, 0, "noise");
  EXPECT_EQ(s1["rng_key"].array().to_vector<uint32_t>(), next.to_vector<uint32_t>());
}

TEST(OptimOptimizers, SmallTransformations) {
  // zero_nans: NaNs to 0 and a found_nan flag per leaf (hand-derived).
  const double nan = std::nan("");
  Tree g{{"a", jnp::array<double>({1.0, nan, -2.0})}, {"b", jnp::array<double>({3.0})}};
  auto zn = optim::zero_nans();
  auto [u, s] = zn.update(g, zn.init(g));
  EXPECT_EQ(u["a"].array().to_vector<double>(), (std::vector<double>{1.0, 0.0, -2.0}));
  EXPECT_TRUE(s["found_nan"]["a"].array().item<bool>());
  EXPECT_FALSE(s["found_nan"]["b"].array().item<bool>());
  // centralize on a (2, 2) leaf subtracts each row's mean; vectors pass through.
  Tree m{{"k", jnp::array<double>({1.0, 3.0, 2.0, 6.0}).reshape({2, 2})},
         {"v", jnp::array<double>({1.0, 2.0})}};
  auto [cu, cs] = optim::centralize().update(m, Tree::dict());
  EXPECT_EQ(cu["k"].array().to_vector<double>(), (std::vector<double>{-1.0, 1.0, -2.0, 2.0}));
  EXPECT_EQ(cu["v"].array().to_vector<double>(), (std::vector<double>{1.0, 2.0}));
  // adaptive_grad_clip: a rank-4 (HWIO) leaf's units are its output channels.
  Tree p4{{"k", jnp::ones({1, 1, 2, 2}, DType::Float64)}};
  Tree g4{{"k", jnp::array<double>({3.0, 0.1, 4.0, 0.1}).reshape({1, 1, 2, 2})}};
  auto [au, as] = optim::adaptive_grad_clip(0.5).update(g4, Tree::dict(), p4);
  // column 0: |g| = 5 > 0.5 * sqrt(2): scaled to norm 0.5 sqrt(2); column 1 unchanged.
  const std::vector<double> got = au["k"].array().to_vector<double>();
  EXPECT_NEAR(got[0], 3.0 * 0.5 * std::sqrt(2.0) / 5.0, 1e-15);
  EXPECT_NEAR(got[1], 0.1, 1e-15);
}

TEST(OptimOptimizers, Errors) {
  Tree p{{"w", jnp::ones({2})}};
  auto expect_error = [](auto&& f, const std::string& needle) {
    try {
      f();
      ADD_FAILURE() << "no error; expected " << needle;
    } catch (const jx::ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error([&] { optim::scale_by_trust_ratio().update(p, Tree::dict()); },
               "[optim.scale_by_trust_ratio] needs the params");
  auto nv = optim::novograd(1e-3);
  expect_error([&] { nv.update(p, nv.init(p)); }, "[optim.scale_by_novograd] needs the params");
  // A state initialized for other params.
  auto rms = optim::scale_by_rms();
  Tree other{{"w", jnp::ones({3})}};
  expect_error(
      [&] { rms.update(p, rms.init(other)); },
      "[optim.scale_by_rms] the state's \"nu\" is {'w': f32[3]} but the updates are {'w': f32[2]}");
  expect_error([&] { optim::scale_by_radam().update(p, Tree::dict()); },
               "[optim.scale_by_radam] the state has no field \"mu\"");
  expect_error(
      [&] { optim::add_noise(0.1, 0.55, jnp::zeros({3})); },
      "[optim.add_noise] the key must be a uint32[2] key from jx::random::PRNGKey, got f32[3]");
  expect_error([&] { optim::adafactor(1e-3, {.clipping_threshold = 0.5}); },
               "[optim.adafactor] clipping_threshold must be >= 1");
  expect_error([&] { optim::scale_by_rss(-1.0); },
               "[optim.scale_by_rss] initial_accumulator_value must be >= 0");
  Tree p5{{"k", jnp::ones({1, 1, 1, 2, 2})}};
  expect_error(
      [&] { optim::adaptive_grad_clip(0.1).update(p5, Tree::dict(), p5); },
      "[optim.adaptive_grad_clip] a parameter of shape f32[1,1,1,2,2] has no default units");
  EXPECT_NO_THROW(optim::adaptive_grad_clip(0.1, 1e-3, std::vector<int64_t>{0, 1, 2, 3})
                      .update(p5, Tree::dict(), p5));
}

}  // namespace
