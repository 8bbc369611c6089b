// Table-driven tests of the elementwise primitives: every unary/binary/convert/select
// primitive x every dtype x shapes {scalar, size 0, (7,), (3,1)x(1,5), (1000003,)}.
// Fast kernels are checked against their naive reference kernels (exact for exact ops, a
// tolerance for transcendentals); dtypes a primitive rejects must throw DTypeError.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/kernels.h"
#include "core/array_impl.h"
#include "jx/lax.h"
#include "jx/numpy.h"
#include "ops/primitive.h"
#include "support/dtype_switch.h"
#include "transforms/bind.h"

namespace {

using jx::Array;
using jx::DType;
using jx::Shape;
using jx::ops::Prim;
namespace cpu = jx::cpu;

const DType kAllDTypes[] = {DType::Bool,   DType::Int8,    DType::Int16,    DType::Int32,
                            DType::Int64,  DType::UInt8,   DType::UInt16,   DType::UInt32,
                            DType::UInt64, DType::Float16, DType::BFloat16, DType::Float32,
                            DType::Float64};

// Which dtypes each primitive must accept (from jax/_src/lax/lax.py's dtype sets).
enum class Acc { F, N, SF, I, IB, A };
bool expect_accepts(Acc a, DType t) {
  bool fl = jx::is_floating(t), in = jx::is_integer(t);
  switch (a) {
    case Acc::F: return fl;
    case Acc::N: return fl || in;
    case Acc::SF: return fl || jx::is_signed_integer(t);
    case Acc::I: return in;
    case Acc::IB: return in || t == DType::Bool;
    case Acc::A: return true;
  }
  return false;
}

// ---- data ----
struct Buf {
  DType dtype;
  std::vector<unsigned char> bytes;
  int64_t n;
  const void* data() const { return bytes.data(); }
  void* data() { return bytes.data(); }
};

Buf make_buf(DType dt, int64_t n) {
  return Buf{dt, std::vector<unsigned char>(static_cast<size_t>(n) * jx::itemsize(dt) + 8), n};
}

// Random values in [lo, hi] with special values sprinkled in for floats; `small_ints`
// keeps integers in [lo, hi] too (shift amounts, exponents), else they span the type.
template <class T>
void fill_random(T* p, int64_t n, double lo, double hi, uint32_t seed, bool specials,
                 bool small_ints) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5};
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      p[i] = (rng() & 1) != 0;
    } else if constexpr (std::is_integral_v<T>) {
      if (small_ints) p[i] = T(std::llround(u(rng)));
      else p[i] = T(rng());
      if (i % 11 == 3) p[i] = T(0);
      if (i % 13 == 5) p[i] = std::numeric_limits<T>::min();
      if (i % 17 == 7) p[i] = T(-1);
    } else {
      double v = u(rng);
      if (specials && i % 9 == 4) v = sp[(i / 9) % 10];
      if constexpr (std::is_same_v<T, double>) p[i] = v;
      else p[i] = T(float(v));
    }
  }
}

// Random values in [lo, hi] with special values sprinkled in for floats; `small_ints`
// keeps integers in [lo, hi] too (shift amounts, exponents), else they span the type.
Buf random_buf(DType dt, int64_t n, double lo, double hi, uint32_t seed, bool specials = true,
               bool small_ints = false) {
  Buf b = make_buf(dt, n);
  JX_DTYPE_SWITCH(dt, T,
                  fill_random<T>(reinterpret_cast<T*>(b.data()), n, lo, hi, seed, specials,
                                 small_ints));
  return b;
}

double as_double(DType dt, const Buf& b, int64_t i) {
  double r = 0;
  JX_DTYPE_SWITCH(dt, T, {
    const T* p = reinterpret_cast<const T*>(b.data());
    if constexpr (std::is_same_v<T, jx::half> || std::is_same_v<T, jx::bhalf>) r = double(float(p[i]));
    else r = double(p[i]);
  });
  return r;
}

