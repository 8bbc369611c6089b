// lax::cond and lax::switch_: eager values, jaxprs, jvp/grad/check_grads, vmap, errors.
// Expected values are hand-derived; jaxpr shapes follow JAX's printouts of the same
// programs (docs.jax.dev "The jaxpr language", jax tests/lax_control_flow_test.py).
#include <gtest/gtest.h>

#include <cmath>

#include "jx/jx.h"
#include "testing/check_grads.h"
#include "testing/jaxpr_text.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::testing::check_grads;

Array f32(float v) { return jnp::array<float>({v}).reshape({}); }
Array f64(double v) { return jnp::array<double>({v}).reshape({}); }

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const jx::Error& e) {
    return e.what();
  }
  return "(no error)";
}

Array sin_or_cos(const Array& x) {
  return lax::cond(x > 0, [](const Array& v) { return jnp::sin(v); },
                   [](const Array& v) { return jnp::cos(v); }, x);
}

TEST(Cond, EagerPicksTheBranch) {
  auto f = [](const Array& x) {
    return lax::cond(x > 0, [](const Array& v) { return v * 2.0; }, [](const Array& v) { return -v; }, x);
  };
  EXPECT_FLOAT_EQ(f(f32(3)).item<float>(), 6.0f);
  EXPECT_FLOAT_EQ(f(f32(-2)).item<float>(), 2.0f);
  // A C++ bool, and a number predicate (nonzero is true).
  EXPECT_FLOAT_EQ(lax::cond(false, [](const Array& v) { return v; }, [](const Array& v) { return v + 1.0; },
                            f32(1))
                      .item<float>(),
                  2.0f);
  Array two = jnp::array<int32_t>({2}).reshape({});
  EXPECT_EQ(lax::cond(two, [] { return Array(1); }, [] { return Array(0); }).item<int>(), 1);
  EXPECT_EQ(lax::cond(two - 2, [] { return Array(1); }, [] { return Array(0); }).item<int>(), 0);
}

TEST(Cond, CapturedValuesAndPytrees) {
  Array a = jnp::array<float>({1, 2}), b = jnp::array<float>({10, 20});
  // No operands: the branches capture what they use.
  Array r = lax::cond(true, [&] { return a + b; }, [&] { return a - b; });
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{11, 22}));
  // Pytree operands and outputs.
  using M = std::map<std::string, Array>;
  auto out = lax::cond(
      false, [](const M& m, const Array& s) { return std::make_pair(m.at("w") * s, s); },
      [](const M& m, const Array& s) { return std::make_pair(m.at("w") + s, s * 2.0); }, M{{"w", a}}, f32(3));
  EXPECT_EQ(out.first.to_vector<float>(), (std::vector<float>{4, 5}));
  EXPECT_FLOAT_EQ(out.second.item<float>(), 6.0f);
}

TEST(Cond, Jaxpr) {
  // JAX: { lambda ; a:f32[]. let b:bool[] = gt a 0.0; c:i32[] = convert_element_type[...] b;
  //        d:f32[] = cond[branches=(cos, sin)] c a in (d,) } -- false branch first.
  std::string j = jx::make_jaxpr(sin_or_cos)(f32(1)).str();
  EXPECT_EQ(j,
            "{ lambda ; a:f32[]. let\n"
            "    b:bool[] = gt a 0.0:f32[]\n"
            "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n"
            "    d:f32[] = cond[\n"
            "      branches=(\n"
            "        { lambda ; e:f32[]. let f:f32[] = cos e in (f,) }\n"
            "        { lambda ; g:f32[]. let h:f32[] = sin g in (h,) }\n"
            "      )\n"
            "    ] c a\n"
            "  in (d,) }");
}

