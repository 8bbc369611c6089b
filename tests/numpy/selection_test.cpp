// jnp selection functions: NumPy goldens (tests/golden/gen_selection.py) plus the JAX-only
// behaviour (take's fill mode, nonzero's size/fill_value, dtypes) hand-derived from JAX's docs.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "jx/jx.h"
#include "testing/expect_error.h"

namespace jnp = jx::numpy;
using jx::Array;

namespace {

struct Operands {
  Array a = jnp::arange(12, jx::float32).reshape({3, 4});
  Array v = jnp::array<float>({3, 1, 4, 1, 5, 9, 2, 6});
  Array s = jnp::array<float>({1, 2, 2, 4, 7, 7, 7, 9});
  Array i = jnp::array<int32_t>({2, 0, 1, -1, 1, 1, 0, 3}, jx::Shape{2, 4});
  Array m = jnp::array<int32_t>({1, 0, 2, 0, 0, 0, 3, 4, 5, 0, 0, 0}, jx::Shape{3, 4});
  Array nanv = jnp::array<float>({2, NAN, 1, 2, NAN, 0});
};
#define OPERANDS                                                                       \
  const Array &a = o.a, &v = o.v, &s = o.s, &i = o.i, &m = o.m, &nanv = o.nanv;      \
  (void)a, (void)v, (void)s, (void)i, (void)m, (void)nanv

struct SelectionCase {
  const char* expr;
  std::function<Array(const Operands&)> f;
  std::vector<int64_t> shape;
  std::vector<double> values;
};

#include "golden/selection_golden.inc"

using jx::testing::expect_error;

}  // namespace

TEST(Selection, NumPyGoldens) {
  Operands o;
  for (const auto& c : kSelectionCases) {
    SCOPED_TRACE(c.expr);
    Array r;
    try {
      r = c.f(o);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw: " << e.what();
      continue;
    }
    EXPECT_EQ(r.shape().vec(), c.shape);
    auto got = r.to_vector<double>();
    ASSERT_EQ(got.size(), c.values.size());
    for (size_t k = 0; k < got.size(); ++k) {
      if (std::isnan(c.values[k])) EXPECT_TRUE(std::isnan(got[k])) << "at " << k;
      else EXPECT_EQ(got[k], c.values[k]) << "at " << k;
    }
  }
}

TEST(Selection, WhereDTypes) {
  Array x = jnp::arange(3, jx::int32);
  Array r = jnp::where(x > 0, x, 0.5);  // int32 with a weak float: float32
  EXPECT_EQ(r.dtype(), jx::float32);
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{0.5f, 1, 2}));
  Array h = jnp::where(jnp::array<bool>({true, false}), jnp::zeros({2}, jx::float16), 1.0);
  EXPECT_EQ(h.dtype(), jx::float16);
  EXPECT_EQ(jnp::where(x > 5, x, x).shape(), (jx::Shape{3}));
}

TEST(Selection, TakeFillsByDefault) {
  // jnp.take's default mode is fill (unlike indexing): the docstring example.
  Array x = jnp::array<float>({1, 2, 3, 4, 5, 6}, jx::Shape{2, 3});
  Array r = jnp::take(x, jnp::array<int32_t>({2, 0}), 0);
  auto v = r.to_vector<float>();
  EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]) && std::isnan(v[2]));
  EXPECT_EQ(std::vector<float>(v.begin() + 3, v.end()), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(jnp::take(x, jnp::array<int32_t>({2, 0}), 0, jnp::TakeMode::clip).to_vector<float>(),
            (std::vector<float>{4, 5, 6, 1, 2, 3}));
  EXPECT_EQ(jnp::take(x, jnp::array<int32_t>({2, 0})).to_vector<float>(),
            (std::vector<float>{3, 1}));
  Array xi = jnp::arange(4, jx::int32);
  EXPECT_EQ(jnp::take(xi, jnp::array<int32_t>({4, -5, 1})).to_vector<int>(),
            (std::vector<int>{INT32_MIN, INT32_MIN, 1}));
  EXPECT_EQ(jnp::take(xi, jnp::array<int32_t>({4}), std::nullopt, jnp::TakeMode::fill, 7.0)
                .to_vector<int>(),
            (std::vector<int>{7}));
  // take_along_axis's docstring: out-of-bounds fills too.
  Array t = jnp::take_along_axis(x, jnp::array<int32_t>({1, 0, 2}, jx::Shape{1, 3}), 0);
  auto tv = t.to_vector<float>();
  EXPECT_EQ(tv[0], 4.f);
  EXPECT_EQ(tv[1], 2.f);
  EXPECT_TRUE(std::isnan(tv[2]));
}

