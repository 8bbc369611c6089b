// dot_general: the fast kernels (oneDNN sgemm, blocked GEMM, converted half types) against
// the naive reference over dtypes x dimension numbers, hand-derived values through lax, and
// the error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backend/cpu/dot.h"
#include "backend/cpu/kernels.h"
#include "jx/jx.h"
#include "support/str.h"
#include "testing/expect_error.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;
using jx::DType;
using jx::Shape;

struct Config {
  Shape lhs, rhs;
  jx::cpu::DotDims dims;
  const char* name;
};

std::vector<Config> configs() {
  return {
      {{3, 4}, {4, 5}, {{1}, {0}, {}, {}}, "matmul"},
      {{4, 3}, {4, 5}, {{0}, {0}, {}, {}}, "lhs transposed"},
      {{3, 4}, {5, 4}, {{1}, {1}, {}, {}}, "rhs transposed"},
      {{4, 3}, {5, 4}, {{0}, {1}, {}, {}}, "both transposed"},
      {{2, 3, 4}, {2, 4, 5}, {{2}, {1}, {0}, {0}}, "batched"},
      {{3, 2, 4}, {4, 2, 5}, {{2}, {0}, {1}, {1}}, "batch in the middle"},
      {{3, 4, 2}, {4, 5, 2}, {{1}, {0}, {2}, {2}}, "batch last"},
      {{2, 3, 4}, {3, 4, 5}, {{1, 2}, {0, 1}, {}, {}}, "two contracting"},
      {{2, 3, 4}, {4, 3, 5}, {{1, 2}, {1, 0}, {}, {}}, "contracting crossed (permute)"},
      {{2, 3, 4, 5}, {3, 2, 5, 6}, {{3}, {2}, {0, 1}, {1, 0}}, "two batch crossed"},
      {{7}, {7}, {{0}, {0}, {}, {}}, "vector dot"},
      {{3}, {4}, {{}, {}, {}, {}}, "outer"},
      {{3, 4}, {4}, {{1}, {0}, {}, {}}, "matvec"},
      {{4}, {4, 6}, {{0}, {0}, {}, {}}, "vecmat"},
      {{}, {}, {{}, {}, {}, {}}, "scalars"},
      {{}, {3, 2}, {{}, {}, {}, {}}, "scalar times matrix"},
      {{3, 0}, {0, 4}, {{1}, {0}, {}, {}}, "empty contraction"},
      {{0, 4}, {4, 5}, {{1}, {0}, {}, {}}, "empty free"},
      {{2, 0, 3}, {2, 3, 4}, {{2}, {1}, {0}, {0}}, "empty free batched"},
      {{0, 3, 4}, {0, 4, 2}, {{2}, {1}, {0}, {0}}, "empty batch"},
      {{1, 1}, {1, 1}, {{1}, {0}, {}, {}}, "1x1"},
      {{3, 1, 4}, {4, 1, 5}, {{2}, {0}, {}, {}}, "unit dims"},
      {{1, 4}, {4, 1}, {{1}, {0}, {}, {}}, "row times column"},
      {{17, 33}, {33, 19}, {{1}, {0}, {}, {}}, "odd sizes"},
      {{33, 17}, {19, 33}, {{0}, {1}, {}, {}}, "odd sizes transposed"},
      {{64, 8, 9}, {64, 9, 7}, {{2}, {1}, {0}, {0}}, "many small batches"},
      {{300, 400}, {400, 350}, {{1}, {0}, {}, {}}, "large (threaded)"},
      {{400, 300}, {350, 400}, {{0}, {1}, {}, {}}, "large transposed"},
      {{5, 70000}, {70000, 3}, {{1}, {0}, {}, {}}, "long contraction"},
      {{2, 260, 270}, {2, 270, 300}, {{2}, {1}, {0}, {0}}, "large batched (blocked edges)"},
  };
}

// Small integers, so that every sum is exact in float32 and the fast and reference kernels
// must agree exactly (each rounds the exact sum once to the output type).
std::vector<char> random_data(DType t, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) {
    if (t == DType::Bool) x = double(rng() % 2);
    else if (jx::is_unsigned_integer(t)) x = double(rng() % 6);
    else x = double(int(rng() % 7) - 3);
  }
  std::vector<char> out(static_cast<size_t>(std::max<int64_t>(n, 1)) * jx::itemsize(t));
  jx::cpu::convert_reference(DType::Float64, t, v.data(), out.data(), n);
  return out;
}

