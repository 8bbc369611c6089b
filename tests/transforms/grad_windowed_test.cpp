// Autodiff rules of the windowed family: check_grads (order 2, forward and reverse,
// float64) through max pooling, min pooling and window sums (strides, padding, base and
// window dilation, NHWC and NCHW, 1-D/2-D/3-D), through select_and_scatter_add and
// select_and_gather_add in their linear operand, and jvp against vjp on a max pool.
// Operands have well-separated values, so no window has a tie within the finite
// differences' step.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "jx/jx.h"
#include "jx/transforms.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::Shape;
using jx::testing::check_grads;
using Pairs = lax::Padding::Pairs;
using I = std::vector<int64_t>;

// A permutation of 0.1 * (0 .. n-1), shifted to be centred on 0: distinct by 0.1.
Array distinct(const Shape& shape, unsigned seed) {
  std::vector<double> v(size_t(shape.numel()));
  std::iota(v.begin(), v.end(), 0.0);
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  for (auto& e : v) e = 0.1 * (e - double(v.size()) / 2);
  return jnp::array<double>(v, shape);
}

void grads(const std::string& what, const std::function<Array(const Array&)>& f, const Array& x) {
  auto fn = [f](const std::vector<Array>& a) { return std::vector<Array>{f(a[0])}; };
  try {
    check_grads(fn, {x}, {.order = 2});
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
  }
}

struct Win {
  std::string name;
  Shape shape;
  I w, s;
  Pairs p;
  I base, wdil;
};

const std::vector<Win> kWindows = {
    {"nhwc 2x2/2", {2, 4, 4, 3}, {1, 2, 2, 1}, {1, 2, 2, 1}, {{0, 0}, {0, 0}, {0, 0}, {0, 0}}, {}, {}},
    {"nhwc 3x3/2 pad 1", {1, 5, 5, 2}, {1, 3, 3, 1}, {1, 2, 2, 1}, {{0, 0}, {1, 1}, {1, 1}, {0, 0}}, {}, {}},
    {"nchw 2x3/1 asym pad", {2, 2, 4, 5}, {1, 1, 2, 3}, {1, 1, 1, 1}, {{0, 0}, {0, 0}, {1, 0}, {0, 2}}, {}, {}},
    {"1-d 3/2", {7}, {3}, {2}, {{1, 1}}, {}, {}},
    {"3-d", {3, 4, 3}, {2, 2, 2}, {1, 2, 1}, {{0, 1}, {1, 0}, {0, 0}}, {}, {}},
    {"base dilation", {3, 4}, {2, 3}, {1, 2}, {{1, 0}, {0, 1}}, {2, 1}, {}},
};

TEST(GradWindowed, MaxAndMinPooling) {
  unsigned seed = 1;
  for (const Win& c : kWindows) {
    Array x = distinct(c.shape, seed++);
    grads("max " + c.name, [&](const Array& a) { return lax::reduce_window_max(a, c.w, c.s, c.p, c.base, c.wdil); }, x);
    grads("min " + c.name, [&](const Array& a) { return lax::reduce_window_min(a, c.w, c.s, c.p, c.base, c.wdil); }, x);
    // A non-zero second derivative through the pooling.
    grads("max^2 " + c.name, [&](const Array& a) {
      Array m = lax::reduce_window_max(a, c.w, c.s, c.p, c.base, c.wdil);
      return jnp::sum(m * m * jnp::sin(m));
    }, x);
  }
}

TEST(GradWindowed, WindowSums) {
  unsigned seed = 10;
  std::vector<Win> cases = kWindows;
  cases.push_back({"window dilation", {2, 9, 3}, {1, 3, 2}, {1, 2, 1}, {{0, 0}, {1, 2}, {1, 0}}, {}, {1, 2, 2}});
  cases.push_back({"both dilations", {4, 5}, {2, 2}, {2, 1}, {{2, 1}, {0, 3}}, {3, 2}, {2, 3}});
  for (const Win& c : cases) {
    Array x = jx::testing::rand_f64(c.shape, seed++);
    grads("sum " + c.name, [&](const Array& a) { return lax::reduce_window_sum(a, c.w, c.s, c.p, c.base, c.wdil); }, x);
    grads("avg^2 " + c.name, [&](const Array& a) {
      Array s = lax::reduce_window_sum(a, c.w, c.s, c.p, c.base, c.wdil);
      return jnp::sum(s * s) / double(s.size());
    }, x);
  }
}

TEST(GradWindowed, SelectAndScatterAndGatherInTheirLinearOperand) {
  const I w{1, 3, 2}, s{1, 2, 1};
  const Pairs p{{0, 0}, {1, 1}, {0, 1}};
  Array x = distinct({2, 5, 4}, 7);
  Array src = jx::testing::rand_f64({2, 3, 4}, 8);
  for (auto sel : {lax::WindowSelect::ge, lax::WindowSelect::le}) {
    grads("select_and_scatter_add", [&](const Array& a) { return lax::select_and_scatter_add(a, x, sel, w, s, p); }, src);
    grads("select_and_gather_add", [&](const Array& t) { return lax::select_and_gather_add(t, x, sel, w, s, p); },
          jx::testing::rand_f64({2, 5, 4}, 9));
    grads("select_and_gather_add, base dilation", [&](const Array& t) {
      return lax::select_and_gather_add(t, x, sel, w, s, p, {1, 2, 1});
    }, jx::testing::rand_f64({2, 5, 4}, 10));
  }
}

TEST(GradWindowed, GradOfMaxPoolRoutesTheCotangentToTheArgmax) {
  Array x = jnp::array<double>({1, 5, 2, 0, 3, 3, 4, 7}, {1, 2, 4, 1});
  auto f = [](const Array& a) {
    return jnp::sum(lax::reduce_window_max(a, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID") * jnp::array<double>({10, 100}, {1, 1, 2, 1}));
  };
  EXPECT_EQ(jx::grad(f)(x).to_vector<double>(), (std::vector<double>{0, 10, 0, 0, 0, 0, 0, 100}));
  // Ties: the first maximum in window order takes it all (XLA's select).
  Array t = jnp::array<double>({2, 2, 2, 2}, {1, 2, 2, 1});
  auto g = [](const Array& a) { return jnp::sum(lax::reduce_window_max(a, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID")); };
  EXPECT_EQ(jx::grad(g)(t).to_vector<double>(), (std::vector<double>{1, 0, 0, 0}));
}

}  // namespace
