// Reduction, arg-reduction and cumulative kernels against their naive references over
// every dtype and many shapes (scalars, size 0, odd sizes, every axis subset of 3-d
// arrays, > 1M elements for the threaded paths); then the primitives' rules through lax
// on hand-derived values, and their errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

#include "backend/cpu/reduce.h"
#include "jx/lax.h"
#include "jx/numpy.h"
#include "support/dtype_switch.h"
#include "support/str.h"
#include "testing/expect_error.h"

namespace {

using jx::Array;
using jx::DType;
using jx::Shape;
using jx::cpu::CumOp;
using jx::cpu::ReduceOp;
namespace lax = jx::lax;
namespace jnp = jx::numpy;

const DType kAllDTypes[] = {DType::Bool,   DType::Int8,    DType::Int16,    DType::Int32,
                            DType::Int64,  DType::UInt8,   DType::UInt16,   DType::UInt32,
                            DType::UInt64, DType::Float16, DType::BFloat16, DType::Float32,
                            DType::Float64};

int64_t numel(const std::vector<int64_t>& s) {
  return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<int64_t>());
}

// Random values of dtype t as raw bytes. `narrow` gives values near 1 (for products);
// `ties` gives few distinct values (for arg-reductions and sorting); `nans` sprinkles NaNs.
struct Gen {
  bool narrow = false, ties = false, nans = false;
};
template <class T>
void fill_random(T* p, int64_t n, std::mt19937& rng, Gen g) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      p[i] = (rng() % 3) != 0;
    } else if constexpr (std::is_integral_v<T>) {
      int64_t v = g.ties ? int64_t(rng() % 5) : int64_t(rng() % 200) - 100;
      if (g.narrow) v = int64_t(rng() % 3) - 1;
      if (std::is_unsigned_v<T> && v < 0) v = -v;
      p[i] = T(v);
    } else {
      double v = g.ties ? double(rng() % 5) : std::uniform_real_distribution<double>(-2, 2)(rng);
      if (g.narrow) v = 1 + std::uniform_real_distribution<double>(-1e-3, 1e-3)(rng);
      if (g.nans && rng() % 97 == 0) v = NAN;
      if constexpr (std::is_same_v<T, double>) p[i] = v;
      else p[i] = T(float(v));
    }
  }
}

std::vector<uint8_t> random_data(DType t, int64_t n, uint32_t seed, Gen g = {}) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(size_t(n) * jx::itemsize(t) + 8, 0);
  JX_DTYPE_SWITCH(t, T, fill_random<T>(reinterpret_cast<T*>(bytes.data()), n, rng, g));
  return bytes;
}

template <class T>
std::string first_mismatch(const T* x, const T* y, int64_t n, double rel,
                           const std::vector<double>& scale) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) {
      if (x[i] != y[i]) return jx::str("element ", i, ": ", +x[i], " vs ", +y[i]);
    } else {
      double u, v;
      if constexpr (std::is_same_v<T, double>) u = x[i], v = y[i];
      else u = double(float(x[i])), v = double(float(y[i]));
      if (std::isnan(u) && std::isnan(v)) continue;
      if (u == v) continue;
      double s = scale.empty() ? std::max(std::fabs(u), std::fabs(v)) : scale[size_t(i)];
      if (!(std::fabs(u - v) <= rel * s + 1e-30))
        return jx::str("element ", i, ": ", u, " vs ", v, " (scale ", s, ")");
    }
  }
  return "";
}

// Compares n elements of dtype t; floats within rel (of `scale`), NaN == NaN.
::testing::AssertionResult close(DType t, const uint8_t* a, const uint8_t* b, int64_t n,
                                 double rel, const std::vector<double>& scale = {}) {
  std::string err;
  JX_DTYPE_SWITCH(t, T,
                  err = first_mismatch<T>(reinterpret_cast<const T*>(a),
                                          reinterpret_cast<const T*>(b), n, rel, scale));
  if (err.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << err;
}

double float_rel(DType t) {
  switch (t) {
    case DType::Float16: return 2e-3;
    case DType::BFloat16: return 1.6e-2;
    case DType::Float32: return 2e-6;
    default: return 1e-13;
  }
}

bool supports(ReduceOp op, DType t) {
  if (op == ReduceOp::Sum || op == ReduceOp::Prod) return t != DType::Bool;
  if (op == ReduceOp::And || op == ReduceOp::Or || op == ReduceOp::Xor) return !jx::is_floating(t);
  return true;
}

const ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min,
                         ReduceOp::And, ReduceOp::Or,   ReduceOp::Xor};