// Element i of two result buffers agree: bitwise for exact ops, else within rtol/atol
// (NaN matches NaN, infinities must match exactly).
::testing::AssertionResult same(DType dt, const Buf& a, const Buf& b, int64_t n, double rtol,
                                double atol, const std::string& what) {
  for (int64_t i = 0; i < n; ++i) {
    if (rtol == 0 && atol == 0) {
      size_t s = jx::itemsize(dt);
      if (std::memcmp(a.bytes.data() + size_t(i) * s, b.bytes.data() + size_t(i) * s, s) != 0) {
        // -0.0 vs 0.0 and NaN payloads are still errors for exact ops, except NaN sign.
        double x = as_double(dt, a, i), y = as_double(dt, b, i);
        if (!(std::isnan(x) && std::isnan(y)))
          return ::testing::AssertionFailure()
                 << what << " element " << i << ": fast " << x << " vs reference " << y;
      }
      continue;
    }
    double x = as_double(dt, a, i), y = as_double(dt, b, i);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::isinf(x) || std::isinf(y)) {
      if (x == y) continue;
      // Finite vs inf right at the overflow boundary of a narrow type is a rounding tie.
      if (!(std::isinf(x) && std::isinf(y)) && std::fabs(std::isinf(x) ? y : x) > 1e300)
        continue;
      if (jx::itemsize(dt) <= 4 && std::fabs(std::isinf(x) ? y : x) > 3e38) continue;
      if (jx::itemsize(dt) == 2 && std::fabs(std::isinf(x) ? y : x) > 6e4) continue;
      return ::testing::AssertionFailure()
             << what << " element " << i << ": fast " << x << " vs reference " << y;
    }
    if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y)))
      return ::testing::AssertionFailure() << what << " element " << i << ": fast " << x
                                           << " vs reference " << y << " (diff " << x - y << ")";
  }
  return ::testing::AssertionSuccess();
}

const int64_t kSizes[] = {1, 0, 7, 15, 1000003};

// ---- unary ----
enum class Tol { Exact, Libm, Special };
struct UnaryCase {
  Prim prim;
  cpu::UnaryOp op;
  Acc acc;
  Tol tol;
  double lo, hi;  // input range
  int64_t param = 0;
};

