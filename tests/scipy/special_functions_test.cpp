// jx::scipy::special on the special primitives (gammainc, gammaincc, betainc, zeta,
// polygamma, i0e, i1e, i0, i1, and lax::igamma_grad_a): values against SciPy 1.10 float64
// goldens (tests/golden/gen_scipy.py; igamma_grad_a against mpmath) in float64 and
// float32, measured as the largest relative error and printed; dtypes and promotion,
// NumPy broadcasting, derivatives, jit and vmap, and errors. The primitives' own
// transformation rules and JAX's edge values are tested in tests/lax/special_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "jx/scipy.h"
#include "scipy/scipy_checks.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"

namespace {

using namespace jx::testing::scipy;
namespace jnp = jx::numpy;
namespace lax = jx::lax;
namespace sp = jx::scipy::special;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::check_grads;
using jx::testing::expect_error;
using Arrays = std::vector<Array>;

// The largest relative error of `got` against golden `name`; NaN and infinities must match
// exactly. Values below `tiny` in magnitude (float32 underflow) are checked absolutely,
// values above `huge` (float32 overflow) must be infinite.
double max_rel_error(const std::string& name, const Array& got, double tiny,
                     double huge = std::numeric_limits<double>::infinity()) {
  const Array want_arr = golden(name);
  EXPECT_EQ(got.shape(), want_arr.shape()) << name;
  const std::vector<double> g = got.astype(DType::Float64).to_vector<double>();
  const std::vector<double> w = want_arr.to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < w.size() && i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << name << " [" << i << "]: " << g[i] << ", want NaN";
    } else if (std::isinf(w[i]) || std::fabs(w[i]) > huge) {
      EXPECT_EQ(g[i], std::copysign(std::numeric_limits<double>::infinity(), w[i]))
          << name << " [" << i << "]";
    } else if (std::fabs(w[i]) < tiny) {
      EXPECT_LE(std::fabs(g[i] - w[i]), tiny) << name << " [" << i << "]";
    } else {
      const double r = std::fabs(g[i] - w[i]) / std::fabs(w[i]);
      EXPECT_FALSE(std::isnan(r)) << name << " [" << i << "]: " << g[i];
      if (r > worst) worst = r;
    }
  }
  return worst;
}

using Fn = std::function<Array(const Arrays&)>;
struct Case {
  const char* golden;
  std::vector<const char*> inputs;
  Fn fn;
  double tol64;  // largest relative error allowed against SciPy in float64
  const char* why = "";
  double tol32 = 1.2e-7;  // float32: one rounding of a double result, at most an ulp
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      // Measured (float64): 1.3e-11 at a = 1e4, x = 9900, where the prefactor
      // a log x - x - lgamma(a) cancels to ~1e5 * eps; 1e-13 and below for a <= 100.
      {"gammainc", {"gammainc_a", "gammainc_x"}, [](const Arrays& a) { return sp::gammainc(a[0], a[1]); },
       3e-11, "a = 1e4"},
      {"gammaincc", {"gammainc_a", "gammainc_x"}, [](const Arrays& a) { return sp::gammaincc(a[0], a[1]); },
       1e-11, "a = 1e4"},
      {"igamma_grad_a", {"igamma_grad_a_a", "igamma_grad_a_x"},
       [](const Arrays& a) { return lax::igamma_grad_a(a[0], a[1]); }, 2e-13},
      // Measured 1.2e-13: the lgamma differences of the prefactor at a, b = 200, 150.
      {"betainc", {"betainc_a", "betainc_b", "betainc_x"},
       [](const Arrays& a) { return sp::betainc(a[0], a[1], a[2]); }, 5e-13},
      // For q < 0 SciPy sums the same alternating terms as jx (both lose ~1e-12 against the
      // exact value at q = -20.5), so they agree closely.
      {"zeta", {"zeta_x", "zeta_q"}, [](const Arrays& a) { return sp::zeta(a[0], a[1]); }, 2e-15},
      {"polygamma", {"polygamma_n", "polygamma_x"},
       [](const Arrays& a) { return sp::polygamma(a[0].astype(DType::Int32), a[1]); }, 4e-15},
      {"i0e", {"bessel_x"}, [](const Arrays& a) { return sp::i0e(a[0]); }, 1e-15},
      {"i1e", {"bessel_x"}, [](const Arrays& a) { return sp::i1e(a[0]); }, 1e-15},
      // exp(|x|) * i0e(x): two roundings, and in float32 float32's exp.
      {"i0", {"bessel_x"}, [](const Arrays& a) { return sp::i0(a[0]); }, 1e-15, "", 2.4e-7},
      {"i1", {"bessel_x"}, [](const Arrays& a) { return sp::i1(a[0]); }, 1e-15, "", 2.4e-7},
  };
  return c;
}

