// jnp::fft against NumPy (tests/golden/gen_fft.py) in float32/complex64 and
// float64/complex128; the input promotions; fftfreq / rfftfreq / fftshift / ifftshift
// exactly; jit against eager, vmap against a loop, check_grads through the transforms, and
// the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "jx/jx.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"

namespace {

namespace jnp = jx::numpy;
namespace jfft = jx::numpy::fft;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::expect_error;
using Arrays = std::vector<Array>;

#include "golden/fft_golden.inc"

const FftInput& input(const std::string& name) {
  for (const auto& in : kFftInputs)
    if (name == in.name) return in;
  throw std::runtime_error("no input " + name);
}

Shape shape_of(const std::vector<int64_t>& v) { return Shape(v.begin(), v.end()); }

// The golden input as complex (c64 / c128) or, for the real-input functions, its real part.
Array make_input(const FftInput& in, bool real, bool f64) {
  Array z = jnp::array(in.data, shape_of(in.shape));
  if (real) return jnp::real(z).astype(f64 ? DType::Float64 : DType::Float32);
  return z.astype(f64 ? DType::Complex128 : DType::Complex64);
}

bool real_input(const std::string& fn) {
  return fn == "rfft" || fn == "ihfft" || fn == "rfft2" || fn == "rfftn";
}
bool real_output(const std::string& fn) {
  return fn == "irfft" || fn == "hfft" || fn == "irfft2" || fn == "irfftn";
}

using Fn1 = Array (*)(const Array&, std::optional<int64_t>, int64_t, const std::string&);
using Fn2 = Array (*)(const Array&, jx::OptionalShape, const std::vector<int64_t>&,
                      const std::string&);
using FnN = Array (*)(const Array&, jx::OptionalShape, jx::Axes, const std::string&);

const std::map<std::string, Fn1> kOneD = {{"fft", jfft::fft},   {"ifft", jfft::ifft},
                                          {"rfft", jfft::rfft}, {"irfft", jfft::irfft},
                                          {"hfft", jfft::hfft}, {"ihfft", jfft::ihfft}};
const std::map<std::string, Fn2> kTwoD = {
    {"fft2", jfft::fft2}, {"ifft2", jfft::ifft2}, {"rfft2", jfft::rfft2}, {"irfft2", jfft::irfft2}};
const std::map<std::string, FnN> kND = {
    {"fftn", jfft::fftn}, {"ifftn", jfft::ifftn}, {"rfftn", jfft::rfftn}, {"irfftn", jfft::irfftn}};

Array call(const FftCase& c, const Array& x) {
  const std::string fn = c.fn;
  jx::OptionalShape s;
  if (c.has_s) s = shape_of(c.s);
  if (auto it = kOneD.find(fn); it != kOneD.end()) {
    std::optional<int64_t> n;
    if (c.has_s) n = c.s[0];
    return it->second(x, n, c.axes[0], c.norm);
  }
  if (auto it = kTwoD.find(fn); it != kTwoD.end()) return it->second(x, s, c.axes, c.norm);
  jx::Axes axes;
  if (c.has_axes) axes = c.axes;
  return kND.at(fn)(x, s, axes, c.norm);
}

std::string describe(const FftCase& c) {
  std::string d = std::string(c.fn) + "(" + c.input;
  if (c.has_s) d += ", s=" + jx::shape_str(shape_of(c.s));
  if (c.has_axes) d += ", axes=" + jx::shape_str(shape_of(c.axes));
  return d + ", " + c.norm + ")";
}

// |got - want| <= tol * max|want| elementwise: an FFT's rounding error scales with the
// largest magnitude, not with each output's.
void expect_close_to(const Array& got, const std::vector<C>& want, double tol,
                     const std::string& what) {
  auto g = got.astype(DType::Complex128).reshape({-1}).to_vector<C>();
  ASSERT_EQ(g.size(), want.size()) << what;
  double scale = 0;
  for (const C& w : want) scale = std::max(scale, std::abs(w));
  if (scale == 0) scale = 1;
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_LE(std::abs(g[i] - want[i]), tol * scale)
        << what << " [" << i << "]: got " << g[i] << ", want " << want[i];
}

void run_golden(bool f64) {
  const double tol = f64 ? 1e-12 : 1e-5;
  std::map<std::string, int> checked;
  for (const auto& c : kFftCases) {
    const std::string what = describe(c) + (f64 ? " f64" : " f32");
    SCOPED_TRACE(what);
    Array x = make_input(input(c.input), real_input(c.fn), f64);
    Array y = call(c, x);
    DType want_t = real_output(c.fn) ? (f64 ? DType::Float64 : DType::Float32)
                                     : (f64 ? DType::Complex128 : DType::Complex64);
    ASSERT_EQ(y.dtype(), want_t) << what;
    ASSERT_EQ(y.shape(), shape_of(c.out_shape)) << what;
    expect_close_to(y, c.want, tol, what);
    ++checked[c.fn];
  }
  // Every function, each with several cases.
  EXPECT_EQ(checked.size(), kOneD.size() + kTwoD.size() + kND.size());
  for (const auto& [fn, count] : checked) EXPECT_GE(count, 9) << fn;
}

TEST(Fft, MatchesNumpyFloat64) { run_golden(true); }
TEST(Fft, MatchesNumpyFloat32) { run_golden(false); }

TEST(Fft, InputPromotion) {
  Array i = jnp::array(std::vector<int32_t>{1, 2, 3, 4});
  Array fi = jfft::fft(i);
  EXPECT_EQ(fi.dtype(), DType::Complex64);
  expect_close_to(fi, {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}}, 1e-7, "fft(int32)");
  EXPECT_EQ(jfft::fft(jnp::array(std::vector<bool>{true, false})).dtype(), DType::Complex64);
  EXPECT_EQ(jfft::ifft(jnp::ones(Shape{4}, DType::Float16)).dtype(), DType::Complex64);
  EXPECT_EQ(jfft::fft(jnp::ones(Shape{4}, DType::BFloat16)).dtype(), DType::Complex64);
  EXPECT_EQ(jfft::fft(jnp::ones(Shape{4}, DType::Float32)).dtype(), DType::Complex64);
  EXPECT_EQ(jfft::fft(jnp::ones(Shape{4}, DType::Float64)).dtype(), DType::Complex128);
  EXPECT_EQ(jfft::fftn(jnp::ones(Shape{2, 4}, DType::Int64)).dtype(), DType::Complex64);
  Array ri = jfft::rfft(i);
  EXPECT_EQ(ri.dtype(), DType::Complex64);
  expect_close_to(ri, {{10, 0}, {-2, 2}, {-2, 0}}, 1e-7, "rfft(int32)");
  EXPECT_EQ(jfft::rfft(jnp::ones(Shape{4}, DType::Float16)).dtype(), DType::Complex64);
  EXPECT_EQ(jfft::rfft(jnp::ones(Shape{4}, DType::Float64)).dtype(), DType::Complex128);
  EXPECT_EQ(jfft::ihfft(jnp::ones(Shape{4}, DType::Float64)).dtype(), DType::Complex128);
  // irfft / hfft promote to complex, then return its real dtype.
  EXPECT_EQ(jfft::irfft(jnp::ones(Shape{3}, DType::Float32)).dtype(), DType::Float32);
  EXPECT_EQ(jfft::irfft(jnp::ones(Shape{3}, DType::Float64)).dtype(), DType::Float64);
  EXPECT_EQ(jfft::irfft(i).dtype(), DType::Float32);
  EXPECT_EQ(jfft::hfft(jnp::ones(Shape{3}, DType::Complex128)).dtype(), DType::Float64);
  Array back = jfft::irfft(jfft::rfft(i), 4);
  expect_close_to(back, {{1, 0}, {2, 0}, {3, 0}, {4, 0}}, 1e-6, "irfft(rfft(int32))");
}

