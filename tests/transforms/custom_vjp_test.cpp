// jx::custom_vjp: values hand-derived (and from the JAX docs' clip_gradient example).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "jx/jx.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;

Array f32(float v) { return jnp::array<float>({v}).reshape({}); }
Array f64(double v) { return jnp::array<double>({v}).reshape({}); }

// JAX docs: the identity on x whose gradient is clipped to [lo, hi]; lo and hi are saved
// as residuals and get no cotangent (None in Python, an empty Array here).
auto clip_gradient = jx::custom_vjp(
    [](const Array& lo, const Array& hi, const Array& x) { return x; },
    [](const Array& lo, const Array& hi, const Array& x) { return std::pair(x, std::pair(lo, hi)); },
    [](const std::pair<Array, Array>& res, const Array& g) {
      return std::tuple(Array(), Array(), jx::lax::clamp(res.first, g, res.second));
    });

// sin whose bwd multiplies by `scale`, so tests can tell bwd's answer from autodiff's.
// bwd is made of jx ops, so it is itself differentiable.
auto sin_with_bwd(double scale) {
  return jx::custom_vjp([](const Array& x) { return jnp::sin(x); })
      .defvjp([](const Array& x) { return std::pair(jnp::sin(x), x); },
              [scale](const Array& x, const Array& g) { return std::tuple(jnp::cos(x) * g * scale); });
}

TEST(CustomVjp, ClipGradient) {
  auto clip_sin = [](const Array& x) { return jnp::sin(clip_gradient(f32(-0.75f), f32(0.75f), x)); };
  EXPECT_NEAR(clip_sin(f32(2.0f)).item<float>(), std::sin(2.0f), 1e-7);
  Array xs = jnp::array<float>({0.0f, 2.0f, 3.0f, 5.0f});
  std::vector<float> g = jx::vmap(jx::grad(clip_sin))(xs).to_vector<float>();
  std::vector<float> want;
  for (float x : {0.0f, 2.0f, 3.0f, 5.0f}) want.push_back(std::clamp(std::cos(x), -0.75f, 0.75f));
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(g[i], want[i], 1e-6) << i;
  EXPECT_EQ(g[0], 0.75f);   // cos 0 = 1, clipped
  EXPECT_EQ(g[2], -0.75f);  // cos 3 = -0.99, clipped
}

TEST(CustomVjp, BwdIsWhatGetsUsed) {
  auto f = sin_with_bwd(3.0);
  EXPECT_NEAR(f(f64(0.5)).item<double>(), std::sin(0.5), 1e-14);  // libmvec vs scalar libm: a few ulp
  EXPECT_NEAR(jx::grad(f)(f64(0.5)).item<double>(), 3 * std::cos(0.5), 1e-14);  // libmvec vs scalar libm: a few ulp
  // Inside a larger function: d/dx sum(w * f(x)) = w * 3 cos x.
  Array w = jnp::array<double>({1.0, -2.0});
  Array x = jnp::array<double>({0.25, 1.0});
  std::vector<double> g = jx::grad([&](const Array& a) { return jnp::sum(w * f(a)); })(x).to_vector<double>();
  EXPECT_NEAR(g[0], 1.0 * 3 * std::cos(0.25), 1e-14);  // libmvec vs scalar libm: a few ulp
  EXPECT_NEAR(g[1], -2.0 * 3 * std::cos(1.0), 1e-14);  // libmvec vs scalar libm: a few ulp
  // vjp with an explicit cotangent.
  auto [y, f_vjp] = jx::vjp(f, f64(0.5));
  EXPECT_NEAR(std::get<0>(f_vjp(f64(2.0))).item<double>(), 6 * std::cos(0.5), 1e-14);  // libmvec vs scalar libm: a few ulp
}

TEST(CustomVjp, GradOfGradDifferentiatesBwd) {
  auto f = sin_with_bwd(1.0);
  double x = 0.9;
  EXPECT_NEAR(jx::grad(jx::grad(f))(f64(x)).item<double>(), -std::sin(x), 1e-14);  // libmvec vs scalar libm: a few ulp
  EXPECT_NEAR(jx::grad(jx::grad(jx::grad(f)))(f64(x)).item<double>(), -std::cos(x), 1e-14);  // libmvec vs scalar libm: a few ulp
  // Forward over reverse: jacfwd of the gradient (jvp of bwd, which is ordinary jx ops).
  EXPECT_NEAR(jx::jacfwd(jx::grad(f))(f64(x)).item<double>(), -std::sin(x), 1e-14);  // libmvec vs scalar libm: a few ulp
}

TEST(CustomVjp, VmapOfTheFunctionAndOfItsGrad) {
  auto f = sin_with_bwd(2.0);
  Array xs = jnp::array<double>({0.1, 0.2, 0.3});
  std::vector<double> v = jx::vmap(f)(xs).to_vector<double>();
  std::vector<double> dv = jx::vmap(jx::grad(f))(xs).to_vector<double>();
  // grad of vmap: the batched fwd runs under linearize, the batched bwd in the transpose.
  std::vector<double> gv = jx::grad([&](const Array& a) { return jnp::sum(jx::vmap(f)(a)); })(xs).to_vector<double>();
  for (size_t i = 0; i < 3; ++i) {
    double xi = 0.1 * double(i + 1);
    EXPECT_NEAR(v[i], std::sin(xi), 1e-14);  // libmvec vs scalar libm: a few ulp
    EXPECT_NEAR(dv[i], 2 * std::cos(xi), 1e-14);  // libmvec vs scalar libm: a few ulp
    EXPECT_NEAR(gv[i], 2 * std::cos(xi), 1e-14);  // libmvec vs scalar libm: a few ulp
  }
}

