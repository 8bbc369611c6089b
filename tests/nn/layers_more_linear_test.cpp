// DenseGeneral, ConvTranspose and Embed (nn/layers_linear.h): variable trees as Flax's,
// values and gradients against PyTorch float64 (tests/golden/gen_nn_layers_more.py) with
// hand-built variables, check_grads through apply, jit against eager, errors by text.
#include "nn/layers_more_common.h"

namespace {

using namespace layers_more;

// The first "params" key of the root module for `key`: what a root layer's first
// parameter is initialized with.
Array first_params_key(const Array& key) {
  struct RootKey : nn::Module<RootKey> {
    Array call() const { return nn::make_rng(); }
  };
  return RootKey{}.init_with_output(key).first;
}

// ---- DenseGeneral ----

TEST(NnDenseGeneral, VariableTreesAsFlax) {
  const Array key = jr::PRNGKey(0);
  // Flax's docstring examples.
  const nn::DenseGeneral two_features{.features = {4, 5}};
  EXPECT_EQ(two_features.init(key, jnp::ones({1, 3})).str(), "{'params': {'kernel': f32[3,4,5], 'bias': f32[4,5]}}");
  const nn::DenseGeneral two_axes{.features = {4, 5}, .axis = {1, -1}};
  EXPECT_EQ(two_axes.init(key, jnp::ones({1, 3, 6, 7})).str(),
            "{'params': {'kernel': f32[3,7,4,5], 'bias': f32[4,5]}}");
  const nn::DenseGeneral batched{.features = {3}, .batch_dims = {0}};
  EXPECT_EQ(batched.init(key, jnp::ones({2, 4, 5})).str(), "{'params': {'kernel': f32[2,5,3], 'bias': f32[2,3]}}");
  const nn::DenseGeneral no_bias{.features = {3}, .use_bias = false, .param_dtype = DType::Float64};
  EXPECT_EQ(no_bias.init(key, jnp::ones({2, 5})).str(), "{'params': {'kernel': f64[5,3]}}");
}

TEST(NnDenseGeneral, KernelInitSeesTheFlattenedKernel) {
  // Flax's kernel_init_wrap: the initializer draws (batch * contracted, features) and the
  // result is reshaped, so lecun_normal's fan-in is 3 * 7 = 21, not 7.
  const Array key = jr::PRNGKey(3);
  std::vector<Shape> seen;
  auto recording = [&](const Array& k, const Shape& shape, DType dt) {
    seen.push_back(shape);
    return shape.size() == 2 ? nn::initializers::lecun_normal()(k, shape, dt) : jnp::zeros(shape, dt);
  };
  Tree v = nn::DenseGeneral{.features = {4, 5}, .axis = {1, -1}, .kernel_init = recording}.init(
      key, jnp::ones({1, 3, 6, 7}));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], Shape({21, 20}));
  const Array expected = nn::initializers::lecun_normal()(first_params_key(key), {21, 20}).reshape({3, 7, 4, 5});
  EXPECT_TRUE(bool(jnp::array_equal(v["params"]["kernel"].array(), expected)));
  // The bias initializer sees (prod(batch) * prod(features),).
  seen.clear();
  nn::DenseGeneral{.features = {3}, .batch_dims = {0}, .bias_init = recording}.init(key, jnp::ones({2, 4, 5}));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], Shape({6}));
}

struct DenseCase {
  const char* name;
  nn::DenseGeneral layer;
};

std::vector<DenseCase> dense_cases() {
  return {{"dg_feat", nn::DenseGeneral{.features = {3, 2}}},
          {"dg_axes", nn::DenseGeneral{.features = {3}, .axis = {1, -1}}},
          {"dg_batch", nn::DenseGeneral{.features = {3}, .batch_dims = {0}}}};
}

TEST(NnDenseGeneral, ValuesAndGradientsMatchTorch) {
  for (const DenseCase& c : dense_cases()) {
    SCOPED_TRACE(c.name);
    const std::string n = c.name;
    auto f = [&](const std::vector<Array>& a) {
      return c.layer.apply(params(Tree{{"kernel", a[1]}, {"bias", a[2]}}), a[0]);
    };
    const std::vector<Array> args{golden(n + "_x"), golden(n + "_kernel"), golden(n + "_bias")};
    expect_golden(n + "_y", f(args));
    expect_vjp_goldens(n, f, args, {"x", "kernel", ""});
    expect_grads_ok(f, args);
    // jit equals eager.
    auto jf = jx::jit([&](const Array& x, const Array& k, const Array& b) { return f({x, k, b}); });
    jx::testing::expect_close(jf(args[0], args[1], args[2]), f(args), 1e-14, 1e-14, "jit");
  }
}

