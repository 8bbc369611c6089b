// jx::lax: thin typed wrappers, one per primitive (ops/primitives.def). Operands of
// binary ops must have the same dtype; shapes must have equal rank with dims equal or 1
// (size-1 dims broadcast). jx::numpy adds NumPy's promotion and rank broadcasting.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "jx/array.h"

namespace jx::lax {

// ---- unary elementwise ----
Array neg(const Array& x);
Array sign(const Array& x);
Array floor(const Array& x);
Array ceil(const Array& x);
enum class RoundingMethod { away_from_zero = 0, to_nearest_even = 1 };
Array round(const Array& x, RoundingMethod method = RoundingMethod::away_from_zero);
Array is_finite(const Array& x);
Array exp(const Array& x);
Array exp2(const Array& x);
Array log(const Array& x);
Array log1p(const Array& x);
Array expm1(const Array& x);
Array tanh(const Array& x);
Array logistic(const Array& x);
Array sin(const Array& x);
Array cos(const Array& x);
Array tan(const Array& x);
Array asin(const Array& x);
Array acos(const Array& x);
Array atan(const Array& x);
Array sinh(const Array& x);
Array cosh(const Array& x);
Array asinh(const Array& x);
Array acosh(const Array& x);
Array atanh(const Array& x);
Array abs(const Array& x);
Array sqrt(const Array& x);
Array rsqrt(const Array& x);
Array cbrt(const Array& x);
Array square(const Array& x);
Array integer_pow(const Array& x, int64_t y);
Array bitwise_not(const Array& x);  // lax.not_: logical not for bool
Array population_count(const Array& x);
Array clz(const Array& x);
Array lgamma(const Array& x);
Array digamma(const Array& x);
Array erf(const Array& x);
Array erfc(const Array& x);
Array erf_inv(const Array& x);
Array copy(const Array& x);

// ---- binary elementwise ----
Array add(const Array& x, const Array& y);
Array sub(const Array& x, const Array& y);
Array mul(const Array& x, const Array& y);
Array div(const Array& x, const Array& y);  // C semantics: integer division truncates
Array rem(const Array& x, const Array& y);  // C fmod semantics: sign of x
Array pow(const Array& x, const Array& y);
Array max(const Array& x, const Array& y);
Array min(const Array& x, const Array& y);
Array atan2(const Array& x, const Array& y);
Array nextafter(const Array& x, const Array& y);
Array bitwise_and(const Array& x, const Array& y);
Array bitwise_or(const Array& x, const Array& y);
Array bitwise_xor(const Array& x, const Array& y);
Array shift_left(const Array& x, const Array& y);
Array shift_right_arithmetic(const Array& x, const Array& y);
Array shift_right_logical(const Array& x, const Array& y);
Array eq(const Array& x, const Array& y);
Array ne(const Array& x, const Array& y);
Array lt(const Array& x, const Array& y);
Array le(const Array& x, const Array& y);
Array gt(const Array& x, const Array& y);
Array ge(const Array& x, const Array& y);

// ---- casts and selection ----
Array convert_element_type(const Array& x, DType new_dtype, bool weak_type = false);
Array bitcast_convert_type(const Array& x, DType new_dtype);
// select_n(which, cases): which is bool (2 cases) or int32; picks cases[which] elementwise.
Array select_n(const Array& which, const std::vector<Array>& cases);
inline Array select(const Array& pred, const Array& on_true, const Array& on_false) {
  return select_n(pred, {on_false, on_true});
}
Array clamp(const Array& lo, const Array& x, const Array& hi);

// ---- reductions ----
Array reduce_sum(const Array& x, const std::vector<int64_t>& axes);
Array reduce_prod(const Array& x, const std::vector<int64_t>& axes);
Array reduce_max(const Array& x, const std::vector<int64_t>& axes);
Array reduce_min(const Array& x, const std::vector<int64_t>& axes);
Array reduce_and(const Array& x, const std::vector<int64_t>& axes);
Array reduce_or(const Array& x, const std::vector<int64_t>& axes);
Array reduce_xor(const Array& x, const std::vector<int64_t>& axes);
Array argmax(const Array& x, int64_t axis, DType index_dtype = DType::Int32);
Array argmin(const Array& x, int64_t axis, DType index_dtype = DType::Int32);

// ---- cumulative and sorting ----
Array cumsum(const Array& x, int64_t axis = 0, bool reverse = false);
Array cumprod(const Array& x, int64_t axis = 0, bool reverse = false);
Array cummax(const Array& x, int64_t axis = 0, bool reverse = false);
Array cummin(const Array& x, int64_t axis = 0, bool reverse = false);
Array cumlogsumexp(const Array& x, int64_t axis = 0, bool reverse = false);
// Sorts all operands along `dimension` by the first `num_keys` operands (lexicographic;
// NaNs last, -0.0 before +0.0).
std::vector<Array> sort(const std::vector<Array>& operands, int64_t dimension = -1,
                        bool is_stable = true, int64_t num_keys = 1);
Array sort(const Array& x, int64_t dimension = -1, bool is_stable = true);

// ---- shape ----
Array reshape(const Array& x, const Shape& new_sizes);
Array broadcast_in_dim(const Array& x, const Shape& shape,
                       const std::vector<int64_t>& broadcast_dimensions);
Array broadcast(const Array& x, const Shape& leading_sizes);
Array transpose(const Array& x, const std::vector<int64_t>& permutation);
Array squeeze(const Array& x, const std::vector<int64_t>& dimensions);
Array expand_dims(const Array& x, const std::vector<int64_t>& dimensions);
Array rev(const Array& x, const std::vector<int64_t>& dimensions);
Array concatenate(const std::vector<Array>& operands, int64_t dimension);
// Per dimension (low, high, interior); negative low/high crop.
struct PadConfig {
  int64_t lo = 0, hi = 0, interior = 0;
};
Array pad(const Array& x, const Array& padding_value, const std::vector<PadConfig>& config);
Array iota(DType dtype, int64_t size);
Array broadcasted_iota(DType dtype, const Shape& shape, int64_t dimension);

// ---- slicing, gather, scatter ----
// strides: empty means all 1 (jax's None); all must be positive (use rev for negative steps).
Array slice(const Array& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::vector<int64_t>& strides = {});
Array slice_in_dim(const Array& x, int64_t start, int64_t limit, int64_t stride = 1,
                   int64_t axis = 0);
// Start indices (integer scalars of one dtype) are clamped so that the slice stays in
// bounds, as in XLA; with allow_negative_indices a negative start counts from the end first.
Array dynamic_slice(const Array& x, const std::vector<Array>& start_indices,
                    const std::vector<int64_t>& slice_sizes, bool allow_negative_indices = true);
Array dynamic_update_slice(const Array& x, const Array& update,
                           const std::vector<Array>& start_indices,
                           bool allow_negative_indices = true);
Array dynamic_slice_in_dim(const Array& x, const Array& start, int64_t size, int64_t axis = 0);
Array dynamic_index_in_dim(const Array& x, const Array& index, int64_t axis = 0,
                           bool keepdims = true);

// XLA's gather/scatter dimension numbers (lax.GatherDimensionNumbers, ScatterDimensionNumbers).
// The index vector is always the last dim of the indices, as in jax.
struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map, operand_batching_dims,
      start_indices_batching_dims;
};
struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
      operand_batching_dims, scatter_indices_batching_dims;
};
// clip: clamp each window into bounds. fill_or_drop: gather fills out-of-bounds windows with
// fill_value (default NaN / min int / max uint / true), scatter drops them.
// promise_in_bounds: what XLA does in practice — gather clamps, scatter drops.
enum class GatherScatterMode { clip, fill_or_drop, promise_in_bounds };
// As jax.lax.gather, whose mode=None means promise_in_bounds.
Array gather(const Array& operand, const Array& start_indices, const GatherDimensionNumbers& dnums,
             const std::vector<int64_t>& slice_sizes,
             GatherScatterMode mode = GatherScatterMode::promise_in_bounds,
             std::optional<double> fill_value = std::nullopt, bool indices_are_sorted = false,
             bool unique_indices = false);
