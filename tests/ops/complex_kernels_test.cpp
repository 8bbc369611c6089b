// complex64/complex128 in the CPU kernels, called directly: NumPy's values (goldens from
// tests/golden/gen_complex_kernels.py), C99 Annex G's branch cuts and special values, and
// every fast kernel against its _reference twin.
//
// Tolerances are in units of the part type's epsilon (2^-23 for complex64, 2^-52 for
// complex128) and normwise, |got - want| <= k eps |want|, the usual measure for complex
// functions (a tiny imaginary part next to a large real one carries no relative accuracy
// of its own). The regular goldens are the exact answers (see the generator), so k bounds
// the kernel's own error: 2 for +, -, conj and the like (one rounding per part, or none),
// 4 for *, /, square, abs and sign (a few roundings: Smith's division rounds up to ~3
// times per part), 8 for glibc's transcendental c* functions and pow (documented to a few
// ulps; complex64 ones compute in float). Edge cases compare part by part: NaN with NaN, infinities
// and zeros exactly (signs included), other finite parts (pi/2, log 2) within 4 eps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/dot.h"
#include "backend/cpu/gather.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/reduce.h"
#include "backend/cpu/shape.h"
#include "jx/error.h"

namespace {

using jx::DType;
using jx::cpu::BinaryOp;
using jx::cpu::UnaryOp;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

struct CxUnaryGolden {
  const char* op;
  int bits;
  bool edge;
  std::vector<double> in, out;
};
struct CxBinaryGolden {
  const char* op;
  int bits;
  bool edge;
  std::vector<double> a, b, out;
};
#include "golden/complex_kernels_golden.inc"

template <class R>
std::vector<std::complex<R>> to_cx(const std::vector<double>& v) {
  std::vector<std::complex<R>> r(v.size() / 2);
  for (size_t i = 0; i < r.size(); ++i) r[i] = {R(v[2 * i]), R(v[2 * i + 1])};
  return r;
}

template <class R>
DType cdt() {
  return std::is_same_v<R, float> ? jx::complex64 : jx::complex128;
}

const std::map<std::string, UnaryOp>& unary_ops() {
  static const std::map<std::string, UnaryOp> m = {
      {"exp", UnaryOp::Exp}, {"log", UnaryOp::Log}, {"log1p", UnaryOp::Log1p},
      {"expm1", UnaryOp::Expm1}, {"tanh", UnaryOp::Tanh}, {"sin", UnaryOp::Sin},
      {"cos", UnaryOp::Cos}, {"tan", UnaryOp::Tan}, {"sinh", UnaryOp::Sinh},
      {"cosh", UnaryOp::Cosh}, {"asin", UnaryOp::Asin}, {"acos", UnaryOp::Acos},
      {"atan", UnaryOp::Atan}, {"asinh", UnaryOp::Asinh}, {"acosh", UnaryOp::Acosh},
      {"atanh", UnaryOp::Atanh}, {"sqrt", UnaryOp::Sqrt}, {"rsqrt", UnaryOp::Rsqrt},
      {"square", UnaryOp::Square}, {"neg", UnaryOp::Neg}, {"sign", UnaryOp::Sign},
      {"abs", UnaryOp::Abs}, {"real", UnaryOp::Real}, {"imag", UnaryOp::Imag},
      {"conj", UnaryOp::Conj}, {"is_finite", UnaryOp::IsFinite}};
  return m;
}

const std::map<std::string, BinaryOp>& binary_ops() {
  static const std::map<std::string, BinaryOp> m = {
      {"add", BinaryOp::Add}, {"sub", BinaryOp::Sub}, {"mul", BinaryOp::Mul},
      {"div", BinaryOp::Div}, {"pow", BinaryOp::Pow}, {"eq", BinaryOp::Eq},
      {"ne", BinaryOp::Ne}};
  return m;
}

double ulps_for(const std::string& op) {
  if (op == "neg" || op == "conj" || op == "real" || op == "imag" || op == "add" ||
      op == "sub" || op == "is_finite" || op == "eq" || op == "ne")
    return 2;
  if (op == "mul" || op == "div" || op == "square" || op == "abs" || op == "sign") return 4;
  return 8;
}

// Normwise error in eps units (0 when both are exactly equal, infinities included).
template <class R>
double err_eps(c128 got, c128 want) {
  if (got == want) return 0;
  const double scale = std::max(std::abs(want), double(std::numeric_limits<R>::min()));
  return std::abs(got - want) / scale / double(std::numeric_limits<R>::epsilon());
}

// One part of an edge case: NaN, infinities and zeros exactly (with sign).
template <class R>
bool part_ok(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want) || want == 0) return got == want && std::signbit(got) == std::signbit(want);
  return std::fabs(got - want) <= 4 * double(std::numeric_limits<R>::epsilon()) * std::fabs(want);
}

// The unary kernel's output (any of complex, real or bool) as complex128.
template <class R>
std::vector<c128> run_unary(bool fast, UnaryOp op, const std::vector<std::complex<R>>& x,
                            int64_t param = 0) {
  const int64_t n = int64_t(x.size());
  std::vector<std::complex<R>> buf(x.size());  // large enough for every output type
  if (fast) jx::cpu::unary(op, cdt<R>(), x.data(), buf.data(), n, param);
  else jx::cpu::unary_reference(op, cdt<R>(), x.data(), buf.data(), n, param);
  std::vector<c128> r(x.size());
  for (int64_t i = 0; i < n; ++i) {
    if (op == UnaryOp::IsFinite) r[size_t(i)] = reinterpret_cast<const bool*>(buf.data())[i];
    else if (op == UnaryOp::Abs || op == UnaryOp::Real || op == UnaryOp::Imag)
      r[size_t(i)] = reinterpret_cast<const R*>(buf.data())[i];
    else r[size_t(i)] = c128(buf[size_t(i)]);
  }
  return r;
}

