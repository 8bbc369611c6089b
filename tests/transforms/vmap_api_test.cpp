// vmap's interface: in_axes/out_axes as ints, none and pytree prefixes; axis_size;
// nesting; composition with grad (per-example gradients); errors. Per-primitive batching
// rules are tested against loops in vmap_<family>_test.cpp.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "jx/jx.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;
using jx::AxisSpec;
using jx::testing::expect_close;
using jx::testing::rand_f64;

// Stacks f over index i of axis `axis` of x (the loop vmap must equal).
template <class F>
Array stack_loop(F f, const Array& x, int64_t axis, int64_t out_axis = 0) {
  std::vector<Array> outs;
  for (int64_t i = 0; i < x.shape()[size_t(axis)]; ++i) outs.push_back(f(jnp::take(x, i, axis)));
  return jnp::stack(outs, out_axis);
}

TEST(VmapApi, InAxesIntAndNegative) {
  Array x = rand_f64({3, 4}, 1);
  auto f = [](const Array& v) { return jnp::sin(v) * 2.0; };
  expect_close(jx::vmap(f)(x), stack_loop(f, x, 0), 0, 0, "in_axes 0");
  expect_close(jx::vmap(f, {.in_axes = 1})(x), stack_loop(f, x, 1), 0, 1e-15, "in_axes 1");
  expect_close(jx::vmap(f, {.in_axes = -1})(x), stack_loop(f, x, 1), 0, 1e-15, "in_axes -1");
  expect_close(jx::vmap(f, {.in_axes = 1, .out_axes = 1})(x), stack_loop(f, x, 1, 1), 0, 1e-15,
               "out_axes 1");
  expect_close(jx::vmap(f, {.in_axes = 0, .out_axes = -1})(x), stack_loop(f, x, 0, 1), 0, 1e-15,
               "out_axes -1");
}

TEST(VmapApi, NoneArgumentsBroadcast) {
  Array x = rand_f64({5, 3}, 2), y = rand_f64({3}, 3);
  auto f = [](const Array& a, const Array& b) { return a * b + 1.0; };
  Array got = jx::vmap(f, {.in_axes = {0, jx::none}})(x, y);
  expect_close(got, stack_loop([&](const Array& a) { return f(a, y); }, x, 0), 0, 0, "none");
}

TEST(VmapApi, PytreePrefixes) {
  using Params = std::map<std::string, Array>;
  Params p{{"w", rand_f64({4, 3}, 4)}, {"b", rand_f64({3}, 5)}};
  Array xs = rand_f64({6, 4}, 6);
  auto f = [](const Params& q, const Array& x) { return jnp::tanh(jnp::matmul(x, q.at("w")) + q.at("b")); };
  // Params unmapped as a whole, then per key with a dict prefix.
  Array a = jx::vmap(f, {.in_axes = {jx::none, 0}})(p, xs);
  Array b = jx::vmap(f, {.in_axes = {AxisSpec::dict({{"w", jx::none}, {"b", jx::none}}), 0}})(p, xs);
  Array loop = stack_loop([&](const Array& x) { return f(p, x); }, xs, 0);
  expect_close(a, loop, 1e-12, 1e-12, "params none");
  expect_close(b, loop, 1e-12, 1e-12, "params dict prefix");
  // A mapped bias: each example uses its own row of bs.
  Params pb{{"w", p.at("w")}, {"b", rand_f64({6, 3}, 7)}};
  Array c = jx::vmap(f, {.in_axes = {AxisSpec::dict({{"w", jx::none}, {"b", 0}}), 0}})(pb, xs);
  std::vector<Array> rows;
  for (int64_t i = 0; i < 6; ++i)
    rows.push_back(f(Params{{"w", p.at("w")}, {"b", jnp::take(pb.at("b"), i, 0)}}, jnp::take(xs, i, 0)));
  expect_close(c, jnp::stack(rows, 0), 1e-12, 1e-12, "mapped bias");
}

