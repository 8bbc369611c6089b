// The register-tiled float32 GEMM (backend/cpu/small_gemm.h) against a float64 loop, over
// shapes that exercise every tile (rows 1-6, split into tiles of nearly equal height, 1-4
// vectors of columns), both layouts of A, contractions shorter and longer than one slice
// (slicing changes no bit), and accumulation;
// eager dot_general on small products, and its contraction split across threads (a long
// contraction with a small result), against float64.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <vector>

#include "backend/cpu/small_gemm.h"
#include "jx/jx.h"

namespace jx::testing {
namespace {

namespace jnp = jx::numpy;

std::vector<float> values(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = 2654435761u * (seed + 1);
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = float(double(s >> 8) / double(1 << 24) - 0.5);
  }
  return v;
}

// C (+)= A B in float64, A(m, k) = a[m*a_m + k*a_k].
std::vector<double> reference(int64_t M, int64_t N, int64_t K, const std::vector<float>& a, int64_t a_m, int64_t a_k,
                              const std::vector<float>& b, const std::vector<float>& c0) {
  std::vector<double> c(size_t(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = c0.empty() ? 0.0 : c0[size_t(i * N + j)];
      for (int64_t k = 0; k < K; ++k) s += double(a[size_t(i * a_m + k * a_k)]) * b[size_t(k * N + j)];
      c[size_t(i * N + j)] = s;
    }
  return c;
}

// Float32 sums of K products of values in [-0.5, 0.5): the error stays far below
// K * 2^-24 * 0.25 (each rounding at most half an ulp of a partial sum of that size).
void expect_close(const std::vector<float>& got, const std::vector<double>& want, int64_t K, const char* what) {
  const double tol = 1e-6 + double(K) * 0.25 * std::ldexp(1.0, -23);
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol) << what << " element " << i;
}

TEST(SmallGemm, MatchesFloat64OverTilesAndLayouts) {
  if (!cpu::sgemm_tiles_supported(64)) GTEST_SKIP() << "no vector FMA in this build: the library GEMM runs instead";
  for (int64_t M : {1, 2, 3, 5, 6, 7, 13, 16, 32})
    for (int64_t N : {16, 32, 48, 64, 80, 128})
      for (int64_t K : {0, 1, 7, 64}) {
        for (bool lhs_t : {false, true}) {
          std::vector<float> a = values(M * K, 1), b = values(K * N, 2), c(size_t(M * N), 99.0f);
          cpu::small_sgemm({M, N, K, lhs_t}, a.data(), b.data(), c.data());
          expect_close(c, reference(M, N, K, a, lhs_t ? 1 : K, lhs_t ? M : 1, b, {}), K, "small_sgemm");
        }
      }
}

TEST(SmallGemm, LongContractionsAndAccumulation) {
  if (!cpu::sgemm_tiles_supported(64)) GTEST_SKIP() << "no vector FMA in this build";
  // K within one slice and past it (512), not a multiple of it; A read with a row
  // stride of 2 * K.
  for (int64_t K : {129, 300, 1100}) {
    const int64_t M = 11, N = 64;
    std::vector<float> a = values(M * 2 * K, 3), b = values(K * N, 4), c0 = values(M * N, 5), c = c0;
    cpu::sgemm_tiles(M, N, K, a.data(), 2 * K, 1, b.data(), N, c.data(), true);
    expect_close(c, reference(M, N, K, a, 2 * K, 1, b, c0), K, "accumulated");
    cpu::sgemm_tiles(M, N, K, a.data(), 2 * K, 1, b.data(), N, c.data(), false);
    expect_close(c, reference(M, N, K, a, 2 * K, 1, b, {}), K, "overwritten");
  }
}

TEST(SmallGemm, ContractionSlicesChangeNoBit) {
  if (!cpu::sgemm_tiles_supported(64)) GTEST_SKIP() << "no vector FMA in this build";
  // Each element sums k in order whatever the slices: 1100 in one call (three slices)
  // equals 600 (two slices) followed by 500 accumulated (one), bit for bit.
  const int64_t M = 16, N = 64, K = 1100;
  std::vector<float> a = values(K * M, 6), b = values(K * N, 7), whole(size_t(M * N)), parts(size_t(M * N));
  cpu::sgemm_tiles(M, N, K, a.data(), 1, M, b.data(), N, whole.data(), false);
  cpu::sgemm_tiles(M, N, 600, a.data(), 1, M, b.data(), N, parts.data(), false);
  cpu::sgemm_tiles(M, N, K - 600, a.data() + 600 * M, 1, M, b.data() + 600 * N, N, parts.data(), true);
  for (size_t i = 0; i < whole.size(); ++i) ASSERT_EQ(whole[i], parts[i]) << "element " << i;
}

TEST(SmallGemm, SupportNeedsWholeVectorsAndSmallWork) {
  EXPECT_FALSE(cpu::small_sgemm_supported(32, 60, 64));     // 60 columns: not whole vectors
  EXPECT_FALSE(cpu::small_sgemm_supported(512, 512, 512));  // threaded GEMM territory
  EXPECT_FALSE(cpu::small_sgemm_supported(0, 64, 64));
}

// Eager float32 products small enough for the tiles (a plain matmul, A contracted along
// its rows, a batched product run a batch per thread) against float64.
TEST(SmallGemm, EagerSmallProductsMatchFloat64) {
  auto make = [](Shape s, uint32_t seed) {
    std::vector<float> v = values(s.numel(), seed);
    return jnp::array(std::vector<double>(v.begin(), v.end()), s).astype(DType::Float32);
  };
  struct Case {
    Shape a, b;
    lax::DotDimensionNumbers dims;
  };
  const Case cases[] = {{{16, 64}, {64, 64}, {{1}, {0}, {}, {}}},
                        {{64, 16}, {64, 48}, {{0}, {0}, {}, {}}},
                        {{3, 8, 32}, {3, 32, 32}, {{2}, {1}, {0}, {0}}}};
  for (const Case& c : cases) {
    const Array a = make(c.a, 8), b = make(c.b, 9);
    std::vector<float> g = lax::dot_general(a, b, c.dims).to_vector<float>();
    std::vector<double> w =
        lax::dot_general(a.astype(DType::Float64), b.astype(DType::Float64), c.dims).to_vector<double>();
    ASSERT_EQ(g.size(), w.size());
    expect_close(g, w, 64, "eager");
  }
}

// dot_general with a contraction over (time, batch) = 3 * 1000 and a 64 x 48 result: the
// path that splits the contraction across threads, against the float64 product.
TEST(SmallGemm, DotSplitsLongContractionsAcrossThreads) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  auto make = [](int64_t cols, uint32_t seed) {
    std::vector<float> v = values(3000 * cols, seed);
    return jnp::array(std::vector<double>(v.begin(), v.end()), {3, 1000, cols}).astype(DType::Float32);
  };
  const Array a = make(64, 6), b = make(48, 7);
  const lax::DotDimensionNumbers dims{{0, 1}, {0, 1}, {}, {}};
  for (bool tiles : {true, false}) {  // 48 columns use the tiles with AVX-512 or AVX2; 44 never do
    Array bb = tiles ? b : lax::slice(b, {0, 0, 0}, {3, 1000, 44});
    Array got = lax::dot_general(a, bb, dims);
    Array want = lax::dot_general(a.astype(DType::Float64), bb.astype(DType::Float64), dims);
    std::vector<float> g = got.to_vector<float>();
    std::vector<double> w = want.to_vector<double>();
    ASSERT_EQ(g.size(), w.size());
    expect_close(g, w, 3000, tiles ? "split, tiles" : "split, oneDNN");
  }
  omp_set_num_threads(saved);
}

}  // namespace
}  // namespace jx::testing
