// jx::optim's combinators (optim/combine.h) against updates derived by hand from Optax's
// definitions: masked and partition on a nested tree (state layouts included),
// apply_if_finite with NaN gradients, MultiSteps against one step on the averaged (or
// summed) gradient, inject_hyperparams against the constant form and under jit (changing
// the learning rate in the state changes the next step without retracing), freeze, and the
// tree helpers. float64 throughout, so equalities are exact or to 1e-15.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "jx/jx.h"
#include "jx/optim.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
namespace optim = jx::optim;
using jx::Array;
using jx::DType;
using jx::Tree;

Array f64(std::initializer_list<double> v) { return jnp::array<double>(v); }
double at(const Tree& t, size_t i = 0) { return t.array().reshape({-1})(int64_t(i)).item<double>(); }
void expect_equal(const Array& a, const Array& b, const std::string& what) {
  jx::testing::expect_close(a, b, 0, 0, what);
}

// {'a': {'w': f64[2], 'b': f64[1]}, 'c': f64[2]}
Tree nested_params() { return Tree{{"a", Tree{{"w", f64({1, 2})}, {"b", f64({3})}}}, {"c", f64({4, 5})}}; }
Tree nested_grads(double s) {
  return Tree{{"a", Tree{{"w", f64({0.5 * s, -1 * s})}, {"b", f64({2 * s})}}}, {"c", f64({-3 * s, 0.25 * s})}};
}

// One Adam step (Optax's formulas, lr, b1 0.9, b2 0.999, eps 1e-8) on one coordinate
// after the moments m, v and step t.
struct Adam1 {
  double m = 0, v = 0;
  int t = 0;
  double step(double g, double lr) {
    ++t;
    m = 0.9 * m + 0.1 * g;
    v = 0.999 * v + 0.001 * g * g;
    const double mh = m / (1 - std::pow(0.9, t)), vh = v / (1 - std::pow(0.999, t));
    return -lr * mh / (std::sqrt(vh) + 1e-8);
  }
};

TEST(OptimCombine, MaskedTransformsOnlyTheMaskedLeavesAndKeepsNoStateForTheOthers) {
  Tree params = nested_params();
  Tree mask{{"a", Tree{{"w", true}, {"b", false}}}, {"c", true}};
  auto tx = optim::masked(optim::sgd(0.1, {.momentum = 0.9}), mask);
  Tree state = tx.init(params);
  // Optax's MaskedState(inner_state=...): the masked-out leaf is None (MaskedNode), no leaf.
  // (Trees built by tree::map print their dicts in flattening order: sorted keys.)
  EXPECT_EQ(state.str(), "{'inner_state': [{'trace': {'a': {'b': None, 'w': f64[2]}, 'c': f64[2]}}, {}]}");
  EXPECT_EQ(jx::tree::leaves(state).size(), 2u);
  Tree g1 = nested_grads(1), g2 = nested_grads(2);
  auto [u1, s1] = tx.update(g1, state, params);
  auto [u2, s2] = tx.update(g2, s1, params);
  // Momentum: trace2 = g2 + 0.9 g1, update -0.1 * trace; the masked-out leaf passes through.
  EXPECT_DOUBLE_EQ(at(u1["a"]["w"], 0), -0.1 * 0.5);
  EXPECT_DOUBLE_EQ(at(u2["a"]["w"], 1), -0.1 * (-2 + 0.9 * -1));
  EXPECT_DOUBLE_EQ(at(u2["c"], 0), -0.1 * (-6 + 0.9 * -3));
  expect_equal(u2["a"]["b"].array(), g2["a"]["b"].array(), "masked-out leaf");
  EXPECT_EQ(jx::tree::structure(u2), jx::tree::structure(params));

  // A prefix mask (one bool for the subtree 'a') and a mask function give the same layout.
  auto prefix = optim::masked(optim::sgd(0.1), Tree{{"a", false}, {"c", true}});
  auto [pu, ps] = prefix.update(g1, prefix.init(params), params);
  expect_equal(pu["a"]["w"].array(), g1["a"]["w"].array(), "prefix: 'a' untouched");
  EXPECT_DOUBLE_EQ(at(pu["c"], 1), -0.1 * 0.25);
  auto by_fn = optim::masked(optim::scale(-1.0), [](const Tree& p) {
    return jx::tree::map([](const Array& x) { return x.size() > 1; }, p);  // not the 1-element leaf
  });
  auto [fu, fs] = by_fn.update(g1, by_fn.init(params), params);
  EXPECT_DOUBLE_EQ(at(fu["a"]["w"], 0), -0.5);
  EXPECT_DOUBLE_EQ(at(fu["a"]["b"]), 2.0);

  // A mask of the wrong structure names the function and the place.
  try {
    optim::masked(optim::sgd(0.1), Tree{{"a", Tree{{"w", true}}}, {"c", true}}).init(params);
    FAIL() << "no error";
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[optim.masked] the mask does not match the params at 'a'"),
              std::string::npos)
        << e.what();
  }
}

