// The special-function primitives (jx/lax/special.h, src/ops/special.cpp): the fast kernel
// against its reference, values where jx and JAX differ from SciPy (hand-derived from
// XLA's algorithms), check_grads through every differentiable argument, the arguments that
// are not differentiable, vmap against a loop, jit against eager, the jaxpr, broadcasting,
// half-precision dtypes and the errors. Values against SciPy are in
// tests/scipy/special_functions_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "backend/cpu/special.h"
#include "core/array_impl.h"
#include "jx/jx.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"
#include "transforms/vmap_testing.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::check_grads;
using jx::testing::expect_error;
using Arrays = std::vector<Array>;

constexpr double kInf = std::numeric_limits<double>::infinity();

Array f64(const std::vector<double>& v) { return jnp::array<double>(v); }
std::vector<double> vals(const Array& x) { return x.astype(DType::Float64).to_vector<double>(); }

// The primitives as functions of a list of operands, for the tables below.
struct Prim {
  const char* name;
  int arity;
  std::function<Array(const Arrays&)> f;
  // Maps arbitrary values into the interior of the domain (for vmap, jit and the kernel).
  std::function<Arrays(const Arrays&)> domain;
};

Array pos(const Array& v) { return lax::add(lax::abs(v), jnp::full_like(v, 0.25)); }
Array unit(const Array& v) { return lax::logistic(v); }  // (0, 1)
Array off_pole(const Array& v) { return lax::add(v, jnp::full_like(v, 0.125)); }

const std::vector<Prim>& prims() {
  static const std::vector<Prim> p = {
      {"igamma", 2, [](const Arrays& a) { return lax::igamma(a[0], a[1]); },
       [](const Arrays& a) { return Arrays{pos(a[0]), lax::abs(a[1])}; }},
      {"igammac", 2, [](const Arrays& a) { return lax::igammac(a[0], a[1]); },
       [](const Arrays& a) { return Arrays{pos(a[0]), lax::abs(a[1])}; }},
      {"igamma_grad_a", 2, [](const Arrays& a) { return lax::igamma_grad_a(a[0], a[1]); },
       [](const Arrays& a) { return Arrays{pos(a[0]), lax::abs(a[1])}; }},
      {"regularized_incomplete_beta", 3,
       [](const Arrays& a) { return lax::betainc(a[0], a[1], a[2]); },
       [](const Arrays& a) { return Arrays{pos(a[0]), pos(a[1]), unit(a[2])}; }},
      // x > 1, and q or x off the poles at 0, -1, ... (the vmap checker's values are
      // multiples of 1/4).
      {"zeta", 2, [](const Arrays& a) { return lax::zeta(a[0], a[1]); },
       [](const Arrays& a) {
         return Arrays{lax::add(pos(a[0]), jnp::full_like(a[0], 1.0)), off_pole(a[1])};
       }},
      {"polygamma", 2, [](const Arrays& a) { return lax::polygamma(a[0], a[1]); },
       [](const Arrays& a) { return Arrays{lax::floor(lax::abs(a[0])), off_pole(a[1])}; }},
      {"bessel_i0e", 1, [](const Arrays& a) { return lax::bessel_i0e(a[0]); },
       [](const Arrays& a) { return Arrays{lax::mul(a[0], jnp::full_like(a[0], 4.0))}; }},
      {"bessel_i1e", 1, [](const Arrays& a) { return lax::bessel_i1e(a[0]); },
       [](const Arrays& a) { return Arrays{lax::mul(a[0], jnp::full_like(a[0], 4.0))}; }},
  };
  return p;
}

// NaN-aware bitwise-or-value equality: the same finite values, infinities and NaNs.
void expect_identical(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  const std::vector<double> g = vals(got), w = vals(want);
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]))
      EXPECT_TRUE(std::isnan(g[i])) << what << " [" << i << "]";
    else
      EXPECT_EQ(g[i], w[i]) << what << " [" << i << "]";
  }
}

// ---- the kernel against its reference ----

