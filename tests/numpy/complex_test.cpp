// complex64 / complex128 end to end: JAX's promotion lattice, jnp functions against NumPy
// (tests/golden/gen_complex.py), JAX's autodiff conventions (hand-derived values, finite
// differences and check_grads), vmap against a loop, jit against eager, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <map>

#include "jx/jx.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::expect_error;
using Arrays = std::vector<Array>;

#include "golden/complex_golden.inc"

Array carray(const std::vector<C>& v, DType t = DType::Complex128) {
  return jnp::array(v).astype(t);
}

// |got - want| <= tol * max(1, |want|) for each element (both parts at once).
void expect_near(const Array& got, const std::vector<C>& want, double tol, const std::string& what) {
  auto g = got.to_vector<C>();
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_LE(std::abs(g[i] - want[i]), tol * std::max(1.0, std::abs(want[i])))
        << what << " [" << i << "]: got " << g[i] << ", want " << want[i];
}

void expect_near_real(const Array& got, const std::vector<double>& want, double tol,
                      const std::string& what) {
  auto g = got.to_vector<double>();
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_LE(std::abs(g[i] - want[i]), tol * std::max(1.0, std::abs(want[i])))
        << what << " [" << i << "]: got " << g[i] << ", want " << want[i];
}

// float32 parts: a few ulps of the inputs' rounding, amplified by the functions' conditioning
// at these arguments (at most about 10); float64: the same in double.
double tol_of(DType t) { return t == DType::Complex64 ? 4e-6 : 1e-13; }

TEST(Complex, PromotionFollowsJaxLattice) {
  using jx::promote_types;
  const DType c64 = DType::Complex64, c128 = DType::Complex128;
  EXPECT_EQ(promote_types(c64, DType::Float32), c64);
  EXPECT_EQ(promote_types(c64, DType::Float64), c128);
  EXPECT_EQ(promote_types(DType::Float64, c64), c128);
  EXPECT_EQ(promote_types(c64, c128), c128);
  EXPECT_EQ(promote_types(c64, DType::Int64), c64);
  EXPECT_EQ(promote_types(c64, DType::UInt64), c64);
  EXPECT_EQ(promote_types(c64, DType::Bool), c64);
  EXPECT_EQ(promote_types(c64, DType::BFloat16), c64);
  EXPECT_EQ(promote_types(c128, DType::Float16), c128);
  EXPECT_TRUE(jx::can_cast(DType::Float32, c64));
  EXPECT_FALSE(jx::can_cast(DType::Float64, c64));
  EXPECT_FALSE(jx::can_cast(c64, DType::Float64));

  // Weak types: a C++ complex is weak, as a Python complex in JAX.
  Array w(std::complex<double>(1, 2));
  EXPECT_EQ(w.dtype(), c64);
  EXPECT_TRUE(w.weak_type());
  auto f32 = jnp::ones(Shape{2}, DType::Float32), f64 = jnp::ones(Shape{2}, DType::Float64);
  auto i32 = jnp::ones(Shape{2}, DType::Int32), bf16 = jnp::ones(Shape{2}, DType::BFloat16);
  auto z64 = jnp::ones(Shape{2}, c64);
  EXPECT_EQ((f32 * w).dtype(), c64);
  EXPECT_EQ((f64 * w).dtype(), c128);
  EXPECT_EQ((i32 + w).dtype(), c64);
  EXPECT_EQ((bf16 + w).dtype(), c64);
  EXPECT_EQ((z64 * 2.0).dtype(), c64);
  EXPECT_EQ((z64 * f64).dtype(), c128);
  EXPECT_FALSE((f32 * w).weak_type());

  EXPECT_EQ(jx::dtype_from_name("complex64"), c64);
  EXPECT_EQ(jx::dtype_from_name("c128"), c128);
  EXPECT_EQ(jx::itemsize(c128), 16u);
  EXPECT_EQ(jx::finfo(c64).eps, jx::finfo(DType::Float32).eps);
  EXPECT_TRUE(jx::is_inexact(c64));
  EXPECT_FALSE(jx::is_floating(c64));
}

