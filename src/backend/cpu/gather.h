// CPU kernels for slicing, gather and scatter (ops/indexing.cpp). Pointers + shapes in;
// each fast kernel has a naive _reference beside it that the tests use as the oracle.
// Index arrays arrive converted to int64; the index vector is always the last dim (as jax).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "jx/dtype.h"

namespace jx::cpu {

using Dims = std::vector<int64_t>;

// out (contiguous, out_shape) = src[start + i * strides] for a src of src_shape.
void slice(size_t itemsize, const void* src, const Dims& src_shape, const Dims& start,
           const Dims& strides, void* out, const Dims& out_shape);
void slice_reference(size_t itemsize, const void* src, const Dims& src_shape, const Dims& start,
                     const Dims& strides, void* out, const Dims& out_shape);

// Writes `update` (contiguous, upd_shape) into dst (contiguous, dst_shape) at `start`
// (already clamped so that the box fits).
void update_slice(size_t itemsize, void* dst, const Dims& dst_shape, const Dims& start,
                  const void* update, const Dims& upd_shape);
void update_slice_reference(size_t itemsize, void* dst, const Dims& dst_shape, const Dims& start,
                            const void* update, const Dims& upd_shape);

// XLA gather dimension numbers (index_vector_dim = last dim of the indices).
struct GatherDims {
  Dims offset_dims, collapsed_slice_dims, start_index_map, operand_batching_dims,
      start_indices_batching_dims;
};

// fill = false clamps start indices so each slice lies in bounds (XLA's clip, and what
// promise_in_bounds does in practice); fill = true writes `fill_value` (one element of
// `itemsize` bytes) over every slice whose window does not fit.
void gather(size_t itemsize, const void* operand, const Dims& operand_shape,
            const int64_t* indices, const Dims& indices_shape, const GatherDims& dn,
            const Dims& slice_sizes, bool fill, const void* fill_value, void* out,
            const Dims& out_shape);
void gather_reference(size_t itemsize, const void* operand, const Dims& operand_shape,
                      const int64_t* indices, const Dims& indices_shape, const GatherDims& dn,
                      const Dims& slice_sizes, bool fill, const void* fill_value, void* out,
                      const Dims& out_shape);

struct ScatterDims {
  Dims update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
      operand_batching_dims, scatter_indices_batching_dims;
};
enum class ScatterOp { Set, Add, Mul, Min, Max };

// `out` holds a copy of the operand on entry and is updated in place, in the order of the
// updates (so duplicates all apply; for Set the last one wins). clip = true clamps start
// indices; otherwise a window that does not fit is dropped whole.
void scatter(ScatterOp op, DType dtype, void* out, const Dims& operand_shape,
             const int64_t* indices, const Dims& indices_shape, const void* updates,
             const Dims& updates_shape, const ScatterDims& dn, bool clip);
void scatter_reference(ScatterOp op, DType dtype, void* out, const Dims& operand_shape,
                       const int64_t* indices, const Dims& indices_shape, const void* updates,
                       const Dims& updates_shape, const ScatterDims& dn, bool clip);

}  // namespace jx::cpu