TEST(ScipySpecialFunctions, MatchSciPyInFloat64AndFloat32) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.golden);
    Arrays in64, in32;
    for (const char* name : c.inputs) {
      in64.push_back(golden(name));
      in32.push_back(golden(name).astype(DType::Float32));
    }
    Array y64 = c.fn(in64), y32 = c.fn(in32);
    EXPECT_EQ(y64.dtype(), DType::Float64);
    EXPECT_EQ(y32.dtype(), DType::Float32);
    const double e64 = max_rel_error(c.golden, y64, 1e-300);
    // float32 is evaluated in double and rounded once: half an ulp (6e-8) plus the float64
    // error; results below float32's normal range are compared absolutely.
    const double e32 = max_rel_error(c.golden, y32, 1.2e-38, 3.4e38);
    EXPECT_LE(e64, c.tol64) << c.why;
    EXPECT_LE(e32, c.tol32);
    std::cout << "[ accuracy ] " << c.golden << ": max relative error vs SciPy " << e64
              << " (float64), " << e32 << " (float32)\n";
  }
}

TEST(ScipySpecialFunctions, DtypesAndBroadcasting) {
  const Array i = jnp::array<int32_t>({1, 2, 3});
  EXPECT_EQ(sp::gammainc(i, i).dtype(), DType::Float32);
  EXPECT_EQ(sp::i0(i).dtype(), DType::Float32);
  EXPECT_EQ(sp::polygamma(i, i).dtype(), DType::Float32);
  const Array x = f64({0.5, 2.0, 3.5});
  // C++ scalars are weak: the array's dtype wins.
  EXPECT_EQ(sp::gammainc(2.5, x).dtype(), DType::Float64);
  EXPECT_EQ(sp::gammaincc(2.5, x.astype(DType::Float32)).dtype(), DType::Float32);
  EXPECT_EQ(sp::polygamma(1, x.astype(DType::Float32)).dtype(), DType::Float32);
  EXPECT_EQ(sp::betainc(2.0, 3.0, x / 4.0).dtype(), DType::Float64);
  EXPECT_EQ(sp::zeta(x + 1.0, 1.0).dtype(), DType::Float64);
  // NumPy broadcasting: [3, 1] with [4] gives [3, 4].
  const Array a = jnp::array<double>({0.5, 2.5, 10.0}, Shape{3, 1});
  const Array xs = f64({0.25, 1.0, 3.0, 12.0});
  Array p = sp::gammainc(a, xs);
  ASSERT_EQ(p.shape(), (Shape{3, 4}));
  EXPECT_EQ(p(1, 2).item<double>(), lax::igamma(jnp::scalar(2.5, DType::Float64),
                                                jnp::scalar(3.0, DType::Float64))
                                        .item<double>());
  EXPECT_EQ(sp::betainc(a, 2.0, jnp::array<double>({0.5, 0.25})).shape(), (Shape{3, 2}));
}

