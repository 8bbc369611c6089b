// The vectorized float32 erf_inv (vm::erf_inv_block: AVX-512, AVX2 or scalar, whichever
// this build has) against the scalar vm::erf_inv, bit for bit, over a dense sweep of the
// float32 bit patterns; the scalar function itself is pinned to XLA's bits by
// normal_bits_test's goldens. Also the fused normal kernel against the composition of
// primitives. The full 2^32 sweep is too slow for the suite (docs/random_numerics.md has
// how it was run by hand).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/vmath.h"
#include "jx/jx.h"
#include "random/internal.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace vm = jx::cpu::vm;
using jx::Array;

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// The float whose bits are those of `f` stepped `k` patterns away (same sign).
uint32_t step(float f, int64_t k) { return uint32_t(int64_t(bits_of(f)) + k); }

// Bit patterns to check: a stride over all 2^32, every pattern near the places where
// erf_inv switches formulas or ends, and the special values.
std::vector<uint32_t> sweep_patterns() {
  std::vector<uint32_t> p;
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 1021) p.push_back(uint32_t(b));
  auto dense = [&](uint32_t from, uint32_t to) {  // both signs, [from, to]
    for (uint64_t b = from; b <= to; ++b) {
      p.push_back(uint32_t(b));
      p.push_back(uint32_t(b) | 0x80000000u);
    }
  };
  dense(0, 1 << 16);                                           // zero, smallest subnormals
  dense(0x007f0000u, 0x00810000u);                             // subnormal / normal edge
  dense(step(0.6435942529f, -(1 << 15)), step(0.6435942529f, 1 << 15));  // log1p's switch
  dense(0x3f7e0000u, 0x3f810000u);  // |x| -> 1: the w >= 5 range (|x| > 0.99663), 1, above 1
  dense(0x3f000000u - (1 << 12), 0x3f000000u + (1 << 12));   // around 0.5
  dense(0x7f7f0000u, 0x7f810000u);  // largest finite, inf, the first NaNs
  dense(0x7fbfff00u, 0x7fc00100u);  // signaling / quiet NaN edge
  dense(0x7fffff00u, 0x7fffffffu);  // the last NaNs
  return p;
}

// The w = 5 switch: the largest |x| with w < 5, found with the scalar function's own w.
TEST(ErfInvExact, SweepIncludesTheBranchSwitch) {
  uint32_t b = bits_of(0.99f);
  while (-vm::xla_detail::log1p_f32(float_of(b) * -float_of(b)) < 5.0f) ++b;
  EXPECT_GT(b, 0x3f7e0000u);
  EXPECT_LT(b, 0x3f810000u);  // inside sweep_patterns' dense range near 1
  EXPECT_NEAR(float_of(b), 0.99663, 1e-5);
}

// vm::erf_inv_block as compiled here (the same flags and header as the kernels).
TEST(ErfInvExact, BlockMatchesScalarBitForBit) {
  const std::vector<uint32_t> pats = sweep_patterns();
  std::vector<float> x(pats.size()), y(pats.size());
  for (size_t i = 0; i < pats.size(); ++i) x[i] = float_of(pats[i]);
  vm::erf_inv_block(x.data(), y.data(), int64_t(x.size()));
  int64_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = vm::erf_inv(x[i]);
    // NaN payloads are not specified (XLA's neither): any NaN matches any NaN.
    const bool ok = std::isnan(want) ? std::isnan(y[i]) : bits_of(y[i]) == bits_of(want);
    if (!ok && ++bad <= 10)
      ADD_FAILURE() << std::hex << "x bits 0x" << pats[i] << ": got 0x" << bits_of(y[i])
                    << " want 0x" << bits_of(want);
  }
  EXPECT_EQ(bad, 0) << "of " << x.size() << " inputs (" << vm::simd::kErfInvLanes << " lanes)";
}

// The eager kernel (threads, vector body, scalar remainder) on arrays of awkward lengths.
TEST(ErfInvExact, EagerKernelMatchesScalar) {
  const std::vector<uint32_t> pats = sweep_patterns();
  for (int64_t n : {int64_t(1), int64_t(15), int64_t(17), int64_t(4099), int64_t(100003)}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float_of(pats[size_t(i * 37) % pats.size()]);
    auto y = jx::lax::erf_inv(jnp::array<float>(x)).to_vector<float>();
    ASSERT_EQ(y.size(), x.size());
    int64_t bad = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = vm::erf_inv(x[i]);
      bad += std::isnan(want) ? !std::isnan(y[i]) : bits_of(y[i]) != bits_of(want);
    }
    EXPECT_EQ(bad, 0) << "n " << n;
  }
}