std::vector<double> as_double(DType t, const void* p, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  jx::cpu::convert_reference(t, DType::Float64, p, v.data(), n);
  return v;
}

int64_t out_size(const Config& c) {
  int64_t n = 1;
  auto in = [](const std::vector<int64_t>& v, int64_t d) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  for (int64_t d : c.dims.lhs_batch) n *= c.lhs[size_t(d)];
  for (size_t d = 0; d < c.lhs.size(); ++d)
    if (!in(c.dims.lhs_batch, int64_t(d)) && !in(c.dims.lhs_contracting, int64_t(d))) n *= c.lhs[d];
  for (size_t d = 0; d < c.rhs.size(); ++d)
    if (!in(c.dims.rhs_batch, int64_t(d)) && !in(c.dims.rhs_contracting, int64_t(d))) n *= c.rhs[d];
  return n;
}

void check_fast_vs_reference(DType in, DType out, const Config& c) {
  SCOPED_TRACE(jx::str(c.name, " ", jx::dtype_name(in), "->", jx::dtype_name(out)));
  auto l = random_data(in, c.lhs.numel(), 1);
  auto r = random_data(in, c.rhs.numel(), 2);
  int64_t n = out_size(c);
  std::vector<char> fast(static_cast<size_t>(std::max<int64_t>(n, 1)) * jx::itemsize(out), 7);
  std::vector<char> ref(fast.size(), 9);
  jx::cpu::dot_general(in, out, l.data(), c.lhs.data(), int(c.lhs.size()), r.data(),
                       c.rhs.data(), int(c.rhs.size()), c.dims, fast.data());
  jx::cpu::dot_general_reference(in, out, l.data(), c.lhs.data(), int(c.lhs.size()), r.data(),
                                 c.rhs.data(), int(c.rhs.size()), c.dims, ref.data());
  auto f = as_double(out, fast.data(), n), g = as_double(out, ref.data(), n);
  int bad = 0;
  for (int64_t i = 0; i < n && bad < 5; ++i)
    if (f[size_t(i)] != g[size_t(i)]) {
      ++bad;
      ADD_FAILURE() << "element " << i << ": fast " << f[size_t(i)] << " reference " << g[size_t(i)];
    }
}

TEST(DotKernel, FastMatchesReferenceAllDtypes) {
  const DType types[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                         DType::Int8,    DType::Int16,   DType::Int32,   DType::Int64,
                         DType::UInt8,   DType::UInt16,  DType::UInt32,  DType::UInt64,
                         DType::Bool};
  for (const Config& c : configs()) {
    bool big = c.lhs.numel() * c.rhs.numel() > 10'000'000;
    for (DType t : types) {
      if (big && t != DType::Float32 && t != DType::Float64 && t != DType::Int32)
        continue;  // the slow reference makes every dtype on the big shapes too costly
      check_fast_vs_reference(t, t, c);
    }
  }
}

TEST(DotKernel, PreferredElementTypes) {
  const std::pair<DType, DType> pairs[] = {
      {DType::Int8, DType::Int32},     {DType::BFloat16, DType::Float32},
      {DType::Float16, DType::Float32}, {DType::Int32, DType::Float32},
      {DType::Float32, DType::Float64}, {DType::UInt8, DType::UInt32},
      {DType::Int16, DType::Float64},
  };
  for (const Config& c : configs()) {
    if (c.lhs.numel() * c.rhs.numel() > 10'000'000) continue;
    for (auto [in, out] : pairs) check_fast_vs_reference(in, out, c);
  }
}