const UnaryCase kUnary[] = {
    {Prim::Neg, cpu::UnaryOp::Neg, Acc::N, Tol::Exact, -100, 100},
    {Prim::Sign, cpu::UnaryOp::Sign, Acc::N, Tol::Exact, -3, 3},
    {Prim::Floor, cpu::UnaryOp::Floor, Acc::F, Tol::Exact, -1e3, 1e3},
    {Prim::Ceil, cpu::UnaryOp::Ceil, Acc::F, Tol::Exact, -1e3, 1e3},
    {Prim::Round, cpu::UnaryOp::Round, Acc::F, Tol::Exact, -10, 10, 0},
    {Prim::Round, cpu::UnaryOp::RoundEven, Acc::F, Tol::Exact, -10, 10, 1},
    {Prim::IsFinite, cpu::UnaryOp::IsFinite, Acc::F, Tol::Exact, -10, 10},
    {Prim::Exp, cpu::UnaryOp::Exp, Acc::F, Tol::Libm, -100, 100},
    {Prim::Exp2, cpu::UnaryOp::Exp2, Acc::F, Tol::Libm, -140, 140},
    {Prim::Log, cpu::UnaryOp::Log, Acc::F, Tol::Libm, -1, 1e6},
    {Prim::Log1p, cpu::UnaryOp::Log1p, Acc::F, Tol::Libm, -1.5, 10},
    {Prim::Expm1, cpu::UnaryOp::Expm1, Acc::F, Tol::Libm, -5, 5},
    {Prim::Tanh, cpu::UnaryOp::Tanh, Acc::F, Tol::Libm, -20, 20},
    {Prim::Logistic, cpu::UnaryOp::Logistic, Acc::F, Tol::Libm, -100, 100},
    {Prim::Sin, cpu::UnaryOp::Sin, Acc::F, Tol::Libm, -10, 10},
    {Prim::Cos, cpu::UnaryOp::Cos, Acc::F, Tol::Libm, -10, 10},
    {Prim::Tan, cpu::UnaryOp::Tan, Acc::F, Tol::Libm, -1.5, 1.5},
    {Prim::Asin, cpu::UnaryOp::Asin, Acc::F, Tol::Libm, -1.2, 1.2},
    {Prim::Acos, cpu::UnaryOp::Acos, Acc::F, Tol::Libm, -1.2, 1.2},
    {Prim::Atan, cpu::UnaryOp::Atan, Acc::F, Tol::Libm, -50, 50},
    {Prim::Sinh, cpu::UnaryOp::Sinh, Acc::F, Tol::Libm, -20, 20},
    {Prim::Cosh, cpu::UnaryOp::Cosh, Acc::F, Tol::Libm, -20, 20},
    {Prim::Asinh, cpu::UnaryOp::Asinh, Acc::F, Tol::Libm, -100, 100},
    {Prim::Acosh, cpu::UnaryOp::Acosh, Acc::F, Tol::Libm, 0.5, 100},
    {Prim::Atanh, cpu::UnaryOp::Atanh, Acc::F, Tol::Libm, -1.1, 1.1},
    {Prim::Abs, cpu::UnaryOp::Abs, Acc::SF, Tol::Exact, -100, 100},
    {Prim::Sqrt, cpu::UnaryOp::Sqrt, Acc::F, Tol::Exact, -1, 1e4},
    {Prim::Rsqrt, cpu::UnaryOp::Rsqrt, Acc::F, Tol::Exact, -1, 1e4},
    {Prim::Cbrt, cpu::UnaryOp::Cbrt, Acc::F, Tol::Libm, -1e4, 1e4},
    {Prim::Square, cpu::UnaryOp::Square, Acc::N, Tol::Exact, -100, 100},
    {Prim::IntegerPow, cpu::UnaryOp::IntegerPow, Acc::N, Tol::Exact, -3, 3, 3},
    {Prim::IntegerPow, cpu::UnaryOp::IntegerPow, Acc::N, Tol::Exact, -3, 3, 7},
    {Prim::IntegerPow, cpu::UnaryOp::IntegerPow, Acc::N, Tol::Exact, -3, 3, 0},
    {Prim::Not, cpu::UnaryOp::Not, Acc::IB, Tol::Exact, -100, 100},
    {Prim::PopulationCount, cpu::UnaryOp::PopulationCount, Acc::I, Tol::Exact, 0, 0},
    {Prim::Clz, cpu::UnaryOp::Clz, Acc::I, Tol::Exact, 0, 0},
    {Prim::Lgamma, cpu::UnaryOp::Lgamma, Acc::F, Tol::Special, -10, 30},
    {Prim::Digamma, cpu::UnaryOp::Digamma, Acc::F, Tol::Special, -10, 30},
    {Prim::Erf, cpu::UnaryOp::Erf, Acc::F, Tol::Libm, -5, 5},
    {Prim::Erfc, cpu::UnaryOp::Erfc, Acc::F, Tol::Libm, -5, 9},
    {Prim::ErfInv, cpu::UnaryOp::ErfInv, Acc::F, Tol::Special, -1.05, 1.05},
    {Prim::Copy, cpu::UnaryOp::Copy, Acc::A, Tol::Exact, -100, 100},
};

void tolerance(Tol tol, DType dt, double* rtol, double* atol) {
  *rtol = *atol = 0;
  if (dt == DType::Float16 || dt == DType::BFloat16) {
    // Same float result rounded to 16 bits: one half-ulp tie can flip.
    if (tol != Tol::Exact) *rtol = dt == DType::Float16 ? 2e-3 : 1.6e-2, *atol = *rtol;
    return;
  }
  bool f32 = dt == DType::Float32;
  if (tol == Tol::Libm) *rtol = f32 ? 1e-6 : 3e-15, *atol = f32 ? 1e-30 : 1e-300;
  // lgamma/digamma near their poles (reflection through pi / tan) lose a few more digits.
  if (tol == Tol::Special) *rtol = f32 ? 2e-5 : 1e-9, *atol = f32 ? 2e-5 : 1e-11;
}

