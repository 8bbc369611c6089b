#include <gtest/gtest.h>

#include <set>

#include "ops/primitive.h"

TEST(Registry, EveryPrimitiveHasAbstractEvalAndImpl) {
  auto missing = jx::ops::missing_rules({});
  std::string all;
  for (auto& m : missing) all += m + "\n";
  EXPECT_TRUE(missing.empty()) << all;
}

TEST(Registry, NamesAreUnique) {
  std::set<std::string> names;
  for (int i = 0; i < jx::ops::kNumPrims; ++i)
    EXPECT_TRUE(names.insert(jx::ops::name(jx::ops::Prim(i))).second) << jx::ops::name(jx::ops::Prim(i));
}

TEST(Registry, EveryPrimitiveHasABatchingRule) {
  EXPECT_EQ(jx::ops::missing_rules({.batch = true}), std::vector<std::string>{});
}

TEST(Registry, EveryPrimitiveHasItsAutodiffRules) {
  auto missing = jx::ops::missing_rules({.jvp = true, .transpose = true});
  EXPECT_EQ(missing, std::vector<std::string>{});
}
