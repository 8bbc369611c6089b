// Printing: repr() / str() / operator<< against NumPy's own output (goldens made by
// tests/golden/gen_print.py), hand-checked weak-type and bfloat16 cases, Dragon4 against
// np.format_float_positional / np.format_float_scientific.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "core/array_impl.h"
#include "jx/numpy.h"
#include "support/dtype_switch.h"

namespace jnp = jx::numpy;
using jx::Array;

namespace {

struct Opts {
  int precision;
  int64_t threshold;
  int edgeitems;
  int linewidth;
  bool suppress;
  char sign;
  const char* floatmode;
  const char* nanstr;
  const char* infstr;
};

struct PrintCase {
  const char* dtype;
  std::vector<int64_t> shape;
  const char* hex;
  bool arange;
  bool weak;
  Opts opts;
  const char* repr;
  const char* str;
};

const PrintCase kCases[] = {
#include "golden/print_golden.inc"
};

struct FloatCase {
  int width;
  uint64_t bits;
  bool scientific;
  int precision;
  bool unique;
  bool fractional;
  char trim;
  bool sign;
  int pad_left, pad_right, exp_digits, min_digits;
  const char* expected;
};

const FloatCase kFloatCases[] = {
#include "golden/print_float_golden.inc"
};

Array make(const PrintCase& c) {
  jx::DType dt = jx::dtype_from_name(c.dtype);
  Array a = jx::detail::empty_array(jx::Shape(c.shape), dt, c.weak);
  char* p = static_cast<char*>(jx::detail::raw_data(a));
  if (c.arange) {
    JX_DTYPE_SWITCH(dt, T, {
      T* t = reinterpret_cast<T*>(p);
      for (int64_t i = 0; i < a.size(); ++i) {
        if constexpr (std::is_same_v<T, jx::half> || std::is_same_v<T, jx::bhalf>)
          t[i] = T(float(i));
        else
          t[i] = static_cast<T>(i);
      }
    });
  } else {
    std::string h = c.hex;
    EXPECT_EQ(h.size(), a.nbytes() * 2) << c.repr;
    for (size_t i = 0; i + 1 < h.size() && i / 2 < a.nbytes(); i += 2)
      p[i / 2] = char(std::stoi(h.substr(i, 2), nullptr, 16));
  }
  return a;
}

jnp::PrintOptions to_options(const Opts& o) {
  jnp::PrintOptions p;
  p.precision = o.precision;
  p.threshold = o.threshold;
  p.edgeitems = o.edgeitems;
  p.linewidth = o.linewidth;
  p.suppress = o.suppress;
  p.sign = o.sign;
  p.floatmode = o.floatmode;
  p.nanstr = o.nanstr;
  p.infstr = o.infstr;
  return p;
}

Array f64(double v) {
  Array a = jx::detail::empty_array({}, jx::float64);
  *jx::detail::data<double>(a) = v;
  return a;
}

Array from_bits_f32(uint32_t b) {
  Array a = jx::detail::empty_array({}, jx::float32);
  std::memcpy(jx::detail::raw_data(a), &b, 4);
  return a;
}

}  // namespace

TEST(Print, MatchesNumPyGoldens) {
  int n = 0;
  for (const PrintCase& c : kCases) {
    Array a = make(c);
    jnp::printoptions scope(to_options(c.opts));
    EXPECT_EQ(a.repr(), c.repr) << "case " << n;
    EXPECT_EQ(jnp::array_str(a), c.str) << "case " << n;
    std::ostringstream os;
    os << a;
    EXPECT_EQ(os.str(), c.str) << "case " << n;
    ++n;
  }
  EXPECT_GT(n, 200);
}

TEST(Print, FormatFloatMatchesNumPy) {
  int n = 0;
  for (const FloatCase& c : kFloatCases) {
    jx::DType dt = c.width == 16 ? jx::float16 : c.width == 32 ? jx::float32 : jx::float64;
    Array x = jx::detail::empty_array({}, dt);
    std::memcpy(jx::detail::raw_data(x), &c.bits, size_t(c.width / 8));
    std::string got =
        c.scientific ? jnp::format_float_scientific(x, c.precision, c.unique, c.trim, c.sign,
                                                    c.pad_left, c.exp_digits, c.min_digits)
                     : jnp::format_float_positional(x, c.precision, c.unique, c.fractional, c.trim,
                                                    c.sign, c.pad_left, c.pad_right, c.min_digits);
    EXPECT_EQ(got, c.expected) << "case " << n << " width " << c.width << " bits 0x" << std::hex
                               << c.bits;
    ++n;
  }
  EXPECT_GT(n, 1000);
}

