// Helpers shared by the checkpoint tests: a temporary directory, arrays of every dtype with
// known bytes, and checks of typed errors by their message.
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "core/array_impl.h"
#include "jx/jx.h"
#include "support/dtype_switch.h"
#include "testing/expect_error.h"
#include "testing/temp_dir.h"

namespace ckpt_testing {

namespace fs = std::filesystem;
using jx::testing::TempDir;


// An array whose element i is a value of `t` derived from i and `seed` (every dtype).
inline jx::Array pattern(jx::DType t, const jx::Shape& shape, int64_t seed = 0) {
  jx::Array a = jx::detail::empty_array(shape, t, false);
  void* p = jx::detail::raw_data(a);
  // A generic lambda, so that `if constexpr` discards the branches that do not fit T.
  auto fill = [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < a.size(); ++i) {
      int64_t k = i + 7 * seed;
      if constexpr (std::is_same_v<T, bool>)
        static_cast<T*>(p)[i] = k % 3 == 0;
      else if constexpr (std::is_same_v<T, jx::half> || std::is_same_v<T, jx::bhalf>)
        static_cast<T*>(p)[i] = T(0.5f * float(k) - 1.25f);
      else if constexpr (std::is_floating_point_v<T>)
        static_cast<T*>(p)[i] = T(0.1 * double(k) - 1.25);
      else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
        static_cast<T*>(p)[i] = T(0.1 * double(k) - 1.25, 0.25 * double(k));
      else if constexpr (std::is_signed_v<T>)
        static_cast<T*>(p)[i] = T(3 * k - 7);
      else
        static_cast<T*>(p)[i] = T(7 * k + 1);
    }
  };
  JX_DTYPE_SWITCH_C(t, T, fill(T{}));
  return a;
}

inline std::string bytes_of(const jx::Array& a) {
  return std::string(static_cast<const char*>(jx::detail::raw_data(a)), size_t(a.nbytes()));
}

// The same dtype, shape, weak type and bytes.
inline void expect_identical(const jx::Array& a, const jx::Array& b, const std::string& what = "") {
  EXPECT_EQ(a.dtype(), b.dtype()) << what;
  EXPECT_EQ(a.shape(), b.shape()) << what;
  EXPECT_EQ(a.weak_type(), b.weak_type()) << what;
  if (a.dtype() == b.dtype() && a.shape() == b.shape()) {
    EXPECT_EQ(bytes_of(a), bytes_of(b)) << what;
  }
}

using jx::testing::expect_error;

}  // namespace ckpt_testing
