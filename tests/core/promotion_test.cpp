// JAX's binary promotion table (docs/type_promotion.rst, copied in
// ../shared/reference/NUMPY_API.md), complex columns dropped: jx has no complex dtypes.
// Entries are JAX's with x64 enabled; jx materializes weak i*/f* as int32/float32.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "jx/jx.h"

namespace {

const char* kTable = R"(
      b1  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  i*  f*
b1    b1  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  i*  f*
u1    u1  u1  u2  u4  u8  i2  i2  i4  i8  bf  f2  f4  f8  u1  f*
u2    u2  u2  u2  u4  u8  i4  i4  i4  i8  bf  f2  f4  f8  u2  f*
u4    u4  u4  u4  u4  u8  i8  i8  i8  i8  bf  f2  f4  f8  u4  f*
u8    u8  u8  u8  u8  u8  f*  f*  f*  f*  bf  f2  f4  f8  u8  f*
i1    i1  i2  i4  i8  f*  i1  i2  i4  i8  bf  f2  f4  f8  i1  f*
i2    i2  i2  i4  i8  f*  i2  i2  i4  i8  bf  f2  f4  f8  i2  f*
i4    i4  i4  i4  i8  f*  i4  i4  i4  i8  bf  f2  f4  f8  i4  f*
i8    i8  i8  i8  i8  f*  i8  i8  i8  i8  bf  f2  f4  f8  i8  f*
bf    bf  bf  bf  bf  bf  bf  bf  bf  bf  bf  f4  f4  f8  bf  bf
f2    f2  f2  f2  f2  f2  f2  f2  f2  f2  f4  f2  f4  f8  f2  f2
f4    f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f8  f4  f4
f8    f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8
i*    i*  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  i*  f*
f*    f*  f*  f*  f*  f*  f*  f*  f*  f*  bf  f2  f4  f8  f*  f*
)";

jx::TypedKind parse(const std::string& code) {
  static const std::map<std::string, jx::TypedKind> m = {
      {"b1", {jx::bool_}},  {"u1", {jx::uint8}},   {"u2", {jx::uint16}},  {"u4", {jx::uint32}},
      {"u8", {jx::uint64}}, {"i1", {jx::int8}},    {"i2", {jx::int16}},   {"i4", {jx::int32}},
      {"i8", {jx::int64}},  {"bf", {jx::bfloat16}}, {"f2", {jx::float16}}, {"f4", {jx::float32}},
      {"f8", {jx::float64}}, {"i*", {jx::int32, true}}, {"f*", {jx::float32, true}}};
  return m.at(code);
}

TEST(Promotion, FullBinaryTableWithWeakTypes) {
  std::istringstream in(kTable);
  std::string line;
  std::getline(in, line);  // blank
  std::getline(in, line);
  std::istringstream header(line);
  std::vector<std::string> cols;
  for (std::string c; header >> c;) cols.push_back(c);
  ASSERT_EQ(cols.size(), 15u);
  int checked = 0;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string r;
    if (!(row >> r)) continue;
    for (const auto& c : cols) {
      std::string want;
      row >> want;
      jx::TypedKind got = jx::promote(parse(r), parse(c));
      jx::TypedKind exp = parse(want);
      EXPECT_EQ(got.dtype, exp.dtype) << r << " + " << c;
      EXPECT_EQ(got.weak, exp.weak) << r << " + " << c;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 15 * 15);
}

TEST(Promotion, PromoteTypesIgnoresWeakness) {
  EXPECT_EQ(jx::promote_types(jx::int8, jx::float16), jx::float16);
  EXPECT_EQ(jx::promote_types(jx::uint64, jx::int8), jx::float32);  // f* -> default float
  EXPECT_EQ(jx::promote_types(jx::bfloat16, jx::float16), jx::float32);
  EXPECT_EQ(jx::promote_types(jx::uint32, jx::int32), jx::int64);
}

TEST(Promotion, CanCast) {
  EXPECT_TRUE(jx::can_cast(jx::int8, jx::int16));
  EXPECT_TRUE(jx::can_cast(jx::uint8, jx::int16));
  EXPECT_FALSE(jx::can_cast(jx::int16, jx::uint16));
  EXPECT_FALSE(jx::can_cast(jx::float32, jx::int64));
  EXPECT_TRUE(jx::can_cast(jx::bool_, jx::float16));
}

TEST(Promotion, ArraysFollowTheTable) {
  namespace jnp = jx::numpy;
  jx::Array i8 = jnp::array<int8_t>({1, 2});
  EXPECT_EQ((i8 + 1).dtype(), jx::int8);  // weak int keeps int8
  EXPECT_FALSE((i8 + 1).weak_type());
  jx::Array f = i8 + 1.0;  // weak float: int8 + f* = f*
  EXPECT_EQ(f.dtype(), jx::float32);
  EXPECT_TRUE(f.weak_type());
  jx::Array w = jx::Array(2) + jx::Array(3);
  EXPECT_TRUE(w.weak_type());
  EXPECT_EQ(w.dtype(), jx::int32);
  jx::Array h = jnp::array<double>({1.0}) + jnp::array<float>({2.0f});
  EXPECT_EQ(h.dtype(), jx::float64);
}

