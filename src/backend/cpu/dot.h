// Contraction kernels (dot_general) and their naive references. Pointers + shapes in; the
// output is contiguous in XLA's order: batch dims, lhs free dims, rhs free dims.
#pragma once
#include <cstdint>
#include <vector>

#include "jx/dtype.h"

namespace jx::cpu {

struct DotDims {
  std::vector<int64_t> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
};

// out = dot_general(lhs, rhs) with operands of dtype `in` and a result of dtype `out`
// (operands are converted to `out` first, as XLA does for a preferred element type).
// float32 goes through oneDNN's sgemm (small products through small_gemm.h), float64
// and integers through a cache-blocked kernel, float16/bfloat16 through float32,
// complex64/complex128 through BLAS's cgemm/zgemm (plain products, no conjugation, as
// lax.dot_general). Integer sums wrap in the output type; bool is OR of ANDs.
void dot_general(DType in, DType out, const void* lhs, const int64_t* lhs_shape, int lhs_ndim,
                 const void* rhs, const int64_t* rhs_shape, int rhs_ndim, const DotDims& dims,
                 void* result);
void dot_general_reference(DType in, DType out, const void* lhs, const int64_t* lhs_shape,
                           int lhs_ndim, const void* rhs, const int64_t* rhs_shape, int rhs_ndim,
                           const DotDims& dims, void* result);

// Row-major C[m,n] = sum_k A(m,k) B(k,n) where A(m,k) = a[m*a_m + k*a_k] and
// B(k,n) = b[k*b_k + n*b_n]: the blocked kernel behind dot_general for non-float32 types.
template <class T>
void gemm_blocked(int64_t M, int64_t N, int64_t K, const T* a, int64_t a_m, int64_t a_k,
                  const T* b, int64_t b_k, int64_t b_n, T* c, int64_t ldc);

}  // namespace jx::cpu
