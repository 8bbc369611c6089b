// Attention (nn/attention.h): dot_product_attention(_weights), the mask helpers and
// MultiHeadDotProductAttention / SelfAttention: variable trees as Flax's, values and
// gradients against torch ops in float64 (softmax(q k^T / sqrt(d) + bias, masked) v with the
// same projections; tests/golden/gen_nn_layers_more.py), dropout keys, check_grads, jit
// against eager, errors by text.
#include "nn/layers_more_common.h"

namespace {

using namespace layers_more;

// The MHA variables of the goldens with prefix p ("mha" or "sa").
Tree mha_params(const std::string& p, const Array& query_kernel, const Array& out_kernel) {
  auto dense = [&](const std::string& n) {
    return Tree{{"kernel", n == "query" ? query_kernel : n == "out" ? out_kernel : golden(p + "_" + n + "_kernel")},
                {"bias", golden(p + "_" + n + "_bias")}};
  };
  return Tree{{"query", dense("query")}, {"key", dense("key")}, {"value", dense("value")}, {"out", dense("out")}};
}

TEST(NnAttention, VariableTreesAsFlax) {
  const Array key = jr::PRNGKey(0);
  // Flax's docstring example: 8 heads of 16 / 8 = 2 features over inputs with 5.
  const nn::MultiHeadDotProductAttention doc{.num_heads = 8, .qkv_features = 16};
  EXPECT_EQ(doc.init(key, jnp::ones({4, 3, 2, 5})).str(),
            "{'params': {'query': {'kernel': f32[5,8,2], 'bias': f32[8,2]}, 'key': {'kernel': f32[5,8,2], 'bias': "
            "f32[8,2]}, 'value': {'kernel': f32[5,8,2], 'bias': f32[8,2]}, 'out': {'kernel': f32[8,2,5], 'bias': "
            "f32[5]}}}");
  const nn::MultiHeadDotProductAttention qk{.num_heads = 2, .out_features = 3, .use_bias = false, .normalize_qk = true};
  EXPECT_EQ(qk.init(key, jnp::ones({1, 4, 6})).str(),
            "{'params': {'query': {'kernel': f32[6,2,3]}, 'key': {'kernel': f32[6,2,3]}, 'value': {'kernel': "
            "f32[6,2,3]}, 'query_ln': {'scale': f32[3]}, 'key_ln': {'scale': f32[3]}, 'out': {'kernel': f32[2,3,3]}}}");
  // Auto-names per class, as Flax's.
  struct Net : nn::Module<Net> {
    Array call(const Array& x) const {
      Array y = nn::MultiHeadDotProductAttention{.num_heads = 1, .use_bias = false}(x);
      y = nn::MultiHeadAttention{.num_heads = 1, .use_bias = false}(y);
      return nn::SelfAttention{.num_heads = 1, .use_bias = false}(y);
    }
  };
  const std::string s = Net{}.init(key, jnp::ones({1, 2, 2})).str();
  EXPECT_NE(s.find("'MultiHeadDotProductAttention_0': {'query'"), std::string::npos) << s;
  EXPECT_NE(s.find("'MultiHeadAttention_0': {'query'"), std::string::npos) << s;
  EXPECT_NE(s.find("'SelfAttention_0': {'query'"), std::string::npos) << s;
}

TEST(NnAttention, DotProductAttentionMatchesTorch) {
  const Array bias = golden("dpa_bias"), mask = golden("dpa_mask");
  auto f = [&](const std::vector<Array>& a) {
    return nn::dot_product_attention(a[0], a[1], a[2], {.bias = bias, .mask = mask});
  };
  const std::vector<Array> args{golden("dpa_q"), golden("dpa_k"), golden("dpa_v")};
  expect_golden("dpa_y", f(args));
  expect_vjp_goldens("dpa", f, args, {"q", "k", "v"});
  expect_grads_ok(f, args);
  // The weights: rows sum to 1, masked entries are 0.
  const Array w = nn::dot_product_attention_weights(args[0], args[1], {.mask = mask});
  EXPECT_EQ(w.shape(), Shape({2, 2, 3, 5}));
  jx::testing::expect_close(jnp::sum(w, -1), jnp::ones({2, 2, 3}, DType::Float64), 1e-14, 1e-14, "rows");
  EXPECT_EQ(jnp::sum(jnp::where(jnp::broadcast_to(mask, w.shape()) == 0.0, w, 0.0)).item<double>(), 0.0);
}

TEST(NnAttention, MultiHeadMatchesTorch) {
  const nn::MultiHeadDotProductAttention mha{.num_heads = 2, .qkv_features = 4, .out_features = 5};
  const Array mask = nn::make_attention_mask(jnp::ones({2, 3}, DType::Float64),
                                             jnp::array<double>({{1, 1, 1, 0, 0}, {1, 1, 1, 1, 1}}));
  expect_golden("mha_mask", mask, 0);
  auto f = [&](const std::vector<Array>& a) {
    return mha.apply(params(mha_params("mha", a[2], a[3])), a[0], a[1], std::nullopt, mask);
  };
  const std::vector<Array> args{golden("mha_xq"), golden("mha_xkv"), golden("mha_query_kernel"),
                                golden("mha_out_kernel")};
  expect_golden("mha_y", f(args));
  expect_vjp_goldens("mha", f, args, {"xq", "xkv", "query_kernel", "out_kernel"});
  expect_grads_ok(f, args, 1);
  auto jf = jx::jit([&](const Array& a, const Array& b, const Array& c, const Array& d) { return f({a, b, c, d}); });
  jx::testing::expect_close(jf(args[0], args[1], args[2], args[3]), f(args), 1e-13, 1e-13, "jit");
}

TEST(NnAttention, SelfAttentionWithCausalMaskAndQkNormMatchesTorch) {
  const nn::SelfAttention sa{.num_heads = 3, .normalize_qk = true};
  const Array causal = nn::make_causal_mask(jnp::ones({2, 4}));
  expect_golden("sa_causal", causal, 0);
  auto f = [&](const std::vector<Array>& a) {
    Tree p = mha_params("sa", golden("sa_query_kernel"), golden("sa_out_kernel"));
    p.insert("query_ln", Tree{{"scale", a[1]}});
    p.insert("key_ln", Tree{{"scale", golden("sa_key_ln_scale")}});
    return sa.apply(params(p), a[0], causal);
  };
  const std::vector<Array> args{golden("sa_x"), golden("sa_query_ln_scale")};
  expect_golden("sa_y", f(args));
  expect_vjp_goldens("sa", f, args, {"x", "query_ln_scale"});
  expect_grads_ok(f, args, 1);
}

TEST(NnAttention, KeyAndValueDefaultAsFlax) {
  const nn::MultiHeadDotProductAttention mha{.num_heads = 2};
  const Array q = jr::normal(jr::PRNGKey(1), {2, 3, 4}), k = jr::normal(jr::PRNGKey(2), {2, 5, 4});
  Tree v = mha.init(jr::PRNGKey(0), q);
  EXPECT_TRUE(bool(jnp::array_equal(mha.apply(v, q), mha.apply(v, q, q, q))));
  EXPECT_TRUE(bool(jnp::array_equal(mha.apply(v, q, k), mha.apply(v, q, k, k))));
  const nn::SelfAttention sa{.num_heads = 2};
  EXPECT_TRUE(bool(jnp::array_equal(sa.apply(v, q), mha.apply(v, q))));
  EXPECT_EQ(error_of([&] { mha.apply(v, q, std::nullopt, k); }),
            "[nn.MultiHeadDotProductAttention] /: inputs_k cannot be none when inputs_v is given; to use one array "
            "for both, pass it as inputs_k and leave inputs_v none");
}

TEST(NnAttention, DropoutUsesTheDropoutStream) {
  const nn::MultiHeadDotProductAttention mha{.num_heads = 2, .dropout_rate = 0.5};
  const Array x = jr::normal(jr::PRNGKey(1), {2, 3, 4});
  Tree v = mha.init(jr::PRNGKey(0), x, std::nullopt, std::nullopt, std::nullopt, true);
  const nn::Rngs r7{{"dropout", jr::PRNGKey(7)}}, r8{{"dropout", jr::PRNGKey(8)}};
  const Array a = mha.apply(v, x, std::nullopt, std::nullopt, std::nullopt, false, r7);
  EXPECT_TRUE(bool(jnp::array_equal(a, mha.apply(v, x, std::nullopt, std::nullopt, std::nullopt, false, r7))));
  EXPECT_FALSE(bool(jnp::array_equal(a, mha.apply(v, x, std::nullopt, std::nullopt, std::nullopt, false, r8))));
  // deterministic: no dropout, no key needed.
  const nn::MultiHeadDotProductAttention no_dropout{.num_heads = 2};
  EXPECT_TRUE(bool(jnp::array_equal(mha.apply(v, x, std::nullopt, std::nullopt, std::nullopt, true),
                                    no_dropout.apply(v, x))));
  // The key is make_rng("dropout") of the layer: the first "dropout" key at its path.
  struct FirstDropoutKey : nn::Module<FirstDropoutKey> {
    Array call() const { return nn::make_rng("dropout"); }
  };
  const Array dropout_key = FirstDropoutKey{}.apply(Tree::dict(), r7);
  EXPECT_TRUE(bool(jnp::array_equal(
      a, mha.apply(v, x, std::nullopt, std::nullopt, std::nullopt, false, dropout_key))));
  // Broadcast dropout: one (q, kv) mask for every batch entry and head.
  const Array q = jr::normal(jr::PRNGKey(3), {2, 3, 2, 4}), k = jr::normal(jr::PRNGKey(4), {2, 5, 2, 4});
  const Array w = nn::dot_product_attention_weights(q, k);
  const Array wd = nn::dot_product_attention_weights(q, k, {.dropout_rng = jr::PRNGKey(5), .dropout_rate = 0.5});
  const Array kept = wd != 0.0;
  EXPECT_TRUE(bool(jnp::all(kept == jnp::broadcast_to(kept(0, 0), kept.shape()))));
  jx::testing::expect_close(jnp::where(kept, wd, 0.0), jnp::where(kept, w * 2.0, 0.0), 1e-6, 1e-6, "scaled by 2");
  // Errors: dropout without deterministic, or without a key.
  EXPECT_EQ(error_of([&] { mha.apply(v, x, r7); }),
            "[nn.MultiHeadDotProductAttention] /: with dropout_rate 0.5, deterministic is given neither as a field "
            "nor in the call; pass it, e.g. mha(x, std::nullopt, std::nullopt, std::nullopt, !train)");
  EXPECT_THROW(mha.apply(v, x, std::nullopt, std::nullopt, std::nullopt, false), nn::InvalidRngError);
}

TEST(NnAttention, SowWeights) {
  const nn::MultiHeadDotProductAttention mha{.num_heads = 2};
  const Array x = jr::normal(jr::PRNGKey(1), {1, 3, 4});
  Tree v = mha.init(jr::PRNGKey(0), x);
  auto [y, inter] = mha.apply(v, x, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true,
                              nn::Mutable{"intermediates"});
  EXPECT_EQ(inter.str(), "{'intermediates': {'attention_weights': [f32[1,2,3,3]]}}");
}

TEST(NnAttention, MaskHelpersAsFlax) {
  // make_causal_mask: (batch..., 1, len, len), lower triangular.
  const Array c = nn::make_causal_mask(jnp::ones({3}), 1);
  EXPECT_EQ(c.shape(), Shape({1, 1, 3, 3}));
  EXPECT_TRUE(bool(jnp::array_equal(c(0, 0), jnp::tril(jnp::ones({3, 3})))));
  // make_attention_mask with a comparison and extra batch dims.
  const Array m = nn::make_attention_mask(jnp::array<int32_t>({1, 2}), jnp::array<int32_t>({2, 1, 0}),
                                          [](const Array& a, const Array& b) { return jnp::greater_equal(a, b); }, 2,
                                          DType::Bool);
  EXPECT_EQ(m.shape(), Shape({1, 1, 1, 2, 3}));
  EXPECT_EQ(m.dtype(), DType::Bool);
  EXPECT_TRUE(bool(jnp::array_equal(m.reshape({2, 3}), jnp::array<bool>({{false, true, true}, {true, true, true}}))));
  // combine_masks: the logical and of the given ones.
  const Array a = jnp::array<float>({{1, 0}, {1, 1}}), b = jnp::array<float>({{1, 1}, {0, 1}});
  std::optional<Array> ab = nn::combine_masks({a, std::nullopt, b});
  ASSERT_TRUE(ab.has_value());
  EXPECT_TRUE(bool(jnp::array_equal(*ab, jnp::array<float>({{1, 0}, {0, 1}}))));
  EXPECT_FALSE(nn::combine_masks({std::nullopt}).has_value());
  EXPECT_EQ(error_of([&] { nn::combine_masks({a, jnp::ones({2})}); }),
            "[nn.combine_masks] masks must have the same rank, got f32[2,2] and f32[2]");
}

TEST(NnAttention, Errors) {
  const Array x = jnp::ones({2, 3, 6});
  const nn::MultiHeadDotProductAttention mha{.num_heads = 4};
  EXPECT_EQ(error_of([&] { mha.init(jr::PRNGKey(0), x); }),
            "[nn.MultiHeadDotProductAttention] /: the qkv features (6) must be divisible by the number of heads "
            "(4); change qkv_features or num_heads");
  EXPECT_EQ(error_of([&] { nn::dot_product_attention(jnp::ones({1, 3, 2, 4}), jnp::ones({1, 5, 2, 3}), jnp::ones({1, 5, 2, 3})); }),
            "[nn.dot_product_attention] query f32[1,3,2,4] and key f32[1,5,2,3] have different head depths "
            "(the last dim)");
  EXPECT_EQ(error_of([&] { nn::dot_product_attention(jnp::ones({1, 3, 2, 4}), jnp::ones({1, 5, 2, 4}), jnp::ones({1, 4, 2, 4})); }),
            "[nn.dot_product_attention] value f32[1,4,2,4] must match key f32[1,5,2,4] in rank, batch dims, length "
            "and number of heads");
  // Inputs of another width than at init.
  const nn::MultiHeadDotProductAttention two{.num_heads = 2};
  Tree v = two.init(jr::PRNGKey(0), x);
  EXPECT_THROW(two.apply(v, jnp::ones({2, 3, 8})), nn::ScopeParamShapeError);
}

}  // namespace