TEST(Fft, RoundTrips) {
  Array x = make_input(input("245"), false, true);
  Array r = jnp::real(x);
  for (const char* norm : {"backward", "ortho", "forward"}) {
    SCOPED_TRACE(norm);
    auto want = x.reshape({-1}).to_vector<C>();
    expect_close_to(jfft::ifftn(jfft::fftn(x, jx::none, jx::none, norm), jx::none, jx::none, norm),
                    want, 1e-14, "ifftn(fftn)");
    expect_close_to(jfft::ifft(jfft::fft(x, std::nullopt, 1, norm), std::nullopt, 1, norm), want,
                    1e-14, "ifft(fft)");
    auto rw = r.astype(DType::Complex128).reshape({-1}).to_vector<C>();
    expect_close_to(
        jfft::irfftn(jfft::rfftn(r, jx::none, jx::none, norm), Shape{2, 4, 5}, jx::none, norm), rw,
        1e-14, "irfftn(rfftn)");
    expect_close_to(jfft::irfft(jfft::rfft(r, std::nullopt, 0, norm), 2, 0, norm), rw, 1e-14,
                    "irfft(rfft) axis 0");
    expect_close_to(jfft::ihfft(jfft::hfft(jfft::ihfft(r, std::nullopt, -1, norm), 5, -1, norm),
                                std::nullopt, -1, norm),
                    jfft::ihfft(r, std::nullopt, -1, norm).reshape({-1}).to_vector<C>(), 1e-14,
                    "ihfft(hfft(ihfft))");
  }
}

