// jnp elementwise math: values against NumPy goldens (tests/golden/gen_math.py), JAX's
// dtype and weak-type rules, JAX-specific integer semantics (hand-derived from
// jax/_src/numpy/ufuncs.py and XLA's x/0 = -1, x%0 = x), operators and error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "jx/lax.h"
#include "jx/numpy.h"
#include "jx/transforms.h"

namespace {

using jx::Array;
using jx::DType;
using jx::Shape;
namespace jnp = jx::numpy;

struct UnaryGolden {
  const char* fn;
  const char* dtype;
  std::vector<double> x, out;
};
struct BinaryGolden {
  const char* fn;
  const char* dtype;
  std::vector<double> x, y, out;
};
struct RoundGolden {
  int decimals;
  std::vector<double> x, out;
};
struct IscloseGolden {
  double rtol, atol;
  bool equal_nan;
  std::vector<double> a, b, out;
};

#include "golden/math_golden.inc"

using U = std::function<Array(const Array&)>;
using B = std::function<Array(const Array&, const Array&)>;

const std::map<std::string, U>& unary_fns() {
  static const std::map<std::string, U> m = {
      {"negative", jnp::negative},   {"positive", jnp::positive},   {"abs", jnp::abs},
      {"sign", jnp::sign},           {"exp", jnp::exp},             {"exp2", jnp::exp2},
      {"expm1", jnp::expm1},         {"log", jnp::log},             {"log2", jnp::log2},
      {"log10", jnp::log10},         {"log1p", jnp::log1p},         {"sqrt", jnp::sqrt},
      {"cbrt", jnp::cbrt},           {"square", jnp::square},       {"reciprocal", jnp::reciprocal},
      {"sin", jnp::sin},             {"cos", jnp::cos},             {"tan", jnp::tan},
      {"arcsin", jnp::arcsin},       {"arccos", jnp::arccos},       {"arctan", jnp::arctan},
      {"sinh", jnp::sinh},           {"cosh", jnp::cosh},           {"tanh", jnp::tanh},
      {"arcsinh", jnp::arcsinh},     {"arccosh", jnp::arccosh},     {"arctanh", jnp::arctanh},
      {"deg2rad", jnp::deg2rad},     {"rad2deg", jnp::rad2deg},     {"floor", jnp::floor},
      {"ceil", jnp::ceil},           {"trunc", jnp::trunc},         {"rint", jnp::rint},
      {"fix", jnp::fix},             {"isnan", jnp::isnan},         {"isinf", jnp::isinf},
      {"isfinite", jnp::isfinite},   {"signbit", jnp::signbit},     {"sinc", jnp::sinc},
      {"logical_not", jnp::logical_not}, {"invert", jnp::invert},   {"bitwise_not", jnp::bitwise_not},
      {"nan_to_num", [](const Array& x) { return jnp::nan_to_num(x); }},
  };
  return m;
}

const std::map<std::string, B>& binary_fns() {
  static const std::map<std::string, B> m = {
      {"add", jnp::add},           {"subtract", jnp::subtract},       {"multiply", jnp::multiply},
      {"divide", jnp::divide},     {"floor_divide", jnp::floor_divide}, {"remainder", jnp::remainder},
      {"fmod", jnp::fmod},         {"power", jnp::power},             {"float_power", jnp::float_power},
      {"maximum", jnp::maximum},   {"minimum", jnp::minimum},         {"fmax", jnp::fmax},
      {"fmin", jnp::fmin},         {"arctan2", jnp::arctan2},         {"logaddexp", jnp::logaddexp},
      {"logaddexp2", jnp::logaddexp2}, {"hypot", jnp::hypot},         {"copysign", jnp::copysign},
      {"heaviside", jnp::heaviside}, {"equal", jnp::equal},           {"not_equal", jnp::not_equal},
      {"less", jnp::less},         {"less_equal", jnp::less_equal},   {"greater", jnp::greater},
      {"greater_equal", jnp::greater_equal}, {"logical_and", jnp::logical_and},
      {"logical_or", jnp::logical_or}, {"logical_xor", jnp::logical_xor},
      {"bitwise_and", jnp::bitwise_and}, {"bitwise_or", jnp::bitwise_or},
      {"bitwise_xor", jnp::bitwise_xor}, {"left_shift", jnp::left_shift},
      {"right_shift", jnp::right_shift},
  };
  return m;
}

bool bool_valued(const std::string& f) {
  static const char* names[] = {"isnan", "isinf", "isfinite", "signbit", "logical_not", "equal",
                                "not_equal", "less", "less_equal", "greater", "greater_equal",
                                "logical_and", "logical_or", "logical_xor"};
  for (const char* n : names)
    if (f == n) return true;
  return false;
}

// Exact operations must match NumPy bit for bit (up to the sign of zero, checked by hand
// below); the rest within a few ulps of the golden value.
bool exact_op(const std::string& f) {
  static const char* names[] = {"negative", "positive", "abs", "sign", "floor", "ceil", "trunc",
                                "rint", "fix", "square", "add", "subtract", "multiply", "maximum",
                                "minimum", "fmax", "fmin", "copysign", "heaviside", "fmod",
                                "remainder", "floor_divide", "nan_to_num", "divide", "reciprocal"};
  for (const char* n : names)
    if (f == n) return true;
  return bool_valued(f);
}

Array from_golden(const std::vector<double>& v, DType dt) {
  return jnp::array<double>(v).astype(dt);
}

void check_values(const Array& got, const std::vector<double>& want, bool exact, DType dt,
                  const std::string& what, const std::vector<double>* x = nullptr,
                  const std::vector<double>* y = nullptr) {
  ASSERT_EQ(got.size(), int64_t(want.size())) << what;
  auto g = got.to_vector<double>();
  double rtol = exact ? 0 : (dt == DType::Float64 ? 1e-14 : 2e-6);
  for (size_t i = 0; i < want.size(); ++i) {
    double a = g[i], b = want[i];
    std::string at = what + " at " + std::to_string(i) + (x ? " x=" + std::to_string((*x)[i]) : "") +
                     (y ? " y=" + std::to_string((*y)[i]) : "");
    if (std::isnan(b)) {
      EXPECT_TRUE(std::isnan(a)) << at << ": got " << a << ", want nan";
    } else if (std::isinf(b) || exact) {
      EXPECT_EQ(a, b) << at;
    } else {
      EXPECT_NEAR(a, b, rtol * std::fabs(b) + 1e-37) << at;
    }
  }
}

TEST(MathGolden, UnaryMatchesNumPy) {
  for (const UnaryGolden& g : kUnaryGolden) {
    std::string f = g.fn;
    DType dt = jx::dtype_from_name(g.dtype);
    auto it = unary_fns().find(f);
    ASSERT_NE(it, unary_fns().end()) << f;
    Array r = it->second(from_golden(g.x, dt));
    std::string what = f + "(" + g.dtype + ")";
    // Result dtypes by JAX's rules: predicates give bool, inexact functions of ints float32.
    DType want_dt = dt;
    if (bool_valued(f)) want_dt = DType::Bool;
    else if (dt == DType::Int32 && (f == "exp" || f == "sqrt" || f == "log1p" || f == "sin" ||
                                    f == "reciprocal" || f == "rint"))
      want_dt = DType::Float32;
    EXPECT_EQ(r.dtype(), want_dt) << what;
    EXPECT_FALSE(r.weak_type()) << what;
    check_values(r, g.out, exact_op(f), want_dt, what, &g.x);
  }
}

TEST(MathGolden, BinaryMatchesNumPy) {
  for (const BinaryGolden& g : kBinaryGolden) {
    std::string f = g.fn;
    DType dt = jx::dtype_from_name(g.dtype);
    auto it = binary_fns().find(f);
    ASSERT_NE(it, binary_fns().end()) << f;
    Array xa = from_golden(g.x, dt);
    Array ya = from_golden(g.y, f == "right_shift" && dt == DType::UInt32 ? DType::UInt32 : dt);
    Array r = it->second(xa, ya);
    std::string what = f + "(" + g.dtype + ")";
    EXPECT_EQ(r.dtype(), bool_valued(f) ? DType::Bool : dt) << what;
    std::vector<double> want = g.out;
    for (size_t i = 0; i < want.size(); ++i) {
      // JAX departures from NumPy, by design of jnp's definitions:
      // heaviside(nan, y) = y (neither x < 0 nor x > 0 holds);
      if (f == "heaviside" && std::isnan(g.x[i])) want[i] = g.y[i];
      // floor division by zero and of infinities goes through fmod (CPython's float_divmod),
      // so every such quotient is NaN where NumPy gives +-inf.
      if (f == "floor_divide" && (g.y[i] == 0 || std::isinf(g.x[i]))) want[i] = NAN;
    }
    check_values(r, want, exact_op(f), dt, what, &g.x, &g.y);
  }
}

TEST(MathGolden, RoundWithDecimals) {
  for (const RoundGolden& g : kRoundGolden) {
    Array x = from_golden(g.x, DType::Float32);
    Array r = jnp::round(x, g.decimals);
    EXPECT_EQ(r.dtype(), DType::Float32);
    check_values(r, g.out, true, DType::Float32, "round decimals=" + std::to_string(g.decimals), &g.x);
    check_values(x.round(g.decimals), g.out, true, DType::Float32, "Array::round", &g.x);
  }
}

TEST(MathGolden, Isclose) {
  for (const IscloseGolden& g : kIscloseGolden) {
    Array r = jnp::isclose(from_golden(g.a, DType::Float64), from_golden(g.b, DType::Float64),
                           g.rtol, g.atol, g.equal_nan);
    EXPECT_EQ(r.dtype(), DType::Bool);
    check_values(r, g.out, true, DType::Bool, "isclose");
  }
}

// ---- JAX-specific semantics, derived by hand ----

TEST(MathSemantics, IntegerDivisionByZeroFollowsXla) {
  Array x = jnp::array<int32_t>({5, 0, -5});
  Array zero = jnp::array<int32_t>({0, 0, 0});
  // lax.div(x, 0) = -1 (XLA); floor_divide then subtracts 1 where signs differ and x % 0 = x != 0.
  EXPECT_EQ(jx::lax::div(x, zero).to_vector<int32_t>(), (std::vector<int32_t>{-1, -1, -1}));
  EXPECT_EQ(jx::lax::rem(x, zero).to_vector<int32_t>(), (std::vector<int32_t>{5, 0, -5}));
  EXPECT_EQ(jnp::floor_divide(x, zero).to_vector<int32_t>(), (std::vector<int32_t>{-2, -1, -2}));
  // remainder and fmod replace a zero divisor by 1 first: x % 0 = 0.
  EXPECT_EQ(jnp::remainder(x, zero).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(jnp::fmod(x, zero).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  // unsigned: x / 0 is all ones.
  Array u = jnp::array<uint8_t>({7});
  EXPECT_EQ(jnp::floor_divide(u, jnp::array<uint8_t>({0})).item<int>(), 255);
  // INT_MIN / -1 wraps to INT_MIN.
  Array mn = jnp::array<int32_t>({INT32_MIN});
  EXPECT_EQ(jnp::floor_divide(mn, jnp::array<int32_t>({-1})).item<int32_t>(), INT32_MIN);
}

TEST(MathSemantics, PythonSignsForFloorDivideAndRemainder) {
  Array a = jnp::array<int32_t>({7, -7, 7, -7});
  Array b = jnp::array<int32_t>({2, 2, -2, -2});
  EXPECT_EQ(jnp::floor_divide(a, b).to_vector<int32_t>(), (std::vector<int32_t>{3, -4, -4, 3}));
  EXPECT_EQ(jnp::remainder(a, b).to_vector<int32_t>(), (std::vector<int32_t>{1, 1, -1, -1}));
  EXPECT_EQ(jnp::fmod(a, b).to_vector<int32_t>(), (std::vector<int32_t>{1, -1, 1, -1}));
  EXPECT_EQ((a % b).to_vector<int32_t>(), (std::vector<int32_t>{1, 1, -1, -1}));
  Array fa = jnp::array<float>({7.5f, -7.5f});
  EXPECT_EQ(jnp::floor_divide(fa, 2).to_vector<float>(), (std::vector<float>{3, -4}));
  EXPECT_EQ(jnp::remainder(fa, 2).to_vector<float>(), (std::vector<float>{1.5f, 0.5f}));
}

TEST(MathSemantics, IntegerOverflowWraps) {
  Array mx = jnp::array<int32_t>({INT32_MAX});
  EXPECT_EQ((mx + 1).item<int32_t>(), INT32_MIN);
  EXPECT_EQ(jnp::negative(jnp::array<int32_t>({INT32_MIN})).item<int32_t>(), INT32_MIN);
  EXPECT_EQ(jnp::abs(jnp::array<int8_t>({-128})).item<int>(), -128);
  EXPECT_EQ(jnp::negative(jnp::array<uint32_t>({5})).item<uint32_t>(), 4294967291u);
  EXPECT_EQ((jnp::array<uint8_t>({250}) + jnp::array<uint8_t>({10})).item<int>(), 4);
}

TEST(MathSemantics, PowerPaths) {
  // Concrete integer scalar exponent: exact repeated multiplication, dtype kept.
  Array x = jnp::array<float>({1.5f, -2.0f});
  Array p = jnp::power(x, 3);
  EXPECT_EQ(p.dtype(), DType::Float32);
  EXPECT_FALSE(p.weak_type());
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{3.375f, -8.0f}));
  EXPECT_EQ(jnp::power(x, -1).to_vector<float>(), (std::vector<float>{1 / 1.5f, -0.5f}));
  EXPECT_EQ(jnp::power(jnp::array<int32_t>({3}), 4).item<int32_t>(), 81);
  try {
    jnp::power(jnp::array<int32_t>({3}), -1);
    FAIL();
  } catch (const jx::DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[integer_pow] integers cannot be raised to negative powers"),
              std::string::npos)
        << e.what();
  }
  // bool base: promoted to int32.
  EXPECT_EQ(jnp::power(jnp::array<bool>({true, false}), 2).dtype(), DType::Int32);
  // Array exponents: int ** int by binary exponentiation; 0 ** 0 = 1; 0 ** y = 0.
  Array b = jnp::array<int32_t>({0, 0, 2, -2, 2});
  Array e = jnp::array<int32_t>({0, 5, 10, 3, 31});
  EXPECT_EQ(jnp::power(b, e).to_vector<int32_t>(), (std::vector<int32_t>{1, 0, 1024, -8, INT32_MIN}));
  // float base, int exponent array: the base's dtype is kept (float16 stays float16).
  Array h = jnp::power(jnp::array<float>({2.0f}).astype(DType::Float16), jnp::array<int32_t>({3}));
  EXPECT_EQ(h.dtype(), DType::Float16);
  EXPECT_EQ(h.item<float>(), 8.0f);
  // Mixed float/int arrays otherwise promote.
  EXPECT_EQ(jnp::power(jnp::array<int32_t>({2}), jnp::array<float>({0.5f})).dtype(), DType::Float32);
  EXPECT_EQ(jnp::float_power(jnp::array<int32_t>({2}), jnp::array<int32_t>({3})).item<float>(), 8.0f);
}