template <class R>
void check_unary_golden(const CxUnaryGolden& g) {
  const UnaryOp op = unary_ops().at(g.op);
  const auto x = to_cx<R>(g.in);
  const auto want = to_cx<double>(g.out);
  for (bool fast : {true, false}) {
    const auto got = run_unary<R>(fast, op, x);
    for (size_t i = 0; i < x.size(); ++i) {
      const std::string where = std::string(g.op) + " c" + std::to_string(g.bits) +
                                (fast ? " fast" : " reference") + " at (" +
                                std::to_string(x[i].real()) + ", " + std::to_string(x[i].imag()) +
                                ")";
      if (g.edge) {
        EXPECT_TRUE(part_ok<R>(got[i].real(), want[i].real()) &&
                    part_ok<R>(got[i].imag(), want[i].imag()))
            << where << ": got " << got[i] << ", NumPy " << want[i];
      } else {
        EXPECT_LE(err_eps<R>(got[i], want[i]), ulps_for(g.op))
            << where << ": got " << got[i] << ", want " << want[i];
      }
    }
  }
}

TEST(ComplexUnary, MatchesNumPyAndAnnexG) {
  for (const auto& g : kCxUnary) {
    if (g.bits == 64) check_unary_golden<float>(g);
    else check_unary_golden<double>(g);
  }
}

TEST(ComplexUnary, Log1pAndExpm1KeepTheDigitsOfSmallArguments) {
  // NumPy's own complex log1p (log|1+z|) is off by ~1e-4 relative at |z| = 1e-4 in
  // complex64; the goldens are exact, so 8 eps here means full accuracy.
  for (float s : {1e-4f, 3e-3f, 1e-1f, 1e2f, 1e4f}) {
    std::vector<c64> x = {{s, s / 2}, {-s / 3, s}};
    auto l = run_unary<float>(true, UnaryOp::Log1p, x);
    for (size_t i = 0; i < x.size(); ++i) {
      const c128 z(x[i]);
      const c128 want(0.5 * std::log1p(z.real() * (2 + z.real()) + z.imag() * z.imag()),
                      std::atan2(z.imag(), 1 + z.real()));
      EXPECT_LE(std::abs(l[i] - want) / std::abs(want), 1e-6) << "log1p at " << z;
    }
  }
}

TEST(ComplexUnary, SignIsZOverItsModulus) {
  const double inf = INFINITY;
  std::vector<c128> x = {{3, 4}, {0, 0}, {-0.0, -0.0}, {inf, 1}, {-2, -inf}, {inf, inf}, {NAN, 1}};
  std::vector<c128> want = {{0.6, 0.8}, {0, 0}, {0, 0}, {1, 0}, {0, -1}, {NAN, NAN}, {NAN, NAN}};
  for (bool fast : {true, false}) {
    auto got = run_unary<double>(fast, UnaryOp::Sign, x);
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_TRUE(part_ok<double>(got[i].real(), want[i].real()) &&
                  part_ok<double>(got[i].imag(), want[i].imag()))
          << x[i] << " -> " << got[i];
  }
}

// complex64 abs is glibc's hypotf written out so that it vectorizes (complex_scalar.h):
// the same value as hypotf for finite parts, infinities, NaNs (as NaN) and subnormals,
// over special pairs and wide-ranging random ones, in the fast and reference kernels.
TEST(ComplexUnary, Complex64AbsIsHypotf) {
  const float inf = INFINITY, nan = NAN, tiny = std::numeric_limits<float>::denorm_min();
  const float big = std::numeric_limits<float>::max();
  const std::vector<float> special = {0.0f, -0.0f, 1.0f, -3.0f, tiny, -tiny, 1e-30f, big, -big, inf, -inf, nan};
  std::vector<c64> x;
  for (float a : special)
    for (float b : special) x.push_back({a, b});
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> ex(-149, 127);
  for (int i = 0; i < 20000; ++i) x.push_back({std::ldexp(mant(gen), ex(gen)), std::ldexp(mant(gen), ex(gen))});
  for (bool fast : {true, false}) {
    const auto got = run_unary<float>(fast, UnaryOp::Abs, x);
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = std::hypot(x[i].real(), x[i].imag());
      const float g = float(got[i].real());
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(g)) << x[i];
      else EXPECT_EQ(std::memcmp(&g, &want, sizeof g), 0) << x[i] << ": " << g << " vs " << want;
    }
  }
}

template <class R>
std::vector<std::complex<R>> random_cx(size_t n, uint32_t seed, double scale = 2) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<std::complex<R>> v(n);
  for (auto& z : v) z = {R(u(gen)), R(u(gen))};
  return v;
}

template <class R>
void check_fast_equals_reference() {
  // Large enough for the threaded split (OMP_NUM_THREADS=2 under ctest); the shared scalar
  // functions make every element bitwise equal.
  auto x = random_cx<R>(70001, 7);
  x[5] = {R(0), R(0)};
  x[6] = {R(INFINITY), R(1)};
  x[7] = {R(-2), R(-0.0)};
  for (const auto& [name, op] : unary_ops()) {
    auto a = run_unary<R>(true, op, x), b = run_unary<R>(false, op, x);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(c128))) << name;
  }
  for (int64_t p : {-3, -1, 0, 1, 2, 3, 7, 16}) {
    auto a = run_unary<R>(true, UnaryOp::IntegerPow, x, p);
    auto b = run_unary<R>(false, UnaryOp::IntegerPow, x, p);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(c128))) << "integer_pow " << p;
  }
}

TEST(ComplexUnary, FastMatchesReference) {
  check_fast_equals_reference<float>();
  check_fast_equals_reference<double>();
}

