// Autodiff rules of the unary, binary and convert_select families: every differentiable
// primitive through check_grads (forward vs central differences, reverse via the inner-
// product identity, order 2, float64), the kinks with JAX's values, linear transposes
// against explicit matrices, and hand-derived gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <string>

#include "jx/jx.h"
#include "jx/lax.h"
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

Array f64(double v) { return jnp::array<double>({v}).reshape({}); }
Array vec(std::vector<double> v) { return jnp::array<double>(v); }

// Runs check_grads and turns its exception into a test failure naming the case.
void grads_ok(const std::string& what, const jx::testing::Fn& f, const Arrays& args,
              jx::testing::GradCheckOptions o = {}) {
  try {
    check_grads(f, args, o);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
  }
}

std::string shape_name(const Shape& s) { return jx::shape_str(s); }

// ---------------------------------------------------------------- unary

struct UnaryCase {
  const char* name;
  std::function<Array(const Array&)> f;
  double lo, hi;  // a domain away from singularities and kinks
  int order = 2;
};

const Shape kUnaryShapes[] = {Shape{}, Shape{5}, Shape{2, 3}, Shape{1, 4}, Shape{0}, Shape{3, 0}};

TEST(GradUnary, EveryDifferentiablePrimitive) {
  const UnaryCase cases[] = {
      {"neg", [](const Array& x) { return lax::neg(x); }, -2, 2},
      {"copy", [](const Array& x) { return lax::copy(x); }, -2, 2},
      {"exp", [](const Array& x) { return lax::exp(x); }, -2, 2},
      {"exp2", [](const Array& x) { return lax::exp2(x); }, -2, 2},
      {"log", [](const Array& x) { return lax::log(x); }, 0.5, 3},
      {"log1p", [](const Array& x) { return lax::log1p(x); }, -0.5, 2},
      {"expm1", [](const Array& x) { return lax::expm1(x); }, -2, 2},
      {"tanh", [](const Array& x) { return lax::tanh(x); }, -2, 2},
      {"logistic", [](const Array& x) { return lax::logistic(x); }, -3, 3},
      {"sin", [](const Array& x) { return lax::sin(x); }, -3, 3},
      {"cos", [](const Array& x) { return lax::cos(x); }, -3, 3},
      {"tan", [](const Array& x) { return lax::tan(x); }, -1, 1},
      {"asin", [](const Array& x) { return lax::asin(x); }, -0.8, 0.8},
      {"acos", [](const Array& x) { return lax::acos(x); }, -0.8, 0.8},
      {"atan", [](const Array& x) { return lax::atan(x); }, -3, 3},
      {"sinh", [](const Array& x) { return lax::sinh(x); }, -2, 2},
      {"cosh", [](const Array& x) { return lax::cosh(x); }, -2, 2},
      {"asinh", [](const Array& x) { return lax::asinh(x); }, -3, 3},
      {"acosh", [](const Array& x) { return lax::acosh(x); }, 1.3, 4},
      {"atanh", [](const Array& x) { return lax::atanh(x); }, -0.8, 0.8},
      {"abs+", [](const Array& x) { return lax::abs(x); }, 0.1, 2},
      {"abs-", [](const Array& x) { return lax::abs(x); }, -2, -0.1},
      {"sqrt", [](const Array& x) { return lax::sqrt(x); }, 0.3, 3},
      {"rsqrt", [](const Array& x) { return lax::rsqrt(x); }, 0.3, 3},
      {"cbrt+", [](const Array& x) { return lax::cbrt(x); }, 0.3, 3},
      {"cbrt-", [](const Array& x) { return lax::cbrt(x); }, -3, -0.3},
      {"square", [](const Array& x) { return lax::square(x); }, -2, 2},
      {"integer_pow 0", [](const Array& x) { return lax::integer_pow(x, 0); }, -2, 2},
      {"integer_pow 1", [](const Array& x) { return lax::integer_pow(x, 1); }, -2, 2},
      {"integer_pow 3", [](const Array& x) { return lax::integer_pow(x, 3); }, -2, 2},
      {"integer_pow -2", [](const Array& x) { return lax::integer_pow(x, -2); }, 0.5, 2},
      {"lgamma", [](const Array& x) { return lax::lgamma(x); }, 0.5, 4},
      {"digamma+", [](const Array& x) { return lax::digamma(x); }, 0.3, 8},
      {"digamma-", [](const Array& x) { return lax::digamma(x); }, -0.9, -0.1},
      {"erf", [](const Array& x) { return lax::erf(x); }, -2, 2},
      {"erfc", [](const Array& x) { return lax::erfc(x); }, -2, 2},
      {"erf_inv", [](const Array& x) { return lax::erf_inv(x); }, -0.8, 0.8},
  };
  unsigned seed = 1;
  for (const UnaryCase& c : cases) {
    for (const Shape& s : kUnaryShapes) {
      Array x = rand_f64(s, seed++, c.lo, c.hi);
      auto f = c.f;
      grads_ok(std::string(c.name) + " " + shape_name(s),
               [f](const Arrays& a) { return Arrays{f(a[0])}; }, {x}, {.order = c.order});
    }
  }
}