// Sum of |x| over each output: the scale a float sum's error is measured against.
std::vector<double> abs_sums(DType t, const uint8_t* x, const std::vector<int64_t>& shape,
                             const std::vector<bool>& red) {
  std::vector<uint8_t> ax(size_t(numel(shape)) * 8 + 8);
  double* d = reinterpret_cast<double*>(ax.data());
  JX_DTYPE_SWITCH(t, T, {
    const T* p = reinterpret_cast<const T*>(x);
    for (int64_t i = 0; i < numel(shape); ++i) d[i] = std::fabs(double(float(p[i])));
    if (t == DType::Float64)
      for (int64_t i = 0; i < numel(shape); ++i) d[i] = std::fabs(double(p[i]));
  });
  int64_t nout = 1;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!red[i]) nout *= shape[i];
  std::vector<uint8_t> out(size_t(nout) * 8 + 8);
  std::unique_ptr<bool[]> f(new bool[shape.size() + 1]);
  for (size_t i = 0; i < shape.size(); ++i) f[i] = red[i];
  jx::cpu::reduce_reference(ReduceOp::Sum, DType::Float64, d, shape.data(), int(shape.size()),
                            f.get(), out.data());
  const double* o = reinterpret_cast<const double*>(out.data());
  return std::vector<double>(o, o + nout);
}

void check_reduce(const std::vector<int64_t>& shape, const std::vector<bool>& red,
                  const std::vector<DType>& dtypes, uint32_t seed) {
  int64_t nout = 1;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!red[i]) nout *= shape[i];
  std::unique_ptr<bool[]> f(new bool[shape.size() + 1]);
  for (size_t i = 0; i < shape.size(); ++i) f[i] = red[i];
  for (DType t : dtypes) {
    for (ReduceOp op : kOps) {
      if (!supports(op, t)) continue;
      Gen g;
      g.narrow = op == ReduceOp::Prod;
      g.nans = op == ReduceOp::Max || op == ReduceOp::Min;
      auto x = random_data(t, numel(shape), seed + uint32_t(op), g);
      const size_t ob = size_t(nout) * jx::itemsize(t) + 8;
      std::vector<uint8_t> fast(ob, 0xAB), ref(ob, 0xCD);
      jx::cpu::reduce(op, t, x.data(), shape.data(), int(shape.size()), f.get(), fast.data());
      jx::cpu::reduce_reference(op, t, x.data(), shape.data(), int(shape.size()), f.get(),
                                ref.data());
      std::vector<double> scale;
      if (op == ReduceOp::Sum && jx::is_floating(t)) scale = abs_sums(t, x.data(), shape, red);
      // Float products round once per factor, in a different order: allow sqrt(n) ulps.
      double rel = float_rel(t);
      if (op == ReduceOp::Prod && nout > 0)
        rel *= 1 + 4 * std::sqrt(double(numel(shape) / nout));
      ASSERT_TRUE(close(t, fast.data(), ref.data(), nout, rel, scale))
          << "op " << int(op) << " dtype " << t << " shape " << jx::shape_str(Shape(shape))
          << " reduced " << ::testing::PrintToString(red);
    }
  }
}

std::vector<DType> all_dtypes() { return {std::begin(kAllDTypes), std::end(kAllDTypes)}; }

TEST(ReduceKernel, MatchesReferenceOnSmallShapes) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {1}, {7}, {33}, {1, 1}, {3, 0, 2},
                                                    {5, 1, 3}, {2, 3, 4}, {7, 1, 5, 1}, {17, 9},
                                                    {3, 5, 64}, {3, 5, 65}};
  uint32_t seed = 1;
  for (const auto& s : shapes) {
    const size_t nd = s.size();
    for (uint32_t mask = 0; mask < (1u << nd); ++mask) {
      std::vector<bool> red(nd);
      for (size_t d = 0; d < nd; ++d) red[d] = (mask >> d) & 1;
      check_reduce(s, red, all_dtypes(), seed++);
    }
  }
}