// As jax.lax.scatter*, whose mode=None means fill_or_drop. Duplicate indices all apply
// (scatter_add accumulates; for scatter the last update wins).
Array scatter(const Array& operand, const Array& indices, const Array& updates,
              const ScatterDimensionNumbers& dnums,
              GatherScatterMode mode = GatherScatterMode::fill_or_drop,
              bool indices_are_sorted = false, bool unique_indices = false);
Array scatter_add(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dnums,
                  GatherScatterMode mode = GatherScatterMode::fill_or_drop,
                  bool indices_are_sorted = false, bool unique_indices = false);
Array scatter_mul(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dnums,
                  GatherScatterMode mode = GatherScatterMode::fill_or_drop,
                  bool indices_are_sorted = false, bool unique_indices = false);
Array scatter_min(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dnums,
                  GatherScatterMode mode = GatherScatterMode::fill_or_drop,
                  bool indices_are_sorted = false, bool unique_indices = false);
Array scatter_max(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dnums,
                  GatherScatterMode mode = GatherScatterMode::fill_or_drop,
                  bool indices_are_sorted = false, bool unique_indices = false);

// ---- contractions ----
struct DotDimensionNumbers {
  std::vector<int64_t> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
};
// Output dims: batch, lhs free, rhs free (XLA order).
Array dot_general(const Array& lhs, const Array& rhs, const DotDimensionNumbers& dnums,
                  std::optional<DType> preferred_element_type = std::nullopt);
Array dot(const Array& lhs, const Array& rhs);  // rank 1 or 2

}  // namespace jx::lax
