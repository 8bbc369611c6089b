// slice / dynamic_slice / dynamic_update_slice / gather / scatter*: fast kernels against
// their naive references over dtypes x shapes x modes (size 0, odd sizes, > 100k elements),
// and the primitives through lax on hand-derived values and error messages.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "backend/cpu/gather.h"
#include "jx/jx.h"
#include "ops/indexing.h"
#include "support/dtype_switch.h"
#include "testing/expect_error.h"

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::cpu::Dims;

namespace {

int64_t numel(const Dims& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::vector<char> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<char> v(n);
  for (auto& c : v) c = char(g());
  return v;
}

// Small integer values of dtype T (so that sums and products are exact in every dtype).
// (bool is stored as uint8_t: std::vector<bool> has no data()).
template <class T>
using storage_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
template <class T>
std::vector<storage_t<T>> small_values(int64_t n, uint32_t seed, int lo, int hi) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<storage_t<T>> v(static_cast<size_t>(n));
  for (auto& x : v) {
    if constexpr (std::is_same_v<T, jx::half> || std::is_same_v<T, jx::bhalf>) x = T(float(d(g)));
    else if constexpr (std::is_same_v<T, bool>) x = d(g) > 0;
    else x = T(d(g));
  }
  return v;
}

std::vector<int64_t> random_indices(int64_t n, int64_t lo, int64_t hi, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int64_t> d(lo, hi);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(g);
  return v;
}

const size_t kItemsizes[] = {1, 2, 4, 8};

}  // namespace

// ---- slice / update_slice kernels ----

TEST(SliceKernel, FastMatchesReference) {
  struct C {
    Dims shape, start, strides, out;
  };
  std::vector<C> cases = {
      {{}, {}, {}, {}},
      {{7}, {2}, {1}, {4}},
      {{7}, {1}, {3}, {2}},
      {{0, 5}, {0, 1}, {1, 1}, {0, 3}},
      {{5, 6}, {1, 0}, {1, 1}, {3, 6}},     // whole rows: one memcpy
      {{5, 6}, {1, 2}, {2, 1}, {2, 3}},
      {{3, 4, 5}, {1, 1, 1}, {1, 2, 3}, {2, 2, 2}},
      {{2, 3, 4, 5}, {0, 1, 0, 2}, {1, 1, 1, 1}, {2, 2, 4, 3}},
      {{700, 400}, {3, 0}, {1, 1}, {600, 400}},    // > 100k: threaded
      {{700, 400}, {1, 5}, {2, 3}, {340, 132}},
  };
  for (size_t isz : kItemsizes) {
    for (const auto& c : cases) {
      auto src = random_bytes(size_t(numel(c.shape)) * isz, 7);
      std::vector<char> a(size_t(numel(c.out)) * isz + 1), b(a.size());
      jx::cpu::slice(isz, src.data(), c.shape, c.start, c.strides, a.data(), c.out);
      jx::cpu::slice_reference(isz, src.data(), c.shape, c.start, c.strides, b.data(), c.out);
      EXPECT_EQ(a, b) << "itemsize " << isz << " shape rank " << c.shape.size();
    }
  }
}

TEST(SliceKernel, UpdateMatchesReference) {
  struct C {
    Dims shape, start, upd;
  };
  std::vector<C> cases = {
      {{}, {}, {}},          {{9}, {3}, {4}},           {{4, 5}, {1, 0}, {2, 5}},
      {{4, 5}, {2, 1}, {2, 3}}, {{3, 4, 5}, {0, 2, 1}, {3, 2, 4}}, {{5, 5}, {0, 0}, {0, 2}},
      {{600, 300}, {10, 7}, {500, 290}},
  };
  for (size_t isz : kItemsizes) {
    for (const auto& c : cases) {
      auto dst = random_bytes(size_t(numel(c.shape)) * isz, 3);
      auto upd = random_bytes(size_t(numel(c.upd)) * isz, 4);
      auto a = dst, b = dst;
      jx::cpu::update_slice(isz, a.data(), c.shape, c.start, upd.data(), c.upd);
      jx::cpu::update_slice_reference(isz, b.data(), c.shape, c.start, upd.data(), c.upd);
      EXPECT_EQ(a, b) << "itemsize " << isz;
    }
  }
}