// ---- fftfreq, rfftfreq, fftshift, ifftshift: exact ----

void expect_exact(const Array& got, const std::vector<double>& want, const std::string& what) {
  auto g = got.astype(DType::Float64).to_vector<double>();
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) EXPECT_EQ(g[i], want[i]) << what << " [" << i << "]";
}

TEST(Fft, Frequencies) {
  for (auto [cases, fn, name] : {std::tuple{&kFftFreq, &jfft::fftfreq, "fftfreq"},
                                 std::tuple{&kRfftFreq, &jfft::rfftfreq, "rfftfreq"}}) {
    for (const auto& c : *cases) {
      const std::string what =
          std::string(name) + "(" + std::to_string(c.n) + ", " + std::to_string(c.d) + ")";
      Array f32 = fn(c.n, c.d, std::nullopt);
      EXPECT_EQ(f32.dtype(), DType::Float32) << what;
      expect_exact(f32, c.jax32, what + " float32");
      Array f64 = fn(c.n, c.d, DType::Float64);
      EXPECT_EQ(f64.dtype(), DType::Float64) << what;
      expect_exact(f64, c.jax64, what + " float64");
      // NumPy multiplies by 1 / (d n): the last bit may differ.
      auto g = f64.to_vector<double>();
      for (size_t i = 0; i < g.size(); ++i)
        EXPECT_NEAR(g[i], c.numpy[i], 4e-16 * std::max(1.0, std::abs(c.numpy[i]))) << what;
    }
  }
  Array c = jfft::fftfreq(4, 0.5, DType::Complex64);
  EXPECT_EQ(c.dtype(), DType::Complex64);
  EXPECT_EQ(c.to_vector<C>(), (std::vector<C>{0.0, 0.5, -1.0, -0.5}));
  // NumPy's and JAX's integer dtype: the division is true division (float32).
  expect_exact(jfft::rfftfreq(4, 1.0, DType::Int32), {0.0, 0.25, 0.5}, "rfftfreq int32");
}

TEST(Fft, Shifts) {
  for (const auto& c : kShiftCases) {
    Shape s = shape_of(c.shape);
    int64_t size = 1;
    for (int64_t d : c.shape) size *= d;
    Array x = jnp::arange(int64_t(0), size, 1, DType::Float64).reshape(s);
    jx::Axes axes;
    if (c.has_axes) axes = c.axes;
    const std::string what =
        jx::shape_str(s) + (c.has_axes ? " axes " + jx::shape_str(shape_of(c.axes)) : "");
    expect_exact(jfft::fftshift(x, axes), c.fftshift, "fftshift " + what);
    expect_exact(jfft::ifftshift(x, axes), c.ifftshift, "ifftshift " + what);
    expect_exact(jfft::ifftshift(jfft::fftshift(x, axes), axes), x.to_vector<double>(),
                 "inverse " + what);
  }
  Array i = jnp::array(std::vector<int32_t>{0, 1, 2, -2, -1});
  Array shifted = jfft::fftshift(i);
  EXPECT_EQ(shifted.dtype(), DType::Int32);
  EXPECT_EQ(shifted.to_vector<int32_t>(), (std::vector<int32_t>{-2, -1, 0, 1, 2}));
  expect_exact(jfft::fftshift(jfft::fftfreq(5)), {-0.4f, -0.2f, 0.0f, 0.2f, 0.4f},
               "fftshift(fftfreq(5))");
  Array z = jnp::array(std::vector<C>{{1, 2}, {3, 4}, {5, 6}});
  EXPECT_EQ(jfft::ifftshift(z).to_vector<C>(), (std::vector<C>{{3, 4}, {5, 6}, {1, 2}}));
  EXPECT_EQ(jfft::fftshift(jnp::array(2.5)).item<double>(), 2.5);  // 0-d: nothing to roll
}