TEST(GradUnary, HandDerivedValues) {
  Array x = vec({-1.5, 0.25, 2.0});
  std::vector<double> xs = x.to_vector<double>();
  auto check = [&](const char* what, std::function<Array(const Array&)> f,
                   std::function<double(double)> df) {
    std::vector<double> g =
        jx::grad([&](const Array& a) { return jnp::sum(f(a)); })(x).to_vector<double>();
    for (size_t i = 0; i < xs.size(); ++i)
      EXPECT_NEAR(g[i], df(xs[i]), 1e-12) << what << " " << xs[i];
  };
  check(
      "tanh", [](const Array& a) { return lax::tanh(a); },
      [](double v) { return 1 - std::tanh(v) * std::tanh(v); });
  check(
      "logistic", [](const Array& a) { return lax::logistic(a); },
      [](double v) {
        double s = 1 / (1 + std::exp(-v));
        return s * (1 - s);
      });
  check(
      "exp", [](const Array& a) { return lax::exp(a); }, [](double v) { return std::exp(v); });
  check(
      "sin", [](const Array& a) { return lax::sin(a); }, [](double v) { return std::cos(v); });
  check(
      "atan", [](const Array& a) { return lax::atan(a); },
      [](double v) { return 1 / (1 + v * v); });
  check(
      "erf", [](const Array& a) { return lax::erf(a); },
      [](double v) { return 2 / std::sqrt(std::numbers::pi) * std::exp(-v * v); });
  check(
      "cube", [](const Array& a) { return lax::integer_pow(a, 3); },
      [](double v) { return 3 * v * v; });
  check(
      "abs", [](const Array& a) { return lax::abs(a); },
      [](double v) { return v >= 0 ? 1.0 : -1.0; });
  // Second derivatives: tanh'' = -2 tanh (1 - tanh^2); log'' = -1/x^2.
  auto d2 = [&](std::function<Array(const Array&)> f, double v) {
    auto g = jx::grad([f](const Array& a) { return f(a); });
    return jx::grad([g](const Array& a) { return g(a); })(f64(v)).item<double>();
  };
  double t = std::tanh(0.7);
  EXPECT_NEAR(d2([](const Array& a) { return lax::tanh(a); }, 0.7), -2 * t * (1 - t * t), 1e-12);
  EXPECT_NEAR(d2([](const Array& a) { return lax::log(a); }, 2.0), -0.25, 1e-12);
  EXPECT_NEAR(d2([](const Array& a) { return lax::sqrt(a); }, 4.0), -0.25 * std::pow(4.0, -1.5),
              1e-12);
}

TEST(GradUnary, FloatThirtyTwoKeepsItsDtype) {
  Array x = jnp::array<float>({0.5f, -1.0f});
  Array g = jx::grad([](const Array& a) { return jnp::sum(lax::exp(a) * lax::tanh(a)); })(x);
  EXPECT_EQ(g.dtype(), jx::float32);
  std::vector<float> gv = g.to_vector<float>();
  for (int i = 0; i < 2; ++i) {
    double v = i == 0 ? 0.5 : -1.0, t = std::tanh(v);
    EXPECT_NEAR(gv[size_t(i)], std::exp(v) * t + std::exp(v) * (1 - t * t), 1e-6);
  }
}

TEST(GradUnary, LargeArraysTakeTheThreadedKernels) {
  // d/dx sum(tanh(x) * x) = tanh(x) + x (1 - tanh(x)^2), over 200k elements.
  Array x = rand_f64({200003}, 9);
  Array g = jx::grad([](const Array& a) { return jnp::sum(lax::mul(lax::tanh(a), a)); })(x);
  std::vector<double> xs = x.to_vector<double>(), gs = g.to_vector<double>();
  for (size_t i = 0; i < xs.size(); i += 997) {
    double t = std::tanh(xs[i]);
    ASSERT_NEAR(gs[i], t + xs[i] * (1 - t * t), 1e-14) << i;
  }
}

TEST(GradUnary, HalfPrecisionKeepsItsDtype) {
  // d/dx sqrt(x) * x = 1.5 sqrt(x): exact at x = 4 and 0.25 in any float type.
  for (jx::DType t : {jx::float16, jx::bfloat16}) {
    Array x = jnp::array<float>({4.0f, 0.25f}).astype(t);
    Array g = jx::grad([](const Array& a) { return jnp::sum(lax::mul(lax::sqrt(a), a)); })(x);
    EXPECT_EQ(g.dtype(), t);
    EXPECT_EQ(g.astype(jx::float32).to_vector<float>(), (std::vector<float>{3.0f, 0.75f}));
  }
}

