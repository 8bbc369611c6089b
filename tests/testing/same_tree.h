// EXPECT_TRUE(same_tree(a, b)): the same tree structure, and leaf by leaf the same shape,
// dtype and values (bit-equal up to array_equal's NaN rule), with the first difference named.
#pragma once
#include <gtest/gtest.h>

#include "jx/jx.h"

namespace jx::testing {

inline ::testing::AssertionResult same_tree(const jx::Tree& a, const jx::Tree& b) {
  auto [la, da] = jx::tree::flatten(a);
  auto [lb, db] = jx::tree::flatten(b);
  if (da != db) return ::testing::AssertionFailure() << da.str() << " vs " << db.str();
  for (size_t i = 0; i < la.size(); ++i)
    if (la[i].shape() != lb[i].shape() || la[i].dtype() != lb[i].dtype() ||
        !jx::numpy::array_equal(la[i], lb[i]).item<bool>())
      return ::testing::AssertionFailure() << "leaf " << i << ": " << la[i] << " vs " << lb[i];
  return ::testing::AssertionSuccess();
}

}  // namespace jx::testing