TEST(OptimCombine, PartitionAppliesOneTransformationPerLabel) {
  Tree params{{"Dense_0", Tree{{"kernel", f64({1, 2})}, {"bias", f64({0.5})}}},
              {"Dense_1", Tree{{"kernel", f64({-1})}, {"bias", f64({2})}}}};
  Tree labels{{"Dense_0", Tree{{"kernel", optim::label("adam")}, {"bias", optim::label("sgd")}}},
              {"Dense_1", Tree{{"kernel", optim::label("adam")}, {"bias", optim::label("sgd")}}}};
  optim::LabeledTransforms txs{{"adam", optim::adam(0.1)}, {"sgd", optim::sgd(0.5)}};
  auto by_tree = optim::partition(txs, labels);
  auto by_path = optim::multi_transform(txs, optim::PathLabelFn([](const jx::tree::KeyPath& p, const Array&) {
    return p.str().ends_with("bias") ? std::string("sgd") : std::string("adam");
  }));
  Tree state = by_tree.init(params);
  EXPECT_EQ(state.str(),
            "{'inner_states': {'adam': {'inner_state': [{'count': i32[], 'mu': {'Dense_0': {'bias': None, 'kernel': "
            "f64[2]}, 'Dense_1': {'bias': None, 'kernel': f64[1]}}, 'nu': {'Dense_0': {'bias': None, 'kernel': "
            "f64[2]}, 'Dense_1': {'bias': None, 'kernel': f64[1]}}}, {}]}, 'sgd': {'inner_state': [{}, {}]}}}");
  Tree state_p = by_path.init(params);
  Adam1 k00, k01, k10;
  for (int i = 1; i <= 3; ++i) {
    Tree g{{"Dense_0", Tree{{"kernel", f64({0.3 * i, -0.2})}, {"bias", f64({1.0 * i})}}},
           {"Dense_1", Tree{{"kernel", f64({2.0 / i})}, {"bias", f64({-0.5})}}}};
    auto [u, s] = by_tree.update(g, state, params);
    auto [up, sp] = by_path.update(g, state_p, params);
    state = s;
    state_p = sp;
    EXPECT_NEAR(at(u["Dense_0"]["kernel"], 0), k00.step(0.3 * i, 0.1), 1e-15);
    EXPECT_NEAR(at(u["Dense_0"]["kernel"], 1), k01.step(-0.2, 0.1), 1e-15);
    EXPECT_NEAR(at(u["Dense_1"]["kernel"]), k10.step(2.0 / i, 0.1), 1e-15);
    EXPECT_DOUBLE_EQ(at(u["Dense_0"]["bias"]), -0.5 * i);
    EXPECT_DOUBLE_EQ(at(u["Dense_1"]["bias"]), 0.25);
    jx::testing::expect_close(up["Dense_0"]["kernel"].array(), u["Dense_0"]["kernel"].array(), 0, 0, "path labels");
  }
  EXPECT_EQ(state["inner_states"]["adam"]["inner_state"][0]["count"].array().item<int32_t>(), 3);

  // A label without a transformation.
  Tree bad = labels;
  bad["Dense_1"]["bias"] = optim::label("lion");
  try {
    optim::partition(txs, bad).init(params);
    FAIL() << "no error";
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[optim.partition] some parameters have no transformation: labels ['lion']"),
              std::string::npos)
        << e.what();
  }
}