TEST(ScipySpecialFunctions, Derivatives) {
  const jx::testing::GradCheckOptions o2{.order = 2, .atol = 1e-6, .rtol = 1e-5};
  // i0 has JAX's custom rule i1 (also at 0, where exp(|x|) has a kink); i1 is composed.
  EXPECT_NO_THROW(check_grads([](const Arrays& v) { return Arrays{sp::i0(v[0])}; },
                              {f64({-9.0, -1.5, 0.0, 2.0, 10.0})}, o2));
  EXPECT_NO_THROW(check_grads([](const Arrays& v) { return Arrays{sp::i1(v[0])}; },
                              {f64({-9.0, -1.5, 0.5, 2.0, 10.0})}, o2));
  EXPECT_EQ(jx::grad(sp::i1)(jnp::scalar(0.0, DType::Float64)).item<double>(), 0.5);
  EXPECT_NEAR(jx::grad(sp::i0)(jnp::scalar(2.0, DType::Float64)).item<double>(),
              1.5906368546373291, 1e-14);  // SciPy i1(2)
  // gammainc in both arguments (order 1: igamma has no second derivative in a), through
  // promotion and broadcasting.
  EXPECT_NO_THROW(check_grads(
      [](const Arrays& v) { return Arrays{sp::gammainc(v[0], v[1])}; },
      {f64({0.75, 3.0, 8.0}), f64({1.5})}, {.order = 1, .atol = 1e-6, .rtol = 1e-5}));
  EXPECT_NO_THROW(check_grads([](const Arrays& v) { return Arrays{sp::betainc(2.5, 1.5, v[0])}; },
                              {f64({0.125, 0.5, 0.875})}, o2));
  EXPECT_NO_THROW(check_grads([](const Arrays& v) { return Arrays{sp::polygamma(2, v[0])}; },
                              {f64({0.5, 3.0, -1.5})}, o2));
}

TEST(ScipySpecialFunctions, JitAndVmap) {
  const Array x = f64({0.25, 1.5, 4.0, 9.5, 30.0, 0.0});
  const std::vector<std::pair<const char*, std::function<Array(const Array&)>>> fns = {
      {"gammainc", [](const Array& v) { return sp::gammainc(2.5, v); }},
      {"gammaincc", [](const Array& v) { return sp::gammaincc(v + 0.5, 3.0); }},
      {"betainc", [](const Array& v) { return sp::betainc(v + 0.5, 2.0, 0.375); }},
      {"zeta", [](const Array& v) { return sp::zeta(v + 1.5, 0.75); }},
      {"polygamma", [](const Array& v) { return sp::polygamma(3, v + 0.125); }},
      {"i0", sp::i0},
      {"i1e", sp::i1e},
  };
  for (const auto& [name, f] : fns) {
    SCOPED_TRACE(name);
    expect_same(jx::jit(f)(x), f(x), 0, name);
    expect_same(jx::jit(f)(x.astype(DType::Float32)), f(x.astype(DType::Float32)), 0, name);
    const Array rows = jnp::reshape(x, {2, 3});
    std::vector<Array> loop;
    for (int64_t r = 0; r < 2; ++r) loop.push_back(f(rows(r)));
    expect_same(jx::vmap(f)(rows), jnp::stack(loop), 0, name);
  }
}

TEST(ScipySpecialFunctions, Errors) {
  expect_error<jx::ShapeError>([] { sp::gammainc(jnp::zeros({3}), jnp::zeros({4})); },
                               {"[gammainc]", "(3,)", "(4,)"});
  expect_error<jx::ShapeError>(
      [] { sp::betainc(jnp::zeros({2}), jnp::zeros({3}), jnp::zeros({2})); }, "[betainc]");
  expect_error<jx::DTypeError>([] { sp::polygamma(jnp::array<double>({1.0}), f64({2.0})); },
                               {"[polygamma]", "integer dtype", "f64[1]", "astype(jx::int32)"});
  expect_error<jx::DTypeError>([] { sp::polygamma(Array(true), f64({2.0})); }, "[polygamma]");
  // betainc is differentiable in x only, as JAX's.
  expect_error<jx::ValueError>(
      [] { jx::grad([](const Array& a) { return sp::betainc(a, 2.0, 0.5); })(jnp::scalar(2.0, DType::Float64)); },
      "[regularized_incomplete_beta] is not differentiable with respect to a");
}

}  // namespace
