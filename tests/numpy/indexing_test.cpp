// NumPy indexing on Array and x.at(...) updates: NumPy goldens for in-bounds expressions
// (tests/golden/gen_indexing.py), JAX-specific behaviour (clamping, .at modes, dtype rules)
// hand-derived from JAX's documentation, and error cases by type and message.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "jx/jx.h"
#include "testing/expect_error.h"

namespace jnp = jx::numpy;
using jx::Array;

namespace {

struct IndexCase {
  const char* expr;
  const char* operand;
  std::function<Array(const Array&)> f;
  std::vector<int64_t> shape;
  std::vector<int64_t> values;
};

#include "golden/indexing_golden.inc"

Array operand(const std::string& name) {
  if (name == "x4") return jnp::arange(120, jx::int32).reshape({2, 3, 4, 5});
  if (name == "x2") return jnp::arange(20, jx::int32).reshape({4, 5});
  return jnp::arange(10, jx::int32);
}

void check_case(const IndexCase& c) {
  SCOPED_TRACE(c.expr);
  Array r = c.f(operand(c.operand));
  EXPECT_EQ(r.shape().vec(), c.shape);
  EXPECT_EQ(r.dtype(), jx::int32);
  EXPECT_EQ(r.to_vector<int64_t>(), c.values);
}

std::vector<float> fvec(const Array& a) { return a.to_vector<float>(); }

jx::AtOptions mode(jx::IndexMode m, std::optional<double> fill_value = std::nullopt) {
  jx::AtOptions o;
  o.mode = m;
  o.fill_value = fill_value;
  return o;
}

using jx::testing::expect_error;

}  // namespace

TEST(Indexing, NumPyGoldensGet) {
  for (const auto& c : kGetCases) check_case(c);
}

TEST(Indexing, NumPyGoldensAt) {
  for (const auto& c : kAtCases) check_case(c);
}

TEST(Indexing, OutOfBoundsReadsClamp) {
  // JAX: x[10] on a length-5 array gives x[4]; x[-10] gives x[0] (after wrapping to -5).
  Array x = jnp::arange(5, jx::float32);
  EXPECT_EQ(x(10).item<float>(), 4.f);
  EXPECT_EQ(x(-10).item<float>(), 0.f);
  EXPECT_EQ(fvec(x(std::vector<int64_t>{7, -1, -7, 2})), (std::vector<float>{4, 4, 0, 2}));
  Array m = jnp::arange(12, jx::float32).reshape({3, 4});
  EXPECT_EQ(fvec(m(5)), (std::vector<float>{8, 9, 10, 11}));
  EXPECT_EQ(m(1, 9).item<float>(), 7.f);
  // A 0-d index array takes the dynamic_slice path: clamped as well.
  EXPECT_EQ(x(Array(9)).item<float>(), 4.f);
  EXPECT_EQ(x(jnp::scalar(-2, jx::int32)).item<float>(), 3.f);
}

TEST(Indexing, AtDocstringExamples) {
  // From JAX's _IndexUpdateRef docstring.
  Array x = jnp::arange(5, jx::float32);
  EXPECT_EQ(fvec(x.at(2).add(10)), (std::vector<float>{0, 1, 12, 3, 4}));
  EXPECT_EQ(fvec(x.at(10).add(10)), (std::vector<float>{0, 1, 2, 3, 4}));
  EXPECT_EQ(fvec(x.at(20).add(10, mode(jx::IndexMode::clip))),
            (std::vector<float>{0, 1, 2, 3, 14}));
  EXPECT_EQ(x.at(20).get().item<float>(), 4.f);
  EXPECT_TRUE(std::isnan(x.at(20).get(mode(jx::IndexMode::fill)).item<float>()));
  EXPECT_EQ(x.at(20).get(mode(jx::IndexMode::fill, -1)).item<float>(), -1.f);
  // x itself never changes.
  EXPECT_EQ(fvec(x), (std::vector<float>{0, 1, 2, 3, 4}));
}