// ---- transformations ----

Array pipeline(const Array& x) {
  // Mixes every kind, axis moves, crops, pads and norms.
  Array spec = jfft::rfftn(x, Shape{4, 6}, {0, 2}, "ortho");  // (4, 3, 4) complex
  Array y = jfft::ifft(spec * 2.0, 5, 1, "forward");          // (4, 5, 4)
  Array z = jfft::fft2(y, jx::none, {2, 0});
  Array back = jfft::irfftn(jfft::fftshift(z, 1), Shape{3, 6}, {1, 2});  // (4, 3, 6) real
  return back + jnp::real(jfft::hfft(jfft::fftn(x, jx::none, {1}), 6, 0)).sum();
}

TEST(Fft, JitEqualsEager) {
  for (DType t : {DType::Float32, DType::Float64}) {
    Array x = jnp::real(make_input(input("336"), false, true)).astype(t);
    Array eager = pipeline(x);
    Array jitted = jx::jit(pipeline)(x);
    ASSERT_EQ(jitted.dtype(), eager.dtype());
    ASSERT_EQ(jitted.shape(), eager.shape());
    expect_close_to(jitted, eager.astype(DType::Complex128).reshape({-1}).to_vector<C>(),
                    t == DType::Float32 ? 1e-5 : 1e-13, "jit(pipeline)");
  }
  Array z = make_input(input("2345"), false, false);
  auto f = [](const Array& z) {
    return jfft::ifftn(jfft::fftn(z, jx::none, {3, 1, 0, 2}), Shape{3, 3});
  };
  expect_close_to(jx::jit(f)(z), f(z).astype(DType::Complex128).reshape({-1}).to_vector<C>(), 1e-5,
                  "jit 4-axis fftn");
}

TEST(Fft, VmapEqualsLoop) {
  Array zs = make_input(input("245"), false, true);  // batch of 2
  Array rs = jnp::real(zs);
  std::vector<std::pair<std::string, std::function<Array(const Array&)>>> fs = {
      {"fft axis 0", [](const Array& x) { return jfft::fft(x, 6, 0, "ortho"); }},
      {"ifft", [](const Array& x) { return jfft::ifft(x, 3); }},
      {"rfft2",
       [](const Array& x) {
         return jfft::rfft2(jnp::real(x), Shape{3, 7}, {1, 0});
       }},
      {"irfftn", [](const Array& x) { return jfft::irfftn(x, jx::none, jx::none, "forward"); }},
      {"fftn all", [](const Array& x) { return jfft::fftn(x); }},
      {"fftshift", [](const Array& x) { return jfft::fftshift(x); }},
  };
  for (auto& [name, f] : fs) {
    for (int in_axis : {0, 1}) {
      SCOPED_TRACE(name + " in_axis " + std::to_string(in_axis));
      Array xs = in_axis == 0 ? zs : jnp::moveaxis(zs, 0, 1);
      Array batched = jx::vmap(f, {.in_axes = in_axis})(xs);
      for (int64_t b = 0; b < 2; ++b) {
        Array want = f(zs(b));
        ASSERT_EQ(batched(b).shape(), want.shape());
        expect_close_to(batched(b), want.astype(DType::Complex128).reshape({-1}).to_vector<C>(),
                        1e-13, "row");
      }
    }
  }
  // A real batch through rfft: the real-input path batches too.
  Array per = jx::vmap([](const Array& x) { return jfft::rfft(x, 8); })(rs);
  for (int64_t b = 0; b < 2; ++b)
    expect_close_to(per(b), jfft::rfft(rs(b), 8).reshape({-1}).to_vector<C>(), 1e-13, "rfft row");
}

