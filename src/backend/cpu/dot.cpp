#include "backend/cpu/dot.h"

#include <oneapi/dnnl/dnnl.h>

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "backend/cpu/complex_math.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/small_gemm.h"
#include "jx/error.h"
#include "support/check.h"
#include "support/dtype_switch.h"

// BLAS (Fortran ABI, reference BLAS or OpenBLAS through liblapack's dependency): complex
// products. The trailing size_t arguments are the hidden lengths of the character
// arguments, as in linalg.cpp.
extern "C" {
void cgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const std::complex<float>* alpha, const std::complex<float>* a, const int* lda,
            const std::complex<float>* b, const int* ldb, const std::complex<float>* beta,
            std::complex<float>* c, const int* ldc, size_t, size_t);
void zgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const std::complex<double>* alpha, const std::complex<double>* a, const int* lda,
            const std::complex<double>* b, const int* ldb, const std::complex<double>* beta,
            std::complex<double>* c, const int* ldc, size_t, size_t);
}

namespace jx::cpu {
namespace {

// Scratch memory without value-initialization (fresh pages are touched once, by the writer).
template <class T>
std::unique_ptr<T[]> scratch(int64_t n) {
  return std::unique_ptr<T[]>(new T[size_t(std::max<int64_t>(n, 1))]);
}

// ---------------------------------------------------------------------------------------
// Blocked GEMM (BLIS-style): B is packed into KC x NR panels, A into MR x KC tiles, and an
// MR x NR register tile accumulates in the compute type. Integer types compute in the
// unsigned type of the same width, so that sums wrap as in XLA without signed overflow.

template <class T, bool = std::is_integral_v<T>>
struct GemmCompute {
  using type = T;
};
template <class T>
struct GemmCompute<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <class T>
using gemm_compute_t = typename GemmCompute<T>::type;

constexpr int64_t kKC = 256;
constexpr int64_t kNC = 256;
constexpr int kMR = 4;

template <class U>
constexpr int nr_for() {
  return sizeof(U) >= 8 ? 16 : 32;
}

template <class U, int MR, int NR>
inline void micro_kernel(int64_t kc, const U* __restrict ap, const U* __restrict bp,
                         U* __restrict acc) {
  U c[MR][NR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const U* b = bp + p * NR;
    for (int i = 0; i < MR; ++i) {
      const U a = ap[p * MR + i];
#pragma omp simd
      for (int j = 0; j < NR; ++j) c[i][j] = U(c[i][j] + U(a * b[j]));
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i * NR + j] = c[i][j];
}

template <class T>
void gemm_impl(int64_t M, int64_t N, int64_t K, const T* a, int64_t a_m, int64_t a_k, const T* b,
               int64_t b_k, int64_t b_n, T* c, int64_t ldc, bool allow_threads) {
  using U = gemm_compute_t<T>;
  constexpr int NR = nr_for<U>();
  constexpr int MR = kMR;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) c[m * ldc + n] = T(0);
  if (M == 0 || N == 0 || K == 0) return;
  const int64_t m_tiles = (M + MR - 1) / MR;
  int nt = allow_threads ? num_threads_for(M * N * K / 64) : 1;
  if (nt > m_tiles) nt = int(m_tiles);
  auto bpack = scratch<U>(kKC * kNC);
  for (int64_t jc = 0; jc < N; jc += kNC) {
    const int64_t nc = std::min(kNC, N - jc);
    const int64_t panels = (nc + NR - 1) / NR;
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = std::min(kKC, K - pc);
      U* bp = bpack.get();
      for (int64_t q = 0; q < panels; ++q) {
        U* dst = bp + q * kc * NR;
        for (int64_t p = 0; p < kc; ++p) {
          const T* src = b + (pc + p) * b_k;
          for (int j = 0; j < NR; ++j) {
            int64_t n = jc + q * NR + j;
            dst[p * NR + j] = n < N ? U(src[n * b_n]) : U(0);
          }
        }
      }
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
      for (int64_t t = 0; t < m_tiles; ++t) {
        alignas(64) U ap[kKC * MR];
        alignas(64) U acc[MR * NR];
        const int64_t i0 = t * MR;
        const int64_t mr = std::min<int64_t>(MR, M - i0);
        for (int64_t p = 0; p < kc; ++p)
          for (int i = 0; i < MR; ++i)
            ap[p * MR + i] = i < mr ? U(a[(i0 + i) * a_m + (pc + p) * a_k]) : U(0);
        for (int64_t q = 0; q < panels; ++q) {
          micro_kernel<U, MR, NR>(kc, ap, bp + q * kc * NR, acc);
          const int64_t j0 = jc + q * NR;
          const int64_t nr = std::min<int64_t>(NR, N - j0);
          for (int64_t i = 0; i < mr; ++i) {
            T* crow = c + (i0 + i) * ldc + j0;
            for (int64_t j = 0; j < nr; ++j) crow[j] = T(U(U(crow[j]) + acc[i * NR + j]));
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Dimension analysis: each operand's dims fall in three groups (batch, free, contracting).
// A group that is contiguous in memory (in its logical order) merges into one extent and
// one stride, so the operand is a strided batch of matrices without any copy.

struct Group {
  int64_t extent = 1;
  int64_t stride = 0;  // meaningless when extent <= 1
  bool ok = true;
};

Group merge_group(const std::vector<int64_t>& dims, const int64_t* shape,
                  const DimVec& strides) {
  Group g;
  int64_t prev = -1;
  for (int64_t d : dims) {
    g.extent *= shape[d];
    if (shape[d] == 1) continue;
    if (prev >= 0 && strides[size_t(prev)] != strides[size_t(d)] * shape[d]) g.ok = false;
    prev = d;
  }
  if (prev >= 0) g.stride = strides[size_t(prev)];
  return g;
}

std::vector<int64_t> free_dims(int ndim, const std::vector<int64_t>& batch,
                               const std::vector<int64_t>& contract) {
  std::vector<int64_t> f;
  for (int64_t d = 0; d < ndim; ++d)
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contract.begin(), contract.end(), d) == contract.end())
      f.push_back(d);
  return f;
}

// One operand seen as a strided batch of matrices [batch, rows, cols].
struct MatView {
  const void* data = nullptr;
  int64_t batch = 1, rows = 1, cols = 1;
  int64_t s_batch = 0, s_rows = 0, s_cols = 0;
  std::shared_ptr<void> owned;  // set when the operand had to be permuted
};

// rows/cols are (free, contracting) for lhs and (contracting, free) for rhs.
MatView view_of(size_t itemsize, const void* p, const int64_t* shape, int ndim,
                const std::vector<int64_t>& batch, const std::vector<int64_t>& rows,
                const std::vector<int64_t>& cols) {
  auto strides = contiguous_strides(shape, ndim);
  Group gb = merge_group(batch, shape, strides), gr = merge_group(rows, shape, strides),
        gc = merge_group(cols, shape, strides);
  MatView v;
  v.batch = gb.extent;
  v.rows = gr.extent;
  v.cols = gc.extent;
  if (gb.ok && gr.ok && gc.ok) {
    v.data = p;
    v.s_batch = gb.stride;
    v.s_rows = gr.stride;
    v.s_cols = gc.stride;
    return v;
  }
  // Permute into (batch, rows, cols) order.
  std::vector<int64_t> order = batch;
  order.insert(order.end(), rows.begin(), rows.end());
  order.insert(order.end(), cols.begin(), cols.end());
  std::vector<int64_t> out_shape, src_strides;
  for (int64_t d : order) {
    out_shape.push_back(shape[d]);
    src_strides.push_back(strides[size_t(d)]);
  }
  const int64_t n = v.batch * v.rows * v.cols;
  std::shared_ptr<char[]> buf(new char[size_t(std::max<int64_t>(n, 1)) * itemsize]);
  copy_strided(itemsize, p, src_strides.data(), buf.get(), out_shape.data(), int(order.size()));
  v.owned = buf;
  v.data = buf.get();
  v.s_batch = v.rows * v.cols;
  v.s_rows = v.cols;
  v.s_cols = 1;
  return v;
}

// A matrix in BLAS terms: row-major, transposed or not, with leading dimension ld.
bool blas_layout(int64_t rows, int64_t cols, int64_t s_rows, int64_t s_cols, char& trans,
                 int64_t& ld) {
  const bool rows_free = rows <= 1, cols_free = cols <= 1;
  if ((cols_free || s_cols == 1)) {
    int64_t l = rows_free ? std::max<int64_t>(cols, 1) : s_rows;
    if (l >= std::max<int64_t>(cols, 1)) {
      trans = 'N';
      ld = l;
      return true;
    }
  }
  if (rows_free || s_rows == 1) {
    int64_t l = cols_free ? std::max<int64_t>(rows, 1) : s_cols;
    if (l >= std::max<int64_t>(rows, 1)) {
      trans = 'T';
      ld = l;
      return true;
    }
  }
  return false;
}

MatView contiguous_copy(size_t itemsize, const MatView& v) {
  MatView c = v;
  const int64_t n = v.batch * v.rows * v.cols;
  std::shared_ptr<char[]> buf(new char[size_t(std::max<int64_t>(n, 1)) * itemsize]);
  int64_t shape[3] = {v.batch, v.rows, v.cols};
  int64_t strides[3] = {v.s_batch, v.s_rows, v.s_cols};
  copy_strided(itemsize, v.data, strides, buf.get(), shape, 3);
  c.owned = buf;
  c.data = buf.get();
  c.s_batch = v.rows * v.cols;
  c.s_rows = v.cols;
  c.s_cols = 1;
  return c;
}

// Per-batch matrices large enough for a threaded GEMM each; smaller ones are spread over
// threads one batch per iteration.
constexpr int64_t kThreadedGemmWork = 1 << 18;
// A contraction this many times longer than the result's larger side is split across threads.
constexpr int64_t kSplitDepth = 16;

void sgemm_batched(const MatView& A, const MatView& B, float* out, int64_t M, int64_t N,
                   int64_t K) {
  MatView a = A, b = B;
  char ta, tb;
  int64_t lda, ldb;
  if (!blas_layout(a.rows, a.cols, a.s_rows, a.s_cols, ta, lda)) {
    a = contiguous_copy(4, a);
    blas_layout(a.rows, a.cols, a.s_rows, a.s_cols, ta, lda);
  }
  if (!blas_layout(b.rows, b.cols, b.s_rows, b.s_cols, tb, ldb)) {
    b = contiguous_copy(4, b);
    blas_layout(b.rows, b.cols, b.s_rows, b.s_cols, tb, ldb);
  }
  const float* ap = static_cast<const float*>(a.data);
  const float* bp = static_cast<const float*>(b.data);
  const int64_t batch = a.batch;
  // c[M, N] = a b over `depth` of the contraction, through the register tiles of
  // small_gemm.h or oneDNN.
  auto gemm = [&](bool tiles, int64_t depth, const float* a_p, const float* b_p, float* c) {
    if (!tiles) return dnnl_sgemm(ta, tb, M, N, depth, 1.0f, a_p, lda, b_p, ldb, 0.0f, c, std::max<int64_t>(N, 1));
    sgemm_tiles(M, N, depth, a_p, ta == 'N' ? lda : 1, ta == 'N' ? 1 : lda, b_p, ldb, c, false);
    return dnnl_success;
  };
  // Small products skip oneDNN's per-call setup (small_gemm.h), as compiled loop bodies do.
  const bool tiles = tb == 'N' && small_sgemm_supported(M, N, K);
  auto one = [&](int64_t i) {
    dnnl_status_t st = gemm(tiles, K, ap + i * a.s_batch, bp + i * b.s_batch, out + i * M * N);
    JX_CHECK(st == dnnl_success, "dnnl_sgemm failed with status ", int(st));
  };
  const int64_t work = M * N * K;
  if (batch == 1 && K >= kSplitDepth * std::max(M, N) && work >= kThreadedGemmWork && !omp_in_parallel() &&
      omp_get_max_threads() > 1) {
    // A product with a long contraction and a small result (a weight gradient summed over
    // every example and time step: [64, 3200] x [3200, 64]): oneDNN threads it over the
    // result's tiles, which leaves each thread little work per pass over the operands.
    // Each thread takes a slice of the contraction instead (through the register-tiled
    // kernel of small_gemm.h where it applies) and the partial results are added: 0.7x
    // oneDNN's time at [64, 3200] x [3200, 64] on 2 threads.
    const int nt = omp_get_max_threads();
    std::vector<float> partial(size_t((nt - 1) * M * N));
    dnnl_status_t failed = dnnl_success;
#pragma omp parallel num_threads(nt)
    {
      const int t = omp_get_thread_num(), T_ = omp_get_num_threads();
      const int64_t k0 = K * t / T_, k1 = K * (t + 1) / T_;
      float* dst = t == 0 ? out : partial.data() + (t - 1) * M * N;
      const float* a_t = ap + k0 * (ta == 'N' ? 1 : lda);
      const float* b_t = bp + k0 * (tb == 'N' ? ldb : 1);
      const dnnl_status_t st = gemm(tb == 'N' && sgemm_tiles_supported(N), k1 - k0, a_t, b_t, dst);
      if (st != dnnl_success) {
#pragma omp critical(jx_sgemm_status)
        failed = st;
      }
#pragma omp barrier
      for (int u = 1; u < T_; ++u) {
        const float* p = partial.data() + (u - 1) * M * N;
#pragma omp for schedule(static)
        for (int64_t i = 0; i < M * N; ++i) out[i] += p[i];
      }
    }
    JX_CHECK(failed == dnnl_success, "dnnl_sgemm failed with status ", int(failed));
    return;
  }
  if (batch > 1 && work < kThreadedGemmWork) {
    int nt = num_threads_for(work * batch / 64);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t i = 0; i < batch; ++i) one(i);
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i);
  }
}

// Row-major C[M,N] = A B through column-major BLAS: C^T = B^T A^T, so B goes first and each
// operand's row-major trans flag is its column-major one for the transpose.
template <class R>
void blas_gemm(char ta, char tb, int64_t M, int64_t N, int64_t K, const std::complex<R>* a,
               int64_t lda, const std::complex<R>* b, int64_t ldb, std::complex<R>* c,
               int64_t ldc) {
  const int m = int(N), n = int(M), k = int(K), la = int(ldb), lb = int(lda), lc = int(ldc);
  const std::complex<R> one(1), zero(0);
  if constexpr (std::is_same_v<R, float>)
    cgemm_(&tb, &ta, &m, &n, &k, &one, b, &la, a, &lb, &zero, c, &lc, 1, 1);
  else
    zgemm_(&tb, &ta, &m, &n, &k, &one, b, &la, a, &lb, &zero, c, &lc, 1, 1);
}

// Plain loops for sizes past BLAS's 32-bit integers.
template <class R>
void complex_gemm_loops(const MatView& a, const MatView& b, std::complex<R>* out, int64_t M,
                        int64_t N, int64_t K) {
  using Cx = std::complex<R>;
  const Cx* ap = static_cast<const Cx*>(a.data);
  const Cx* bp = static_cast<const Cx*>(b.data);
  const int64_t rows = a.batch * M;
  const int nt = num_threads_for(rows * N * K / 16);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t bi = r / M, i = r % M;
    for (int64_t j = 0; j < N; ++j) {
      Cx acc(0);
      for (int64_t p = 0; p < K; ++p)
        acc += cx::mul(ap[bi * a.s_batch + i * a.s_rows + p * a.s_cols],
                       bp[bi * b.s_batch + p * b.s_rows + j * b.s_cols]);
      out[r * N + j] = acc;
    }
  }
}

// complex64/complex128: cgemm/zgemm per batch. Reference BLAS runs on one thread, so large
// products split their rows across threads (each a smaller GEMM); small batched ones
// spread the batches.
template <class R>
void complex_gemm_batched(const MatView& A, const MatView& B, std::complex<R>* out, int64_t M,
                          int64_t N, int64_t K) {
  using Cx = std::complex<R>;
  MatView a = A, b = B;
  char ta, tb;
  int64_t lda, ldb;
  if (!blas_layout(a.rows, a.cols, a.s_rows, a.s_cols, ta, lda)) {
    a = contiguous_copy(sizeof(Cx), a);
    blas_layout(a.rows, a.cols, a.s_rows, a.s_cols, ta, lda);
  }
  if (!blas_layout(b.rows, b.cols, b.s_rows, b.s_cols, tb, ldb)) {
    b = contiguous_copy(sizeof(Cx), b);
    blas_layout(b.rows, b.cols, b.s_rows, b.s_cols, tb, ldb);
  }
  const int64_t big = std::max({M, N, K, lda, ldb});
  if (big >= INT_MAX) return complex_gemm_loops<R>(a, b, out, M, N, K);
  const Cx* ap = static_cast<const Cx*>(a.data);
  const Cx* bp = static_cast<const Cx*>(b.data);
  const int64_t ldc = std::max<int64_t>(N, 1), work = M * N * K;
  // Row i of A starts at i * lda ('N') or at i ('T', rows are columns of the stored matrix).
  auto rows_of = [&](int64_t i, int64_t r0, int64_t r1) {
    const Cx* a0 = ap + i * a.s_batch + r0 * (ta == 'N' ? lda : 1);
    blas_gemm<R>(ta, tb, r1 - r0, N, K, a0, lda, bp + i * b.s_batch, ldb, out + i * M * N + r0 * N,
                 ldc);
  };
  if (a.batch > 1 && work < kThreadedGemmWork) {
    const int nt = num_threads_for(work * a.batch / 16);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t i = 0; i < a.batch; ++i) rows_of(i, 0, M);
    return;
  }
  int nt = num_threads_for(work / 16);
  if (nt > M) nt = int(std::max<int64_t>(M, 1));
  for (int64_t i = 0; i < a.batch; ++i) {
    if (nt <= 1) {
      rows_of(i, 0, M);
      continue;
    }
#pragma omp parallel num_threads(nt)
    {
      const int t = omp_get_thread_num(), T_ = omp_get_num_threads();
      const int64_t r0 = M * t / T_, r1 = M * (t + 1) / T_;
      if (r1 > r0) rows_of(i, r0, r1);
    }
  }
}

template <class T>
void blocked_batched(const MatView& a, const MatView& b, T* out, int64_t M, int64_t N,
                     int64_t K) {
  const T* ap = static_cast<const T*>(a.data);
  const T* bp = static_cast<const T*>(b.data);
  const int64_t work = M * N * K;
  if (a.batch > 1 && work < kThreadedGemmWork) {
    int nt = num_threads_for(work * a.batch / 64);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t i = 0; i < a.batch; ++i)
      gemm_impl<T>(M, N, K, ap + i * a.s_batch, a.s_rows, a.s_cols, bp + i * b.s_batch, b.s_rows,
                   b.s_cols, out + i * M * N, N, false);
  } else {
    for (int64_t i = 0; i < a.batch; ++i)
      gemm_impl<T>(M, N, K, ap + i * a.s_batch, a.s_rows, a.s_cols, bp + i * b.s_batch, b.s_rows,
                   b.s_cols, out + i * M * N, N, true);
  }
}

