// Small float32 matrix products with no per-call setup, for eager dot_general and the
// library steps of compiled loop bodies: an RNN step's [32, 64] x [64, 64] product takes about 1.3 us of
// arithmetic, and oneDNN's sgemm adds its dispatch, packing and workspace to every call
// (2.0-2.5 us in all). The shape is fixed when the loop is compiled, so the body calls
// this kernel on raw pointers (XLA's CPU backend likewise emits its own code for small
// dots instead of calling Eigen).
#pragma once
#include <cstdint>

namespace jx::cpu {

// C[M, N] = A B: A is [M, K] row-major, or [K, M] when lhs_transposed; B is [K, N]
// row-major; C is [M, N] row-major. All contiguous, C overlapping neither operand.
struct SmallGemm {
  int64_t M = 0, N = 0, K = 0;
  bool lhs_transposed = false;
};

// Whether small_sgemm runs this shape in this build: N a multiple of the vector width
// (16 with AVX-512, 8 with AVX2 + FMA; never without them), M*N*K at most 2^18, the size
// up to which one thread computes a product (dot.cpp's threaded GEMMs start there), and B
// at most 64 KiB. dot_general's eager float32 path uses it for the same shapes, so eager
// and compiled products agree bit for bit: at 16x64x64 0.79 us against oneDNN's 1.13.
bool small_sgemm_supported(int64_t M, int64_t N, int64_t K);
void small_sgemm(const SmallGemm& g, const float* A, const float* B, float* C);

// The kernel behind it, for any size on one thread: C[M, N] (+)= A B with A(m, k) =
// a[m*a_m + k*a_k], B [K, N] with row stride ldb, C contiguous; `accumulate` adds to C.
// The contraction runs in slices that keep B's block in L2, so a long one (a weight
// gradient over 3200 examples, which dot.cpp splits across threads) keeps its speed.
// Supported when N is a multiple of the vector width, as above.
bool sgemm_tiles_supported(int64_t N);
void sgemm_tiles(int64_t M, int64_t N, int64_t K, const float* a, int64_t a_m, int64_t a_k, const float* b,
                 int64_t ldb, float* c, bool accumulate);

}  // namespace jx::cpu
