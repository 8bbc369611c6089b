// lax::fft against the defining sums: a naive DFT in long double, written out here, is the
// independent oracle. Inverses undo, check_grads passes through all four transforms
// (linear: jvp and transpose), vmap equals a loop, jit equals eager, and bad input names
// the fix.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>

#include "jx/jx.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::lax::FftType;
using jx::testing::expect_error;
using C = std::complex<double>;
using Arrays = std::vector<Array>;

// A deterministic complex signal with no symmetry.
std::vector<C> signal(int64_t n, int seed) {
  std::vector<C> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[size_t(i)] = C(std::sin(0.7 * double(i) + seed) + 0.1 * double(i % 3),
                     std::cos(1.3 * double(i) * (seed + 1)) - 0.2);
  return v;
}

// sum_k x[k] exp(sign 2 pi i j k / n) over each axis of `lengths` (row-major signals).
std::vector<C> naive_dft(std::vector<C> x, const std::vector<int64_t>& lengths, int sign) {
  int64_t total = 1;
  for (int64_t l : lengths) total *= l;
  const int64_t batch = int64_t(x.size()) / total;
  int64_t stride = total;
  for (int64_t len : lengths) {
    stride /= len;
    std::vector<C> y(x.size());
    for (int64_t b = 0; b < batch * total; b += total)
      for (int64_t outer = 0; outer < total; outer += stride * len)
        for (int64_t inner = 0; inner < stride; ++inner)
          for (int64_t j = 0; j < len; ++j) {
            std::complex<long double> acc = 0;
            for (int64_t k = 0; k < len; ++k) {
              long double ang = sign * 2 * std::numbers::pi_v<long double> * (long double)((j * k) % len) / len;
              std::complex<long double> xv(x[size_t(b + outer + k * stride + inner)]);
              acc += xv * std::complex<long double>(std::cos(ang), std::sin(ang));
            }
            y[size_t(b + outer + j * stride + inner)] = C(acc);
          }
    x = y;
  }
  return x;
}

void expect_close(const Array& got, const std::vector<C>& want, double tol, const std::string& what) {
  auto g = got.to_vector<C>();
  ASSERT_EQ(g.size(), want.size()) << what;
  double scale = 1;
  for (const C& w : want) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_LE(std::abs(g[i] - want[i]), tol * scale) << what << " [" << i << "]: " << g[i] << " vs " << want[i];
}

double tol_of(DType t) { return t == DType::Complex64 || t == DType::Float32 ? 2e-6 : 1e-13; }

struct Case {
  Shape batch;
  std::vector<int64_t> lengths;
};
const std::vector<Case> kCases = {
    {{}, {1}}, {{}, {5}}, {{}, {8}}, {{3}, {12}}, {{2}, {4, 6}}, {{}, {3, 5}}, {{2}, {2, 3, 4}}, {{}, {7, 1, 2}},
    {{2}, {64, 96}},  // complex 2-D transforms this large run as two batched 1-D passes
};

Shape full_shape(const Case& c) {
  Shape s = c.batch;
  for (int64_t l : c.lengths) s.push_back(l);
  return s;
}

TEST(LaxFft, ComplexTransformsEqualTheDefiningSums) {
  for (DType t : {DType::Complex64, DType::Complex128}) {
    for (const Case& c : kCases) {
      const Shape s = full_shape(c);
      SCOPED_TRACE(std::string(jx::dtype_name(t)) + jx::shape_str(s));
      const std::vector<C> x = signal(s.numel(), 1);
      Array a = jnp::array(x).reshape(s).astype(t);
      Array f = lax::fft(a, FftType::FFT, c.lengths);
      EXPECT_EQ(f.dtype(), t);
      EXPECT_EQ(f.shape(), s);
      expect_close(f, naive_dft(x, c.lengths, -1), tol_of(t), "FFT");
      std::vector<C> inv = naive_dft(x, c.lengths, +1);
      double n = 1;
      for (int64_t l : c.lengths) n *= double(l);
      for (C& v : inv) v /= n;
      expect_close(lax::fft(a, FftType::IFFT, c.lengths), inv, tol_of(t), "IFFT");
      expect_close(lax::fft(f, FftType::IFFT, c.lengths), x, tol_of(t), "IFFT(FFT)");
    }
  }
}

