// A Flax-style model compiles to the program written by hand: under jit, the optimized
// jaxpr of model.apply equals that of the same computation in jnp (the module system
// costs nothing once traced), for the tutorial's MLP and CNN.
#include <gtest/gtest.h>

#include "compiler/jit_testing.h"
#include "compiler/pipeline.h"
#include "jx/jx.h"

namespace {

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace nn = jx::nn;
using jx::Array;
using jx::Tree;
using Arrays = std::vector<Array>;

struct MLP : nn::Module<MLP> {
  Array call(Array x) const {
    x = x.reshape({x.shape(0), -1});
    x = nn::relu(nn::Dense{.features = 512}(x));
    x = nn::relu(nn::Dense{.features = 512}(x));
    return nn::Dense{.features = 10}(x);
  }
};
Array mlp_by_hand(const Tree& v, Array x) {
  const Tree& p = v["params"];
  auto dense = [&](const char* n, const Array& h) { return jnp::matmul(h, p[n]["kernel"].array()) + p[n]["bias"].array(); };
  x = x.reshape({x.shape(0), -1});
  x = nn::relu(dense("Dense_0", x));
  x = nn::relu(dense("Dense_1", x));
  return dense("Dense_2", x);
}

struct CNN : nn::Module<CNN> {
  Array call(Array x) const {
    x = nn::relu(nn::Conv{.features = 32, .kernel_size = {3, 3}}(x));
    x = nn::max_pool(x, {2, 2}, {.strides = {2, 2}});
    x = nn::relu(nn::Conv{.features = 64, .kernel_size = {3, 3}}(x));
    x = x.reshape({x.shape(0), -1});
    x = nn::relu(nn::Dense{.features = 256}(x));
    return nn::Dense{.features = 10}(x);
  }
};
Array cnn_by_hand(const Tree& v, Array x) {
  const Tree& p = v["params"];
  auto conv = [&](const char* n, const Array& h) {
    return jx::lax::conv_general_dilated(h, p[n]["kernel"].array(), {1, 1}, "SAME", {}, {},
                                         {"NHWC", "HWIO", "NHWC"}) + p[n]["bias"].array();
  };
  auto dense = [&](const char* n, const Array& h) { return jnp::matmul(h, p[n]["kernel"].array()) + p[n]["bias"].array(); };
  x = nn::relu(conv("Conv_0", x));
  x = jx::lax::reduce_window_max(x, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  x = nn::relu(conv("Conv_1", x));
  x = x.reshape({x.shape(0), -1});
  x = nn::relu(dense("Dense_0", x));
  return dense("Dense_1", x);
}

template <class F>
std::string optimized(F f, const Tree& v, const Array& x) {
  auto [leaves, def] = jx::tree::flatten(std::make_tuple(v, x));
  std::vector<jx::ops::Aval> in;
  for (const Array& a : leaves) in.push_back(jx::testing::aval(a.dtype(), a.shape()));
  auto j = jx::testing::trace_closed(
      [&, def = def](const Arrays& xs) {
        auto [vv, xx] = jx::tree::unflatten<std::tuple<Tree, Array>>(def, xs);
        return Arrays{f(vv, xx)};
      },
      in);
  return jx::ir::to_string(jx::compiler::optimize(j, "same_program"));
}

TEST(NnSameProgram, MlpAndCnnCompileToTheHandWrittenProgram) {
  Array x = jnp::ones({8, 28, 28, 1});
  MLP mlp;
  Tree vm = mlp.init(jr::PRNGKey(0), x);
  EXPECT_EQ(optimized([&](const Tree& v, const Array& xs) { return mlp.apply(v, xs); }, vm, x),
            optimized(mlp_by_hand, vm, x));
  CNN cnn;
  Tree vc = cnn.init(jr::PRNGKey(0), x);
  EXPECT_EQ(optimized([&](const Tree& v, const Array& xs) { return cnn.apply(v, xs); }, vc, x),
            optimized(cnn_by_hand, vc, x));
}

}  // namespace
