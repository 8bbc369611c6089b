// Bad input to jx::nn (issue 19, "bad input everywhere"): a table of wrong calls to the
// layers, the module system, the attention helpers and the functions, each of which must
// throw exactly the expected jx error type (nn's Flax-named errors included) with a message
// that names the operation ("[nn.Conv]", "[softmax]"), the offending shape, dtype or value,
// and the fix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "testing/error_table.h"

namespace {

namespace jnp = jx::numpy;
namespace nn = jx::nn;
namespace jr = jx::random;
using jx::Array;
using jx::DType;
using jx::Tree;

using jx::testing::ErrorRow;
using jx::testing::row;
using jx::testing::run_rows;

const Array kX = jnp::ones({2, 4});          // (batch, features)
const Array kImg = jnp::ones({1, 4, 4, 3});  // NHWC
Array key() { return jr::PRNGKey(0); }

// A parameter and a submodule given the same name. (Two submodules of one name are one
// submodule called twice, sharing its parameters, by design.)
struct ParamAndSubmoduleOfOneName : nn::Module<ParamAndSubmoduleOfOneName> {
  Array call(const Array& x) const {
    Array scale = nn::param("dense", nn::initializers::ones_init(), {4}, DType::Float32);
    return nn::Dense{.features = 2, .name = "dense"}(x * scale);
  }
};

std::vector<ErrorRow> nn_rows() {
  std::vector<ErrorRow> rows;
  // ---- the module system ----
  rows.push_back(row<jx::ShapeError>("Dense: a 0-d input",
                                     [] { nn::Dense{.features = 3}.init(key(), Array(1.0f)); },
                                     {"[nn.Dense]", "inputs need a feature axis", "f32[]"}));
  rows.push_back(row<nn::ScopeParamShapeError>(
      "Dense: applied to another width than at init",
      [] {
        Tree v = nn::Dense{.features = 3}.init(key(), kX);
        nn::Dense{.features = 3}.apply(v, jnp::ones({2, 5}));
      },
      {"[nn]", "(5, 3)", "(4, 3)", "\"kernel\"", "another input width than at init"}));
  rows.push_back(row<nn::ScopeCollectionNotFound>(
      "apply: variables without params",
      [] {
        nn::Dense{.features = 3}.apply(Tree{{"batch_stats", Tree::dict()}}, kX);
      },
      {"[nn]", "\"kernel\"", "collection \"params\"", "pass the variables init returned"}));
  rows.push_back(row<nn::ApplyScopeInvalidVariablesStructureError>(
      "apply: init's result wrapped in params once more",
      [] {
        Tree v = nn::Dense{.features = 3}.init(key(), kX);
        nn::Dense{.features = 3}.apply(Tree{{"params", v}}, kX);
      },
      {"[nn]", "{\"params\": {\"params\": ...}}", "pass the whole result of init"}));
  rows.push_back(row<nn::CallCompactUnboundModuleError>(
      "Dense: called outside init/apply", [] { nn::Dense{.features = 3}(kX); },
      {"[nn]", "Dense's call outside a module's call", "model.init(key, x)"}));
  rows.push_back(row<nn::NameInUseError>("a name used twice",
                                         [] { ParamAndSubmoduleOfOneName{}.init(key(), kX); },
                                         {"[nn]", "\"dense\" is used twice", "its own name"}));
  rows.push_back(row<nn::InvalidRngError>(
      "Dropout: no dropout key", [] { nn::Dropout{.rate = 0.5}.apply(Tree::dict(), kX, false); },
      {"[nn]", "needs PRNG for \"dropout\"", "nn::Rngs{{\"dropout\", key}}"}));
  rows.push_back(row<nn::ModifyScopeVariableError>(
      "BatchNorm: training without Mutable batch_stats",
      [] {
        Tree v = nn::BatchNorm{}.init(key(), kX, false);
        nn::BatchNorm{}.apply(v, kX, false);
      },
      {"[nn]", "\"mean\"", "\"batch_stats\" is immutable", "nn::Mutable{\"batch_stats\"}"}));
  rows.push_back(row<jx::ValueError>("Sequential: no layers",
                                     [] { nn::Sequential{}.init(key(), kX); },
                                     {"[nn.Sequential]", "no layers", "at least one"}));
  // ---- layers' fields and inputs ----
  rows.push_back(row<jx::ValueError>(
      "Dropout: deterministic not given", [] { nn::Dropout{.rate = 0.5}.init(key(), kX); },
      {"[nn.Dropout]", "deterministic is given neither", "(x, !train)"}));
  rows.push_back(row<jx::ValueError>("Dropout: rate above 1",
                                     [] { nn::Dropout{.rate = 1.5}.init(key(), kX, true); },
                                     {"[nn.Dropout]", "rate 1.5", "[0, 1]"}));
  rows.push_back(row<jx::IndexError>(
      "Dropout: a broadcast dim out of range",
      [] { nn::Dropout{.rate = 0.5, .broadcast_dims = {2}}.apply(Tree::dict(), kX, false, key()); },
      {"[nn.Dropout]", "broadcast dim 2", "f32[2,4]"}));
  rows.push_back(row<jx::ValueError>(
      "BatchNorm: use_running_average not given", [] { nn::BatchNorm{}.init(key(), kX); },
      {"[nn.BatchNorm]", "use_running_average is given neither", "(x, !train)"}));
  rows.push_back(row<jx::IndexError>("BatchNorm: an axis out of range",
                                     [] { nn::BatchNorm{.axis = {3}}.init(key(), kX, true); },
                                     {"[nn.BatchNorm]", "axis 3", "f32[2,4]"}));
  rows.push_back(row<jx::ValueError>("Conv: no kernel_size",
                                     [] { nn::Conv{.features = 4}.init(key(), kImg); },
                                     {"[nn.Conv]", "kernel_size is empty", "e.g. {3, 3}"}));
  rows.push_back(row<jx::ShapeError>(
      "Conv: inputs of too low a rank",
      [] {
        nn::Conv{.features = 4, .kernel_size = {3, 3}}.init(key(), jnp::ones({4, 3}));
      },
      {"[nn.Conv]", "f32[4,3]", "3 dims a 2-D kernel needs"}));
  rows.push_back(row<jx::ShapeError>(
      "Conv: feature_group_count not dividing the features",
      [] {
        nn::Conv{.features = 4, .kernel_size = {3, 3}, .feature_group_count = 2}.init(key(), kImg);
      },
      {"[nn.Conv]", "feature_group_count 2", "3 input features"}));
  rows.push_back(row<jx::ValueError>(
      "Conv: strides of another length",
      [] {
        nn::Conv{.features = 4, .kernel_size = {3, 3}, .strides = {1, 1, 1}}.init(key(), kImg);
      },
      {"[nn.Conv]", "strides (1, 1, 1)", "2 spatial dims", "one per dim"}));
  rows.push_back(row<jx::ValueError>(
      "Conv: CAUSAL padding in 2-D",
      [] {
        nn::Conv{.features = 4, .kernel_size = {3, 3}, .padding = "CAUSAL"}.init(key(), kImg);
      },
      {"[nn.Conv]", "CAUSAL", "1-D"}));
  rows.push_back(row<jx::ValueError>(
      "ConvTranspose: CAUSAL padding",
      [] {
        nn::ConvTranspose{.features = 4, .kernel_size = {3}, .padding = "CAUSAL"}.init(
            key(), jnp::ones({1, 5, 2}));
      },
      {"[nn.ConvTranspose]", "\"CAUSAL\"", "\"SAME\", \"VALID\", \"CIRCULAR\""}));
  rows.push_back(
      row<jx::ValueError>("DenseGeneral: no features", [] { nn::DenseGeneral{}.init(key(), kX); },
                          {"[nn.DenseGeneral]", "features is empty", ".features = {4}"}));
  rows.push_back(
      row<jx::IndexError>("DenseGeneral: an axis out of range",
                          [] { nn::DenseGeneral{.features = {3}, .axis = {2}}.init(key(), kX); },
                          {"[nn.DenseGeneral]", "axis (2,)", "f32[2,4]"}));
  rows.push_back(row<jx::ValueError>(
      "Embed: float inputs", [] { nn::Embed{.num_embeddings = 5, .features = 3}.init(key(), kX); },
      {"[nn.Embed]", "integer indices", "f32[2,4]", "astype(jx::int32)"}));
  rows.push_back(row<jx::ValueError>(
      "GroupNorm: groups not dividing the channels",
      [] { nn::GroupNorm{.num_groups = 3}.init(key(), kX); },
      {"[nn.GroupNorm]", "groups (3)", "channels (4)", "f32[2,4]", "choose num_groups"}));
  rows.push_back(
      row<jx::ValueError>("GroupNorm: both num_groups and group_size",
                          [] { nn::GroupNorm{.num_groups = 2, .group_size = 2}.init(key(), kX); },
                          {"[nn.GroupNorm]", "not both", "num_groups = std::nullopt"}));
  rows.push_back(row<jx::IndexError>("LayerNorm: a reduction axis out of range",
                                     [] { nn::LayerNorm{.reduction_axes = {2}}.init(key(), kX); },
                                     {"[nn.LayerNorm]", "axis 2", "rank 2", "-1 at the end"}));
  rows.push_back(row<jx::ShapeError>("max_pool: inputs without spatial dims",
                                     [] {
                                       nn::max_pool(jnp::ones({3}), {2, 2});
                                     },
                                     {"[nn.max_pool]", "f32[3]", "2 spatial dims"}));
  rows.push_back(row<jx::ShapeError>("avg_pool: strides of another length",
                                     [] {
                                       nn::avg_pool(kImg, {2, 2}, {.strides = {2}});
                                     },
                                     {"[nn.avg_pool]", "strides (2,)", "window (2, 2)"}));
  // ---- attention ----
  rows.push_back(row<jx::ShapeError>(
      "dot_product_attention: query and key head dims differ",
      [] {
        nn::dot_product_attention(jnp::ones({1, 3, 2, 4}), jnp::ones({1, 3, 2, 5}),
                                  jnp::ones({1, 3, 2, 5}));
      },
      {"[nn.dot_product_attention]", "f32[1,3,2,4]", "f32[1,3,2,5]", "head depths"}));
  rows.push_back(row<jx::ShapeError>(
      "dot_product_attention: value of another length",
      [] {
        nn::dot_product_attention(jnp::ones({1, 3, 2, 4}), jnp::ones({1, 3, 2, 4}),
                                  jnp::ones({1, 5, 2, 4}));
      },
      {"[nn.dot_product_attention]", "value f32[1,5,2,4]", "key f32[1,3,2,4]", "length"}));
  rows.push_back(row<jx::ShapeError>("make_causal_mask: a 0-d input",
                                     [] { nn::make_causal_mask(Array(1.0f)); },
                                     {"[nn.make_causal_mask]", "length axis", "f32[]"}));
  rows.push_back(row<jx::ShapeError>("combine_masks: masks of different ranks",
                                     [] {
                                       nn::combine_masks({jnp::ones({2, 2}), jnp::ones({2})});
                                     },
                                     {"[nn.combine_masks]", "same rank", "f32[2,2]", "f32[2]"}));
  rows.push_back(row<jx::ValueError>(
      "MultiHeadDotProductAttention: qkv_features not divisible by num_heads",
      [] {
        nn::MultiHeadDotProductAttention{.num_heads = 3, .qkv_features = 8}.init(
            key(), jnp::ones({1, 2, 8}));
      },
      {"[nn.MultiHeadDotProductAttention]", "qkv features (8)", "heads (3)",
       "change qkv_features or num_heads"}));
  rows.push_back(row<jx::ValueError>(
      "MultiHeadDotProductAttention: dropout without deterministic",
      [] {
        nn::MultiHeadDotProductAttention{.num_heads = 2, .dropout_rate = 0.1}.init(
            key(), jnp::ones({1, 2, 8}));
      },
      {"[nn.MultiHeadDotProductAttention]", "dropout_rate 0.1", "deterministic is given neither",
       "!train"}));
  // ---- functions and initializers ----
  rows.push_back(row<jx::IndexError>("softmax: an axis out of range", [] { nn::softmax(kX, 2); },
                                     {"[softmax]", "axis 2", "f32[2,4]", "-2..1"}));
  rows.push_back(
      row<jx::DTypeError>("sigmoid: integer input",
                          [] {
                            nn::sigmoid(jnp::array<int32_t>({1, 2}));
                          },
                          {"[sigmoid]", "floating-point", "i32[2]", "astype(jx::float32)"}));
  rows.push_back(row<jx::ValueError>("glu: an odd axis",
                                     [] {
                                       nn::glu(jnp::ones({2, 3}));
                                     },
                                     {"[glu]", "f32[2,3]", "odd size 3", "must be even"}));
  rows.push_back(row<jx::ValueError>("one_hot: negative num_classes",
                                     [] { nn::one_hot(jnp::array<int32_t>({1}), -2); },
                                     {"[one_hot]", ">= 0", "-2", "i32[1]"}));
  rows.push_back(
      row<jx::ValueError>("variance_scaling: an unknown mode",
                          [] { nn::initializers::variance_scaling(1.0, "fan_sum", "normal"); },
                          {"[initializers::variance_scaling]", "\"fan_sum\"",
                           "\"fan_in\", \"fan_out\" or \"fan_avg\""}));
  rows.push_back(row<jx::DTypeError>("normal: an integer dtype",
                                     [] { nn::initializers::normal()(key(), {3}, DType::Int32); },
                                     {"[initializers::normal]", "int32", "jx::float32"}));
  rows.push_back(row<jx::ValueError>(
      "orthogonal with a zero-size dim",
      [] { nn::initializers::orthogonal()(key(), {0, 3}); },
      {"[initializers::orthogonal]", "(0, 3)", "zero-size dim"}));
  return rows;
}

TEST(NnErrors, EveryBadCallThrowsATypedErrorNamingTheOperation) {
  const std::vector<ErrorRow> rows = nn_rows();
  EXPECT_GE(rows.size(), 20u);
  run_rows(rows);
}

}  // namespace