TEST(Indexing, AtModes) {
  Array x = jnp::arange(5, jx::int32);
  // Default (promise_in_bounds for updates = drop), drop, fill and clip.
  EXPECT_EQ(x.at(std::vector<int64_t>{1, 7}).set(9).to_vector<int>(),
            (std::vector<int>{0, 9, 2, 3, 4}));
  EXPECT_EQ(x.at(std::vector<int64_t>{1, 7}).set(9, mode(jx::IndexMode::drop)).to_vector<int>(),
            (std::vector<int>{0, 9, 2, 3, 4}));
  EXPECT_EQ(x.at(std::vector<int64_t>{1, 7}).set(9, mode(jx::IndexMode::clip)).to_vector<int>(),
            (std::vector<int>{0, 9, 2, 3, 9}));
  // Negative indices wrap before the bounds check; -6 is still out of bounds.
  EXPECT_EQ(x.at(std::vector<int64_t>{-1, -6}).add(100).to_vector<int>(),
            (std::vector<int>{0, 1, 2, 3, 104}));
  // get with fill: int32's fill is its minimum; uint8's its maximum; bool's true.
  auto g = x.at(std::vector<int64_t>{0, 5, -6}).get(mode(jx::IndexMode::fill)).to_vector<int>();
  EXPECT_EQ(g, (std::vector<int>{0, INT32_MIN, INT32_MIN}));
  Array u = jnp::arange(3, jx::uint8);
  EXPECT_EQ(u.at(3).get(mode(jx::IndexMode::fill)).item<int>(), 255);
  Array b = jnp::array<bool>({false, false});
  EXPECT_TRUE(b.at(4).get(mode(jx::IndexMode::fill)).item<bool>());
  EXPECT_EQ(x.at(std::vector<int64_t>{2, 9}).get(mode(jx::IndexMode::clip)).to_vector<int>(),
            (std::vector<int>{2, 4}));
}

TEST(Indexing, AtDuplicatesAccumulate) {
  Array x = jnp::zeros({3});
  EXPECT_EQ(fvec(x.at(std::vector<int64_t>{0, 0, 2, 0}).add(1)), (std::vector<float>{3, 0, 1}));
  EXPECT_EQ(fvec(jnp::ones({3}).at(std::vector<int64_t>{1, 1}).multiply(3)),
            (std::vector<float>{1, 9, 1}));
  Array y = jnp::arange(4, jx::float32);
  EXPECT_EQ(fvec(y.at(std::vector<int64_t>{1, 1}).min(jnp::array<float>({0.5f, -2.f}))),
            (std::vector<float>{0, -2, 2, 3}));
  EXPECT_EQ(fvec(y.at(jx::slice(1, 3)).max(1.5)), (std::vector<float>{0, 1.5, 2, 3}));
}

TEST(Indexing, AtDTypeRules) {
  // Values are promoted with x, then the result is converted back to x's dtype and weak type.
  Array x = jnp::arange(4, jx::int32);
  Array r = x.at(0).add(1.7);
  EXPECT_EQ(r.dtype(), jx::int32);
  EXPECT_EQ(r.to_vector<int>(), (std::vector<int>{1, 1, 2, 3}));
  Array h = jnp::zeros({2}, jx::float16).at(1).set(2.5);
  EXPECT_EQ(h.dtype(), jx::float16);
  EXPECT_FALSE(h.weak_type());
  EXPECT_EQ(fvec(h), (std::vector<float>{0, 2.5f}));
  // divide and power go through ones.at[...].multiply, and divide is inexact, as in JAX.
  Array d = x.at(std::vector<int64_t>{1, 3}).divide(2);
  EXPECT_EQ(d.dtype(), jx::float32);
  EXPECT_EQ(fvec(d), (std::vector<float>{0, 0.5f, 2, 1.5f}));
  Array p = x.at(2).power(3);
  EXPECT_EQ(p.dtype(), jx::int32);
  EXPECT_EQ(p.to_vector<int>(), (std::vector<int>{0, 1, 8, 3}));
  Array s = jnp::arange(3, jx::uint8).at(0).subtract(1);
  EXPECT_EQ(s.to_vector<int>(), (std::vector<int>{255, 1, 2}));
  // Indexing keeps the weak type of a weak operand.
  EXPECT_TRUE(Array(3.0).at().get().weak_type());
}

