// PRNGKey / split / fold_in / bits: JAX's known answers (../shared/reference/
// prng_known_answers.md, sections B-D) and goldens from threefry_ref.py
// (tests/golden/gen_random.py), in both partitionable modes; fast paths vs the composition
// of primitives.
#include <gtest/gtest.h>

#include <cstdlib>
#include <tuple>

#include "jx/jx.h"
#include "random/internal.h"
#include "support/str.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
using jx::Array;

#include "golden/random_golden.inc"

namespace {

std::vector<uint32_t> u32v(const Array& a) { return a.to_vector<uint32_t>(); }

struct Mode {
  explicit Mode(bool partitionable) : s(jx::config::threefry_partitionable, partitionable) {}
  jx::config::Scoped s;
};

struct Composed {
  Composed() { jr::detail::force_composed = true; }
  ~Composed() { jr::detail::force_composed = false; }
};

TEST(PRNGKey, SeedTableDefaultMode) {
  // x32 column of test_prng_seeds_and_keys: C++ integers of every width behave as JAX's
  // Python ints and 32-bit NumPy ints do in the default mode.
  EXPECT_EQ(u32v(jr::PRNGKey(0)), (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(u32v(jr::PRNGKey(int32_t(1))), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(u32v(jr::PRNGKey(uint32_t(2))), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(u32v(jr::PRNGKey(int64_t(3))), (std::vector<uint32_t>{0, 3}));
  EXPECT_EQ(u32v(jr::PRNGKey(-1)), (std::vector<uint32_t>{0, 4294967295u}));
  EXPECT_EQ(u32v(jr::PRNGKey(int32_t(-2))), (std::vector<uint32_t>{0, 4294967294u}));
  EXPECT_EQ(u32v(jr::PRNGKey(int64_t(-3))), (std::vector<uint32_t>{0, 4294967293u}));
  EXPECT_EQ(u32v(jr::PRNGKey(int64_t(2147483747))), (std::vector<uint32_t>{0, 2147483747u}));
  EXPECT_EQ(u32v(jr::PRNGKey(uint32_t(2147483748u))), (std::vector<uint32_t>{0, 2147483748u}));
  EXPECT_EQ(u32v(jr::PRNGKey(int64_t(-2147483748))), (std::vector<uint32_t>{0, 2147483548u}));
  EXPECT_EQ(u32v(jr::PRNGKey(int64_t(-2147483749))), (std::vector<uint32_t>{0, 2147483547u}));
  Array k = jr::PRNGKey(42);
  EXPECT_EQ(k.dtype(), jx::uint32);
  EXPECT_EQ(k.shape(), (jx::Shape{2}));
  EXPECT_EQ(u32v(jr::key(7)), u32v(jr::PRNGKey(7)));
}

TEST(PRNGKey, SeedTable64BitArrays) {
  // x64 column: an explicit int64/uint64 array seed splits its 64 bits as [hi, lo].
  auto k64 = [](int64_t s) { return u32v(jr::PRNGKey(jnp::array<int64_t>({s}, jx::Shape{}))); };
  EXPECT_EQ(k64(0), (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(k64(3), (std::vector<uint32_t>{0, 3}));
  EXPECT_EQ(k64(-1), (std::vector<uint32_t>{4294967295u, 4294967295u}));
  EXPECT_EQ(k64(-3), (std::vector<uint32_t>{4294967295u, 4294967293u}));
  EXPECT_EQ(k64(2147483747), (std::vector<uint32_t>{0, 2147483747u}));
  EXPECT_EQ(k64(-2147483748), (std::vector<uint32_t>{4294967295u, 2147483548u}));
  EXPECT_EQ(k64(-2147483749), (std::vector<uint32_t>{4294967295u, 2147483547u}));
  EXPECT_EQ(k64(int64_t(0x123456789abcdef0)), (std::vector<uint32_t>{0x12345678u, 0x9abcdef0u}));
  EXPECT_EQ(u32v(jr::PRNGKey(jnp::array<uint64_t>({0xffffffff00000001ull}, jx::Shape{}))),
            (std::vector<uint32_t>{0xffffffffu, 1u}));
  // 32-bit and narrower arrays: hi word 0, lo word sign-extended.
  EXPECT_EQ(u32v(jr::PRNGKey(jnp::array<int8_t>({-2}, jx::Shape{}))),
            (std::vector<uint32_t>{0, 4294967294u}));
  EXPECT_EQ(u32v(jr::PRNGKey(jnp::array<uint16_t>({65535}, jx::Shape{}))),
            (std::vector<uint32_t>{0, 65535u}));
}

TEST(PRNGKey, Errors) {
  try {
    jr::PRNGKey(jnp::array<int32_t>({1, 2}));
    FAIL();
  } catch (const jx::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[PRNGKey] accepts a scalar seed"), std::string::npos);
  }
  try {
    jr::PRNGKey(Array(1.5));
    FAIL();
  } catch (const jx::DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[PRNGKey] the seed must be an integer, got f32[]"),
              std::string::npos)
        << e.what();
  }
}

TEST(Split, Goldens) {
  for (const auto& g : kSplitGolden) {
    Mode m(g.partitionable);
    Array ks = jr::split(jr::PRNGKey(g.seed), g.n);
    EXPECT_EQ(ks.shape(), (jx::Shape{g.n, 2}));
    EXPECT_EQ(u32v(ks), g.keys) << "seed " << g.seed << " n " << g.n << " part " << g.partitionable;
    Composed c;
    EXPECT_EQ(u32v(jr::split(jr::PRNGKey(g.seed), g.n)), g.keys) << "composed seed " << g.seed;
  }
}

TEST(Split, StructuredBindingAndStdTie) {
  // Both spellings of `key, subkey = random.split(key)` give split(key, 2)'s rows.
  Array key = jr::PRNGKey(7);
  const auto want = u32v(jr::split(key, 2));
  auto [k1, k2] = jr::split<2>(key);
  EXPECT_EQ(u32v(k1), (std::vector<uint32_t>{want[0], want[1]}));
  EXPECT_EQ(u32v(k2), (std::vector<uint32_t>{want[2], want[3]}));
  Array subkey;
  std::tie(key, subkey) = jr::split<2>(key);
  EXPECT_EQ(u32v(key), (std::vector<uint32_t>{want[0], want[1]}));
  EXPECT_EQ(u32v(subkey), (std::vector<uint32_t>{want[2], want[3]}));
  auto ks = jr::split<3>(key);
  EXPECT_EQ(ks.size(), 3u);
}

TEST(Samplers, EveryShapeArgumentTakesABraceList) {
  Array key = jr::PRNGKey(0);
  EXPECT_EQ(jr::normal(key, {4, 3}).shape(), (jx::Shape{4, 3}));
  EXPECT_EQ(jr::bernoulli(key, 0.5, {64, 128}).shape(), (jx::Shape{64, 128}));
  EXPECT_EQ(jr::truncated_normal(key, -1.0, 1.0, {2, 5}).shape(), (jx::Shape{2, 5}));
  EXPECT_EQ(jr::gamma(key, 2.0, {3}).shape(), (jx::Shape{3}));
  EXPECT_EQ(jr::poisson(key, 3.0, {3, 2}).shape(), (jx::Shape{3, 2}));
  EXPECT_EQ(jr::beta(key, 2.0, 3.0, {6}).shape(), (jx::Shape{6}));
  EXPECT_EQ(jr::categorical(key, jnp::zeros({5}), -1, {7}).shape(), (jx::Shape{7}));
  // {} and jx::none mean "no shape": the parameters' shape.
  EXPECT_EQ(jr::bernoulli(key, jnp::full({3}, 0.5), {}).shape(), (jx::Shape{3}));
  EXPECT_EQ(jr::bernoulli(key, jnp::full({3}, 0.5), jx::none).shape(), (jx::Shape{3}));
  // The same draws as with an explicit Shape.
  EXPECT_EQ(jr::bernoulli(key, 0.3, {8}).astype(jx::int32).to_vector<int32_t>(),
            jr::bernoulli(key, 0.3, jx::Shape{8}).astype(jx::int32).to_vector<int32_t>());
}

TEST(Split, LegacyKnownAnswer) {
  // testPRNGValues (partitionable=False): key_data(split(key(0), 4)).
  Mode m(false);
  EXPECT_EQ(u32v(jr::split(jr::PRNGKey(0), 4)),
            (std::vector<uint32_t>{2285895361u, 1501764800u, 1518642379u, 4090693311u, 433833334u,
                                   4221794875u, 839183663u, 3740430601u}));
}

TEST(Split, PartitionableEqualsFoldIn) {
  Array key = jr::PRNGKey(1234);
  Array ks = jr::split(key, 9);
  auto v = u32v(ks);
  for (int i = 0; i < 9; ++i) {
    auto f = u32v(jr::fold_in(key, i));
    EXPECT_EQ(v[size_t(2 * i)], f[0]) << i;
    EXPECT_EQ(v[size_t(2 * i + 1)], f[1]) << i;
  }
}

TEST(Split, ShapesAndStructuredBindings) {
  for (bool part : {true, false}) {
    Mode m(part);
    Array key = jr::PRNGKey(3);
    Array ks = jr::split(key, jx::Shape{2, 3});
    EXPECT_EQ(ks.shape(), (jx::Shape{2, 3, 2}));
    EXPECT_EQ(u32v(ks), u32v(jr::split(key, 6)));
    {
      Composed c;
      EXPECT_EQ(u32v(jr::split(key, jx::Shape{2, 3})), u32v(ks));
    }
    auto [k1, k2] = jr::split<2>(key);
    auto both = u32v(jr::split(key));
    EXPECT_EQ(u32v(k1), (std::vector<uint32_t>{both[0], both[1]}));
    EXPECT_EQ(u32v(k2), (std::vector<uint32_t>{both[2], both[3]}));
    auto three = jr::split<3>(key);
    EXPECT_EQ(u32v(three[2]), (std::vector<uint32_t>{u32v(jr::split(key, 3))[4],
                                                     u32v(jr::split(key, 3))[5]}));
    EXPECT_EQ(jr::split(key, 0).shape(), (jx::Shape{0, 2}));
  }
}

TEST(FoldIn, GoldensAndKnownAnswer) {
  EXPECT_EQ(u32v(jr::fold_in(jr::PRNGKey(0), 4)), (std::vector<uint32_t>{2285895361u, 433833334u}));
  for (const auto& g : kFoldGolden) {
    for (bool part : {true, false}) {  // flag-independent
      Mode m(part);
      EXPECT_EQ(u32v(jr::fold_in(jr::PRNGKey(g.seed), g.data)), (std::vector<uint32_t>{g.k0, g.k1}));
      EXPECT_EQ(u32v(jr::fold_in(jr::PRNGKey(g.seed), jnp::array<uint32_t>({g.data}, jx::Shape{}))),
                (std::vector<uint32_t>{g.k0, g.k1}));
    }
  }
  // Negative data wraps to uint32, as jnp.asarray(-1, dtype='uint32').
  EXPECT_EQ(u32v(jr::fold_in(jr::PRNGKey(7), -1)), u32v(jr::fold_in(jr::PRNGKey(7), 4294967295u)));
}

TEST(Bits, Goldens) {
  for (const auto& g : kBitsGolden) {
    Mode m(g.partitionable);
    jx::DType dt = g.width == 8 ? jx::uint8 : g.width == 16 ? jx::uint16
                                        : g.width == 32 ? jx::uint32 : jx::uint64;
    for (bool composed : {false, true}) {
      if (composed) jr::detail::force_composed = true;
      Array b = jr::bits(jr::PRNGKey(g.seed), {g.n}, dt);
      jr::detail::force_composed = false;
      EXPECT_EQ(b.dtype(), dt);
      EXPECT_EQ(b.shape(), (jx::Shape{g.n}));
      EXPECT_EQ(b.to_vector<uint64_t>(), g.v) << "seed " << g.seed << " width " << g.width << " n "
                                              << g.n << " part " << g.partitionable
                                              << " composed " << composed;
    }
  }
}

TEST(Bits, LegacyKnownAnswers) {
  // testRngRandomBits and testRandomDistributionValues (partitionable=False).
  Mode m(false);
  Array k = jr::PRNGKey(1701);
  EXPECT_EQ(jr::bits(k, {3}, jx::uint8).to_vector<uint64_t>(), (std::vector<uint64_t>{216, 115, 43}));
  EXPECT_EQ(jr::bits(k, {3}, jx::uint16).to_vector<uint64_t>(),
            (std::vector<uint64_t>{41682, 1300, 55017}));
  EXPECT_EQ(jr::bits(k, {3}, jx::uint32).to_vector<uint64_t>(),
            (std::vector<uint64_t>{56197195, 4200222568u, 961309823}));
  EXPECT_EQ(jr::bits(k, {3}, jx::uint64).to_vector<uint64_t>(),
            (std::vector<uint64_t>{3982329540505020460ull, 16822122385914693683ull,
                                   7882654074788531506ull}));
  Array k2 = jr::PRNGKey(942802475);
  EXPECT_EQ(jr::bits(k2, {5}, jx::uint8).to_vector<uint64_t>(),
            (std::vector<uint64_t>{10, 158, 82, 54, 158}));
  EXPECT_EQ(jr::bits(k2, {5}, jx::uint16).to_vector<uint64_t>(),
            (std::vector<uint64_t>{6738, 38161, 50695, 57337, 61600}));
  EXPECT_EQ(jr::bits(k2, {5}).to_vector<uint64_t>(),
            (std::vector<uint64_t>{1978747883, 4134381225u, 3628107870u, 689687174, 2788938207u}));
  EXPECT_EQ(jr::bits(k2, {5}, jx::uint64).to_vector<uint64_t>(),
            (std::vector<uint64_t>{17649965731882839947ull, 1415307058040849897ull,
                                   8282622628079774249ull, 14024425113645909402ull,
                                   2012979996110532418ull}));
  // testRngRandomBitsViewProperty: the 8/16/32-bit streams are views of one another.
  auto w8 = jr::bits(k, {80}, jx::uint8).to_vector<uint8_t>();
  auto w32 = jr::bits(k, {20}, jx::uint32).to_vector<uint32_t>();
  for (size_t i = 0; i < 20; ++i) {
    uint32_t v = uint32_t(w8[4 * i]) | uint32_t(w8[4 * i + 1]) << 8 | uint32_t(w8[4 * i + 2]) << 16 |
                 uint32_t(w8[4 * i + 3]) << 24;
    EXPECT_EQ(v, w32[i]) << i;
  }
}

TEST(Bits, ShapesFastVsComposed) {
  const std::vector<jx::Shape> shapes = {{}, {0}, {1}, {3, 0}, {7}, {2, 3, 5}, {301, 409}};
  for (bool part : {true, false}) {
    Mode m(part);
    for (const auto& s : shapes) {
      for (jx::DType dt : {jx::uint8, jx::uint16, jx::uint32, jx::uint64}) {
        Array key = jr::PRNGKey(99);
        Array fast = jr::bits(key, s, dt);
        Composed c;
        Array slow = jr::bits(key, s, dt);
        EXPECT_EQ(fast.shape(), s);
        EXPECT_EQ(fast.to_vector<uint64_t>(), slow.to_vector<uint64_t>())
            << jx::type_str(dt, s) << " part " << part;
      }
    }
  }
}

TEST(Bits, ElementsDependOnlyOnTheirIndexWhenPartitionable) {
  Array key = jr::PRNGKey(5);
  auto a = jr::bits(key, {10}).to_vector<uint32_t>();
  auto b = jr::bits(key, {2, 10}).to_vector<uint32_t>();
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(a[i], b[i]);
}

TEST(Bits, Errors) {
  Array key = jr::PRNGKey(0);
  try {
    jr::bits(key, {3}, jx::int32);
    FAIL();
  } catch (const jx::DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[bits] dtype argument must be an unsigned int dtype, got int32"),
              std::string::npos)
        << e.what();
  }
  try {
    jr::bits(key, {2, -1});
    FAIL();
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[bits] shape (2, -1) has a negative dimension"),
              std::string::npos)
        << e.what();
  }
  try {
    jr::bits(jnp::array<int32_t>({0, 0}), {3});
    FAIL();
  } catch (const jx::DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[bits] expects a PRNG key, a uint32[2] array"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("i32[2]"), std::string::npos) << e.what();
  }
  try {
    jr::split(jnp::array<uint32_t>({1, 2, 3}), 2);
    FAIL();
  } catch (const jx::DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[split] expects a PRNG key"), std::string::npos);
  }
  try {
    jr::split(jr::split(key, 4), 2);
    FAIL();
  } catch (const jx::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[split] accepts a single key, but was given a key array "
                                         "of shape (4, 2)"),
              std::string::npos)
        << e.what();
  }
  try {
    jr::split(key, -2);
    FAIL();
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[split] num must be >= 0"), std::string::npos);
  }
  try {
    jr::fold_in(key, jnp::array<int32_t>({1, 2}));
    FAIL();
  } catch (const jx::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[fold_in] accepts a scalar"), std::string::npos);
  }
  try {
    jr::fold_in(Array(), 1);
    FAIL();
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[fold_in] the key is an empty jx::Array"),
              std::string::npos);
  }
}

TEST(Config, ThreefryPartitionableFlag) {
  auto& f = jx::config::threefry_partitionable;
  EXPECT_STREQ(f.env_var(), "JX_THREEFRY_PARTITIONABLE");
  const bool before = f.value();
  EXPECT_TRUE(before);  // JAX's default since 0.5.0 (the test runs without the env var)
  {
    jx::config::Scoped s(f, false);
    EXPECT_FALSE(f.value());
    {
      jx::config::Scoped t(f, true);
      EXPECT_TRUE(f.value());
    }
    EXPECT_FALSE(f.value());
  }
  EXPECT_TRUE(f.value());
  f.set(false);
  EXPECT_FALSE(f.value());
  EXPECT_EQ(u32v(jr::split(jr::PRNGKey(0), 4))[0], 2285895361u);  // legacy stream
  f.set(true);
  EXPECT_EQ(u32v(jr::split(jr::PRNGKey(0), 4))[0], 1797259609u);
}

}  // namespace