TEST(ComplexUnary, IntegerPowMultipliesAsTheRealKernel) {
  // On the real axis the complex products reduce to the real ones, in the same order.
  std::vector<double> xr = {1.1, -0.7, 3.3, 1e-3};
  std::vector<c128> x;
  for (double v : xr) x.push_back({v, 0.0});
  for (int64_t p : {-5, -1, 2, 3, 5, 13}) {
    std::vector<double> want(xr.size());
    jx::cpu::unary(UnaryOp::IntegerPow, jx::float64, xr.data(), want.data(), int64_t(xr.size()), p);
    auto got = run_unary<double>(true, UnaryOp::IntegerPow, x, p);
    for (size_t i = 0; i < xr.size(); ++i) EXPECT_EQ(got[i].real(), want[i]) << xr[i] << "^" << p;
  }
  // And off it, z^p against repeated multiplication within a few roundings.
  std::vector<c128> z = {{0.3, 1.2}, {-1.1, 0.4}};
  for (int64_t p : {-4, 3, 9}) {
    auto got = run_unary<double>(true, UnaryOp::IntegerPow, z, p);
    for (size_t i = 0; i < z.size(); ++i)
      EXPECT_LE(err_eps<double>(got[i], std::pow(z[i], double(p))), 32) << z[i] << "^" << p;
  }
}

TEST(ComplexUnary, RealImagConjOfRealDTypes) {
  std::vector<float> x = {1.5f, -2.0f, 0.0f};
  std::vector<float> o(3, 7.0f);
  for (bool fast : {true, false}) {
    auto run = [&](UnaryOp op) {
      if (fast) jx::cpu::unary(op, jx::float32, x.data(), o.data(), 3);
      else jx::cpu::unary_reference(op, jx::float32, x.data(), o.data(), 3);
      return o;
    };
    EXPECT_EQ(run(UnaryOp::Real), x);
    EXPECT_EQ(run(UnaryOp::Conj), x);
    EXPECT_EQ(run(UnaryOp::Imag), (std::vector<float>{0, 0, 0}));
  }
  std::vector<int32_t> i = {3, -4}, io(2, 9);
  jx::cpu::unary(UnaryOp::Imag, jx::int32, i.data(), io.data(), 2);
  EXPECT_EQ(io, (std::vector<int32_t>{0, 0}));
}

// ---- binary ----

template <class R>
std::vector<c128> run_binary(bool fast, BinaryOp op, const std::vector<std::complex<R>>& a,
                             const std::vector<std::complex<R>>& b) {
  const int64_t n = int64_t(a.size());
  std::vector<std::complex<R>> buf(a.size());
  if (fast) jx::cpu::binary(op, cdt<R>(), a.data(), &n, b.data(), &n, buf.data(), &n, 1);
  else jx::cpu::binary_reference(op, cdt<R>(), a.data(), &n, b.data(), &n, buf.data(), &n, 1);
  std::vector<c128> r(a.size());
  for (int64_t i = 0; i < n; ++i)
    r[size_t(i)] = op >= BinaryOp::Eq ? c128(reinterpret_cast<const bool*>(buf.data())[i])
                                      : c128(buf[size_t(i)]);
  return r;
}

template <class R>
void check_binary_golden(const CxBinaryGolden& g) {
  const BinaryOp op = binary_ops().at(g.op);
  const auto a = to_cx<R>(g.a), b = to_cx<R>(g.b);
  const auto want = to_cx<double>(g.out);
  for (bool fast : {true, false}) {
    const auto got = run_binary<R>(fast, op, a, b);
    for (size_t i = 0; i < a.size(); ++i) {
      std::ostringstream where;
      where << g.op << " c" << g.bits << (fast ? " fast " : " reference ") << a[i] << ", " << b[i];
      if (g.edge) {
        EXPECT_TRUE(part_ok<R>(got[i].real(), want[i].real()) &&
                    part_ok<R>(got[i].imag(), want[i].imag()))
            << where.str() << ": got " << got[i] << ", NumPy " << want[i];
      } else {
        EXPECT_LE(err_eps<R>(got[i], want[i]), ulps_for(g.op))
            << where.str() << ": got " << got[i] << ", want " << want[i];
      }
    }
  }
}

TEST(ComplexBinary, MatchesNumPy) {
  for (const auto& g : kCxBinary) {
    if (g.bits == 64) check_binary_golden<float>(g);
    else check_binary_golden<double>(g);
  }
}

TEST(ComplexBinary, DivisionRecoversAnnexGInfinitiesAndZeros) {
  // Where Smith's algorithm gives NaN + NaN i, C99 Annex G's answer (what std::complex
  // division gives): a finite number over an infinite one is zero, and so on.
  const double inf = INFINITY;
  std::vector<c128> a = {{1, 1}, {inf, inf}, {2, 0}};
  std::vector<c128> b = {{inf, inf}, {1, 1}, {0, 0}};
  for (bool fast : {true, false}) {
    auto got = run_binary<double>(fast, BinaryOp::Div, a, b);
    for (size_t i = 0; i < a.size(); ++i) {
      const c128 want = a[i] / b[i];
      EXPECT_TRUE(part_ok<double>(got[i].real(), want.real()) &&
                  part_ok<double>(got[i].imag(), want.imag()))
          << a[i] << " / " << b[i] << " = " << got[i] << ", Annex G " << want;
    }
  }
}