TEST(Promotion, WeakOperandsKeepTheirWidth) {
  // Two weak values join to a weak value; a weak float64 is not narrowed to float32.
  jx::TypedKind r = jx::promote({jx::float64, true}, {jx::float32, true});
  EXPECT_EQ(r.dtype, jx::float64);
  EXPECT_TRUE(r.weak);
  // ... but a strong operand decides as in the table: f32 + weak f64 = f32.
  EXPECT_EQ(jx::promote({jx::float32, false}, {jx::float64, true}).dtype, jx::float32);
  EXPECT_EQ(jx::promote({jx::int64, true}, {jx::int32, true}).dtype, jx::int64);
}

// A C++ number keeps its full value until promotion has chosen the result dtype, and is
// rounded once, to that dtype (IEEE double arithmetic is the independent reference: NumPy's
// float64 products are the same IEEE operations).
TEST(WeakScalars, RoundOnceToTheResultDtype) {
  namespace jnp = jx::numpy;
  jx::Array x = jnp::array(std::vector<double>{2.0, 3.0, 1e-3});
  jx::Array y = x * 0.3;
  EXPECT_EQ(y.dtype(), jx::float64);
  std::vector<double> got = y.to_vector<double>();
  EXPECT_EQ(got[0], 2.0 * 0.3);
  EXPECT_EQ(got[1], 3.0 * 0.3);
  EXPECT_EQ(got[2], 1e-3 * 0.3);
  EXPECT_EQ((0.1 + x).to_vector<double>()[2], 0.1 + 1e-3);
  // float32 arrays get float(0.3), as before.
  jx::Array xf = jnp::array(std::vector<float>{2.0f});
  EXPECT_EQ((xf * 0.3).dtype(), jx::float32);
  EXPECT_EQ((xf * 0.3).to_vector<float>()[0], 2.0f * 0.3f);
  // Every path from a C++ number to a dtype rounds once.
  EXPECT_EQ(jnp::array(0.1, jx::float64).item<double>(), 0.1);
  EXPECT_EQ(jnp::array(jx::Array(0.1), jx::float64).item<double>(), 0.1);
  EXPECT_EQ(jnp::full({2}, 0.1, jx::float64).to_vector<double>()[1], 0.1);
  EXPECT_EQ(jx::Array(0.1).astype(jx::float64).item<double>(), 0.1);
  jx::Array c = jnp::array(std::vector<bool>{true, false, true});
  EXPECT_EQ(jnp::where(c, x, 0.1).to_vector<double>()[1], 0.1);
  // uniform on [0.1, 0.1 + 1e-10): with float32-rounded bounds (0.10000000149...) every draw
  // would sit at or above 0.10000000149.
  jx::Array u = jx::random::uniform(jx::random::PRNGKey(0), {1000}, jx::float64, 0.1, 0.1 + 1e-10);
  for (double v : u.to_vector<double>()) {
    EXPECT_GE(v, 0.1);
    EXPECT_LT(v, 0.1 + 1e-10);
  }
  // Integers outside int32: the advice in the error works, without a trip through double.
  EXPECT_THROW(jx::Array(int64_t(1) << 40), jx::ValueError);
  EXPECT_EQ(jnp::array(int64_t(9007199254740993), jx::int64).item<int64_t>(), int64_t(9007199254740993));
  EXPECT_EQ(jnp::array(uint64_t(18446744073709551615u), jx::uint64).item<uint64_t>(),
            uint64_t(18446744073709551615u));
  EXPECT_EQ(jnp::array(3, jx::float64).item<double>(), 3.0);
}

TEST(DTypes, NameAndItemsizeFromTheArray) {
  jx::Array x = jx::numpy::zeros({2}, jx::float64);
  EXPECT_STREQ(x.dtype().name(), "float64");  // JAX's x.dtype.name
  EXPECT_EQ(x.dtype().itemsize(), 8u);
  EXPECT_EQ(x.dtype(), jx::float64);
  jx::DType t = x.dtype();
  EXPECT_EQ(t, jx::DType::Float64);
  std::ostringstream os;
  os << x.dtype();
  EXPECT_EQ(os.str(), "float64");
}

TEST(DTypes, FInfoIInfo) {
  EXPECT_EQ(jx::finfo(jx::float32).eps, 1.1920928955078125e-07);
  EXPECT_EQ(jx::finfo(jx::float16).max, 65504.0);
  EXPECT_EQ(jx::finfo(jx::bfloat16).eps, 0.0078125);
  EXPECT_EQ(jx::iinfo(jx::int8).min, -128);
  EXPECT_EQ(jx::iinfo(jx::uint16).max, 65535u);
  EXPECT_THROW(jx::finfo(jx::int32), jx::DTypeError);
  EXPECT_THROW(jx::iinfo(jx::float32), jx::DTypeError);
}

TEST(DTypes, HalfRoundTrip) {
  // Hand-derived: 1/3 -> 0x3555 in binary16; 65520 rounds to inf; smallest subnormal 2^-24.
  EXPECT_EQ(jx::half(1.0f / 3.0f).bits, 0x3555);
  EXPECT_EQ(jx::half(65520.0f).bits, 0x7c00);
  EXPECT_EQ(jx::half(5.9604645e-08f).bits, 0x0001);
  EXPECT_EQ(float(jx::half(uint16_t(0))), 0.0f);
  EXPECT_EQ(float(jx::half(-2.5f)), -2.5f);
  EXPECT_EQ(jx::bhalf(1.0f / 3.0f).bits, 0x3eab);
  EXPECT_EQ(float(jx::bhalf(3.0f)), 3.0f);
}

}  // namespace