TEST(NnDenseGeneral, Errors) {
  const Array x = jnp::ones({2, 4, 5});
  EXPECT_EQ(error_of([&] { nn::DenseGeneral{.features = {3}, .batch_dims = {1}}.init(jr::PRNGKey(0), x); }),
            "[nn.DenseGeneral] /: batch_dims (1,) must be consecutive leading dimensions starting from 0");
  EXPECT_EQ(error_of([&] { nn::DenseGeneral{.features = {3}, .axis = {3}}.init(jr::PRNGKey(0), x); }),
            "[nn.DenseGeneral] /: axis (3,) is out of range for inputs f32[2,4,5]");
  EXPECT_THROW(nn::DenseGeneral{}.init(jr::PRNGKey(0), x), jx::ValueError);
  // Inputs of another width than at init: the module system's shape check.
  Tree v = nn::DenseGeneral{.features = {3}}.init(jr::PRNGKey(0), x);
  EXPECT_THROW(nn::DenseGeneral{.features = {3}}.apply(v, jnp::ones({2, 4, 6})), nn::ScopeParamShapeError);
}

// ---- ConvTranspose ----

TEST(NnConvTranspose, VariableTreesAndShapesAsFlax) {
  const Array key = jr::PRNGKey(0);
  // Flax's docstring examples.
  auto [y, v] = nn::ConvTranspose{.features = 4, .kernel_size = {3}, .padding = "VALID"}.init_with_output(
      key, jnp::ones({1, 8, 3}));
  EXPECT_EQ(v.str(), "{'params': {'kernel': f32[3,3,4], 'bias': f32[4]}}");
  EXPECT_EQ(y.shape(), Shape({1, 10, 4}));
  nn::ConvTranspose circ{.features = 4, .kernel_size = {6, 6}, .strides = {2, 2}, .padding = "CIRCULAR",
                         .transpose_kernel = true};
  auto [yc, vc] = circ.init_with_output(key, jnp::ones({1, 15, 15, 3}));
  EXPECT_EQ(vc.str(), "{'params': {'kernel': f32[6,6,4,3], 'bias': f32[4]}}");
  EXPECT_EQ(yc.shape(), Shape({1, 30, 30, 4}));
  // The kernel is lecun_normal's draw with the first key, over (kh, kw, in, features).
  EXPECT_TRUE(bool(jnp::array_equal(v["params"]["kernel"].array(),
                                    nn::initializers::lecun_normal()(first_params_key(key), {3, 3, 4}))));
  // SAME keeps in * stride.
  const nn::ConvTranspose same{.features = 2, .kernel_size = {3, 3}, .strides = {2}};
  const Shape same_shape = same.init_with_output(key, jnp::ones({2, 5, 4, 3})).first.shape();
  EXPECT_EQ(same_shape, Shape({2, 10, 8, 2}));
}

struct ConvCase {
  const char* name;
  nn::ConvTranspose layer;
};

std::vector<ConvCase> conv_cases() {
  return {
      {"ct_same", nn::ConvTranspose{.features = 4, .kernel_size = {3, 3}, .strides = {2, 2}}},
      {"ct_valid", nn::ConvTranspose{.features = 4, .kernel_size = {3, 2}, .strides = {2}, .padding = "VALID"}},
      {"ct_pairs", nn::ConvTranspose{.features = 3, .kernel_size = {3, 3}, .strides = {2, 1},
                                     .padding = jx::lax::Padding{{1, 2}, {0, 1}}}},
      {"ct_dilated", nn::ConvTranspose{.features = 3, .kernel_size = {2, 3}, .strides = {1, 2},
                                       .kernel_dilation = {2, 1}}},
      {"ct_tk_same", nn::ConvTranspose{.features = 4, .kernel_size = {3, 3}, .strides = {2, 2},
                                       .transpose_kernel = true}},
  };
}