// ---------------------------------------------------------------------------------------
// K == 1: every output element is a single product, out[b, i, j] = A[b, i] * B[b, j] (an
// outer product per batch: the per-example weight gradients x_i ⊗ g_i of vmap(grad)). A
// GEMM per batch gains nothing there (no reuse to block for) and pays packing and a call
// per batch; this loop writes the output once, which is all the work there is. It rounds
// as GEMM does (one product, exact IEEE multiply), except that a -0 product stays -0, as
// XLA's rewrite of such dots into a multiply gives.

// Outputs above this many bytes cannot stay in cache for their reader anyway: they are
// written with non-temporal stores, which skip the read-for-ownership of each line
// (measured 2.5x faster on a 137 MB output here, 6.5 vs 17 ms single-threaded).
constexpr int64_t kStreamingBytes = int64_t(8) << 20;

template <class T>
void scale_row(T s, const T* __restrict b, T* __restrict o, int64_t n, bool stream) {
  int64_t j = 0;
#if defined(__AVX512F__) || defined(__AVX__)
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
#if defined(__AVX512F__)
    constexpr int64_t kBytes = 64;
#else
    constexpr int64_t kBytes = 32;
#endif
    constexpr int64_t kLanes = kBytes / int64_t(sizeof(T));
    if (stream) {
      for (; j < n && (reinterpret_cast<uintptr_t>(o + j) % kBytes) != 0; ++j) o[j] = s * b[j];
      for (; j + kLanes <= n; j += kLanes) {
#if defined(__AVX512F__)
        if constexpr (std::is_same_v<T, float>)
          _mm512_stream_ps(o + j, _mm512_mul_ps(_mm512_set1_ps(s), _mm512_loadu_ps(b + j)));
        else
          _mm512_stream_pd(o + j, _mm512_mul_pd(_mm512_set1_pd(s), _mm512_loadu_pd(b + j)));
#else
        if constexpr (std::is_same_v<T, float>)
          _mm256_stream_ps(o + j, _mm256_mul_ps(_mm256_set1_ps(s), _mm256_loadu_ps(b + j)));
        else
          _mm256_stream_pd(o + j, _mm256_mul_pd(_mm256_set1_pd(s), _mm256_loadu_pd(b + j)));
#endif
      }
    }
  }