// Real-valued data: float32/float64 fast kernels within rounding of the reference.
TEST(DotKernel, RealValuesWithinRounding) {
  std::mt19937 rng(5);
  std::normal_distribution<double> nd;
  for (DType t : {DType::Float32, DType::Float64}) {
    for (const Config& c : configs()) {
      if (c.lhs.numel() * c.rhs.numel() > 10'000'000) continue;
      SCOPED_TRACE(jx::str(c.name, " ", jx::dtype_name(t)));
      std::vector<double> ld(static_cast<size_t>(c.lhs.numel())), rd(static_cast<size_t>(c.rhs.numel()));
      for (auto& x : ld) x = nd(rng);
      for (auto& x : rd) x = nd(rng);
      std::vector<char> l(ld.size() * jx::itemsize(t) + 8), r(rd.size() * jx::itemsize(t) + 8);
      jx::cpu::convert_reference(DType::Float64, t, ld.data(), l.data(), c.lhs.numel());
      jx::cpu::convert_reference(DType::Float64, t, rd.data(), r.data(), c.rhs.numel());
      int64_t n = out_size(c);
      std::vector<char> fast(static_cast<size_t>(n) * jx::itemsize(t) + 8), ref(fast.size());
      jx::cpu::dot_general(t, t, l.data(), c.lhs.data(), int(c.lhs.size()), r.data(),
                           c.rhs.data(), int(c.rhs.size()), c.dims, fast.data());
      jx::cpu::dot_general_reference(t, t, l.data(), c.lhs.data(), int(c.lhs.size()), r.data(),
                                     c.rhs.data(), int(c.rhs.size()), c.dims, ref.data());
      auto f = as_double(t, fast.data(), n), g = as_double(t, ref.data(), n);
      // Error bound ~ K * eps * sum|a||b|; sum|a||b| ~ K for unit normals.
      int64_t K = 1;
      for (int64_t d : c.dims.lhs_contracting) K *= c.lhs[size_t(d)];
      double eps = t == DType::Float32 ? 1.2e-7 : 2.3e-16;
      double tol = 4 * eps * double(K) * std::sqrt(double(K) + 1) + eps;
      for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(f[size_t(i)], g[size_t(i)], tol) << i;
    }
  }
}

TEST(DotKernel, BlockedGemmFloatStrides) {
  // gemm_blocked on float32 (normally sgemm) with a transposed, strided A.
  const int64_t M = 37, N = 41, K = 29;
  std::vector<float> a(static_cast<size_t>(K * M * 2)), b(static_cast<size_t>(K * N)),
      c(static_cast<size_t>(M * N));
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 7) - 3);
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 5) - 2);
  // A(m,k) = a[k*2M + m*2]
  jx::cpu::gemm_blocked<float>(M, N, K, a.data(), 2, 2 * M, b.data(), N, 1, c.data(), N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float s = 0;
      for (int64_t k = 0; k < K; ++k) s += a[size_t(k * 2 * M + m * 2)] * b[size_t(k * N + n)];
      ASSERT_EQ(c[size_t(m * N + n)], s);
    }
}

// ---- through lax, hand-derived values ----

TEST(DotGeneral, MatmulValues) {
  Array a = jnp::array<float>({{1, 2, 3}, {4, 5, 6}});
  Array b = jnp::array<float>({{7, 8}, {9, 10}, {11, 12}});
  Array c = jx::lax::dot(a, b);
  EXPECT_EQ(c.shape(), (Shape{2, 2}));
  EXPECT_EQ(c.dtype(), DType::Float32);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{58, 64, 139, 154}));
}

TEST(DotGeneral, BatchAndTransposedValues) {
  // out[b,i,j] = sum_k x[k,b,i] y[b,j,k]
  Array x = jnp::array<double>({1, 2, 3, 4, 5, 6, 7, 8}, Shape{2, 2, 2});
  Array y = jnp::array<double>({1, 0, 0, 1, 2, 1, 1, 2}, Shape{2, 2, 2});
  Array z = jx::lax::dot_general(x, y, {{0}, {2}, {1}, {0}});
  EXPECT_EQ(z.shape(), (Shape{2, 2, 2}));
  // b=0: x[:,0,:] = [[1,2],[5,6]] (k,i); y[0] = [[1,0],[0,1]] (j,k)
  //   out[0,i,j] = sum_k x[k,0,i] y[0,j,k]: i=0: j0: 1, j1: 5; i=1: j0: 2, j1: 6
  // b=1: x[:,1,:] = [[3,4],[7,8]]; y[1] = [[2,1],[1,2]]
  //   i=0: j0: 3*2+7*1=13, j1: 3*1+7*2=17; i=1: j0: 4*2+8=16, j1: 4+16=20
  EXPECT_EQ(z.to_vector<double>(), (std::vector<double>{1, 5, 2, 6, 13, 17, 16, 20}));
}

TEST(DotGeneral, IntegerWrapsInOutputType) {
  Array a = jnp::array<int8_t>({100, 100});
  Array b = jnp::array<int8_t>({2, 1});
  EXPECT_EQ(jx::lax::dot(a, b).item<int8_t>(), int8_t(300 - 256));
  EXPECT_EQ(jx::lax::dot_general(a, b, {{0}, {0}, {}, {}}, DType::Int32).item<int32_t>(), 300);
}