TEST(Fft, Gradients) {
  Array z = make_input(input("245"), false, true);
  Array r = jnp::real(z);
  Array z4 = make_input(input("2345"), false, true);
  using Fn = std::function<Array(const Array&)>;
  std::vector<std::tuple<std::string, Fn, Array>> fs = {
      {"fft", [](const Array& x) { return jfft::fft(x); }, z},
      {"hfft", [](const Array& x) { return jfft::hfft(x, 6, 1, "ortho"); }, z},
      {"ihfft", [](const Array& x) { return jfft::ihfft(x, std::nullopt, 0); }, r},
      // more than 3 axes: lax::fft in groups
      {"fftn 4 axes",
       [](const Array& x) {
         return jfft::fftn(x, jx::none, {3, 1, 0, 2});
       },
       z4},
      {"irfftn 4 axes",
       [](const Array& x) {
         return jfft::irfftn(x, Shape{2, 3, 4, 7});
       },
       z4},
      {"fft n pad ortho", [](const Array& x) { return jfft::fft(x, 7, 1, "ortho"); }, z},
      {"ifft n crop", [](const Array& x) { return jfft::ifft(x, 3, 0); }, z},
      {"rfft", [](const Array& x) { return jfft::rfft(x); }, r},
      {"rfft n odd forward", [](const Array& x) { return jfft::rfft(x, 7, 1, "forward"); }, r},
      {"irfft", [](const Array& x) { return jfft::irfft(x); }, z},
      {"irfft n odd axis 1", [](const Array& x) { return jfft::irfft(x, 5, 1, "ortho"); }, z},
      {"fft2",
       [](const Array& x) {
         return jfft::fft2(x, Shape{3, 6}, {2, 0});
       },
       z},
      {"rfftn", [](const Array& x) { return jfft::rfftn(x); }, r},
      {"rfftn s axes",
       [](const Array& x) {
         return jfft::rfftn(x, Shape{3, 4}, {2, 1}, "ortho");
       },
       r},
  };
  for (auto& [name, f, x] : fs) {
    SCOPED_TRACE(name);
    auto flat = [f = f](const Arrays& a) { return Arrays{f(a[0])}; };
    EXPECT_NO_THROW(jx::testing::check_grads(flat, {x}, {.order = 2, .atol = 1e-7, .rtol = 1e-7}));
  }
  // grad of a real loss through rfft: d/dx sum |rfft(x)|^2 by hand. For n = 5, |X_k|^2 counts
  // once for k = 0 and k = 1, 2 each stand for a conjugate pair, so the loss is
  // (n |x|^2 + X_0^2) / 2 and its gradient is n x + sum(x).
  Array x = jnp::array(std::vector<double>{0.5, -1.0, 2.0, 0.25, 3.0});
  auto loss = [](const Array& x) { return jnp::sum(jnp::square(jnp::abs(jfft::rfft(x)))); };
  auto g = jx::grad(loss)(x).to_vector<double>();
  auto xv = x.to_vector<double>();
  double sum = 0;
  for (double v : xv) sum += v;
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_NEAR(g[i], 5 * xv[i] + sum, 1e-12) << i;
}

// ---- errors ----