// ---- gather kernel ----

namespace {
struct GatherCase {
  const char* name;
  Dims operand, indices;
  jx::cpu::GatherDims dn;
  Dims slice_sizes, out;
};
std::vector<GatherCase> gather_cases() {
  return {
      {"rows", {5, 7}, {4, 1}, {{1}, {0}, {0}, {}, {}}, {1, 7}, {4, 7}},
      {"elements", {5, 7}, {3, 2}, {{}, {0, 1}, {0, 1}, {}, {}}, {1, 1}, {3}},
      {"columns (offset dim first)", {6, 8}, {4, 1}, {{0}, {1}, {1}, {}, {}}, {6, 1}, {6, 4}},
      {"windows", {10, 9}, {5, 2}, {{1, 2}, {}, {0, 1}, {}, {}}, {3, 4}, {5, 3, 4}},
      {"batching", {3, 5, 4}, {3, 2, 1}, {{2}, {1}, {1}, {0}, {0}}, {1, 1, 4}, {3, 2, 4}},
      {"interleaved", {4, 5, 6}, {2, 3, 2}, {{1, 3}, {0}, {0, 2}, {}, {}}, {1, 3, 2}, {2, 3, 3, 2}},
      {"empty indices", {4, 3}, {0, 1}, {{1}, {0}, {0}, {}, {}}, {1, 3}, {0, 3}},
      {"scalar operand", {}, {0}, {{}, {}, {}, {}, {}}, {}, {}},
      {"large rows", {2000, 64}, {50000, 1}, {{1}, {0}, {0}, {}, {}}, {1, 64}, {50000, 64}},
      {"large elements", {300000}, {200000, 1}, {{}, {0}, {0}, {}, {}}, {1}, {200000}},
  };
}
}  // namespace

TEST(GatherKernel, FastMatchesReference) {
  for (const auto& c : gather_cases()) {
    // Indices reach past both ends so that clamping and filling are exercised.
    int64_t hi = 0;
    for (auto d : c.operand) hi = std::max(hi, d);
    auto ind = random_indices(numel(c.indices), -3, hi + 3, 11);
    for (size_t isz : kItemsizes) {
      auto src = random_bytes(size_t(std::max<int64_t>(numel(c.operand), 1)) * isz, 5);
      for (bool fill : {false, true}) {
        uint64_t fv = 0x7f7f7f7f7f7f7f7full;
        std::vector<char> a(size_t(numel(c.out)) * isz + 1), b(a.size());
        jx::cpu::gather(isz, src.data(), c.operand, ind.data(), c.indices, c.dn, c.slice_sizes,
                        fill, &fv, a.data(), c.out);
        jx::cpu::gather_reference(isz, src.data(), c.operand, ind.data(), c.indices, c.dn,
                                  c.slice_sizes, fill, &fv, b.data(), c.out);
        EXPECT_EQ(a, b) << c.name << " itemsize " << isz << " fill " << fill;
      }
    }
  }
}

// ---- scatter kernel ----