jx::ops::Params unary_params(const UnaryCase& c) {
  if (c.prim == Prim::IntegerPow) return {{"y", c.param}};
  if (c.prim == Prim::Round) return {{"rounding_method", c.param}};
  return {};
}

std::string case_name(const UnaryCase& c) {
  return std::string(jx::ops::name(c.prim)) + (c.param ? "(" + std::to_string(c.param) + ")" : "");
}

TEST(ElementwiseUnary, FastKernelMatchesReferenceForEveryAcceptedDType) {
  for (const UnaryCase& c : kUnary) {
    for (DType dt : kAllDTypes) {
      std::string what = case_name(c) + " " + jx::dtype_name(dt);
      jx::ops::Aval av{Shape{7}, dt, false};
      bool ok = true;
      try {
        jx::ops::info(c.prim).abstract_eval({&av, 1}, unary_params(c));
      } catch (const jx::DTypeError&) {
        ok = false;
      }
      EXPECT_EQ(ok, expect_accepts(c.acc, dt)) << what;
      if (!ok) continue;
      DType out_dt = c.op == cpu::UnaryOp::IsFinite ? DType::Bool : dt;
      double rtol, atol;
      tolerance(c.tol, dt, &rtol, &atol);
      if (out_dt == DType::Bool) rtol = atol = 0;
      for (int64_t n : kSizes) {
        Buf x = random_buf(dt, n, c.lo, c.hi, uint32_t(n * 31 + int(dt)));
        Buf fast = make_buf(out_dt, n), ref = make_buf(out_dt, n);
        cpu::unary(c.op, dt, x.data(), fast.data(), n, c.param);
        cpu::unary_reference(c.op, dt, x.data(), ref.data(), n, c.param);
        EXPECT_TRUE(same(out_dt, fast, ref, n, rtol, atol, what + " n=" + std::to_string(n)));
      }
    }
  }
}

TEST(ElementwiseUnary, BindRunsTheKernelAndKeepsWeakType) {
  for (const UnaryCase& c : kUnary) {
    for (DType dt : {DType::Float32, DType::Int32}) {
      if (!expect_accepts(c.acc, dt)) continue;
      Buf x = random_buf(dt, 7, c.lo, c.hi, 5);
      Array a = jx::detail::empty_array(Shape{7}, dt, true);
      std::memcpy(jx::detail::raw_data(a), x.data(), 7 * jx::itemsize(dt));
      Array r = jx::bind1(c.prim, {a}, unary_params(c));
      DType out_dt = c.op == cpu::UnaryOp::IsFinite ? DType::Bool : dt;
      EXPECT_EQ(r.dtype(), out_dt) << case_name(c);
      EXPECT_TRUE(r.weak_type()) << case_name(c);
      Buf ref = make_buf(out_dt, 7), got = make_buf(out_dt, 7);
      std::memcpy(got.data(), jx::detail::raw_data(r), 7 * jx::itemsize(out_dt));
      cpu::unary_reference(c.op, dt, x.data(), ref.data(), 7, c.param);
      double rtol, atol;
      tolerance(c.tol, dt, &rtol, &atol);
      if (out_dt == DType::Bool) rtol = atol = 0;
      EXPECT_TRUE(same(out_dt, got, ref, 7, rtol, atol, case_name(c)));
    }
  }
}

