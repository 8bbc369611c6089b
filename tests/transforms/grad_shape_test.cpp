// Autodiff rules of the shape family (ops/shape.cpp): check_grads (order 2, forward and
// reverse, float64) over every differentiable primitive, transposes against explicit
// matrices, and hand-derived cotangents.
#include <gtest/gtest.h>

#include <vector>

#include "jx/jx.h"
#include "jx/transforms.h"
#include "ops/primitive.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::Shape;
using jx::testing::check_grads;
using jx::testing::rand_f64;
using Arrays = std::vector<Array>;

Array f64(const std::vector<double>& v, const Shape& s) { return jnp::array(v, s); }

// The Jacobian of a linear f: R^n -> R^m two ways (jvp of basis vectors, transpose of
// basis cotangents) must agree with each other and with `expected` (m x n, row-major).
void expect_jacobian(const std::function<Array(const Array&)>& f, const Array& x,
                     const std::vector<double>& expected) {
  Array jf = jx::jacfwd(f)(x);
  Array jr = jx::jacrev(f)(x);
  EXPECT_EQ(jf.to_vector<double>(), expected);
  EXPECT_EQ(jr.to_vector<double>(), expected);
}

// The cotangent of x for output cotangent ct.
Array vjp1(const std::function<Array(const Array&)>& f, const Array& x, const Array& ct) {
  auto [y, f_vjp] = jx::vjp(f, x);
  auto [g] = f_vjp(ct);
  return g;
}

TEST(GradShape, Reshape) {
  auto f = [](Shape s) {
    return [s](const Arrays& a) { return Arrays{lax::reshape(a[0], s)}; };
  };
  check_grads(f({3, 2}), {rand_f64({2, 3}, 1)});
  check_grads(f({6}), {rand_f64({2, 1, 3}, 2)});
  check_grads(f({}), {rand_f64({1, 1}, 3)});
  check_grads(f({0, 4}), {rand_f64({4, 0}, 4)});
  Array g = vjp1([](const Array& x) { return lax::reshape(x, {3, 2}); }, rand_f64({2, 3}, 5),
                 f64({1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_EQ(g.shape(), (Shape{2, 3}));
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(GradShape, BroadcastInDim) {
  auto f = [](Shape s, std::vector<int64_t> d) {
    return [s, d](const Arrays& a) { return Arrays{lax::broadcast_in_dim(a[0], s, d)}; };
  };
  check_grads(f({2, 3}, {1}), {rand_f64({3}, 1)});
  check_grads(f({3, 4}, {0, 1}), {rand_f64({3, 1}, 2)});
  check_grads(f({2, 2}, {}), {rand_f64({}, 3)});
  check_grads(f({2, 1, 3}, {1, 2}), {rand_f64({1, 3}, 4)});
  check_grads(f({0, 3}, {1}), {rand_f64({3}, 5)});
  check_grads(f({2, 0}, {0, 1}), {rand_f64({1, 0}, 6)});
  // [3] -> [2, 3]: each input feeds two outputs, so its cotangent is the column sum.
  Array g = vjp1([](const Array& x) { return lax::broadcast_in_dim(x, {2, 3}, {1}); },
                 rand_f64({3}, 7), f64({1, 2, 3, 10, 20, 30}, {2, 3}));
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{11, 22, 33}));
  // [2, 1] -> [2, 3]: the size-1 dim is summed and kept.
  Array g2 = vjp1([](const Array& x) { return lax::broadcast_in_dim(x, {2, 3}, {0, 1}); },
                  rand_f64({2, 1}, 8), f64({1, 2, 3, 10, 20, 30}, {2, 3}));
  EXPECT_EQ(g2.shape(), (Shape{2, 1}));
  EXPECT_EQ(g2.to_vector<double>(), (std::vector<double>{6, 60}));
  expect_jacobian([](const Array& x) { return lax::broadcast_in_dim(x, {2, 2}, {1}); },
                  rand_f64({2}, 9), {1, 0, 0, 1, 1, 0, 0, 1});
}

TEST(GradShape, Transpose) {
  auto f = [](std::vector<int64_t> perm) {
    return [perm](const Arrays& a) { return Arrays{lax::transpose(a[0], perm)}; };
  };
  check_grads(f({2, 0, 1}), {rand_f64({2, 3, 4}, 1)});
  check_grads(f({1, 0}), {rand_f64({5, 1}, 2)});
  check_grads(f({1, 0}), {rand_f64({0, 3}, 3)});
  // J of a 2x2 transpose swaps the off-diagonal entries.
  expect_jacobian([](const Array& x) { return lax::transpose(x, {1, 0}); }, rand_f64({2, 2}, 4),
                  {1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1});
  Array g = vjp1([](const Array& x) { return lax::transpose(x, {1, 2, 0}); }, rand_f64({2, 1, 3}, 5),
                 f64({1, 2, 3, 4, 5, 6}, {1, 3, 2}));
  EXPECT_EQ(g.shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{1, 3, 5, 2, 4, 6}));
}

TEST(GradShape, SqueezeAndExpandDims) {
  auto sq = [](std::vector<int64_t> d) {
    return [d](const Arrays& a) { return Arrays{lax::squeeze(a[0], d)}; };
  };
  check_grads(sq({1}), {rand_f64({2, 1, 3}, 1)});
  check_grads(sq({0, 2}), {rand_f64({1, 4, 1}, 2)});
  check_grads(sq({0}), {rand_f64({1}, 3)});
  check_grads(sq({1}), {rand_f64({0, 1}, 4)});
  check_grads([](const Arrays& a) { return Arrays{lax::expand_dims(a[0], {0, 2})}; },
              {rand_f64({3}, 5)});
  Array g = vjp1([](const Array& x) { return lax::squeeze(x, {0}); }, rand_f64({1, 2}, 6),
                 f64({7, 8}, {2}));
  EXPECT_EQ(g.shape(), (Shape{1, 2}));
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{7, 8}));
}

