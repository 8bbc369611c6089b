// CPU kernels for the shape primitives (transpose, rev, concatenate, pad, iota). Pointers
// and shapes in, results out; element types matter only through their size, except iota.
// Each fast kernel has a naive `_reference` beside it, the oracle of tests/ops/shape_test.
#pragma once
#include <cstddef>
#include <cstdint>

#include "jx/dtype.h"

namespace jx::cpu {

// dst = src over `shape`, both read/written through element strides (src strides may be
// negative or zero). Both pointers address element (0, ..., 0).
void copy_nd(size_t itemsize, const void* src, const int64_t* src_strides, void* dst,
             const int64_t* dst_strides, const int64_t* shape, int ndim);

// dst (contiguous) = src transposed: dst dim i is src dim perm[i].
void transpose(size_t itemsize, const void* src, const int64_t* in_shape, const int64_t* perm,
               void* dst, int ndim);
void transpose_reference(size_t itemsize, const void* src, const int64_t* in_shape,
                         const int64_t* perm, void* dst, int ndim);

// dst = src reversed along every dim d with reversed[d].
void rev(size_t itemsize, const void* src, const int64_t* shape, const bool* reversed, void* dst,
         int ndim);
void rev_reference(size_t itemsize, const void* src, const int64_t* shape, const bool* reversed,
                   void* dst, int ndim);

// Concatenation of n arrays viewed as [outer, sizes[i] * inner] along their second dim.
void concatenate(size_t itemsize, const void* const* srcs, const int64_t* sizes, int n,
                 int64_t outer, int64_t inner, void* dst);
void concatenate_reference(size_t itemsize, const void* const* srcs, const int64_t* sizes, int n,
                           int64_t outer, int64_t inner, void* dst);

// lax.pad: dst[lo[d] + i * (interior[d] + 1)] = src[i] where that lies inside out_shape
// (negative lo crops); every other element is *value (one element of itemsize bytes).
void pad(size_t itemsize, const void* src, const int64_t* in_shape, const void* value,
         const int64_t* lo, const int64_t* interior, void* dst, const int64_t* out_shape, int ndim);
void pad_reference(size_t itemsize, const void* src, const int64_t* in_shape, const void* value,
                   const int64_t* lo, const int64_t* interior, void* dst,
                   const int64_t* out_shape, int ndim);

// dst[idx] = idx[dimension], converted to dtype.
void iota(DType dtype, void* dst, const int64_t* shape, int ndim, int dimension);
void iota_reference(DType dtype, void* dst, const int64_t* shape, int ndim, int dimension);

}  // namespace jx::cpu