TEST(ElementwiseUnary, ErrorsNameTheOpAndDType) {
  Array i = jx::numpy::array<int32_t>({1, 2, 3});
  try {
    jx::lax::exp(i);
    FAIL() << "exp on int32 must throw";
  } catch (const jx::DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[exp] needs a floating or complex dtype, got i32[3]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(jx::lax::integer_pow(i, -1), jx::DTypeError);
  EXPECT_THROW(jx::lax::population_count(jx::numpy::array<float>({1.f})), jx::DTypeError);
  EXPECT_THROW(jx::lax::abs(jx::numpy::array<uint8_t>({1})), jx::DTypeError);
  EXPECT_THROW(jx::lax::neg(jx::numpy::array<bool>({true})), jx::DTypeError);
}

// ---- binary ----
struct BinaryCase {
  Prim prim;
  cpu::BinaryOp op;
  Acc acc;
  Tol tol;
  double lo, hi;
  bool small_ints = false;
};

const BinaryCase kBinary[] = {
    {Prim::Add, cpu::BinaryOp::Add, Acc::N, Tol::Exact, -100, 100},
    {Prim::Sub, cpu::BinaryOp::Sub, Acc::N, Tol::Exact, -100, 100},
    {Prim::Mul, cpu::BinaryOp::Mul, Acc::N, Tol::Exact, -100, 100},
    {Prim::Div, cpu::BinaryOp::Div, Acc::N, Tol::Exact, -100, 100},
    {Prim::Rem, cpu::BinaryOp::Rem, Acc::N, Tol::Exact, -100, 100},
    {Prim::Pow, cpu::BinaryOp::Pow, Acc::F, Tol::Libm, -4, 4},
    {Prim::Max, cpu::BinaryOp::Max, Acc::A, Tol::Exact, -100, 100},
    {Prim::Min, cpu::BinaryOp::Min, Acc::A, Tol::Exact, -100, 100},
    {Prim::Atan2, cpu::BinaryOp::Atan2, Acc::F, Tol::Libm, -10, 10},
    {Prim::Nextafter, cpu::BinaryOp::Nextafter, Acc::F, Tol::Exact, -10, 10},
    {Prim::And, cpu::BinaryOp::And, Acc::IB, Tol::Exact, -100, 100},
    {Prim::Or, cpu::BinaryOp::Or, Acc::IB, Tol::Exact, -100, 100},
    {Prim::Xor, cpu::BinaryOp::Xor, Acc::IB, Tol::Exact, -100, 100},
    {Prim::ShiftLeft, cpu::BinaryOp::ShiftLeft, Acc::I, Tol::Exact, -2, 70, true},
    {Prim::ShiftRightArithmetic, cpu::BinaryOp::ShiftRightArithmetic, Acc::I, Tol::Exact, -2, 70, true},
    {Prim::ShiftRightLogical, cpu::BinaryOp::ShiftRightLogical, Acc::I, Tol::Exact, -2, 70, true},
    {Prim::Eq, cpu::BinaryOp::Eq, Acc::A, Tol::Exact, -2, 2},
    {Prim::Ne, cpu::BinaryOp::Ne, Acc::A, Tol::Exact, -2, 2},
    {Prim::Lt, cpu::BinaryOp::Lt, Acc::A, Tol::Exact, -2, 2},
    {Prim::Le, cpu::BinaryOp::Le, Acc::A, Tol::Exact, -2, 2},
    {Prim::Gt, cpu::BinaryOp::Gt, Acc::A, Tol::Exact, -2, 2},
    {Prim::Ge, cpu::BinaryOp::Ge, Acc::A, Tol::Exact, -2, 2},
};

struct ShapePair {
  std::vector<int64_t> a, b, out;
};
const ShapePair kPairs[] = {
    {{}, {}, {}},
    {{0}, {0}, {0}},
    {{0}, {1}, {0}},
    {{7}, {7}, {7}},
    // single-threaded sizes that skip the loop nest (operands of the output's shape or of
    // one element), and one that does not ({1, 5} against {3, 5})
    {{37}, {1}, {37}},
    {{1}, {37}, {37}},
    {{2, 3}, {2, 3}, {2, 3}},
    {{1, 1}, {3, 4}, {3, 4}},
    {{4, 1}, {1, 1}, {4, 1}},
    {{1, 5}, {3, 5}, {3, 5}},
    {{3, 1}, {1, 5}, {3, 5}},
    {{2, 1, 3}, {1, 4, 3}, {2, 4, 3}},
    {{1000003}, {1000003}, {1000003}},
    {{1000003}, {1}, {1000003}},
    {{1}, {1000003}, {1000003}},
    {{1001, 1}, {1001, 1000}, {1001, 1000}},
};

// The naive references walk a multi-index per element; the threaded sizes run for a few
// representative dtypes only, so that the test stays fast.
bool large_ok(DType dt) {
  return dt == DType::Float32 || dt == DType::Int32 || dt == DType::BFloat16;
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

TEST(ElementwiseBinary, FastKernelMatchesReferenceForEveryAcceptedDType) {
  for (const BinaryCase& c : kBinary) {
    bool cmp = c.op >= cpu::BinaryOp::Eq;
    for (DType dt : kAllDTypes) {
      std::string what = std::string(jx::ops::name(c.prim)) + " " + jx::dtype_name(dt);
      jx::ops::Aval av[2] = {{Shape{7}, dt, false}, {Shape{7}, dt, false}};
      bool ok = true;
      try {
        jx::ops::info(c.prim).abstract_eval({av, 2}, {});
      } catch (const jx::DTypeError&) {
        ok = false;
      }
      EXPECT_EQ(ok, expect_accepts(c.acc, dt)) << what;
      if (!ok) continue;
      DType out_dt = cmp ? DType::Bool : dt;
      double rtol, atol;
      tolerance(c.tol, dt, &rtol, &atol);
      if (cmp) rtol = atol = 0;
      for (const ShapePair& sp : kPairs) {
        int64_t na = numel(sp.a), nb = numel(sp.b), no = numel(sp.out);
        if (no > 100000 && !large_ok(dt)) continue;
        Buf a = random_buf(dt, na, c.lo, c.hi, uint32_t(na + 3), true, c.small_ints);
        Buf b = random_buf(dt, nb, c.lo, c.hi, uint32_t(nb + 7), true, c.small_ints);
        Buf fast = make_buf(out_dt, no), ref = make_buf(out_dt, no);
        int nd = int(sp.out.size());
        cpu::binary(c.op, dt, a.data(), sp.a.data(), b.data(), sp.b.data(), fast.data(),
                    sp.out.data(), nd);
        cpu::binary_reference(c.op, dt, a.data(), sp.a.data(), b.data(), sp.b.data(), ref.data(),
                              sp.out.data(), nd);
        EXPECT_TRUE(same(out_dt, fast, ref, no, rtol, atol, what + " n=" + std::to_string(no)));
      }
    }
  }
}

TEST(ElementwiseBinary, BindBroadcastsSizeOneDimsAndChecksOperands) {
  Array a = jx::numpy::array<float>({1, 2, 3}).reshape({3, 1});
  Array b = jx::numpy::array<float>({10, 20}).reshape({1, 2});
  Array r = jx::lax::add(a, b);
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{11, 21, 12, 22, 13, 23}));
  try {
    jx::lax::add(a, jx::numpy::array<double>({1.0}).reshape({1, 1}));
    FAIL();
  } catch (const jx::DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[add] operands must have the same dtype"),
              std::string::npos);
  }
  EXPECT_THROW(jx::lax::add(a, jx::numpy::array<float>({1, 2})), jx::ShapeError);
  EXPECT_THROW(jx::lax::pow(jx::numpy::array<int32_t>({2}), jx::numpy::array<int32_t>({2})),
               jx::DTypeError);
  EXPECT_THROW(jx::lax::mul(jx::numpy::array<bool>({true}), jx::numpy::array<bool>({true})),
               jx::DTypeError);
  // Comparisons: weak only when both operands are weak (lax's naryop rule).
  EXPECT_TRUE(jx::lax::lt(Array(1.0f), Array(2.0f)).weak_type());
  EXPECT_FALSE(jx::lax::lt(jx::numpy::scalar(1, DType::Float32), Array(2.0f)).weak_type());
}