TEST(GradShape, Rev) {
  auto f = [](std::vector<int64_t> d) {
    return [d](const Arrays& a) { return Arrays{lax::rev(a[0], d)}; };
  };
  check_grads(f({0}), {rand_f64({5}, 1)});
  check_grads(f({0, 1}), {rand_f64({3, 4}, 2)});
  check_grads(f({1}), {rand_f64({2, 1}, 3)});
  check_grads(f({0}), {rand_f64({0, 2}, 4)});
  expect_jacobian([](const Array& x) { return lax::rev(x, {0}); }, rand_f64({3}, 5),
                  {0, 0, 1, 0, 1, 0, 1, 0, 0});
}

TEST(GradShape, Concatenate) {
  auto f = [](int64_t dim) {
    return [dim](const Arrays& a) { return Arrays{lax::concatenate(a, dim)}; };
  };
  check_grads(f(1), {rand_f64({2, 3}, 1), rand_f64({2, 1}, 2), rand_f64({2, 0}, 3)});
  check_grads(f(0), {rand_f64({1, 2}, 4), rand_f64({3, 2}, 5)});
  check_grads(f(0), {rand_f64({4}, 6), rand_f64({1}, 7), rand_f64({2}, 8)});
  // Only one operand differentiated; the other is a constant (symbolic zero tangent).
  Array c = rand_f64({2}, 9);
  check_grads([c](const Arrays& a) { return Arrays{lax::concatenate({c, a[0]}, 0)}; },
              {rand_f64({3}, 10)});
  Array g = vjp1([c](const Array& x) { return lax::concatenate({c, x, c}, 0); }, rand_f64({2}, 11),
                 f64({1, 2, 3, 4, 5, 6}, {6}));
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{3, 4}));
}

