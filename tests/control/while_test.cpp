// lax::while_loop and lax::fori_loop with traced bounds: eager values, jaxprs, forward-mode
// derivatives, the reverse-mode error, vmap with a batched predicate, carry type errors.
#include <gtest/gtest.h>

#include <cmath>

#include "jx/jx.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;

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

// x^3 by a loop of three multiplications: (i, y) -> (i + 1, y * x) while i < 3.
Array cube(const Array& x) {
  using C = std::pair<Array, Array>;
  auto r = lax::while_loop([](const C& c) { return c.first < 3; },
                           [&](const C& c) { return C(c.first + 1, c.second * x); }, C(Array(0), jnp::ones_like(x)));
  return r.second;
}

TEST(WhileLoop, Eager) {
  using C = std::pair<Array, Array>;
  auto r = lax::while_loop([](const C& c) { return c.first < 10; },
                           [](const C& c) { return C(c.first + 1, c.second + c.first); }, C(Array(0), Array(0)));
  EXPECT_EQ(r.first.item<int>(), 10);
  EXPECT_EQ(r.second.item<int>(), 45);
  // Zero iterations return the initial value.
  Array z = lax::while_loop([](const Array& x) { return x > 100.0; }, [](const Array& x) { return x * 2.0; }, f32(3));
  EXPECT_FLOAT_EQ(z.item<float>(), 3.0f);
  EXPECT_FLOAT_EQ(cube(f32(2)).item<float>(), 8.0f);
}

TEST(WhileLoop, WeakInitIsPromoted) {
  // init is a weak C++ scalar, the body makes it a strong float32: JAX promotes the init.
  Array strong = f32(1.5f);
  Array r = lax::while_loop([](const Array& x) { return x < 10.0; }, [&](const Array& x) { return x * strong + 1.0; },
                            Array(1));
  EXPECT_EQ(r.dtype(), jx::DType::Float32);
  EXPECT_FLOAT_EQ(r.item<float>(), 13.1875f);  // 1 -> 2.5 -> 4.75 -> 8.125 -> 13.1875
}

TEST(WhileLoop, Jaxpr) {
  auto f = [](const Array& x) {
    return lax::while_loop([](const Array& v) { return v < 10.0; }, [](const Array& v) { return v * 2.0; }, x);
  };
  // JAX: while[body_jaxpr={ lambda ; b:f32[]. let c:f32[] = mul b 2.0 in (c,) } body_nconsts=0
  //            cond_jaxpr={ lambda ; d:f32[]. let e:bool[] = lt d 10.0 in (e,) } cond_nconsts=0] a
  EXPECT_EQ(jx::make_jaxpr(f)(f32(1)).str(),
            "{ lambda ; a:f32[]. let\n"
            "    b:f32[] = while[\n"
            "      body_jaxpr={ lambda ; c:f32[]. let d:f32[] = mul c 2.0:f32[] in (d,) }\n"
            "      body_nconsts=0\n"
            "      cond_jaxpr={ lambda ; e:f32[]. let f:bool[] = lt e 10.0:f32[] in (f,) }\n"
            "      cond_nconsts=0\n"
            "    ] a\n"
            "  in (b,) }");
}

TEST(WhileLoop, ForwardMode) {
  for (double x : {0.5, -1.25}) {
    auto [y, t] = jx::jvp(cube, std::make_tuple(f64(x)), std::make_tuple(f64(1.0)));
    EXPECT_NEAR(y.item<double>(), x * x * x, 1e-15);
    EXPECT_NEAR(t.item<double>(), 3 * x * x, 1e-14);
  }
  auto f = [](const std::vector<Array>& a) {
    Array w = a[1];
    using C = std::pair<Array, Array>;
    auto r = lax::while_loop([](const C& c) { return c.first < 4; },
                             [&](const C& c) { return C(c.first + 1, jnp::sin(c.second) * w + c.second); },
                             C(Array(0), a[0]));
    return std::vector<Array>{r.second};
  };
  jx::testing::check_grads(f, {jx::testing::rand_f64({3}, 3), jx::testing::rand_f64({3}, 4)},
                           {.order = 2, .fwd = true, .rev = false});
  // linearize (hence jacfwd) evaluates the staged loop forward, as in JAX.
  auto [y, f_jvp] = jx::linearize(cube, f64(1.5));
  EXPECT_NEAR(f_jvp(f64(2.0)).item<double>(), 2 * 3 * 1.5 * 1.5, 1e-13);
  Array jac = jx::jacfwd([](const Array& x) { return cube(x); })(jnp::array<double>({1.0, 2.0}));
  EXPECT_EQ(jac.to_vector<double>(), (std::vector<double>{3, 0, 0, 12}));
}

