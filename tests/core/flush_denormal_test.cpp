// jx::config::set_flush_denormal (torch.set_flush_denormal; JAX's CPU mode): with it on,
// a result that would be subnormal is zero (FTZ) and a subnormal operand counts as zero
// (DAZ), on every element of an array that eager kernels and compiled kernels split over
// the OpenMP threads, and in threads started later; off, IEEE subnormals come back.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

#include "jx/config.h"
#include "jx/jx.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;

constexpr int64_t kN = int64_t(1) << 20;  // large enough for every kernel to run in parallel

// Half of the smallest normal float: subnormal unless flushed.
Array halved(const Array& x) { return x * 0.5f; }

float smallest(const Array& a) { return jnp::min(a).item<float>(); }
float largest(const Array& a) { return jnp::max(a).item<float>(); }

TEST(FlushDenormal, OnFlushesEveryElementEagerAndCompiledOffRestoresIeee) {
  const float tiny = std::numeric_limits<float>::min();  // 1.18e-38, normal
  const float sub = tiny / 2;                            // subnormal
  Array x = jnp::full({kN}, tiny);
  Array subs = jnp::full({kN}, sub);
  auto jitted = jx::jit(halved);

  // Default: IEEE subnormals, in both paths.
  EXPECT_EQ(smallest(halved(x)), sub);
  EXPECT_EQ(smallest(jitted(x)), sub);

  ASSERT_TRUE(jx::config::set_flush_denormal(true));
  EXPECT_EQ(largest(halved(x)), 0.0f);  // FTZ: every element, whichever thread wrote it
  EXPECT_EQ(largest(jitted(x)), 0.0f);
  EXPECT_EQ(largest((subs > 0.0f).astype(jx::DType::Float32)), 0.0f);  // DAZ: a subnormal compares as 0
  float in_thread = -1;
  std::thread t([&] { in_thread = largest(halved(x)); });
  t.join();
  EXPECT_EQ(in_thread, 0.0f);  // a thread started later inherits the mode

  ASSERT_TRUE(jx::config::set_flush_denormal(false));
  EXPECT_EQ(smallest(halved(x)), sub);
  EXPECT_EQ(smallest(jitted(x)), sub);
  EXPECT_EQ(smallest((subs > 0.0f).astype(jx::DType::Float32)), 1.0f);
}

}  // namespace