TEST(GradShape, Pad) {
  auto f = [](std::vector<lax::PadConfig> cfg) {
    return [cfg](const Arrays& a) { return Arrays{lax::pad(a[0], a[1], cfg)}; };
  };
  check_grads(f({{1, 2, 0}}), {rand_f64({3}, 1), rand_f64({}, 2)});
  check_grads(f({{1, 2, 1}, {-1, 0, 0}}), {rand_f64({3, 4}, 3), rand_f64({}, 4)});
  check_grads(f({{-1, -1, 2}, {0, 1, 0}}), {rand_f64({3, 1}, 5), rand_f64({}, 6)});
  check_grads(f({{2, 1, 0}}), {rand_f64({0}, 7), rand_f64({}, 8)});
  check_grads(f({}), {rand_f64({}, 9), rand_f64({}, 10)});
  // Only the operand, only the padding value.
  Array v = rand_f64({}, 11), x = rand_f64({2, 2}, 12);
  check_grads([v](const Arrays& a) { return Arrays{lax::pad(a[0], v, {{1, 0, 1}, {0, 1, 0}})}; },
              {x});
  check_grads([x](const Arrays& a) { return Arrays{lax::pad(x, a[0], {{1, 0, 1}, {0, 1, 0}})}; },
              {v});
  // pad([a, b], v, lo=1, hi=1, interior=1) = [v, a, v, b, v]: ct [1..5] gives
  // d/dx = [2, 4] and d/dv = 1 + 3 + 5 = 9.
  auto [y, f_vjp] = jx::vjp(
      [](const Array& a, const Array& b) { return lax::pad(a, b, {{1, 1, 1}}); },
      rand_f64({2}, 13), rand_f64({}, 14));
  auto [gx, gv] = f_vjp(f64({1, 2, 3, 4, 5}, {5}));
  EXPECT_EQ(gx.to_vector<double>(), (std::vector<double>{2, 4}));
  EXPECT_EQ(gv.shape(), Shape{});
  EXPECT_EQ(gv.item<double>(), 9.0);
  // Negative lo crops: pad([a, b, c], lo=-1, hi=1) = [b, c, v].
  auto [y2, f_vjp2] = jx::vjp(
      [](const Array& a, const Array& b) { return lax::pad(a, b, {{-1, 1, 0}}); },
      rand_f64({3}, 15), rand_f64({}, 16));
  auto [gx2, gv2] = f_vjp2(f64({1, 2, 3}, {3}));
  EXPECT_EQ(gx2.to_vector<double>(), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(gv2.item<double>(), 3.0);
}

TEST(GradShape, Composite) {
  // A chain of shape ops, as a model's flatten / transpose / broadcast would use them.
  auto f = [](const Arrays& a) {
    Array t = lax::transpose(lax::reshape(a[0], {3, 2}), {1, 0});
    Array b = lax::broadcast_in_dim(a[1], {2, 3}, {0, 1});
    return Arrays{lax::concatenate({t, b, lax::rev(t, {1})}, 0)};
  };
  check_grads(f, {rand_f64({6}, 1), rand_f64({2, 1}, 2)});
}

TEST(GradShape, RulesAreRegistered) {
  for (auto p : {jx::ops::Prim::Reshape, jx::ops::Prim::BroadcastInDim, jx::ops::Prim::Transpose,
                 jx::ops::Prim::Squeeze, jx::ops::Prim::Rev, jx::ops::Prim::Concatenate,
                 jx::ops::Prim::Pad}) {
    EXPECT_NE(jx::ops::info(p).jvp, nullptr) << jx::ops::name(p);
    EXPECT_NE(jx::ops::info(p).transpose, nullptr) << jx::ops::name(p);
  }
  EXPECT_TRUE(jx::ops::info(jx::ops::Prim::Iota).zero_tangent);
  EXPECT_TRUE(jx::ops::info(jx::ops::Prim::Iota).not_linear);
}

}  // namespace