TEST(WhileLoop, ReverseModeIsAnError) {
  std::string want =
      "[while_loop] Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
      "dynamic start/stop values. Try using lax.scan, or using fori_loop with static start/stop.";
  try {
    jx::grad(cube)(f64(2));
    FAIL() << "grad through while_loop must throw";
  } catch (const jx::ValueError& e) {
    EXPECT_EQ(std::string(e.what()), want);
  }
}

TEST(WhileLoop, VmapBatchedPredicate) {
  // Each example doubles until it reaches 10; examples finish at different steps.
  auto f = [](const Array& x) {
    return lax::while_loop([](const Array& v) { return v < 10.0; }, [](const Array& v) { return v * 2.0; }, x);
  };
  Array xs = jnp::array<float>({1, 3, 20, 9.5f});
  EXPECT_EQ(jx::vmap(f)(xs).to_vector<float>(), (std::vector<float>{16, 12, 20, 19}));
  // The predicate depends on a batched bound; the carried value on an unbatched start.
  auto g = [](const Array& n) {
    using C = std::pair<Array, Array>;
    return lax::while_loop([&](const C& c) { return c.first < n; },
                           [](const C& c) { return C(c.first + 1, c.second + c.first * 2.0); }, C(Array(0), f32(0)))
        .second;
  };
  Array ns = jnp::array<int32_t>({0, 1, 4, 3});
  std::vector<float> got = jx::vmap(g)(ns).to_vector<float>();
  EXPECT_EQ(got, (std::vector<float>{0, 0, 12, 6}));
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(got[size_t(i)], g(ns(i)).item<float>());
}

TEST(ForiLoop, TracedBoundsUseWhile) {
  auto f = [](const Array& lo, const Array& hi, const Array& x) {
    return lax::fori_loop(lo, hi, [](const Array& i, const Array& acc) { return acc + i * acc; }, x);
  };
  // Concrete Array bounds: a scan.
  EXPECT_FLOAT_EQ(f(Array(1), Array(4), f32(1)).item<float>(), 24.0f);  // 1*2*3*4
  std::string j = jx::make_jaxpr(f)(Array(1), Array(4), f32(1)).str();
  EXPECT_NE(j.find("= while["), std::string::npos) << j;
  Array his = jnp::array<int32_t>({1, 2, 4});
  EXPECT_EQ(jx::vmap(f, {.in_axes = {jx::none, 0, jx::none}})(Array(1), his, f32(1)).to_vector<float>(),
            (std::vector<float>{1, 2, 24}));
}

TEST(WhileLoop, CarryTypeErrors) {
  std::string e = error_of([] {
    lax::while_loop([](const Array& x) { return x.sum() < 10.0; }, [](const Array& x) { return jnp::stack({x, x}); },
                    jnp::ones({2}));
  });
  EXPECT_NE(e.find("[while_loop] body_fun output and input must have identical types"), std::string::npos) << e;
  EXPECT_NE(e.find("the input carry has type f32[2] but the corresponding output carry component has type "
                   "f32[2,2], so the shapes do not match"),
            std::string::npos)
      << e;
  e = error_of([] {
    using C = std::tuple<Array, Array>;
    lax::while_loop([](const C& c) { return std::get<0>(c) < 3; },
                    [](const C& c) { return C(std::get<0>(c) + 1, std::get<1>(c).astype(jx::DType::Float64)); },
                    C(Array(0), f32(1)));
  });
  EXPECT_NE(e.find("the input carry at path [1] has type f32[] but the corresponding output carry component "
                   "has type f64[], so the dtypes do not match"),
            std::string::npos)
      << e;
  e = error_of([] { lax::while_loop([](const Array& x) { return x; }, [](const Array& x) { return x; }, f32(1)); });
  EXPECT_NE(e.find("[while_loop] cond_fun must return a boolean scalar"), std::string::npos) << e;
}

}  // namespace