template <class R>
void check_binary_broadcast() {
  const int64_t as[3] = {3, 1, 40}, bs[3] = {1, 5, 40}, os[3] = {3, 5, 40}, ss[3] = {1, 1, 1};
  auto a = random_cx<R>(120, 1), b = random_cx<R>(200, 2), s = random_cx<R>(1, 3);
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Pow,
                      BinaryOp::Eq, BinaryOp::Ne}) {
    std::vector<std::complex<R>> f(600), r(600);
    jx::cpu::binary(op, cdt<R>(), a.data(), as, b.data(), bs, f.data(), os, 3);
    jx::cpu::binary_reference(op, cdt<R>(), a.data(), as, b.data(), bs, r.data(), os, 3);
    const size_t bytes = op >= BinaryOp::Eq ? 600 : 600 * sizeof(std::complex<R>);
    EXPECT_EQ(0, std::memcmp(f.data(), r.data(), bytes)) << int(op);
    jx::cpu::binary(op, cdt<R>(), s.data(), ss, b.data(), bs, f.data(), bs, 3);  // scalar lhs
    jx::cpu::binary_reference(op, cdt<R>(), s.data(), ss, b.data(), bs, r.data(), bs, 3);
    EXPECT_EQ(0, std::memcmp(f.data(), r.data(), op >= BinaryOp::Eq ? 200 : 200 * sizeof(s[0])));
  }
}

TEST(ComplexBinary, FastMatchesReferenceWhenBroadcasting) {
  check_binary_broadcast<float>();
  check_binary_broadcast<double>();
}

TEST(ComplexBinary, ComplexFromParts) {
  const int64_t as[2] = {2, 3}, bs[2] = {1, 3}, os[2] = {2, 3};
  std::vector<float> re = {1, 2, 3, 4, 5, 6}, im = {-0.0f, 0.5f, INFINITY};
  std::vector<c64> f(6), r(6);
  jx::cpu::binary(BinaryOp::Complex, jx::float32, re.data(), as, im.data(), bs, f.data(), os, 2);
  jx::cpu::binary_reference(BinaryOp::Complex, jx::float32, re.data(), as, im.data(), bs,
                            r.data(), os, 2);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(f[size_t(i)].real(), re[size_t(i)]);
    EXPECT_EQ(std::signbit(f[size_t(i)].imag()), std::signbit(im[size_t(i % 3)]));
    EXPECT_EQ(f[size_t(i)].imag(), im[size_t(i % 3)]);
  }
  EXPECT_EQ(0, std::memcmp(f.data(), r.data(), sizeof(c64) * 6));
  std::vector<double> dre = {1.5}, dim = {-2.5};
  std::vector<c128> d(1);
  const int64_t one = 1;
  jx::cpu::binary(BinaryOp::Complex, jx::float64, dre.data(), &one, dim.data(), &one, d.data(), &one, 1);
  EXPECT_EQ(d[0], c128(1.5, -2.5));
}

// ---- convert ----

TEST(ComplexConvert, ToAndFromEveryKind) {
  for (bool fast : {true, false}) {
    auto conv = [&](DType from, DType to, const void* src, void* dst, int64_t n) {
      if (fast) jx::cpu::convert(from, to, src, dst, n);
      else jx::cpu::convert_reference(from, to, src, dst, n);
    };
    std::vector<c64> z = {{1.5f, -2.0f}, {-3e10f, 1.0f}, {0.0f, 0.0f}, {0.0f, -0.5f}, {NAN, 0.0f}};
    std::vector<float> f(5);
    conv(jx::complex64, jx::float32, z.data(), f.data(), 5);  // the real part
    EXPECT_EQ(f[0], 1.5f);
    EXPECT_EQ(f[1], -3e10f);
    std::vector<int32_t> i(5);
    conv(jx::complex64, jx::int32, z.data(), i.data(), 5);  // as float -> int: saturating
    EXPECT_EQ(i, (std::vector<int32_t>{1, INT32_MIN, 0, 0, 0}));
    bool b[5];
    conv(jx::complex64, jx::bool_, z.data(), b, 5);  // either part nonzero
    EXPECT_EQ(std::vector<bool>(b, b + 5), (std::vector<bool>{true, true, false, true, true}));
    std::vector<c128> w(5);
    conv(jx::complex64, jx::complex128, z.data(), w.data(), 5);
    EXPECT_EQ(w[0], c128(1.5, -2.0));
    std::vector<c64> back(5);
    conv(jx::complex128, jx::complex64, w.data(), back.data(), 5);
    EXPECT_EQ(0, std::memcmp(back.data(), z.data(), 4 * sizeof(c64)));  // NaN row aside
    std::vector<jx::half> h = {jx::half(2.5f), jx::half(-1.0f)};
    std::vector<c64> hz(2);
    conv(jx::float16, jx::complex64, h.data(), hz.data(), 2);
    EXPECT_EQ(hz[0], c64(2.5f, 0.0f));
    EXPECT_EQ(hz[1], c64(-1.0f, 0.0f));
    std::vector<jx::bhalf> bh(2);
    conv(jx::complex64, jx::bfloat16, z.data(), bh.data(), 2);
    EXPECT_EQ(float(bh[0]), 1.5f);
    std::vector<int64_t> iv = {-7, 1LL << 40};
    std::vector<c128> iz(2);
    conv(jx::int64, jx::complex128, iv.data(), iz.data(), 2);
    EXPECT_EQ(iz[1], c128(double(1LL << 40), 0.0));
    bool bv[2] = {true, false};
    std::vector<c64> bz(2);
    conv(jx::bool_, jx::complex64, bv, bz.data(), 2);
    EXPECT_EQ(bz[0], c64(1, 0));
    EXPECT_EQ(bz[1], c64(0, 0));
  }
}

// ---- reductions and scans ----