TEST(GradUnary, KinksMatchJax) {
  auto d = [](std::function<Array(const Array&)> f, double v) {
    return jx::grad([f](const Array& a) { return f(a); })(f64(v)).item<double>();
  };
  // jax.grad(lax.abs)(0.) == 1 (select(x >= 0, g, -g)).
  EXPECT_EQ(d([](const Array& a) { return lax::abs(a); }, 0.0), 1.0);
  EXPECT_EQ(d([](const Array& a) { return lax::abs(a); }, -0.0), 1.0);
  // sqrt'(0) = 0.5 / 0 = inf; cbrt'(0) = inf, as JAX.
  EXPECT_EQ(d([](const Array& a) { return lax::sqrt(a); }, 0.0), INFINITY);
  EXPECT_EQ(d([](const Array& a) { return lax::cbrt(a); }, 0.0), INFINITY);
  // x ** 0 has derivative 0 everywhere, even at 0.
  EXPECT_EQ(d([](const Array& a) { return lax::integer_pow(a, 0); }, 0.0), 0.0);
  EXPECT_EQ(d([](const Array& a) { return lax::integer_pow(a, 1); }, 0.0), 1.0);
}

TEST(GradUnary, PiecewiseConstantPrimitivesHaveZeroTangents) {
  Array x = vec({-1.4, 0.6, 2.5});
  const std::function<Array(const Array&)> fs[] = {
      [](const Array& a) { return lax::sign(a); },
      [](const Array& a) { return lax::floor(a); },
      [](const Array& a) { return lax::ceil(a); },
      [](const Array& a) { return lax::round(a); },
      [](const Array& a) { return lax::round(a, lax::RoundingMethod::to_nearest_even); },
      [](const Array& a) { return lax::convert_element_type(lax::is_finite(a), jx::float64); },
      [](const Array& a) {
        return lax::convert_element_type(
            lax::population_count(lax::convert_element_type(a, jx::int32)), jx::float64);
      },
      [](const Array& a) {
        return lax::convert_element_type(lax::clz(lax::convert_element_type(a, jx::int32)),
                                         jx::float64);
      },
      [](const Array& a) {
        Array b = lax::convert_element_type(a, jx::int32);
        return lax::convert_element_type(lax::bitwise_not(b), jx::float64);
      },
  };
  for (const auto& f : fs) {
    auto [y, t] = jx::ad::jvp_flat([&](const Arrays& a) { return Arrays{f(a[0])}; }, {x},
                                   {vec({1.0, 2.0, 3.0})});
    EXPECT_EQ(t[0].to_vector<double>(), (std::vector<double>{0, 0, 0}));
    Array g = jx::grad([&](const Array& a) { return jnp::sum(f(a) * a); })(x);
    EXPECT_EQ(g.to_vector<double>(), y[0].to_vector<double>());  // d(f(a) a) = f(a)
  }
}

TEST(GradUnary, DigammaDerivativeIsTrigamma) {
  // polygamma(1, x): pi^2/6 at 1, pi^2/2 at 1/2, pi^2/2 + 4 at -1/2 (psi1(x) = psi1(x+1) +
  // 1/x^2), and psi1(10) = 0.10516633568168575 (scipy.special.polygamma(1, 10)).
  auto d = jx::grad([](const Array& a) { return lax::digamma(a); });
  const double pi2 = std::numbers::pi * std::numbers::pi;
  EXPECT_NEAR(d(f64(1.0)).item<double>(), pi2 / 6, 2e-13);
  EXPECT_NEAR(d(f64(0.5)).item<double>(), pi2 / 2, 4e-13);
  EXPECT_NEAR(d(f64(-0.5)).item<double>(), pi2 / 2 + 4, 1e-12);
  EXPECT_NEAR(d(f64(10.0)).item<double>(), 0.10516633568168575, 1e-14);
  EXPECT_NEAR(d(jnp::array<float>({1.0f}).reshape({})).item<float>(), float(pi2 / 6), 1e-6);
}

// ---------------------------------------------------------------- binary

struct BinaryCase {
  const char* name;
  std::function<Array(const Array&, const Array&)> f;
  double xlo, xhi, ylo, yhi;
};

// Operand shapes: equal, scalar, size-1 broadcasting either way and both ways, size 0.
const std::pair<Shape, Shape> kBinaryShapes[] = {
    {Shape{}, Shape{}},         {Shape{4}, Shape{4}},       {Shape{2, 3}, Shape{2, 3}},
    {Shape{2, 1}, Shape{1, 3}}, {Shape{1, 3}, Shape{2, 3}}, {Shape{2, 3}, Shape{2, 1}},
    {Shape{1, 1}, Shape{3, 2}}, {Shape{2, 0}, Shape{2, 1}}, {Shape{1, 0}, Shape{3, 0}},
    {Shape{0, 3}, Shape{0, 3}},
};

