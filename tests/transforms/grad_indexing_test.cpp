// Autodiff rules of the indexing family (ops/indexing.cpp): check_grads (order 2, forward
// and reverse, float64) with the index operands held constant, transposes against explicit
// matrices, hand-derived cotangents, and JAX's choices for repeated indices.
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
using Mode = lax::GatherScatterMode;
using Vec = std::vector<double>;

Array f64(const Vec& v, const Shape& s) { return jnp::array(v, s); }
Array i32(const std::vector<int32_t>& v, const Shape& s) { return jnp::array(v, s); }
Array i32(int32_t v) { return jnp::array<int32_t>({v}).reshape({}); }

void expect_jacobian(const std::function<Array(const Array&)>& f, const Array& x,
                     const Vec& expected) {
  EXPECT_EQ(jx::jacfwd(f)(x).to_vector<double>(), expected);
  EXPECT_EQ(jx::jacrev(f)(x).to_vector<double>(), expected);
}

Array vjp1(const std::function<Array(const Array&)>& f, const Array& x, const Array& ct) {
  auto [y, f_vjp] = jx::vjp(f, x);
  auto [g] = f_vjp(ct);
  return g;
}

// Rows of a [n, k] operand picked by a [m, 1] index array: out [m, k].
const lax::GatherDimensionNumbers kRows{{1}, {0}, {0}, {}, {}};
// Scalar updates into a rank-1 operand at [m, 1] indices.
const lax::ScatterDimensionNumbers kPoints{{}, {0}, {0}, {}, {}};

TEST(GradIndexing, Slice) {
  auto f = [](std::vector<int64_t> s, std::vector<int64_t> l, std::vector<int64_t> st) {
    return [=](const Arrays& a) { return Arrays{lax::slice(a[0], s, l, st)}; };
  };
  check_grads(f({1}, {4}, {}), {rand_f64({5}, 1)});
  check_grads(f({0}, {7}, {3}), {rand_f64({7}, 2)});
  check_grads(f({1, 0}, {4, 5}, {2, 1}), {rand_f64({4, 5}, 3)});
  check_grads(f({2, 1}, {2, 3}, {}), {rand_f64({3, 3}, 4)});
  check_grads(f({0, 0}, {1, 0}, {}), {rand_f64({2, 0}, 5)});
  check_grads(f({1, 1}, {2, 2}, {5, 5}), {rand_f64({2, 2}, 6)});
  Array g = vjp1([](const Array& x) { return lax::slice(x, {1}, {4}); }, rand_f64({5}, 7),
                 f64({1, 2, 3}, {3}));
  EXPECT_EQ(g.to_vector<double>(), (Vec{0, 1, 2, 3, 0}));
  // x[0:7:3] = x[0], x[3], x[6]; the stride becomes interior zero padding.
  Array g2 = vjp1([](const Array& x) { return lax::slice(x, {0}, {7}, {3}); }, rand_f64({7}, 8),
                  f64({1, 2, 3}, {3}));
  EXPECT_EQ(g2.to_vector<double>(), (Vec{1, 0, 0, 2, 0, 0, 3}));
  // limit not on the stride grid: x[1:6:2] of 7 = x[1], x[3], x[5].
  Array g3 = vjp1([](const Array& x) { return lax::slice(x, {1}, {6}, {2}); }, rand_f64({7}, 9),
                  f64({1, 2, 3}, {3}));
  EXPECT_EQ(g3.to_vector<double>(), (Vec{0, 1, 0, 2, 0, 3, 0}));
  expect_jacobian([](const Array& x) { return lax::slice(x, {1}, {3}); }, rand_f64({3}, 10),
                  {0, 1, 0, 0, 0, 1});
}

TEST(GradIndexing, DynamicSlice) {
  auto f = [](std::vector<Array> starts, std::vector<int64_t> sizes) {
    return [=](const Arrays& a) { return Arrays{lax::dynamic_slice(a[0], starts, sizes)}; };
  };
  check_grads(f({i32(1)}, {3}), {rand_f64({5}, 1)});
  check_grads(f({i32(4)}, {3}), {rand_f64({5}, 2)});  // start clamped to 2
  check_grads(f({i32(-2)}, {2}), {rand_f64({5}, 3)});  // counts from the end
  check_grads(f({i32(1), i32(0)}, {2, 3}), {rand_f64({4, 3}, 4)});
  check_grads(f({i32(0), i32(1)}, {0, 1}), {rand_f64({2, 3}, 5)});
  Array g = vjp1([](const Array& x) { return lax::dynamic_slice(x, {i32(7)}, {2}); },
                 rand_f64({4}, 6), f64({5, 6}, {2}));
  EXPECT_EQ(g.to_vector<double>(), (Vec{0, 0, 5, 6}));
  expect_jacobian([](const Array& x) { return lax::dynamic_slice(x, {i32(1)}, {1}); },
                  rand_f64({3}, 7), {0, 1, 0});
}

