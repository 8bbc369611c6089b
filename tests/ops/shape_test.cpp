// Shape primitives: fast kernels against their naive references over element sizes and
// shapes (scalars, size 0, odd sizes, arrays large enough for the threaded paths), and the
// primitives' semantics and errors on hand-derived cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "backend/cpu/shape.h"
#include "jx/lax.h"
#include "jx/numpy.h"

namespace {

using jx::Array;
using jx::DType;
using jx::Shape;
namespace lax = jx::lax;
namespace jnp = jx::numpy;

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n + 1);  // never empty, so data() is valid
  for (auto& b : v) b = uint8_t(rng());
  return v;
}

int64_t numel(const std::vector<int64_t>& s) {
  return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<int64_t>());
}

const size_t kItemsizes[] = {1, 2, 4, 8};

const std::vector<std::vector<int64_t>> kShapes = {
    {}, {0}, {1}, {7}, {3, 0, 2}, {1, 7}, {13, 17}, {2, 3, 4, 5}, {1, 1, 1}, {5, 1, 3, 1},
    {600, 300},       // 180k elements: threaded and tiled
    {3, 257, 131},    // odd sizes, threaded
    {40, 24},         // register blocks of each size (16, 8, 4) and the elements left over
    {256, 128},       // powers of two, several tiles per thread
};

TEST(ShapeKernels, TransposeMatchesReferenceForAllPermutations) {
  for (size_t is : kItemsizes) {
    for (const auto& s : kShapes) {
      const int nd = int(s.size());
      std::vector<int64_t> perm(static_cast<size_t>(nd));
      std::iota(perm.begin(), perm.end(), 0);
      const size_t bytes = size_t(numel(s)) * is;
      auto src = random_bytes(bytes, uint32_t(bytes + is));
      do {
        std::vector<uint8_t> fast(bytes + 1, 0), ref(bytes + 1, 0);
        jx::cpu::transpose(is, src.data(), s.data(), perm.data(), fast.data(), nd);
        jx::cpu::transpose_reference(is, src.data(), s.data(), perm.data(), ref.data(), nd);
        ASSERT_EQ(fast, ref) << "itemsize " << is << " shape " << jx::shape_str(Shape(s))
                             << " perm " << jx::shape_str(Shape(perm));
      } while (std::next_permutation(perm.begin(), perm.end()));
    }
  }
}

TEST(ShapeKernels, TransposeLarge4dThreaded) {
  std::vector<int64_t> s{16, 24, 20, 30};  // 230k elements
  const size_t is = 4, bytes = size_t(numel(s)) * is;
  auto src = random_bytes(bytes, 7);
  std::vector<std::vector<int64_t>> perms = {{3, 2, 1, 0}, {0, 3, 1, 2}, {2, 0, 3, 1}, {1, 0, 2, 3}};
  for (const auto& perm : perms) {
    std::vector<uint8_t> fast(bytes + 1, 0), ref(bytes + 1, 0);
    jx::cpu::transpose(is, src.data(), s.data(), perm.data(), fast.data(), 4);
    jx::cpu::transpose_reference(is, src.data(), s.data(), perm.data(), ref.data(), 4);
    ASSERT_EQ(fast, ref) << jx::shape_str(Shape(perm));
  }
}

TEST(ShapeKernels, RevMatchesReferenceForAllDimSubsets) {
  for (size_t is : kItemsizes) {
    for (const auto& s : kShapes) {
      const int nd = int(s.size());
      const size_t bytes = size_t(numel(s)) * is;
      auto src = random_bytes(bytes, uint32_t(bytes * 3 + is));
      for (int mask = 0; mask < (1 << nd); ++mask) {
        bool rev[8] = {};
        for (int d = 0; d < nd; ++d) rev[d] = (mask >> d) & 1;
        std::vector<uint8_t> fast(bytes + 1, 0), ref(bytes + 1, 0);
        jx::cpu::rev(is, src.data(), s.data(), rev, fast.data(), nd);
        jx::cpu::rev_reference(is, src.data(), s.data(), rev, ref.data(), nd);
        ASSERT_EQ(fast, ref) << "itemsize " << is << " shape " << jx::shape_str(Shape(s))
                             << " mask " << mask;
      }
    }
  }
}