template <class R>
void check_reduce_golden(const std::vector<double>& xs, const std::vector<double>& sum1,
                         const std::vector<double>& prod02) {
  const auto x = to_cx<R>(xs);
  const int64_t shape[3] = {2, 3, 4};
  const bool r1[3] = {false, true, false}, r02[3] = {true, false, true};
  for (bool fast : {true, false}) {
    std::vector<std::complex<R>> s(8), p(3);
    auto red = fast ? jx::cpu::reduce : jx::cpu::reduce_reference;
    red(jx::cpu::ReduceOp::Sum, cdt<R>(), x.data(), shape, 3, r1, s.data());
    red(jx::cpu::ReduceOp::Prod, cdt<R>(), x.data(), shape, 3, r02, p.data());
    const auto ws = to_cx<double>(sum1), wp = to_cx<double>(prod02);
    for (size_t i = 0; i < 8; ++i)
      EXPECT_LE(std::abs(c128(s[i]) - ws[i]), 4 * std::numeric_limits<R>::epsilon() * 3 * 3) << i;
    for (size_t i = 0; i < 3; ++i)
      EXPECT_LE(err_eps<R>(c128(p[i]), wp[i]), 8 * 8) << i;  // 8 products, a few ulps each
  }
}

TEST(ComplexReduce, MatchesNumPy) {
  check_reduce_golden<float>(kCxRedX64, kCxSumAxis1_64, kCxProdAxes02_64);
  check_reduce_golden<double>(kCxRedX128, kCxSumAxis1_128, kCxProdAxes02_128);
}

template <class R>
void check_reduce_large() {
  // Pairwise sums (inner reduced: contiguous rows, inner kept: rows of the kept dim) and
  // threaded splits. The reference sums in complex128, so the float sum's error bound is
  // ~log2(n) eps * sum |x|; products of unit-modulus values stay near 1.
  const int64_t n = 70000;
  auto x = random_cx<R>(size_t(n), 11);
  auto unit = random_cx<R>(4000, 12);
  for (auto& z : unit) z = std::polar(R(1) + R(0.001) * z.real(), R(3) * z.imag());
  struct Case {
    std::vector<int64_t> shape;
    std::vector<bool> reduced;
  };
  const std::vector<Case> sums = {{{n}, {true}}, {{7, n / 7}, {false, true}},
                                  {{n / 7, 7}, {true, false}}, {{2, n / 14, 7}, {true, false, true}},
                                  {{1, n}, {false, true}}};
  for (const auto& c : sums) {
    const int nd = int(c.shape.size());
    int64_t nout = 1;
    bool red[3];
    for (int d = 0; d < nd; ++d) {
      red[d] = c.reduced[size_t(d)];
      if (!red[d]) nout *= c.shape[size_t(d)];
    }
    std::vector<std::complex<R>> f(static_cast<size_t>(nout)), r(static_cast<size_t>(nout));
    jx::cpu::reduce(jx::cpu::ReduceOp::Sum, cdt<R>(), x.data(), c.shape.data(), nd, red, f.data());
    jx::cpu::reduce_reference(jx::cpu::ReduceOp::Sum, cdt<R>(), x.data(), c.shape.data(), nd, red,
                              r.data());
    const double per = double(n / nout) * 2 * 1.5;  // sum of |x| per output
    for (int64_t o = 0; o < nout; ++o)
      EXPECT_LE(std::abs(c128(f[size_t(o)]) - c128(r[size_t(o)])),
                20 * std::numeric_limits<R>::epsilon() * per)
          << "sum case " << nd << "-d, output " << o;
  }
  const int64_t ushape[2] = {2, 2000};
  const bool inner[2] = {false, true}, outer[2] = {true, false};
  for (const bool* red : {inner, outer}) {
    const int64_t nout = red[1] ? 2 : 2000;
    std::vector<std::complex<R>> f(static_cast<size_t>(nout)), r(static_cast<size_t>(nout));
    jx::cpu::reduce(jx::cpu::ReduceOp::Prod, cdt<R>(), unit.data(), ushape, 2, red, f.data());
    jx::cpu::reduce_reference(jx::cpu::ReduceOp::Prod, cdt<R>(), unit.data(), ushape, 2, red, r.data());
    const double len = red[1] ? 2000 : 2;
    for (int64_t o = 0; o < nout; ++o)
      EXPECT_LE(err_eps<R>(c128(f[size_t(o)]), c128(r[size_t(o)])), 8 * len) << "prod " << o;
  }
}

TEST(ComplexReduce, FastMatchesReferenceOnLargeInputs) {
  check_reduce_large<float>();
  check_reduce_large<double>();
}

// The order kernels on inputs with NaN parts and real-part ties, threaded, both layouts:
// complex max/min fold in order (their reducer is not associative once a NaN part takes
// part), argmax/argmin take the first NaN, sort puts NaN parts last; fast == reference,
// bit for bit.
template <class R>
void check_order_large() {
  auto big = random_cx<R>(3 * 40000, 9);
  for (size_t i = 0; i < big.size(); i += 97) big[i] = {R(NAN), big[i].imag()};
  for (size_t i = 5; i < big.size(); i += 89) big[i] = {big[i].real(), R(NAN)};
  for (size_t i = 7; i < big.size(); i += 13) big[i] = {R(0.5), big[i].imag()};
  const DType dt = cdt<R>();
  const int64_t bs[2] = {3, 40000}, bt[2] = {40000, 3};
  for (auto op : {jx::cpu::ReduceOp::Max, jx::cpu::ReduceOp::Min})
    for (const int64_t* sh : {bs, bt})
      for (int axis : {0, 1}) {
        const bool red[2] = {axis == 0, axis == 1};
        const size_t nout = size_t(sh[1 - axis]);
        std::vector<std::complex<R>> f(nout), r(nout);
        jx::cpu::reduce(op, dt, big.data(), sh, 2, red, f.data());
        jx::cpu::reduce_reference(op, dt, big.data(), sh, 2, red, r.data());
        EXPECT_EQ(0, std::memcmp(f.data(), r.data(), nout * sizeof(f[0]))) << int(op) << " " << axis;
        std::vector<int64_t> fi(nout), ri(nout);
        const bool is_max = op == jx::cpu::ReduceOp::Max;
        jx::cpu::argreduce(is_max, dt, DType::Int64, big.data(), sh, 2, axis, fi.data());
        jx::cpu::argreduce_reference(is_max, dt, DType::Int64, big.data(), sh, 2, axis, ri.data());
        EXPECT_EQ(fi, ri) << "arg" << (is_max ? "max" : "min") << " axis " << axis;
      }
  const int64_t ss[2] = {30, 400}, st[2] = {400, 30};  // the reference sort is quadratic
  for (const int64_t* sh : {ss, st})
    for (int axis : {0, 1}) {
      std::vector<std::complex<R>> f(12000), r(12000);
      const void* in[1] = {big.data()};
      void* fo[1] = {f.data()};
      void* ro[1] = {r.data()};
      jx::cpu::sort(1, &dt, in, fo, sh, 2, axis, 1, true);
      jx::cpu::sort_reference(1, &dt, in, ro, sh, 2, axis, 1, true);
      EXPECT_EQ(0, std::memcmp(f.data(), r.data(), f.size() * sizeof(f[0]))) << "sort " << axis;
    }
}