TEST(GradBinary, EveryDifferentiablePrimitive) {
  const BinaryCase cases[] = {
      {"add", [](const Array& x, const Array& y) { return lax::add(x, y); }, -2, 2, -2, 2},
      {"sub", [](const Array& x, const Array& y) { return lax::sub(x, y); }, -2, 2, -2, 2},
      {"mul", [](const Array& x, const Array& y) { return lax::mul(x, y); }, -2, 2, -2, 2},
      {"div", [](const Array& x, const Array& y) { return lax::div(x, y); }, -2, 2, 0.5, 2},
      {"div-", [](const Array& x, const Array& y) { return lax::div(x, y); }, -2, 2, -2, -0.5},
      // Away from the jumps of rem: x / y stays inside (2, 3) or (-3, -2).
      {"rem", [](const Array& x, const Array& y) { return lax::rem(x, y); }, 2.2, 2.8, 0.95, 1.05},
      {"rem-", [](const Array& x, const Array& y) { return lax::rem(x, y); }, -2.8, -2.2, 0.95,
       1.05},
      {"pow", [](const Array& x, const Array& y) { return lax::pow(x, y); }, 0.5, 2, -1.5, 1.5},
      // Different ranges keep max/min away from ties.
      {"max x", [](const Array& x, const Array& y) { return lax::max(x, y); }, 1, 2, -1, 0.5},
      {"max y", [](const Array& x, const Array& y) { return lax::max(x, y); }, -1, 0.5, 1, 2},
      {"min x", [](const Array& x, const Array& y) { return lax::min(x, y); }, -1, 0.5, 1, 2},
      {"min y", [](const Array& x, const Array& y) { return lax::min(x, y); }, 1, 2, -1, 0.5},
      {"atan2", [](const Array& x, const Array& y) { return lax::atan2(x, y); }, -2, 2, 0.5, 2},
      {"atan2-", [](const Array& x, const Array& y) { return lax::atan2(x, y); }, 0.5, 2, -2, 2},
  };
  unsigned seed = 1000;
  for (const BinaryCase& c : cases) {
    for (const auto& [sx, sy] : kBinaryShapes) {
      Array x = rand_f64(sx, seed++, c.xlo, c.xhi), y = rand_f64(sy, seed++, c.ylo, c.yhi);
      auto f = c.f;
      grads_ok(std::string(c.name) + " " + shape_name(sx) + " " + shape_name(sy),
               [f](const Arrays& a) { return Arrays{f(a[0], a[1])}; }, {x, y});
    }
  }
}

