// jnp creation from ranges and masks against NumPy goldens (tests/golden/gen_creation.py),
// plus dtypes, weak types and errors.
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
#include "golden/creation_golden.inc"
};

// float32 results against NumPy's float64: a few float32 ulps.
constexpr double kF32 = 4e-7;

void expect_golden(const std::string& name, const Array& x, double tol = 0) {
  jx::testing::expect_named_golden(kGoldens, name, x, tol);
}

void expect_goldens(const std::string& name, const std::vector<Array>& xs) {
  for (size_t k = 0; k < xs.size(); ++k) expect_golden(name + "_" + std::to_string(k), xs[k]);
}

Array val(Shape s) {
  std::vector<float> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float((int64_t(7 * i) % 11) - 5) / 2.0f;
  return jnp::array(v, s);
}

using jx::testing::expect_error;

TEST(Creation, Arange) {
  Array a = jnp::arange(5);
  EXPECT_EQ(a.dtype(), DType::Int32);
  EXPECT_FALSE(a.weak_type());
  expect_golden("arange_5", a);
  Array f = jnp::arange(2.5);
  EXPECT_EQ(f.dtype(), DType::Float32);
  expect_golden("arange_2p5", f);
  expect_golden("arange_1_7_2", jnp::arange(1, 7, 2));
  EXPECT_EQ(jnp::arange(1, 7, 2).dtype(), DType::Int32);
  expect_golden("arange_0_1_0p1", jnp::arange(0, 1, 0.1), kF32);
  expect_golden("arange_10_0_m3", jnp::arange(10, 0, -3));
  expect_golden("arange_m3", jnp::arange(-3));
  expect_golden("arange_0p5_3", jnp::arange(0.5, 3));
  expect_golden("arange_m2p5_4_1p5", jnp::arange(-2.5, 4, 1.5));
  EXPECT_EQ(jnp::arange(0, 1, 0.1).dtype(), DType::Float32);
  Array d = jnp::arange(0, 5, 1, DType::Float64);
  EXPECT_EQ(d.dtype(), DType::Float64);
  expect_golden("arange_5", d);
  Array h = jnp::arange(0, 3, 0.5, DType::Float16);
  EXPECT_EQ(h.dtype(), DType::Float16);
  EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{0, 0.5f, 1, 1.5f, 2, 2.5f}));
  EXPECT_EQ(jnp::arange(200000).to_vector<int32_t>()[199999], 199999);
}

TEST(Creation, Linspace) {
  Array l = jnp::linspace(0, 1, 5);
  EXPECT_EQ(l.dtype(), DType::Float32);
  EXPECT_FALSE(l.weak_type());
  expect_golden("linspace_0_1_5", l, kF32);
  expect_golden("linspace_0_1_5_noend", jnp::linspace(0, 1, 5, false), kF32);
  expect_golden("linspace_2_3_1", jnp::linspace(2, 3, 1), kF32);
  expect_golden("linspace_2_3_1_noend", jnp::linspace(2, 3, 1, false), kF32);
  expect_golden("linspace_2_3_0", jnp::linspace(2, 3, 0));
  Array m = jnp::linspace(-1, 7, 50);
  expect_golden("linspace_m1_7_50", m, kF32);
  // the endpoints are exact
  EXPECT_EQ(m.to_vector<float>().front(), -1.0f);
  EXPECT_EQ(m.to_vector<float>().back(), 7.0f);
  Array i = jnp::linspace(0, 10, 7, true, DType::Int32);
  EXPECT_EQ(i.dtype(), DType::Int32);
  expect_golden("linspace_0_10_7_int", i);
  expect_golden("linspace_5_m5_4_int", jnp::linspace(5, -5, 4, true, DType::Int32));
  Array d = jnp::linspace(0, 1, 7, true, DType::Float64);
  EXPECT_EQ(d.dtype(), DType::Float64);
  expect_golden("linspace_0_1_7_f64", d, 1e-15);
  expect_error<jx::ValueError>([] { jnp::linspace(0, 1, -1); },
                               "[linspace] number of samples, -1, must be non-negative");
}

TEST(Creation, LogspaceGeomspace) {
  expect_golden("logspace_0_3_4", jnp::logspace(0, 3, 4), 1e-6);
  expect_golden("logspace_0_2_5_base2", jnp::logspace(0, 2, 5, true, 2), 1e-6);
  expect_golden("logspace_1_2_3_noend", jnp::logspace(1, 2, 3, false), 1e-6);
  expect_golden("geomspace_1_1000_4", jnp::geomspace(1, 1000, 4), 1e-6);
  expect_golden("geomspace_m1_m1000_4", jnp::geomspace(-1, -1000, 4), 1e-6);
  expect_golden("geomspace_2_32_5_noend", jnp::geomspace(2, 32, 5, false), 1e-6);
  EXPECT_EQ(jnp::geomspace(1, 1000, 4, true, DType::Float64).dtype(), DType::Float64);
  expect_error<jx::ValueError>([] { jnp::geomspace(0, 10, 3); },
                               "[geomspace] a geometric sequence cannot include zero");
}