// ---- convert ----
TEST(ElementwiseConvert, FastMatchesReferenceForEveryDTypePair) {
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      for (int64_t n : kSizes) {
        Buf x = random_buf(from, n, -300, 300, uint32_t(n + int(from)));
        Buf fast = make_buf(to, n), ref = make_buf(to, n);
        cpu::convert(from, to, x.data(), fast.data(), n);
        cpu::convert_reference(from, to, x.data(), ref.data(), n);
        EXPECT_TRUE(same(to, fast, ref, n, 0, 0,
                         std::string(jx::dtype_name(from)) + "->" + jx::dtype_name(to)));
      }
    }
  }
}

TEST(ElementwiseConvert, BitcastConvertType) {
  Array f = jx::numpy::array<float>({1.0f, -2.0f});
  Array u = jx::lax::bitcast_convert_type(f, DType::UInt32);
  EXPECT_EQ(u.to_vector<uint32_t>(), (std::vector<uint32_t>{0x3f800000u, 0xc0000000u}));
  Array bytes = jx::lax::bitcast_convert_type(f, DType::UInt8);
  EXPECT_EQ(bytes.shape(), (Shape{2, 4}));
  EXPECT_EQ(bytes.to_vector<uint8_t>()[3], 0x3f);
  Array back = jx::lax::bitcast_convert_type(bytes, DType::Float32);
  EXPECT_EQ(back.to_vector<float>(), (std::vector<float>{1.0f, -2.0f}));
  Array d = jx::lax::bitcast_convert_type(jx::numpy::array<int32_t>({0, 0x40000000}, {1, 2}),
                                          DType::Float64);
  EXPECT_EQ(d.shape(), (Shape{1}));
  EXPECT_EQ(d.item<double>(), 2.0);
  EXPECT_EQ(jx::lax::bitcast_convert_type(f, DType::Float64).shape(), (Shape{}));  // 2 x f32 -> f64
  EXPECT_THROW(jx::lax::bitcast_convert_type(jx::numpy::array<float>({1, 2, 3}), DType::Float64),
               jx::ShapeError);
  EXPECT_THROW(jx::lax::bitcast_convert_type(f, DType::Bool), jx::DTypeError);
}

