// Autodiff of conv_general_dilated (ops/conv.cpp): check_grads (forward against central
// differences, reverse against forward, order 2) through both operands over strides,
// padding, dilations, feature and batch groups, 1-D/2-D/3-D; and the grad jaxpr as JAX
// prints it (the transposes are convolutions with swapped dimension numbers).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jx/jx.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::Shape;
using jx::testing::check_grads;
using jx::testing::rand_f64;

struct GradCase {
  std::string name;
  Shape lhs, rhs;
  std::vector<int64_t> strides;
  lax::Padding padding;
  std::vector<int64_t> lhs_dilation, rhs_dilation;
  std::vector<std::string> dims;
  int64_t feature_groups = 1, batch_groups = 1;
};

std::vector<GradCase> cases() {
  return {
      {"nhwc_same", {2, 5, 4, 3}, {3, 3, 3, 2}, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"}},
      {"nchw_strided", {1, 2, 7, 6}, {3, 2, 3, 2}, {2, 3}, "VALID", {}, {}, {"NCHW", "OIHW", "NCHW"}},
      {"asymmetric_negative", {1, 2, 6, 5}, {2, 2, 2, 3}, {1, 2}, {{2, -1}, {-1, 2}}, {}, {},
       {"NCHW", "OIHW", "NCHW"}},
      {"dilations", {1, 4, 5, 2}, {2, 2, 2, 2}, {2, 1}, {{1, 2}, {0, 1}}, {2, 1}, {1, 2},
       {"NHWC", "HWIO", "NHWC"}},
      {"feature_groups", {2, 4, 5, 4}, {3, 2, 2, 4}, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"}, 2},
      {"depthwise", {1, 5, 4, 3}, {3, 3, 1, 6}, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"}, 3},
      {"batch_groups", {4, 2, 5, 4}, {4, 2, 2, 3}, {1, 1}, "VALID", {}, {}, {"NCHW", "OIHW", "NCHW"}, 1, 2},
      {"conv1d", {2, 9, 2}, {3, 2, 3}, {2}, "SAME", {}, {2}, {"NWC", "WIO", "NWC"}},
      {"conv3d", {1, 3, 4, 3, 2}, {2, 2, 2, 2, 2}, {1, 2, 1}, "SAME", {}, {}, {"NDHWC", "DHWIO", "NDHWC"}},
  };
}

Array conv(const GradCase& c, const Array& l, const Array& r) {
  return lax::conv_general_dilated(l, r, c.strides, c.padding, c.lhs_dilation, c.rhs_dilation,
                                   lax::ConvDimensions(c.dims[0], c.dims[1], c.dims[2]),
                                   c.feature_groups, c.batch_groups);
}

TEST(GradConv, CheckGradsOrder2) {
  unsigned seed = 1;
  for (const GradCase& c : cases()) {
    SCOPED_TRACE(c.name);
    auto f = [&](const std::vector<Array>& a) { return std::vector<Array>{conv(c, a[0], a[1])}; };
    check_grads(f, {rand_f64(c.lhs, seed), rand_f64(c.rhs, seed + 1)}, {.order = 2, .seed = seed});
    seed += 2;
  }
}

TEST(GradConv, GradOfAGradIsAConvolution) {
  // The second derivative w.r.t. the kernel of a loss that is quadratic in the output
  // exists and equals forward-over-reverse: hessian-vector products through conv.
  const GradCase c = cases()[0];
  Array x = rand_f64(c.lhs, 7), w = rand_f64(c.rhs, 8), v = rand_f64(c.rhs, 9);
  auto loss = [&](const Array& k) { return jnp::sum(jnp::square(conv(c, x, k))); };
  auto [g, hv] = jx::jvp(jx::grad(loss), std::make_tuple(w), std::make_tuple(v));
  // loss is quadratic: H v = 2 J^T J v, with J v = conv(x, v).
  auto [y, f_vjp] = jx::vjp([&](const Array& k) { return conv(c, x, k); }, w);
  auto [want] = f_vjp(conv(c, x, v) * 2.0);
  jx::testing::expect_close(hv, want, 1e-12, 1e-12, "hvp");
}

}  // namespace