TEST(OptimCombine, FreezeAndSetToZero) {
  Tree params = nested_params();
  auto tx = optim::chain(optim::freeze(Tree{{"a", true}, {"c", false}}), optim::sgd(1.0));
  auto [u, s] = tx.update(nested_grads(1), tx.init(params), params);
  expect_equal(u["a"]["w"].array(), jnp::zeros({2}, DType::Float64), "frozen");
  expect_equal(u["c"].array(), f64({3, -0.25}), "trained");
  auto [z, zs] = optim::set_to_zero().update(nested_grads(1), Tree::dict());
  EXPECT_EQ(jx::tree::leaves(zs).size(), 0u);
  expect_equal(z["c"].array(), jnp::zeros({2}, DType::Float64), "set_to_zero");
}

TEST(OptimCombine, ApplyIfFiniteSkipsNonFiniteStepsUpToTheLimit) {
  Tree params{{"w", f64({1, 2})}};
  auto tx = optim::apply_if_finite(optim::adam(0.1), /*max_consecutive_errors=*/2);
  Tree state = tx.init(params);
  EXPECT_EQ(state.str(),
            "{'notfinite_count': i32[], 'last_finite': bool[], 'total_notfinite': i32[], 'inner_state': "
            "[{'count': i32[], 'mu': {'w': f64[2]}, 'nu': {'w': f64[2]}}, {}]}");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto count = [](const Tree& s) { return s["inner_state"][0]["count"].array().item<int32_t>(); };
  auto [u1, s1] = tx.update(Tree{{"w", f64({1, -1})}}, state, params);
  EXPECT_NEAR(at(u1["w"], 0), -0.1, 1e-9);
  EXPECT_EQ(count(s1), 1);
  Tree bad{{"w", f64({nan, 1})}};
  auto [u2, s2] = tx.update(bad, s1, params);  // rejected: zero update, inner state kept
  expect_equal(u2["w"].array(), jnp::zeros({2}, DType::Float64), "rejected");
  EXPECT_EQ(count(s2), 1);
  EXPECT_EQ(s2["notfinite_count"].array().item<int32_t>(), 1);
  EXPECT_FALSE(s2["last_finite"].array().item<bool>());
  auto [u3, s3] = tx.update(bad, s2, params);
  EXPECT_EQ(count(s3), 1);
  auto [u4, s4] = tx.update(bad, s3, params);  // 3 > 2 in a row: applied anyway
  EXPECT_EQ(count(s4), 2);
  EXPECT_TRUE(std::isnan(at(u4["w"], 0)));
  EXPECT_EQ(s4["total_notfinite"].array().item<int32_t>(), 3);
  auto [u5, s5] = tx.update(Tree{{"w", f64({1, 1})}}, s4, params);
  EXPECT_EQ(s5["notfinite_count"].array().item<int32_t>(), 0);
  EXPECT_EQ(s5["total_notfinite"].array().item<int32_t>(), 3);
  EXPECT_TRUE(s5["last_finite"].array().item<bool>());
}