TEST(GradIndexing, DynamicUpdateSlice) {
  auto f = [](std::vector<Array> starts) {
    return [=](const Arrays& a) { return Arrays{lax::dynamic_update_slice(a[0], a[1], starts)}; };
  };
  check_grads(f({i32(1)}), {rand_f64({5}, 1), rand_f64({2}, 2)});
  check_grads(f({i32(9)}), {rand_f64({5}, 3), rand_f64({3}, 4)});  // clamped to 2
  check_grads(f({i32(1), i32(1)}), {rand_f64({3, 4}, 5), rand_f64({2, 1}, 6)});
  check_grads(f({i32(0)}), {rand_f64({3}, 7), rand_f64({0}, 8)});
  // Only the update, only the operand.
  Array x = rand_f64({4}, 9), u = rand_f64({2}, 10);
  check_grads([x](const Arrays& a) { return Arrays{lax::dynamic_update_slice(x, a[0], {i32(2)})}; },
              {u});
  check_grads([u](const Arrays& a) { return Arrays{lax::dynamic_update_slice(a[0], u, {i32(2)})}; },
              {x});
  auto [y, f_vjp] = jx::vjp(
      [](const Array& a, const Array& b) { return lax::dynamic_update_slice(a, b, {i32(1)}); },
      rand_f64({5}, 11), rand_f64({2}, 12));
  auto [gx, gu] = f_vjp(f64({1, 2, 3, 4, 5}, {5}));
  EXPECT_EQ(gx.to_vector<double>(), (Vec{1, 0, 0, 4, 5}));
  EXPECT_EQ(gu.to_vector<double>(), (Vec{2, 3}));
}