TEST(LaxSpecial, KernelMatchesReferenceWithBroadcastingAndThreads) {
  using jx::cpu::SpecialOp;
  const SpecialOp ops[] = {SpecialOp::Igamma, SpecialOp::Igammac,   SpecialOp::IgammaGradA,
                           SpecialOp::Betainc, SpecialOp::Zeta,     SpecialOp::Polygamma,
                           SpecialOp::BesselI0e, SpecialOp::BesselI1e};
  // [37, 1] x [1, 53] x [37, 53]: size-1 dims broadcast; [5000] runs on several threads.
  const std::vector<std::vector<Shape>> layouts = {
      {{37, 1}, {1, 53}, {37, 53}}, {{5000}, {5000}, {5000}}, {{1}, {7}, {1}}};
  for (DType t : {DType::Float64, DType::Float32, DType::Float16}) {
    for (const auto& shapes : layouts) {
      for (SpecialOp op : ops) {
        const int n = jx::cpu::special_arity(op);
        Arrays in;
        std::vector<const void*> data;
        std::vector<std::vector<int64_t>> dims;
        Shape out_shape = shapes[0];
        for (int k = 0; k < n; ++k) {
          const Shape& s = shapes[size_t(k)];
          // Values in (0, 12), inside every domain once betainc's x is put in (0, 1) and
          // polygamma's order rounded down.
          Array v = unit(jx::testing::rand_f64(s, unsigned(7 + k), -3, 3)) * 12.0;
          if (op == SpecialOp::Betainc && k == 2) v = unit(v);
          if (op == SpecialOp::Polygamma && k == 0) v = jnp::floor(v);
          in.push_back(v.astype(t));
          for (size_t d = 0; d < s.size(); ++d) out_shape[d] = std::max(out_shape[d], s[d]);
        }
        for (const Array& a : in) {
          data.push_back(jx::detail::raw_data(a));
          dims.push_back(a.shape().vec());
        }
        std::vector<const int64_t*> dim_ptrs;
        for (const auto& d : dims) dim_ptrs.push_back(d.data());
        const int64_t total = out_shape.numel();
        const size_t bytes = size_t(total) * jx::itemsize(t);
        std::vector<char> fast(bytes), ref(bytes);
        std::vector<int64_t> os = out_shape.vec();
        jx::cpu::special(op, t, data.data(), dim_ptrs.data(), fast.data(), os.data(),
                         int(os.size()));
        jx::cpu::special_reference(op, t, data.data(), dim_ptrs.data(), ref.data(), os.data(),
                                   int(os.size()));
        EXPECT_EQ(std::memcmp(fast.data(), ref.data(), bytes), 0)
            << "op " << int(op) << " " << jx::dtype_name(t) << " " << jx::shape_str(out_shape);
      }
    }
  }
}

// ---- values where jx or JAX differ from SciPy (docs/scipy.md) ----

TEST(LaxSpecial, JaxEdgeValuesWhereSciPyDiffers) {
  // betainc: a = 0 (or b = inf) is a point mass at 0 and b = 0 (or a = inf) one at 1, as
  // XLA's result_is_zero / result_is_one (SciPy 1.10: NaN).
  EXPECT_EQ(vals(lax::betainc(f64({0, 0, 2, 2, kInf}), f64({1, 1, 0, 0, 1}),
                              f64({0.5, 0, 0.5, 1, 0.5}))),
            (std::vector<double>{1, 0, 0, 1, 0}));
  EXPECT_TRUE(std::isnan(vals(lax::betainc(f64({0}), f64({0}), f64({0.5})))[0]));
  // zeta at the poles q = 0, -1, ...: +inf for even x, NaN for odd x (SciPy: +inf both),
  // and so polygamma of even order at the poles is NaN (SciPy: -inf).
  const std::vector<double> z = vals(lax::zeta(f64({2, 3, 4, 3}), f64({0, 0, -2, -1})));
  EXPECT_EQ(z[0], kInf);
  EXPECT_TRUE(std::isnan(z[1]));
  EXPECT_EQ(z[2], kInf);
  EXPECT_TRUE(std::isnan(z[3]));
  const std::vector<double> p = vals(lax::polygamma(f64({1, 2, 1.5, -1}), f64({0, 0, 2, 2})));
  EXPECT_EQ(p[0], kInf);
  for (size_t i = 1; i < 4; ++i) EXPECT_TRUE(std::isnan(p[i])) << i;  // pole; n not natural
  // igamma_grad_a is 0 at x = 0 and x = inf and NaN for a <= 0 or x < 0.
  const std::vector<double> g =
      vals(lax::igamma_grad_a(f64({2, 2, 0, -1, 2}), f64({0, kInf, 1, 1, -1})));
  EXPECT_EQ(g[0], 0.0);
  EXPECT_EQ(g[1], 0.0);
  for (size_t i = 2; i < 5; ++i) EXPECT_TRUE(std::isnan(g[i])) << i;
  // i1e is odd with i1e(-0) = -0; i0e(0) = 1.
  EXPECT_TRUE(std::signbit(vals(lax::bessel_i1e(f64({-0.0})))[0]));
  EXPECT_EQ(vals(lax::bessel_i0e(f64({0.0})))[0], 1.0);
}

