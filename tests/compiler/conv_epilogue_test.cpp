// The convolution epilogue pass (compiler/pass_conv_epilogue.cpp): a bias add and a relu
// after a convolution become one call; the compiled program equals the eager one; what
// must stay apart (a result read twice, a bias that is not one value per feature, a
// max with -0.0) stays apart.
#include <gtest/gtest.h>

#include "compiler/jit_testing.h"
#include "compiler/passes.h"
#include "compiler/pipeline.h"
#include "jx/jx.h"

namespace {

using namespace jx;
using namespace jx::testing;
namespace jnp = jx::numpy;
using Arrays = std::vector<Array>;

Array conv_nhwc(const Array& x, const Array& w) {
  return lax::conv_general_dilated(x, w, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"});
}

// The optimized program's conv equations, as "conv(3 operands, relu)" lines.
std::string convs(const ir::Jaxpr& j) {
  std::string s;
  for (const ir::Eqn& e : j.eqns)
    if (e.prim == ops::Prim::ConvGeneralDilated)
      s += str("conv(", e.inputs.size(), e.params.has("activation") ? ", relu" : "", ") ");
  return s;
}
int count(const ir::Jaxpr& j, ops::Prim p) {
  int n = 0;
  for (const ir::Eqn& e : j.eqns) n += e.prim == p;
  return n;
}

struct Case {
  const char* name;
  std::function<Arrays(const Arrays&)> f;
  std::vector<ops::Aval> in;
  std::string want;  // convs() of the optimized program
};

std::vector<Case> cases(DType t) {
  const Shape x{2, 6, 5, 3}, w{3, 3, 3, 4}, b{4};
  return {
      {"bias_relu", [](const Arrays& a) { return Arrays{jnp::maximum(conv_nhwc(a[0], a[1]) + a[2], 0)}; },
       {aval(t, x), aval(t, w), aval(t, b)}, "conv(3, relu) "},
      {"bias_first_operand", [](const Arrays& a) { return Arrays{a[2] + conv_nhwc(a[0], a[1])}; },
       {aval(t, x), aval(t, w), aval(t, b)}, "conv(3) "},
      {"relu_only", [](const Arrays& a) { return Arrays{jnp::maximum(0, conv_nhwc(a[0], a[1]))}; },
       {aval(t, x), aval(t, w)}, "conv(2, relu) "},
      {"nchw_broadcast_in_dim", [](const Arrays& a) {
         Array y = lax::conv_general_dilated(a[0], a[1], {2, 1}, "VALID");
         return Arrays{lax::add(y, lax::broadcast_in_dim(a[2], y.shape(), {1}))};
       },
       {aval(t, {2, 3, 7, 6}), aval(t, {4, 3, 2, 2}), aval(t, b)}, "conv(3) "},
      // The pre-activation value is also returned: the bias folds, the relu does not.
      {"pre_activation_read_twice", [](const Arrays& a) {
         Array z = conv_nhwc(a[0], a[1]) + a[2];
         return Arrays{jnp::maximum(z, 0), z};
       },
       {aval(t, x), aval(t, w), aval(t, b)}, "conv(3) "},
      // The convolution's own result is returned: nothing folds.
      {"conv_read_twice", [](const Arrays& a) {
         Array y = conv_nhwc(a[0], a[1]);
         return Arrays{y + a[2], y};
       },
       {aval(t, x), aval(t, w), aval(t, b)}, "conv(2) "},
      // A bias that varies along a spatial dim is not one value per feature.
      {"bias_per_position", [](const Arrays& a) { return Arrays{conv_nhwc(a[0], a[1]) + a[2]}; },
       {aval(t, x), aval(t, w), aval(t, {1, 1, 5, 4})}, "conv(2) "},
      // max with -0.0 keeps -0.0 where relu writes 0.
      {"max_with_negative_zero", [](const Arrays& a) { return Arrays{jnp::maximum(conv_nhwc(a[0], a[1]), -0.0)}; },
       {aval(t, x), aval(t, w)}, "conv(2) "},
  };
}

TEST(ConvEpilogue, FoldsAndMatchesEager) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int32}) {
    for (const Case& c : cases(t)) {
      SCOPED_TRACE(std::string(c.name) + " " + dtype_name(t));
      ir::Jaxpr j = trace_closed(c.f, c.in);
      ir::Jaxpr o = compiler::optimize(j, c.name);
      EXPECT_EQ(convs(o), c.want) << ir::to_string(o);
      Arrays args;
      for (size_t i = 0; i < c.in.size(); ++i) args.push_back(input(t, c.in[i].shape, int(i) + 1));
      auto exe = compiler::compile(j, {.name = c.name, .donate = {}});
      // oneDNN adds the bias to the same float32 sum the separate add would: bit for bit.
      EXPECT_TRUE(close_values(exe->run(args), ir::eval_jaxpr(j, args), 0));
    }
  }
}

TEST(ConvEpilogue, ATrainingStepFoldsTheBias) {
  // loss = sum(relu(conv(x, w) + b) * t): the relu's derivative reads the pre-activation
  // value, so only the bias folds; gradients equal eager's.
  auto loss = [](const Array& w, const Array& b, const Array& x, const Array& t) {
    return jnp::sum(jnp::maximum(conv_nhwc(x, w) + b, 0.0) * t);
  };
  Array x = input(DType::Float32, {4, 6, 6, 3}, 1), w = input(DType::Float32, {3, 3, 3, 8}, 2);
  Array b = input(DType::Float32, {8}, 3), t = input(DType::Float32, {4, 6, 6, 8}, 4);
  auto g = jx::grad<0, 1>(loss);
  auto [gw, gb] = g(w, b, x, t);
  auto [jw, jb] = jx::jit(g)(w, b, x, t);
  EXPECT_TRUE(close_values({jw, jb}, {gw, gb}, 0, 1e-5));
  ir::Jaxpr j = trace_closed(
      [&](const Arrays& a) {
        auto [dw, db] = g(a[0], a[1], a[2], a[3]);
        return Arrays{dw, db};
      },
      {aval(DType::Float32, w.shape()), aval(DType::Float32, b.shape()), aval(DType::Float32, x.shape()),
       aval(DType::Float32, t.shape())});
  ir::Jaxpr o = compiler::optimize(j, "train");
  EXPECT_NE(convs(o).find("conv(3)"), std::string::npos) << ir::to_string(o);
  EXPECT_EQ(count(o, ops::Prim::ConvGeneralDilated), 2) << ir::to_string(o);  // forward, kernel grad
}

}  // namespace
