// jx::checkpoint (remat): same values and gradients as without it, fewer saved residuals.
#include <gtest/gtest.h>

#include <cmath>

#include "jx/jx.h"
#include "testing/check_grads.h"
#include "testing/jaxpr_text.h"
#include "transforms/ad.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;

Array f32(float v) { return jnp::array<float>({v}).reshape({}); }
Array f64(double v) { return jnp::array<double>({v}).reshape({}); }

// Bytes of the residuals a linearization keeps: the constants of its linear jaxpr.
size_t residual_bytes(const jx::tr::FlatFn& f, const std::vector<Array>& args) {
  jx::tr::Linearized lin = jx::tr::linearize_flat(f, args);
  size_t bytes = 0;
  for (const Array& c : lin.linear.consts) bytes += size_t(c.size()) * jx::itemsize(c.dtype());
  return bytes;
}

Array sin_chain(const Array& x) {
  Array y = x;
  for (int i = 0; i < 6; ++i) y = jnp::sin(y);
  return y;
}

TEST(Checkpoint, JaxDocstringExample) {
  // jax.checkpoint's docstring: value_and_grad(checkpoint(g))(2.0) with g = sin . sin.
  auto g = jx::checkpoint([](const Array& x) { return jnp::sin(jnp::sin(x)); });
  auto [v, d] = jx::value_and_grad(g)(f32(2.0f));
  EXPECT_NEAR(v.item<float>(), 0.78907233f, 1e-6);
  EXPECT_NEAR(d.item<float>(), -0.2556391f, 1e-6);
  EXPECT_NEAR(d.item<float>(), std::cos(std::sin(2.0)) * std::cos(2.0), 1e-6);
}

TEST(Checkpoint, LinearizationKeepsOnlyTheInputs) {
  Array x = jnp::linspace(0.0, 1.0, 1000);  // f32[1000]: 4000 bytes
  auto plain = [](const std::vector<Array>& a) { return std::vector<Array>{sin_chain(a[0])}; };
  auto remat = [](const std::vector<Array>& a) { return std::vector<Array>{jx::checkpoint(sin_chain)(a[0])}; };
  auto saving = [](const std::vector<Array>& a) {
    return std::vector<Array>{jx::checkpoint(sin_chain, {.policy = jx::checkpoint_policies::everything_saveable})(a[0])};
  };
  // Without checkpoint: cos of each of the six sin inputs. With it: x alone.
  EXPECT_EQ(residual_bytes(plain, {x}), 6 * 4000u);
  EXPECT_EQ(residual_bytes(remat, {x}), 4000u);
  EXPECT_EQ(residual_bytes(saving, {x}), 6 * 4000u);
  // Same gradients all three ways.
  auto loss = [](auto f) { return [f](const Array& a) { return jnp::sum(f({a})[0]); }; };
  Array g0 = jx::grad(loss(plain))(x), g1 = jx::grad(loss(remat))(x), g2 = jx::grad(loss(saving))(x);
  EXPECT_EQ(g0.to_vector<float>(), g1.to_vector<float>());
  EXPECT_EQ(g0.to_vector<float>(), g2.to_vector<float>());
}

TEST(Checkpoint, DotsSaveablePolicy) {
  // f(W, x) = tanh(W tanh(W x)): dots_saveable keeps the inputs and both matrix products;
  // the tanh values are recomputed from them.
  Array w = jx::testing::rand_f64({8, 8}, 1), x = jx::testing::rand_f64({8}, 2);
  auto body = [](const Array& a, const Array& b) { return jnp::tanh(jnp::matmul(a, jnp::tanh(jnp::matmul(a, b)))); };
  auto with = [&](jx::CheckpointPolicy p) {
    return [p, body](const std::vector<Array>& a) {
      return std::vector<Array>{jx::checkpoint(body, {.policy = p})(a[0], a[1])};
    };
  };
  size_t inputs = (64 + 8) * 8;
  EXPECT_EQ(residual_bytes(with(jx::checkpoint_policies::nothing_saveable), {w, x}), inputs);
  EXPECT_EQ(residual_bytes(with(jx::checkpoint_policies::dots_saveable), {w, x}), inputs + 2 * 8 * 8);
  EXPECT_EQ(residual_bytes(with(jx::checkpoint_policies::dots_with_no_batch_dims_saveable), {w, x}),
            inputs + 2 * 8 * 8);
  for (auto p : {jx::checkpoint_policies::nothing_saveable, jx::checkpoint_policies::dots_saveable,
                 jx::checkpoint_policies::everything_saveable}) {
    auto f = with(p);
    jx::testing::check_grads(f, {w, x});
    auto [gw, gx] = jx::grad<0, 1>([&](const Array& a, const Array& b) { return jnp::sum(f({a, b})[0]); })(w, x);
    auto [hw, hx] = jx::grad<0, 1>([&](const Array& a, const Array& b) { return jnp::sum(body(a, b)); })(w, x);
    jx::testing::expect_close(gw, hw, 1e-14, 1e-14, "d/dW");
    jx::testing::expect_close(gx, hx, 1e-14, 1e-14, "d/dx");
  }
}