TEST(ShapeKernels, ConcatenateMatchesReference) {
  struct Case {
    int64_t outer, inner;
    std::vector<int64_t> sizes;
  };
  const Case cases[] = {
      {1, 1, {3, 4}},         {2, 3, {0, 2, 0, 1}}, {5, 7, {1}},          {4, 1, {0, 0}},
      {0, 3, {2, 2}},         {3, 5, {2, 0, 4, 1}}, {1, 200000, {1, 1}},  // one long row: split
      {300, 200, {2, 1, 3}},  // many rows: threaded
      {7, 1, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}},
  };
  for (size_t is : kItemsizes) {
    for (const auto& c : cases) {
      std::vector<std::vector<uint8_t>> parts;
      std::vector<const void*> ptrs;
      int64_t total = 0;
      for (size_t i = 0; i < c.sizes.size(); ++i) {
        parts.push_back(random_bytes(size_t(c.outer * c.sizes[i] * c.inner) * is, uint32_t(i + is)));
        total += c.sizes[i];
      }
      for (auto& p : parts) ptrs.push_back(p.data());
      const size_t bytes = size_t(c.outer * total * c.inner) * is;
      std::vector<uint8_t> fast(bytes + 1, 0), ref(bytes + 1, 0);
      jx::cpu::concatenate(is, ptrs.data(), c.sizes.data(), int(ptrs.size()), c.outer, c.inner,
                           fast.data());
      jx::cpu::concatenate_reference(is, ptrs.data(), c.sizes.data(), int(ptrs.size()), c.outer,
                                     c.inner, ref.data());
      ASSERT_EQ(fast, ref) << "itemsize " << is << " outer " << c.outer << " inner " << c.inner;
    }
  }
}

TEST(ShapeKernels, PadMatchesReference) {
  std::mt19937 rng(11);
  for (size_t is : kItemsizes) {
    for (const auto& s : kShapes) {
      const int nd = int(s.size());
      const size_t bytes = size_t(numel(s)) * is;
      auto src = random_bytes(bytes, uint32_t(bytes + 5 * is));
      auto value = random_bytes(is, 99);
      const bool large = numel(s) > 100000;
      for (int trial = 0; trial < (large ? 3 : 40); ++trial) {
        std::vector<int64_t> lo(static_cast<size_t>(nd)), hi(lo), in(lo), out(lo);
        bool ok = true;
        for (int d = 0; d < nd; ++d) {
          in[size_t(d)] = large ? int64_t(rng() % 2) : int64_t(rng() % 3);
          lo[size_t(d)] = int64_t(rng() % 7) - 3;
          hi[size_t(d)] = int64_t(rng() % 7) - 3;
          const int64_t x = s[size_t(d)];
          const int64_t dil = x == 0 ? 0 : x + (x - 1) * in[size_t(d)];
          out[size_t(d)] = lo[size_t(d)] + hi[size_t(d)] + dil;
          if (out[size_t(d)] < 0) ok = false;
        }
        if (!ok) continue;
        const size_t obytes = size_t(numel(out)) * is;
        std::vector<uint8_t> fast(obytes + 1, 0), ref(obytes + 1, 0);
        jx::cpu::pad(is, src.data(), s.data(), value.data(), lo.data(), in.data(), fast.data(),
                     out.data(), nd);
        jx::cpu::pad_reference(is, src.data(), s.data(), value.data(), lo.data(), in.data(),
                               ref.data(), out.data(), nd);
        ASSERT_EQ(fast, ref) << "itemsize " << is << " shape " << jx::shape_str(Shape(s))
                             << " lo " << jx::shape_str(Shape(lo)) << " hi "
                             << jx::shape_str(Shape(hi)) << " interior "
                             << jx::shape_str(Shape(in));
      }
    }
  }
}

TEST(ShapeKernels, IotaMatchesReference) {
  const DType dtypes[] = {DType::Int8,   DType::Int16,   DType::Int32,    DType::Int64,
                          DType::UInt8,  DType::UInt16,  DType::UInt32,   DType::UInt64,
                          DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
  for (DType t : dtypes) {
    for (const auto& s : kShapes) {
      const int nd = int(s.size());
      const size_t bytes = size_t(numel(s)) * jx::itemsize(t);
      for (int d = 0; d < nd; ++d) {
        std::vector<uint8_t> fast(bytes + 1, 0), ref(bytes + 1, 0);
        jx::cpu::iota(t, fast.data(), s.data(), nd, d);
        jx::cpu::iota_reference(t, ref.data(), s.data(), nd, d);
        ASSERT_EQ(fast, ref) << jx::dtype_name(t) << " shape " << jx::shape_str(Shape(s))
                             << " dim " << d;
      }
    }
  }
}

// ---- primitives through lax (hand-derived values) ----

Array f32(std::vector<float> v, Shape s) { return jnp::array(v, s); }
Array i32(std::vector<int32_t> v, Shape s) { return jnp::array(v, s); }

TEST(ShapePrimitives, Transpose) {
  Array x = i32({0, 1, 2, 3, 4, 5}, {2, 3});
  Array t = lax::transpose(x, {1, 0});
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  // 4-d: element [a,b,c,d] of x moves to t[d,a,c,b] for perm (3,0,2,1).
  std::vector<int32_t> v(120);
  std::iota(v.begin(), v.end(), 0);
  Array y = lax::transpose(i32(v, {2, 3, 4, 5}), {3, 0, 2, 1});
  ASSERT_EQ(y.shape(), (Shape{5, 2, 4, 3}));
  auto out = y.to_vector<int32_t>();
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 5; ++d)
          ASSERT_EQ(out[size_t(((d * 2 + a) * 4 + c) * 3 + b)], ((a * 3 + b) * 4 + c) * 5 + d);
  // weak type is kept
  Array w = lax::broadcast_in_dim(Array(2.5), {2, 3}, {});
  EXPECT_TRUE(lax::transpose(w, {1, 0}).weak_type());
}