TEST(CustomVjp, VmapWithUnbatchedArgumentsSumsTheirCotangents) {
  // grad w.r.t. lo and hi of clip_gradient is zero; w.r.t. an unbatched scale it sums.
  auto scaled = jx::custom_vjp([](const Array& s, const Array& x) { return s * x; })
                    .defvjp([](const Array& s, const Array& x) { return std::pair(s * x, std::pair(s, x)); },
                            [](const std::pair<Array, Array>& r, const Array& g) {
                              return std::tuple(g * r.second, g * r.first);
                            });
  Array xs = jnp::array<double>({1.0, 2.0, 3.0});
  auto total = [&](const Array& s, const Array& x) {
    return jnp::sum(jx::vmap(scaled, {.in_axes = {jx::none, 0}})(s, x));
  };
  auto [gs, gx] = jx::grad<0, 1>(total)(f64(5.0), xs);
  EXPECT_EQ(gs.item<double>(), 6.0);
  EXPECT_EQ(gx.to_vector<double>(), (std::vector<double>{5.0, 5.0, 5.0}));
}

TEST(CustomVjp, ForwardModeIsAnError) {
  auto f = sin_with_bwd(1.0);
  try {
    jx::jvp(f, std::make_tuple(f64(1.0)), std::make_tuple(f64(1.0)));
    FAIL() << "expected an error";
  } catch (const jx::ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              "[custom_vjp] can't apply forward-mode autodiff (jvp) to a custom_vjp function. Use "
              "reverse mode (grad, vjp, jacrev), or define the derivative with jx::custom_jvp instead.");
  }
  auto [y, f_jvp] = jx::linearize(f, f64(1.0));
  EXPECT_THROW(f_jvp(f64(1.0)), jx::ValueError);
}

TEST(CustomVjp, ClosingOverAValueBeingDifferentiatedIsAnError) {
  auto outer = [](const Array& y) {
    auto f = jx::custom_vjp([y](const Array& x) { return x * y; })
                 .defvjp([y](const Array& x) { return std::pair(x * y, jx::None{}); },
                         [y](jx::None, const Array& g) { return std::tuple(g * y); });
    return f(f64(2.0));
  };
  try {
    jx::grad(outer)(f64(3.0));
    FAIL() << "expected an error";
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[custom_vjp] detected differentiation of a custom_vjp function with "
                                         "respect to a closed-over value"),
              std::string::npos)
        << e.what();
  }
}

TEST(CustomVjp, RuleOutputsAreChecked) {
  auto bad_bwd = jx::custom_vjp([](const Array& x) { return x; })
                     .defvjp([](const Array& x) { return std::pair(x, jx::None{}); },
                             [](jx::None, const Array& g) { return std::tuple(jnp::zeros({2}, jx::float64)); });
  try {
    jx::grad(bad_bwd)(f64(1.0));
    FAIL() << "expected an error";
  } catch (const jx::ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              "[custom_vjp] the bwd rule must produce cotangents with the shapes and dtypes of the "
              "arguments, but for argument leaf 0 it produced f64[2] where the argument is f64[]");
  }
  auto bad_fwd = jx::custom_vjp([](const Array& x) { return x; })
                     .defvjp([](const Array& x) { return std::pair(x * jnp::ones({2}, jx::float64), jx::None{}); },
                             [](jx::None, const Array& g) { return std::tuple(g); });
  try {
    jx::grad([&](const Array& x) { return jnp::sum(bad_fwd(x)); })(f64(1.0));
    FAIL() << "expected an error";
  } catch (const jx::ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              "[custom_vjp] the fwd rule's primal output must have the shapes and dtypes of the "
              "function's outputs, but leaf 0 is f64[2] where the function gives f64[]");
  }
}

TEST(CustomVjp, MakeJaxprKeepsTheCall) {
  auto f = sin_with_bwd(1.0);
  EXPECT_EQ(jx::make_jaxpr(f)(f32(1.0f)).str(),
            "{ lambda ; a:f32[]. let\n"
            "    b:f32[] = custom_vjp_call[\n"
            "      bwd=<custom_vjp bwd>\n"
            "      call_jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }\n"
            "      fwd_jaxpr_thunk=<custom_vjp fwd>\n"
            "      num_consts=0\n"
            "      symbolic_zeros=False\n"
            "    ] a\n"
            "  in (b,) }");
  // Staging a jvp is not yet an error: fwd runs and custom_lin stands for the tangent
  // map, as JAX stages it; only evaluating it forward throws.
  auto jvp_program = [&](const Array& x, const Array& t) {
    auto [y, dy] = jx::jvp(f, std::make_tuple(x), std::make_tuple(t));
    return std::make_tuple(y, dy);
  };
  EXPECT_EQ(jx::make_jaxpr(jvp_program)(f32(1.0f), f32(1.0f)).str(),
            "{ lambda ; a:f32[] b:f32[]. let\n"
            "    c:f32[] = sin a\n"
            "    d:f32[] = custom_lin[\n"
            "      bwd=<custom_vjp bwd>\n"
            "      in_zeros=(False,)\n"
            "      num_res=1\n"
            "      out_avals=(f32[],)\n"
            "      symbolic_zeros=False\n"
            "    ] a b\n"
            "  in (c, d) }");
}

}  // namespace