// Weak types: hand-written from JAX's __repr__ (dtype=..., weak_type=True).
TEST(Print, WeakTypes) {
  EXPECT_EQ(Array(2).repr(), "Array(2, dtype=int32, weak_type=True)");
  EXPECT_EQ(Array(2.0).repr(), "Array(2., dtype=float32, weak_type=True)");
  EXPECT_EQ(Array(0.5f).repr(), "Array(0.5, dtype=float32, weak_type=True)");
  EXPECT_EQ(Array(true).repr(), "Array(True, dtype=bool)");  // bool scalars are strong
  std::ostringstream os;
  os << Array(2.0) << " " << Array(-3) << " " << Array(false);
  EXPECT_EQ(os.str(), "2.0 -3 False");
  Array v = jx::detail::empty_array({2}, jx::float32);
  jx::detail::data<float>(v)[0] = 1.5f;
  jx::detail::data<float>(v)[1] = 2.5f;
  EXPECT_EQ(v.repr(), "Array([1.5, 2.5], dtype=float32)");
}

// bfloat16 is not a NumPy float type: NumPy prints each element with ml_dtypes' repr, which is
// C++'s `ostream << float` (6 significant digits, no padding, no trailing '.').
TEST(Print, BFloat16) {
  auto make_bf = [](std::vector<float> v, jx::Shape shape) {
    Array a = jx::detail::empty_array(shape, jx::bfloat16);
    auto* p = jx::detail::data<jx::bhalf>(a);
    for (size_t i = 0; i < v.size(); ++i) p[i] = jx::bhalf(v[i]);
    return a;
  };
  Array a = make_bf({1, 2, 3}, {3});
  EXPECT_EQ(a.repr(), "Array([1, 2, 3], dtype=bfloat16)");
  EXPECT_EQ(jnp::array_str(a), "[1 2 3]");
  // 1/3 rounds to 0.333984375 in bfloat16; 0.1 to 0.10009765625.
  Array b = make_bf({1.0f / 3, 0.1f, -2.5f}, {3});
  EXPECT_EQ(b.repr(), "Array([0.333984, 0.100098, -2.5], dtype=bfloat16)");
  Array c = make_bf({1e7f, -1e-7f, std::nanf(""), -INFINITY}, {2, 2});
  // 1e7 (bits 0x4b189680) rounds to 0x4b19 = 10027008; -1e-7 to -1.00117e-07.
  EXPECT_EQ(jnp::array_str(c), "[[1.0027e+07 -1.00117e-07]\n [nan -inf]]");
  Array s = make_bf({1.0f}, {});
  EXPECT_EQ(s.repr(), "Array(1, dtype=bfloat16)");
  EXPECT_EQ(jnp::array_str(s), "1");
  Array e = jx::detail::empty_array({0, 2}, jx::bfloat16);
  EXPECT_EQ(e.repr(), "Array([], shape=(0, 2), dtype=bfloat16)");
}

TEST(Print, ScalarStrBoundaries) {
  // str() of a 0-d float: positional for 1e-4 <= |x| < 1e16, else scientific, as NumPy.
  EXPECT_EQ(jnp::array_str(from_bits_f32(0x38d1b717)), "1e-04");  // float32(0.0001) < 1e-4
  EXPECT_EQ(jnp::array_str(Array(100.0)), "100.0");
  EXPECT_EQ(jnp::array_str(f64(1e16)), "1e+16");
  EXPECT_EQ(jnp::array_str(f64(1e15)), "1000000000000000.0");
}

TEST(Print, OptionsValidationAndScope) {
  jnp::PrintOptions bad;
  bad.sign = 'x';
  EXPECT_THROW(jnp::set_printoptions(bad), jx::ValueError);
  bad = {};
  bad.floatmode = "nope";
  try {
    jnp::set_printoptions(bad);
    FAIL();
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[set_printoptions] floatmode"), std::string::npos);
  }
  Array x = jx::detail::empty_array({1}, jx::float64);
  jx::detail::data<double>(x)[0] = 1.0 / 3;
  {
    jnp::printoptions p({.precision = 3});
    EXPECT_EQ(jnp::array_str(x), "[0.333]");
    EXPECT_EQ(jnp::get_printoptions().precision, 3);
  }
  EXPECT_EQ(jnp::get_printoptions().precision, 8);
  EXPECT_EQ(jnp::array_str(x), "[0.33333333]");
  EXPECT_EQ(jnp::array2string(x, ", ", "", "", jnp::PrintOptions{.precision = 2}), "[0.33]");
}

TEST(Print, InvalidAndTraced) {
  Array empty;
  EXPECT_EQ(empty.repr(), "<invalid jx::Array>");
  std::ostringstream os;
  os << empty;
  EXPECT_EQ(os.str(), "<invalid jx::Array>");
}

TEST(Print, FormatFloatErrors) {
  EXPECT_THROW(jnp::format_float_positional(Array(1)), jx::ValueError);
  EXPECT_THROW(jnp::format_float_positional(Array(1.0), -1, false), jx::ValueError);
  EXPECT_THROW(jnp::format_float_positional(Array(1.0), 2, true, true, 'x'), jx::ValueError);
  EXPECT_THROW(jnp::format_float_scientific(Array(1.0), 2, true, 'k', false, -1, -1, 3),
               jx::ValueError);
}
