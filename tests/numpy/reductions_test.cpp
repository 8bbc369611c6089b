// jnp reductions, statistics, cumulative ops and sorts against NumPy goldens
// (tests/golden/gen_reductions.py), with JAX's result dtypes; plus hand-derived checks of
// where masks, initial values, promotion flags, -0.0/NaN ordering, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "jx/lax.h"
#include "jx/numpy.h"
#include "testing/expect_error.h"

namespace {

using jx::Array;
using jx::DType;
using jx::Shape;
namespace jnp = jx::numpy;

struct GoldenCase {
  std::string op, in_dtype;
  std::vector<int64_t> shape;
  std::vector<double> x;
  std::vector<int64_t> axes;
  bool axis_none, keepdims;
  int64_t ddof;
  double q;
  std::string out_dtype;
  std::vector<int64_t> out_shape;
  std::vector<double> expected;
  std::vector<double> weights;
};

#include "golden/reductions_golden.inc"

Array make(const std::vector<double>& v, const std::vector<int64_t>& shape, DType t) {
  return jnp::array(jnp::array(v, Shape(shape)), t);
}

Array run(const GoldenCase& c) {
  Array x = make(c.x, c.shape, jx::dtype_from_name(c.in_dtype));
  jx::Axes ax = c.axis_none ? jx::Axes(jx::none) : jx::Axes(c.axes);
  std::optional<int64_t> ax1;
  if (!c.axis_none) ax1 = c.axes[0];
  const std::string& op = c.op;
  const bool kd = c.keepdims;
  if (op == "sum") return jnp::sum(x, ax, kd);
  if (op == "prod") return jnp::prod(x, ax, kd);
  if (op == "mean") return jnp::mean(x, ax, kd);
  if (op == "max") return jnp::max(x, ax, kd);
  if (op == "min") return jnp::min(x, ax, kd);
  if (op == "ptp") return jnp::ptp(x, ax, kd);
  if (op == "var") return jnp::var(x, ax, c.ddof, kd);
  if (op == "std") return jnp::std(x, ax, c.ddof, kd);
  if (op == "all") return jnp::all(x, ax, kd);
  if (op == "any") return jnp::any(x, ax, kd);
  if (op == "count_nonzero") return jnp::count_nonzero(x, ax, kd);
  if (op == "argmax") return jnp::argmax(x, ax1, kd);
  if (op == "argmin") return jnp::argmin(x, ax1, kd);
  if (op == "nansum") return jnp::nansum(x, ax, kd);
  if (op == "nanprod") return jnp::nanprod(x, ax, kd);
  if (op == "nanmax") return jnp::nanmax(x, ax, kd);
  if (op == "nanmin") return jnp::nanmin(x, ax, kd);
  if (op == "nanmean") return jnp::nanmean(x, ax, kd);
  if (op == "nanvar") return jnp::nanvar(x, ax, c.ddof, kd);
  if (op == "nanstd") return jnp::nanstd(x, ax, c.ddof, kd);
  if (op == "median") return jnp::median(x, ax, kd);
  if (op == "quantile") return jnp::quantile(x, c.q, ax, kd);
  if (op == "percentile") return jnp::percentile(x, c.q, ax, kd);
  if (op == "cumsum") return jnp::cumsum(x, ax1);
  if (op == "cumprod") return jnp::cumprod(x, ax1);
  if (op == "nancumsum") return jnp::nancumsum(x, ax1);
  if (op == "nancumprod") return jnp::nancumprod(x, ax1);
  if (op == "sort") return jnp::sort(x, ax1);
  if (op == "argsort") return jnp::argsort(x, ax1);
  if (op == "sort_desc") return jnp::sort(x, ax1, true, true);
  if (op == "argsort_desc") return jnp::argsort(x, ax1, true, true);
  if (op == "average") return jnp::average(x, ax, std::nullopt, kd);
  if (op == "average_w1") {
    Array w = jnp::array(jnp::array(c.weights), DType::Float32);
    return jnp::average(x, ax, w, kd);
  }
  if (op == "lexsort") {
    // keys = [row 1, row 0]: the last key (row 0) is primary.
    Array r0 = jnp::array(jnp::array(std::vector<double>(c.x.begin(), c.x.begin() + c.shape[1])),
                          jx::dtype_from_name(c.in_dtype));
    Array r1 = jnp::array(jnp::array(std::vector<double>(c.x.begin() + c.shape[1],
                                                         c.x.begin() + 2 * c.shape[1])),
                          jx::dtype_from_name(c.in_dtype));
    return jnp::lexsort({r1, r0});
  }
  ADD_FAILURE() << "unknown op " << op;
  return x;
}

std::string describe(const GoldenCase& c) {
  std::string s = c.op + "(" + c.in_dtype + jx::shape_str(Shape(c.shape)) + ", axis=";
  s += c.axis_none ? "None" : jx::shape_str(Shape(c.axes));
  s += c.keepdims ? ", keepdims" : "";
  s += ", ddof=" + std::to_string(c.ddof) + ", q=" + std::to_string(c.q) + ")";
  return s;
}

TEST(ReductionsGolden, MatchNumPyWithJaxDtypes) {
  ASSERT_GT(kGolden.size(), 200u);
  for (const auto& c : kGolden) {
    SCOPED_TRACE(describe(c));
    Array r = run(c);
    EXPECT_EQ(jx::dtype_name(r.dtype()), c.out_dtype);
    EXPECT_EQ(r.shape(), Shape(c.out_shape));
    EXPECT_FALSE(r.weak_type());
    if (r.shape() != Shape(c.out_shape)) continue;
    auto got = r.to_vector<double>();
    ASSERT_EQ(got.size(), c.expected.size());
    const DType t = r.dtype();
    const double rel = t == DType::Float16 ? 2e-3 : (t == DType::Float32 ? 2e-6 : 0);
    for (size_t i = 0; i < got.size(); ++i) {
      const double e = c.expected[i];
      if (got[i] == e) continue;  // exact, infinities included
      if (std::isnan(e)) {
        EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": " << got[i] << " vs NaN";
      } else if (rel == 0) {
        EXPECT_EQ(got[i], e) << "element " << i;
      } else {
        EXPECT_NEAR(got[i], e, rel * std::max(1.0, std::fabs(e)) * 4) << "element " << i;
      }
    }
  }
}

// ---- options ----
TEST(Reductions, WhereMaskAndInitial) {
  Array x = jnp::array<int32_t>({1, 3, 4, 2, 5, 2, 6, 3, 8, 1, 3, 9}, {3, 4});
  Array m = jnp::array<bool>({false, false, true, false, false, false, true, true, true, true,
                              true, false},
                             {3, 4});
  jnp::ReduceOptions o;
  o.where = m;
  EXPECT_EQ(jnp::sum(x, 1, o).to_vector<int>(), (std::vector<int>{4, 9, 12}));
  EXPECT_EQ(jnp::prod(x, 1, o).to_vector<int>(), (std::vector<int>{4, 18, 24}));
  o.initial = Array(0);
  EXPECT_EQ(jnp::max(x, 1, o).to_vector<int>(), (std::vector<int>{4, 6, 8}));
  jnp::ReduceOptions mo;
  mo.where = m;
  auto mean = jnp::mean(x, 1, mo).to_vector<float>();
  EXPECT_FLOAT_EQ(mean[0], 4.0f);
  EXPECT_FLOAT_EQ(mean[1], 4.5f);
  EXPECT_FLOAT_EQ(mean[2], 4.0f);
  jnp::ReduceOptions io;
  io.initial = Array(10);
  EXPECT_EQ(jnp::sum(x, jx::none, io).item<int>(), 47 + 10);
  EXPECT_EQ(jnp::max(x, jx::none, io).item<int>(), 10);
  Array e = jnp::zeros({0});
  EXPECT_EQ(jnp::min(e, jx::none, io).item<float>(), 10.0f);
  // A broadcasting mask: a column of the 3x4 input.
  jnp::ReduceOptions co;
  co.where = jnp::array<bool>({true, false, true}, {3, 1});
  EXPECT_EQ(jnp::sum(x, jx::none, co).item<int>(), 10 + 21);
}

TEST(Reductions, DtypeAndPromoteIntegers) {
  Array x = jnp::array<int8_t>({100, 100, 100});
  EXPECT_EQ(jnp::sum(x).dtype(), DType::Int32);
  EXPECT_EQ(jnp::sum(x).item<int>(), 300);
  jnp::ReduceOptions o;
  o.promote_integers = false;
  EXPECT_EQ(jnp::sum(x, jx::none, o).dtype(), DType::Int8);
  EXPECT_EQ(jnp::sum(x, jx::none, o).item<int>(), 300 - 256);
  jnp::ReduceOptions d;
  d.dtype = DType::Float64;
  EXPECT_EQ(jnp::sum(x, jx::none, d).dtype(), DType::Float64);
  EXPECT_EQ(jnp::mean(x, jx::none, d).dtype(), DType::Float64);
  EXPECT_EQ(jnp::sum(jnp::array<uint16_t>({1, 2})).dtype(), DType::UInt32);
  EXPECT_EQ(jnp::prod(jnp::array<bool>({true, true})).dtype(), DType::Int32);
  // Weak scalar input: the result is strong.
  EXPECT_FALSE(jnp::sum(Array(2.5)).weak_type());
  EXPECT_EQ(jnp::sum(Array(2.5)).item<float>(), 2.5f);
  // float16 accumulates in float32: 4096 ones sum exactly (a float16 running sum stalls at 2048).
  Array h = jnp::ones({4096}, DType::Float16);
  EXPECT_EQ(jnp::sum(h).dtype(), DType::Float16);
  EXPECT_EQ(jnp::sum(h).item<float>(), 4096.0f);
  EXPECT_EQ(jnp::cumsum(jnp::array<int8_t>({1, 2})).dtype(), DType::Int8);
  EXPECT_EQ(jnp::cumsum(jnp::array<int8_t>({1, 2}), 0, DType::Int64).dtype(), DType::Int64);
}

TEST(Reductions, ArrayMethods) {
  Array x = jnp::array<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(x.sum().item<float>(), 21.0f);
  EXPECT_EQ(x.sum(0).to_vector<float>(), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(x.max(1, true).shape(), Shape({2, 1}));
  EXPECT_EQ(x.min().item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(x.mean().item<float>(), 3.5f);
  EXPECT_FLOAT_EQ(x.var().item<float>(), 35.0f / 12);
  EXPECT_FLOAT_EQ(x.std(jx::none, 1).item<float>(), std::sqrt(3.5f));
  EXPECT_EQ(x.prod(1).to_vector<float>(), (std::vector<float>{6, 120}));
  EXPECT_EQ(x.argmax().item<int>(), 5);
  EXPECT_EQ(x.argmin(1).to_vector<int>(), (std::vector<int>{0, 0}));
  EXPECT_TRUE(x.all().item<bool>());
  EXPECT_TRUE(x.any(0).to_vector<bool>()[0]);
  EXPECT_EQ(x.cumsum().to_vector<float>(), (std::vector<float>{1, 3, 6, 10, 15, 21}));
  Array y = jnp::array<float>({3, 1, 2});
  EXPECT_EQ(y.sort().to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(y.argsort().to_vector<int>(), (std::vector<int>{1, 2, 0}));
}

TEST(Sorting, TotalOrderNegativeZeroAndNaN) {
  Array x = jnp::array<float>({0.0f, NAN, -0.0f, -1.0f, -NAN, 0.0f, -0.0f});
  auto s = jnp::sort(x).to_vector<float>();
  EXPECT_EQ(s[0], -1.0f);
  for (int i = 1; i <= 2; ++i) EXPECT_TRUE(std::signbit(s[size_t(i)]) && s[size_t(i)] == 0) << i;
  for (int i = 3; i <= 4; ++i) EXPECT_TRUE(!std::signbit(s[size_t(i)]) && s[size_t(i)] == 0) << i;
  EXPECT_TRUE(std::isnan(s[5]) && std::isnan(s[6]));
  EXPECT_EQ(jnp::argsort(x).to_vector<int>(), (std::vector<int>{3, 2, 6, 0, 5, 1, 4}));
  // Descending: reversed, so NaNs first; equal keys keep their order in argsort.
  auto d = jnp::sort(jnp::array<float>({1, NAN, 3})).to_vector<float>();
  EXPECT_TRUE(std::isnan(d[2]));
  EXPECT_TRUE(std::isnan(jnp::sort(jnp::array<float>({1, NAN, 3}), -1, true, true).to_vector<float>()[0]));
  EXPECT_EQ(jnp::argsort(jnp::array<int32_t>({2, 1, 2, 1}), -1, true, true).to_vector<int>(),
            (std::vector<int>{0, 2, 1, 3}));
}

TEST(Sorting, MultiOperandLaxSort) {
  Array k1 = jnp::array<int32_t>({2, 1, 2, 1});
  Array k2 = jnp::array<float>({0.5f, 0.25f, 0.125f, 0.75f});
  Array v = jnp::array<int32_t>({10, 11, 12, 13});
  auto out = jx::lax::sort({k1, k2, v}, 0, true, 2);
  EXPECT_EQ(out[0].to_vector<int>(), (std::vector<int>{1, 1, 2, 2}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{0.25f, 0.75f, 0.125f, 0.5f}));
  EXPECT_EQ(out[2].to_vector<int>(), (std::vector<int>{11, 13, 12, 10}));
  // num_keys = 1: stable on k1 alone.
  auto o1 = jx::lax::sort({k1, v}, 0, true, 1);
  EXPECT_EQ(o1[1].to_vector<int>(), (std::vector<int>{11, 13, 10, 12}));
  // Along axis 0 of a 2-d array.
  Array m = jnp::array<int32_t>({3, 0, 1, 2, 2, 1}, {3, 2});
  EXPECT_EQ(jx::lax::sort(m, 0).to_vector<int>(), (std::vector<int>{1, 0, 2, 1, 3, 2}));
  // Large: threaded rows.
  std::vector<int32_t> big(200000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = int32_t((i * 7919) % 1000);
  Array b = jnp::array(big, Shape{400, 500});
  auto sb = jnp::sort(b, 1).to_vector<int32_t>();
  for (size_t r = 0; r < 400; ++r)
    for (size_t i = 1; i < 500; ++i) ASSERT_LE(sb[r * 500 + i - 1], sb[r * 500 + i]);
}

TEST(Cumulative, CumulativeSumIncludeInitial) {
  Array x = jnp::array<int8_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  Array r = jnp::cumulative_sum(x, 1, std::nullopt, true);
  EXPECT_EQ(r.dtype(), DType::Int32);
  EXPECT_EQ(r.shape(), Shape({2, 4}));
  EXPECT_EQ(r.to_vector<int>(), (std::vector<int>{0, 1, 3, 6, 0, 4, 9, 15}));
}

TEST(Stats, AverageReturned) {
  Array x = jnp::array<float>({1, 2, 3, 4}, {2, 2});
  Array w = jnp::array<float>({1, 3});
  auto [avg, ws] = jnp::average_returned(x, 1, w);
  EXPECT_EQ(avg.to_vector<float>(), (std::vector<float>{1.75f, 3.75f}));  // (1+6)/4, (3+12)/4
  EXPECT_EQ(ws.to_vector<float>(), (std::vector<float>{4, 4}));
  EXPECT_EQ(jnp::quantile(x, std::vector<double>{0.0, 1.0}, 0).shape(), Shape({2, 2}));
  EXPECT_EQ(jnp::quantile(x, std::vector<double>{0.0, 1.0}, 0).to_vector<float>(),
            (std::vector<float>{1, 2, 3, 4}));
}

using jx::testing::expect_error;

TEST(Reductions, Errors) {
  Array x = jnp::zeros({2, 3});
  expect_error<jx::IndexError>([&] { jnp::sum(x, 2); }, "[sum] axis 2 is out of bounds");
  expect_error<jx::IndexError>([&] { jnp::mean(x, -3); }, "[mean] axis -3 is out of bounds");
  expect_error<jx::ValueError>([&] { jnp::sum(x, {0, -2}); }, "[sum] duplicate value in axis");
  expect_error<jx::ValueError>([&] { jnp::max(jnp::zeros({2, 0}), 1); },
                               "[max] zero-size array to reduction operation max");
  jnp::ReduceOptions o;
  o.where = jnp::ones({2, 3}, DType::Bool);
  expect_error<jx::ValueError>([&] { jnp::min(x, 0, o); }, "specify 'initial'");
  o.where = jnp::ones({4}, DType::Bool);
  expect_error<jx::ShapeError>([&] { jnp::sum(x, 0, o); }, "[sum]");
  expect_error<jx::ValueError>([&] { jnp::argmax(jnp::zeros({0})); }, "[argmax]");
  expect_error<jx::IndexError>([&] { jnp::argmin(x, 2); }, "[argmin] axis 2");
  expect_error<jx::IndexError>([&] { jnp::cumsum(x, -3); }, "[cumsum] axis -3");
  expect_error<jx::IndexError>([&] { jnp::sort(x, 2); }, "[sort] axis 2");
  expect_error<jx::ValueError>([&] { jnp::quantile(x, 1.5); }, "[quantile] quantiles must be");
  expect_error<jx::ValueError>([&] { jnp::cumulative_sum(x); }, "[cumulative_sum]");
  expect_error<jx::ShapeError>([&] { jnp::lexsort({jnp::zeros({2}), jnp::zeros({3})}); },
                               "[lexsort] all keys need to be the same shape");
}

}  // namespace
