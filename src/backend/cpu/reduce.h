// CPU kernels for reductions, arg-reductions, cumulative ops and sorting. Inputs are
// contiguous row-major; outputs are contiguous row-major. Each fast kernel has a naive
// `_reference` beside it that the tests use as the oracle.
#pragma once
#include <cstdint>

#include "jx/dtype.h"

namespace jx::cpu {

enum class ReduceOp { Sum, Prod, Max, Min, And, Or, Xor };

// out (the kept dims of `shape`, in order) = op over the dims where reduced[d] is true.
// Output dtype = input dtype. Ints wrap; float max/min propagate NaN; an empty reduction
// gives the identity (0, 1, -inf/lowest, +inf/highest, all ones, 0, 0). Complex max/min
// fold each output's elements in order through lax's complex max/min from -inf + 0j
// (+inf + 0j), as XLA does: a NaN does not stick (docs/complex.md).
void reduce(ReduceOp op, DType dtype, const void* x, const int64_t* shape, int ndim,
            const bool* reduced, void* out);
void reduce_reference(ReduceOp op, DType dtype, const void* x, const int64_t* shape, int ndim,
                      const bool* reduced, void* out);

// Index of the first max (min) along `axis` (size >= 1); a NaN counts as larger (smaller)
// than everything, so the first NaN wins. Complex values order lexicographically by
// (real, imag), and a NaN in either part is a NaN. `index_dtype` is int32 or int64.
void argreduce(bool is_max, DType dtype, DType index_dtype, const void* x, const int64_t* shape,
               int ndim, int axis, void* out);
void argreduce_reference(bool is_max, DType dtype, DType index_dtype, const void* x,
                         const int64_t* shape, int ndim, int axis, void* out);

enum class CumOp { Sum, Prod, Max, Min, LogSumExp };

// Inclusive scan along `axis` (from the end when `reverse`); same shape and dtype.
void cumulative(CumOp op, DType dtype, const void* x, const int64_t* shape, int ndim, int axis,
                bool reverse, void* out);
void cumulative_reference(CumOp op, DType dtype, const void* x, const int64_t* shape, int ndim,
                          int axis, bool reverse, void* out);

// Sorts `n` operands of one shape along `axis`, ordering lexicographically by the first
// `num_keys` of them; every operand is permuted alike. Floats use a total order: -0.0
// before +0.0, NaNs last. Complex keys order by (real, imag), each part with -0.0 equal to
// +0.0 and NaNs last (JAX's canonicalized keys).
void sort(int n, const DType* dtypes, const void* const* in, void* const* out,
          const int64_t* shape, int ndim, int axis, int num_keys, bool stable);
void sort_reference(int n, const DType* dtypes, const void* const* in, void* const* out,
                    const int64_t* shape, int ndim, int axis, int num_keys, bool stable);

}  // namespace jx::cpu