TEST(MathSemantics, WeakTypesAndPromotion) {
  Array h = jnp::array<float>({1.5f}).astype(DType::Float16);
  EXPECT_EQ((h * 2.0).dtype(), DType::Float16);
  EXPECT_EQ((h / 2).dtype(), DType::Float16);
  Array i8 = jnp::array<int8_t>({3});
  EXPECT_EQ((i8 + 1).dtype(), DType::Int8);
  EXPECT_EQ((i8 * 1.5).dtype(), DType::Float32);  // int8 with weak float -> float32 (f*)
  // Python-scalar-only computations stay weak.
  Array w = jnp::exp(Array(2));
  EXPECT_EQ(w.dtype(), DType::Float32);
  EXPECT_TRUE(w.weak_type());
  EXPECT_NEAR(w.item<double>(), 7.38905609893065, 1e-6);
  EXPECT_TRUE((Array(1.0) + Array(2.0)).weak_type());
  EXPECT_TRUE(jnp::less(Array(1.0), Array(2.0)).weak_type());
  // Integer arrays: true division gives strong float32.
  Array q = jnp::array<int32_t>({1, 2}) / jnp::array<int32_t>({2, 2});
  EXPECT_EQ(q.dtype(), DType::Float32);
  EXPECT_FALSE(q.weak_type());
  EXPECT_EQ(q.to_vector<float>(), (std::vector<float>{0.5f, 1.0f}));
  // float64 when asked for.
  Array d = jnp::array<double>({2.0});
  EXPECT_EQ(jnp::sqrt(d).dtype(), DType::Float64);
  EXPECT_EQ(jnp::sqrt(d).item<double>(), std::sqrt(2.0));
  EXPECT_EQ((d + jnp::array<float>({1.0f})).dtype(), DType::Float64);
  // Unsigned/signed mix and uint64 with int: JAX's lattice.
  EXPECT_EQ((jnp::array<uint8_t>({1}) + jnp::array<int8_t>({1})).dtype(), DType::Int16);
}

