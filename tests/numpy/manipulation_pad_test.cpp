// jnp.pad, every mode, against NumPy goldens (tests/golden/gen_manipulation.py), plus the
// pad_width forms, dtypes, weak types and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "jx/numpy.h"
#include "testing/expect_error.h"
#include "testing/golden.h"

namespace {

using jx::Array;
using jx::DType;
using jx::Shape;
namespace jnp = jx::numpy;

const std::vector<jx::testing::NamedGolden> kGoldens = {
#include "golden/manipulation_golden.inc"
};

void expect_golden(const std::string& name, const Array& x, double tol = 0) {
  jx::testing::expect_named_golden(kGoldens, name, x, tol);
}

Array val(Shape s) {
  std::vector<float> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float((int64_t(7 * i) % 11) - 5) / 2.0f;
  return jnp::array(v, s);
}
const Array A = val({2, 3, 4});
const Array B = val({4, 6});
const Array V = val({7});

Array int_b() {
  std::vector<int32_t> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = int32_t(int64_t(7 * i) % 11) - 5;
  return jnp::array(v, {4, 6});
}

using jx::testing::expect_error;

TEST(Pad, Constant) {
  expect_golden("pad_v_constant_2", jnp::pad(V, 2));
  expect_golden("pad_b_constant_12_3", jnp::pad(B, {1, 2}, Array(3)));
  expect_golden("pad_b_constant_12_3", jnp::pad(B, {{1, 2}}, "constant", {.constant_values = 3}));
  expect_golden("pad_b_constant_per_axis",
                jnp::pad(B, {{1, 2}, {3, 0}}, jnp::array<float>({{1, 2}, {3, 4}})));
  expect_golden("pad_b_constant_pair", jnp::pad(B, 1, jnp::array<float>({7, 8})));
  // constant_values takes the array's dtype; the weak type of the array is kept
  Array i = jnp::pad(jnp::array<int8_t>({1, 2}), 1, Array(2.7));
  EXPECT_EQ(i.dtype(), DType::Int8);
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{2, 1, 2, 2}));
  EXPECT_TRUE(jnp::pad(jnp::full({2}, Array(1.0)), 1).weak_type());
}

TEST(Pad, EdgeWrapReflectSymmetric) {
  for (std::string mode : {"edge", "wrap", "reflect", "symmetric"}) {
    SCOPED_TRACE(mode);
    expect_golden("pad_v_" + mode + "_3_10", jnp::pad(V, {3, 10}, mode));
    expect_golden("pad_b_" + mode + "_2_5", jnp::pad(B, {{2, 5}, {5, 1}}, mode));
    expect_golden("pad_a_" + mode + "_1", jnp::pad(A, 1, mode));
  }
  jnp::PadOptions odd{.reflect_type = "odd"};
  expect_golden("pad_v_reflect_odd", jnp::pad(V, {3, 10}, "reflect", odd));
  expect_golden("pad_v_symmetric_odd", jnp::pad(V, {3, 10}, "symmetric", odd));
  expect_golden("pad_b_reflect_odd", jnp::pad(B, {{2, 5}, {5, 1}}, "reflect", odd));
  Array one = jnp::array<float>({{2.5f, -1.0f, 4.0f}});
  expect_golden("pad_one_reflect", jnp::pad(one, {{2, 3}, {1, 2}}, "reflect"));
  expect_golden("pad_one_symmetric_odd", jnp::pad(one, {{2, 3}, {1, 2}}, "symmetric", odd));
}

TEST(Pad, LinearRamp) {
  expect_golden("pad_v_linear_ramp", jnp::pad(V, {3, 4}, "linear_ramp"), 1e-6);
  expect_golden("pad_b_linear_ramp_ends",
                jnp::pad(B, {{2, 1}, {3, 2}}, "linear_ramp",
                         {.end_values = jnp::array<float>({{1, -2}, {5, 0.5f}})}),
                1e-6);
}

TEST(Pad, Statistics) {
  const Array I = int_b();
  for (std::string mode : {"maximum", "minimum", "mean", "median"}) {
    SCOPED_TRACE(mode);
    expect_golden("pad_b_" + mode, jnp::pad(B, {{1, 2}, {2, 1}}, mode), 1e-6);
    expect_golden("pad_b_" + mode + "_stat2",
                  jnp::pad(B, {{1, 2}, {2, 1}}, mode, {.stat_length = 2}), 1e-6);
    Array r = jnp::pad(I, {{2, 1}, {1, 3}}, mode, {.stat_length = jnp::PadWidth{{3, 2}, {3, 4}}});
    EXPECT_EQ(r.dtype(), DType::Int32);
    expect_golden("pad_i_" + mode + "_stat3", r);
  }
}

TEST(Pad, EmptyModeGivesZeros) {
  Array e = jnp::pad(jnp::array<int32_t>({{1, 2}}), {{1, 0}, {0, 2}}, "empty");
  EXPECT_EQ(e.shape(), (Shape{2, 4}));
  EXPECT_EQ(e.to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 0, 1, 2, 0, 0}));
}

TEST(Pad, ScalarsAndEmptyAxes) {
  EXPECT_EQ(jnp::pad(Array(3.0f), 2).shape(), (Shape{}));
  Array z = jnp::zeros({0, 2});
  EXPECT_EQ(jnp::pad(z, 1).shape(), (Shape{2, 4}));
  EXPECT_EQ(jnp::pad(z, {{0, 0}, {1, 1}}, "reflect").shape(), (Shape{0, 4}));
  for (std::string mode : {"edge", "wrap", "reflect", "symmetric", "maximum", "linear_ramp"})
    expect_error<jx::ValueError>([&] { jnp::pad(z, 1, mode); },
                                 "[pad] cannot apply '" + mode + "' padding to an empty axis");
}

TEST(Pad, LargeConstantPadThreaded) {
  Array x = jnp::ones({300, 400});
  Array p = jnp::pad(x, {{2, 3}, {4, 1}});
  ASSERT_EQ(p.shape(), (Shape{305, 405}));
  auto v = p.to_vector<float>();
  for (int64_t i = 0; i < 305; ++i)
    for (int64_t j = 0; j < 405; ++j)
      ASSERT_EQ(v[size_t(i * 405 + j)], (i >= 2 && i < 302 && j >= 4 && j < 404) ? 1.0f : 0.0f);
}

TEST(PadErrors, Messages) {
  expect_error<jx::ValueError>([] { jnp::pad(B, 1, "bogus"); }, "[pad] unknown mode 'bogus'");
  expect_error<jx::ValueError>([] { jnp::pad(B, {-1, 2}); },
                               "[pad] pad_width can't contain negative values");
  expect_error<jx::ValueError>([] { jnp::pad(B, {{1, 1}, {1, 1}, {1, 1}}); },
                               "[pad] pad_width has 3 (before, after) pairs but the array has 2");
  expect_error<jx::ValueError>([] { jnp::pad(B, {1, 2, 3}); },
                               "[pad] pad_width given as a flat list must be {n} or {before, after}");
  expect_error<jx::ValueError>([] { jnp::pad(V, 2, "reflect", {.reflect_type = "sideways"}); },
                               "[pad] reflect_type must be 'even' or 'odd'");
  expect_error<jx::ValueError>([] { jnp::pad(V, 2, "mean", {.stat_length = 0}); },
                               "[pad] stat_length must be positive");
  expect_error<jx::ShapeError>([] { jnp::pad(B, 1, jnp::zeros({3, 3})); },
                               "[pad] constant_values has unsupported shape (3, 3)");
}

}  // namespace
