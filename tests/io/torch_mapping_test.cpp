// jx::io::torch_to_flax / flax_to_torch: PyTorch models saved by
// tests/golden/gen_torch_state_dict.py (a CNN with BatchNorm and a flatten; a text model with
// Embedding, Conv1d, LayerNorm), mapped to Flax variables and applied with the equivalent
// jx::nn model, give PyTorch's eval-mode logits within 1e-5; the flatten trap and its fix;
// explicit names; errors; export back to a state dict, which PyTorch itself loads
// (tests/golden/check_torch_load.py) and runs to the logits jx computes.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "io/torch_common.h"
#include "jx/jx.h"

namespace {

using namespace torch_test;
using jx::Tree;
namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace nn = jx::nn;
namespace jio = jx::io;

// gen_torch_state_dict.CNN, written with Flax layers (NHWC).
struct TorchCNN : nn::Module<TorchCNN> {
  Array call(Array x, bool train) const {
    x = nn::Conv{.features = 4, .kernel_size = {3, 3}}(x);  // padding=1 is SAME for 3x3
    x = nn::BatchNorm{}(x, /*use_running_average=*/!train);
    x = nn::max_pool(nn::relu(x), {2, 2}, {.strides = {2, 2}});
    x = x.reshape({x.shape(0), -1});  // H, W, C order
    x = nn::relu(nn::Dense{.features = 16}(x));
    return nn::Dense{.features = 5}(x);
  }
};

// gen_torch_state_dict.TextNet (NWC).
struct TorchText : nn::Module<TorchText> {
  Array call(Array idx) const {
    Array x = nn::Embed{.num_embeddings = 10, .features = 6}(idx);
    x = nn::Conv{.features = 8, .kernel_size = {3}}(x);
    x = nn::LayerNorm{.epsilon = 1e-5, .use_fast_variance = false}(nn::relu(x));  // torch's
    return nn::Dense{.features = 3}(x.mean(1));
  }
};

const jio::TorchMapping kCnnMapping = {.linear_after_flatten = {{"fc1", {4, 4, 4}}}};

Array nhwc(const Array& nchw) { return nchw.transpose({0, 2, 3, 1}); }

double max_abs_diff(const Array& a, const Array& b) {
  EXPECT_EQ(a.shape(), b.shape());
  return jnp::max(jnp::abs(a.astype(jx::float64) - b.astype(jx::float64))).item<double>();
}

// Same tree structure, leaf shapes and dtypes as the model's own init.
void expect_same_structure(const Tree& got, const Tree& want) {
  EXPECT_EQ(got.str(), want.str());
  EXPECT_EQ(jx::tree::flatten(got).second, jx::tree::flatten(want).second);
}

TEST(TorchMapping, CnnGivesPyTorchLogits) {
  jio::StateDict sd = jio::load_torch_state_dict(data_path("cnn.pt"));
  Tree v = jio::torch_to_flax(sd, kCnnMapping);
  Array x = jnp::load(data_path("cnn_input.npy"));
  TorchCNN model;
  expect_same_structure(v, model.init(jr::PRNGKey(0), nhwc(x), false));
  Array logits = model.apply(v, nhwc(x), false);
  Array want = jnp::load(data_path("cnn_logits.npy"));
  EXPECT_LT(max_abs_diff(logits, want), 1e-5);
  EXPECT_EQ(logits.dtype(), jx::float32);
  // The batch statistics are PyTorch's running stats (non-trivial: three training steps).
  EXPECT_TRUE(bool(jnp::array_equal(v["batch_stats"]["BatchNorm_0"]["var"].array(),
                                    sd[5].second)));
  EXPECT_FALSE(bool(jnp::all(sd[5].second == 1.0f)));
}

TEST(TorchMapping, FlattenTrapWithoutTheOptionGivesOtherLogits) {
  jio::StateDict sd = jio::load_torch_state_dict(data_path("cnn.pt"));
  Tree v = jio::torch_to_flax(sd);  // fc1's rows stay in C, H, W order
  Array x = nhwc(jnp::load(data_path("cnn_input.npy")));
  Array logits = TorchCNN{}.apply(v, x, false);
  EXPECT_GT(max_abs_diff(logits, jnp::load(data_path("cnn_logits.npy"))), 1e-3);
}

TEST(TorchMapping, LinearAfterFlattenPermutesKernelRowsFromCHWToHWC) {
  const int64_t C = 2, H = 3, W = 4;
  Array w = jnp::arange(2 * C * H * W).astype(jx::float32).reshape({2, C * H * W});  // [out, in]
  Tree v = jio::torch_to_flax({{"fc.weight", w}}, {.linear_after_flatten = {{"fc", {C, H, W}}}});
  Array k = v["params"]["Dense_0"]["kernel"].array();
  ASSERT_EQ(k.shape(), jx::Shape({C * H * W, 2}));
  std::vector<float> kv = k.to_vector<float>(), wv = w.to_vector<float>();
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t x = 0; x < W; ++x)  // kernel row (h, w, c) is weight column (c, h, w)
          EXPECT_EQ(kv[size_t(((h * W + x) * C + c) * 2 + o)], wv[size_t(o * C * H * W + (c * H + h) * W + x)]);
  // And back.
  jio::StateDict back = jio::flax_to_torch(v, {{"Dense_0", "fc"}}, {.linear_after_flatten = {{"fc", {C, H, W}}}});
  EXPECT_TRUE(bool(jnp::array_equal(back[0].second, w)));
  EXPECT_THROW(jio::torch_to_flax({{"fc.weight", w}}, {.linear_after_flatten = {{"fc", {3, 3, 3}}}}),
               jx::ValueError);
  EXPECT_THROW(jio::torch_to_flax({{"fc.weight", w}}, {.linear_after_flatten = {{"fd", {2, 3, 4}}}}),
               jx::ValueError);
}