TEST(GradBinary, HandDerivedValues) {
  Array x = vec({1.0, 2.0, 3.0}), y = vec({0.5, -1.0, 4.0});
  auto grads = [&](std::function<Array(const Array&, const Array&)> f) {
    auto [gx, gy] =
        jx::grad<0, 1>([f](const Array& a, const Array& b) { return jnp::sum(f(a, b)); })(x, y);
    return std::make_pair(gx.to_vector<double>(), gy.to_vector<double>());
  };
  auto [mx, my] = grads([](const Array& a, const Array& b) { return lax::mul(a, b); });
  EXPECT_EQ(mx, (std::vector<double>{0.5, -1.0, 4.0}));
  EXPECT_EQ(my, (std::vector<double>{1.0, 2.0, 3.0}));
  auto [dx, dy] = grads([](const Array& a, const Array& b) { return lax::div(a, b); });
  EXPECT_EQ(dx, (std::vector<double>{2.0, -1.0, 0.25}));
  EXPECT_EQ(dy, (std::vector<double>{-4.0, -2.0, -3.0 / 16.0}));
  auto [sx, sy] = grads([](const Array& a, const Array& b) { return lax::sub(a, b); });
  EXPECT_EQ(sx, (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(sy, (std::vector<double>{-1, -1, -1}));
  // d/dx x^y = y x^(y-1); d/dy = log(x) x^y.
  auto [px, py] = grads([](const Array& a, const Array& b) { return lax::pow(a, b); });
  EXPECT_NEAR(px[1], -1.0 * std::pow(2.0, -2.0), 1e-15);
  EXPECT_NEAR(py[2], std::log(3.0) * 81.0, 1e-12);
  // d rem(x, y)/dy = -trunc(x / y): rem(7, 2) -> -3; rem(-7, 2) -> 3.
  auto [rx, ry] = jx::grad<0, 1>([](const Array& a, const Array& b) {
    return jnp::sum(lax::rem(a, b));
  })(vec({7.0, -7.0}), vec({2.0, 2.0}));
  EXPECT_EQ(rx.to_vector<double>(), (std::vector<double>{1, 1}));
  EXPECT_EQ(ry.to_vector<double>(), (std::vector<double>{-3, 3}));
  // atan2(x, y): d/dx = y / (x^2 + y^2), d/dy = -x / (x^2 + y^2).
  auto [ax, ay] = grads([](const Array& a, const Array& b) { return lax::atan2(a, b); });
  EXPECT_NEAR(ax[0], 0.5 / 1.25, 1e-15);
  EXPECT_NEAR(ay[0], -1.0 / 1.25, 1e-15);
}

TEST(GradBinary, BroadcastGradientsSumOverSize1Dims) {
  // f = sum(x * w) with x [2,1] broadcasting over w [2,3]: df/dx_i = sum_k w_ik.
  Array x = jnp::array<double>({1.0, 2.0}, Shape{2, 1});
  Array w = jnp::array<double>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  auto [gx, gw] =
      jx::grad<0, 1>([](const Array& a, const Array& b) { return jnp::sum(lax::mul(a, b)); })(x, w);
  EXPECT_EQ(gx.shape(), (Shape{2, 1}));
  EXPECT_EQ(gx.to_vector<double>(), (std::vector<double>{6, 15}));
  EXPECT_EQ(gw.to_vector<double>(), (std::vector<double>{1, 1, 1, 2, 2, 2}));
  Array ga = jx::grad([&](const Array& a) { return jnp::sum(lax::sub(w, a)); })(x);
  EXPECT_EQ(ga.to_vector<double>(), (std::vector<double>{-3, -3}));
}

TEST(GradBinary, KinksMatchJax) {
  // max/min split the tangent evenly at ties (JAX's _balanced_eq).
  auto [gx, gy] = jx::grad<0, 1>([](const Array& a, const Array& b) {
    return jnp::sum(lax::max(a, b));
  })(vec({1.0, 2.0, 3.0}), vec({1.0, 5.0, 0.0}));
  EXPECT_EQ(gx.to_vector<double>(), (std::vector<double>{0.5, 0, 1}));
  EXPECT_EQ(gy.to_vector<double>(), (std::vector<double>{0.5, 1, 0}));
  auto [hx, hy] = jx::grad<0, 1>([](const Array& a, const Array& b) {
    return jnp::sum(lax::min(a, b));
  })(vec({1.0, 2.0, 3.0}), vec({1.0, 5.0, 0.0}));
  EXPECT_EQ(hx.to_vector<double>(), (std::vector<double>{0.5, 1, 0}));
  EXPECT_EQ(hy.to_vector<double>(), (std::vector<double>{0.5, 0, 1}));
  // relu as lax.max(x, 0.): 0.5 at 0.
  Array r = jx::grad([](const Array& a) {
    return jnp::sum(lax::max(a, lax::convert_element_type(Array(0.0), jx::float64).reshape({1})));
  })(vec({-1.0, 0.0, 2.0}));
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{0, 0.5, 1}));
  // pow at x == 0: d/dx 0^2 = 0, d/dy 0^y = 0 (log(0) replaced by log(1)).
  auto [px, py] = jx::grad<0, 1>([](const Array& a, const Array& b) { return lax::pow(a, b); })(
      f64(0.0), f64(2.0));
  EXPECT_EQ(px.item<double>(), 0.0);
  EXPECT_EQ(py.item<double>(), 0.0);
}

