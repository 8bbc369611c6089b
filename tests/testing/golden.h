// Named NumPy goldens: tests/golden/gen_*.py write `{"name", {shape}, {values}}` rows that
// a test includes into a std::vector<NamedGolden> and checks by name.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "jx/array.h"

namespace jx::testing {

struct NamedGolden {
  const char* name;
  std::vector<int64_t> shape;
  std::vector<double> values;
};

// Asserts x has the golden's shape and values within tol * (1 + |expected|).
void expect_named_golden(const std::vector<NamedGolden>& table, const std::string& name,
                         const Array& x, double tol = 0);

}  // namespace jx::testing