TEST(Checkpoint, ForwardModeHigherOrderAndVmap) {
  auto g = jx::checkpoint([](const Array& x) { return jnp::sin(x) * jnp::cos(x); });  // sin(2x)/2
  double x = 0.4;
  auto [y, t] = jx::jvp(g, std::make_tuple(f64(x)), std::make_tuple(f64(3.0)));
  EXPECT_NEAR(y.item<double>(), std::sin(2 * x) / 2, 1e-15);
  EXPECT_NEAR(t.item<double>(), 3 * std::cos(2 * x), 1e-15);
  EXPECT_NEAR(jx::grad(jx::grad(g))(f64(x)).item<double>(), -2 * std::sin(2 * x), 1e-14);
  EXPECT_NEAR(jx::jacfwd(jx::grad(g))(f64(x)).item<double>(), -2 * std::sin(2 * x), 1e-14);
  Array xs = jnp::array<double>({0.1, 0.2, 0.3});
  std::vector<double> v = jx::vmap(g)(xs).to_vector<double>();
  std::vector<double> dv = jx::vmap(jx::grad(g))(xs).to_vector<double>();
  std::vector<double> gv = jx::grad([&](const Array& a) { return jnp::sum(jx::vmap(g)(a)); })(xs).to_vector<double>();
  for (size_t i = 0; i < 3; ++i) {
    double xi = 0.1 * double(i + 1);
    EXPECT_NEAR(v[i], std::sin(2 * xi) / 2, 1e-15);
    EXPECT_NEAR(dv[i], std::cos(2 * xi), 1e-15);
    EXPECT_NEAR(gv[i], std::cos(2 * xi), 1e-15);
  }
  jx::testing::check_grads([&](const std::vector<Array>& a) { return std::vector<Array>{g(a[0])}; },
                           {jx::testing::rand_f64({3}, 5)});
}

TEST(Checkpoint, NestedClosuresAndCustomVjpInside) {
  // A checkpoint inside a checkpoint, and one that closes over a differentiated value.
  auto inner = jx::checkpoint([](const Array& x) { return jnp::exp(jnp::sin(x)); });
  auto outer = jx::checkpoint([&](const Array& x) { return inner(x * x) * x; });
  auto plain = [](const Array& x) { return jnp::exp(jnp::sin(x * x)) * x; };
  Array x = jx::testing::rand_f64({4}, 9);
  auto sum_of = [](auto f) { return [f](const Array& a) { return jnp::sum(f(a)); }; };
  jx::testing::expect_close(jx::grad(sum_of(outer))(x), jx::grad(sum_of(plain))(x), 1e-14, 1e-14, "nested");
  jx::testing::check_grads([&](const std::vector<Array>& a) { return std::vector<Array>{outer(a[0])}; }, {x});

  auto closes_over = [](const Array& y) {
    return jnp::sum(jx::checkpoint([&y](const Array& a) { return jnp::sin(a * y); })(f64(2.0)));
  };
  EXPECT_NEAR(jx::grad(closes_over)(f64(0.3)).item<double>(), 2 * std::cos(0.6), 1e-15);

  // A custom_vjp function inside a checkpoint: its fwd runs in the known half, its
  // custom_lin is transposed inside the recomputation.
  auto scaled_sin = jx::custom_vjp([](const Array& a) { return jnp::sin(a); })
                        .defvjp([](const Array& a) { return std::pair(jnp::sin(a), a); },
                                [](const Array& a, const Array& g) { return std::tuple(jnp::cos(a) * g * 2.0); });
  auto c = jx::checkpoint([&](const Array& a) { return scaled_sin(a * 3.0); });
  EXPECT_NEAR(jx::grad(c)(f64(0.2)).item<double>(), 3 * 2 * std::cos(0.6), 1e-15);
  std::vector<double> vg = jx::vmap(jx::grad(c))(jnp::array<double>({0.1, 0.2})).to_vector<double>();
  EXPECT_NEAR(vg[0], 6 * std::cos(0.3), 1e-15);
  EXPECT_NEAR(vg[1], 6 * std::cos(0.6), 1e-15);

  // A custom_jvp function inside a checkpoint: its rule is used in the jvp jaxpr.
  auto softplus = jx::custom_jvp([](const Array& a) { return jnp::log(1.0 + jnp::exp(a)); })
                      .defjvp([](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                        Array a = std::get<0>(p);
                        return std::pair(jnp::log(1.0 + jnp::exp(a)), (1.0 - 1.0 / (1.0 + jnp::exp(a))) * std::get<0>(t));
                      });
  EXPECT_EQ(jx::grad(jx::checkpoint(softplus))(f32(100.0f)).item<float>(), 1.0f);
}

TEST(Checkpoint, MakeJaxprPrintsTheCheckpointEquation) {
  auto g = jx::checkpoint([](const Array& x) { return jnp::sin(x); });
  // As JAX prints it (params sorted; JAX breaks them over lines and continues the outer
  // jaxpr's variable names inside the sub-jaxpr).
  EXPECT_EQ(jx::make_jaxpr(g)(f32(1.0f)).str(),
            "{ lambda ; a:f32[]. let\n"
            "    b:f32[] = checkpoint[\n"
            "      differentiated=False\n"
            "      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }\n"
            "      policy=None\n"
            "      prevent_cse=True\n"
            "    ] a\n"
            "  in (b,) }");
  auto h = jx::checkpoint([](const Array& x) { return jnp::sin(x); },
                          {.policy = jx::checkpoint_policies::dots_saveable, .prevent_cse = false});
  std::string s = jx::testing::unbroken(jx::make_jaxpr(h)(f32(1.0f)).str());
  EXPECT_NE(s.find("policy=dots_saveable prevent_cse=False"), std::string::npos) << s;
  // Under grad, the backward pass is one checkpoint of the transposed jaxpr, which
  // recomputes cos a from the saved input a.
  std::string gj = jx::testing::unbroken(jx::make_jaxpr(jx::grad(g))(f32(1.0f)).str());
  EXPECT_NE(gj.find("checkpoint[differentiated=True"), std::string::npos) << gj;
  EXPECT_NE(gj.find("cos"), std::string::npos) << gj;
}

}  // namespace