namespace {
struct ScatterCase {
  const char* name;
  Dims operand, indices;
  jx::cpu::ScatterDims dn;
  Dims updates;
};
std::vector<ScatterCase> scatter_cases() {
  return {
      {"rows", {5, 7}, {6, 1}, {{1}, {0}, {0}, {}, {}}, {6, 7}},
      {"elements", {5, 7}, {8, 2}, {{}, {0, 1}, {0, 1}, {}, {}}, {8}},
      {"columns (window dim first)", {6, 8}, {4, 1}, {{0}, {1}, {1}, {}, {}}, {6, 4}},
      {"windows", {10, 9}, {5, 2}, {{1, 2}, {}, {0, 1}, {}, {}}, {5, 3, 4}},
      {"batching", {3, 5, 4}, {3, 2, 1}, {{2}, {1}, {1}, {0}, {0}}, {3, 2, 4}},
      {"empty", {4, 3}, {0, 1}, {{1}, {0}, {0}, {}, {}}, {0, 3}},
      {"whole operand", {3, 2}, {0}, {{0, 1}, {}, {}, {}, {}}, {3, 2}},
      {"large rows", {3000, 64}, {40000, 1}, {{1}, {0}, {0}, {}, {}}, {40000, 64}},
  };
}

template <class T>
void check_scatter(jx::DType dt, const ScatterCase& c, jx::cpu::ScatterOp op, bool clip,
                   const std::vector<int64_t>& ind) {
  auto base = small_values<T>(numel(c.operand), 1, -3, 3);
  auto upd = small_values<T>(numel(c.updates), 2, op == jx::cpu::ScatterOp::Mul ? -1 : -4,
                             op == jx::cpu::ScatterOp::Mul ? 2 : 4);
  auto a = base, b = base;
  jx::cpu::scatter(op, dt, a.data(), c.operand, ind.data(), c.indices, upd.data(), c.updates, c.dn, clip);
  jx::cpu::scatter_reference(op, dt, b.data(), c.operand, ind.data(), c.indices, upd.data(),
                             c.updates, c.dn, clip);
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])))
      << c.name << " dtype " << jx::dtype_name(dt) << " op " << int(op) << " clip " << clip;
}
}  // namespace

TEST(ScatterKernel, FastMatchesReference) {
  const jx::DType dtypes[] = {jx::bool_, jx::int8, jx::uint8, jx::int32, jx::int64,
                              jx::float16, jx::bfloat16, jx::float32, jx::float64};
  const jx::cpu::ScatterOp ops[] = {jx::cpu::ScatterOp::Set, jx::cpu::ScatterOp::Add,
                                    jx::cpu::ScatterOp::Mul, jx::cpu::ScatterOp::Min,
                                    jx::cpu::ScatterOp::Max};
  for (const auto& c : scatter_cases()) {
    int64_t hi = 0;
    for (auto d : c.operand) hi = std::max(hi, d);
    // Few distinct values: many duplicates, some out of bounds.
    auto ind = random_indices(numel(c.indices), -2, std::min<int64_t>(hi + 2, 8), 13);
    const bool large = numel(c.updates) > 100000;
    for (auto dt : dtypes) {
      if (large && dt != jx::float32 && dt != jx::int32) continue;
      for (auto op : ops)
        for (bool clip : {false, true})
          JX_DTYPE_SWITCH(dt, T, check_scatter<T>(dt, c, op, clip, ind));
    }
  }
}

// ---- the primitives through lax, on hand-derived values ----

TEST(IndexingPrims, Slice) {
  Array x = jnp::arange(12, jx::int32).reshape({3, 4});
  Array s = lax::slice(x, {1, 0}, {3, 4}, {1, 2});
  EXPECT_EQ(s.shape(), (jx::Shape{2, 2}));
  EXPECT_EQ(s.to_vector<int>(), (std::vector<int>{4, 6, 8, 10}));
  EXPECT_EQ(lax::slice_in_dim(x, 1, 3, 1, 1).to_vector<int>(),
            (std::vector<int>{1, 2, 5, 6, 9, 10}));
  EXPECT_EQ(lax::slice(x, {0, 0}, {3, 4}).to_vector<int>(), x.to_vector<int>());
  EXPECT_EQ(lax::slice(x, {1, 1}, {1, 3}).shape(), (jx::Shape{0, 2}));
}

TEST(IndexingPrims, DynamicSliceClamps) {
  Array x = jnp::arange(10, jx::int32);
  auto ds = [&](int64_t start) {
    return lax::dynamic_slice(x, {jnp::scalar(double(start), jx::int32)}, {3}).to_vector<int>();
  };
  EXPECT_EQ(ds(2), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(ds(9), (std::vector<int>{7, 8, 9}));    // clamped to 10 - 3
  EXPECT_EQ(ds(-2), (std::vector<int>{7, 8, 9}));   // -2 -> 8, then clamped
  EXPECT_EQ(ds(-20), (std::vector<int>{0, 1, 2}));  // -20 -> -10, clamped to 0
  Array m = jnp::arange(12, jx::float32).reshape({3, 4});
  Array r = lax::dynamic_slice(m, {Array(1), Array(3)}, {2, 2});
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{6, 7, 10, 11}));
  EXPECT_EQ(lax::dynamic_index_in_dim(m, Array(2), 0, false).to_vector<float>(),
            (std::vector<float>{8, 9, 10, 11}));
}

