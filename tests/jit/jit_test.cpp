// jx::jit: jit(f) == f over scalars, size 0, odd sizes, pytrees and static arguments;
// jit composed with grad, vmap, jvp and itself. Expected values are hand-derived.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "jx/jx.h"
#include "testing/check_grads.h"

namespace jxtest_jit {

using jx::Array;

struct Layer {
  Array w, b;
  bool relu = true;
};
JX_PYTREE(Layer, w, b, relu)

}  // namespace jxtest_jit

namespace {

namespace jnp = jx::numpy;
using jx::Array;
using jxtest_jit::Layer;

Array f32(float v) { return jnp::array<float>({v}).reshape({}); }
Array arange_f32(int64_t n) { return jnp::arange(n).astype(jx::float32) * 0.25f - 1.0f; }

void expect_same(const Array& a, const Array& b) {
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(a.weak_type(), b.weak_type());
  jx::testing::expect_close(a, b, 1e-6, 1e-6, "jit vs eager");
}

Array poly(const Array& x) { return jnp::tanh(x * 1.5f + 0.5f) * jnp::exp(-x * x) + jnp::sum(x); }

TEST(Jit, EqualsEagerOverShapes) {
  auto jf = jx::jit(poly);
  for (Array x : {f32(0.5f), arange_f32(0), arange_f32(1), arange_f32(7), arange_f32(15).reshape({3, 5}),
                  jnp::zeros({0, 3}, jx::float32)}) {
    expect_same(jf(x), poly(x));
  }
  // float64 and integers keep their dtypes.
  Array xd = jnp::arange(5).astype(jx::float64) * 0.5;
  expect_same(jf(xd), poly(xd));
  auto isq = jx::jit([](const Array& i) { return i * i + 3; });
  Array xi = jnp::arange(6);
  EXPECT_EQ(isq(xi).to_vector<int32_t>(), (std::vector<int32_t>{3, 4, 7, 12, 19, 28}));
  EXPECT_EQ(isq(xi).dtype(), jx::int32);
}

TEST(Jit, HandDerivedValues) {
  auto f = jx::jit([](const Array& x, const Array& y) { return x * y + 1.0f; });
  Array r = f(jnp::array<float>({1, 2, 3}), f32(2.0f));
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{3, 5, 7}));
}

TEST(Jit, PytreeArgumentsAndResults) {
  auto f = [](const std::map<std::string, Array>& p, const Layer& l, const Array& x) {
    Array h = jnp::matmul(x, l.w) + l.b;
    if (l.relu) h = jnp::maximum(h, 0.0f);
    return std::make_tuple(h * p.at("scale"), std::vector<Array>{h.sum(), x});
  };
  std::map<std::string, Array> p{{"scale", f32(2.0f)}};
  Layer l{jnp::array<float>({1, -1, 2, 0.5f}).reshape({2, 2}), jnp::array<float>({0.5f, -3}), true};
  Array x = jnp::array<float>({1, 2, 3, -4}).reshape({2, 2});
  auto jf = jx::jit(f);
  auto [h, rest] = jf(p, l, x);
  auto [he, reste] = f(p, l, x);
  expect_same(h, he);
  ASSERT_EQ(rest.size(), 2u);
  expect_same(rest[0], reste[0]);
  expect_same(rest[1], x);
  // x @ w = [[5, 0], [-5, -5]]; + b = [[5.5, -3], [-4.5, -8]]; relu; * 2.
  EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{11, 0, 0, 0}));
  // A static field is part of the key and of the traced program.
  l.relu = false;
  auto [h2, rest2] = jf(p, l, x);
  EXPECT_EQ(h2.to_vector<float>(), (std::vector<float>{11, -6, -9, -16}));
}

TEST(Jit, StaticArguments) {
  auto f = jx::jit([](const Array& x, int power, bool negate, const std::string& op) {
    Array y = x;
    for (int i = 1; i < power; ++i) y = y * x;
    if (op == "exp") y = jnp::exp(y);
    return negate ? -y : y;
  });
  Array x = jnp::array<float>({1, 2});
  EXPECT_EQ(f(x, 3, false, std::string("id")).to_vector<float>(), (std::vector<float>{1, 8}));
  EXPECT_EQ(f(x, 2, true, std::string("id")).to_vector<float>(), (std::vector<float>{-1, -4}));
  std::vector<float> e = f(x, 1, false, std::string("exp")).to_vector<float>();
  EXPECT_NEAR(e[1], std::exp(2.0f), 1e-5);
}