TEST(ReduceKernel, MatchesReferenceOnEveryAxisSubsetOf3d) {
  const std::vector<int64_t> s = {13, 37, 29};
  for (uint32_t mask = 0; mask < 8; ++mask)
    check_reduce(s, {bool(mask & 1), bool(mask & 2), bool(mask & 4)}, all_dtypes(), 100 + mask);
}

TEST(ReduceKernel, MatchesReferenceOnThreadedShapes) {
  const std::vector<DType> dts = {DType::Float32, DType::Int32, DType::Float64, DType::UInt8,
                                  DType::Float16};
  check_reduce({(1 << 20) + 3}, {true}, dts, 7);                    // one long row
  check_reduce({1000, 1100}, {false, true}, dts, 8);                // many rows
  check_reduce({1000, 1100}, {true, false}, dts, 9);                // accumulate rows
  check_reduce({3, 400001}, {false, true}, dts, 10);                // few outputs, long rows
  check_reduce({600000, 2}, {true, false}, dts, 11);                // few outputs, short rows
  check_reduce({2, 300, 2001}, {true, false, true}, dts, 12);       // interleaved
  check_reduce({40, 300, 48}, {true, false, true}, dts, 14);        // interleaved, short rows
  check_reduce({70, 300, 60}, {false, true, false}, dts, 13);
}

TEST(ReduceKernel, Float32SumOf16MIsAccurate) {
  // Pairwise accumulation: the error stays near float32's epsilon even for 16M terms;
  // a naive running float sum would be off by ~1e-3 relative here.
  const int64_t n = 1 << 24;
  std::vector<float> x(static_cast<size_t>(n));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0, 1);
  double exact = 0;
  for (auto& v : x) {
    v = u(rng);
    exact += v;
  }
  int64_t shape[1] = {n};
  bool red[1] = {true};
  float out = 0;
  jx::cpu::reduce(ReduceOp::Sum, DType::Float32, x.data(), shape, 1, red, &out);
  EXPECT_NEAR(out / exact, 1.0, 1e-6);
}

TEST(ReduceKernel, EmptyReductionsGiveTheIdentity) {
  int64_t shape[2] = {3, 0};
  bool red[2] = {false, true};
  float out[3];
  jx::cpu::reduce(ReduceOp::Max, DType::Float32, nullptr, shape, 2, red, out);
  EXPECT_EQ(out[0], -INFINITY);
  jx::cpu::reduce(ReduceOp::Min, DType::Float32, nullptr, shape, 2, red, out);
  EXPECT_EQ(out[2], INFINITY);
  jx::cpu::reduce(ReduceOp::Prod, DType::Float32, nullptr, shape, 2, red, out);
  EXPECT_EQ(out[1], 1.0f);
  int32_t io[3];
  jx::cpu::reduce(ReduceOp::Max, DType::Int32, nullptr, shape, 2, red, io);
  EXPECT_EQ(io[0], std::numeric_limits<int32_t>::min());
  jx::cpu::reduce(ReduceOp::Min, DType::Int32, nullptr, shape, 2, red, io);
  EXPECT_EQ(io[0], std::numeric_limits<int32_t>::max());
  jx::cpu::reduce(ReduceOp::And, DType::Int32, nullptr, shape, 2, red, io);
  EXPECT_EQ(io[0], -1);
}

// ---- argmax / argmin ----
TEST(ArgReduceKernel, MatchesReference) {
  const std::vector<std::vector<int64_t>> shapes = {{1}, {9}, {4, 7}, {3, 5, 2}, {1, 1, 6},
                                                    {2000, 700}, {3, 500001}};
  uint32_t seed = 20;
  for (const auto& s : shapes)
    for (int axis = 0; axis < int(s.size()); ++axis)
      for (DType t : kAllDTypes)
        for (DType it : {DType::Int32, DType::Int64}) {
          if (numel(s) > 100000 && t != DType::Float32 && t != DType::Int8) continue;
          Gen g;
          g.ties = true;
          g.nans = true;
          auto x = random_data(t, numel(s), seed++, g);
          int64_t nout = numel(s) / s[size_t(axis)];
          for (bool is_max : {true, false}) {
            std::vector<uint8_t> fast(size_t(nout) * 8 + 8, 1), ref(size_t(nout) * 8 + 8, 2);
            jx::cpu::argreduce(is_max, t, it, x.data(), s.data(), int(s.size()), axis, fast.data());
            jx::cpu::argreduce_reference(is_max, t, it, x.data(), s.data(), int(s.size()), axis,
                                         ref.data());
            ASSERT_TRUE(close(it, fast.data(), ref.data(), nout, 0))
                << "dtype " << t << " shape " << jx::shape_str(Shape(s)) << " axis " << axis;
          }
        }
}