TEST(GradBinary, ZeroTangentPrimitives) {
  Array x = vec({0.5, 1.5}), y = vec({1.0, 1.0});
  using F = std::function<Array(const Array&, const Array&)>;
  auto as_f64 = [](const Array& a) { return lax::convert_element_type(a, jx::float64); };
  auto as_i32 = [](const Array& a) { return lax::convert_element_type(a, jx::int32); };
  const F fs[] = {
      [&](const Array& a, const Array& b) { return lax::nextafter(a, b); },
      [&](const Array& a, const Array& b) { return as_f64(lax::eq(a, b)); },
      [&](const Array& a, const Array& b) { return as_f64(lax::ne(a, b)); },
      [&](const Array& a, const Array& b) { return as_f64(lax::lt(a, b)); },
      [&](const Array& a, const Array& b) { return as_f64(lax::le(a, b)); },
      [&](const Array& a, const Array& b) { return as_f64(lax::gt(a, b)); },
      [&](const Array& a, const Array& b) { return as_f64(lax::ge(a, b)); },
      [&](const Array& a, const Array& b) {
        return as_f64(lax::bitwise_and(as_i32(a), as_i32(b)));
      },
      [&](const Array& a, const Array& b) { return as_f64(lax::bitwise_or(as_i32(a), as_i32(b))); },
      [&](const Array& a, const Array& b) {
        return as_f64(lax::bitwise_xor(as_i32(a), as_i32(b)));
      },
      [&](const Array& a, const Array& b) { return as_f64(lax::shift_left(as_i32(a), as_i32(b))); },
      [&](const Array& a, const Array& b) {
        return as_f64(lax::shift_right_logical(as_i32(a), as_i32(b)));
      },
      [&](const Array& a, const Array& b) {
        return as_f64(lax::shift_right_arithmetic(as_i32(a), as_i32(b)));
      },
  };
  for (const F& f : fs) {
    auto [out, t] = jx::ad::jvp_flat([&](const Arrays& a) { return Arrays{f(a[0], a[1])}; }, {x, y},
                                     {vec({1.0, 1.0}), vec({1.0, 1.0})});
    EXPECT_EQ(t[0].to_vector<double>(), (std::vector<double>{0, 0}));
    auto [gx, gy] =
        jx::grad<0, 1>([&](const Array& a, const Array& b) { return jnp::sum(f(a, b)); })(x, y);
    EXPECT_EQ(gx.to_vector<double>(), (std::vector<double>{0, 0}));
    EXPECT_EQ(gy.to_vector<double>(), (std::vector<double>{0, 0}));
  }
}