TEST(TorchMapping, TextModelWithEmbeddingConv1dLayerNormAndAName) {
  jio::StateDict sd = jio::load_torch_state_dict(data_path("text.pt"));
  // "tok" is an Embedding, which its tensors alone do not tell from a Linear without bias.
  Tree guessed = jio::torch_to_flax(sd);
  EXPECT_TRUE(guessed["params"].contains("Dense_1"));
  Tree v = jio::torch_to_flax(sd, {.names = {{"tok", "Embed_0"}}});
  Array idx = jnp::load(data_path("text_input.npy"));
  TorchText model;
  expect_same_structure(v, model.init(jr::PRNGKey(0), idx));
  EXPECT_EQ(v["params"]["Conv_0"]["kernel"].array().shape(), jx::Shape({3, 6, 8}));
  Array logits = model.apply(v, idx);
  EXPECT_LT(max_abs_diff(logits, jnp::load(data_path("text_logits.npy"))), 1e-5);
}

TEST(TorchMapping, NamesPlaceModulesUnderParentsAndFixKinds) {
  Array w = jnp::ones({3, 2}), b = jnp::zeros({3}), e = jnp::ones({5, 4});
  jio::StateDict sd = {{"encoder.0.weight", w}, {"encoder.0.bias", b}, {"encoder.2.weight", w},
                       {"proj_emb.weight", e}, {"head.weight", w}, {"head.bias", b}};
  Tree v = jio::torch_to_flax(sd, {.names = {{"encoder", "Encoder_0"}, {"head", "out/Dense_7"}}});
  EXPECT_EQ(v.str(),
            "{'params': {'Encoder_0': {'Dense_0': {'kernel': f32[2,3], 'bias': f32[3]}, 'Dense_1': "
            "{'kernel': f32[2,3]}}, 'Embed_0': {'embedding': f32[5,4]}, 'out': {'Dense_7': "
            "{'kernel': f32[2,3], 'bias': f32[3]}}}}");
  // A root module.
  Tree root = jio::torch_to_flax({{"weight", w}, {"bias", b}}, {.names = {{"", ""}}});
  EXPECT_EQ(root.str(), "{'params': {'kernel': f32[2,3], 'bias': f32[3]}}");
}

TEST(TorchMapping, ErrorsNameTheTensorsAndTheFix) {
  Array w = jnp::ones({3, 2});
  jio::StateDict sd = {{"a.weight", w}, {"b.weight", w}, {"act.alpha", jnp::ones({})}};
  std::string err = error_of([&] { jio::torch_to_flax(sd); });
  EXPECT_NE(err.find("no layer fits these tensors: 'act.alpha' f32[]"), std::string::npos) << err;
  EXPECT_NE(err.find("ignore_unmapped"), std::string::npos) << err;
  Tree v = jio::torch_to_flax(sd, {.ignore_unmapped = true});
  EXPECT_EQ(v["params"].keys(), (std::vector<std::string>{"Dense_0", "Dense_1"}));
  err = error_of([&] { jio::torch_to_flax(sd, {.names = {{"b", "Dense_0"}}, .ignore_unmapped = true}); });
  EXPECT_NE(err.find("'a' and 'b' both map to the Flax path 'Dense_0'"), std::string::npos) << err;
  err = error_of([&] { jio::torch_to_flax(sd, {.names = {{"c", "Dense_5"}}, .ignore_unmapped = true}); });
  EXPECT_NE(err.find("no module of the state dict has this prefix"), std::string::npos) << err;
  // A class in the name that the tensors cannot be.
  err = error_of([&] { jio::torch_to_flax(sd, {.names = {{"a", "Conv_0"}}, .ignore_unmapped = true}); });
  EXPECT_NE(err.find("maps 'a' to 'Conv_0', but its tensors (a.weight (3, 2)) are no Conv layer's"),
            std::string::npos)
      << err;
}