TEST(VmapApi, TupleOutputsWithOutAxes) {
  Array x = rand_f64({2, 3}, 8);
  auto f = [](const Array& v) { return std::make_tuple(v * 2.0, jnp::sum(v)); };
  auto [a, s] = jx::vmap(f, {.in_axes = 1, .out_axes = {1, 0}})(x);
  expect_close(a, x * 2.0, 0, 0, "tuple first (out_axes 1 restores the layout)");
  expect_close(s, jnp::sum(x, 0), 0, 0, "tuple second");
}

TEST(VmapApi, UnbatchedOutputIsBroadcastOrKeptWithNone) {
  Array x = rand_f64({4}, 9), c = rand_f64({2}, 10);
  auto f = [&](const Array& v) { return std::make_pair(v * 3.0, c * 2.0); };
  auto [a, b] = jx::vmap(f)(x);
  EXPECT_EQ(b.shape(), (jx::Shape{4, 2}));  // broadcast along the batch
  expect_close(b, jnp::broadcast_to(c * 2.0, {4, 2}), 0, 0, "broadcast");
  auto [a2, b2] = jx::vmap(f, {.out_axes = {0, jx::none}})(x);
  EXPECT_EQ(b2.shape(), (jx::Shape{2}));
  expect_close(a2, x * 3.0, 0, 0, "first");
}

TEST(VmapApi, AxisSizeWithNoMappedArgument) {
  Array c = rand_f64({3}, 11);
  Array out = jx::vmap([](const Array& v) { return v + 1.0; }, {.in_axes = jx::none, .axis_size = 5})(c);
  EXPECT_EQ(out.shape(), (jx::Shape{5, 3}));
  expect_close(out, jnp::broadcast_to(c + 1.0, {5, 3}), 0, 0, "axis_size");
}

TEST(VmapApi, Nested) {
  Array x = rand_f64({3, 4, 2}, 12);
  auto f = [](const Array& v) { return jnp::exp(v) - v; };
  Array got = jx::vmap(jx::vmap(f, {.in_axes = 1}), {.in_axes = 0})(x);
  // Outer maps axis 0 ([4,2] slices), inner axis 1 of those: [3, 2, 4].
  expect_close(got, jnp::transpose(f(x), {0, 2, 1}), 0, 1e-15, "nested in_axes 1 then 0");
  // Outer over axis 2, inner over axis 0 of the slices: result [2, 3, 4].
  Array g2 = jx::vmap(jx::vmap(f), {.in_axes = 2})(x);
  expect_close(g2, jnp::transpose(f(x), {2, 0, 1}), 0, 1e-15, "nested transpose");
}

TEST(VmapApi, SizeZeroAndOneBatches) {
  auto f = [](const Array& v) { return v * v; };
  Array z = rand_f64({0, 3}, 13);
  EXPECT_EQ(jx::vmap(f)(z).shape(), (jx::Shape{0, 3}));
  Array one = rand_f64({1, 3}, 14);
  expect_close(jx::vmap(f)(one), one * one, 0, 0, "size 1");
}

TEST(VmapApi, PerExampleGradientsEqualALoopOfGrads) {
  // The tutorial's per-example gradients: vmap(grad(loss), in_axes=(none, 0, 0)).
  using Params = std::map<std::string, Array>;
  Params p{{"w", rand_f64({5, 3}, 15)}, {"b", rand_f64({3}, 16)}};
  Array xs = rand_f64({4, 5}, 17), ys = rand_f64({4, 3}, 18);
  auto loss = [](const Params& q, const Array& x, const Array& y) {
    Array pred = jnp::tanh(jnp::matmul(x, q.at("w")) + q.at("b"));
    return jnp::sum((pred - y) * (pred - y));
  };
  Params per = jx::vmap(jx::grad(loss), {.in_axes = {jx::none, 0, 0}})(p, xs, ys);
  ASSERT_EQ(per.at("w").shape(), (jx::Shape{4, 5, 3}));
  for (int64_t i = 0; i < 4; ++i) {
    Params g = jx::grad(loss)(p, jnp::take(xs, i, 0), jnp::take(ys, i, 0));
    expect_close(jnp::take(per.at("w"), i, 0), g.at("w"), 1e-12, 1e-12, "w");
    expect_close(jnp::take(per.at("b"), i, 0), g.at("b"), 1e-12, 1e-12, "b");
  }
}

