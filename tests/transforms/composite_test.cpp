// Gradients of whole programs against PyTorch autograd (tests/golden/gen_composite.py):
// an MLP with softmax cross-entropy, a where/gather/logsumexp chain, and second
// derivatives through tanh. float32 on both sides.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "jx/transforms.h"
#include "testing/check_grads.h"

namespace {

#include "../golden/composite_golden.inc"

namespace jnp = jx::numpy;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::expect_close;
using Params = std::map<std::string, Array>;

Array f32(const std::vector<float>& v, const Shape& s) { return jnp::array(v, s); }

// float32 gradients of a few dozen terms: PyTorch and jx sum in different orders.
constexpr double kAtol = 2e-6, kRtol = 2e-5;

// log_softmax written with jnp, as jax.nn.log_softmax does: the max shift carries no
// gradient (it cancels mathematically; stop_gradient makes that exact).
Array log_softmax(const Array& x) {
  Array shifted = x - jx::stop_gradient(jnp::max(x, -1, true));
  return shifted - jnp::log(jnp::sum(jnp::exp(shifted), -1, true));
}

// jax.nn.logsumexp over one axis.
Array logsumexp(const Array& x, int64_t axis) {
  Array m = jx::stop_gradient(jnp::max(x, axis, true));
  return jnp::squeeze(jnp::log(jnp::sum(jnp::exp(x - m), axis, true)) + m, axis);
}

Array mlp_loss(const Params& p, const Array& x, const Array& onehot) {
  Array h = x;
  for (int i = 0; i < 3; ++i) {
    const std::string k = std::to_string(i);
    h = jnp::matmul(h, p.at("w" + k)) + p.at("b" + k);
    if (i < 2) h = jnp::maximum(h, 0.0);
  }
  return -jnp::mean(jnp::sum(onehot * log_softmax(h), -1));
}

TEST(Composite, MlpValueAndGrad) {
  Params p{{"w0", f32(kMlp_w0, {20, 16})}, {"b0", f32(kMlp_b0, {16})},
           {"w1", f32(kMlp_w1, {16, 16})}, {"b1", f32(kMlp_b1, {16})},
           {"w2", f32(kMlp_w2, {16, 10})}, {"b2", f32(kMlp_b2, {10})}};
  Array x = f32(kMlpX, {8, 20}), onehot = f32(kMlpOnehot, {8, 10});
  auto [loss, grads] = jx::value_and_grad(mlp_loss)(p, x, onehot);
  EXPECT_EQ(loss.dtype(), DType::Float32);
  EXPECT_NEAR(loss.item<float>(), kMlpLoss[0], 1e-5);
  const std::map<std::string, const std::vector<float>*> expected{
      {"w0", &kMlpGrad_w0}, {"b0", &kMlpGrad_b0}, {"w1", &kMlpGrad_w1},
      {"b1", &kMlpGrad_b1}, {"w2", &kMlpGrad_w2}, {"b2", &kMlpGrad_b2}};
  ASSERT_EQ(grads.size(), expected.size());
  for (const auto& [k, v] : expected) {
    SCOPED_TRACE(k);
    const Array& g = grads.at(k);
    EXPECT_EQ(g.dtype(), DType::Float32);
    ASSERT_EQ(g.shape(), p.at(k).shape());
    EXPECT_NO_THROW(expect_close(g, f32(*v, g.shape()), kAtol, kRtol, "grad " + k));
  }
}

TEST(Composite, WhereGatherLogsumexp) {
  Array x = f32(kGatherX, {6, 5});
  Array idx = jnp::array(kGatherIdx, Shape{4});
  Array coef = f32(kGatherCoef, {4});
  auto f = [&](const Array& a) {
    Array y = jnp::where(a > 0.0, a, a * a * 0.5);
    Array z = y(idx) * 2.0;  // rows 4, 0, 4, 2: row 4's cotangent accumulates twice
    return jnp::sum(logsumexp(z, 1) * coef);
  };
  auto [v, g] = jx::value_and_grad(f)(x);
  EXPECT_NEAR(v.item<float>(), kGatherLoss[0], 1e-5);
  ASSERT_EQ(g.shape(), (Shape{6, 5}));
  EXPECT_NO_THROW(expect_close(g, f32(kGatherGrad, {6, 5}), kAtol, kRtol, "grad"));
  // Rows 1, 3 and 5 are never gathered: their gradient is exactly zero.
  std::vector<float> gv = g.to_vector<float>();
  for (int r : {1, 3, 5})
    for (int c = 0; c < 5; ++c) EXPECT_EQ(gv[size_t(r * 5 + c)], 0.0f);
}

TEST(Composite, SecondDerivativeThroughTanh) {
  auto f = [](const Array& x) { return x * jnp::tanh(x * 2.0 + 0.3); };
  auto d2 = jx::grad(jx::grad(f));
  for (size_t i = 0; i < kTanhPoints.size(); ++i) {
    Array x = jnp::array<float>({kTanhPoints[i]}).reshape({});
    Array h = d2(x);
    EXPECT_EQ(h.dtype(), DType::Float32);
    EXPECT_NEAR(h.item<float>(), kTanhD2[i], 2e-5 + 2e-5 * std::abs(kTanhD2[i]))
        << "x = " << kTanhPoints[i];
  }
}

TEST(Composite, HessianVectorProductThroughTanh) {
  Array A = f32(kHvpA, {3, 4}), x = f32(kHvpX, {4}), v = f32(kHvpV, {4});
  auto f = [&](const Array& a) { return jnp::sum(jnp::tanh(jnp::matmul(A, a))); };
  Array g = jx::grad(f)(x);
  EXPECT_NO_THROW(expect_close(g, f32(kHvpGrad, {4}), kAtol, kRtol, "grad"));
  // Reverse over reverse: grad of <grad f(x), v> is H v.
  auto gv = [&](const Array& a) { return jnp::sum(jx::grad(f)(a) * v); };
  EXPECT_NO_THROW(expect_close(jx::grad(gv)(x), f32(kHvp, {4}), kAtol, kRtol, "hvp (rev-rev)"));
  // Forward over reverse gives the same H v.
  auto [g2, hv] = jx::jvp(jx::grad(f), std::make_tuple(x), std::make_tuple(v));
  EXPECT_NO_THROW(expect_close(hv, f32(kHvp, {4}), kAtol, kRtol, "hvp (fwd-rev)"));
}

}  // namespace