#else
  (void)stream;
#endif
#pragma omp simd
  for (int64_t k = j; k < n; ++k) o[k] = s * b[k];
}

template <class T>
void outer_batched(const MatView& A, const MatView& B, T* out, int64_t M, int64_t N) {
  MatView b = B;
  if (N > 1 && b.s_cols != 1) b = contiguous_copy(sizeof(T), b);
  const T* ap = static_cast<const T*>(A.data);
  const T* bp = static_cast<const T*>(b.data);
  const int64_t rows = A.batch * M, total = rows * N;
  const bool stream = total * int64_t(sizeof(T)) >= kStreamingBytes;
  int nt = num_threads_for(total);
  if (nt > rows) nt = int(std::max<int64_t>(rows, 1));
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    const int t = omp_get_thread_num(), T_ = omp_get_num_threads();
    const int64_t r0 = rows * t / T_, r1 = rows * (t + 1) / T_;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t bi = r / M, i = r % M;
      scale_row<T>(ap[bi * A.s_batch + i * A.s_rows], bp + bi * b.s_batch, out + r * N, N,
                   stream);
    }
#if defined(__SSE2__)
    if (stream) _mm_sfence();  // order the non-temporal stores before the join
#endif
  }
}

template <class T>
void blocked_dispatch(const MatView& a, const MatView& b, void* result, int64_t M, int64_t N,
                      int64_t K) {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, half> || std::is_same_v<T, bhalf>) {
    throw InternalError("jx internal error: dot_same_type got a half or bool type");
  } else {
    blocked_batched<T>(a, b, static_cast<T*>(result), M, N, K);
  }
}