TEST(IndexingPrims, DynamicUpdateSliceClamps) {
  Array x = jnp::zeros({5}, jx::int32);
  Array u = jnp::array<int32_t>({1, 2});
  EXPECT_EQ(lax::dynamic_update_slice(x, u, {Array(1)}).to_vector<int>(),
            (std::vector<int>{0, 1, 2, 0, 0}));
  EXPECT_EQ(lax::dynamic_update_slice(x, u, {Array(4)}).to_vector<int>(),
            (std::vector<int>{0, 0, 0, 1, 2}));
  EXPECT_EQ(lax::dynamic_update_slice(x, u, {Array(-1)}).to_vector<int>(),
            (std::vector<int>{0, 0, 0, 1, 2}));
  Array m = jnp::zeros({3, 3}, jx::int32);
  Array r = lax::dynamic_update_slice(m, jnp::ones({2, 2}, jx::int32), {Array(5), Array(0)});
  EXPECT_EQ(r.to_vector<int>(), (std::vector<int>{0, 0, 0, 1, 1, 0, 1, 1, 0}));
}

TEST(IndexingPrims, GatherModes) {
  // The XLA/JAX docstring example: x[indices] as a gather.
  Array x = jnp::array<int32_t>({10, 11, 12});
  Array idx = jnp::array<int32_t>({0, 1, 1, 2, 2, 2}, jx::Shape{6, 1});
  lax::GatherDimensionNumbers dn{{}, {0}, {0}, {}, {}};
  EXPECT_EQ(lax::gather(x, idx, dn, {1}).to_vector<int>(),
            (std::vector<int>{10, 11, 11, 12, 12, 12}));
  Array oob = jnp::array<int32_t>({-1, 3, 1}, jx::Shape{3, 1});
  EXPECT_EQ(lax::gather(x, oob, dn, {1}, lax::GatherScatterMode::clip).to_vector<int>(),
            (std::vector<int>{10, 12, 11}));
  EXPECT_EQ(lax::gather(x, oob, dn, {1}, lax::GatherScatterMode::fill_or_drop).to_vector<int>(),
            (std::vector<int>{INT32_MIN, INT32_MIN, 11}));
  EXPECT_EQ(lax::gather(x, oob, dn, {1}, lax::GatherScatterMode::fill_or_drop, 7).to_vector<int>(),
            (std::vector<int>{7, 7, 11}));
  // A window that does not fit is filled whole, even its in-bounds part.
  Array y = jnp::arange(5, jx::float32);
  lax::GatherDimensionNumbers wn{{1}, {}, {0}, {}, {}};
  Array w = lax::gather(y, jnp::array<int32_t>({3, 1}, jx::Shape{2, 1}), wn, {3},
                        lax::GatherScatterMode::fill_or_drop);
  auto wv = w.to_vector<float>();
  EXPECT_TRUE(std::isnan(wv[0]) && std::isnan(wv[1]) && std::isnan(wv[2]));
  EXPECT_EQ(std::vector<float>(wv.begin() + 3, wv.end()), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(lax::gather(y, jnp::array<int32_t>({3}, jx::Shape{1, 1}), wn, {3}).to_vector<float>(),
            (std::vector<float>{2, 3, 4}));  // promise_in_bounds clamps the window
}

TEST(IndexingPrims, ScatterFamily) {
  Array x = jnp::zeros({4}, jx::float32);
  Array idx = jnp::array<int32_t>({0, 2, 0, 5, -1}, jx::Shape{5, 1});
  Array upd = jnp::array<float>({1, 2, 3, 4, 5});
  lax::ScatterDimensionNumbers dn{{}, {0}, {0}, {}, {}};
  EXPECT_EQ(lax::scatter_add(x, idx, upd, dn).to_vector<float>(), (std::vector<float>{4, 0, 2, 0}));
  EXPECT_EQ(lax::scatter_add(x, idx, upd, dn, lax::GatherScatterMode::clip).to_vector<float>(),
            (std::vector<float>{9, 0, 2, 4}));
  EXPECT_EQ(lax::scatter(x, idx, upd, dn).to_vector<float>(), (std::vector<float>{3, 0, 2, 0}));
  Array o = jnp::ones({4});
  EXPECT_EQ(lax::scatter_mul(o, idx, upd, dn).to_vector<float>(), (std::vector<float>{3, 1, 2, 1}));
  EXPECT_EQ(lax::scatter_min(o, idx, upd, dn).to_vector<float>(), (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(lax::scatter_max(o, idx, upd, dn).to_vector<float>(), (std::vector<float>{3, 1, 2, 1}));
  Array r = lax::scatter_add(x, idx, upd, dn);
  EXPECT_EQ(r.dtype(), jx::float32);
}

namespace {
using jx::testing::expect_error;
}  // namespace

TEST(IndexingPrims, Errors) {
  Array x = jnp::zeros({3, 4});
  expect_error<jx::IndexError>([&] { lax::slice(x, {0, 0}, {4, 4}); }, "[slice] slice [0:4]");
  expect_error<jx::ValueError>([&] { lax::slice(x, {0, 0}, {3, 4}, {1, -1}); }, "lax::rev");
  expect_error<jx::IndexError>([&] { lax::dynamic_slice(x, {Array(0)}, {1, 1}); },
                               "one start index per dimension of f32[3,4]");
  expect_error<jx::IndexError>([&] { lax::dynamic_slice(x, {Array(0), Array(0)}, {4, 1}); },
                               "do not fit in f32[3,4]");
  expect_error<jx::DTypeError>(
      [&] { lax::dynamic_update_slice(x, jnp::zeros({1, 1}, jx::int32), {Array(0), Array(0)}); },
      "must have the dtype of the operand f32[3,4]");
  lax::GatherDimensionNumbers dn{{1}, {0}, {0}, {}, {}};
  expect_error<jx::DTypeError>([&] { lax::gather(x, jnp::zeros({2, 1}), dn, {1, 4}); },
                               "[gather] indices must have an integer dtype, got f32[2,1]");
  expect_error<jx::ShapeError>(
      [&] { lax::gather(x, jnp::zeros({2, 2}, jx::int32), dn, {1, 4}); },
      "one entry per element of the index vector");
  expect_error<jx::ShapeError>([&] { lax::gather(x, jnp::zeros({2, 1}, jx::int32), dn, {2, 4}); },
                               "slice size 0 or 1");
  lax::ScatterDimensionNumbers sn{{1}, {0}, {0}, {}, {}};
  expect_error<jx::ShapeError>(
      [&] { lax::scatter_add(x, jnp::zeros({2, 1}, jx::int32), jnp::zeros({3, 4}), sn); },
      "update scatter dim 0 (3) must equal the matching indices dim 0 (2)");
  expect_error<jx::DTypeError>(
      [&] { lax::scatter(x, jnp::zeros({2, 1}, jx::int32), jnp::zeros({2, 4}, jx::int32), sn); },
      "[scatter] updates must have the operand's dtype");
}

TEST(IndexingPrims, ParamsPrintAsJax) {
  jx::ops::Params p{
      {"dimension_numbers", std::shared_ptr<const jx::ops::ParamObject>(
                                std::make_shared<const jx::ops::GatherDnumsParam>(
                                    lax::GatherDimensionNumbers{{1}, {0}, {0}, {}, {}}))},
      {"mode", jx::ops::mode_param(lax::GatherScatterMode::promise_in_bounds)}};
  EXPECT_EQ(p.str(),
            "dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), "
            "start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=()) "
            "mode=GatherScatterMode.PROMISE_IN_BOUNDS");
  jx::ops::ScatterDnumsParam s(lax::ScatterDimensionNumbers{{}, {0, 1}, {0, 1}, {}, {}});
  EXPECT_EQ(s.str(),
            "ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0, 1), "
            "scatter_dims_to_operand_dims=(0, 1), operand_batching_dims=(), "
            "scatter_indices_batching_dims=())");
  EXPECT_TRUE(s.equals(jx::ops::ScatterDnumsParam(s.d)));
  EXPECT_EQ(s.hash(), jx::ops::ScatterDnumsParam(s.d).hash());
}