TEST(OptimCombine, MultiStepsEqualsOneStepOnTheAveragedGradient) {
  Tree params{{"w", f64({1, 2, 3})}};
  std::vector<Tree> grads{Tree{{"w", f64({0.5, -1, 2})}}, Tree{{"w", f64({1.5, 0.25, -2})}},
                          Tree{{"w", f64({-0.5, 3, 1})}}};
  for (bool mean : {true, false}) {
    SCOPED_TRACE(mean ? "mean" : "sum");
    optim::MultiSteps ms(optim::adam(0.1), 3, {.use_grad_mean = mean, .accumulator_dtype = DType::Float64});
    auto tx = ms.gradient_transformation();
    Tree state = tx.init(params);
    EXPECT_EQ(state.str(),
              "{'mini_step': i32[], 'gradient_step': i32[], 'inner_opt_state': [{'count': i32[], 'mu': {'w': "
              "f64[3]}, 'nu': {'w': f64[3]}}, {}], 'acc_grads': {'w': f64[3]}, 'skip_state': []}");
    Tree u;
    for (int i = 0; i < 3; ++i) {
      std::tie(u, state) = tx.update(grads[size_t(i)], state, params);
      if (i < 2) {
        expect_equal(u["w"].array(), jnp::zeros({3}, DType::Float64), "mid step");
        EXPECT_FALSE(ms.has_updated(state).item<bool>());
      }
    }
    EXPECT_TRUE(ms.has_updated(state).item<bool>());
    EXPECT_EQ(state["mini_step"].array().item<int32_t>(), 0);
    EXPECT_EQ(state["gradient_step"].array().item<int32_t>(), 1);
    Array total = grads[0]["w"].array() + grads[1]["w"].array() + grads[2]["w"].array();
    Tree combined{{"w", mean ? total / 3.0 : total}};
    auto adam = optim::adam(0.1);
    auto [expected, es] = adam.update(combined, adam.init(params), params);
    jx::testing::expect_close(u["w"].array(), expected["w"].array(), 1e-15, 1e-14, "k-th step");
    EXPECT_EQ(state["inner_opt_state"][0]["count"].array().item<int32_t>(), 1);
    expect_equal(state["acc_grads"]["w"].array(), jnp::zeros({3}, DType::Float64), "accumulator reset");
  }
  // Optax's default accumulator is float32.
  EXPECT_EQ(optim::MultiSteps(optim::sgd(1.0), 2).init(params)["acc_grads"]["w"].array().dtype(), DType::Float32);
  // skip_not_finite: a NaN mini-step leaves the accumulation as it was.
  optim::MultiSteps skipping(optim::sgd(1.0), 2,
                             {.should_skip_update_fn = optim::skip_not_finite, .accumulator_dtype = DType::Float64});
  Tree st = skipping.init(params);
  auto [su, st1] = skipping.update(Tree{{"w", f64({std::nan(""), 0, 0})}}, st, params);
  EXPECT_EQ(st1["mini_step"].array().item<int32_t>(), 0);
  EXPECT_EQ(st1["skip_state"]["num_not_finite"].array().item<int32_t>(), 1);
  expect_equal(su["w"].array(), jnp::zeros({3}, DType::Float64), "skipped");
}

TEST(OptimCombine, InjectHyperparamsEqualsTheConstantForm) {
  Tree params{{"w", f64({1, -2, 3})}};
  auto injected = optim::inject_hyperparams(
      [](const optim::Hyperparams& h) { return optim::adam(h["learning_rate"]); }, {{"learning_rate", 0.05}});
  auto constant = optim::adam(0.05);
  Tree si = injected.init(params), sc = constant.init(params);
  EXPECT_EQ(si["hyperparams"].str(), "{'learning_rate': f64[]}");
  EXPECT_DOUBLE_EQ(si["hyperparams"]["learning_rate"].array().item<double>(), 0.05);
  for (int i = 1; i <= 5; ++i) {
    Tree g{{"w", f64({0.1 * i, -1.0, 2.0 / i})}};
    auto [ui, si2] = injected.update(g, si, params);
    auto [uc, sc2] = constant.update(g, sc, params);
    expect_equal(ui["w"].array(), uc["w"].array(), "step " + std::to_string(i));
    si = si2;
    sc = sc2;
  }
  EXPECT_EQ(si["count"].array().item<int32_t>(), 5);

  // A schedule is evaluated at the state's count; the state shows the value used.
  auto scheduled = optim::inject_hyperparams([](const optim::Hyperparams& h) { return optim::sgd(h["learning_rate"]); },
                                             {{"learning_rate", optim::linear_schedule(1.0, 0.0, 10)}});
  Tree ss = scheduled.init(params);
  Tree g{{"w", f64({1, 1, 1})}};
  Tree u;
  for (int i = 0; i < 3; ++i) std::tie(u, ss) = scheduled.update(g, ss, params);
  // Schedules compute in float32, as Optax's do.
  EXPECT_NEAR(at(u["w"]), -0.8, 1e-7);
  EXPECT_NEAR(ss["hyperparams"]["learning_rate"].array().item<double>(), 0.8, 1e-7);
}