// Same-dtype contraction for the types with a direct kernel (not half types or bool).
void dot_same_type(DType t, const void* lhs, const int64_t* ls, int ln, const void* rhs,
                   const int64_t* rs, int rn, const DotDims& d, void* result) {
  const size_t isz = itemsize(t);
  auto lfree = free_dims(ln, d.lhs_batch, d.lhs_contracting);
  auto rfree = free_dims(rn, d.rhs_batch, d.rhs_contracting);
  MatView a = view_of(isz, lhs, ls, ln, d.lhs_batch, lfree, d.lhs_contracting);
  MatView b = view_of(isz, rhs, rs, rn, d.rhs_batch, d.rhs_contracting, rfree);
  const int64_t M = a.rows, K = a.cols, N = b.cols;
  const int64_t total = a.batch * M * N;
  if (total == 0) return;
  if (K == 1 && (t == DType::Float32 || t == DType::Float64)) {
    if (t == DType::Float32) outer_batched<float>(a, b, static_cast<float*>(result), M, N);
    else outer_batched<double>(a, b, static_cast<double*>(result), M, N);
    return;
  }
  if (t == DType::Float32) {
    if (K == 0) {
      std::memset(result, 0, size_t(total) * 4);
      return;
    }
    sgemm_batched(a, b, static_cast<float*>(result), M, N, K);
    return;
  }
  if (is_complex(t)) {
    if (K == 0) {
      std::memset(result, 0, size_t(total) * isz);  // +0 + 0i
      return;
    }
    if (t == DType::Complex64)
      complex_gemm_batched<float>(a, b, static_cast<std::complex<float>*>(result), M, N, K);
    else
      complex_gemm_batched<double>(a, b, static_cast<std::complex<double>*>(result), M, N, K);
    return;
  }
  JX_DTYPE_SWITCH(t, T, { blocked_dispatch<T>(a, b, result, M, N, K); });
}