TEST(TorchMapping, ExportWithTemplateInvertsTheImportExactly) {
  jio::StateDict sd = jio::load_torch_state_dict(data_path("cnn.pt"));
  Tree v = jio::torch_to_flax(sd, kCnnMapping);
  jio::StateDict back = jio::flax_to_torch(v, sd, kCnnMapping);
  ASSERT_EQ(back.size(), sd.size());
  for (size_t i = 0; i < sd.size(); ++i) {
    EXPECT_EQ(back[i].first, sd[i].first);
    EXPECT_EQ(back[i].second.dtype(), sd[i].second.dtype()) << sd[i].first;
    EXPECT_TRUE(bool(jnp::array_equal(back[i].second, sd[i].second))) << sd[i].first;
  }
  // Without a template: the same names and values; num_batches_tracked starts at 0.
  jio::StateDict listed = jio::flax_to_torch(
      v, {{"Conv_0", "conv"}, {"BatchNorm_0", "bn"}, {"Dense_0", "fc1"}, {"Dense_1", "fc2"}}, kCnnMapping);
  ASSERT_EQ(listed.size(), sd.size());
  for (size_t i = 0; i < sd.size(); ++i) {
    EXPECT_EQ(listed[i].first, sd[i].first);
    EXPECT_EQ(listed[i].second.dtype(), sd[i].second.dtype()) << sd[i].first;
    if (sd[i].first != "bn.num_batches_tracked") {
      EXPECT_TRUE(bool(jnp::array_equal(listed[i].second, sd[i].second))) << sd[i].first;
    }
  }
  EXPECT_EQ(listed[6].second.item<int64_t>(), 0);
  // A variable of another shape than the template's.
  Tree bad = v;
  bad["params"]["Dense_1"]["bias"] = jnp::zeros({6});
  EXPECT_THROW(jio::flax_to_torch(bad, sd, kCnnMapping), jx::ShapeError);
  EXPECT_THROW(jio::flax_to_torch(Tree::dict(), sd, kCnnMapping), jx::ValueError);
}

// jx changes the weights, computes logits, and exports; PyTorch loads the file and must
// compute the same logits. Also the all-dtypes file, re-saved by jx, must read back in torch.
TEST(TorchMapping, PyTorchLoadsWhatJxExports) {
  ScratchDir dir;
  jio::StateDict sd = jio::load_torch_state_dict(data_path("cnn.pt"));
  Tree v = jio::torch_to_flax(sd, kCnnMapping);
  Tree changed = jx::tree::map([](const Array& a) { return a * 1.5f + 0.01f; }, v);
  Array x = jnp::load(data_path("cnn_input.npy"));
  Array logits = TorchCNN{}.apply(changed, nhwc(x), false);
  auto dump = [&](const std::string& sub, const jio::StateDict& s) {
    fs::create_directory(dir / sub);
    std::ofstream keys(dir / (sub + "/keys.txt"));
    for (const auto& [k, a] : s) {
      keys << k << "\n";
      jnp::save(dir / (sub + "/" + k + ".npy"), a);
    }
    jio::save_torch_state_dict(dir / (sub + ".pt"), s);
  };
  dump("cnn", jio::flax_to_torch(changed, sd, kCnnMapping));
  jnp::save(dir / "cnn/input.npy", x);
  jnp::save(dir / "cnn/logits.npy", logits);
  dump("dtypes", jio::load_torch_state_dict(data_path("dtypes.pt")));

  std::string script = std::string(JX_TEST_DATA_DIR) + "/../golden/check_torch_load.py";
  std::string cmd = "/usr/bin/python3 " + script + " " + (dir / "cnn.pt") + " " + (dir / "cnn") + " " +
                    (dir / "dtypes.pt") + " " + (dir / "dtypes") + " > " + (dir / "log.txt") + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::string log = read_bytes(dir / "log.txt");
  int status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  if (status == 77 || status == 127) GTEST_SKIP() << "PyTorch is not available: " << log;
  EXPECT_EQ(status, 0) << log;
  EXPECT_NE(log.find("max |torch logits - jx logits|"), std::string::npos) << log;
}

}  // namespace