TEST(MathSemantics, BoolArithmetic) {
  Array t = jnp::array<bool>({true, true, false});
  Array f = jnp::array<bool>({true, false, false});
  EXPECT_EQ((t + f).dtype(), DType::Bool);
  EXPECT_EQ((t + f).to_vector<bool>(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ((t * f).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_THROW(t - f, jx::DTypeError);
  EXPECT_THROW(-t, jx::DTypeError);
  EXPECT_EQ((t + 1).dtype(), DType::Int32);  // weak int with bool -> int32
  EXPECT_EQ(jnp::floor_divide(t, f).dtype(), DType::Int32);
  EXPECT_EQ(jnp::square(t).dtype(), DType::Int32);
  EXPECT_EQ(jnp::sqrt(t).dtype(), DType::Float32);
  EXPECT_EQ(jnp::abs(t).dtype(), DType::Bool);
  EXPECT_EQ((~t).to_vector<bool>(), (std::vector<bool>{false, false, true}));
  EXPECT_EQ((!jnp::array<float>({0.f, 2.f})).to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(MathSemantics, SignedZerosAndSpecials) {
  Array z = jnp::array<float>({0.0f});
  EXPECT_TRUE(std::signbit((-z).item<float>()));
  EXPECT_TRUE(jnp::signbit(jnp::array<float>({-0.0f})).item<bool>());
  EXPECT_FALSE(jnp::signbit(jnp::array<float>({0.0f})).item<bool>());
  EXPECT_TRUE(jnp::signbit(jnp::array<float>({-NAN})).item<bool>());
  EXPECT_TRUE(std::signbit(jnp::copysign(1.0f, jnp::array<float>({-0.0f})).item<float>()));
  EXPECT_TRUE(std::signbit(jnp::trunc(jnp::array<float>({-0.5f})).item<float>()));
  EXPECT_TRUE(std::signbit(jnp::round(jnp::array<float>({-0.4f})).item<float>()));
  // Round half to even.
  EXPECT_EQ(jnp::round(jnp::array<float>({0.5f, 1.5f, 2.5f, -2.5f})).to_vector<float>(),
            (std::vector<float>{0, 2, 2, -2}));
  // lax.round's default is half away from zero.
  EXPECT_EQ(jx::lax::round(jnp::array<float>({0.5f, 2.5f, -2.5f})).to_vector<float>(),
            (std::vector<float>{1, 3, -3}));
  // float16 / bfloat16 go through float.
  Array hb = jnp::array<float>({1.0f, 4.0f}).astype(DType::BFloat16);
  EXPECT_EQ(jnp::sqrt(hb).dtype(), DType::BFloat16);
  EXPECT_EQ(jnp::sqrt(hb).to_vector<float>(), (std::vector<float>{1.0f, 2.0f}));
  auto n = jnp::nan_to_num(jnp::array<float>({NAN, INFINITY, -INFINITY, 1.0f}), 0.0, 5.0)
               .to_vector<float>();
  EXPECT_EQ(n, (std::vector<float>{0.0f, 5.0f, std::numeric_limits<float>::lowest(), 1.0f}));
  EXPECT_EQ(jnp::nan_to_num(jnp::array<int32_t>({3})).dtype(), DType::Int32);
}

TEST(MathSemantics, ClipAndRoundMethods) {
  Array x = jnp::array<float>({-2.0f, 0.25f, 3.0f});
  EXPECT_EQ(jnp::clip(x, 0, 1).to_vector<float>(), (std::vector<float>{0, 0.25f, 1}));
  EXPECT_EQ(jnp::clip(x, std::nullopt, 1).to_vector<float>(), (std::vector<float>{-2, 0.25f, 1}));
  EXPECT_EQ(x.clip(-1, 2).to_vector<float>(), (std::vector<float>{-1, 0.25f, 2}));
  EXPECT_EQ(jnp::clip(x, 0, 1).dtype(), DType::Float32);
  // Bounds take part in promotion, as in jnp: int array clipped by a float bound is float.
  Array i = jnp::array<int32_t>({-5, 5});
  EXPECT_EQ(jnp::clip(i, 0, 3).dtype(), DType::Int32);
  EXPECT_EQ(jnp::clip(i, 0.5, 3).dtype(), DType::Float32);
  EXPECT_EQ(jnp::clip(i, 0.5, 3).to_vector<float>(), (std::vector<float>{0.5f, 3}));
  EXPECT_EQ(jnp::round(i, 1).to_vector<int32_t>(), (std::vector<int32_t>{-5, 5}));
  EXPECT_THROW(jnp::round(i, -1), jx::ValueError);
  // Broadcast bounds.
  Array lo = jnp::array<float>({0.0f, 1.0f}).reshape({2, 1});
  EXPECT_EQ(jnp::clip(x, lo).shape(), (Shape{2, 3}));
}

TEST(MathSemantics, OperatorsFollowJnp) {
  Array a = jnp::array<int32_t>({-8, 9});
  EXPECT_EQ((a >> 1).to_vector<int32_t>(), (std::vector<int32_t>{-4, 4}));
  EXPECT_EQ((jnp::array<uint32_t>({0x80000000u}) >> 31).item<uint32_t>(), 1u);
  EXPECT_EQ((a << 2).to_vector<int32_t>(), (std::vector<int32_t>{-32, 36}));
  EXPECT_EQ((~a).to_vector<int32_t>(), (std::vector<int32_t>{7, -10}));
  EXPECT_EQ((+a).to_vector<int32_t>(), (std::vector<int32_t>{-8, 9}));
  EXPECT_EQ((-a).to_vector<int32_t>(), (std::vector<int32_t>{8, -9}));
  EXPECT_EQ((a / 2).to_vector<float>(), (std::vector<float>{-4, 4.5f}));
  EXPECT_EQ((a % 5).to_vector<int32_t>(), (std::vector<int32_t>{2, 4}));
  EXPECT_EQ((a % -5).to_vector<int32_t>(), (std::vector<int32_t>{-3, -1}));
  EXPECT_EQ((!a).to_vector<bool>(), (std::vector<bool>{false, false}));
  Array m = jnp::array<float>({1, 2, 3}).reshape({3, 1}) - jnp::array<float>({1, 2});
  EXPECT_EQ(m.shape(), (Shape{3, 2}));
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{0, -1, 1, 0, 2, 1}));
}

TEST(MathSemantics, ComparisonsAndReductionsOfThem) {
  Array a = jnp::array<float>({1.0f, NAN, INFINITY});
  Array b = jnp::array<float>({1.0f + 1e-7f, NAN, INFINITY});
  EXPECT_FALSE(jnp::allclose(a, b).item<bool>());
  EXPECT_TRUE(jnp::allclose(a, b, 1e-5, 1e-8, true).item<bool>());
  EXPECT_EQ(jnp::allclose(a, b).ndim(), 0);
  EXPECT_FALSE(jnp::array_equal(a, b).item<bool>());
  EXPECT_TRUE(jnp::array_equal(a, a, true).item<bool>());
  EXPECT_FALSE(jnp::array_equal(a, a).item<bool>());  // NaN != NaN
  EXPECT_FALSE(jnp::array_equal(a, jnp::array<float>({1.0f})).item<bool>());
  EXPECT_TRUE(jnp::array_equiv(jnp::array<float>({2, 2}), jnp::array<float>({2})).item<bool>());
  EXPECT_FALSE(jnp::array_equiv(jnp::array<float>({2, 2}), jnp::array<float>({2, 2, 2})).item<bool>());
  EXPECT_EQ((a == a).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(jnp::isfinite(jnp::array<int32_t>({1})).item<bool>(), true);
}

TEST(MathErrors, MessagesNameTheOpAndTheFix) {
  Array f = jnp::array<float>({1, 2, 3});
  try {
    jnp::bitwise_and(f, f);
    FAIL();
  } catch (const jx::DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[bitwise_and] needs integer or bool operands, got f32[3]"),
              std::string::npos)
        << e.what();
  }
  try {
    jnp::right_shift(f, 1);
    FAIL();
  } catch (const jx::DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[right_shift]"), std::string::npos) << e.what();
  }
  try {
    f + jnp::array<float>({1, 2});
    FAIL();
  } catch (const jx::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[add]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f32[3]"), std::string::npos) << e.what();
  }
  // Shapes are reported with the operands' own dtypes, not the promoted one.
  try {
    (void)(jnp::argmax(jnp::zeros({2, 3}), 1) == jnp::ones({3}));
    FAIL();
  } catch (const jx::ShapeError& e) {
    EXPECT_EQ(std::string(e.what()),
              "[equal] shapes i32[2] and f32[3] do not broadcast: 2 vs 3 at axis -1");
  }
  EXPECT_THROW(jnp::sign(jnp::array<bool>({true})), jx::DTypeError);
  EXPECT_THROW(~f, jx::DTypeError);
}

TEST(NumpyMath, LogaddexpDerivativesAsJax) {
  // JAX's custom_jvp: d/dx1 = exp(x1 - out), d/dx2 = exp(x2 - out): 1/2 each at x1 == x2.
  auto f = [](const Array& a, const Array& b) { return jnp::sum(jnp::logaddexp(a, b)); };
  Array a = jnp::array<double>({0.0, 1.0, -3.0, INFINITY});
  Array b = jnp::array<double>({0.0, 3.0, -3.0, 1.0});
  auto [ga, gb] = jx::grad<0, 1>(f)(a, b);
  std::vector<double> va = ga.to_vector<double>(), vb = gb.to_vector<double>();
  EXPECT_DOUBLE_EQ(va[0], 0.5);
  EXPECT_DOUBLE_EQ(vb[0], 0.5);
  EXPECT_NEAR(va[1], 1.0 / (1.0 + std::exp(2.0)), 1e-15);
  EXPECT_NEAR(va[1] + vb[1], 1.0, 1e-15);
  // At (+inf, 1) JAX's rule replaces the +inf of x1 and out by 0: exp(0 - 0), exp(1 - 0).
  EXPECT_DOUBLE_EQ(va[3], 1.0);
  EXPECT_DOUBLE_EQ(vb[3], std::exp(1.0));
  auto f2 = [](const Array& a, const Array& b) { return jnp::sum(jnp::logaddexp2(a, b)); };
  auto [g2a, g2b] = jx::grad<0, 1>(f2)(a, b);
  EXPECT_DOUBLE_EQ(g2a.to_vector<double>()[0], 0.5);
  EXPECT_DOUBLE_EQ(g2b.to_vector<double>()[2], 0.5);
}

}  // namespace
