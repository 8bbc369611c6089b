// Register-tiled small sgemm (small_gemm.h). A tile of R rows by NV vectors of C lives in
// registers for the whole K loop: each k loads NV vectors of B's row k and broadcasts R
// elements of A, for R * NV fused multiply-adds. With AVX-512 a 6 x 64 tile uses 24
// accumulators and 4 B vectors of the 32 registers; with AVX2 a 2 x 32 tile 8 and 4 of 16.
// For one block of columns the tiles go down the rows, so B's K x 64 block (16 KiB at
// K = 64) stays near the core while A streams.
#include "backend/cpu/small_gemm.h"

#include <algorithm>
#include <array>
#include <utility>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#define JX_SMALL_GEMM 1
#endif

namespace jx::cpu {

#if JX_SMALL_GEMM
namespace {

#if defined(__AVX512F__)
struct Vec {
  using T = __m512;
  static constexpr int kWidth = 16, kRows = 6, kVecs = 4;
  static T zero() { return _mm512_setzero_ps(); }
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static T broadcast(float a) { return _mm512_set1_ps(a); }
  static T fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
};
#else
struct Vec {
  using T = __m256;
  static constexpr int kWidth = 8, kRows = 2, kVecs = 4;
  static T zero() { return _mm256_setzero_ps(); }
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static T broadcast(float a) { return _mm256_set1_ps(a); }
  static T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
};
#endif

// C[0:R, 0:NV*W] for A(r, k) = a[r*a_r + k*a_k] and B(k, :) = b + k*ldb.
// `accumulate`: C += the product instead of C = it.
template <int R, int NV>
void tile(const float* a, int64_t a_r, int64_t a_k, const float* b, int64_t ldb, float* c, int64_t ldc,
          int64_t K, bool accumulate) {
  typename Vec::T acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = accumulate ? Vec::load(c + r * ldc + v * Vec::kWidth) : Vec::zero();
  for (int64_t k = 0; k < K; ++k) {
    typename Vec::T bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = Vec::load(b + k * ldb + v * Vec::kWidth);
    for (int r = 0; r < R; ++r) {
      const typename Vec::T av = Vec::broadcast(a[r * a_r + k * a_k]);
      for (int v = 0; v < NV; ++v) acc[r][v] = Vec::fma(av, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) Vec::store(c + r * ldc + v * Vec::kWidth, acc[r][v]);
}

using TileFn = void (*)(const float*, int64_t, int64_t, const float*, int64_t, float*, int64_t, int64_t, bool);

// kTiles[r - 1][nv - 1] = tile<r, nv>.
template <size_t... R, size_t... V>
constexpr auto tile_table(std::index_sequence<R...>, std::index_sequence<V...>) {
  auto row = []<size_t Rr>(std::integral_constant<size_t, Rr>) {
    return std::array<TileFn, sizeof...(V)>{&tile<int(Rr) + 1, int(V) + 1>...};
  };
  return std::array<std::array<TileFn, sizeof...(V)>, sizeof...(R)>{row(std::integral_constant<size_t, R>{})...};
}
// Contraction slice: B's slice of a column block (kDepth x 64 floats, 128 KiB) stays in L2
// while the row tiles pass over it. Slices that fit L1 (64 deep) made every tile reload
// and store its accumulators 25 times over a 1600-long contraction, with A's and C's
// blocks evicting B from L1 between passes: 92 GFLOP/s against 109-111 for 512 or more
// (64 x 1600 x 64 on one Zen 4 core, FMA peak 116.5).
constexpr int64_t kDepth = 512;
// B elements of a small product: past 64 KiB B no longer stays near the core while the
// tiles pass over it unpacked, and oneDNN (which packs it) wins: 8x256x128 took 5.3 us
// here against oneDNN's 3.9, 1x256x1024 15.5 against 9.3.
constexpr int64_t kMaxSmallB = 16384;
constexpr auto kTiles = tile_table(std::make_index_sequence<Vec::kRows>{}, std::make_index_sequence<Vec::kVecs>{});

}  // namespace

bool small_sgemm_supported(int64_t M, int64_t N, int64_t K) {
  return M > 0 && N > 0 && K >= 0 && N % Vec::kWidth == 0 && M * N * K <= (int64_t(1) << 18) &&
         K * N <= kMaxSmallB;
}

bool sgemm_tiles_supported(int64_t N) { return N % Vec::kWidth == 0; }

void sgemm_tiles(int64_t M, int64_t N, int64_t K, const float* a, int64_t a_m, int64_t a_k, const float* b,
                 int64_t ldb, float* c, bool accumulate) {
  const int64_t cols = Vec::kVecs * Vec::kWidth;
  // Equal slices of at most kDepth; each C element still sums k in order (its
  // accumulator is stored and reloaded between slices), so the slicing changes no bit.
  const int64_t slices = std::max<int64_t>(1, (K + kDepth - 1) / kDepth);
  const int64_t kc = std::max<int64_t>(1, (K + slices - 1) / slices);
  // Row tiles of nearly equal height: a short tile loads as many B vectors for fewer
  // multiply-adds (4 rows of 16 columns run at 81% of the FMA peak, 5 and 6 at 99%), so
  // 16 rows go 6, 5, 5 rather than 6, 6, 4: 1.14 against 1.19 us at 16 x 64 x 64.
  const int64_t row_tiles = (M + Vec::kRows - 1) / Vec::kRows;
  for (int64_t k = 0; k < std::max<int64_t>(K, 1); k += kc) {
    const int64_t depth = std::min(kc, K - k);
    const bool acc = accumulate || k > 0;
    for (int64_t j = 0; j < N; j += cols) {
      const int64_t nv = std::min<int64_t>(Vec::kVecs, (N - j) / Vec::kWidth);
      for (int64_t t = 0, i = 0; t < row_tiles; ++t) {
        const int64_t r = M / row_tiles + (t < M % row_tiles ? 1 : 0);
        kTiles[size_t(r - 1)][size_t(nv - 1)](a + i * a_m + k * a_k, a_m, a_k, b + k * ldb + j, ldb, c + i * N + j,
                                              N, depth, acc);
        i += r;
      }
    }
  }
}

#else

// Without vector FMA the library's GEMM is faster: unsupported, but still correct.
bool small_sgemm_supported(int64_t, int64_t, int64_t) { return false; }
bool sgemm_tiles_supported(int64_t) { return false; }
void sgemm_tiles(int64_t M, int64_t N, int64_t K, const float* a, int64_t a_m, int64_t a_k, const float* b,
                 int64_t ldb, float* c, bool accumulate) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = accumulate ? c[i * N + j] : 0.0f;
      for (int64_t k = 0; k < K; ++k) s += a[i * a_m + k * a_k] * b[k * ldb + j];
      c[i * N + j] = s;
    }
}
#endif

void small_sgemm(const SmallGemm& g, const float* A, const float* B, float* C) {
  sgemm_tiles(g.M, g.N, g.K, A, g.lhs_transposed ? 1 : g.K, g.lhs_transposed ? g.M : 1, B, g.N, C, false);
}

}  // namespace jx::cpu