TEST(Jit, FloatingScalarArgumentsAreTracedWeakScalars) {
  // A learning-rate schedule: a new double every step, one trace and one compile.
  auto step = jx::jit([](const Array& w, const Array& g, const Array& lr) { return w - lr * g; });
  Array w = jnp::array<float>({1, 2}), g = jnp::array<float>({0.5f, 0.25f});
  jx::reset_jit_stats();
  for (int t = 0; t < 5; ++t) {
    const double lr = 0.1 / (1 + t);
    Array got = step(w, g, lr);
    EXPECT_EQ(got.dtype(), jx::float32);  // weak: w's dtype wins
    EXPECT_FLOAT_EQ(got.to_vector<float>()[0], 1.0f - float(lr) * 0.5f);
  }
  EXPECT_EQ(jx::jit_stats().traces, 1);
  EXPECT_EQ(jx::jit_stats().misses, 1);
  // Where f takes a C++ double, the value can only be static: one trace per value.
  auto scaled = jx::jit([](const Array& x, double s) { return x * s; });
  jx::reset_jit_stats();
  scaled(w, 2.0);
  scaled(w, 3.0);
  EXPECT_EQ(jx::jit_stats().traces, 2);
  // jx::static_arg makes a float static (one trace per value, baked in as a constant);
  // jx::traced makes an int a traced weak scalar (one trace for all values).
  jx::reset_jit_stats();
  EXPECT_FLOAT_EQ(step(w, g, jx::static_arg(0.5)).to_vector<float>()[0], 0.75f);
  step(w, g, jx::static_arg(0.25));
  EXPECT_EQ(jx::jit_stats().traces, 2);
  auto times = jx::jit([](const Array& x, const Array& n) { return x * n; });
  jx::reset_jit_stats();
  EXPECT_EQ(times(w, jx::traced(2)).to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ(times(w, jx::traced(3)).to_vector<float>(), (std::vector<float>{3, 6}));
  EXPECT_EQ(jx::jit_stats().traces, 1);
}

TEST(Jit, CapturedConstants) {
  Array table = jnp::array<float>({10, 20, 30});
  auto f = jx::jit([table](const Array& x) { return x + table; });
  EXPECT_EQ(f(f32(1)).to_vector<float>(), (std::vector<float>{11, 21, 31}));
}

TEST(Jit, GradOfJitAndJitOfGrad) {
  auto f = [](const Array& x) { return jnp::sum(jnp::sin(x) * x); };  // f' = cos(x) x + sin(x)
  Array x = jnp::array<float>({0.5f, 1.0f, -2.0f});
  std::vector<float> want;
  for (float v : {0.5f, 1.0f, -2.0f}) want.push_back(std::cos(v) * v + std::sin(v));
  auto g1 = jx::grad(jx::jit(f))(x);
  auto g2 = jx::jit(jx::grad(f))(x);
  jx::testing::expect_close(g1, jnp::array<float>(want), 1e-6, 1e-5, "grad(jit(f))");
  jx::testing::expect_close(g2, jnp::array<float>(want), 1e-6, 1e-5, "jit(grad(f))");
  // Second order through the pjit rules: f'' = -sin(x) x + 2 cos(x).
  auto scalar = [](const Array& s) { return jnp::sin(s) * s; };
  float s = 0.7f;
  Array h = jx::grad(jx::grad(jx::jit(scalar)))(f32(s));
  EXPECT_NEAR(h.item<float>(), -std::sin(s) * s + 2 * std::cos(s), 1e-5);
}

TEST(Jit, HessianOfJit) {
  auto f = jx::jit([](const Array& x) { return jnp::sum(x * x * x); });  // H = diag(6 x)
  Array h = jx::hessian(f)(jnp::array<float>({1, -2}));
  EXPECT_EQ(h.shape(), (jx::Shape{2, 2}));
  EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{6, 0, 0, -12}));
}

TEST(Jit, CheckGradsThroughPjit) {
  auto inner = jx::jit([](const Array& x, const Array& y) { return jnp::tanh(x) * y + jnp::exp(x * 0.5); });
  auto outer = jx::jit([inner](const Array& x, const Array& y) { return inner(x, y) * inner(y, x); });
  jx::testing::check_grads(
      [&](const std::vector<Array>& a) { return std::vector<Array>{outer(a[0], a[1])}; },
      {jx::testing::rand_f64({3}, 1), jx::testing::rand_f64({3}, 2)});
}

TEST(Jit, JvpOfJit) {
  auto f = jx::jit([](const Array& x) { return x * x * x; });
  auto [y, t] = jx::jvp(f, std::make_tuple(f32(2.0f)), std::make_tuple(f32(1.0f)));
  EXPECT_FLOAT_EQ(y.item<float>(), 8.0f);
  EXPECT_FLOAT_EQ(t.item<float>(), 12.0f);
}