TEST(Indexing, EmptyResults) {
  Array x = jnp::arange(6, jx::float32).reshape({2, 3});
  EXPECT_EQ(x(jx::slice(2, 1)).shape(), (jx::Shape{0, 3}));
  EXPECT_EQ(x(std::vector<int64_t>{}).shape(), (jx::Shape{0, 3}));
  Array z = jnp::zeros({0});
  EXPECT_EQ(z(std::vector<int64_t>{}).shape(), (jx::Shape{0}));
  EXPECT_EQ(z.at(std::vector<int64_t>{}).set(1).shape(), (jx::Shape{0}));
  EXPECT_EQ(x(jx::ellipsis).shape(), x.shape());
  Array s = Array(2.0);
  EXPECT_EQ(s().item<float>(), 2.f);
  EXPECT_EQ(s(jx::newaxis).shape(), (jx::Shape{1}));
}

TEST(Indexing, LargeRowGather) {
  // x[idx] on a 2-d array copies whole rows; large enough to use both threads.
  const int64_t rows = 2000, cols = 300;
  Array x = jnp::arange(double(rows * cols), jx::int32).reshape({rows, cols});
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < 1000; ++i) idx.push_back((i * 7919) % rows - (i % 3 == 0 ? rows : 0));
  Array r = x(idx);
  ASSERT_EQ(r.shape(), (jx::Shape{1000, cols}));
  auto v = r.to_vector<int>();
  for (int64_t i = 0; i < 1000; ++i) {
    int64_t row = idx[size_t(i)] < 0 ? idx[size_t(i)] + rows : idx[size_t(i)];
    for (int64_t c = 0; c < cols; c += 37) ASSERT_EQ(v[size_t(i * cols + c)], row * cols + c);
  }
  Array a = x.at(idx).add(1);
  auto av = a.to_vector<int>();
  std::vector<int> count(size_t(rows), 0);
  for (auto i : idx) ++count[size_t(i < 0 ? i + rows : i)];
  for (int64_t rr = 0; rr < rows; rr += 13) ASSERT_EQ(av[size_t(rr * cols + 5)], rr * cols + 5 + count[size_t(rr)]);
}

TEST(Indexing, Errors) {
  Array x = jnp::zeros({2, 3});
  expect_error<jx::IndexError>([&] { x(0, 1, 2); }, "too many indices");
  expect_error<jx::IndexError>([&] { x(0, jx::ellipsis, 1, jx::ellipsis); }, "single ellipsis");
  expect_error<jx::DTypeError>([&] { x(jnp::array<float>({0.f, 1.f})); }, "astype(jx::int32)");
  expect_error<jx::IndexError>([&] { x(jnp::array<bool>({true, false, true})); },
                               "boolean index did not match");
  expect_error<jx::IndexError>([&] { x(jnp::zeros({2, 3, 1}, jx::bool_)); },
                               "too many boolean indices");
  expect_error<jx::ValueError>([&] { x(jx::slice(0, 2, 0)); }, "step cannot be zero");
  expect_error<jx::IndexError>([&] { jnp::zeros({0})(0); }, "size 0");
}

TEST(Indexing, BoolMaskFromComparison) {
  Array x = jnp::arange(6, jx::float32).reshape({2, 3});
  EXPECT_EQ(fvec(x(x > 2.0)), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(fvec(x.at(x > 2.0).set(0)), (std::vector<float>{0, 1, 2, 0, 0, 0}));
  // A scalar boolean adds a dim (true) or an empty one (false), as NumPy.
  EXPECT_EQ(x(jnp::array<bool>({true}, jx::Shape{})).shape(), (jx::Shape{1, 2, 3}));
  EXPECT_EQ(x(jnp::array<bool>({false}, jx::Shape{})).shape(), (jx::Shape{0, 2, 3}));
}