TEST(LaxFft, RealTransformsKeepHalfTheSpectrum) {
  for (DType t : {DType::Float32, DType::Float64}) {
    for (const Case& c : kCases) {
      const Shape s = full_shape(c);
      SCOPED_TRACE(std::string(jx::dtype_name(t)) + jx::shape_str(s));
      std::vector<C> x = signal(s.numel(), 2);
      for (C& v : x) v = C(v.real(), 0);
      Array a = jnp::real(jnp::array(x)).reshape(s).astype(t);
      Array r = lax::fft(a, FftType::RFFT, c.lengths);
      const int64_t n = c.lengths.back(), h = n / 2 + 1;
      Shape hs = s;
      hs.back() = h;
      EXPECT_EQ(r.shape(), hs);
      EXPECT_EQ(r.dtype(), jx::complex_dtype(t));
      // The first n / 2 + 1 coefficients of the full transform along the last axis.
      std::vector<C> full = naive_dft(x, c.lengths, -1), half;
      for (size_t i = 0; i < full.size(); ++i)
        if (int64_t(i) % n < h) half.push_back(full[i]);
      expect_close(r, half, tol_of(t), "RFFT");
      Array back = lax::fft(r, FftType::IRFFT, c.lengths);
      EXPECT_EQ(back.dtype(), t);
      EXPECT_EQ(back.shape(), s);
      expect_close(back, x, tol_of(t), "IRFFT(RFFT)");
    }
  }
}

TEST(LaxFft, CheckGradsThroughAllFourTransforms) {
  Array z = jnp::array(signal(2 * 3 * 4, 3)).reshape({2, 3, 4});
  Array x = jnp::real(z);
  Array h = lax::fft(x, FftType::RFFT, {3, 4});  // [2, 3, 3]: an IRFFT input for n = (3, 4)
  Array h5 = lax::fft(jnp::real(jnp::array(signal(10, 4))).reshape({2, 5}), FftType::RFFT, {5});
  const std::vector<std::pair<const char*, std::pair<std::function<Array(const Array&)>, Array>>> cases = {
      {"fft", {[](const Array& a) { return lax::fft(a, FftType::FFT, {4}); }, z}},
      {"fft2", {[](const Array& a) { return lax::fft(a, FftType::FFT, {3, 4}); }, z}},
      {"ifft3", {[](const Array& a) { return lax::fft(a, FftType::IFFT, {2, 3, 4}); }, z}},
      {"rfft", {[](const Array& a) { return lax::fft(a, FftType::RFFT, {4}); }, x}},
      {"rfft2", {[](const Array& a) { return lax::fft(a, FftType::RFFT, {3, 4}); }, x}},
      {"irfft2", {[](const Array& a) { return lax::fft(a, FftType::IRFFT, {3, 4}); }, h}},
      {"irfft odd", {[](const Array& a) { return lax::fft(a, FftType::IRFFT, {5}); }, h5}},
  };
  for (const auto& [name, c] : cases) {
    SCOPED_TRACE(name);
    auto f = [g = c.first](const Arrays& a) { return Arrays{g(a[0])}; };
    EXPECT_NO_THROW(jx::testing::check_grads(f, {c.second}, {.order = 1, .atol = 1e-7, .rtol = 1e-7}));
  }
  // A real loss through rfft: grad against central differences.
  auto loss = [](const Array& a) { return jnp::sum(jnp::abs(lax::fft(a, FftType::RFFT, {4}))); };
  Array g = jx::grad(loss)(x);
  auto xv = x.to_vector<double>(), gv = g.to_vector<double>();
  for (size_t i = 0; i < xv.size(); i += 5) {
    auto at = [&](double d) {
      auto v = xv;
      v[i] += d;
      return loss(jnp::array(v).reshape(x.shape())).item<double>();
    };
    EXPECT_NEAR(gv[i], (at(1e-6) - at(-1e-6)) / 2e-6, 1e-6) << i;
  }
}