std::shared_ptr<char[]> converted(DType from, DType to, const void* p, int64_t n) {
  std::shared_ptr<char[]> buf(new char[size_t(std::max<int64_t>(n, 1)) * itemsize(to)]);
  convert(from, to, p, buf.get(), n);
  return buf;
}

template <class T>
double to_double(T x) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bhalf>) return double(float(x));
  else return double(x);
}

int64_t numel(const int64_t* s, int n) {
  int64_t r = 1;
  for (int i = 0; i < n; ++i) r *= s[i];
  return r;
}

int64_t out_numel(const int64_t* ls, int ln, const int64_t* rs, int rn, const DotDims& d) {
  int64_t r = 1;
  for (int64_t x : d.lhs_batch) r *= ls[x];
  for (int64_t x : free_dims(ln, d.lhs_batch, d.lhs_contracting)) r *= ls[x];
  for (int64_t x : free_dims(rn, d.rhs_batch, d.rhs_contracting)) r *= rs[x];
  return r;
}

void offsets(int64_t flat, const std::vector<int64_t>& shape, const std::vector<int64_t>& sa,
             const std::vector<int64_t>& sb, int64_t& oa, int64_t& ob) {
  oa = ob = 0;
  for (int i = int(shape.size()) - 1; i >= 0; --i) {
    int64_t k = flat % shape[size_t(i)];
    flat /= shape[size_t(i)];
    oa += k * sa[size_t(i)];
    ob += k * sb[size_t(i)];
  }
}