TEST(LaxSpecial, BroadcastsSizeOneDimsAndKeepsWeakType) {
  Array a = jnp::array<double>({0.5, 2.5, 10.0}, Shape{3, 1});
  Array x = jnp::array<double>({0.25, 1.0, 3.0, 12.0}, Shape{1, 4});
  Array got = lax::igamma(a, x);
  ASSERT_EQ(got.shape(), (Shape{3, 4}));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      EXPECT_EQ(got(i, j).item<double>(), lax::igamma(a(i, 0), x(0, j)).item<double>());
  // The result is weak only if every operand is (lax's naryop rule).
  Array w = lax::convert_element_type(Array(2.0), DType::Float32, true);
  EXPECT_TRUE(lax::bessel_i0e(w).weak_type());
  EXPECT_FALSE(lax::zeta(w, jnp::scalar(1.5, DType::Float32)).weak_type());
}

TEST(LaxSpecial, HalfPrecisionComputesInDoubleAndRoundsOnce) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    Array a = jnp::array<double>({0.5, 2.5, 10.0}).astype(t);
    Array x = jnp::array<double>({0.25, 3.0, 12.0}).astype(t);
    Array got = lax::igamma(a, x);
    EXPECT_EQ(got.dtype(), t);
    Array want = lax::igamma(a.astype(DType::Float64), x.astype(DType::Float64)).astype(t);
    expect_identical(got, want, jx::dtype_name(t));
  }
}

// ---- derivatives ----

using jx::testing::Fn;

// f of the listed operands, the others held constant.
Fn partial(std::function<Array(const Arrays&)> f, Arrays all, std::vector<size_t> vary) {
  return [f, all, vary](const Arrays& v) {
    Arrays args = all;
    for (size_t i = 0; i < vary.size(); ++i) args[vary[i]] = v[i];
    return Arrays{f(args)};
  };
}

TEST(LaxSpecial, GradsThroughEveryDifferentiableArgument) {
  // Points on both sides of each algorithm's switch (igamma: x = a; betainc: x = (a+1) /
  // (a+b+2); Bessel: |x| = 8), away from the kinks (0 for the Bessel functions).
  const Array a = f64({0.5, 2.5, 6.0, 3.0}), x = f64({0.25, 4.0, 5.5, 2.0});
  const jx::testing::GradCheckOptions o1{.order = 1, .atol = 1e-6, .rtol = 1e-5};
  const jx::testing::GradCheckOptions o2{.order = 2, .atol = 1e-6, .rtol = 1e-5};
  for (const char* name : {"igamma", "igammac"}) {
    SCOPED_TRACE(name);
    std::function<Array(const Arrays&)> f = [name](const Arrays& v) {
      return std::string(name) == "igammac" ? lax::igammac(v[0], v[1]) : lax::igamma(v[0], v[1]);
    };
    // In a the derivative is igamma_grad_a, which has no derivative in a: order 1.
    EXPECT_NO_THROW(check_grads(partial(f, {a, x}, {0, 1}), {a, x}, o1));
    EXPECT_NO_THROW(check_grads(partial(f, {a, x}, {1}), {x}, o2));
  }
  auto grad_a = [](const Arrays& v) { return lax::igamma_grad_a(v[0], v[1]); };
  EXPECT_NO_THROW(check_grads(partial(grad_a, {a, x}, {1}), {x}, o2));
  const Array b = f64({1.5, 0.75, 20.0, 3.0}), u = f64({0.125, 0.875, 0.25, 0.5});
  auto betainc = [](const Arrays& v) { return lax::betainc(v[0], v[1], v[2]); };
  EXPECT_NO_THROW(check_grads(partial(betainc, {a, b, u}, {2}), {u}, o2));
  const Array s = f64({2.0, 3.5, 1.5, 6.0}), q = f64({0.5, 1.0, 2.5, -1.5});
  auto zeta = [](const Arrays& v) { return lax::zeta(v[0], v[1]); };
  EXPECT_NO_THROW(check_grads(partial(zeta, {s, q}, {1}), {q}, o2));
  const Array m = f64({0, 1, 2, 3}), y = f64({0.75, 2.5, -1.5, 10.0});
  auto polygamma = [](const Arrays& v) { return lax::polygamma(v[0], v[1]); };
  EXPECT_NO_THROW(check_grads(partial(polygamma, {m, y}, {1}), {y}, o2));
  const Array bx = f64({-9.5, -2.0, 0.5, 3.0, 7.5, 12.0});
  EXPECT_NO_THROW(check_grads([](const Arrays& v) { return Arrays{lax::bessel_i0e(v[0])}; },
                              {bx}, o2));
  EXPECT_NO_THROW(check_grads([](const Arrays& v) { return Arrays{lax::bessel_i1e(v[0])}; },
                              {bx}, o2));
}