TEST(DotGeneral, BoolIsOrOfAnds) {
  Array a = jnp::array<bool>({{true, false}, {false, false}});
  Array b = jnp::array<bool>({{true, true}, {true, true}});
  EXPECT_EQ(jx::lax::dot(a, b).to_vector<bool>(), (std::vector<bool>{true, true, false, false}));
}

TEST(DotGeneral, WeakTypeAndPreferred) {
  Array s = jx::lax::dot_general(Array(2.0), Array(3.0), {});
  EXPECT_TRUE(s.weak_type());
  EXPECT_EQ(s.item<float>(), 6.0f);
  Array a = jnp::array<float>({1, 2});
  EXPECT_FALSE(jx::lax::dot(a, a).weak_type());
  Array p = jx::lax::dot_general(a, a, {{0}, {0}, {}, {}}, DType::Float64);
  EXPECT_EQ(p.dtype(), DType::Float64);
  EXPECT_EQ(p.item<double>(), 5.0);
  Array h = jnp::array<jx::bhalf>({jx::bhalf(1.5f), jx::bhalf(2.0f)});
  EXPECT_EQ(jx::lax::dot(h, h).dtype(), DType::BFloat16);
  EXPECT_EQ(jx::lax::dot(h, h).item<float>(), 6.25f);
}

// ---- errors ----

using jx::testing::expect_error;

TEST(DotGeneral, Errors) {
  Array a = jnp::zeros({32, 10});
  Array b = jnp::zeros({5, 3});
  expect_error<jx::ShapeError>([&] { jx::lax::dot(a, b); },
                               "[dot_general] contracting dimensions differ: f32[32,10] · f32[5,3]; "
                               "lhs dim 1 has size 10, rhs dim 0 has size 5");
  expect_error<jx::ShapeError>(
      [&] { jx::lax::dot_general(jnp::zeros({2, 3}), jnp::zeros({4, 3}), {{1}, {1}, {0}, {0}}); },
      "[dot_general] batch dimensions differ: f32[2,3] · f32[4,3]; lhs dim 0 has size 2, rhs dim "
      "0 has size 4");
  expect_error<jx::IndexError>(
      [&] { jx::lax::dot_general(a, a, {{2}, {1}, {}, {}}); },
      "[dot_general] lhs_contracting (2,) is out of range for an operand of rank 2");
  expect_error<jx::ShapeError>([&] { jx::lax::dot_general(a, a, {{1}, {}, {}, {}}); },
                               "[dot_general] lhs_contracting (1,) and rhs_contracting () must "
                               "have the same length");
  expect_error<jx::ValueError>([&] { jx::lax::dot_general(a, a, {{0}, {0}, {0}, {1}}); },
                               "repeats dimension 0 of f32[32,10]");
  expect_error<jx::DTypeError>(
      [&] { jx::lax::dot(jnp::zeros({2}), jnp::zeros({2}, DType::Float64)); },
      "[dot_general] operands must have the same dtype, got f32[2], f64[2]");
  expect_error<jx::DTypeError>(
      [&] { jx::lax::dot_general(jnp::zeros({2}), jnp::zeros({2}), {{0}, {0}, {}, {}}, DType::Int32); },
      "[dot_general] preferred_element_type int32 is incompatible with the operands f32[2] · f32[2]");
  expect_error<jx::DTypeError>(
      [&] {
        jx::lax::dot_general(jnp::zeros({2}, DType::Int32), jnp::zeros({2}, DType::Int32),
                             {{0}, {0}, {}, {}}, DType::Int16);
      },
      "must not be narrower than the operands i32[2] · i32[2]");
  expect_error<jx::DTypeError>(
      [&] {
        jx::lax::dot_general(jnp::zeros({2}, DType::Int8), jnp::zeros({2}, DType::Int8),
                             {{0}, {0}, {}, {}}, DType::UInt32);
      },
      "must have the same signedness");
  expect_error<jx::ShapeError>([&] { jx::lax::dot(jnp::zeros({2, 2, 2}), a); },
                               "[dot] operands must have rank 1 or 2, got f32[2,2,2] · f32[32,10]");
}

}  // namespace