TEST(ErfInvExact, SpecialValues) {
  const float tiny = float_of(1);  // smallest subnormal
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, -NAN,
                          tiny, -tiny, std::nextafter(1.0f, 0.0f), std::nextafter(-1.0f, 0.0f),
                          std::nextafter(1.0f, 2.0f), 1e-20f, 0.5f, -0.25f};
  std::vector<float> y(x.size());
  vm::erf_inv_block(x.data(), y.data(), int64_t(x.size()));
  EXPECT_EQ(bits_of(y[0]), 0u);
  EXPECT_EQ(bits_of(y[1]), 0x80000000u);
  EXPECT_EQ(y[2], INFINITY);
  EXPECT_EQ(y[3], -INFINITY);
  for (int i : {4, 5, 6, 7, 12}) EXPECT_TRUE(std::isnan(y[size_t(i)])) << "x " << x[size_t(i)];
  // erf_inv(x) ~ sqrt(pi)/2 x near 0 (the tiny inputs keep their sign, no flush).
  EXPECT_GT(y[8], 0.0f);
  EXPECT_LT(y[9], 0.0f);
  EXPECT_NEAR(y[13], 0.886226925e-20, 1e-26);
  // Largest float below 1: erf_inv = 3.8325... (float64 erfinv(1 - 2^-24) = 3.8325063)
  EXPECT_NEAR(y[10], 3.8325063, 1e-4);
  EXPECT_NEAR(y[11], -3.8325063, 1e-4);
  EXPECT_NEAR(y[14], 0.476936276, 1e-6);   // erfinv(0.5), scipy.special.erfinv
  EXPECT_NEAR(y[15], -0.225312055, 1e-6);  // erfinv(-0.25)
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = vm::erf_inv(x[i]);
    if (!std::isnan(want)) {
      EXPECT_EQ(bits_of(y[i]), bits_of(want)) << "x " << x[i];
    }
  }
}

// 16-bit floats: every pattern is erf_inv in float32 rounded once (XLA's upcast).
TEST(ErfInvExact, HalfTypesEveryPattern) {
  for (jx::DType dt : {jx::float16, jx::bfloat16}) {
    std::vector<uint16_t> p(65536);
    for (size_t i = 0; i < p.size(); ++i) p[i] = uint16_t(i);
    Array h = jx::lax::bitcast_convert_type(jnp::array<uint16_t>(p), dt);
    Array got = jx::lax::bitcast_convert_type(jx::lax::erf_inv(h), jx::uint16);
    auto x32 = jx::lax::convert_element_type(h, jx::float32).to_vector<float>();
    std::vector<float> y32(x32.size());
    for (size_t i = 0; i < x32.size(); ++i) y32[i] = vm::erf_inv(x32[i]);
    Array want16 = jx::lax::convert_element_type(jnp::array<float>(y32), dt);
    auto g = got.to_vector<uint16_t>();
    auto w = jx::lax::bitcast_convert_type(want16, jx::uint16).to_vector<uint16_t>();
    auto isnan16 = [&](uint16_t b) {
      return dt == jx::float16 ? (b & 0x7c00) == 0x7c00 && (b & 0x3ff) : (b & 0x7f80) == 0x7f80 && (b & 0x7f);
    };
    int bad = 0;
    for (size_t i = 0; i < g.size(); ++i)
      bad += isnan16(w[i]) ? !isnan16(g[i]) : g[i] != w[i];
    EXPECT_EQ(bad, 0) << jx::dtype_name(dt);
  }
}

struct Mode {
  explicit Mode(bool partitionable) : s(jx::config::threefry_partitionable, partitionable) {}
  jx::config::Scoped s;
};

struct Composed {
  Composed() { jr::detail::force_composed = true; }
  ~Composed() { jr::detail::force_composed = false; }
};

// The fused normal kernel (concrete key, float32) against the primitives one by one:
// threefry bits -> uniform -> erf_inv -> times sqrt(2). Sizes straddle the vector width,
// the 1024-value pieces and the 16K-value thread chunks.
TEST(NormalFused, MatchesComposition) {
  for (bool part : {true, false}) {
    Mode m(part);
    for (int64_t n : {int64_t(1), int64_t(17), int64_t(1025), int64_t(16384 + 3), int64_t(40001)}) {
      for (int seed : {0, 7}) {
        Array key = jr::PRNGKey(seed);
        auto fast = jr::normal(key, {n}).to_vector<float>();
        std::vector<float> slow;
        {
          Composed c;
          slow = jr::normal(key, {n}).to_vector<float>();
        }
        ASSERT_EQ(fast.size(), slow.size());
        int64_t bad = 0;
        for (size_t i = 0; i < fast.size(); ++i) bad += bits_of(fast[i]) != bits_of(slow[i]);
        EXPECT_EQ(bad, 0) << "partitionable " << part << " n " << n << " seed " << seed;
      }
    }
  }
}

// Under jit the key is traced: the primitives one by one (erf_inv as a call of the eager
// kernel), which must give the fused kernel's bits. 4099 values: a vector remainder.
TEST(NormalFused, JitMatchesEager) {
  for (bool part : {true, false}) {
    Mode m(part);
    auto f = jx::jit([](const Array& key) { return jr::normal(key, {4099}); });
    Array key = jr::PRNGKey(11);
    auto traced = f(key).to_vector<float>();
    auto eager = jr::normal(key, {4099}).to_vector<float>();
    ASSERT_EQ(traced.size(), eager.size());
    int64_t bad = 0;
    for (size_t i = 0; i < eager.size(); ++i) bad += bits_of(traced[i]) != bits_of(eager[i]);
    EXPECT_EQ(bad, 0) << "partitionable " << part;
  }
}

TEST(NormalFused, ShapesAndEmpty) {
  Array key = jr::PRNGKey(3);
  Array z = jr::normal(key, {3, 0, 2});
  EXPECT_EQ(z.size(), 0);
  Array a = jr::normal(key, {4, 5});
  Array b = jr::normal(key, {20});
  EXPECT_EQ(a.shape(), jx::Shape({4, 5}));
  EXPECT_EQ(a.reshape({20}).to_vector<float>(), b.to_vector<float>());
  Array s = jr::normal(key);
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.item<float>(), b.to_vector<float>()[0]);
}

}  // namespace