TEST(ComplexReduce, OrderKernelsFastMatchReference) {
  check_order_large<float>();
  check_order_large<double>();
}

template <class R>
void check_cumulative(const std::vector<double>& xs, const std::vector<double>& cumsum1,
                      const std::vector<double>& cumprod2) {
  const auto x = to_cx<R>(xs);
  const int64_t shape[3] = {2, 3, 4};
  for (bool fast : {true, false}) {
    auto cum = fast ? jx::cpu::cumulative : jx::cpu::cumulative_reference;
    std::vector<std::complex<R>> s(24), p(24);
    cum(jx::cpu::CumOp::Sum, cdt<R>(), x.data(), shape, 3, 1, false, s.data());
    cum(jx::cpu::CumOp::Prod, cdt<R>(), x.data(), shape, 3, 2, false, p.data());
    const auto ws = to_cx<double>(cumsum1), wp = to_cx<double>(cumprod2);
    for (size_t i = 0; i < 24; ++i) {
      EXPECT_LE(std::abs(c128(s[i]) - ws[i]), 4 * std::numeric_limits<R>::epsilon() * 3 * 3) << i;
      EXPECT_LE(err_eps<R>(c128(p[i]), wp[i]), 4 * 4) << i;
    }
  }
  // Both axes layouts, both directions, large enough for threads: fast == reference.
  auto big = random_cx<R>(3 * 40000, 5, 1.0);
  for (auto& z : big) z = std::polar(R(1), z.real());  // unit modulus keeps products finite
  const int64_t bs[2] = {3, 40000}, bt[2] = {40000, 3};
  for (auto op : {jx::cpu::CumOp::Sum, jx::cpu::CumOp::Prod})
    for (bool rev : {false, true})
      for (const int64_t* sh : {bs, bt})
        for (int axis : {0, 1}) {
          std::vector<std::complex<R>> f(big.size()), r(big.size());
          jx::cpu::cumulative(op, cdt<R>(), big.data(), sh, 2, axis, rev, f.data());
          jx::cpu::cumulative_reference(op, cdt<R>(), big.data(), sh, 2, axis, rev, r.data());
          EXPECT_EQ(0, std::memcmp(f.data(), r.data(), f.size() * sizeof(f[0])))
              << int(op) << " axis " << axis << " reverse " << rev;
        }
}

TEST(ComplexCumulative, MatchesNumPyAndReference) {
  check_cumulative<float>(kCxRedX64, kCxCumsumAxis1_64, kCxCumprodAxis2_64);
  check_cumulative<double>(kCxRedX128, kCxCumsumAxis1_128, kCxCumprodAxis2_128);
}

// ---- dot_general ----

template <class R>
void expect_close_dot(const std::vector<std::complex<R>>& got,
                      const std::vector<std::complex<R>>& want, int64_t K, const char* what) {
  // A sum of K products of values below ~3 in modulus: K roundings of at most ~10.
  const double tol = 4 * double(K + 2) * std::numeric_limits<R>::epsilon() * 10;
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_LE(std::abs(c128(got[i]) - c128(want[i])), tol) << what << " at " << i;
}