TEST(Fft, Errors) {
  Array z = make_input(input("245"), false, false);
  Array r = jnp::real(z);
  expect_error<jx::ValueError>(
      [&] { jfft::fft(z, std::nullopt, -1, "unitary"); },
      {"[fft.fft]", "\"unitary\"", "\"backward\"", "\"ortho\"", "\"forward\""});
  expect_error<jx::ValueError>([&] { jfft::hfft(z, std::nullopt, -1, "Ortho"); },
                               {"[fft.hfft]", "\"Ortho\""});
  expect_error<jx::ValueError>([&] { jfft::ifftn(z, jx::none, jx::none, ""); },
                               {"[fft.ifftn]", "invalid norm"});
  expect_error<jx::ValueError>([&] { jfft::fft(z, -3); }, {"[fft.fft]", "n = -3", "at least 1"});
  expect_error<jx::ValueError>([&] { jfft::irfft(z, 0); }, {"[fft.irfft]", "n = 0", "at least 1"});
  expect_error<jx::ValueError>(
      [&] {
        jfft::fftn(z, Shape{3, -1});
      },
      {"[fft.fftn]", "s = (3, -1)", "at least 1"});
  expect_error<jx::ValueError>(
      [&] {
        jfft::fftn(z, jx::none, {0, 2, -3});
      },
      {"[fft.fftn]", "(0, 2, -3)", "axis 0 twice"});
  expect_error<jx::ValueError>([&] { jfft::rfft2(r, jx::none, {1, 1}); }, {"[fft.rfft2]", "twice"});
  expect_error<jx::ValueError>(
      [&] {
        jfft::fftn(z, Shape{4, 4}, {0, 1, 2});
      },
      {"[fft.fftn]", "s = (4, 4)", "2 lengths", "axes = (0, 1, 2)", "3 axes",
       "one length per axis"});
  expect_error<jx::ValueError>([&] { jfft::irfft2(z, Shape{4}); },
                               {"[fft.irfft2]", "1 lengths", "2 axes"});
  expect_error<jx::ValueError>(
      [&] {
        jfft::fftn(z, Shape{2, 2, 2, 2});
      },
      {"[fft.fftn]", "4 lengths", "only 3 dims"});
  expect_error<jx::DTypeError>([&] { jfft::rfft(z); }, {"[fft.rfft]", "real input", "c64[2,4,5]",
                                                        "jnp::fft::fft", "jnp::real"});
  expect_error<jx::DTypeError>([&] { jfft::rfftn(z); },
                               {"[fft.rfftn]", "real input", "jnp::fft::fftn"});
  expect_error<jx::DTypeError>([&] { jfft::rfft2(z); },
                               {"[fft.rfft2]", "real input", "jnp::fft::fft2"});
  expect_error<jx::DTypeError>([&] { jfft::ihfft(z); },
                               {"[fft.ihfft]", "real input", "jnp::fft::ifft"});
  expect_error<jx::ValueError>(
      [&] {
        jfft::fft2(z, jx::none, {0, 1, 2});
      },
      {"[fft.fft2]", "exactly 2 axes", "(0, 1, 2)", "fftn"});
  expect_error<jx::ValueError>([&] { jfft::irfft2(z, jx::none, {0}); },
                               {"[fft.irfft2]", "exactly 2 axes", "irfftn"});
  expect_error<jx::IndexError>([&] { jfft::fft(z, std::nullopt, 3); }, {"fft.fft", "3"});
  expect_error<jx::IndexError>([&] { jfft::fftn(z, jx::none, {-4}); }, {"fft.fftn"});
  // irfft's default output length 2 * (m - 1) is 0 for m = 1.
  expect_error<jx::ValueError>(
      [&] {
        jfft::irfft(jnp::ones(Shape{3, 1}, DType::Complex64));
      },
      {"[fft.irfft]", "2 * (m - 1)", "m = 1", "pass n"});
  expect_error<jx::ValueError>(
      [&] {
        jfft::irfftn(jnp::ones(Shape{3, 1}, DType::Complex64));
      },
      {"[fft.irfftn]", "pass s"});
  expect_error<jx::ValueError>(
      [&] {
        jfft::fft(jnp::ones(Shape{2, 0}, DType::Complex64));
      },
      {"[fft.fft]", "empty", "pass n"});
  expect_error<jx::ValueError>([&] { jfft::fftn(jnp::array(1.0)); }, {"[fft.fftn]", "no axis"});
  expect_error<jx::ValueError>([&] { jfft::fftfreq(-1); },
                               {"[fft.fftfreq]", "n = -1", "at least 1"});
  expect_error<jx::ValueError>([&] { jfft::fftfreq(0); }, {"[fft.fftfreq]", "n = 0"});
  expect_error<jx::ValueError>([&] { jfft::rfftfreq(0, 2.0); }, {"[fft.rfftfreq]", "n = 0"});
  // Padding an empty axis is fine, as in NumPy.
  Array e = jfft::fft(jnp::ones(Shape{2, 0}, DType::Complex64), 3);
  EXPECT_EQ(e.shape(), (Shape{2, 3}));
  EXPECT_EQ(jnp::sum(jnp::abs(e)).item<float>(), 0.0f);
}

}  // namespace