TEST(Complex, ElementwiseMatchNumPy) {
  static const std::map<std::string, std::function<Array(const Array&)>> unary = {
      {"exp", [](const Array& x) { return jnp::exp(x); }},
      {"log", [](const Array& x) { return jnp::log(x); }},
      {"sqrt", [](const Array& x) { return jnp::sqrt(x); }},
      {"sin", [](const Array& x) { return jnp::sin(x); }},
      {"cos", [](const Array& x) { return jnp::cos(x); }},
      {"tan", [](const Array& x) { return jnp::tan(x); }},
      {"tanh", [](const Array& x) { return jnp::tanh(x); }},
      {"sinh", [](const Array& x) { return jnp::sinh(x); }},
      {"cosh", [](const Array& x) { return jnp::cosh(x); }},
      {"arcsin", [](const Array& x) { return jnp::arcsin(x); }},
      {"arctan", [](const Array& x) { return jnp::arctan(x); }},
      {"arcsinh", [](const Array& x) { return jnp::arcsinh(x); }},
      {"arctanh", [](const Array& x) { return jnp::arctanh(x); }},
      {"log1p", [](const Array& x) { return jnp::log1p(x); }},
      {"expm1", [](const Array& x) { return jnp::expm1(x); }},
      {"square", [](const Array& x) { return jnp::square(x); }},
      {"reciprocal", [](const Array& x) { return jnp::reciprocal(x); }},
      {"sign", [](const Array& x) { return jnp::sign(x); }},
      {"conj", [](const Array& x) { return jnp::conj(x); }},
      {"negative", [](const Array& x) { return jnp::negative(x); }},
  };
  static const std::map<std::string, std::function<Array(const Array&)>> real_unary = {
      {"abs", [](const Array& x) { return jnp::abs(x); }},
      {"angle", [](const Array& x) { return jnp::angle(x); }},
      {"real", [](const Array& x) { return jnp::real(x); }},
      {"imag", [](const Array& x) { return jnp::imag(x); }},
  };
  static const std::map<std::string, std::function<Array(const Array&, const Array&)>> binary = {
      {"add", [](const Array& a, const Array& b) { return a + b; }},
      {"subtract", [](const Array& a, const Array& b) { return a - b; }},
      {"multiply", [](const Array& a, const Array& b) { return a * b; }},
      {"divide", [](const Array& a, const Array& b) { return a / b; }},
      {"power", [](const Array& a, const Array& b) { return jnp::power(a, b); }},
  };
  for (DType t : {DType::Complex64, DType::Complex128}) {
    SCOPED_TRACE(jx::dtype_name(t));
    Array z = carray(kZ, t), w = carray(kW, t);
    for (const auto& c : kUnary) {
      Array r = unary.at(c.name)(z);
      EXPECT_EQ(r.dtype(), t) << c.name;
      expect_near(r, c.want, tol_of(t), c.name);
    }
    for (const auto& c : kRealUnary) {
      Array r = real_unary.at(c.name)(z);
      EXPECT_EQ(r.dtype(), jx::real_dtype(t)) << c.name;
      expect_near_real(r, c.want, tol_of(t), c.name);
    }
    for (const auto& c : kBinary) expect_near(binary.at(c.name)(z, w), c.want, tol_of(t), c.name);
  }
}

TEST(Complex, BranchCutsFollowTheSignOfZero) {
  for (DType t : {DType::Complex64, DType::Complex128}) {
    Array cut = carray(kCut, t);
    expect_near(jnp::sqrt(cut), kCutSqrt, tol_of(t), "sqrt");
    expect_near(jnp::log(cut), kCutLog, tol_of(t), "log");
  }
}

TEST(Complex, ReductionsAndMatmulMatchNumPy) {
  for (DType t : {DType::Complex64, DType::Complex128}) {
    SCOPED_TRACE(jx::dtype_name(t));
    Array m = carray(kZ, t).reshape({2, 3}), n = carray(kW, t).reshape({3, 2});
    Array mm = jnp::matmul(m, n);
    EXPECT_EQ(mm.dtype(), t);
    expect_near(mm, kMatmul, tol_of(t), "matmul");
    expect_near(jnp::sum(m, 0), kSumAxis0, tol_of(t), "sum");
    expect_near(jnp::prod(m, 1), kProdAxis1, tol_of(t), "prod");
    expect_near(jnp::cumsum(carray(kZ, t)), kCumsum, tol_of(t), "cumsum");
    expect_near(jnp::mean(carray(kZ, t)).reshape({1}), kMean, tol_of(t), "mean");
  }
}