template <class R>
void check_dot(const std::vector<double>& ls, const std::vector<double>& rs,
               const std::vector<double>& outs) {
  const auto l = to_cx<R>(ls), r = to_cx<R>(rs);
  const int64_t lshape[3] = {2, 3, 4}, rshape[3] = {2, 4, 5};
  jx::cpu::DotDims d{{2}, {1}, {0}, {0}};
  std::vector<std::complex<R>> f(30), ref(30);
  jx::cpu::dot_general(cdt<R>(), cdt<R>(), l.data(), lshape, 3, r.data(), rshape, 3, d, f.data());
  jx::cpu::dot_general_reference(cdt<R>(), cdt<R>(), l.data(), lshape, 3, r.data(), rshape, 3, d,
                                 ref.data());
  auto want = to_cx<double>(outs);
  std::vector<std::complex<R>> w(want.begin(), want.end());
  expect_close_dot<R>(f, w, 4, "batched matmul vs NumPy");
  expect_close_dot<R>(ref, w, 4, "reference vs NumPy");

  // Layouts: contracting dims first / last on either side (BLAS 'T' and 'N'), a permuted
  // operand that needs a copy, and a product big enough for the threaded row split.
  struct Case {
    std::vector<int64_t> ls, rs;
    jx::cpu::DotDims d;
    int64_t K;
  };
  const std::vector<Case> cases = {
      {{5, 7}, {7, 6}, {{1}, {0}, {}, {}}, 7},
      {{7, 5}, {7, 6}, {{0}, {0}, {}, {}}, 7},
      {{5, 7}, {6, 7}, {{1}, {1}, {}, {}}, 7},
      {{7, 5}, {6, 7}, {{0}, {1}, {}, {}}, 7},
      {{3, 4, 2, 5}, {2, 4, 5, 6}, {{1, 3}, {1, 2}, {2}, {0}}, 20},
      {{1, 9}, {9, 1}, {{1}, {0}, {}, {}}, 9},
      {{4, 0}, {0, 3}, {{1}, {0}, {}, {}}, 0},
      {{4, 1}, {1, 3}, {{1}, {0}, {}, {}}, 1},
      {{130, 128}, {128, 129}, {{1}, {0}, {}, {}}, 128},
  };
  for (const auto& c : cases) {
    int64_t nl = 1, nr = 1;
    for (auto v : c.ls) nl *= v;
    for (auto v : c.rs) nr *= v;
    auto a = random_cx<R>(size_t(nl), 21, 1.0), b = random_cx<R>(size_t(nr), 22, 1.0);
    // output size: batch * lhs free * rhs free
    int64_t no = 1;
    for (int64_t i = 0; i < int64_t(c.ls.size()); ++i)
      if (std::find(c.d.lhs_contracting.begin(), c.d.lhs_contracting.end(), i) ==
          c.d.lhs_contracting.end())
        no *= c.ls[size_t(i)];
    for (int64_t i = 0; i < int64_t(c.rs.size()); ++i)
      if (std::find(c.d.rhs_contracting.begin(), c.d.rhs_contracting.end(), i) ==
              c.d.rhs_contracting.end() &&
          std::find(c.d.rhs_batch.begin(), c.d.rhs_batch.end(), i) == c.d.rhs_batch.end())
        no *= c.rs[size_t(i)];
    std::vector<std::complex<R>> fo(size_t(no), {R(7), R(7)}), ro(static_cast<size_t>(no));
    jx::cpu::dot_general(cdt<R>(), cdt<R>(), a.data(), c.ls.data(), int(c.ls.size()), b.data(),
                         c.rs.data(), int(c.rs.size()), c.d, fo.data());
    jx::cpu::dot_general_reference(cdt<R>(), cdt<R>(), a.data(), c.ls.data(), int(c.ls.size()),
                                   b.data(), c.rs.data(), int(c.rs.size()), c.d, ro.data());
    expect_close_dot<R>(fo, ro, c.K, ("layout K=" + std::to_string(c.K)).c_str());
  }
}

TEST(ComplexDot, MatchesNumPyAndReference) {
  check_dot<float>(kCxDotL64, kCxDotR64, kCxDotOut64);
  check_dot<double>(kCxDotL128, kCxDotR128, kCxDotOut128);
}

TEST(ComplexDot, NoConjugationAndRealOperandsPromote) {
  // (1+i)(1+i) = 2i: lax.dot_general does not conjugate.
  std::vector<c64> a = {{1, 1}}, b = {{1, 1}}, o(1);
  const int64_t s[1] = {1};
  jx::cpu::DotDims d{{0}, {0}, {}, {}};
  jx::cpu::dot_general(jx::complex64, jx::complex64, a.data(), s, 1, b.data(), s, 1, d, o.data());
  EXPECT_EQ(o[0], c64(0, 2));
  std::vector<float> x = {1, 2, 3, 4}, y = {5, 6};
  const int64_t xs[2] = {2, 2}, ys[1] = {2};
  std::vector<c64> out(2);
  jx::cpu::DotDims d2{{1}, {0}, {}, {}};
  jx::cpu::dot_general(jx::float32, jx::complex64, x.data(), xs, 2, y.data(), ys, 1, d2, out.data());
  EXPECT_EQ(out[0], c64(17, 0));
  EXPECT_EQ(out[1], c64(39, 0));
}

// ---- scatter, select_n, clamp, shape kernels ----

TEST(ComplexScatter, AddAndMulMatchReference) {
  jx::cpu::ScatterDims dn{{1}, {0}, {0}, {}, {}};
  const jx::cpu::Dims op{5, 3}, is{4, 1}, us{4, 3};
  std::vector<int64_t> idx = {0, 3, 0, 4};
  for (auto sop : {jx::cpu::ScatterOp::Set, jx::cpu::ScatterOp::Add, jx::cpu::ScatterOp::Mul}) {
    auto base = random_cx<double>(15, 31), upd = random_cx<double>(12, 32);
    auto f = base, r = base;
    jx::cpu::scatter(sop, jx::complex128, f.data(), op, idx.data(), is, upd.data(), us, dn, false);
    jx::cpu::scatter_reference(sop, jx::complex128, r.data(), op, idx.data(), is, upd.data(), us,
                               dn, false);
    EXPECT_EQ(0, std::memcmp(f.data(), r.data(), f.size() * sizeof(c128))) << int(sop);
    if (sop == jx::cpu::ScatterOp::Add) {
      EXPECT_EQ(f[10], base[10] + upd[4]);  // update row 1 lands on operand row 3
      EXPECT_EQ(f[3], base[3]);             // operand row 1 untouched
    }
  }
  std::vector<c64> o(15), u(12);
  jx::cpu::scatter(jx::cpu::ScatterOp::Add, jx::complex64, o.data(), op, idx.data(), is, u.data(),
                   us, dn, false);
}

