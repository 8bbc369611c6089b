// Control flow nested in control flow, under grad, jvp and vmap: values against the same
// program written without the outer construct (hand-unrolled), and check_grads.
#include <gtest/gtest.h>

#include <cmath>

#include "jx/jx.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::testing::check_grads;
using jx::testing::rand_f64;

Array relu_or_sin(const Array& h) {
  return lax::cond(jnp::sum(h) > 0, [](const Array& v) { return v * v; }, [](const Array& v) { return jnp::sin(v); },
                   h);
}

TEST(Nested, CondInsideScan) {
  auto f = [](const std::vector<Array>& a) {
    auto [c, ys] = lax::scan(
        [&](const Array& c, const Array& x) {
          Array h = relu_or_sin(c * a[0] + x);
          return std::make_pair(h, h * 2.0);
        },
        a[1], a[2]);
    return std::vector<Array>{c, ys};
  };
  std::vector<Array> args{rand_f64({2}, 1), rand_f64({2}, 2), rand_f64({5, 2}, 3)};
  check_grads(f, args);
  // The same program unrolled in C++.
  auto unrolled = [](const std::vector<Array>& a) {
    Array c = a[1];
    std::vector<Array> ys;
    for (int t = 0; t < 5; ++t) {
      c = relu_or_sin(c * a[0] + a[2](t));
      ys.push_back(c * 2.0);
    }
    return jnp::sum(c) + jnp::sum(jnp::stack(ys));
  };
  auto scanned = [&](const std::vector<Array>& a) {
    auto r = f(a);
    return jnp::sum(r[0]) + jnp::sum(r[1]);
  };
  auto gs = jx::grad(scanned)(args), gu = jx::grad(unrolled)(args);
  for (size_t i = 0; i < 3; ++i) jx::testing::expect_close(gs[i], gu[i], 1e-12, 1e-10, "grad");
}

TEST(Nested, ScanInsideCondAndScanInsideScan) {
  auto inner = [](const Array& w, const Array& xs) {
    return lax::scan([&](const Array& c, const Array& x) { return std::make_pair(jnp::tanh(c * w + x), c); },
                     jnp::zeros_like(w), xs)
        .first;
  };
  auto f = [&](const std::vector<Array>& a) {
    Array r = lax::cond(jnp::sum(a[0]) > 0, [&](const Array& w) { return inner(w, a[1]); },
                        [&](const Array& w) { return w * 3.0; }, a[0]);
    return std::vector<Array>{r};
  };
  check_grads(f, {jnp::abs(rand_f64({2}, 4)), rand_f64({3, 2}, 5)});
  check_grads(f, {-jnp::abs(rand_f64({2}, 4)), rand_f64({3, 2}, 5)});
  auto g = [&](const std::vector<Array>& a) {
    auto [c, ys] = lax::scan(
        [&](const Array& c, const Array& xs) { return std::make_pair(c + inner(a[0], xs), c); }, a[1], a[2]);
    return std::vector<Array>{c, ys};
  };
  check_grads(g, {rand_f64({2}, 6), rand_f64({2}, 7), rand_f64({4, 3, 2}, 8)});
}

TEST(Nested, FwdThroughWhileInsideScan) {
  auto f = [](const std::vector<Array>& a) {
    auto [c, ys] = lax::scan(
        [&](const Array& c, const Array& x) {
          using C = std::pair<Array, Array>;
          auto r = lax::while_loop([](const C& s) { return s.first < 3; },
                                   [&](const C& s) { return C(s.first + 1, jnp::sin(s.second) * x); }, C(Array(0), c));
          return std::make_pair(r.second, r.second);
        },
        a[0], a[1]);
    return std::vector<Array>{c, ys};
  };
  check_grads(f, {rand_f64({2}, 9), rand_f64({3, 2}, 10)}, {.order = 2, .fwd = true, .rev = false});
}

TEST(Nested, VmapOfGradOfScanWithCond) {
  auto loss = [](const Array& w, const Array& xs) {
    return lax::scan([&](const Array& c, const Array& x) { return std::make_pair(relu_or_sin(c * w + x), c); },
                     jnp::zeros_like(w), xs)
        .first.sum();
  };
  Array ws = rand_f64({4, 2}, 11), xss = rand_f64({4, 3, 2}, 12);
  Array g = jx::vmap(jx::grad(loss))(ws, xss);
  for (int i = 0; i < 4; ++i)
    jx::testing::expect_close(g(i), jx::grad(loss)(ws(i), xss(i)), 1e-12, 1e-10, "per-example grad");
}

}  // namespace
