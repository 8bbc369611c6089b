// LayerNorm, GroupNorm and RMSNorm (nn/normalization.h): variable trees as Flax's, values
// and gradients against PyTorch float64 (torch.nn.functional.layer_norm, group_norm, the
// RMSNorm formula; tests/golden/gen_nn_layers_more.py) with hand-built variables,
// check_grads through apply, jit against eager, dtypes, errors by text.
#include "nn/layers_more_common.h"

namespace {

using namespace layers_more;

TEST(NnNormalization, VariableTreesAsFlax) {
  const Array key = jr::PRNGKey(1);
  const Array x = jr::normal(jr::PRNGKey(0), {3, 4, 5, 6});
  // Flax's docstring examples: scale (ones) then bias (zeros), of the feature axes' shape.
  Tree ln = nn::LayerNorm{}.init(key, x);
  EXPECT_EQ(ln.str(), "{'params': {'scale': f32[6], 'bias': f32[6]}}");
  EXPECT_TRUE(bool(jnp::array_equal(ln["params"]["scale"].array(), jnp::ones({6}))));
  EXPECT_TRUE(bool(jnp::array_equal(ln["params"]["bias"].array(), jnp::zeros({6}))));
  EXPECT_EQ(nn::GroupNorm{.num_groups = 3}.init(key, x).str(), "{'params': {'scale': f32[6], 'bias': f32[6]}}");
  EXPECT_EQ(nn::RMSNorm{}.init(key, x).str(), "{'params': {'scale': f32[6]}}");
  const nn::LayerNorm two_feature_axes{.use_bias = false, .feature_axes = {1, -1}};
  EXPECT_EQ(two_feature_axes.init(key, x).str(), "{'params': {'scale': f32[4,6]}}");
  const nn::LayerNorm none{.use_bias = false, .use_scale = false};
  EXPECT_EQ(none.init(key, x).str(), "{}");
}

struct NormCase {
  const char* name;
  std::function<Array(const Array& x, const Array& scale, const Array& bias)> apply;
  std::vector<std::string> grads;  // golden names of d/dx, d/dscale, d/dbias ("" = none)
};

std::vector<NormCase> norm_cases() {
  auto two = [](const Array& s, const Array& b) { return params(Tree{{"scale", s}, {"bias", b}}); };
  return {
      {"ln", [=](const Array& x, const Array& s, const Array& b) { return nn::LayerNorm{}.apply(two(s, b), x); },
       {"x", "scale", "bias"}},
      {"ln_axes",
       [=](const Array& x, const Array& s, const Array& b) {
         return nn::LayerNorm{.reduction_axes = {1, 2}, .feature_axes = {-1}}.apply(two(s, b), x);
       },
       {"x", "scale", ""}},
      {"gn",
       [=](const Array& x, const Array& s, const Array& b) { return nn::GroupNorm{.num_groups = 3}.apply(two(s, b), x); },
       {"x", "scale", "bias"}},
      {"gn_2d",
       [=](const Array& x, const Array& s, const Array& b) { return nn::GroupNorm{.num_groups = 4}.apply(two(s, b), x); },
       {"x", "scale", ""}},
      {"rms",
       [=](const Array& x, const Array& s, const Array&) { return nn::RMSNorm{}.apply(params(Tree{{"scale", s}}), x); },
       {"x", "scale", ""}},
  };
}

TEST(NnNormalization, ValuesAndGradientsMatchTorch) {
  for (const NormCase& c : norm_cases()) {
    SCOPED_TRACE(c.name);
    const std::string n = c.name;
    const Array x = golden(n + "_x"), s = golden(n + "_scale");
    const Array b = n == "rms" ? jnp::zeros({1}, DType::Float64) : golden(n + "_bias");
    auto f = [&](const std::vector<Array>& a) { return c.apply(a[0], a[1], a[2]); };
    expect_golden(n + "_y", f({x, s, b}));
    expect_vjp_goldens(n, f, {x, s, b}, c.grads);
    auto jf = jx::jit([&](const Array& xx, const Array& ss, const Array& bb) { return c.apply(xx, ss, bb); });
    jx::testing::expect_close(jf(x, s, b), f({x, s, b}), 1e-13, 1e-13, "jit");
  }
}

TEST(NnNormalization, CheckGradsThroughApply) {
  for (const NormCase& c : norm_cases()) {
    if (std::string(c.name) == "gn_2d" || std::string(c.name) == "ln_axes") continue;  // same code paths
    SCOPED_TRACE(c.name);
    const std::string n = c.name;
    const Array b = n == "rms" ? jnp::zeros({1}, DType::Float64) : golden(n + "_bias");
    expect_grads_ok([&](const std::vector<Array>& a) { return c.apply(a[0], a[1], b); },
                    {golden(n + "_x"), golden(n + "_scale")});
  }
}

TEST(NnNormalization, GroupSizeAndSpecialCasesAsFlax) {
  const Array x = golden("gn_x");  // (2, 3, 3, 6)
  Tree v = params(Tree{{"scale", golden("gn_scale")}, {"bias", golden("gn_bias")}});
  // group_size 2 of 6 channels is num_groups 3.
  const nn::GroupNorm by_size{.num_groups = std::nullopt, .group_size = 2};
  expect_golden("gn_y", by_size.apply(v, x));
  // Flax's docstring identities: one group is LayerNorm over (1, 2, 3); groups of one
  // channel are InstanceNorm, LayerNorm over (1, 2) with features -1.
  const nn::GroupNorm one_group{.num_groups = 1};
  const nn::LayerNorm over_all{.reduction_axes = {1, 2, 3}};
  jx::testing::expect_close(one_group.apply(v, x), over_all.apply(v, x), 1e-12, 1e-12, "num_groups 1");
  const nn::GroupNorm instance{.num_groups = std::nullopt, .group_size = 1};
  const nn::LayerNorm over_space{.reduction_axes = {1, 2}, .feature_axes = {-1}};
  jx::testing::expect_close(instance.apply(v, x), over_space.apply(v, x), 1e-12, 1e-12, "group_size 1");
  // The two-pass variance gives the same numbers here.
  const nn::GroupNorm slow{.num_groups = 3, .use_fast_variance = false};
  expect_golden("gn_y", slow.apply(v, x));
  const nn::LayerNorm ln_slow{.use_fast_variance = false};
  expect_golden("ln_y", ln_slow.apply(params(Tree{{"scale", golden("ln_scale")}, {"bias", golden("ln_bias")}}),
                                      golden("ln_x")));
}

TEST(NnNormalization, DtypesAsFlax) {
  const Array x16 = jr::normal(jr::PRNGKey(0), {2, 8}).astype(DType::Float16);
  // Statistics in float32; the result is the result type of inputs and (float32) params.
  Tree v = nn::LayerNorm{}.init(jr::PRNGKey(1), x16);
  EXPECT_EQ(nn::LayerNorm{}.apply(v, x16).dtype(), DType::Float32);
  const nn::LayerNorm half{.dtype = DType::Float16};
  EXPECT_EQ(half.apply(v, x16).dtype(), DType::Float16);
  const nn::GroupNorm gn{.num_groups = 2, .param_dtype = DType::Float16};
  Tree g = gn.init(jr::PRNGKey(1), x16);
  EXPECT_EQ(g.str(), "{'params': {'scale': f16[8], 'bias': f16[8]}}");
  EXPECT_EQ(gn.apply(g, x16).dtype(), DType::Float16);
  // float32 in, float32 out, close to the float64 result.
  const Array x = golden("rms_x");
  Tree r = params(Tree{{"scale", golden("rms_scale").astype(DType::Float32)}});
  const Array y32 = nn::RMSNorm{}.apply(r, x.astype(DType::Float32));
  EXPECT_EQ(y32.dtype(), DType::Float32);
  expect_golden("rms_y", y32, 2e-6);
}

TEST(NnNormalization, GroupNormErrors) {
  const Array x = jnp::ones({2, 4, 4, 6});
  EXPECT_EQ(error_of([&] { nn::GroupNorm{}.init(jr::PRNGKey(0), x); }),
            "[nn.GroupNorm] /: the number of groups (32) does not divide the number of channels (6) of inputs "
            "f32[2,4,4,6]; choose num_groups that divides it (the default is 32)");
  EXPECT_THROW(nn::GroupNorm{.num_groups = 4}.init(jr::PRNGKey(0), x), jx::ValueError);
  const nn::GroupNorm both{.num_groups = 2, .group_size = 3};
  EXPECT_EQ(error_of([&] { both.init(jr::PRNGKey(0), x); }),
            "[nn.GroupNorm] /: give either num_groups or group_size, not both; for group_size, set num_groups = "
            "std::nullopt (its default is 32)");
  const nn::GroupNorm bad_size{.num_groups = std::nullopt, .group_size = 4};
  EXPECT_EQ(error_of([&] { bad_size.init(jr::PRNGKey(0), x); }),
            "[nn.GroupNorm] /: the number of channels (6) of inputs f32[2,4,4,6] is not a multiple of the group "
            "size (4); choose a group_size that divides it");
  const nn::GroupNorm no_channels{.num_groups = 2, .reduction_axes = std::vector<int64_t>{1, 2}};
  EXPECT_EQ(error_of([&] { no_channels.init(jr::PRNGKey(0), x); }),
            "[nn.GroupNorm] /: reduction_axes (1, 2) for inputs f32[2,4,4,6] must include the last axis, which "
            "holds the channels; add -1");
  // Inside a model the message names the module's path.
  struct Net : nn::Module<Net> {
    Array call(const Array& x) const { return nn::GroupNorm{.num_groups = 4}(x); }
  };
  EXPECT_EQ(error_of([&] { Net{}.init(jr::PRNGKey(0), x); }).substr(0, 61),
            "[nn.GroupNorm] /GroupNorm_0: the number of groups (4) does no");
  EXPECT_THROW(nn::LayerNorm{.reduction_axes = {3}}.init(jr::PRNGKey(0), jnp::ones({2, 3})), jx::IndexError);
}

}  // namespace