// Naive loop: for each output element, walk the contracting multi-index.
template <class T>
void reference_loop(const T* L, const T* R, T* O, int64_t on, const std::vector<int64_t>& oshape,
                    const std::vector<int64_t>& ol, const std::vector<int64_t>& orr,
                    const std::vector<int64_t>& cshape, const std::vector<int64_t>& cl,
                    const std::vector<int64_t>& cr) {
  int64_t cn = 1;
  for (int64_t x : cshape) cn *= x;
  for (int64_t o = 0; o < on; ++o) {
    int64_t lo, ro;
    offsets(o, oshape, ol, orr, lo, ro);
    if constexpr (std::is_same_v<T, bool>) {
      bool acc = false;
      for (int64_t c = 0; c < cn; ++c) {
        int64_t la, rb;
        offsets(c, cshape, cl, cr, la, rb);
        acc = acc || (L[lo + la] && R[ro + rb]);
      }
      O[o] = acc;
    } else if constexpr (cx::is_complex_v<T>) {
      std::complex<double> acc(0);
      for (int64_t c = 0; c < cn; ++c) {
        int64_t la, rb;
        offsets(c, cshape, cl, cr, la, rb);
        acc += cx::mul(std::complex<double>(L[lo + la]), std::complex<double>(R[ro + rb]));
      }
      O[o] = T(acc);
    } else if constexpr (std::is_integral_v<T>) {
      uint64_t acc = 0;
      for (int64_t c = 0; c < cn; ++c) {
        int64_t la, rb;
        offsets(c, cshape, cl, cr, la, rb);
        acc += uint64_t(int64_t(L[lo + la])) * uint64_t(int64_t(R[ro + rb]));
      }
      O[o] = T(acc);
    } else {
      double acc = 0;
      for (int64_t c = 0; c < cn; ++c) {
        int64_t la, rb;
        offsets(c, cshape, cl, cr, la, rb);
        acc += to_double(L[lo + la]) * to_double(R[ro + rb]);
      }
      O[o] = T(acc);
    }
  }
}

}  // namespace