TEST(LaxSpecial, DerivativeValues) {
  auto d = [](double v) { return jnp::scalar(v, DType::Float64); };
  auto scalar_grad = [](std::function<Array(const Array&)> f, double at) {
    return jx::grad(f)(jnp::scalar(at, DType::Float64)).item<double>();
  };
  // d/dx P(a, x) is the gamma density; d/da is igamma_grad_a.
  const double a = 2.5, x = 1.5;
  const double density = std::exp(-x + (a - 1) * std::log(x) - std::lgamma(a));
  EXPECT_NEAR(scalar_grad([&](const Array& v) { return lax::igamma(d(a), v); }, x), density,
              1e-15);
  EXPECT_NEAR(scalar_grad([&](const Array& v) { return lax::igammac(d(a), v); }, x), -density,
              1e-15);
  EXPECT_EQ(scalar_grad([&](const Array& v) { return lax::igamma(v, d(x)); }, a),
            lax::igamma_grad_a(d(a), d(x)).item<double>());
  // d/dq zeta(x, q) = -x zeta(x + 1, q); d/dx polygamma(m, x) = polygamma(m + 1, x).
  EXPECT_NEAR(scalar_grad([&](const Array& v) { return lax::zeta(d(2.0), v); }, 1.0),
              -2.0 * 1.2020569031595942, 1e-14);
  EXPECT_NEAR(scalar_grad([&](const Array& v) { return lax::polygamma(d(1.0), v); }, 1.0),
              -2.0 * 1.2020569031595942, 1e-14);
  // d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b): for (2, 3) that is 12 x (1-x)^2.
  EXPECT_NEAR(
      scalar_grad([&](const Array& v) { return lax::betainc(d(2.0), d(3.0), v); }, 0.25),
      12 * 0.25 * 0.75 * 0.75, 1e-14);
  // i1e'(0) = 1/2 (JAX's limit for |x| <= eps), i0e'(x) = i1e(x) - sign(x) i0e(x).
  EXPECT_EQ(scalar_grad([](const Array& v) { return lax::bessel_i1e(v); }, 0.0), 0.5);
  const double i0e2 = 0.308508322553671, i1e2 = 0.2152692892489377;  // SciPy i0e(2), i1e(2)
  EXPECT_NEAR(scalar_grad([](const Array& v) { return lax::bessel_i0e(v); }, 2.0), i1e2 - i0e2,
              1e-15);
}

TEST(LaxSpecial, ArgumentsWithoutADerivativeThrow) {
  const Array c = jnp::scalar(2.0, DType::Float64), u = jnp::scalar(0.5, DType::Float64);
  expect_error<jx::ValueError>(
      [&] { jx::grad([&](const Array& a) { return lax::betainc(a, c, u); })(c); },
      {"[regularized_incomplete_beta]", "with respect to a", "in x only"});
  expect_error<jx::ValueError>(
      [&] { jx::grad([&](const Array& b) { return lax::betainc(c, b, u); })(c); },
      {"[regularized_incomplete_beta]", "with respect to b"});
  expect_error<jx::ValueError>(
      [&] { jx::grad([&](const Array& m) { return lax::polygamma(m, u); })(c); },
      {"[polygamma]", "with respect to m", "stop_gradient"});
  expect_error<jx::ValueError>(
      [&] { jx::grad([&](const Array& s) { return lax::zeta(s, u); })(c); },
      {"[zeta]", "with respect to x"});
  // The second derivative of igamma in a.
  expect_error<jx::ValueError>(
      [&] {
        jx::grad(jx::grad([&](const Array& a) { return lax::igamma(a, u); }))(c);
      },
      {"[igamma_grad_a]", "with respect to a"});
  // stop_gradient on the order keeps the rest differentiable.
  EXPECT_NO_THROW(jx::grad([&](const Array& m) {
    return lax::mul(lax::polygamma(jx::stop_gradient(m), u), m);
  })(c));
}