TEST(Cond, JvpAndGrad) {
  for (double x : {0.7, -0.4}) {
    double d = x > 0 ? std::cos(x) : -std::sin(x);
    auto [y, t] = jx::jvp(sin_or_cos, std::make_tuple(f64(x)), std::make_tuple(f64(2.0)));
    EXPECT_NEAR(y.item<double>(), x > 0 ? std::sin(x) : std::cos(x), 1e-15);
    EXPECT_NEAR(t.item<double>(), 2 * d, 1e-15);
    EXPECT_NEAR(jx::grad(sin_or_cos)(f64(x)).item<double>(), d, 1e-15);
    // Second derivative: -sin or -cos.
    EXPECT_NEAR(jx::grad(jx::grad(sin_or_cos))(f64(x)).item<double>(), x > 0 ? -std::sin(x) : -std::cos(x),
                1e-14);
  }
  // A captured (closed-over) differentiated value: d/dx cond(p, x*x, 3x) = 2x or 3.
  auto g = [](const Array& x, bool p) { return lax::cond(p, [&] { return x * x; }, [&] { return x * 3.0; }); };
  EXPECT_NEAR(jx::grad([&](const Array& x) { return g(x, true); })(f64(5)).item<double>(), 10.0, 1e-15);
  EXPECT_NEAR(jx::grad([&](const Array& x) { return g(x, false); })(f64(5)).item<double>(), 3.0, 1e-15);
}

TEST(Cond, CheckGrads) {
  auto f = [](const std::vector<Array>& a) {
    Array w = a[1];
    return std::vector<Array>{lax::cond(
        jnp::sum(a[0]) > 0, [&](const Array& x) { return jnp::sin(x) * w; },
        [&](const Array& x) { return x * x * w + jnp::exp(w); }, a[0])};
  };
  Array x = jx::testing::rand_f64({3}, 1), w = jx::testing::rand_f64({3}, 2);
  check_grads(f, {x, w});   // sum(x) decides; both signs tried below
  check_grads(f, {-jnp::abs(x), w});
  check_grads(f, {jnp::abs(x), w});
}

TEST(Cond, Vmap) {
  auto f = [](const Array& p, const Array& x) {
    return lax::cond(p > 0, [](const Array& v) { return v * 2.0; }, [](const Array& v) { return jnp::sin(v); },
                     x);
  };
  Array ps = jnp::array<float>({1, -1, 2, -3}), xs = jnp::array<float>({0.5f, 1.5f, 2.5f, 3.5f});
  auto expect_loop = [&](const Array& got, const Array& p_all, bool p_mapped) {
    std::vector<float> g = got.to_vector<float>();
    ASSERT_EQ(g.size(), 4u);
    for (int i = 0; i < 4; ++i) {
      Array p = p_mapped ? p_all(i) : p_all;
      EXPECT_FLOAT_EQ(g[size_t(i)], f(p, xs(i)).item<float>()) << i;
    }
  };
  // Batched predicate: both branches run, select per example.
  expect_loop(jx::vmap(f)(ps, xs), ps, true);
  // Unbatched predicate, batched operand: a single cond over batched branches.
  expect_loop(jx::vmap(f, {.in_axes = {jx::none, 0}})(f32(-1), xs), f32(-1), false);
  // Batch size 0.
  EXPECT_EQ(jx::vmap(f)(jnp::zeros({0}), jnp::zeros({0})).shape(), jx::Shape({0}));
  // Per-example gradients through a batched predicate.
  Array g = jx::vmap(jx::grad<1>(f))(ps, xs);
  std::vector<float> gv = g.to_vector<float>();
  for (int i = 0; i < 4; ++i) {
    float p = ps(i).item<float>(), x = xs(i).item<float>();
    EXPECT_NEAR(gv[size_t(i)], p > 0 ? 2.0f : std::cos(x), 1e-6) << i;
  }
}

TEST(Switch, ClampsTheIndex) {
  std::vector<std::function<Array(const Array&)>> branches{
      [](const Array& x) { return x + 1.0; }, [](const Array& x) { return x - 2.0; },
      [](const Array& x) { return x * 3.0; }};
  auto f = [&](int i) { return lax::switch_(Array(i), branches, f32(5)).item<float>(); };
  EXPECT_FLOAT_EQ(f(-5), 6.0f);
  EXPECT_FLOAT_EQ(f(0), 6.0f);
  EXPECT_FLOAT_EQ(f(1), 3.0f);
  EXPECT_FLOAT_EQ(f(2), 15.0f);
  EXPECT_FLOAT_EQ(f(7), 15.0f);
  // One branch: called directly.
  EXPECT_FLOAT_EQ(lax::switch_(Array(4), std::vector{branches[1]}, f32(5)).item<float>(), 3.0f);
}