TEST(LaxFft, VmapEqualsLoopAndJitEqualsEager) {
  Array z = jnp::array(signal(3 * 4 * 6, 5)).reshape({4, 3, 6}).astype(DType::Complex64);
  auto f = [](const Array& a) { return lax::fft(a, FftType::FFT, {6}); };  // a: [3, 6]
  Array batched = jx::vmap(f)(z);
  for (int64_t b = 0; b < 4; ++b)
    expect_close(batched(b), f(z(b)).to_vector<C>(), 0, "vmap row");
  // A batch dim that is not in front: the rule moves it there.
  auto g = [](const Array& a) { return lax::fft(a, FftType::RFFT, {6}); };  // a: [6]
  Array x = jnp::real(z)(0).transpose({1, 0});  // [6, 3]: batch along axis 1
  Array bx = jx::vmap(g, {.in_axes = 1})(x);
  for (int64_t b = 0; b < 3; ++b)
    expect_close(bx(b), g(x(jx::slice(), b)).to_vector<C>(), 0, "vmap axis 1");
  auto prog = [](const Array& a) {
    Array s = lax::fft(a * 2.0, FftType::FFT, {3, 6});
    return lax::fft(s, FftType::IFFT, {6}) + a;
  };
  expect_close(jx::jit(prog)(z), prog(z).to_vector<C>(), 0, "jit");
}

TEST(LaxFft, BadInputNamesTheFix) {
  Array z = jnp::zeros(Shape{4, 8}, DType::Complex64), x = jnp::zeros(Shape{4, 8});
  expect_error<jx::DTypeError>([&] { lax::fft(x, FftType::FFT, {8}); }, {"[fft]", "complex64", "RFFT"});
  expect_error<jx::DTypeError>([&] { lax::fft(z, FftType::RFFT, {8}); }, {"[fft]", "float32 or float64"});
  expect_error<jx::ShapeError>([&] { lax::fft(z, FftType::FFT, {4}); }, {"[fft]", "fft_lengths (4,)"});
  expect_error<jx::ShapeError>([&] { lax::fft(z, FftType::IRFFT, {8}); }, {"[fft]", "IRFFT", "n / 2 + 1"});
  expect_error<jx::ValueError>([&] { lax::fft(jnp::zeros(Shape{1, 2, 2, 2}, DType::Complex64), FftType::FFT, {1, 2, 2, 2}); },
                               {"[fft]", "1 to 3"});
  expect_error<jx::ShapeError>([&] { lax::fft(z, FftType::FFT, {2, 4, 8}); }, {"[fft]", "fewer dims"});
}

TEST(LaxFft, EmptyAndJaxpr) {
  Array e = lax::fft(jnp::zeros(Shape{0, 4}, DType::Complex64), FftType::FFT, {4});
  EXPECT_EQ(e.shape(), (Shape{0, 4}));
  Array r0 = lax::fft(jnp::zeros(Shape{3, 0}), FftType::RFFT, {0});
  EXPECT_EQ(r0.shape(), (Shape{3, 1}));
  EXPECT_EQ(r0.to_vector<C>(), std::vector<C>(3, C(0, 0)));
  auto f = [](const Array& a) { return lax::fft(a, FftType::RFFT, {8}); };
  std::string text = jx::make_jaxpr(f)(jnp::zeros(Shape{2, 8})).str();
  EXPECT_NE(text.find("fft[fft_lengths=(8,) fft_type=FftType.RFFT]"), std::string::npos) << text;
}

}  // namespace