// ---- cumulative ----
TEST(CumulativeKernel, MatchesReference) {
  const std::vector<std::vector<int64_t>> shapes = {{0}, {1}, {9}, {4, 0}, {4, 7}, {3, 5, 2},
                                                    {300, 400}, {2, 200001}, {200001, 2}};
  uint32_t seed = 40;
  const CumOp ops[] = {CumOp::Sum, CumOp::Prod, CumOp::Max, CumOp::Min, CumOp::LogSumExp};
  for (const auto& s : shapes)
    for (int axis = 0; axis < int(s.size()); ++axis)
      for (DType t : kAllDTypes)
        for (CumOp op : ops) {
          const bool fl = jx::is_floating(t);
          if (op == CumOp::LogSumExp && !fl) continue;
          if ((op == CumOp::Sum || op == CumOp::Prod) && t == DType::Bool) continue;
          if (numel(s) > 100000 && t != DType::Float32 && t != DType::Int32) continue;
          Gen g;
          g.narrow = op == CumOp::Prod;
          g.nans = op == CumOp::Max;
          auto x = random_data(t, numel(s), seed++, g);
          const size_t ob = size_t(numel(s)) * jx::itemsize(t) + 8;
          for (bool rev : {false, true}) {
            std::vector<uint8_t> fast(ob, 1), ref(ob, 2);
            jx::cpu::cumulative(op, t, x.data(), s.data(), int(s.size()), axis, rev, fast.data());
            jx::cpu::cumulative_reference(op, t, x.data(), s.data(), int(s.size()), axis, rev,
                                          ref.data());
            ASSERT_TRUE(close(t, fast.data(), ref.data(), numel(s), 0))
                << "op " << int(op) << " dtype " << t << " shape " << jx::shape_str(Shape(s))
                << " axis " << axis << " reverse " << rev;
          }
        }
}