TEST(OptimCombine, InjectedLearningRateChangesUnderJitWithoutRetracing) {
  Tree params{{"w", jnp::array<float>({1, -2, 3})}};
  auto opt = optim::inject_hyperparams([](const optim::Hyperparams& h) { return optim::adam(h["learning_rate"]); },
                                       {{"learning_rate", 1e-2}});
  auto step = jx::jit([opt](const Tree& p, const Tree& s) {
    Tree g = jx::tree::map([](const Array& w) { return w * 2.0f; }, p);  // grad of sum(w^2)
    auto [u, s2] = opt.update(g, s, p);
    return std::make_pair(optim::apply_updates(p, u), s2);
  });
  Tree state = opt.init(params);
  EXPECT_EQ(state["hyperparams"]["learning_rate"].array().dtype(), DType::Float32);
  jx::reset_jit_stats();
  Tree p = params;
  std::tie(p, state) = step(p, state);
  std::tie(p, state) = step(p, state);
  // One Adam step at lr 1e-2 after two: what the eager constant-form optimizer does.
  Tree eager_p = p, eager_s = state;
  state["hyperparams"]["learning_rate"] = 1e-3;  // a C++ number: same jit signature
  auto [p3, s3] = step(p, state);
  EXPECT_EQ(jx::jit_stats().traces, 1);
  EXPECT_EQ(jx::jit_stats().misses, 1);
  // The step moved by lr 1e-3: the same step at 1e-2 moves 10x as far.
  eager_s["hyperparams"]["learning_rate"] = 1e-2;
  auto [p3_big, s3_big] = step(eager_p, eager_s);
  Array small = p3["w"].array() - p["w"].array(), big = p3_big["w"].array() - p["w"].array();
  jx::testing::expect_close(small * 10.0f, big, 1e-7, 1e-4, "lr 1e-3 vs 1e-2");
  EXPECT_FLOAT_EQ(s3["hyperparams"]["learning_rate"].array().item<float>(), 1e-3f);
  EXPECT_EQ(jx::jit_stats().traces, 1);
}

TEST(OptimCombine, TreeHelpers) {
  Tree a{{"x", f64({1, 2})}, {"y", f64({-3})}};
  Tree b{{"x", f64({0.5, 0.5})}, {"y", f64({2})}};
  expect_equal(optim::tree_add(a, b)["x"].array(), f64({1.5, 2.5}), "add");
  expect_equal(optim::tree_sub(a, b)["y"].array(), f64({-5}), "sub");
  expect_equal(optim::tree_scale(2.0, a)["x"].array(), f64({2, 4}), "scale");
  EXPECT_DOUBLE_EQ(optim::tree_vdot(a, b).item<double>(), 0.5 + 1 - 6);
  EXPECT_DOUBLE_EQ(optim::tree_l2_norm(a, true).item<double>(), 14.0);
  EXPECT_DOUBLE_EQ(optim::tree_l2_norm(a).item<double>(), std::sqrt(14.0));
  EXPECT_EQ(optim::tree_cast(a, DType::Float32)["y"].array().dtype(), DType::Float32);
  EXPECT_EQ(optim::tree_zeros_like(a, DType::Int32).str(), "{'x': i32[2], 'y': i32[1]}");
}

}  // namespace
