// Same key, same initial parameters as Flax: a model's kernels against
// tests/golden/gen_nn_model_init.py, which re-derives Flax's key derivation and JAX's
// lecun_normal in NumPy, independently of jx. The float32 samplers may differ from the
// NumPy re-derivation in the last bits (erf_inv), so a few ulps are allowed.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "jx/jx.h"
#include "testing/golden.h"

namespace {

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace nn = jx::nn;
using jx::Array;
using jx::Tree;

#include "golden/nn_model_init_golden.inc"

struct Model : nn::Module<Model> {
  Array call(Array x) const {
    x = nn::relu(nn::Conv{.features = 3, .kernel_size = {3, 3}}(x));
    x = nn::Dense{.features = 4}(x);
    x = nn::BatchNorm{}(x, /*use_running_average=*/false);
    return nn::Dense{.features = 2}(x);
  }
};

void expect_ulps(const Array& got, const std::string& name) {
  const jx::testing::NamedGolden* g = nullptr;
  for (const auto& row : kModelInitGolden)
    if (name == row.name) g = &row;
  ASSERT_NE(g, nullptr) << name;
  ASSERT_EQ(got.shape(), jx::Shape(g->shape)) << name;
  std::vector<double> v = got.astype(jx::DType::Float64).to_vector<double>();
  double scale = 0;
  for (double w : g->values) scale = std::max(scale, std::abs(w));
  const double eps = std::numeric_limits<float>::epsilon();
  for (size_t i = 0; i < v.size(); ++i)
    ASSERT_NEAR(v[i], g->values[i], 4 * eps * (std::abs(g->values[i]) + scale)) << name << " [" << i << "]";
}

TEST(NnModelInit, SameKeySameParametersAsFlax) {
  for (int seed : {0, 42}) {
    Tree v = Model{}.init(jr::PRNGKey(seed), jnp::ones({1, 6, 6, 2}));
    const std::string s = "seed" + std::to_string(seed) + "_";
    expect_ulps(v["params"]["Conv_0"]["kernel"].array(), s + "Conv_0");
    expect_ulps(v["params"]["Dense_0"]["kernel"].array(), s + "Dense_0");
    expect_ulps(v["params"]["Dense_1"]["kernel"].array(), s + "Dense_1");
    EXPECT_TRUE(bool(jnp::all(v["params"]["BatchNorm_0"]["scale"].array() == 1.0f)));
  }
}

}  // namespace
