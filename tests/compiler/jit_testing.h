// Helpers for the fusion, code generation and registry tests: closed jaxprs traced from
// lambdas, deterministic inputs, and comparisons of compiled against interpreted results
// (exact, or within a number of ulps of the result's dtype).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "core/array_impl.h"
#include "ir/jaxpr.h"
#include "jx/lax.h"
#include "jx/numpy.h"
#include "transforms/jaxpr_transforms.h"

namespace jx::testing {

inline ops::Aval aval(DType t, Shape s) { return ops::Aval{std::move(s), t, false}; }

inline ir::Jaxpr trace_closed(const tr::FlatFn& f, const std::vector<ops::Aval>& in) {
  tr::TracedJaxpr t = tr::trace_to_jaxpr(f, in);
  ir::Jaxpr j = std::move(t.jaxpr);
  const auto n = std::ptrdiff_t(t.consts.size());
  j.constvars.assign(j.invars.begin(), j.invars.begin() + n);
  j.invars.erase(j.invars.begin(), j.invars.begin() + n);
  j.consts = std::move(t.consts);
  return j;
}

// Deterministic values of `t` in a range that every unary op accepts for floats
// (|x| < 0.9 plus a few specials where `specials`), small integers for ints.
inline Array input(DType t, const Shape& s, int seed, bool specials = false) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t state = 2654435761u * uint32_t(seed + 1);
  for (size_t i = 0; i < v.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    double u = double(state >> 8) / double(1 << 24);  // [0, 1)
    if (is_floating(t)) v[i] = (u - 0.5) * 1.8;
    else if (t == DType::Bool) v[i] = u < 0.5 ? 0 : 1;
    else if (is_unsigned_integer(t)) v[i] = std::floor(u * 50);
    else v[i] = std::floor(u * 50) - 25;
  }
  if (specials && is_floating(t)) {
    const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-30};
    for (size_t i = 0; i < v.size() && i < 6; ++i) v[i * 7 % v.size()] = sp[i];
  }
  return numpy::array(v, s).astype(t);
}

// Units in the last place between two finite values of dtype t (float32 or float64).
inline double ulps(double a, double b, DType t) {
  if (a == b) return 0;
  double m = std::max(std::fabs(a), std::fabs(b));
  int e = 0;
  std::frexp(m, &e);
  const int mant = t == DType::Float32 ? 24 : 53;
  double ulp = std::ldexp(1.0, e - mant);
  const double tiny = t == DType::Float32 ? 1.1754943508222875e-38 : 2.2250738585072014e-308;
  if (m < tiny) ulp = std::ldexp(1.0, (t == DType::Float32 ? -126 : -1022) - mant + 1);
  return std::fabs(a - b) / ulp;
}

// Same shapes and dtypes; values equal up to `max_ulps` (0: bit-exact up to NaN payloads
// and the sign of zero), or within `rel` relative tolerance when rel > 0.
inline ::testing::AssertionResult close_values(const std::vector<Array>& got,
                                               const std::vector<Array>& want, double max_ulps,
                                               double rel = 0) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " results vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].shape() != want[i].shape() || got[i].dtype() != want[i].dtype())
      return ::testing::AssertionFailure() << "result " << i << " types differ: " << got[i].repr()
                                           << " vs " << want[i].repr();
    const DType t = got[i].dtype();
    std::vector<double> g = got[i].astype(DType::Float64).to_vector<double>();
    std::vector<double> w = want[i].astype(DType::Float64).to_vector<double>();
    if (t == DType::UInt64 || t == DType::Int64) {
      // Through double loses bits above 2^53: compare raw bytes.
      if (std::memcmp(detail::raw_data(got[i]), detail::raw_data(want[i]), got[i].nbytes()) != 0)
        return ::testing::AssertionFailure() << "result " << i << " differs:\n" << got[i].repr()
                                             << "\nvs\n" << want[i].repr();
      continue;
    }
    for (size_t k = 0; k < g.size(); ++k) {
      if (std::isnan(g[k]) && std::isnan(w[k])) continue;
      bool ok = g[k] == w[k];
      if (!ok && is_floating(t) && std::isfinite(g[k]) && std::isfinite(w[k])) {
        if (rel > 0) ok = std::fabs(g[k] - w[k]) <= rel * std::max(1.0, std::fabs(w[k]));
        else ok = ulps(g[k], w[k], t) <= max_ulps;
      }
      if (!ok)
        return ::testing::AssertionFailure() << "result " << i << " element " << k << ": " << g[k]
                                             << " vs " << w[k] << " (" << dtype_name(t) << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// Number of lines of describe() starting with `prefix` ("kernel", "library").
inline int count_steps(const std::string& description, const std::string& prefix) {
  int n = 0;
  size_t start = 0;
  while (start < description.size()) {
    if (description.compare(start, prefix.size(), prefix) == 0) ++n;
    size_t nl = description.find('\n', start);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return n;
}

}  // namespace jx::testing
