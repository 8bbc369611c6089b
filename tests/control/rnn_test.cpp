// A scan-based RNN (tanh cell, 64 hidden, 100 steps) in float64: its gradient through
// scan equals the gradient of the same RNN unrolled as a plain C++ loop of jnp ops, and a
// jvp through it equals central finite differences.
#include <gtest/gtest.h>

#include <cmath>

#include "jx/jx.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::testing::expect_close;
using jx::testing::rand_f64;

constexpr int64_t kHidden = 64, kIn = 8, kSteps = 100;

struct Rnn {
  Array W, U, b;  // hidden x hidden, hidden x input, hidden
};
JX_PYTREE(Rnn, W, U, b)

Array cell(const Rnn& p, const Array& h, const Array& x) {
  return jnp::tanh(jnp::matmul(p.W, h) + jnp::matmul(p.U, x) + p.b);
}

// loss = sum_t mean(h_t) + sum(h_T^2): both the final carry and every step's output count.
Array loss_scan(const Rnn& p, const Array& h0, const Array& xs) {
  auto [h, hs] = lax::scan([&](const Array& h, const Array& x) {
    Array h2 = cell(p, h, x);
    return std::make_pair(h2, jnp::mean(h2));
  }, h0, xs);
  return jnp::sum(hs) + jnp::sum(h * h);
}

Array loss_unrolled(const Rnn& p, const Array& h0, const Array& xs) {
  Array h = h0, total = jnp::zeros({}, jx::DType::Float64);
  for (int64_t t = 0; t < kSteps; ++t) {
    h = cell(p, h, xs(t));
    total = total + jnp::mean(h);
  }
  return total + jnp::sum(h * h);
}

Rnn params() {
  // Small weights keep tanh away from saturation, so gradients stay informative.
  return Rnn{rand_f64({kHidden, kHidden}, 11, -0.15, 0.15), rand_f64({kHidden, kIn}, 12, -0.3, 0.3),
             rand_f64({kHidden}, 13, -0.1, 0.1)};
}

TEST(Rnn, ScanGradientEqualsUnrolledGradient) {
  Rnn p = params();
  Array h0 = rand_f64({kHidden}, 14), xs = rand_f64({kSteps, kIn}, 15);
  EXPECT_NEAR(loss_scan(p, h0, xs).item<double>(), loss_unrolled(p, h0, xs).item<double>(), 1e-10);
  auto [gs_p, gs_h0, gs_xs] = jx::grad<0, 1, 2>(loss_scan)(p, h0, xs);
  auto [gu_p, gu_h0, gu_xs] = jx::grad<0, 1, 2>(loss_unrolled)(p, h0, xs);
  expect_close(gs_p.W, gu_p.W, 1e-12, 1e-9, "dW");
  expect_close(gs_p.U, gu_p.U, 1e-12, 1e-9, "dU");
  expect_close(gs_p.b, gu_p.b, 1e-12, 1e-9, "db");
  expect_close(gs_h0, gu_h0, 1e-12, 1e-9, "dh0");
  expect_close(gs_xs, gu_xs, 1e-12, 1e-9, "dxs");
  // The gradient is not trivially zero.
  EXPECT_GT(jnp::max(jnp::abs(gs_p.W)).item<double>(), 1e-3);
}

TEST(Rnn, JvpEqualsFiniteDifferences) {
  Rnn p = params();
  Array h0 = rand_f64({kHidden}, 16), xs = rand_f64({kSteps, kIn}, 17);
  Rnn dp{rand_f64({kHidden, kHidden}, 18), rand_f64({kHidden, kIn}, 19), rand_f64({kHidden}, 20)};
  Array dh0 = rand_f64({kHidden}, 21), dxs = rand_f64({kSteps, kIn}, 22);
  auto [y, t] = jx::jvp(loss_scan, std::make_tuple(p, h0, xs), std::make_tuple(dp, dh0, dxs));
  double eps = 1e-5;
  auto at = [&](double s) {
    Rnn q{p.W + dp.W * s, p.U + dp.U * s, p.b + dp.b * s};
    return loss_scan(q, h0 + dh0 * s, xs + dxs * s).item<double>();
  };
  double fd = (at(eps) - at(-eps)) / (2 * eps);
  EXPECT_NEAR(t.item<double>(), fd, 1e-6 * (1 + std::abs(fd)));
  EXPECT_GT(std::abs(fd), 1e-3);
  // And it agrees with the unrolled loop's jvp to rounding.
  auto [yu, tu] = jx::jvp(loss_unrolled, std::make_tuple(p, h0, xs), std::make_tuple(dp, dh0, dxs));
  EXPECT_NEAR(t.item<double>(), tu.item<double>(), 1e-9 * (1 + std::abs(tu.item<double>())));
}

}  // namespace