TEST(Selection, NonzeroSizeAndFill) {
  Array x = jnp::array<int32_t>({0, 5, 0, 6, 0, 7});
  EXPECT_EQ(jnp::nonzero(x)[0].dtype(), jx::int32);
  EXPECT_EQ(jnp::nonzero(x, 5)[0].to_vector<int>(), (std::vector<int>{1, 3, 5, 0, 0}));
  EXPECT_EQ(jnp::nonzero(x, 4, -1)[0].to_vector<int>(), (std::vector<int>{1, 3, 5, -1}));
  EXPECT_EQ(jnp::nonzero(x, 2)[0].to_vector<int>(), (std::vector<int>{1, 3}));
  EXPECT_EQ(jnp::where(x)[0].to_vector<int>(), (std::vector<int>{1, 3, 5}));
  EXPECT_EQ(jnp::argwhere(x, 4).shape(), (jx::Shape{4, 1}));
  EXPECT_EQ(jnp::flatnonzero(jnp::zeros({2, 2})).shape(), (jx::Shape{0}));
  expect_error<jx::ValueError>([&] { jnp::nonzero(Array(1)); }, "0-d array");
}

TEST(Selection, Errors) {
  Array x = jnp::zeros({2, 3});
  expect_error<jx::DTypeError>([&] { jnp::take(x, jnp::zeros({2})); }, "astype(jx::int32)");
  expect_error<jx::ValueError>([&] { jnp::take_along_axis(x, jnp::zeros({2}, jx::int32), 0); },
                               "same number of dimensions");
  expect_error<jx::ValueError>(
      [&] { jnp::put_along_axis(x, jnp::zeros({2, 1}, jx::int32), 1.0, 1); }, "inplace=false");
  expect_error<jx::ValueError>(
      [&] { jnp::choose(jnp::array<int32_t>({0, 2}), {x(0), x(1)}); }, "invalid entry 2");
  expect_error<jx::ValueError>([&] { jnp::select({}, {}); }, "non-empty");
  expect_error<jx::ValueError>(
      [&] { jnp::compress(jnp::array<bool>({false, false, true}), x, 0); }, "beyond");
  expect_error<jx::ValueError>([&] { jnp::searchsorted(x, 1.0); }, "1-dimensional");
}

TEST(Selection, UniqueAll) {
  Array x = jnp::array<int32_t>({3, 1, 3, 2, 1, 3}, jx::Shape{2, 3});
  auto u = jnp::unique_all(x);
  EXPECT_EQ(u.values.to_vector<int>(), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(u.indices.to_vector<int>(), (std::vector<int>{1, 3, 0}));
  EXPECT_EQ(u.inverse.shape(), (jx::Shape{2, 3}));
  EXPECT_EQ(u.inverse.to_vector<int>(), (std::vector<int>{2, 0, 2, 1, 0, 2}));
  EXPECT_EQ(u.counts.to_vector<int>(), (std::vector<int>{2, 1, 3}));
  EXPECT_EQ(jnp::unique(jnp::zeros({0})).shape(), (jx::Shape{0}));
}