TEST(Jit, VmapOfJitAndJitOfVmap) {
  auto f = [](const Array& x, const Array& w) { return jnp::sum(x * w); };
  Array xs = jnp::arange(6).astype(jx::float32).reshape({3, 2});
  Array w = jnp::array<float>({1, 10});
  auto v1 = jx::vmap(jx::jit(f), {.in_axes = {0, jx::none}})(xs, w);
  auto v2 = jx::jit(jx::vmap(f, {.in_axes = {0, jx::none}}))(xs, w);
  EXPECT_EQ(v1.to_vector<float>(), (std::vector<float>{10, 32, 54}));
  EXPECT_EQ(v2.to_vector<float>(), (std::vector<float>{10, 32, 54}));
  // Batch along axis 1 and an unbatched output.
  auto g = jx::jit([](const Array& x) { return std::make_pair(x * 2, f32(1.0f)); });
  auto [a, b] = jx::vmap(g, {.in_axes = 1, .out_axes = 0})(xs);
  EXPECT_EQ(a.shape(), (jx::Shape{2, 3}));
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 4, 8, 2, 6, 10}));
  EXPECT_EQ(b.shape(), (jx::Shape{2}));
}

TEST(Jit, GradOfVmapOfJit) {
  auto f = jx::jit([](const Array& x) { return x * x; });
  auto loss = [&](const Array& xs) { return jnp::sum(jx::vmap(f)(xs)); };
  Array g = jx::grad(loss)(jnp::array<float>({1, 2, 3}));
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{2, 4, 6}));
}

TEST(Jit, JitOfJit) {
  auto inner = jx::jit([](const Array& x) { return x + 1.0f; }, {.name = "inner"});
  auto outer = jx::jit([&](const Array& x) { return inner(x) * inner(x * 2); }, {.name = "outer"});
  Array r = outer(jnp::array<float>({1, 2}));
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{6, 15}));
  std::string jaxpr = jx::make_jaxpr(outer)(jnp::array<float>({1, 2})).str();
  EXPECT_NE(jaxpr.find("pjit["), std::string::npos) << jaxpr;
  EXPECT_NE(jaxpr.find("name=outer"), std::string::npos) << jaxpr;
  EXPECT_NE(jaxpr.find("name=inner"), std::string::npos) << jaxpr;
}

TEST(Jit, InsideScanAndCond) {
  // h_{t+1} = h_t * x_t + 1 through a jitted step; the carry after xs = (2, 3) from h0 = 1
  // is (1*2+1)*3+1 = 10, and d/dh0 = 2*3 = 6.
  auto step = jx::jit([](const Array& h, const Array& x) { return h * x + 1.0f; }, {.name = "step"});
  auto run = [&](const Array& h0) {
    auto [h, hs] = jx::lax::scan([&](const Array& c, const Array& x) {
      Array n = step(c, x);
      return std::make_pair(n, n);
    }, h0, jnp::array<float>({2, 3}));
    return h;
  };
  EXPECT_FLOAT_EQ(run(f32(1.0f)).item<float>(), 10.0f);
  EXPECT_FLOAT_EQ(jx::grad(run)(f32(1.0f)).item<float>(), 6.0f);
  EXPECT_FLOAT_EQ(jx::jit(run)(f32(1.0f)).item<float>(), 10.0f);
  auto branchy = jx::jit([&](const Array& x) {
    return jx::lax::cond(x > 0.0f, [&](const Array& v) { return step(v, v); }, [](const Array& v) { return -v; }, x);
  });
  EXPECT_FLOAT_EQ(branchy(f32(2.0f)).item<float>(), 5.0f);
  EXPECT_FLOAT_EQ(branchy(f32(-2.0f)).item<float>(), 2.0f);
  EXPECT_FLOAT_EQ(jx::grad(branchy)(f32(2.0f)).item<float>(), 4.0f);  // d(v*v+1)/dv = 2v
}

TEST(Jit, MakeJaxprShowsPjitEquation) {
  auto f = jx::jit([](const Array& x) { return jnp::sin(x); }, {.name = "f"});
  std::string s = jx::make_jaxpr([&](const Array& x) { return f(x) * 2.0f; })(jnp::array<float>({1, 2, 3})).str();
  EXPECT_NE(s.find("pjit["), std::string::npos) << s;
  EXPECT_NE(s.find("name=f"), std::string::npos) << s;
  EXPECT_NE(s.find("sin a"), std::string::npos) << s;
}

TEST(Jit, DisableJitCallsTheFunction) {
  int traced = 0;
  auto f = jx::jit([&](const Array& x) {
    ++traced;
    return x * 2.0f;
  });
  Array x = jnp::array<float>({1, 2});
  f(x);
  f(x);
  EXPECT_EQ(traced, 1);  // traced once, then the compiled program runs
  {
    jx::config::Scoped off(jx::config::disable_jit, true);
    Array r = f(x);
    f(x);
    EXPECT_TRUE(r.is_concrete());
    EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{2, 4}));
  }
  EXPECT_EQ(traced, 3);  // the function itself ran on each disabled call
  f(x);
  EXPECT_EQ(traced, 3);
}

TEST(Jit, EmptyArrayArgumentIsAnError) {
  auto f = jx::jit([](const Array& x) { return x; }, {.name = "ident"});
  try {
    f(Array());
    FAIL() << "expected a ValueError";
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[jit] argument leaf 0 of 'ident' is an empty jx::Array"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
