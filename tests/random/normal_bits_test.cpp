// normal, truncated_normal and erf_inv bit for bit against XLA's CPU algorithm. The goldens
// (tests/golden/gen_random_normal.py) re-derive, from XLA's sources and in exact rational
// arithmetic, what jax.random.normal computes on CPU: uniform bits -> fused multiply-add ->
// chlo.erf_inv's polynomial over XLA's own log1p/log -> times sqrt(2).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "jx/jx.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
using jx::Array;

#include "golden/random_normal_golden.inc"

namespace {

struct Mode {
  explicit Mode(bool partitionable) : s(jx::config::threefry_partitionable, partitionable) {}
  jx::config::Scoped s;
};

uint32_t bits32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
uint64_t bits64(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
float from32(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
double from64(uint64_t b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}

// Bit equality, with every NaN equal to every NaN (the payload is not specified).
template <class F, class B>
bool same(F got, B want_bits, F want) {
  if (std::isnan(want)) return std::isnan(got);
  if constexpr (sizeof(F) == 4) return bits32(got) == want_bits;
  else return bits64(got) == want_bits;
}

TEST(NormalBits, Float32BothModes) {
  for (const auto& g : kNormal32) {
    Mode m(g.partitionable);
    auto z = jr::normal(jr::PRNGKey(g.seed), {g.n}).to_vector<float>();
    ASSERT_EQ(z.size(), g.bits.size());
    for (size_t i = 0; i < z.size(); ++i)
      EXPECT_EQ(bits32(z[i]), g.bits[i]) << "seed " << g.seed << " part " << g.partitionable << " i " << i
                                         << ": got " << z[i] << " want " << from32(g.bits[i]);
  }
}

TEST(NormalBits, Float64BothModes) {
  for (const auto& g : kNormal64) {
    Mode m(g.partitionable);
    auto z = jr::normal(jr::PRNGKey(g.seed), {g.n}, jx::float64).to_vector<double>();
    ASSERT_EQ(z.size(), g.bits.size());
    for (size_t i = 0; i < z.size(); ++i)
      EXPECT_EQ(bits64(z[i]), g.bits[i]) << "seed " << g.seed << " part " << g.partitionable << " i " << i
                                         << ": got " << z[i] << " want " << from64(g.bits[i]);
  }
}

// Bounds whose float32 erf(bound / sqrt(2)) XLA and libm agree on (the generator asserts it).
TEST(NormalBits, TruncatedNormalFloat32BothModes) {
  for (const auto& g : kTrunc32) {
    Mode m(g.partitionable);
    auto z = jr::truncated_normal(jr::PRNGKey(g.seed), double(g.lo), double(g.hi), jx::Shape{g.n})
                 .to_vector<float>();
    ASSERT_EQ(z.size(), g.bits.size());
    for (size_t i = 0; i < z.size(); ++i)
      EXPECT_EQ(bits32(z[i]), g.bits[i]) << "seed " << g.seed << " [" << g.lo << ", " << g.hi << "] part "
                                         << g.partitionable << " i " << i;
  }
}

TEST(ErfInvBits, Float32) {
  std::vector<float> x;
  for (const auto& p : kErfInv32) x.push_back(from32(p[0]));
  auto y = jx::lax::erf_inv(jnp::array<float>(x)).to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_TRUE(same(y[i], kErfInv32[i][1], from32(kErfInv32[i][1])))
        << "x " << x[i] << ": got " << y[i] << " want " << from32(kErfInv32[i][1]);
}

TEST(ErfInvBits, Float64) {
  std::vector<double> x;
  for (const auto& p : kErfInv64) x.push_back(from64(p[0]));
  auto y = jx::lax::erf_inv(jnp::array<double>(x)).to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_TRUE(same(y[i], kErfInv64[i][1], from64(kErfInv64[i][1])))
        << "x " << x[i] << ": got " << y[i] << " want " << from64(kErfInv64[i][1]);
}

// 16-bit floats go through float32 and round once, as XLA's upcast does.
TEST(ErfInvBits, Float16AndBFloat16) {
  for (bool bf : {false, true}) {
    const auto& table = bf ? kErfInvBF16 : kErfInvF16;
    std::vector<float> x;
    for (const auto& p : table)
      x.push_back(bf ? float(jx::bhalf(from32(uint32_t(p[0]) << 16))) : jx::half::to_float(p[0]));
    const jx::DType dt = bf ? jx::bfloat16 : jx::float16;
    Array in = jx::lax::convert_element_type(jnp::array<float>(x), dt);
    auto y = jx::lax::convert_element_type(jx::lax::erf_inv(in), jx::float32).to_vector<float>();
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = bf ? from32(uint32_t(table[i][1]) << 16) : jx::half::to_float(table[i][1]);
      EXPECT_EQ(bits32(y[i]), bits32(want)) << (bf ? "bfloat16" : "float16") << " x " << x[i];
    }
  }
}

TEST(ErfInvBits, EndsAndOutOfDomain) {
  auto y = jx::lax::erf_inv(jnp::array<float>({1.0f, -1.0f, 1.5f, -2.0f, NAN, 0.0f, -0.0f}))
               .to_vector<float>();
  EXPECT_EQ(y[0], INFINITY);
  EXPECT_EQ(y[1], -INFINITY);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_EQ(bits32(y[5]), 0u);
  EXPECT_EQ(bits32(y[6]), 0x80000000u);
  auto d = jx::lax::erf_inv(jnp::array<double>({1.0, -1.0, 1.0000001, NAN})).to_vector<double>();
  EXPECT_EQ(d[0], INFINITY);
  EXPECT_EQ(d[1], -INFINITY);
  EXPECT_TRUE(std::isnan(d[2]));
  EXPECT_TRUE(std::isnan(d[3]));
}

// The same bits under jit: the staged program runs the same kernel.
TEST(NormalBits, JitMatchesEager) {
  const auto& g = kNormal32[0];
  Mode m(g.partitionable);
  auto f = jx::jit([n = g.n](const Array& key) { return jr::normal(key, {n}); });
  auto z = f(jr::PRNGKey(g.seed)).to_vector<float>();
  for (size_t i = 0; i < z.size(); ++i) EXPECT_EQ(bits32(z[i]), g.bits[i]) << i;
}

}  // namespace