// ---- select_n and clamp ----
TEST(ElementwiseSelect, FastMatchesReferenceOverShapesAndDTypes) {
  for (DType dt : kAllDTypes) {
    for (DType wd : {DType::Bool, DType::Int32}) {
      for (int ncases : {1, 2, 3}) {
        if (wd == DType::Bool && ncases > 2) continue;
        for (const ShapePair& sp : kPairs) {
          int64_t no = numel(sp.out);
          if (no > 100000 && !large_ok(dt)) continue;
          Buf w = random_buf(wd, numel(sp.a), -1, 3.4, 11, false, true);
          std::vector<Buf> cs;
          std::vector<const void*> cp;
          std::vector<const int64_t*> csh;
          for (int k = 0; k < ncases; ++k) {
            cs.push_back(random_buf(dt, numel(sp.b), -100, 100, uint32_t(k + 1)));
          }
          for (int k = 0; k < ncases; ++k) {
            cp.push_back(cs[size_t(k)].data());
            csh.push_back(sp.b.data());
          }
          Buf fast = make_buf(dt, no), ref = make_buf(dt, no);
          int nd = int(sp.out.size());
          cpu::select_n(wd, w.data(), sp.a.data(), jx::itemsize(dt), cp.data(), csh.data(), ncases,
                        fast.data(), sp.out.data(), nd);
          cpu::select_n_reference(wd, w.data(), sp.a.data(), jx::itemsize(dt), cp.data(),
                                  csh.data(), ncases, ref.data(), sp.out.data(), nd);
          EXPECT_TRUE(same(dt, fast, ref, no, 0, 0,
                           std::string("select_n ") + jx::dtype_name(dt) + " cases=" +
                               std::to_string(ncases)));
        }
      }
    }
  }
}