TEST(NnConvTranspose, ValuesAndGradientsMatchTorch) {
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(c.name);
    const std::string n = c.name;
    auto f = [&](const std::vector<Array>& a) {
      return c.layer.apply(params(Tree{{"kernel", a[1]}, {"bias", a[2]}}), a[0]);
    };
    const std::vector<Array> args{golden(n + "_x"), golden(n + "_kernel"), golden(n + "_bias")};
    expect_golden(n + "_y", f(args));
    expect_vjp_goldens(n, f, args, {"x", "kernel", ""});
    auto jf = jx::jit([&](const Array& x, const Array& k, const Array& b) { return f({x, k, b}); });
    jx::testing::expect_close(jf(args[0], args[1], args[2]), f(args), 1e-13, 1e-13, "jit");
  }
  // check_grads (order 2) on a small case.
  const ConvCase c = conv_cases()[2];
  expect_grads_ok(
      [&](const std::vector<Array>& a) { return c.layer.apply(params(Tree{{"kernel", a[1]}, {"bias", a[2]}}), a[0]); },
      {golden("ct_pairs_x"), golden("ct_pairs_kernel"), golden("ct_pairs_bias")});
}

TEST(NnConvTranspose, BatchDimsAreFlattenedOrAdded) {
  const ConvCase c = conv_cases()[0];
  Tree v = params(Tree{{"kernel", golden("ct_same_kernel")}, {"bias", golden("ct_same_bias")}});
  const Array x = golden("ct_same_x");  // (2, 5, 4, 3)
  const Array y = c.layer.apply(v, x);
  // No batch dim: one is added for the call.
  jx::testing::expect_close(c.layer.apply(v, x(1)), y(1), 1e-14, 1e-14, "unbatched");
  // Two batch dims: flattened for the call.
  const Array x2 = x.reshape({1, 2, 5, 4, 3});
  jx::testing::expect_close(c.layer.apply(v, x2), y.reshape({1, 2, 10, 8, 4}), 1e-14, 1e-14, "two batch dims");
}

TEST(NnConvTranspose, CircularWrapsTheValidResult) {
  // CIRCULAR sums the VALID result's periods of in * stride, so it keeps the total and has
  // the size in * stride.
  for (bool tk : {false, true}) {
    SCOPED_TRACE(tk);
    nn::ConvTranspose circ{.features = 2, .kernel_size = {4, 3}, .strides = {2, 1}, .padding = "CIRCULAR",
                           .use_bias = false, .transpose_kernel = tk};
    nn::ConvTranspose valid = circ;
    valid.padding = "VALID";
    const Array x = jx::testing::rand_f64({1, 3, 4, 2}, 7);
    Tree v = circ.init(jr::PRNGKey(0), x);
    v = jx::tree::map([](const Array& a) { return a.astype(DType::Float64); }, v);
    const Array yc = circ.apply(v, x), yv = valid.apply(v, x);
    EXPECT_EQ(yc.shape(), Shape({1, 6, 4, 2}));
    jx::testing::expect_close(jnp::sum(yc, std::vector<int64_t>{0, 1, 2}), jnp::sum(yv, std::vector<int64_t>{0, 1, 2}),
                              1e-12, 1e-12, "sum");
  }
}

TEST(NnConvTranspose, Errors) {
  const Array x = jnp::ones({1, 4, 4, 2});
  EXPECT_EQ(error_of([&] {
              nn::ConvTranspose{.features = 2, .kernel_size = {3, 3}, .strides = {1, 2, 3}}.init(jr::PRNGKey(0), x);
            }),
            "[nn.ConvTranspose] /: strides (1, 2, 3) has 3 entries for a kernel of 2 spatial dims; give one, or "
            "one per dim");
  EXPECT_EQ(error_of([&] {
              nn::ConvTranspose{.features = 2, .kernel_size = {3, 3}, .padding = "CAUSAL"}.init(jr::PRNGKey(0), x);
            }),
            "[nn.ConvTranspose] /: padding \"CAUSAL\" is not one of \"SAME\", \"VALID\", \"CIRCULAR\" or (lo, hi) "
            "pairs");
  const nn::ConvTranspose conv{.features = 2, .kernel_size = {3, 3}};
  Tree v = conv.init(jr::PRNGKey(0), x);
  EXPECT_THROW(conv.apply(v, jnp::ones({1, 4, 4, 3})), nn::ScopeParamShapeError);
}

// ---- Embed ----