TEST(Switch, JaxprGradAndVmap) {
  std::vector<std::function<Array(const Array&)>> branches{
      [](const Array& x) { return jnp::sin(x); }, [](const Array& x) { return x * x; },
      [](const Array& x) { return jnp::exp(x); }};
  auto f = [&](const Array& i, const Array& x) { return lax::switch_(i, branches, x); };
  // JAX (docs "The jaxpr language", one_of_three): convert_element_type, clamp 0 c 2, cond.
  EXPECT_EQ(jx::make_jaxpr(f)(Array(1), f32(1)).str(),
            "{ lambda ; a:i32[] b:f32[]. let\n"
            "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
            "    d:i32[] = clamp 0:i32[] c 2:i32[]\n"
            "    e:f32[] = cond[\n"
            "      branches=(\n"
            "        { lambda ; f:f32[]. let g:f32[] = sin f in (g,) }\n"
            "        { lambda ; h:f32[]. let i:f32[] = mul h h in (i,) }\n"
            "        { lambda ; j:f32[]. let k:f32[] = exp j in (k,) }\n"
            "      )\n"
            "    ] d b\n"
            "  in (e,) }");
  for (int i = 0; i < 3; ++i) {
    auto fi = [&](const std::vector<Array>& a) { return std::vector<Array>{f(Array(i), a[0])}; };
    check_grads(fi, {jx::testing::rand_f64({2}, unsigned(i))});
  }
  Array is = jnp::array<int32_t>({0, 1, 2, 5}), xs = jnp::array<float>({0.5f, 1.5f, 2.5f, 3.5f});
  std::vector<float> got = jx::vmap(f)(is, xs).to_vector<float>();
  std::vector<float> want{std::sin(0.5f), 1.5f * 1.5f, std::exp(2.5f), std::exp(3.5f)};
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(got[size_t(k)], want[size_t(k)], 1e-5 * std::abs(want[size_t(k)]));
}

TEST(Cond, GradJaxpr) {
  // The linear part of grad through cond is a second cond over the residuals (here cos x
  // from the true branch and sin x from the false one, merged by type into one slot each).
  std::string j = jx::testing::unbroken(jx::make_jaxpr(jx::grad(sin_or_cos))(f32(1)).str());
  EXPECT_NE(j.find("cond[branches=("), std::string::npos) << j;
  size_t first = j.find("cond["), second = j.find("cond[", first + 1);
  EXPECT_NE(second, std::string::npos) << "expected a primal and a transposed cond:\n" << j;
}

TEST(Cond, TypeErrors) {
  std::string e = error_of([] {
    lax::cond(true, [] { return jnp::array<float>({1}); }, [] { return f32(1); });
  });
  EXPECT_NE(e.find("[cond] true_fun and false_fun output must have identical types"), std::string::npos) << e;
  EXPECT_NE(e.find("DIFFERENT f32[1] vs. f32[]"), std::string::npos) << e;
  e = error_of([] {
    using M = std::map<std::string, Array>;
    lax::cond(true, [] { return M{{"a", f32(1)}, {"b", f32(1)}}; },
              [] { return M{{"a", f32(1)}, {"b", jnp::array<double>({1.0}).reshape({})}}; });
  });
  EXPECT_NE(e.find("DIFFERENT f32[] vs. f64[] at output['b']"), std::string::npos) << e;
  e = error_of([] {
    lax::cond(true, [] { return std::vector<Array>{f32(1)}; }, [] { return std::vector<Array>{f32(1), f32(2)}; });
  });
  EXPECT_NE(e.find("true_fun and false_fun output must have same type structure"), std::string::npos) << e;
  e = error_of([] { lax::cond(jnp::array<bool>({true, false}), [] { return f32(1); }, [] { return f32(2); }); });
  EXPECT_NE(e.find("[cond] Pred must be a scalar, got bool[2]"), std::string::npos) << e;
  std::vector<std::function<Array()>> bs{[] { return f32(1); }, [] { return f32(2); }};
  e = error_of([&] { lax::switch_(f32(1), bs); });
  EXPECT_NE(e.find("[switch] Index type must be an integer, got float32"), std::string::npos) << e;
}

}  // namespace