TEST(GradBinary, IntegerOperandsHaveZeroTangents) {
  // JAX gives integer values float0 tangents; jx's integer tangents are zero.
  Array x = jnp::array<int32_t>({2, 3});
  auto [out, t] = jx::ad::jvp_flat(
      [](const Arrays& a) { return Arrays{lax::div(lax::mul(a[0], a[0]), lax::add(a[0], a[0]))}; },
      {x}, {jnp::array<int32_t>({1, 1})});
  EXPECT_EQ(out[0].to_vector<int32_t>(), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(t[0].to_vector<int32_t>(), (std::vector<int32_t>{0, 0}));
}

// ---------------------------------------------------------------- convert, select_n, clamp

TEST(GradConvertSelect, ConvertElementType) {
  // float64 -> float32 -> float64: the tangent is rounded through float32.
  Array x = vec({0.1, -2.5});
  auto f = [](const Arrays& a) {
    Array y = lax::convert_element_type(a[0], jx::float32);
    return Arrays{lax::convert_element_type(lax::mul(y, y), jx::float64)};
  };
  auto [out, t] = jx::ad::jvp_flat(f, {x}, {vec({1.0, 1.0})});
  std::vector<double> tv = t[0].to_vector<double>();
  EXPECT_EQ(tv[0], double(2.0f * 0.1f));
  EXPECT_EQ(tv[1], double(2.0f * -2.5f));
  Array g = jx::grad([&](const Array& a) { return jnp::sum(f({a})[0]); })(x);
  EXPECT_EQ(g.dtype(), jx::float64);
  EXPECT_EQ(g.to_vector<double>(), tv);
  // float -> int -> float: no tangent through the integers.
  Array h = jx::grad([](const Array& a) {
    Array i = lax::convert_element_type(lax::convert_element_type(a, jx::int32), jx::float64);
    return jnp::sum(lax::mul(i, a));
  })(vec({1.7, -2.2}));
  EXPECT_EQ(h.to_vector<double>(), (std::vector<double>{1.0, -2.0}));
  // The weak flag alone: float64 -> weak float64 -> float64 (a weak output would make
  // check_grads' own arithmetic with C++ scalars float32).
  grads_ok("convert weak",
           [](const Arrays& a) {
             Array w = lax::exp(lax::convert_element_type(a[0], jx::float64, true));
             return Arrays{lax::convert_element_type(w, jx::float64, false)};
           },
           {rand_f64({2, 3}, 5)});
}

TEST(GradConvertSelect, SelectN) {
  Array pred = jnp::array<bool>({true, false, true, false, false, true}, Shape{2, 3});
  Array which = jnp::array<int32_t>({0, 1, 2, 2, 1, 0}, Shape{2, 3});
  Array which_col = jnp::array<int32_t>({2, 0}, Shape{2, 1});
  const struct {
    const char* name;
    Array which;
    std::vector<Shape> shapes;
  } cases[] = {
      {"bool", pred, {{2, 3}, {2, 3}}},
      {"bool broadcast", pred, {{2, 1}, {1, 3}}},
      {"bool scalar case", pred, {{}, {2, 3}}},
      {"int3", which, {{2, 3}, {2, 3}, {2, 3}}},
      {"int3 broadcast", which, {{1, 3}, {}, {2, 1}}},
      {"int3 narrow which", which_col, {{2, 3}, {1, 3}, {2, 1}}},
      {"scalar which", jnp::array<bool>({true}).reshape({}), {{2, 3}, {2, 3}}},
      {"size 0", jnp::array<bool>({true}).reshape({}), {{2, 0}, {2, 1}}},
  };
  unsigned seed = 77;
  for (const auto& c : cases) {
    Arrays args;
    for (const Shape& s : c.shapes) args.push_back(rand_f64(s, seed++));
    Array w = c.which;
    grads_ok(
        std::string("select_n ") + c.name,
        [w](const Arrays& a) { return Arrays{lax::mul(lax::select_n(w, a), lax::select_n(w, a))}; },
        args);
  }
  // relu through select with a predicate computed from x.
  grads_ok("select relu",
           [](const Arrays& a) {
             Array zero = lax::convert_element_type(Array(0.0), jx::float64);
             return Arrays{lax::select(lax::gt(a[0], lax::reshape(zero, {1})), lax::tanh(a[0]),
                                       lax::broadcast_in_dim(zero, {5}, {}))};
           },
           {vec({-1.0, -0.3, 0.2, 0.9, 2.0})});
}

TEST(GradConvertSelect, Clamp) {
  // Scalar bounds and full-shape bounds, x strictly inside and outside them.
  Array x = vec({-2.0, -0.5, 0.3, 0.8, 3.0});
  grads_ok("clamp scalar bounds",
           [](const Arrays& a) { return Arrays{lax::clamp(a[0], a[1], a[2])}; },
           {f64(-1.0), x, f64(1.0)});
  grads_ok("clamp array bounds",
           [](const Arrays& a) { return Arrays{lax::clamp(a[0], a[1], a[2])}; },
           {vec({-1, -1, 0.5, 1, 1}), x, vec({1, 0, 2, 2, 2.5})});
  // d/dlo, d/dx, d/dhi by hand: lo wins for x < lo, hi for x > hi, x strictly inside.
  auto [glo, gx, ghi] = jx::grad<0, 1, 2>([](const Array& lo, const Array& v, const Array& hi) {
    return jnp::sum(lax::clamp(lo, v, hi));
  })(f64(-1.0), x, f64(1.0));
  EXPECT_EQ(glo.item<double>(), 1.0);
  EXPECT_EQ(gx.to_vector<double>(), (std::vector<double>{0, 1, 1, 1, 0}));
  EXPECT_EQ(ghi.item<double>(), 1.0);
  // JAX at ties (x == lo or x == hi): zero for every operand.
  auto [tlo, tx, thi] = jx::grad<0, 1, 2>([](const Array& lo, const Array& v, const Array& hi) {
    return jnp::sum(lax::clamp(lo, v, hi));
  })(f64(-1.0), vec({-1.0, 1.0}), f64(1.0));
  EXPECT_EQ(tlo.item<double>(), 0.0);
  EXPECT_EQ(tx.to_vector<double>(), (std::vector<double>{0, 0}));
  EXPECT_EQ(thi.item<double>(), 0.0);
}

TEST(GradConvertSelect, BitcastHasZeroTangent) {
  auto f = [](const Arrays& a) {
    Array bits = lax::bitcast_convert_type(a[0], jx::int64);
    return Arrays{lax::convert_element_type(bits, jx::float64)};
  };
  auto [out, t] = jx::ad::jvp_flat(f, {vec({1.0, 2.0})}, {vec({1.0, 1.0})});
  EXPECT_EQ(t[0].to_vector<double>(), (std::vector<double>{0, 0}));
}

// ---------------------------------------------------------------- linear transposes

// The Jacobian of a one-input, one-output linear f column by column (forward) and row by
// row (transpose), both as row-major [out, in] matrices.
std::vector<double> jacobian(const jx::ad::FlatFn& f, const Array& x, bool reverse) {
  jx::ad::LinearFn lin = jx::ad::linearize_flat(f, {x});
  Shape out_shape = lin.out_types()[0].first;
  int64_t n = x.size(), m = out_shape.numel();
  std::vector<double> J(static_cast<size_t>(n * m));
  int64_t count = reverse ? m : n;
  for (int64_t k = 0; k < count; ++k) {
    std::vector<double> e(static_cast<size_t>(reverse ? m : n), 0.0);
    e[size_t(k)] = 1.0;
    if (reverse) {
      Array ct = lin.transpose({jnp::array<double>(e, out_shape)})[0];
      std::vector<double> row = ct.astype(jx::float64).to_vector<double>();
      for (int64_t j = 0; j < n; ++j) J[size_t(k * n + j)] = row[size_t(j)];
    } else {
      Array t = lin.apply({jnp::array<double>(e, x.shape()).astype(x.dtype())})[0];
      std::vector<double> col = t.astype(jx::float64).to_vector<double>();
      for (int64_t i = 0; i < m; ++i) J[size_t(i * n + k)] = col[size_t(i)];
    }
  }
  return J;
}

void expect_jacobian(const char* what, const jx::ad::FlatFn& f, const Array& x,
                     const std::vector<double>& expected) {
  EXPECT_EQ(jacobian(f, x, false), expected) << what << " (forward)";
  EXPECT_EQ(jacobian(f, x, true), expected) << what << " (transpose)";
}

TEST(GradTranspose, LinearPrimitivesAgainstExplicitMatrices) {
  Array x = jnp::array<double>({1.0, 2.0}, Shape{2, 1});
  Array c = jnp::array<double>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  expect_jacobian("neg", [](const Arrays& a) { return Arrays{lax::neg(a[0])}; }, x, {-1, 0, 0, -1});
  expect_jacobian("copy", [](const Arrays& a) { return Arrays{lax::copy(a[0])}; }, x, {1, 0, 0, 1});
  // x [2,1] broadcast against c [2,3]: output (i,k) depends on x_i.
  expect_jacobian("add", [&](const Arrays& a) { return Arrays{lax::add(a[0], c)}; }, x,
                  {1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1});
  expect_jacobian("add rhs", [&](const Arrays& a) { return Arrays{lax::add(c, a[0])}; }, x,
                  {1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1});
  expect_jacobian("sub lhs", [&](const Arrays& a) { return Arrays{lax::sub(a[0], c)}; }, x,
                  {1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1});
  expect_jacobian("sub rhs", [&](const Arrays& a) { return Arrays{lax::sub(c, a[0])}; }, x,
                  {-1, 0, -1, 0, -1, 0, 0, -1, 0, -1, 0, -1});
  expect_jacobian("mul lhs", [&](const Arrays& a) { return Arrays{lax::mul(a[0], c)}; }, x,
                  {1, 0, 2, 0, 3, 0, 0, 4, 0, 5, 0, 6});
  expect_jacobian("mul rhs", [&](const Arrays& a) { return Arrays{lax::mul(c, a[0])}; }, x,
                  {1, 0, 2, 0, 3, 0, 0, 4, 0, 5, 0, 6});
  Array d = jnp::array<double>({1, 2, 4, 8, 0.5, 0.25}, Shape{2, 3});
  expect_jacobian("div numerator", [&](const Arrays& a) { return Arrays{lax::div(a[0], d)}; }, x,
                  {1, 0, 0.5, 0, 0.25, 0, 0, 0.125, 0, 2, 0, 4});
  // Both operands the same linear input: add/sub/mul-by-constant compose.
  expect_jacobian(
      "x + x - 3x",
      [](const Arrays& a) {
        Array three = lax::convert_element_type(Array(3.0), jx::float64).reshape({1, 1});
        return Arrays{lax::sub(lax::add(a[0], a[0]), lax::mul(three, a[0]))};
      },
      x, {-1, 0, 0, -1});
  // float32 -> float64 and back: identity matrices in the other dtype.
  expect_jacobian(
      "convert",
      [](const Arrays& a) { return Arrays{lax::convert_element_type(a[0], jx::float64)}; },
      jnp::array<float>({1.0f, 2.0f}), {1, 0, 0, 1});
  // select_n picks rows of the identity; the zero case gets nothing.
  Array w = jnp::array<int32_t>({1, 0, 1}, Shape{3});
  Array zeros3 = jnp::zeros({3}, jx::float64);
  expect_jacobian("select_n case 1",
                  [&](const Arrays& a) {
                    return Arrays{lax::select_n(w, {zeros3, a[0]})};
                  },
                  vec({1, 2, 3}), {1, 0, 0, 0, 0, 0, 0, 0, 1});
  // A rank-0 case broadcast to every element it is selected for.
  expect_jacobian("select_n scalar case",
                  [&](const Arrays& a) {
                    return Arrays{lax::select_n(w, {a[0], zeros3})};
                  },
                  f64(2.0), {0, 1, 0});
}

// ---------------------------------------------------------------- registry

TEST(GradRegistry, FamiliesHaveAllRules) {
  using jx::ops::Prim;
  std::vector<std::string> missing;
  for (int i = 0; i < jx::ops::kNumPrims; ++i) {
    const jx::ops::PrimitiveInfo& p = jx::ops::info(Prim(i));
    std::string fam = p.family;
    if (fam != "unary" && fam != "binary" && fam != "convert_select" && fam != "special")
      continue;
    if (!p.jvp && !p.zero_tangent) missing.push_back(std::string(p.name) + ": jvp");
    if (!p.transpose && !p.not_linear) missing.push_back(std::string(p.name) + ": transpose");
    if (p.transpose && p.not_linear) missing.push_back(std::string(p.name) + ": both");
  }
  EXPECT_EQ(missing, std::vector<std::string>{});
}

}  // namespace