TEST(Complex, PartsAndConversions) {
  Array re = jnp::array(std::vector<float>{1, -2, 3}), im = jnp::array(std::vector<float>{0.5, 0, -4});
  Array z = lax::complex(re, im);
  EXPECT_EQ(z.dtype(), DType::Complex64);
  expect_near(z, {{1, 0.5}, {-2, 0}, {3, -4}}, 0, "complex");
  EXPECT_EQ(z.real().to_vector<float>(), (std::vector<float>{1, -2, 3}));
  EXPECT_EQ(z.imag().to_vector<float>(), (std::vector<float>{0.5, 0, -4}));
  expect_near(z.conj(), {{1, -0.5}, {-2, 0}, {3, 4}}, 0, "conj");
  // Real arrays pass through, as in jnp.
  EXPECT_EQ(jnp::real(re).dtype(), DType::Float32);
  EXPECT_EQ(jnp::imag(re).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(jnp::iscomplex(z).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_TRUE(jnp::iscomplexobj(z));
  EXPECT_FALSE(jnp::iscomplexobj(re));
  // astype: real -> complex has a zero imaginary part; complex -> real keeps the real part.
  expect_near(re.astype(DType::Complex128), {{1, 0}, {-2, 0}, {3, 0}}, 0, "astype complex");
  EXPECT_EQ(z.astype(DType::Float64).to_vector<double>(), (std::vector<double>{1, -2, 3}));
  EXPECT_EQ(z(0).item<C>(), C(1, 0.5));
  // Equality compares both parts.
  Array other = lax::complex(re, jnp::array(std::vector<float>{0.5, 1, -4}));
  EXPECT_EQ((z == other).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ((z != other).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_TRUE(jnp::isinf(Array(std::complex<double>(1, INFINITY))).item<bool>());
  EXPECT_FALSE(jnp::isfinite(Array(std::complex<double>(NAN, 0))).item<bool>());
}

// ---- autodiff ----

TEST(Complex, GradOfRealFunctionIsConjugateConvention) {
  // JAX: grad(lambda z: real(z)**2 + imag(z)**2)(3+4j) == 6-8j (2 conj(z)).
  auto norm2 = [](const Array& z) { return jnp::sum(jnp::square(jnp::real(z)) + jnp::square(jnp::imag(z))); };
  Array z = carray({C(3, 4)}, DType::Complex128).reshape({});
  EXPECT_EQ(jx::grad(norm2)(z).item<C>(), C(6, -8));
  // grad(abs)(3+4j) = conj(z) / |z| = 0.6-0.8j.
  auto absf = [](const Array& z) { return jnp::abs(z); };
  Array g = jx::grad(absf)(z);
  EXPECT_NEAR(std::abs(g.item<C>() - C(0.6, -0.8)), 0, 1e-15);
  // At 0 the derivative of |z| is 0, not NaN.
  EXPECT_EQ(jx::grad(absf)(carray({C(0, 0)}).reshape({})).item<C>(), C(0, 0));
}

TEST(Complex, GradMatchesFiniteDifferencesInBothParts) {
  // For real f of z = x + iy, JAX's grad is df/dx - i df/dy.
  auto f = [](const Array& z) {
    Array e = jnp::exp(z * C(0.5, -0.25)) + jnp::sin(z) * jnp::conj(z);
    return jnp::sum(jnp::abs(e) + jnp::real(z * z) * 0.5);
  };
  Array z = carray(kZ);
  auto g = jx::grad(f)(z).to_vector<C>();
  auto zs = z.to_vector<C>();
  const double h = 1e-6;
  for (size_t i = 0; i < zs.size(); ++i) {
    auto at = [&](C dz) {
      auto v = zs;
      v[i] += dz;
      return f(carray(v)).item<double>();
    };
    double dx = (at(C(h, 0)) - at(C(-h, 0))) / (2 * h);
    double dy = (at(C(0, h)) - at(C(0, -h))) / (2 * h);
    EXPECT_NEAR(g[i].real(), dx, 1e-6) << i;
    EXPECT_NEAR(g[i].imag(), -dy, 1e-6) << i;
  }
}

TEST(Complex, HolomorphicDerivatives) {
  Array z = carray({C(1, 2)}).reshape({});
  auto sq = [](const Array& z) { return z * z; };
  EXPECT_EQ(jx::grad(sq, jx::holomorphic)(z).item<C>(), C(2, 4));
  auto sinf = [](const Array& z) { return jnp::sin(z); };
  EXPECT_NEAR(std::abs(jx::grad(sinf, jx::holomorphic)(z).item<C>() - std::cos(C(1, 2))), 0, 1e-14);
  auto [v, d] = jx::value_and_grad(sq, jx::holomorphic)(z);
  EXPECT_EQ(v.item<C>(), C(-3, 4));
  EXPECT_EQ(d.item<C>(), C(2, 4));

  // jacfwd / jacrev of an elementwise cube: diag(3 z^2), the same both ways.
  Array zs = carray({C(1, 2), C(-0.5, 0.25), C(0, -1)});
  auto cube = [](const Array& z) { return z * z * z; };
  Array jf = jx::jacfwd(cube, jx::holomorphic)(zs), jr = jx::jacrev(cube, jx::holomorphic)(zs);
  auto vf = jf.to_vector<C>(), vr = jr.to_vector<C>();
  auto zv = zs.to_vector<C>();
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = 0; j < 3; ++j) {
      C want = i == j ? 3.0 * zv[i] * zv[i] : C(0, 0);
      EXPECT_NEAR(std::abs(vf[i * 3 + j] - want), 0, 1e-14);
      EXPECT_NEAR(std::abs(vr[i * 3 + j] - want), 0, 1e-14);
    }
}

TEST(Complex, DifferentiationErrorsNameTheFix) {
  Array z = carray({C(1, 2)}).reshape({});
  auto sq = [](const Array& z) { return z * z; };
  expect_error<jx::ValueError>([&] { jx::grad(sq)(z); }, {"[grad]", "real scalar output", "holomorphic"});
  auto real_in = [](const Array& x) { return x * x; };
  expect_error<jx::DTypeError>([&] { jx::grad(real_in, jx::holomorphic)(Array(1.0)); },
                               {"holomorphic", "complex inputs"});
  expect_error<jx::DTypeError>([&] { jx::jacfwd(sq)(z); }, {"[jacfwd]", "real-valued inputs"});
  expect_error<jx::DTypeError>([&] { jx::jacrev(sq)(z); }, {"[jacrev]", "real-valued outputs"});
}

TEST(Complex, CheckGradsThroughEveryComplexRule) {
  using Fn = std::function<Array(const Arrays&)>;
  const std::vector<std::pair<const char*, Fn>> fns = {
      {"real", [](const Arrays& a) { return lax::real(a[0]); }},
      {"imag", [](const Arrays& a) { return lax::imag(a[0]); }},
      {"conj", [](const Arrays& a) { return lax::conj(a[0]); }},
      {"complex", [](const Arrays& a) { return lax::complex(jnp::real(a[0]), jnp::imag(a[1])); }},
      {"abs", [](const Arrays& a) { return lax::abs(a[0]); }},
      {"exp", [](const Arrays& a) { return lax::exp(a[0]); }},
      {"log", [](const Arrays& a) { return lax::log(a[0]); }},
      {"sqrt", [](const Arrays& a) { return lax::sqrt(a[0]); }},
      {"sin", [](const Arrays& a) { return lax::sin(a[0]); }},
      {"tanh", [](const Arrays& a) { return lax::tanh(a[0]); }},
      {"mul", [](const Arrays& a) { return lax::mul(a[0], a[1]); }},
      {"div", [](const Arrays& a) { return lax::div(a[0], a[1]); }},
      {"pow", [](const Arrays& a) { return lax::pow(a[0], a[1]); }},
      {"integer_pow", [](const Arrays& a) { return lax::integer_pow(a[0], 3); }},
      {"dot", [](const Arrays& a) { return jnp::matmul(a[0].reshape({2, 3}), a[1].reshape({3, 2})); }},
      {"sum", [](const Arrays& a) { return jnp::sum(a[0] * a[1]); }},
      {"prod", [](const Arrays& a) { return jnp::prod(a[0]); }},
      {"to_real", [](const Arrays& a) { return a[0].astype(DType::Float64) + jnp::real(a[1]); }},
      {"from_real", [](const Arrays& a) { return jnp::real(a[0]).astype(DType::Complex128) * a[1]; }},
  };
  Arrays args = {carray(kZ), carray(kW)};
  for (const auto& [name, f] : fns) {
    SCOPED_TRACE(name);
    auto flat = [f = f](const Arrays& a) { return Arrays{f(a)}; };
    EXPECT_NO_THROW(jx::testing::check_grads(flat, args, {.order = 2, .atol = 1e-6, .rtol = 1e-6}));
  }
}

// ---- vmap and jit ----

Array mixed(const Array& z, const Array& w) {
  Array a = jnp::exp(z * w) + jnp::conj(z) / (w + C(0, 1));
  return jnp::sum(a * jnp::abs(z)) + jnp::matmul(z, w) * 0.5;
}

TEST(Complex, VmapEqualsLoop) {
  Array zs = carray(kZ).reshape({2, 3}), ws = carray(kW).reshape({2, 3});
  Array batched = jx::vmap(mixed)(zs, ws);
  for (int64_t b = 0; b < 2; ++b) {
    auto want = mixed(zs(b), ws(b)).to_vector<C>();
    expect_near(batched(b).reshape({1}), want, 1e-14, "vmap row");
  }
  // The gradient of a real loss, per example.
  auto loss = [](const Array& z, const Array& w) { return jnp::abs(mixed(z, w)); };
  Array per = jx::vmap(jx::grad(loss))(zs, ws);
  for (int64_t b = 0; b < 2; ++b)
    expect_near(per(b), jx::grad(loss)(zs(b), ws(b)).to_vector<C>(), 1e-13, "vmap(grad) row");
}

TEST(Complex, JitEqualsEager) {
  Array z = carray(kZ, DType::Complex64), w = carray(kW, DType::Complex64);
  auto f = [](const Array& z, const Array& w) { return mixed(z, w) * jnp::real(z(0)); };
  expect_near(jx::jit(f)(z, w).reshape({1}), f(z, w).reshape({1}).to_vector<C>(), 1e-6, "jit");
  auto loss = [](const Array& z, const Array& w) { return jnp::abs(mixed(z, w)); };
  expect_near(jx::jit(jx::grad(loss))(z, w), jx::grad(loss)(z, w).to_vector<C>(), 1e-5, "jit(grad)");
  // Complex elementwise operations compile to generated code (tests/compiler/
  // codegen_complex_test.cpp checks them one by one, bit for bit).
  Array r = jx::jit([](const Array& x) { return jnp::abs(x * x + 1.0); })(z);
  EXPECT_EQ(r.dtype(), DType::Float32);
  expect_near_real(r, jnp::abs(z * z + 1.0).to_vector<double>(), 0, "jit(abs(z*z+1))");
}

// Gather's fill mode on complex operands: out-of-bounds reads give nan+0j (JAX fills an
// inexact dtype with NaN), a given fill value gets a zero imaginary part.
TEST(Complex, TakeFillsOutOfBoundsReads) {
  for (DType t : {DType::Complex64, DType::Complex128}) {
    Array z = carray(kZ, t);
    Array idx = jnp::array(std::vector<int32_t>{1, 7, 0});
    auto got = jnp::take(z, idx).to_vector<C>();
    auto want = z.to_vector<C>();
    EXPECT_EQ(got[0], want[1]);
    EXPECT_TRUE(std::isnan(got[1].real())) << got[1];
    EXPECT_EQ(got[1].imag(), 0);
    EXPECT_EQ(got[2], want[0]);
    Array filled = jnp::take_along_axis(z, idx, 0, jnp::TakeMode::fill, 2.5);
    EXPECT_EQ(filled.to_vector<C>()[1], C(2.5, 0));
  }
}

// Statistics of complex values, NumPy's (and JAX's) answers: the variance is real, the
// mean of |x - mean|^2; the NaN-skipping reductions skip values with a NaN in either part.
// var([1+1i, 3-1i, 2+2i]): mean 2 + 2i/3, squared deviations 10/9, 34/9, 16/9, so 20/9.
TEST(Complex, VarianceAndNanReductions) {
  for (DType t : {DType::Complex64, DType::Complex128}) {
    const double tol = tol_of(t);
    Array x = jnp::array(std::vector<C>{C(1, 1), C(3, -1), C(2, 2)}).astype(t);
    Array v = jnp::var(x);
    EXPECT_EQ(v.dtype(), jx::real_dtype(t));
    EXPECT_NEAR(v.astype(DType::Float64).item<double>(), 20.0 / 9, tol * 3);
    EXPECT_NEAR(jnp::var(x, jx::none, 1).astype(DType::Float64).item<double>(), 10.0 / 3, tol * 4);
    EXPECT_NEAR(jnp::std(x).astype(DType::Float64).item<double>(), std::sqrt(20.0 / 9), tol * 2);
    const double nan = std::nan("");
    Array y = jnp::array(std::vector<C>{C(1, 1), C(nan, 0), C(2, 2), C(5, nan)}).astype(t);
    expect_near(jnp::nansum(y).reshape({1}), {C(3, 3)}, tol, "nansum");
    expect_near(jnp::nanprod(y).reshape({1}), {C(0, 4)}, tol, "nanprod");
    expect_near(jnp::nanmean(y).reshape({1}), {C(1.5, 1.5)}, tol, "nanmean");
    Array z = jnp::array(std::vector<C>{C(1, 1), C(nan, nan), C(3, -1)}).astype(t);
    EXPECT_EQ(jnp::nanvar(z).dtype(), jx::real_dtype(t));
    EXPECT_NEAR(jnp::nanvar(z).astype(DType::Float64).item<double>(), 2.0, tol * 2);
  }
  jx::numpy::ReduceOptions real_dtype;
  real_dtype.dtype = DType::Float32;
  expect_error<jx::ValueError>([&] { jnp::var(carray(kZ, DType::Complex64), jx::none, real_dtype); },
                               {"[var]", "real dtype", "complex"});
}

TEST(Complex, UnsupportedOperationsSaySo) {
  Array z = carray(kZ, DType::Complex64);
  // As JAX's: floor and rem take real operands; lax's ordered comparisons too (jnp's order
  // complex values lexicographically, tests/numpy/complex_order_test.cpp).
  expect_error<jx::DTypeError>([&] { lax::floor(z); }, {"[floor]", "complex", "jnp::real"});
  expect_error<jx::DTypeError>([&] { lax::rem(z, z); }, {"[rem]", "complex"});
  expect_error<jx::DTypeError>([&] { lax::lt(z, z); }, {"[lt]", "complex", "jnp::less"});
  Array i = jnp::array(std::vector<int32_t>{1, 2});
  expect_error<jx::DTypeError>([&] { lax::complex(i, i); }, {"[complex]", "floating dtype"});
  Array h = jnp::ones(Shape{2}, DType::Float16);
  expect_error<jx::DTypeError>([&] { lax::complex(h, h); }, {"[complex]", "float32 or float64"});
  expect_error<jx::DTypeError>([&] { lax::real(jnp::ones(Shape{2})); }, {"[real]", "complex"});
}

}  // namespace
namespace {
// Each operation jitted alone, against eager. A complex constant whose real part is 0 or 1
// must not look like the identity of add or mul to the simplifier (its imaginary part
// counts).
TEST(Complex, JitEqualsEagerPerOperation) {
  Array z = carray(kZ, DType::Complex64), w = carray(kW, DType::Complex64);
  std::vector<std::pair<const char*, std::function<Array(const Array&, const Array&)>>> fs = {
      {"mul", [](const Array& z, const Array& w) { return z * w; }},
      {"exp", [](const Array& z, const Array& w) { return jnp::exp(z * w); }},
      {"conj", [](const Array& z, const Array& w) { return jnp::conj(z); }},
      {"add i", [](const Array& z, const Array& w) { return w + C(0, 1); }},
      {"mul 1+2i", [](const Array& z, const Array& w) { return z * C(1, 2); }},
      {"div", [](const Array& z, const Array& w) { return jnp::conj(z) / (w + C(0, 1)); }},
      {"abs", [](const Array& z, const Array& w) { return z * jnp::abs(z); }},
      {"sum", [](const Array& z, const Array& w) { return jnp::sum(z); }},
      {"matmul", [](const Array& z, const Array& w) { return jnp::matmul(z, w); }},
      {"scal", [](const Array& z, const Array& w) { return jnp::matmul(z, w) * 0.5; }},
  };
  for (auto& [n, f] : fs) {
    auto a = jx::jit(f)(z, w).reshape({-1}).to_vector<C>();
    auto b = f(z, w).reshape({-1}).to_vector<C>();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_LE(std::abs(a[i] - b[i]), 1e-6 * std::abs(b[i])) << n << " [" << i << "]: " << a[i] << " vs " << b[i];
  }
}
}  // namespace
