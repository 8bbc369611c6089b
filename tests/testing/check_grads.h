// check_grads: JAX's public_test_util.check_grads in C++. Forward mode is compared with
// central differences along a random direction; reverse mode with forward mode through the
// inner-product identity <u, J v> = <J^T u, v>; order 2 repeats both on the jvp function.
// Work in float64: finite differences are meaningless in float32 at these tolerances.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "jx/array.h"

namespace jx::testing {

using Fn = std::function<std::vector<Array>(const std::vector<Array>&)>;

struct GradCheckOptions {
  int order = 2;
  bool fwd = true;
  bool rev = true;
  double eps = 1e-4;
  double atol = 1e-5;
  double rtol = 1e-5;
  unsigned seed = 0;
};

// Throws std::runtime_error with a description of the first mismatch.
void check_grads(const Fn& f, const std::vector<Array>& args, const GradCheckOptions& opts = {});

// Random float64 array with entries in [lo, hi) (std::mt19937, not jx::random).
Array rand_f64(const Shape& shape, unsigned seed, double lo = -1.0, double hi = 1.0);
// Asserts |a - b| <= atol + rtol |b| elementwise (after converting both to float64).
void expect_close(const Array& a, const Array& b, double atol, double rtol, const std::string& what);

}  // namespace jx::testing
