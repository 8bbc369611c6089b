// The checks both jx::scipy test files use: SciPy's goldens (tests/golden/gen_scipy.py),
// compared with NaN and infinities handled; jit against eager and vmap against a loop.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "testing/golden.h"

namespace jx::testing::scipy {

using jx::Array;
using jx::DType;
using jx::Shape;
namespace jnp = jx::numpy;

const std::vector<jx::testing::NamedGolden> kGoldens = {
#include "golden/scipy_golden.inc"
};

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// float64 against SciPy's float64: a few ulps (lgamma/digamma/erf kernels, libm exp/log).
constexpr double kF64 = 1e-12;
// float32 against the float64 goldens at the same (float32-exact) inputs.
constexpr double kF32 = 5e-6;

Array golden(const std::string& name) {
  for (const auto& g : kGoldens)
    if (name == g.name) return jnp::array<double>(g.values, Shape(g.shape));
  ADD_FAILURE() << "no golden named " << name;
  return Array();
}

// |x - want| <= tol (|want| + floor) elementwise; infinities must be equal and NaN must be
// NaN (testing/golden.h's checker treats them as mismatches). floor = 0 checks relative
// error, for the far tails.
void expect_golden(const std::string& name, const Array& x, double tol, double floor = 1.0) {
  const jx::testing::NamedGolden* g = nullptr;
  for (const auto& row : kGoldens)
    if (name == row.name) g = &row;
  ASSERT_NE(g, nullptr) << "no golden named " << name;
  ASSERT_EQ(x.shape(), Shape(g->shape)) << name;
  const std::vector<double> v = x.astype(DType::Float64).to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i) {
    const double want = g->values[i];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(v[i])) << name << " [" << i << "]: " << v[i] << ", want NaN";
    } else if (std::isinf(want) || tol == 0) {
      EXPECT_EQ(v[i], want) << name << " [" << i << "]";
    } else {
      EXPECT_NEAR(v[i], want, tol * (std::fabs(want) + floor)) << name << " [" << i << "]";
    }
  }
}

// jit against eager, or vmap against a loop: the same non-finite values, and finite ones
// within rtol.
void expect_same(const Array& got, const Array& want, double rtol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  const std::vector<double> a = got.astype(DType::Float64).to_vector<double>();
  const std::vector<double> b = want.astype(DType::Float64).to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(b[i]))
      EXPECT_TRUE(std::isnan(a[i])) << what << " [" << i << "]";
    else if (std::isinf(b[i]))
      EXPECT_EQ(a[i], b[i]) << what << " [" << i << "]";
    else
      EXPECT_NEAR(a[i], b[i], rtol * std::fabs(b[i])) << what << " [" << i << "]";
  }
}

Array f64(std::vector<double> v) { return jnp::array<double>(v); }

}  // namespace jx::testing::scipy
