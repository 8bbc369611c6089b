// jx::custom_jvp: values hand-derived (and from the JAX docs' examples).
#include <gtest/gtest.h>

#include <cmath>

#include "jx/jx.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;

Array f32(float v) { return jnp::array<float>({v}).reshape({}); }
Array f64(double v) { return jnp::array<double>({v}).reshape({}); }

// The JAX docs' example: log(1 + exp(x)) differentiated naively is inf/inf = nan at
// x = 100 in float32; the rule 1 - 1/(1 + exp(x)) gives 1.
auto log1pexp_naive = [](const Array& x) { return jnp::log(1.0 + jnp::exp(x)); };
auto log1pexp = jx::custom_jvp(log1pexp_naive).defjvp(
    [](const std::tuple<Array>& primals, const std::tuple<Array>& tangents) {
      auto [x] = primals;
      auto [x_dot] = tangents;
      Array ans = log1pexp_naive(x);
      Array ans_dot = (1.0 - 1.0 / (1.0 + jnp::exp(x))) * x_dot;
      return std::pair(ans, ans_dot);
    });

// sin with the rule cos(x) * t, written by hand; `scale` lets a test tell the rule's
// answer from what differentiating sin itself would give.
auto sin_with_rule(double scale) {
  return jx::custom_jvp([](const Array& x) { return jnp::sin(x); })
      .defjvp([scale](const std::tuple<Array>& p, const std::tuple<Array>& t) {
        Array primal_out = jnp::sin(std::get<0>(p));
        Array t_out = jnp::cos(std::get<0>(p)) * std::get<0>(t);
        return std::pair(primal_out, scale == 1.0 ? t_out : t_out * scale);
      });
}

TEST(CustomJvp, Log1pExpIsStableWhereAutodiffIsNot) {
  EXPECT_TRUE(std::isnan(jx::grad(log1pexp_naive)(f32(100.0f)).item<float>()));
  EXPECT_EQ(jx::grad(log1pexp)(f32(100.0f)).item<float>(), 1.0f);
  // Eager call runs the function: log(1 + e^3).
  EXPECT_NEAR(log1pexp(f32(3.0f)).item<float>(), std::log1p(std::exp(3.0)), 1e-6);
  // Its derivative is the logistic function.
  auto [y, t] = jx::jvp(log1pexp, std::make_tuple(f32(3.0f)), std::make_tuple(f32(2.0f)));
  EXPECT_NEAR(y.item<float>(), std::log1p(std::exp(3.0)), 1e-6);
  EXPECT_NEAR(t.item<float>(), 2.0 / (1.0 + std::exp(-3.0)), 1e-6);
  Array xs = jnp::array<float>({0.0f, 1.0f, 2.0f});
  std::vector<float> g = jx::vmap(jx::grad(log1pexp))(xs).to_vector<float>();
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(g[size_t(i)], 1.0 / (1.0 + std::exp(-double(i))), 1e-6);
}

TEST(CustomJvp, TheRuleIsWhatGetsDifferentiated) {
  auto f = sin_with_rule(3.0);
  EXPECT_NEAR(f(f64(0.5)).item<double>(), std::sin(0.5), 1e-14);  // libmvec vs scalar libm: a few ulp
  EXPECT_NEAR(jx::grad(f)(f64(0.5)).item<double>(), 3 * std::cos(0.5), 1e-14);  // libmvec vs scalar libm: a few ulp
  auto [y, t] = jx::jvp(f, std::make_tuple(f64(0.5)), std::make_tuple(f64(2.0)));
  EXPECT_NEAR(t.item<double>(), 6 * std::cos(0.5), 1e-14);  // libmvec vs scalar libm: a few ulp
  // The rule's own operations are differentiated normally: d/dx 3 cos x = -3 sin x.
  EXPECT_NEAR(jx::grad(jx::grad(f))(f64(0.5)).item<double>(), -3 * std::sin(0.5), 1e-14);  // libmvec vs scalar libm: a few ulp
}