TEST(GradIndexing, Gather) {
  auto f = [](Array idx, lax::GatherDimensionNumbers dn, std::vector<int64_t> ss, Mode m) {
    return [=](const Arrays& a) { return Arrays{lax::gather(a[0], idx, dn, ss, m)}; };
  };
  Array rows = i32({2, 0, 2}, {3, 1});  // row 2 twice: its cotangents add up
  check_grads(f(rows, kRows, {1, 3}, Mode::promise_in_bounds), {rand_f64({5, 3}, 1)});
  check_grads(f(rows, kRows, {1, 2}, Mode::clip), {rand_f64({5, 3}, 2)});
  // A finite fill value: the default NaN fill would make the finite differences NaN.
  check_grads([](const Arrays& a) { return Arrays{lax::gather(a[0], i32({1, 9}, {2, 1}), kRows,
                                                               {1, 3}, Mode::fill_or_drop, 1.5)}; },
              {rand_f64({5, 3}, 3)});
  check_grads(f(i32({7, -3}, {2, 1}), kRows, {1, 3}, Mode::clip), {rand_f64({5, 3}, 4)});
  check_grads(f(i32({}, {0, 1}), kRows, {1, 3}, Mode::promise_in_bounds), {rand_f64({5, 3}, 5)});
  // 2-d windows at 2-d start points: out [2, 2, 2].
  lax::GatherDimensionNumbers win{{1, 2}, {}, {0, 1}, {}, {}};
  check_grads(f(i32({0, 1, 2, 0}, {2, 2}), win, {2, 2}, Mode::clip), {rand_f64({3, 4}, 6)});
  // Batching dims: out[b, j] = x[b, idx[b, j]].
  lax::GatherDimensionNumbers batched{{}, {1}, {1}, {0}, {0}};
  check_grads(f(i32({0, 2, 1, 1}, {2, 2, 1}), batched, {1, 1}, Mode::clip), {rand_f64({2, 3}, 7)});

  Array g = vjp1([rows](const Array& x) { return lax::gather(x, rows, kRows, {1, 2}); },
                 rand_f64({3, 2}, 8), f64({1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_EQ(g.to_vector<double>(), (Vec{3, 4, 0, 0, 6, 8}));
  // fill_or_drop: the out-of-bounds window is filled with 0 in the tangent (not NaN)
  // and its cotangent is dropped.
  auto fd = [](const Array& x) {
    return lax::gather(x, i32({1, 5}, {2, 1}), kRows, {1, 1}, Mode::fill_or_drop);
  };
  auto [y, t] = jx::jvp(fd, std::make_tuple(f64({1, 2, 3}, {3, 1})),
                        std::make_tuple(f64({10, 20, 30}, {3, 1})));
  EXPECT_EQ(t.to_vector<double>(), (Vec{20, 0}));
  EXPECT_EQ(vjp1(fd, f64({1, 2, 3}, {3, 1}), f64({7, 8}, {2, 1})).to_vector<double>(),
            (Vec{0, 7, 0}));
  expect_jacobian(
      [](const Array& x) {
        return lax::gather(x, i32({2, 2, 0}, {3, 1}), {{}, {0}, {0}, {}, {}}, {1}, Mode::clip);
      },
      rand_f64({3}, 9), {0, 0, 1, 0, 0, 1, 1, 0, 0});
}

TEST(GradIndexing, ScatterAdd) {
  auto f = [](Array idx, lax::ScatterDimensionNumbers dn, Mode m) {
    return [=](const Arrays& a) { return Arrays{lax::scatter_add(a[0], idx, a[1], dn, m)}; };
  };
  Array idx = i32({1, 3, 1}, {3, 1});
  check_grads(f(idx, kPoints, Mode::fill_or_drop), {rand_f64({5}, 1), rand_f64({3}, 2)});
  check_grads(f(i32({1, 8, -1}, {3, 1}), kPoints, Mode::fill_or_drop),
              {rand_f64({5}, 3), rand_f64({3}, 4)});
  check_grads(f(i32({1, 8}, {2, 1}), kPoints, Mode::clip), {rand_f64({5}, 5), rand_f64({2}, 6)});
  check_grads(f(i32({}, {0, 1}), kPoints, Mode::fill_or_drop), {rand_f64({5}, 7), rand_f64({0}, 8)});
  // Row updates: operand [4, 3], updates [2, 3].
  lax::ScatterDimensionNumbers rows{{1}, {0}, {0}, {}, {}};
  check_grads(f(i32({3, 0}, {2, 1}), rows, Mode::fill_or_drop),
              {rand_f64({4, 3}, 9), rand_f64({2, 3}, 10)});
  // Only the updates (operand constant), only the operand.
  Array x = rand_f64({5}, 11), u = rand_f64({3}, 12);
  check_grads([=](const Arrays& a) { return Arrays{lax::scatter_add(x, idx, a[0], kPoints)}; }, {u});
  check_grads([=](const Arrays& a) { return Arrays{lax::scatter_add(a[0], idx, u, kPoints)}; }, {x});
  auto [y, f_vjp] = jx::vjp(
      [idx](const Array& a, const Array& b) { return lax::scatter_add(a, idx, b, kPoints); }, x, u);
  auto [gx, gu] = f_vjp(f64({1, 2, 3, 4, 5}, {5}));
  EXPECT_EQ(gx.to_vector<double>(), (Vec{1, 2, 3, 4, 5}));
  EXPECT_EQ(gu.to_vector<double>(), (Vec{2, 4, 2}));
  expect_jacobian([](const Array& v) { return lax::scatter_add(jnp::zeros({3}, jx::float64),
                                                               i32({2, 0}, {2, 1}), v, kPoints); },
                  rand_f64({2}, 13), {0, 1, 0, 0, 1, 0});
}

TEST(GradIndexing, ScatterUniqueIndices) {
  Array idx = i32({0, 3}, {2, 1});
  auto f = [idx](const Arrays& a) {
    return Arrays{lax::scatter(a[0], idx, a[1], kPoints, Mode::fill_or_drop, false, true)};
  };
  check_grads(f, {rand_f64({5}, 1), rand_f64({2}, 2)});
  auto [y, f_vjp] = jx::vjp([&](const Array& a, const Array& b) { return f({a, b})[0]; },
                            rand_f64({5}, 3), rand_f64({2}, 4));
  auto [gx, gu] = f_vjp(f64({1, 2, 3, 4, 5}, {5}));
  EXPECT_EQ(gx.to_vector<double>(), (Vec{0, 2, 3, 0, 5}));  // overwritten entries get nothing
  EXPECT_EQ(gu.to_vector<double>(), (Vec{1, 4}));
}

TEST(GradIndexing, ScatterRepeatedIndicesForward) {
  // jax's id trick: only the update that won contributes its tangent; the operand's
  // tangent survives where nothing was written. jx's scatter lets the last update win.
  Array idx = i32({1, 1, 3}, {3, 1});
  auto f = [idx](const Array& x, const Array& u) { return lax::scatter(x, idx, u, kPoints); };
  auto [y, t] = jx::jvp(f, std::make_tuple(f64({1, 2, 3, 4}, {4}), f64({5, 6, 7}, {3})),
                        std::make_tuple(f64({10, 20, 30, 40}, {4}), f64({50, 60, 70}, {3})));
  EXPECT_EQ(y.to_vector<double>(), (Vec{1, 6, 3, 7}));
  EXPECT_EQ(t.to_vector<double>(), (Vec{10, 60, 30, 70}));
  check_grads([idx](const Arrays& a) { return Arrays{lax::scatter(a[0], idx, a[1], kPoints)}; },
              {rand_f64({4}, 1), rand_f64({3}, 2)}, {.order = 1, .rev = false});
}

TEST(GradIndexing, ScatterMulOperand) {
  // Linear in the operand for fixed updates, repeated indices included.
  Array idx = i32({1, 1, 3}, {3, 1});
  Array u = rand_f64({3}, 1, 0.5, 2.0);
  auto f = [=](const Arrays& a) { return Arrays{lax::scatter_mul(a[0], idx, u, kPoints)}; };
  check_grads(f, {rand_f64({5}, 2)});
  Array g = vjp1([=](const Array& x) { return lax::scatter_mul(x, idx, f64({2, 3, 5}, {3}), kPoints); },
                 rand_f64({5}, 3), f64({1, 1, 1, 1, 1}, {5}));
  EXPECT_EQ(g.to_vector<double>(), (Vec{1, 6, 1, 5, 1}));
}

TEST(GradIndexing, ScatterRepeatedIndicesReverse) {
  // The id trick stages selects and a scatter_add, so reverse mode and order 2 work too.
  Array idx = i32({1, 1, 3, 9}, {4, 1});
  check_grads([idx](const Arrays& a) { return Arrays{lax::scatter(a[0], idx, a[1], kPoints)}; },
              {rand_f64({5}, 1), rand_f64({4}, 2)});
  lax::ScatterDimensionNumbers rows{{1}, {0}, {0}, {}, {}};
  Array ridx = i32({2, 0, 2}, {3, 1});
  check_grads([ridx, rows](const Arrays& a) { return Arrays{lax::scatter(a[0], ridx, a[1], rows)}; },
              {rand_f64({4, 2}, 3), rand_f64({3, 2}, 4)});
  auto [y, f_vjp] = jx::vjp(
      [](const Array& a, const Array& b) { return lax::scatter(a, i32({1, 1}, {2, 1}), b, kPoints); },
      rand_f64({3}, 5), rand_f64({2}, 6));
  auto [gx, gu] = f_vjp(f64({1, 2, 3}, {3}));
  EXPECT_EQ(gx.to_vector<double>(), (Vec{1, 0, 3}));
  EXPECT_EQ(gu.to_vector<double>(), (Vec{0, 2}));  // the last update won
}

TEST(GradIndexing, ScatterMulUpdates) {
  Array idx = i32({0, 3}, {2, 1});
  check_grads([idx](const Arrays& a) {
    return Arrays{lax::scatter_mul(a[0], idx, a[1], kPoints, Mode::fill_or_drop, false, true)};
  }, {rand_f64({4}, 1), rand_f64({2}, 2)});
  // d/du (x[i] * u) = x[i].
  auto [y, f_vjp] = jx::vjp([idx](const Array& a, const Array& b) {
    return lax::scatter_mul(a, idx, b, kPoints, Mode::fill_or_drop, false, true);
  }, f64({2, 3, 4, 5}, {4}), f64({7, 11}, {2}));
  auto [gx, gu] = f_vjp(f64({1, 1, 1, 1}, {4}));
  EXPECT_EQ(gx.to_vector<double>(), (Vec{7, 1, 1, 11}));
  EXPECT_EQ(gu.to_vector<double>(), (Vec{2, 5}));
  try {
    jx::jvp([](const Array& u) { return lax::scatter_mul(f64({1, 2}, {2}), i32({0, 0}, {2, 1}), u,
                                                          kPoints); },
            std::make_tuple(f64({1, 2}, {2})), std::make_tuple(f64({1, 1}, {2})));
    FAIL() << "expected a ValueError";
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[scatter_mul] gradients with respect to the updates"),
              std::string::npos) << e.what();
  }
}

TEST(GradIndexing, ScatterMinMax) {
  Array idx = i32({1, 3, 1}, {3, 1});
  for (bool is_max : {true, false}) {
    auto f = [idx, is_max](const Arrays& a) {
      return Arrays{is_max ? lax::scatter_max(a[0], idx, a[1], kPoints)
                           : lax::scatter_min(a[0], idx, a[1], kPoints)};
    };
    // Distinct values: no ties, so the function is smooth around the point.
    check_grads(f, {f64({0.1, 0.2, 0.3, 0.4, 0.5}, {5}), f64({0.9, -0.7, 0.15}, {3})});
  }
  auto jvp_max = [](const Array& x, const Array& u, const Array& tx, const Array& tu) {
    auto f = [](const Array& a, const Array& b) {
      return lax::scatter_max(a, i32({0, 0}, {2, 1}), b, kPoints);
    };
    return std::get<1>(jx::jvp(f, std::make_tuple(x, u), std::make_tuple(tx, tu)));
  };
  Array tx = f64({10, 20}, {2}), tu = f64({30, 50}, {2});
  // Two updates tie for the max: their tangents are averaged (jax).
  EXPECT_EQ(jvp_max(f64({1, 5}, {2}), f64({3, 3}, {2}), tx, tu).to_vector<double>(), (Vec{40, 20}));
  // One update ties with the operand: (tx + tu) / 2.
  EXPECT_EQ(jvp_max(f64({3, 5}, {2}), f64({3, 1}, {2}), tx, tu).to_vector<double>(), (Vec{20, 20}));
  // The operand wins outright: its tangent passes through.
  EXPECT_EQ(jvp_max(f64({4, 5}, {2}), f64({3, 1}, {2}), tx, tu).to_vector<double>(), (Vec{10, 20}));
}

TEST(GradIndexing, ThroughNumpyIndexing) {
  // Hand-derived, x = [1, 2, 3, 4].
  Array x = jnp::array<float>({1, 2, 3, 4});
  // sum(x[1:3] * x[0:2]) = b a + c b: grad [b, a + c, b, 0].
  auto g1 = jx::grad([](const Array& v) {
    return jnp::sum(v(jx::slice(1, 3)) * v(jx::slice(0, 2)));
  })(x);
  EXPECT_EQ(g1.to_vector<float>(), (std::vector<float>{2, 4, 2, 0}));
  // sum(x.at[1].set(0) * x) = a^2 + c^2 + d^2.
  auto g2 = jx::grad([](const Array& v) { return jnp::sum(v.at(1).set(0.0f) * v); })(x);
  EXPECT_EQ(g2.to_vector<float>(), (std::vector<float>{2, 0, 6, 8}));
  // sum(x[[0, 0, 3]]^2): index 0 is read twice.
  Array idx = jnp::array<int32_t>({0, 0, 3});
  auto g3 = jx::grad([idx](const Array& v) { Array y = v(idx); return jnp::sum(y * y); })(x);
  EXPECT_EQ(g3.to_vector<float>(), (std::vector<float>{4, 0, 0, 8}));
  // x.at[[1, 1]].add(v): the added values' cotangents are gathered back.
  auto g4 = jx::grad([](const Array& u) {
    Array base = jnp::array<float>({1, 2, 3});
    Array y = base.at(jnp::array<int32_t>({1, 1})).add(u);
    return jnp::sum(y * y);
  })(jnp::array<float>({1, 2}));
  // y[1] = 2 + 1 + 2 = 5; d/du_k sum(y^2) = 2 y[1] = 10 for both.
  EXPECT_EQ(g4.to_vector<float>(), (std::vector<float>{10, 10}));
}

TEST(GradIndexing, RulesAreRegistered) {
  using jx::ops::Prim;
  for (auto p : {Prim::Slice, Prim::DynamicSlice, Prim::DynamicUpdateSlice, Prim::Gather,
                 Prim::Scatter, Prim::ScatterAdd, Prim::ScatterMul}) {
    EXPECT_NE(jx::ops::info(p).jvp, nullptr) << jx::ops::name(p);
    EXPECT_NE(jx::ops::info(p).transpose, nullptr) << jx::ops::name(p);
  }
  for (auto p : {Prim::ScatterMin, Prim::ScatterMax}) {
    EXPECT_NE(jx::ops::info(p).jvp, nullptr) << jx::ops::name(p);
    EXPECT_TRUE(jx::ops::info(p).not_linear) << jx::ops::name(p);
  }
}

}  // namespace
