// A Flax-style model compiles to the program written by hand: under jit, the optimized
// jaxpr of model.apply equals that of the same computation in jnp (the module system
// costs nothing once traced), for the tutorial's MLP and CNN.
#include <gtest/gtest.h>

#include "compiler/jit_testing.h"
#include "compiler/pipeline.h"
#include "jx/jx.h"
#include "nn/tutorial_models.h"

namespace {

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace nn = jx::nn;
using jx::Array;
using jx::Tree;
using Arrays = std::vector<Array>;

using tutorial::CNN;
using tutorial::MLP;

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
            optimized(tutorial::mlp_by_hand, vm, x));
  CNN cnn;
  Tree vc = cnn.init(jr::PRNGKey(0), x, true);
  EXPECT_EQ(optimized([&](const Tree& v, const Array& xs) { return cnn.apply(v, xs, true); }, vc, x),
            optimized(tutorial::cnn_by_hand, vc, x));
}

}  // namespace