TEST(CustomJvp, SinWithCosRuleNestedGradJvpAndVmap) {
  auto f = sin_with_rule(1.0);
  double x = 0.7;
  EXPECT_NEAR(jx::grad(f)(f64(x)).item<double>(), std::cos(x), 1e-14);  // libmvec vs scalar libm: a few ulp
  EXPECT_NEAR(jx::grad(jx::grad(f))(f64(x)).item<double>(), -std::sin(x), 1e-14);  // libmvec vs scalar libm: a few ulp
  EXPECT_NEAR(jx::grad(jx::grad(jx::grad(f)))(f64(x)).item<double>(), -std::cos(x), 1e-14);  // libmvec vs scalar libm: a few ulp
  // jvp of grad (forward over reverse) and grad of jvp (reverse over forward).
  auto [g, gt] = jx::jvp(jx::grad(f), std::make_tuple(f64(x)), std::make_tuple(f64(1.0)));
  EXPECT_NEAR(g.item<double>(), std::cos(x), 1e-14);  // libmvec vs scalar libm: a few ulp
  EXPECT_NEAR(gt.item<double>(), -std::sin(x), 1e-14);  // libmvec vs scalar libm: a few ulp
  auto tangent_of = [&](const Array& p) {
    return jx::jvp(f, std::make_tuple(p), std::make_tuple(f64(1.0))).second;
  };
  EXPECT_NEAR(jx::grad(tangent_of)(f64(x)).item<double>(), -std::sin(x), 1e-14);  // libmvec vs scalar libm: a few ulp

  Array xs = jnp::array<double>({0.1, 0.2, 0.3, 0.4});
  std::vector<double> v = jx::vmap(f)(xs).to_vector<double>();
  std::vector<double> dv = jx::vmap(jx::grad(f))(xs).to_vector<double>();
  // grad of vmap: the batched rule runs under linearize.
  std::vector<double> gv = jx::grad([&](const Array& a) { return jnp::sum(jx::vmap(f)(a)); })(xs).to_vector<double>();
  // jvp of vmap: the batched rule runs under forward mode.
  auto [vy, vt] = jx::jvp(jx::vmap(f), std::make_tuple(xs), std::make_tuple(jnp::ones_like(xs)));
  std::vector<double> vtv = vt.to_vector<double>();
  for (size_t i = 0; i < 4; ++i) {
    double xi = 0.1 * double(i + 1);
    EXPECT_NEAR(v[i], std::sin(xi), 1e-14);  // libmvec vs scalar libm: a few ulp
    EXPECT_NEAR(dv[i], std::cos(xi), 1e-14);  // libmvec vs scalar libm: a few ulp
    EXPECT_NEAR(gv[i], std::cos(xi), 1e-14);  // libmvec vs scalar libm: a few ulp
    EXPECT_NEAR(vtv[i], std::cos(xi), 1e-14);  // libmvec vs scalar libm: a few ulp
  }
}

TEST(CustomJvp, VmapWithAnUnbatchedArgument) {
  // f(x, y) = sin(x) * y with JAX's docstring rule; x batched, y not.
  auto f = jx::custom_jvp([](const Array& x, const Array& y) { return jnp::sin(x) * y; })
               .defjvp([](const std::tuple<Array, Array>& p, const std::tuple<Array, Array>& t) {
                 auto [x, y] = p;
                 auto [x_dot, y_dot] = t;
                 return std::pair(jnp::sin(x) * y, jnp::cos(x) * x_dot * y + jnp::sin(x) * y_dot);
               });
  Array xs = jnp::array<double>({0.5, 1.5});
  Array y = f64(2.0);
  auto per_x = jx::vmap(jx::grad<0, 1>(f), {.in_axes = {0, jx::none}})(xs, y);
  std::vector<double> gx = std::get<0>(per_x).to_vector<double>(), gy = std::get<1>(per_x).to_vector<double>();
  for (size_t i = 0; i < 2; ++i) {
    double xi = i == 0 ? 0.5 : 1.5;
    EXPECT_NEAR(gx[i], std::cos(xi) * 2.0, 1e-14);  // libmvec vs scalar libm: a few ulp
    EXPECT_NEAR(gy[i], std::sin(xi), 1e-14);  // libmvec vs scalar libm: a few ulp
  }
  // grad of a vmapped call w.r.t. the unbatched argument sums over the batch.
  Array gy_total = jx::grad<1>([&](const Array& a, const Array& b) {
    return jnp::sum(jx::vmap(f, {.in_axes = {0, jx::none}})(a, b));
  })(xs, y);
  EXPECT_NEAR(gy_total.item<double>(), std::sin(0.5) + std::sin(1.5), 1e-14);  // libmvec vs scalar libm: a few ulp
}

TEST(CustomJvp, ZeroTangentsReachTheRuleAsRealZeros) {
  bool saw_zero_y_dot = false;
  auto f = jx::custom_jvp([](const Array& x, const Array& y) { return x * y; })
               .defjvp([&saw_zero_y_dot](const std::tuple<Array, Array>& p, const std::tuple<Array, Array>& t) {
                 auto [x, y] = p;
                 auto [x_dot, y_dot] = t;
                 if (y_dot.valid() && y_dot.is_concrete() && y_dot.item<double>() == 0.0) saw_zero_y_dot = true;
                 return std::pair(x * y, x_dot * y + x * y_dot);
               });
  auto [out, t] = jx::jvp([&](const Array& x) { return f(x, f64(4.0)); }, std::make_tuple(f64(3.0)),
                          std::make_tuple(f64(1.0)));
  EXPECT_TRUE(saw_zero_y_dot);
  EXPECT_EQ(out.item<double>(), 12.0);
  EXPECT_EQ(t.item<double>(), 4.0);
}