TEST(NnEmbed, VariableTreeAndInitAsFlax) {
  const Array key = jr::PRNGKey(0);
  const Array idx = jnp::array<int32_t>({{0, 1, 2}, {-1, -2, -3}});
  auto [y, v] = nn::Embed{.num_embeddings = 5, .features = 3}.init_with_output(key, idx);
  EXPECT_EQ(v.str(), "{'params': {'embedding': f32[5,3]}}");
  EXPECT_EQ(y.shape(), Shape({2, 3, 3}));
  // variance_scaling(1, fan_in, normal, out_axis=0): fan_in is the feature size.
  const Array expected =
      nn::initializers::variance_scaling(1.0, "fan_in", "normal", -2, 0)(first_params_key(key), {5, 3});
  EXPECT_TRUE(bool(jnp::array_equal(v["params"]["embedding"].array(), expected)));
}

TEST(NnEmbed, LookupAndAttend) {
  nn::Embed embed{.num_embeddings = 5, .features = 3};
  const Array table = golden("embed_table");
  Tree v = params(Tree{{"embedding", table}});
  const Array idx = golden("embed_idx").astype(DType::Int32);
  expect_golden("embed_y", embed.apply(v, idx), 0);
  // Any integer dtype indexes.
  expect_golden("embed_y", embed.apply(v, idx.astype(DType::Int64)), 0);
  // attend as the root module through apply's method pointer.
  expect_golden("embed_attend", embed.apply(v, &nn::Embed::attend, golden("embed_query")));
  // Out-of-range indices give NaN rows (jnp.take's fill mode).
  const Array out = embed.apply(v, jnp::array<int32_t>({5}));
  EXPECT_TRUE(bool(jnp::all(jnp::isnan(out))));
  // num_embeddings == 1 broadcasts the single row.
  nn::Embed one{.num_embeddings = 1, .features = 3};
  Tree v1 = params(Tree{{"embedding", table(jx::slice(0, 1))}});
  EXPECT_EQ(one.apply(v1, jnp::zeros({2, 4}, DType::Int32)).shape(), Shape({2, 4, 3}));
  // dtype casts the vectors.
  const nn::Embed embed32{.num_embeddings = 5, .features = 3, .dtype = DType::Float32};
  EXPECT_EQ(embed32.apply(v, idx).dtype(), DType::Float32);
}

TEST(NnEmbed, AttendAsASubmoduleSharesTheTable) {
  // Weight tying: the same named Embed embeds tokens and projects back to logits.
  struct Tied : nn::Module<Tied> {
    Array call(const Array& tokens) const {
      nn::Embed embed{.num_embeddings = 5, .features = 3, .name = "embed"};
      Array h = embed(tokens);
      return embed(&nn::Embed::attend, h);
    }
  };
  Tied model;
  const Array tokens = jnp::array<int32_t>({0, 3, 4});
  Tree v = model.init(jr::PRNGKey(1), tokens);
  EXPECT_EQ(v.str(), "{'params': {'embed': {'embedding': f32[5,3]}}}");
  const Array e = v["params"]["embed"]["embedding"].array();
  jx::testing::expect_close(model.apply(v, tokens), jnp::matmul(jnp::take(e, tokens, 0), e.T()), 1e-6, 1e-6,
                            "tied logits");
  // Gradients through the lookup and attend (order 2) w.r.t. the table.
  const Array table = golden("embed_table");
  expect_grads_ok([&](const std::vector<Array>& a) { return model.apply(params(Tree{{"embed", Tree{{"embedding", a[0]}}}}), tokens); },
                  {table});
}

TEST(NnEmbed, Errors) {
  nn::Embed embed{.num_embeddings = 5, .features = 3};
  Tree v = params(Tree{{"embedding", golden("embed_table")}});
  EXPECT_EQ(error_of([&] { embed.apply(v, jnp::ones({2})); }),
            "[nn.Embed] /: inputs must be integer indices, got f32[2]; cast them, e.g. x.astype(jx::int32)");
  EXPECT_THROW(embed.apply(v, jnp::ones({2})), jx::ValueError);
  EXPECT_EQ(error_of([&] { embed.apply(v, &nn::Embed::attend, jnp::ones({2, 4})); }),
            "[nn.Embed] /: attend needs a query whose last axis has the 3 features of the embedding, got f32[2,4]");
}

}  // namespace