template <class T>
void gemm_blocked(int64_t M, int64_t N, int64_t K, const T* a, int64_t a_m, int64_t a_k,
                  const T* b, int64_t b_k, int64_t b_n, T* c, int64_t ldc) {
  gemm_impl<T>(M, N, K, a, a_m, a_k, b, b_k, b_n, c, ldc, true);
}
template void gemm_blocked<float>(int64_t, int64_t, int64_t, const float*, int64_t, int64_t,
                                  const float*, int64_t, int64_t, float*, int64_t);
template void gemm_blocked<double>(int64_t, int64_t, int64_t, const double*, int64_t, int64_t,
                                   const double*, int64_t, int64_t, double*, int64_t);

void dot_general(DType in, DType out, const void* lhs, const int64_t* ls, int ln, const void* rhs,
                 const int64_t* rs, int rn, const DotDims& d, void* result) {
  // Half types and bool compute in a wider type; a preferred element type converts the
  // operands first.
  DType compute = out;
  if (out == DType::Float16 || out == DType::BFloat16) compute = DType::Float32;
  if (out == DType::Bool) compute = DType::Int32;
  std::shared_ptr<char[]> lbuf, rbuf;
  if (in != compute) {
    lbuf = converted(in, compute, lhs, numel(ls, ln));
    rbuf = converted(in, compute, rhs, numel(rs, rn));
    lhs = lbuf.get();
    rhs = rbuf.get();
  }
  if (compute == out) {
    dot_same_type(compute, lhs, ls, ln, rhs, rs, rn, d, result);
    return;
  }
  const int64_t n = out_numel(ls, ln, rs, rn, d);
  std::unique_ptr<char[]> tmp(new char[size_t(std::max<int64_t>(n, 1)) * itemsize(compute)]);
  dot_same_type(compute, lhs, ls, ln, rhs, rs, rn, d, tmp.get());
  convert(compute, out, tmp.get(), result, n);
}

