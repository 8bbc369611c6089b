// The threefry2x32 primitive and its kernels: Random123 known answers (from JAX's tests,
// ../shared/reference/prng_known_answers.md section A) and fast vs naive reference kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "backend/cpu/threefry.h"
#include "core/array_impl.h"
#include "jx/jx.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
using jx::Array;

namespace {

Array u32s(std::vector<uint32_t> v, jx::Shape s) { return jnp::array<uint32_t>(v, s); }
Array u32(uint32_t v) { return jnp::array<uint32_t>({v}, jx::Shape{}); }

struct Kat {
  uint32_t k0, k1, x0, x1, y0, y1;
};
const Kat kKats[] = {
    {0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x6B200159u, 0x99BA4EFEu},
    {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0x1CB996FCu, 0xBB002BE7u},
    {0x13198A2Eu, 0x03707344u, 0x243F6A88u, 0x85A308D3u, 0xC4923A9Cu, 0x483DF7A0u},
};

TEST(Threefry, Random123KnownAnswersThroughThePrimitive) {
  for (const Kat& k : kKats) {
    auto [y0, y1] = jr::threefry2x32(u32(k.k0), u32(k.k1), u32(k.x0), u32(k.x1));
    EXPECT_EQ(y0.dtype(), jx::uint32);
    EXPECT_EQ(y0.ndim(), 0);
    EXPECT_EQ(y0.item<uint32_t>(), k.y0);
    EXPECT_EQ(y1.item<uint32_t>(), k.y1);
  }
}

TEST(Threefry, WrapperSplitsTheCountInHalves) {
  // JAX's testThreefry2x32: threefry_2x32(key, uint32[c0, c1]) == [y0, y1].
  for (const Kat& k : kKats) {
    Array out = jr::threefry_2x32(u32s({k.k0, k.k1}, {2}), u32s({k.x0, k.x1}, {2}));
    EXPECT_EQ(out.to_vector<uint32_t>(), (std::vector<uint32_t>{k.y0, k.y1}));
  }
}

TEST(Threefry, LargeCountAllEqual) {
  // testThreefry2x32Large, n = 10,000,000.
  const int64_t n = 10'000'000;
  Array count = jx::detail::empty_array({2 * n}, jx::uint32);
  uint32_t* c = jx::detail::data<uint32_t>(count);
  std::fill(c, c + n, 0x243f6a88u);
  std::fill(c + n, c + 2 * n, 0x85a308d3u);
  Array out = jr::threefry_2x32(u32s({0x13198a2eu, 0x03707344u}, {2}), count);
  const uint32_t* v = static_cast<const uint32_t*>(jx::detail::raw_data(out));
  EXPECT_EQ(std::count(v, v + n, 0xc4923a9cu), n);
  EXPECT_EQ(std::count(v + n, v + 2 * n, 0x483df7a0u), n);
}

TEST(Threefry, EmptyCount) {
  Array out = jr::threefry_2x32(u32s({1, 2}, {2}), u32s({}, {10, 0}));
  EXPECT_EQ(out.shape(), (jx::Shape{10, 0}));
  auto [y0, y1] = jr::threefry2x32(u32s({1}, {1}), u32s({2}, {1}), u32s({}, {0}), u32s({}, {0}));
  EXPECT_EQ(y0.shape(), (jx::Shape{0}));
}

TEST(Threefry, OddCountIsPaddedWithZero) {
  // count [a, b, c] -> pairs (a, c), (b, 0); outputs [y0(a,c), y0(b,0), y1(a,c)].
  Array key = u32s({7, 9}, {2});
  Array out = jr::threefry_2x32(key, u32s({3, 4, 5}, {3}));
  auto [p0, p1] = jr::threefry2x32(u32(7), u32(9), u32(3), u32(5));
  auto [q0, q1] = jr::threefry2x32(u32(7), u32(9), u32(4), u32(0));
  EXPECT_EQ(out.to_vector<uint32_t>(),
            (std::vector<uint32_t>{p0.item<uint32_t>(), q0.item<uint32_t>(), p1.item<uint32_t>()}));
}

TEST(Threefry, Errors) {
  try {
    jr::threefry2x32(u32(1), u32(2), jnp::array<int32_t>({1}, jx::Shape{}), u32(4));
    FAIL();
  } catch (const jx::DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[threefry2x32] operands must be uint32"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("i32[]"), std::string::npos) << e.what();
  }
  try {
    jr::threefry2x32(u32s({1, 2}, {2}), u32(2), u32s({1, 2, 3}, {3}), u32(4));
    FAIL();
  } catch (const jx::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[threefry2x32]"), std::string::npos) << e.what();
  }
}

// ---- fast kernels vs naive references ----

std::vector<uint32_t> rand_u32(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<uint32_t> v(n);
  for (auto& x : v) x = g();
  return v;
}

TEST(ThreefryKernel, MatchesReferenceOverShapes) {
  using S = std::vector<int64_t>;
  struct Case {
    S out, k0, k1, x0, x1;
  };
  const Case cases[] = {
      {{}, {}, {}, {}, {}},
      {{0}, {1}, {1}, {0}, {0}},
      {{7}, {1}, {1}, {7}, {7}},
      {{7}, {7}, {7}, {7}, {1}},
      {{3, 5}, {3, 1}, {3, 1}, {1, 5}, {3, 5}},
      {{2, 3, 4}, {2, 1, 1}, {1, 3, 1}, {2, 3, 4}, {1, 1, 4}},
      {{131, 1001}, {1, 1}, {1, 1}, {131, 1001}, {131, 1001}},   // > 100k: threaded
      {{300001}, {1}, {1}, {300001}, {1}},                        // one long row, threaded
      {{257, 999}, {257, 1}, {257, 1}, {1, 999}, {257, 999}},    // batched keys, threaded
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    auto numel = [](const S& s) {
      int64_t n = 1;
      for (auto d : s) n *= d;
      return size_t(n);
    };
    auto k0 = rand_u32(numel(c.k0), seed++), k1 = rand_u32(numel(c.k1), seed++);
    auto x0 = rand_u32(numel(c.x0), seed++), x1 = rand_u32(numel(c.x1), seed++);
    const size_t n = numel(c.out);
    std::vector<uint32_t> a0(n), a1(n), b0(n), b1(n);
    const int nd = int(c.out.size());
    jx::cpu::threefry2x32(k0.data(), c.k0.data(), k1.data(), c.k1.data(), x0.data(), c.x0.data(),
                          x1.data(), c.x1.data(), a0.data(), a1.data(), c.out.data(), nd);
    jx::cpu::threefry2x32_reference(k0.data(), c.k0.data(), k1.data(), c.k1.data(), x0.data(),
                                    c.x0.data(), x1.data(), c.x1.data(), b0.data(), b1.data(),
                                    c.out.data(), nd);
    EXPECT_EQ(a0, b0) << "case with " << n << " elements";
    EXPECT_EQ(a1, b1) << "case with " << n << " elements";
  }
}

template <class T>
void compare_bits(bool partitionable, int64_t n, uint32_t k0, uint32_t k1) {
  const int w = int(sizeof(T) * 8);
  std::vector<T> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  if (partitionable) {
    jx::cpu::threefry_bits_partitionable(k0, k1, n, w, a.data());
    jx::cpu::threefry_bits_partitionable_reference(k0, k1, n, w, b.data());
  } else {
    jx::cpu::threefry_bits_legacy(k0, k1, n, w, a.data());
    jx::cpu::threefry_bits_legacy_reference(k0, k1, n, w, b.data());
  }
  EXPECT_EQ(a, b) << "width " << w << " n " << n << " partitionable " << partitionable;
}

TEST(ThreefryKernel, FusedBitsMatchReference) {
  for (bool part : {true, false}) {
    for (int64_t n : {0, 1, 2, 3, 17, 1000, 16385, 200003}) {
      compare_bits<uint8_t>(part, n, 3, 99);
      compare_bits<uint16_t>(part, n, 0xdeadbeef, 1);
      compare_bits<uint32_t>(part, n, 0, 42);
      compare_bits<uint64_t>(part, n, 0xffffffffu, 0x12345678u);
    }
  }
}

}  // namespace