TEST(ShapePrimitives, TransposeErrors) {
  Array x = jnp::zeros({2, 3});
  try {
    lax::transpose(x, {0, 0});
    FAIL() << "expected IndexError";
  } catch (const jx::IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("[transpose] permutation (0, 0) is not a permutation"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("f32[2,3]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(lax::transpose(x, {0, 1, 2}), jx::IndexError);
}

TEST(ShapePrimitives, SqueezeAndExpandDims) {
  Array x = f32({1, 2, 3}, {1, 3, 1});
  EXPECT_EQ(lax::squeeze(x, {0, 2}).shape(), (Shape{3}));
  EXPECT_EQ(lax::squeeze(x, {-1}).shape(), (Shape{1, 3}));
  EXPECT_EQ(lax::squeeze(x, {0}).to_vector<float>(), (std::vector<float>{1, 2, 3}));
  try {
    lax::squeeze(x, {1});
    FAIL() << "expected ShapeError";
  } catch (const jx::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[squeeze] cannot squeeze dimension 1 of f32[1,3,1]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(lax::squeeze(x, {3}), jx::IndexError);
  Array e = lax::expand_dims(f32({1, 2}, {2}), {0, -1});
  EXPECT_EQ(e.shape(), (Shape{1, 2, 1}));
  EXPECT_EQ(e.to_vector<float>(), (std::vector<float>{1, 2}));
}

TEST(ShapePrimitives, Rev) {
  Array x = i32({0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_EQ(lax::rev(x, {1}).to_vector<int32_t>(), (std::vector<int32_t>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(lax::rev(x, {0}).to_vector<int32_t>(), (std::vector<int32_t>{3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(lax::rev(x, {0, 1}).to_vector<int32_t>(), (std::vector<int32_t>{5, 4, 3, 2, 1, 0}));
  EXPECT_THROW(lax::rev(x, {2}), jx::IndexError);
  EXPECT_THROW(lax::rev(x, {1, 1}), jx::IndexError);
}

TEST(ShapePrimitives, ConcatenateWithEmptyParts) {
  Array a = i32({1, 2, 3, 4}, {2, 2});
  Array z = i32({}, {2, 0});
  Array b = i32({5, 6}, {2, 1});
  Array c = lax::concatenate({z, a, z, b}, 1);
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(c.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 5, 3, 4, 6}));
  Array r = lax::concatenate({a, i32({}, {0, 2}), i32({7, 8}, {1, 2})}, 0);
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(r.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 7, 8}));
  EXPECT_EQ(lax::concatenate({z, z}, 1).shape(), (Shape{2, 0}));
}

TEST(ShapePrimitives, ConcatenateErrors) {
  Array a = jnp::zeros({2, 3});
  try {
    lax::concatenate({a, jnp::zeros({3, 3})}, 1);
    FAIL() << "expected ShapeError";
  } catch (const jx::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[concatenate] operand shapes may differ only along "
                                         "dimension 1, got f32[2,3], f32[3,3]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(lax::concatenate({a, jnp::zeros({2, 3}, DType::Int32)}, 0), jx::DTypeError);
  EXPECT_THROW(lax::concatenate({a, jnp::zeros({6})}, 0), jx::ShapeError);
  EXPECT_THROW(lax::concatenate({a, a}, 2), jx::IndexError);
  EXPECT_THROW(lax::concatenate({}, 0), jx::ValueError);
}

TEST(ShapePrimitives, PadNegativeAndInterior) {
  Array x = f32({1, 2, 3}, {3});
  Array z = jnp::scalar(0, DType::Float32);
  // interior 1: [1 0 2 0 3]; lo 1, hi 2 around it
  EXPECT_EQ(lax::pad(x, z, {{1, 2, 1}}).to_vector<float>(),
            (std::vector<float>{0, 1, 0, 2, 0, 3, 0, 0}));
  // negative lo/hi crop the dilated operand: [1 0 2 0 3] -> [0 2 0]
  EXPECT_EQ(lax::pad(x, z, {{-1, -1, 1}}).to_vector<float>(), (std::vector<float>{0, 2, 0}));
  EXPECT_EQ(lax::pad(x, z, {{-3, 0, 0}}).shape(), (Shape{0}));
  // 2-d: [[1,2],[3,4]] with rows (lo 1, interior 1) and cols (hi -1)
  Array y = f32({1, 2, 3, 4}, {2, 2});
  Array p = lax::pad(y, jnp::scalar(9, DType::Float32), {{1, 0, 1}, {0, -1, 0}});
  EXPECT_EQ(p.shape(), (Shape{4, 1}));
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{9, 1, 9, 3}));
  // size-0 operand: all padding
  Array e = lax::pad(f32({}, {0}), jnp::scalar(5, DType::Float32), {{2, 1, 3}});
  EXPECT_EQ(e.to_vector<float>(), (std::vector<float>{5, 5, 5}));
  // scalar operand
  EXPECT_EQ(lax::pad(Array(3.5f), Array(0.0f), {}).item<float>(), 3.5f);
}

TEST(ShapePrimitives, PadErrors) {
  Array x = jnp::zeros({3});
  EXPECT_THROW(lax::pad(x, jnp::scalar(0, DType::Int32), {{1, 1, 0}}), jx::DTypeError);
  EXPECT_THROW(lax::pad(x, jnp::zeros({1}), {{1, 1, 0}}), jx::ShapeError);
  EXPECT_THROW(lax::pad(x, jnp::scalar(0, DType::Float32), {{1, 1, -1}}), jx::ValueError);
  EXPECT_THROW(lax::pad(x, jnp::scalar(0, DType::Float32), {{1, 1, 0}, {0, 0, 0}}), jx::ShapeError);
  try {
    lax::pad(x, jnp::scalar(0, DType::Float32), {{-2, -2, 0}});
    FAIL() << "expected ShapeError";
  } catch (const jx::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[pad] dimension 0 of f32[3] would have size -1"),
              std::string::npos)
        << e.what();
  }
}

TEST(ShapePrimitives, IotaAndBroadcastedIota) {
  Array a = lax::iota(DType::Int32, 5);
  EXPECT_FALSE(a.weak_type());
  EXPECT_EQ(a.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  Array b = lax::broadcasted_iota(DType::Float32, {2, 3}, 1);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0, 1, 2, 0, 1, 2}));
  Array c = lax::broadcasted_iota(DType::UInt8, {2, 3}, -2);
  EXPECT_EQ(c.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(lax::iota(DType::Int64, 0).shape(), (Shape{0}));
  EXPECT_THROW(lax::iota(DType::Bool, 3), jx::DTypeError);
  EXPECT_THROW(lax::broadcasted_iota(DType::Int32, {2}, 1), jx::IndexError);
}

TEST(ShapePrimitives, LargeThreadedOpsMatchHandDerivedValues) {
  // 400 x 500 = 200k elements: transpose, rev and pad take their threaded paths.
  const int64_t R = 400, C = 500;
  Array x = lax::broadcasted_iota(DType::Int32, {R, C}, 0) * 1000 +
            lax::broadcasted_iota(DType::Int32, {R, C}, 1);
  auto t = lax::transpose(x, {1, 0}).to_vector<int32_t>();
  auto r = lax::rev(x, {0, 1}).to_vector<int32_t>();
  auto p = lax::pad(x, jnp::scalar(-1, DType::Int32), {{1, -1, 0}, {-2, 3, 1}}).to_vector<int32_t>();
  const int64_t pc = -2 + 3 + C + (C - 1);
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j) {
      ASSERT_EQ(t[size_t(j * R + i)], i * 1000 + j);
      ASSERT_EQ(r[size_t((R - 1 - i) * C + (C - 1 - j))], i * 1000 + j);
    }
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < pc; ++j) {
      const int64_t si = i - 1, tj = j + 2;
      const bool hit = si >= 0 && tj % 2 == 0 && tj / 2 < C;
      const int32_t want = hit ? int32_t(si * 1000 + tj / 2) : -1;
      ASSERT_EQ(p[size_t(i * pc + j)], want) << i << "," << j;
    }
}

}  // namespace