// ---- primitives through lax: hand-derived values ----
TEST(ReducePrimitives, SumMaxOverAxes) {
  Array x = jnp::array<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(lax::reduce_sum(x, {0}).to_vector<float>(), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(lax::reduce_sum(x, {1}).to_vector<float>(), (std::vector<float>{6, 15}));
  EXPECT_EQ(lax::reduce_sum(x, {-1, 0}).item<float>(), 21.0f);
  EXPECT_EQ(lax::reduce_max(x, {1}).to_vector<float>(), (std::vector<float>{3, 6}));
  EXPECT_EQ(lax::reduce_min(x, {0}).to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(lax::reduce_prod(x, {1}).to_vector<float>(), (std::vector<float>{6, 120}));
  EXPECT_EQ(lax::reduce_sum(x, {}).shape(), Shape({2, 3}));
  EXPECT_EQ(lax::reduce_sum(x, {0, 1}).shape(), Shape{});
}

TEST(ReducePrimitives, WeakTypeAndDtypeFollowTheOperand) {
  Array w = lax::broadcast_in_dim(Array(2.0), {3}, {});  // weak f32
  Array s = lax::reduce_sum(w, {0});
  EXPECT_TRUE(s.weak_type());
  EXPECT_EQ(s.dtype(), DType::Float32);
  EXPECT_EQ(s.item<float>(), 6.0f);
  Array i8 = jnp::array<int8_t>({100, 100, 100});
  Array si = lax::reduce_sum(i8, {0});
  EXPECT_EQ(si.dtype(), DType::Int8);
  EXPECT_EQ(si.item<int>(), int(int8_t(300 - 256)));  // wraps, as XLA
}

TEST(ReducePrimitives, NaNPropagatesThroughMaxMin) {
  Array x = jnp::array<float>({1, NAN, 3});
  EXPECT_TRUE(std::isnan(lax::reduce_max(x, {0}).item<float>()));
  EXPECT_TRUE(std::isnan(lax::reduce_min(x, {0}).item<float>()));
}

TEST(ReducePrimitives, LogicalReductions) {
  Array b = jnp::array<bool>({true, false, true});
  EXPECT_FALSE(lax::reduce_and(b, {0}).item<bool>());
  EXPECT_TRUE(lax::reduce_or(b, {0}).item<bool>());
  EXPECT_FALSE(lax::reduce_xor(b, {0}).item<bool>());
  Array i = jnp::array<int32_t>({6, 3, 5});
  EXPECT_EQ(lax::reduce_and(i, {0}).item<int>(), 6 & 3 & 5);
  EXPECT_EQ(lax::reduce_or(i, {0}).item<int>(), 6 | 3 | 5);
  EXPECT_EQ(lax::reduce_xor(i, {0}).item<int>(), 6 ^ 3 ^ 5);
  EXPECT_EQ(lax::reduce_max(b, {0}).dtype(), DType::Bool);
}

TEST(ReducePrimitives, ArgmaxFirstNaNAndTiesWin) {
  Array x = jnp::array<float>({1, 3, NAN, 3, NAN});
  EXPECT_EQ(lax::argmax(x, 0).item<int>(), 2);
  EXPECT_EQ(lax::argmin(x, 0).item<int>(), 2);
  Array y = jnp::array<float>({1, 3, 0, 3, 0});
  EXPECT_EQ(lax::argmax(y, 0).item<int>(), 1);
  EXPECT_EQ(lax::argmin(y, 0).item<int>(), 2);
  Array z = jnp::array<int32_t>({4, 9, 9, 1, 2, 0}, {2, 3});
  EXPECT_EQ(lax::argmax(z, 1).to_vector<int>(), (std::vector<int>{1, 1}));
  EXPECT_EQ(lax::argmax(z, 0, DType::Int64).dtype(), DType::Int64);
  EXPECT_EQ(lax::argmin(z, 0).to_vector<int>(), (std::vector<int>{1, 1, 1}));
}

TEST(CumulativePrimitives, HandValues) {
  Array x = jnp::array<float>({1, 2, 3, 4});
  EXPECT_EQ(lax::cumsum(x).to_vector<float>(), (std::vector<float>{1, 3, 6, 10}));
  EXPECT_EQ(lax::cumsum(x, 0, true).to_vector<float>(), (std::vector<float>{10, 9, 7, 4}));
  EXPECT_EQ(lax::cumprod(x).to_vector<float>(), (std::vector<float>{1, 2, 6, 24}));
  Array y = jnp::array<int32_t>({3, 1, 4, 1, 5, 9}, {2, 3});
  EXPECT_EQ(lax::cummax(y, 1).to_vector<int>(), (std::vector<int>{3, 3, 4, 1, 5, 9}));
  EXPECT_EQ(lax::cummin(y, 0).to_vector<int>(), (std::vector<int>{3, 1, 4, 1, 1, 4}));
  Array z = jnp::array<double>({0, 0, std::log(2.0)});
  auto c = lax::cumlogsumexp(z).to_vector<double>();
  EXPECT_NEAR(c[0], 0.0, 1e-15);
  EXPECT_NEAR(c[1], std::log(2.0), 1e-15);
  EXPECT_NEAR(c[2], std::log(4.0), 1e-15);
}

using jx::testing::expect_error;

TEST(ReducePrimitives, Errors) {
  Array x = jnp::array<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_error<jx::IndexError>([&] { lax::reduce_sum(x, {2}); }, "[reduce_sum] axis 2");
  expect_error<jx::IndexError>([&] { lax::reduce_max(x, {0, -2}); }, "appears twice");
  expect_error<jx::DTypeError>([&] { lax::reduce_and(x, {0}); }, "[reduce_and]");
  expect_error<jx::DTypeError>([&] { lax::reduce_sum(jnp::array<bool>({true}), {0}); },
                               "[reduce_sum] does not accept bool[1]");
  Array e = jnp::zeros({2, 0});
  expect_error<jx::ValueError>([&] { lax::argmax(e, 1); }, "[argmax] needs a non-empty");
  expect_error<jx::IndexError>([&] { lax::argmin(x, 5); }, "[argmin] axis 5");
  expect_error<jx::DTypeError>([&] { lax::argmax(x, 0, DType::Float32); }, "index_dtype");
  expect_error<jx::IndexError>([&] { lax::cumsum(x, 3); }, "[cumsum] axis 3");
  expect_error<jx::DTypeError>([&] { lax::cumlogsumexp(jnp::array<int32_t>({1})); },
                               "[cumlogsumexp] needs a floating dtype");
}

}  // namespace
