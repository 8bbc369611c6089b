// Helpers for the pass tests: closed jaxprs traced from lambdas of jx::lax ops, and a
// bit-exact comparison of evaluated results.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "jx/lax.h"
#include "transforms/jaxpr_transforms.h"

namespace jx::testing {

inline ops::Aval f32(Shape s) { return ops::Aval{std::move(s), DType::Float32, false}; }
inline ops::Aval i32(Shape s) { return ops::Aval{std::move(s), DType::Int32, false}; }

// f traced at `in`; the constants it captures become constvars (a closed jaxpr, as jit
// hands it to the compiler).
inline ir::Jaxpr closed_jaxpr(const tr::FlatFn& f, const std::vector<ops::Aval>& in) {
  tr::TracedJaxpr t = tr::trace_to_jaxpr(f, in);
  ir::Jaxpr j = std::move(t.jaxpr);
  const auto n = std::ptrdiff_t(t.consts.size());
  j.constvars.assign(j.invars.begin(), j.invars.begin() + n);
  j.invars.erase(j.invars.begin(), j.invars.begin() + n);
  j.consts = std::move(t.consts);
  return j;
}

// Equal shapes, dtypes, weak types and values (NaN equals NaN; -0.0 equals 0.0, since
// x + 0 -> x may keep a -0.0 as XLA's simplifier does), within rtol relative error.
inline ::testing::AssertionResult same_values(const std::vector<Array>& a, const std::vector<Array>& b,
                                              double rtol = 0.0) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << a.size() << " vs " << b.size() << " results";
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].shape() != b[i].shape() || a[i].dtype() != b[i].dtype() || a[i].weak_type() != b[i].weak_type())
      return ::testing::AssertionFailure() << "result " << i << " types differ: " << a[i].repr() << " vs "
                                           << b[i].repr();
    Array x = a[i].astype(DType::Float64), y = b[i].astype(DType::Float64);
    std::vector<double> xv = x.to_vector<double>(), yv = y.to_vector<double>();
    for (size_t k = 0; k < xv.size(); ++k) {
      bool same = xv[k] == yv[k] || (xv[k] != xv[k] && yv[k] != yv[k]) ||
                  std::abs(xv[k] - yv[k]) <= rtol * std::abs(yv[k]);
      if (!same)
        return ::testing::AssertionFailure() << "result " << i << " element " << k << ": " << xv[k] << " vs " << yv[k];
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace jx::testing