TEST(Creation, EyeIdentityTri) {
  Array e = jnp::eye(3);
  EXPECT_EQ(e.dtype(), DType::Float32);
  expect_golden("eye_3", e);
  expect_golden("eye_3_4_1", jnp::eye(3, 4, 1));
  expect_golden("eye_4_3_m2", jnp::eye(4, 3, -2));
  expect_golden("eye_2_2_5", jnp::eye(2, 2, 5));
  expect_golden("identity_3", jnp::identity(3, DType::Int8));
  EXPECT_EQ(jnp::identity(3, DType::Int8).dtype(), DType::Int8);
  EXPECT_EQ(jnp::eye(2, std::nullopt, 0, DType::Bool).to_vector<bool>(),
            (std::vector<bool>{true, false, false, true}));
  expect_golden("tri_3", jnp::tri(3));
  expect_golden("tri_3_5_1", jnp::tri(3, 5, 1));
  expect_golden("tri_4_2_m1", jnp::tri(4, 2, -1));
  EXPECT_EQ(jnp::eye(0).shape(), (Shape{0, 0}));
  expect_error<jx::ValueError>([] { jnp::eye(-1); }, "[eye] negative dimensions are not allowed");
  expect_error<jx::ValueError>([] { jnp::tri(2, -3); }, "[tri] negative dimensions");
}

TEST(Creation, TrilTriu) {
  const Array A = val({2, 3, 4}), B = val({4, 6});
  expect_golden("tril_b", jnp::tril(B));
  expect_golden("tril_b_m1", jnp::tril(B, -1));
  expect_golden("triu_b_2", jnp::triu(B, 2));
  expect_golden("tril_a", jnp::tril(A));
  expect_golden("triu_a_m1", jnp::triu(A, -1));
  EXPECT_EQ(jnp::tril(B).dtype(), DType::Float32);
  expect_error<jx::ValueError>([] { jnp::tril(jnp::zeros({3})); },
                               "[tril] needs an array with at least 2 dimensions, got f32[3]");
}

TEST(Creation, DiagAndDiagonal) {
  const Array A = val({2, 3, 4}), B = val({4, 6}), V3 = val({3});
  expect_golden("diag_v3", jnp::diag(V3));
  expect_golden("diag_v3_1", jnp::diag(V3, 1));
  expect_golden("diag_v3_m2", jnp::diag(V3, -2));
  expect_golden("diag_b", jnp::diag(B));
  expect_golden("diag_b_2", jnp::diag(B, 2));
  expect_golden("diag_b_m1", jnp::diag(B, -1));
  expect_golden("diag_b_10", jnp::diag(B, 10));
  expect_golden("diagonal_a", jnp::diagonal(A));
  expect_golden("diagonal_a_1_1_2", jnp::diagonal(A, 1, 1, 2));
  expect_golden("diagonal_a_m1_2_0", jnp::diagonal(A, -1, 2, 0));
  expect_golden("diagonal_b_3", jnp::diagonal(B, 3));
  expect_golden("diagonal_b_m3", jnp::diagonal(B, -3));
  Array b = jnp::diag(jnp::array<bool>({true, false, true}));
  EXPECT_EQ(b.dtype(), DType::Bool);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{1, 0, 0, 0, 0, 0, 0, 0, 1}));
  expect_error<jx::ValueError>([&] { jnp::diag(A); }, "[diag] input must be 1-d");
  expect_error<jx::ValueError>([] { jnp::diagonal(jnp::zeros({3})); }, "[diagonal] needs");
  expect_error<jx::ValueError>([&] { jnp::diagonal(A, 0, 1, -2); },
                               "[diagonal] axis1 and axis2 must be different");
}

TEST(Creation, Meshgrid) {
  Array x = jnp::arange(3, std::nullopt), y = jnp::arange(10, 12, 1), z = jnp::arange(-5, -1, 1);
  x = x.astype(DType::Float32);
  y = y.astype(DType::Float32);
  z = z.astype(DType::Float32);
  expect_goldens("meshgrid_xy", jnp::meshgrid({x, y}));
  expect_goldens("meshgrid_ij", jnp::meshgrid({x, y}, false, "ij"));
  expect_goldens("meshgrid_xyz_sparse", jnp::meshgrid({x, y, z}, true));
  expect_goldens("meshgrid_xyz_ij", jnp::meshgrid({x, y, z}, false, "ij"));
  EXPECT_EQ(jnp::meshgrid({x}).at(0).shape(), (Shape{3}));
  expect_error<jx::ValueError>([&] { jnp::meshgrid({x, y}, false, "yx"); },
                               "[meshgrid] indexing must be 'xy' or 'ij'");
  expect_error<jx::ValueError>([] { jnp::meshgrid({jnp::zeros({2, 2})}); },
                               "[meshgrid] arguments must be 1-d");
}

TEST(Creation, Copy) {
  Array x = val({3, 2});
  Array c = jnp::copy(x);
  EXPECT_EQ(c.shape(), x.shape());
  EXPECT_EQ(c.to_vector<float>(), x.to_vector<float>());
  EXPECT_TRUE(jnp::copy(Array(1)).weak_type());
}

}  // namespace