TEST(ComplexSelect, SixteenAndEightByteItems) {
  const int64_t os[2] = {3, 50}, ws[2] = {3, 50}, s1[2] = {1, 50}, s0[2] = {3, 1};
  bool w[150];
  std::mt19937 gen(3);
  for (int i = 0; i < 150; ++i) w[i] = gen() & 1;
  int32_t wi[150];
  for (int i = 0; i < 150; ++i) wi[i] = int32_t(gen() % 5) - 1;
  auto a = random_cx<double>(150, 1), b = random_cx<double>(50, 2), c = random_cx<double>(3, 3);
  auto af = random_cx<float>(150, 4), bf = random_cx<float>(50, 5), cf = random_cx<float>(3, 6);
  const int64_t* shapes[3] = {os, s1, s0};
  for (int ncases : {2, 3}) {
    const void* cases[3] = {a.data(), b.data(), c.data()};
    const void* casesf[3] = {af.data(), bf.data(), cf.data()};
    const DType wd = ncases == 2 ? jx::bool_ : jx::int32;
    const void* which = ncases == 2 ? static_cast<const void*>(w) : wi;
    std::vector<c128> f(150), r(150);
    jx::cpu::select_n(wd, which, ws, 16, cases, shapes, ncases, f.data(), os, 2);
    jx::cpu::select_n_reference(wd, which, ws, 16, cases, shapes, ncases, r.data(), os, 2);
    EXPECT_EQ(0, std::memcmp(f.data(), r.data(), sizeof(c128) * 150)) << ncases;
    if (ncases == 2) {
      EXPECT_EQ(f[7], w[7] ? b[7] : a[7]);
    }
    std::vector<c64> ff(150), rf(150);
    jx::cpu::select_n(wd, which, ws, 8, casesf, shapes, ncases, ff.data(), os, 2);
    jx::cpu::select_n_reference(wd, which, ws, 8, casesf, shapes, ncases, rf.data(), os, 2);
    EXPECT_EQ(0, std::memcmp(ff.data(), rf.data(), sizeof(c64) * 150)) << ncases;
  }
}

TEST(ComplexShape, SixteenByteItemsMoveWhole) {
  auto x = random_cx<double>(24, 9);
  const int64_t shape[3] = {2, 3, 4}, perm[3] = {2, 0, 1};
  std::vector<c128> f(24), r(24);
  jx::cpu::transpose(16, x.data(), shape, perm, f.data(), 3);
  jx::cpu::transpose_reference(16, x.data(), shape, perm, r.data(), 3);
  EXPECT_EQ(0, std::memcmp(f.data(), r.data(), sizeof(c128) * 24));
  EXPECT_EQ(f[1], x[4]);  // out[0, 0, 1] = x[0, 1, 0]
  const int64_t lo[3] = {1, 0, -1}, interior[3] = {0, 1, 0}, oshape[3] = {3, 5, 3};
  const c128 pv(-1, 2);
  std::vector<c128> pf(45), pr(45);
  jx::cpu::pad(16, x.data(), shape, &pv, lo, interior, pf.data(), oshape, 3);
  jx::cpu::pad_reference(16, x.data(), shape, &pv, lo, interior, pr.data(), oshape, 3);
  EXPECT_EQ(0, std::memcmp(pf.data(), pr.data(), sizeof(c128) * 45));
  EXPECT_EQ(pf[0], pv);
  const bool rv[3] = {true, false, true};
  jx::cpu::rev(16, x.data(), shape, rv, f.data(), 3);
  jx::cpu::rev_reference(16, x.data(), shape, rv, r.data(), 3);
  EXPECT_EQ(0, std::memcmp(f.data(), r.data(), sizeof(c128) * 24));
  std::vector<c64> io(6), ir(6);
  const int64_t is[2] = {2, 3};
  jx::cpu::iota(jx::complex64, io.data(), is, 2, 1);
  jx::cpu::iota_reference(jx::complex64, ir.data(), is, 2, 1);
  EXPECT_EQ(io, (std::vector<c64>{{0, 0}, {1, 0}, {2, 0}, {0, 0}, {1, 0}, {2, 0}}));
  EXPECT_EQ(io, ir);
}

// ---- what complex does not support ----

TEST(ComplexKernels, UnorderedAndUndefinedOpsThrowTypeError) {
  std::vector<c64> x(4, {1, 1}), o(4);
  const int64_t n = 4;
  const bool red[1] = {true};
  EXPECT_THROW(jx::cpu::unary(UnaryOp::Floor, jx::complex64, x.data(), o.data(), 4), jx::TypeError);
  EXPECT_THROW(jx::cpu::unary_reference(UnaryOp::Erf, jx::complex64, x.data(), o.data(), 4),
               jx::TypeError);
  // lax's ordered comparisons are real-only (max/min, the reductions and scans by them,
  // argmax and sort order complex values: tests/numpy/complex_order_test.cpp).
  EXPECT_THROW(jx::cpu::binary(BinaryOp::Lt, jx::complex64, x.data(), &n, x.data(), &n, o.data(), &n, 1),
               jx::TypeError);
  EXPECT_THROW(jx::cpu::binary(BinaryOp::Atan2, jx::complex128, x.data(), &n, x.data(), &n,
                               o.data(), &n, 1),
               jx::TypeError);
  EXPECT_THROW(jx::cpu::reduce(jx::cpu::ReduceOp::And, jx::complex64, x.data(), &n, 1, red, o.data()),
               jx::TypeError);
  EXPECT_THROW(jx::cpu::reduce_reference(jx::cpu::ReduceOp::Or, jx::complex64, x.data(), &n, 1,
                                         red, o.data()),
               jx::TypeError);
  EXPECT_THROW(jx::cpu::cumulative(jx::cpu::CumOp::LogSumExp, jx::complex64, x.data(), &n, 1, 0, false,
                                   o.data()),
               jx::TypeError);
  EXPECT_THROW(jx::cpu::clamp(jx::complex64, x.data(), &n, x.data(), &n, x.data(), &n, o.data(), &n, 1),
               jx::TypeError);
  jx::cpu::ScatterDims dn{{}, {0}, {0}, {}, {}};
  int64_t si[1] = {0};
  EXPECT_THROW(jx::cpu::scatter(jx::cpu::ScatterOp::Min, jx::complex64, o.data(), {4}, si, {1, 1},
                                x.data(), {1}, dn, false),
               jx::TypeError);
  try {
    jx::cpu::unary(UnaryOp::Floor, jx::complex128, x.data(), o.data(), 1);
  } catch (const jx::TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("floor"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("complex128"), std::string::npos) << e.what();
  }
}

}  // namespace