TEST(CustomJvp, PytreeArgumentsAndStaticLeaves) {
  // x is a {"a", "b"} dict; n is static (a C++ int), so it is part of the structure.
  auto f = jx::custom_jvp([](const std::map<std::string, Array>& x, int n) { return x.at("a") * x.at("b") * double(n); })
               .defjvp([](const std::tuple<std::map<std::string, Array>, int>& p,
                          const std::tuple<std::map<std::string, Array>, int>& t) {
                 const auto& x = std::get<0>(p);
                 const auto& dx = std::get<0>(t);
                 double n = std::get<1>(p);
                 EXPECT_EQ(std::get<1>(t), std::get<1>(p));
                 Array out = x.at("a") * x.at("b") * n;
                 return std::pair(out, (dx.at("a") * x.at("b") + x.at("a") * dx.at("b")) * n);
               });
  std::map<std::string, Array> x{{"a", f64(2.0)}, {"b", f64(5.0)}};
  auto g = jx::grad([&](const std::map<std::string, Array>& v) { return f(v, 3); })(x);
  EXPECT_EQ(g.at("a").item<double>(), 15.0);
  EXPECT_EQ(g.at("b").item<double>(), 6.0);
}

TEST(CustomJvp, CheckGradsOnACorrectRule) {
  auto tanh_rule = jx::custom_jvp([](const Array& x) { return jnp::tanh(x); })
                       .defjvp([](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                         Array y = jnp::tanh(std::get<0>(p));
                         return std::pair(y, (1.0 - y * y) * std::get<0>(t));
                       });
  jx::testing::check_grads([&](const std::vector<Array>& a) { return std::vector<Array>{tanh_rule(a[0])}; },
                           {jx::testing::rand_f64({5}, 7)});
}

TEST(CustomJvp, ClosingOverAValueBeingDifferentiatedIsAnError) {
  auto outer = [](const Array& y) {
    auto f = jx::custom_jvp([y](const Array& x) { return x * y; })
                 .defjvp([y](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                   return std::pair(std::get<0>(p) * y, std::get<0>(t) * y);
                 });
    return f(f64(2.0));
  };
  try {
    jx::grad(outer)(f64(3.0));
    FAIL() << "expected an error";
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[custom_jvp] detected differentiation"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("closed-over value"), std::string::npos) << e.what();
  }
  // Closing over a constant is fine: it is not being differentiated.
  EXPECT_EQ(jx::grad([](const Array& x) {
              Array c = f64(3.0);
              auto f = jx::custom_jvp([c](const Array& a) { return a * c; })
                           .defjvp([c](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                             return std::pair(std::get<0>(p) * c, std::get<0>(t) * c);
                           });
              return f(x);
            })(f64(1.0)).item<double>(), 3.0);
}

TEST(CustomJvp, RuleOutputsAreChecked) {
  auto wrong_shape = jx::custom_jvp([](const Array& x) { return x * 2.0; })
                         .defjvp([](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                           return std::pair(std::get<0>(p) * 2.0, jnp::zeros({3}, jx::float64));
                         });
  try {
    jx::grad(wrong_shape)(f64(1.0));
    FAIL() << "expected an error";
  } catch (const jx::ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              "[custom_jvp] the jvp rule's tangent output must have the shapes and dtypes of the "
              "function's outputs, but leaf 0 is f64[3] where the function gives f64[]");
  }
  auto wrong_tree = jx::custom_jvp([](const Array& x) { return x; })
                        .defjvp([](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                          return std::pair(std::make_tuple(std::get<0>(p)), std::get<0>(t));
                        });
  try {
    jx::grad(wrong_tree)(f64(1.0));
    FAIL() << "expected an error";
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[custom_jvp] the jvp rule's primal output has pytree structure"),
              std::string::npos)
        << e.what();
  }
}

TEST(CustomJvp, MakeJaxprKeepsTheCallAndGradInlinesTheRule) {
  auto f = sin_with_rule(1.0);
  // JAX prints the same equation (params on separate lines, jvp_jaxpr_fun as a Python
  // function, and the inner jaxpr's names continuing the outer ones: `b`, `c`); jx's
  // printer restarts names inside a sub-jaxpr and prints the rule as a label.
  EXPECT_EQ(jx::make_jaxpr(f)(f32(1.0f)).str(),
            "{ lambda ; a:f32[]. let\n"
            "    b:f32[] = custom_jvp_call[\n"
            "      call_jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }\n"
            "      jvp_jaxpr_fun=<custom_jvp rule>\n"
            "      num_consts=0\n"
            "      symbolic_zeros=False\n"
            "    ] a\n"
            "  in (b,) }");
  // Under grad the rule replaces the call: sin for the (unused) primal, cos, and the
  // transposed multiplication by the seed cotangent. JAX prints the same equations, its
  // seed being the literal 1.0 (`mul b 1.0:f32[]`) where jx stages the broadcast_in_dim
  // of jx::ad::ones_like (see jaxpr_golden_test.cpp).
  EXPECT_EQ(jx::make_jaxpr(jx::grad(f))(f32(1.0f)).str(),
            "{ lambda ; a:f32[]. let\n"
            "    _:f32[] = sin a\n"
            "    b:f32[] = cos a\n"
            "    c:f32[] = broadcast_in_dim[broadcast_dimensions=() shape=()] 1.0:f32[]\n"
            "    d:f32[] = mul b c\n"
            "  in (d,) }");
}

}  // namespace