TEST(ElementwiseSelect, ClampFastMatchesReference) {
  for (DType dt : kAllDTypes) {
    for (const ShapePair& sp : kPairs) {
      int64_t no = numel(sp.out);
      if (no > 100000 && !large_ok(dt)) continue;
      // lo and hi take the broadcasting shapes; x has the full shape.
      Buf lo = random_buf(dt, numel(sp.a), -50, 0, 1), x = random_buf(dt, no, -100, 100, 2),
          hi = random_buf(dt, numel(sp.b), 0, 50, 3);
      Buf fast = make_buf(dt, no), ref = make_buf(dt, no);
      int nd = int(sp.out.size());
      cpu::clamp(dt, lo.data(), sp.a.data(), x.data(), sp.out.data(), hi.data(), sp.b.data(),
                 fast.data(), sp.out.data(), nd);
      cpu::clamp_reference(dt, lo.data(), sp.a.data(), x.data(), sp.out.data(), hi.data(),
                           sp.b.data(), ref.data(), sp.out.data(), nd);
      EXPECT_TRUE(same(dt, fast, ref, no, 0, 0, std::string("clamp ") + jx::dtype_name(dt)));
    }
  }
}

TEST(ElementwiseSelect, LaxSelectNAndClampRules) {
  Array p = jx::numpy::array<bool>({true, false, true});
  Array a = jx::numpy::array<float>({1, 2, 3}), b = jx::numpy::array<float>({10, 20, 30});
  EXPECT_EQ(jx::lax::select(p, a, b).to_vector<float>(), (std::vector<float>{1, 20, 3}));
  Array w = jx::numpy::array<int32_t>({2, 0, 1});
  Array c = jx::numpy::array<float>({100, 200, 300});
  EXPECT_EQ(jx::lax::select_n(w, {a, b, c}).to_vector<float>(), (std::vector<float>{100, 2, 30}));
  // A scalar predicate selects whole arrays.
  EXPECT_EQ(jx::lax::select(Array(false), a, b).to_vector<float>(), (std::vector<float>{10, 20, 30}));
  EXPECT_THROW(jx::lax::select_n(jx::numpy::array<float>({1, 0, 1}), {a, b}), jx::DTypeError);
  EXPECT_THROW(jx::lax::select_n(p, {a, b, c}), jx::DTypeError);
  EXPECT_THROW(jx::lax::select(p, a, jx::numpy::array<double>({1, 2, 3})), jx::DTypeError);
  EXPECT_THROW(jx::lax::select_n(p, {}), jx::ValueError);

  Array x = jx::numpy::array<float>({-5, 0.5f, 7, NAN});
  Array cl = jx::lax::clamp(jx::numpy::scalar(0, DType::Float32), x,
                            jx::numpy::scalar(1, DType::Float32));
  auto v = cl.to_vector<float>();
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[1], 0.5f);
  EXPECT_EQ(v[2], 1.0f);
  EXPECT_TRUE(std::isnan(v[3]));
  try {
    jx::lax::clamp(jx::numpy::array<float>({0, 0}), x, jx::numpy::scalar(1, DType::Float32));
    FAIL();
  } catch (const jx::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[clamp]"), std::string::npos);
  }
}

// Hand-derived: the next float16 after 1 toward 2 is 1 + 2^-10, bfloat16's 1 + 2^-7;
// toward 0 from 1 they are 1 - 2^-11 and 1 - 2^-8; from 0 the smallest subnormal.
TEST(Nextafter, HalfTypesStepTheirOwnUlp) {
  auto step = [](DType t, double x, double y) {
    jx::Array a = jx::numpy::array<double>({x}).astype(t);
    jx::Array b = jx::numpy::array<double>({y}).astype(t);
    return jx::lax::nextafter(a, b).item<double>();
  };
  EXPECT_EQ(step(jx::float16, 1.0, 2.0), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(step(jx::bfloat16, 1.0, 2.0), 1.0 + std::ldexp(1.0, -7));
  EXPECT_EQ(step(jx::float16, 1.0, 0.0), 1.0 - std::ldexp(1.0, -11));
  EXPECT_EQ(step(jx::bfloat16, -1.0, 0.0), -1.0 + std::ldexp(1.0, -8));
  EXPECT_EQ(step(jx::float16, 0.0, -1.0), -std::ldexp(1.0, -24));
  EXPECT_EQ(step(jx::float16, 2.0, 2.0), 2.0);
  EXPECT_TRUE(std::isnan(step(jx::bfloat16, NAN, 1.0)));
}

}  // namespace
