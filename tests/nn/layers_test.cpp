// Flax's core layers (nn/layers.h): the tutorial's models have Flax's variable trees;
// Dense, Conv and BatchNorm against PyTorch float64 with given weights (values and
// gradients, tests/golden/gen_nn_layers.py); Dropout's mask is bernoulli of its stream;
// pooling; Sequential's names; tabulate; the CNN under jit, grad and vmap.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "jx/jx.h"
#include "testing/check_grads.h"
#include "nn/tutorial_models.h"
#include "testing/golden.h"

namespace {

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace nn = jx::nn;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::Tree;
using jx::testing::expect_close;

#include "golden/nn_layers_golden.inc"

Array load(const std::string& name) {
  for (const auto& g : kLayersGolden)
    if (name == g.name) return jnp::array(g.values, Shape(g.shape));
  throw std::runtime_error("no golden " + name);
}
void expect_golden(const std::string& name, const Array& x, double tol = 1e-12) {
  jx::testing::expect_named_golden(kLayersGolden, name, x, tol);
}

// ---- the tutorial's models ----

using tutorial::CNN;  // the full example
using tutorial::MLP;  // step 4

struct StatefulModule : nn::Module<StatefulModule> {  // step 10
  Array call(Array x, bool train) const {
    x = nn::Dense{.features = 8}(x);
    x = nn::BatchNorm{}(x, /*use_running_average=*/!train);
    return nn::relu(x);
  }
};

std::string tree_types(const Tree& t) { return t.str(); }

TEST(NnLayers, TutorialModelsHaveFlaxsTrees) {
  Tree mlp = MLP{}.init(jr::PRNGKey(0), jnp::ones({1, 28, 28, 1}));
  EXPECT_EQ(tree_types(mlp),
            "{'params': {'Dense_0': {'kernel': f32[784,512], 'bias': f32[512]}, 'Dense_1': {'kernel': "
            "f32[512,512], 'bias': f32[512]}, 'Dense_2': {'kernel': f32[512,10], 'bias': f32[10]}}}");
  Tree cnn = CNN{}.init(jr::PRNGKey(0), jnp::ones({1, 28, 28, 1}), true);
  EXPECT_EQ(tree_types(cnn),
            "{'params': {'Conv_0': {'kernel': f32[3,3,1,32], 'bias': f32[32]}, 'Conv_1': {'kernel': "
            "f32[3,3,32,64], 'bias': f32[64]}, 'Dense_0': {'kernel': f32[12544,256], 'bias': f32[256]}, "
            "'Dense_1': {'kernel': f32[256,10], 'bias': f32[10]}}}");
  Tree st = StatefulModule{}.init(jr::PRNGKey(0), jnp::ones({4, 3}), false);
  EXPECT_EQ(tree_types(st),
            "{'params': {'Dense_0': {'kernel': f32[3,8], 'bias': f32[8]}, 'BatchNorm_0': {'scale': "
            "f32[8], 'bias': f32[8]}}, 'batch_stats': {'BatchNorm_0': {'mean': f32[8], 'var': f32[8]}}}");
  // Flax's initializers: lecun_normal kernels (std 1/sqrt(fan_in) before truncation), zero biases.
  const Array& k = cnn["params"]["Dense_0"]["kernel"].array();
  EXPECT_NEAR(jnp::std(k).item<float>(), 1.0 / std::sqrt(12544.0), 2e-4);
  EXPECT_TRUE(bool(jnp::all(cnn["params"]["Conv_1"]["bias"].array() == 0.0f)));
}

// ---- against PyTorch ----

TEST(NnLayers, DenseMatchesPyTorch) {
  nn::Dense d{.features = 4};
  Tree v{{"params", Tree{{"kernel", load("dense_kernel")}, {"bias", load("dense_bias")}}}};
  auto f = [&](const Array& x, const Tree& p) { return d.apply(p, x); };
  auto [y, f_vjp] = jx::vjp(f, load("dense_x"), v);
  expect_golden("dense_y", y);
  auto [dx, dp] = f_vjp(load("dense_ct"));
  expect_golden("dense_dx", dx);
  expect_golden("dense_dkernel", dp["params"]["kernel"].array());
  expect_golden("dense_dbias", dp["params"]["bias"].array());
}

TEST(NnLayers, ConvMatchesPyTorch) {
  for (auto [name, stride, pad] : {std::tuple{"conv_same", int64_t(1), std::string("SAME")},
                                    std::tuple{"conv_valid_s2", int64_t(2), std::string("VALID")}}) {
    SCOPED_TRACE(name);
    const std::string n = name;
    nn::Conv c{.features = 4, .kernel_size = {3, 3}, .strides = {stride}, .padding = pad};
    Tree v{{"params", Tree{{"kernel", load(n + "_kernel")}, {"bias", load(n + "_bias")}}}};
    auto f = [&](const Array& x, const Tree& p) { return c.apply(p, x); };
    auto [y, f_vjp] = jx::vjp(f, load(n + "_x"), v);
    expect_golden(n + "_y", y);
    auto [dx, dp] = f_vjp(load(n + "_ct"));
    expect_golden(n + "_dx", dx);
    expect_golden(n + "_dkernel", dp["params"]["kernel"].array());
    expect_golden(n + "_dbias", dp["params"]["bias"].array());
    // float32 (oneDNN) agrees at float32 accuracy; an input without a batch dim works.
    Tree v32 = jx::tree::map([](const Array& a) { return a.astype(DType::Float32); }, v);
    expect_golden(n + "_y", c.apply(v32, load(n + "_x").astype(DType::Float32)), 2e-5);
    Array one = c.apply(v, load(n + "_x")(0));
    expect_close(one, y(0), 1e-12, 1e-12, "unbatched");
  }
}

TEST(NnLayers, BatchNormTrainAndEvalMatchFlaxsFormulas) {
  nn::BatchNorm bn{};
  Tree v{{"params", Tree{{"scale", load("batchnorm_scale")}, {"bias", load("batchnorm_bias")}}},
         {"batch_stats", Tree{{"mean", load("batchnorm_ra_mean")}, {"var", load("batchnorm_ra_var")}}}};
  Array x = load("batchnorm_x");
  auto [y, updates] = bn.apply(v, x, false, nn::Mutable{"batch_stats"});
  expect_golden("batchnorm_y_train", y);
  expect_golden("batchnorm_new_mean", updates["batch_stats"]["mean"].array());
  expect_golden("batchnorm_new_var", updates["batch_stats"]["var"].array());
  expect_golden("batchnorm_y_eval", bn.apply(v, x, true));
  // Gradients through the training output.
  auto f = [&](const Array& xs, const Tree& params) {
    Tree all = v;
    all.insert("params", Tree(params["params"]));
    return bn.apply(all, xs, false, nn::Mutable{"batch_stats"}).first;
  };
  auto [y2, f_vjp] = jx::vjp(f, x, Tree{{"params", v["params"]}});
  auto [dx, dp] = f_vjp(load("batchnorm_ct"));
  expect_golden("batchnorm_dx", dx, 1e-10);
  expect_golden("batchnorm_dscale", dp["params"]["scale"].array(), 1e-10);
  expect_golden("batchnorm_dbias", dp["params"]["bias"].array(), 1e-10);
  // Statistics are not updated while initializing; use_running_average is required.
  Tree init = bn.init(jr::PRNGKey(0), x, false);
  EXPECT_TRUE(bool(jnp::all(init["batch_stats"]["mean"].array() == 0.0f)));
  EXPECT_THROW(bn.apply(v, x), jx::ValueError);
  // Training statistics need the collection to be mutable.
  EXPECT_THROW(bn.apply(v, x, false), nn::ModifyScopeVariableError);
}

TEST(NnLayers, DropoutMaskIsBernoulliOfItsStream) {
  // The key a module named Dropout_0 draws first from "dropout", taken by a probe with
  // that name: Dropout's mask must be bernoulli(that key, 1 - rate, shape).
  struct Probe : nn::Module<Probe> {
    std::string name;
    Array call() const { return nn::make_rng("dropout"); }
  };
  struct WithDropout : nn::Module<WithDropout> {
    Array call(const Array& x) const { return nn::Dropout{.rate = 0.25}(x, false); }
  };
  struct WithProbe : nn::Module<WithProbe> {
    Array call() const { return Probe{.name = "Dropout_0"}(); }
  };
  Array x = jr::uniform(jr::PRNGKey(1), {4, 50}) + 1.0;
  nn::Rngs rngs{{"dropout", jr::PRNGKey(5)}};
  Array y = WithDropout{}.apply(Tree::dict(), x, rngs);
  Array key = WithProbe{}.apply(Tree::dict(), rngs);
  Array mask = jr::bernoulli(key, 0.75, x.shape());
  EXPECT_TRUE(bool(jnp::array_equal(y, jnp::where(mask, x / 0.75, 0.0f))));
  // Deterministic: the identity; rate 1: zeros; broadcast_dims share the mask.
  EXPECT_TRUE(bool(jnp::array_equal(nn::Dropout{.rate = 0.25}.apply(Tree::dict(), x, true), x)));
  Array b = nn::Dropout{.rate = 0.5, .broadcast_dims = {0}}.apply(Tree::dict(), x, false, rngs);
  EXPECT_TRUE(bool(jnp::array_equal(b(0) == 0.0f, b(3) == 0.0f)));
  EXPECT_THROW(nn::Dropout{.rate = 0.5}.apply(Tree::dict(), x, false), nn::InvalidRngError);
}

TEST(NnLayers, Pooling) {
  Array x = load("avgpool_x");
  expect_golden("avgpool_y", nn::avg_pool(x, {3, 3}, {.strides = {2, 2}, .padding = {{1, 1}, {1, 1}},
                                                       .count_include_pad = false}));
  Array a = jnp::arange(16.0).reshape({1, 4, 4, 1});
  EXPECT_TRUE(bool(jnp::array_equal(nn::max_pool(a, {2, 2}, {.strides = {2, 2}}).reshape({4}),
                                    jnp::array<double>({5, 7, 13, 15}))));
  EXPECT_TRUE(bool(jnp::array_equal(nn::min_pool(a, {2, 2}, {.strides = {2, 2}}).reshape({4}),
                                    jnp::array<double>({0, 2, 8, 10}))));
  EXPECT_TRUE(bool(jnp::array_equal(nn::avg_pool(a, {2, 2}, {.strides = {2, 2}}).reshape({4}),
                                    jnp::array<double>({2.5, 4.5, 10.5, 12.5}))));
  // SAME with padding counted: the corner window averages 4 real cells over 9.
  EXPECT_NEAR(nn::avg_pool(jnp::ones({1, 3, 3, 1}), {3, 3}, {.padding = "SAME"})(0, 0, 0, 0).item<float>(),
              4.0 / 9.0, 1e-6);
  // No batch dim.
  EXPECT_EQ(nn::max_pool(jnp::ones({4, 4, 2}), {2, 2}).shape(), Shape({3, 3, 2}));
}

TEST(NnLayers, SequentialNamesAsFlax) {
  nn::Sequential seq{nn::Dense{.features = 3}, nn::relu, nn::Dense{.features = 2}};
  Tree root = seq.init(jr::PRNGKey(0), jnp::ones({1, 4}));
  EXPECT_EQ(root.str(), "{'params': {'layers_0': {'kernel': f32[4,3], 'bias': f32[3]}, 'layers_2': "
                        "{'kernel': f32[3,2], 'bias': f32[2]}}}");
  struct Outer : nn::Module<Outer> {
    Array call(const Array& x) const {
      return nn::Sequential{nn::Dense{.features = 3}, nn::relu, nn::Dense{.features = 2}}(x);
    }
  };
  Tree nested = Outer{}.init(jr::PRNGKey(0), jnp::ones({1, 4}));
  EXPECT_EQ(nested.str(), "{'params': {'Dense_0': {'kernel': f32[4,3], 'bias': f32[3]}, 'Dense_1': "
                          "{'kernel': f32[3,2], 'bias': f32[2]}}}");
  Array x = jnp::ones({2, 4});
  Array y = seq.apply(root, x);
  Array manual = jnp::matmul(nn::relu(jnp::matmul(x, root["params"]["layers_0"]["kernel"].array()) +
                                      root["params"]["layers_0"]["bias"].array()),
                             root["params"]["layers_2"]["kernel"].array()) +
                 root["params"]["layers_2"]["bias"].array();
  expect_close(y, manual, 1e-6, 1e-6, "sequential");
}

TEST(NnLayers, Tabulate) {
  struct Small : nn::Module<Small> {
    Array call(Array x) const {
      x = nn::relu(nn::Dense{.features = 4}(x));
      return nn::Dense{.features = 2}(x);
    }
  };
  EXPECT_EQ(nn::tabulate(Small{}, jr::PRNGKey(0), jnp::ones({16, 9})),
            "┏━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━┓\n"
            "┃ path    ┃ module ┃ inputs        ┃ outputs       ┃ params               ┃\n"
            "┡━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━┩\n"
            "│         │ Small  │ float32[16,9] │ float32[16,2] │                      │\n"
            "├─────────┼────────┼───────────────┼───────────────┼──────────────────────┤\n"
            "│ Dense_0 │ Dense  │ float32[16,9] │ float32[16,4] │ kernel: float32[9,4] │\n"
            "│         │        │               │               │ bias: float32[4]     │\n"
            "│         │        │               │               │                      │\n"
            "│         │        │               │               │ 40 (160 B)           │\n"
            "├─────────┼────────┼───────────────┼───────────────┼──────────────────────┤\n"
            "│ Dense_1 │ Dense  │ float32[16,4] │ float32[16,2] │ kernel: float32[4,2] │\n"
            "│         │        │               │               │ bias: float32[2]     │\n"
            "│         │        │               │               │                      │\n"
            "│         │        │               │               │ 10 (40 B)            │\n"
            "├─────────┼────────┼───────────────┼───────────────┼──────────────────────┤\n"
            "│         │        │               │         Total │ 50 (200 B)           │\n"
            "└─────────┴────────┴───────────────┴───────────────┴──────────────────────┘\n"
            "\n"
            "Total Parameters: 50 (200 B)\n");
}

TEST(NnLayers, SetupStyleChildren) {
  // Children declared as fields with names (Flax's setup), called in call.
  struct Block : nn::Module<Block> {
    nn::Dense proj{.features = 8, .name = "proj"};
    nn::Dense out{.features = 2, .name = "out"};
    Array call(const Array& x) const { return out(nn::relu(proj(x))); }
  };
  Tree v = Block{}.init(jr::PRNGKey(0), jnp::ones({1, 3}));
  EXPECT_EQ(v.str(), "{'params': {'proj': {'kernel': f32[3,8], 'bias': f32[8]}, 'out': {'kernel': "
                     "f32[8,2], 'bias': f32[2]}}}");
}

TEST(NnLayers, PerExampleGradientsOfTheTutorialMlp) {
  MLP model;
  Array x = jr::normal(jr::PRNGKey(1), {4, 28, 28, 1}, DType::Float64);
  Array labels = jnp::array<int32_t>({1, 3, 5, 7});
  Tree v = jx::tree::map([](const Array& a) { return a.astype(DType::Float64); },
                         model.init(jr::PRNGKey(0), x.astype(DType::Float32)));
  auto loss = [&](const Tree& params, const Array& xi, const Array& yi) {
    Array logits = model.apply(params, jnp::expand_dims(xi, 0));
    return -jnp::sum(nn::log_softmax(logits) * nn::one_hot(jnp::expand_dims(yi, 0), 10, DType::Float64));
  };
  Tree per_example = jx::vmap(jx::grad(loss), {.in_axes = {jx::none, 0, 0}})(v, x, labels);
  for (int64_t i = 0; i < 4; ++i) {
    Tree gi = jx::grad(loss)(v, x(i), labels(i));
    for (const char* layer : {"Dense_0", "Dense_2"})
      expect_close(per_example["params"][layer]["kernel"].array()(i), gi["params"][layer]["kernel"].array(),
                   1e-12, 1e-10, std::string(layer) + " example " + std::to_string(i));
  }
}

TEST(NnLayers, CnnUnderJitGradVmap) {
  CNN model;
  Array x = jr::normal(jr::PRNGKey(1), {4, 28, 28, 1});
  Array labels = jnp::array<int32_t>({1, 3, 5, 7});
  Tree v = model.init(jr::PRNGKey(0), x, true);
  nn::Rngs rngs{{"dropout", jr::PRNGKey(2)}};
  auto loss = [&](const Tree& params, const Array& xs, const Array& ys, const Array& dropout_key) {
    Array logits = model.apply(params, xs, false, nn::Rngs{{"dropout", dropout_key}});
    return -jnp::mean(jnp::sum(nn::log_softmax(logits) * nn::one_hot(ys, 10), std::vector<int64_t>{-1}));
  };
  Array k = jr::PRNGKey(2);
  // jit equals eager, for the loss and its gradient.
  Array l = loss(v, x, labels, k);
  Array lj = jx::jit(loss)(v, x, labels, k);
  expect_close(lj, l, 1e-5, 1e-5, "jit loss");
  Tree g = jx::grad(loss)(v, x, labels, k);
  Tree gj = jx::jit(jx::grad(loss))(v, x, labels, k);
  EXPECT_EQ(jx::tree::structure(g), jx::tree::structure(v));
  expect_close(gj["params"]["Conv_0"]["kernel"].array(), g["params"]["Conv_0"]["kernel"].array(), 1e-5, 1e-4, "jit grad");
  // Evaluation needs no dropout key and is deterministic.
  EXPECT_TRUE(bool(jnp::array_equal(model.apply(v, x, true), model.apply(v, x, true))));
  // vmap over examples of the evaluation forward equals the batch.
  auto one = [&](const Array& xi) { return model.apply(v, jnp::expand_dims(xi, 0), true)(0); };
  expect_close(jx::vmap(one)(x), model.apply(v, x, true), 1e-5, 1e-5, "vmap");
  (void)rngs;
}

}  // namespace