// ---- transformations ----

TEST(LaxSpecial, VmapEqualsLoop) {
  for (const Prim& p : prims()) {
    SCOPED_TRACE(p.name);
    auto f = [&p](const Arrays& a) { return Arrays{p.f(p.domain(a))}; };
    std::vector<vmap_testing::Arg> args(size_t(p.arity), {Shape{2, 3}, DType::Float64});
    vmap_testing::check_vmap(p.name, f, args);
    args.assign(size_t(p.arity), {Shape{4}, DType::Float32});
    vmap_testing::check_vmap(p.name, f, args);
  }
}

TEST(LaxSpecial, JitEqualsEager) {
  // The kernels are library calls under jit: identical values. The inputs are mapped into
  // the domains eagerly: jit fuses that mapping (logistic, exp, ...) into generated code,
  // which may differ from the eager kernels by an ulp or two with other compile flags or
  // vector widths (the sanitizer builds, AVX2); tests/compiler/jit_registry_test.cpp
  // covers the fused neighbours with that tolerance.
  for (const Prim& p : prims()) {
    SCOPED_TRACE(p.name);
    for (DType t : {DType::Float32, DType::Float64}) {
      Arrays in;
      for (int k = 0; k < p.arity; ++k)
        in.push_back(jx::testing::rand_f64({5, 7}, unsigned(3 + k), -4, 4).astype(t));
      const Arrays d = p.domain(in);
      auto f = [&p](const Arrays& a) { return p.f(a); };
      expect_identical(jx::jit(f)(d), f(d), p.name);
    }
  }
}

TEST(LaxSpecial, Jaxpr) {
  Array a = jnp::zeros(Shape{3}), x = jnp::zeros(Shape{3});
  auto f = [](const Array& p, const Array& q, const Array& r) { return lax::betainc(p, q, r); };
  EXPECT_EQ(jx::make_jaxpr(f)(a, a, x).str(),
            "{ lambda ; a:f32[3] b:f32[3] c:f32[3]. let\n"
            "    d:f32[3] = regularized_incomplete_beta a b c\n"
            "  in (d,) }");
  auto g = [](const Array& p, const Array& q) {
    Array r = lax::igamma(p, q);
    return lax::add(r, lax::bessel_i1e(q));
  };
  EXPECT_EQ(jx::make_jaxpr(g)(a, x).str(),
            "{ lambda ; a:f32[3] b:f32[3]. let\n"
            "    c:f32[3] = igamma a b\n"
            "    d:f32[3] = bessel_i1e b\n"
            "    e:f32[3] = add c d\n"
            "  in (e,) }");
}

// ---- errors ----

TEST(LaxSpecial, Errors) {
  const Array i = jnp::array<int32_t>({1, 2});
  expect_error<jx::DTypeError>([&] { lax::igamma(i, i); },
                               {"[igamma] needs floating operands (a, x)", "i32[2], i32[2]",
                                "jx::scipy::special::gammainc"});
  expect_error<jx::DTypeError>([&] { lax::bessel_i0e(i); }, {"[bessel_i0e]", "special::i0e"});
  expect_error<jx::DTypeError>(
      [&] { lax::zeta(jnp::zeros({2}), jnp::zeros({2}, DType::Float64)); },
      {"[zeta] operands must have the same dtype", "f32[2], f64[2]"});
  expect_error<jx::ShapeError>(
      [&] { lax::betainc(jnp::zeros({2}), jnp::zeros({3}), jnp::zeros({2})); },
      {"[regularized_incomplete_beta]", "f32[2], f32[3], f32[2]", "do not broadcast"});
  expect_error<jx::ShapeError>([&] { lax::polygamma(jnp::zeros({2}), jnp::zeros({2, 2})); },
                               {"[polygamma] operands must have equal rank", "jnp"});
}

}  // namespace