void dot_general_reference(DType in, DType out, const void* lhs, const int64_t* ls, int ln,
                           const void* rhs, const int64_t* rs, int rn, const DotDims& d,
                           void* result) {
  const int64_t nl = numel(ls, ln), nr = numel(rs, rn);
  std::vector<char> lc(size_t(std::max<int64_t>(nl, 1)) * itemsize(out)),
      rc(size_t(std::max<int64_t>(nr, 1)) * itemsize(out));
  convert_reference(in, out, lhs, lc.data(), nl);
  convert_reference(in, out, rhs, rc.data(), nr);
  auto lst = contiguous_strides(ls, ln), rst = contiguous_strides(rs, rn);
  auto lfree = free_dims(ln, d.lhs_batch, d.lhs_contracting);
  auto rfree = free_dims(rn, d.rhs_batch, d.rhs_contracting);
  // Output dims with the lhs and rhs stride of each.
  std::vector<int64_t> oshape, ol, orr;
  for (size_t i = 0; i < d.lhs_batch.size(); ++i) {
    oshape.push_back(ls[d.lhs_batch[i]]);
    ol.push_back(lst[size_t(d.lhs_batch[i])]);
    orr.push_back(rst[size_t(d.rhs_batch[i])]);
  }
  for (int64_t x : lfree) {
    oshape.push_back(ls[x]);
    ol.push_back(lst[size_t(x)]);
    orr.push_back(0);
  }
  for (int64_t x : rfree) {
    oshape.push_back(rs[x]);
    ol.push_back(0);
    orr.push_back(rst[size_t(x)]);
  }
  std::vector<int64_t> cshape, cl, cr;
  for (size_t i = 0; i < d.lhs_contracting.size(); ++i) {
    cshape.push_back(ls[d.lhs_contracting[i]]);
    cl.push_back(lst[size_t(d.lhs_contracting[i])]);
    cr.push_back(rst[size_t(d.rhs_contracting[i])]);
  }
  int64_t on = 1;
  for (int64_t x : oshape) on *= x;
  JX_DTYPE_SWITCH_C(out, T, {
    reference_loop<T>(reinterpret_cast<const T*>(lc.data()), reinterpret_cast<const T*>(rc.data()),
                      static_cast<T*>(result), on, oshape, ol, orr, cshape, cl, cr);
  });
}

}  // namespace jx::cpu