TEST(VmapApi, GradOfVmapEqualsSumOfGrads) {
  Array xs = rand_f64({4, 3}, 19), w = rand_f64({3}, 20);
  auto f = [](const Array& wv, const Array& x) { return jnp::sum(jnp::sin(x * wv)); };
  auto total = [&](const Array& wv) { return jnp::sum(jx::vmap(f, {.in_axes = {jx::none, 0}})(wv, xs)); };
  Array g = jx::grad(total)(w);
  Array want = jnp::zeros_like(w);
  for (int64_t i = 0; i < 4; ++i) want = want + jx::grad(f)(w, jnp::take(xs, i, 0));
  expect_close(g, want, 1e-12, 1e-12, "grad of vmap");
}

TEST(VmapApi, JvpOfVmapAndVmapOfJvp) {
  Array xs = rand_f64({3, 2}, 21), ts = rand_f64({3, 2}, 22);
  auto f = [](const Array& x) { return jnp::sin(x) * x; };
  auto [p1, t1] = jx::jvp(jx::vmap(f), std::make_tuple(xs), std::make_tuple(ts));
  auto per = jx::vmap([&](const Array& x, const Array& t) {
    auto [p, tt] = jx::jvp(f, std::make_tuple(x), std::make_tuple(t));
    return tt;
  })(xs, ts);
  expect_close(t1, per, 1e-12, 1e-12, "jvp of vmap vs vmap of jvp");
  expect_close(t1, (jnp::cos(xs) * xs + jnp::sin(xs)) * ts, 1e-12, 1e-12, "by hand");
}

TEST(VmapApi, Errors) {
  Array x = rand_f64({3, 2}, 23), y = rand_f64({4, 2}, 24);
  auto f = [](const Array& a, const Array& b) { return a + b; };
  try {
    jx::vmap(f)(x, y);
    FAIL() << "no error";
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[vmap] got inconsistent sizes"), std::string::npos) << e.what();
  }
  EXPECT_THROW(jx::vmap(f, {.in_axes = {0}})(x, x), jx::ValueError);      // entries != args
  EXPECT_THROW(jx::vmap(f, {.in_axes = 2})(x, x), jx::IndexError);        // axis out of range
  EXPECT_THROW(jx::vmap(f, {.in_axes = jx::none})(x, x), jx::ValueError);  // no size
  auto g = [](const Array& a) { return a * 2.0; };
  try {
    jx::vmap(g, {.out_axes = jx::none})(x);
    FAIL() << "no error";
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("out_axes none"), std::string::npos) << e.what();
  }
  using Params = std::map<std::string, Array>;
  Params p{{"w", x}};
  auto h = [](const Params& q) { return q.at("w"); };
  EXPECT_THROW(jx::vmap(h, {.in_axes = {AxisSpec::dict({{"v", 0}})}})(p), jx::ValueError);
}

TEST(VmapApi, JaxprShowsNoNeedlessTransposes) {
  Array x = rand_f64({3, 4}, 25), y = rand_f64({4}, 26);
  auto f = [](const Array& a, const Array& b) { return jx::lax::mul(jx::lax::sin(a), b); };
  std::string s = jx::make_jaxpr(jx::vmap(f, {.in_axes = {0, jx::none}}))(x, y).str();
  EXPECT_EQ(s.find("transpose"), std::string::npos) << s;
}

}  // namespace
