#include "testing/golden.h"

#include <gtest/gtest.h>

#include <cmath>

namespace jx::testing {

void expect_named_golden(const std::vector<NamedGolden>& table, const std::string& name,
                         const Array& x, double tol) {
  const NamedGolden* g = nullptr;
  for (const auto& c : table)
    if (name == c.name) g = &c;
  ASSERT_NE(g, nullptr) << "no golden named " << name;
  ASSERT_EQ(x.shape(), Shape(g->shape)) << name;
  auto v = x.to_vector<double>();
  ASSERT_EQ(v.size(), g->values.size()) << name;
  for (size_t i = 0; i < v.size(); ++i)
    ASSERT_NEAR(v[i], g->values[i], tol * (1 + std::abs(g->values[i]))) << name << " [" << i << "]";
}

}  // namespace jx::testing
