// jx::lax: thin typed wrappers, one per primitive (ops/primitives.def). Operands of
// binary ops must have the same dtype; shapes must have equal rank with dims equal or 1
// (size-1 dims broadcast). jx::numpy adds NumPy's promotion and rank broadcasting.
#pragma once
#include <functional>
#include <optional>
#include <string>
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
// Complex parts (docs/complex.md): real/imag of complex64 give float32 (complex128: float64);
// conj keeps the dtype; complex(re, im) of two float32 (float64) arrays gives complex64
// (complex128). Each is linear, with JAX's transposes.
Array real(const Array& x);
Array imag(const Array& x);
Array conj(const Array& x);
Array complex(const Array& re, const Array& im);

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

// ---- convolution and windowed reductions ----
// Padding of the spatial (or window) dims: "SAME", "SAME_LOWER", "VALID", or one explicit
// (lo, hi) pair per dim. SAME pads so that out = ceil(in / stride), the odd cell at the
// end (SAME_LOWER: at the start).
class Padding {
 public:
  using Pairs = std::vector<std::pair<int64_t, int64_t>>;
  Padding(const char* name) : name_(name) {}
  Padding(std::string name) : name_(std::move(name)) {}
  Padding(Pairs pairs) : pairs_(std::move(pairs)) {}
  Padding(std::initializer_list<std::pair<int64_t, int64_t>> pairs) : pairs_(pairs) {}
  bool is_named() const { return !name_.empty(); }
  const std::string& name() const { return name_; }
  const Pairs& pairs() const { return pairs_; }
  // Explicit pairs for an operand of spatial sizes `in` and a window of (dilated) sizes
  // `window` at `strides`; `op` names the caller in errors.
  Pairs resolve(const char* op, const std::vector<int64_t>& in, const std::vector<int64_t>& window,
                const std::vector<int64_t>& strides) const;

 private:
  std::string name_;
  Pairs pairs_;
};
// jax.lax.padtype_to_pads.
Padding::Pairs padtype_to_pads(const std::vector<int64_t>& in_shape,
                               const std::vector<int64_t>& window_shape,
                               const std::vector<int64_t>& window_strides,
                               const std::string& padding);

// Each spec lists dims as (batch, feature, spatial...) for lhs and out, (out feature, in
// feature, spatial...) for rhs; spatial dims are in the order the rhs string names them.
struct ConvDimensionNumbers {
  std::vector<int64_t> lhs_spec, rhs_spec, out_spec;
  friend bool operator==(const ConvDimensionNumbers&, const ConvDimensionNumbers&) = default;
};
// What conv_general_dilated accepts as dimension numbers: none (NCHW, OIHW, NCHW and
// their 1-D/3-D kin), three strings such as {"NHWC", "HWIO", "NHWC"}, or the numbers.
class ConvDimensions {
 public:
  ConvDimensions() = default;
  ConvDimensions(ConvDimensionNumbers dn) : numbers_(std::move(dn)), given_(true) {}
  ConvDimensions(std::string lhs, std::string rhs, std::string out)
      : strings_{std::move(lhs), std::move(rhs), std::move(out)}, given_(true) {}
  ConvDimensionNumbers resolve(const char* op, int64_t lhs_ndim, int64_t rhs_ndim) const;
  bool given() const { return given_; }

 private:
  std::vector<std::string> strings_;
  ConvDimensionNumbers numbers_;
  bool given_ = false;
};
// jax.lax.conv_dimension_numbers.
ConvDimensionNumbers conv_dimension_numbers(const Shape& lhs_shape, const Shape& rhs_shape,
                                            const ConvDimensions& dimension_numbers);

// Dilations: empty means all 1 (jax's None). String padding with an lhs dilation is an
// error, as in jax (use explicit pairs or conv_transpose).
Array conv_general_dilated(const Array& lhs, const Array& rhs,
                           const std::vector<int64_t>& window_strides, const Padding& padding,
                           const std::vector<int64_t>& lhs_dilation = {},
                           const std::vector<int64_t>& rhs_dilation = {},
                           const ConvDimensions& dimension_numbers = {},
                           int64_t feature_group_count = 1, int64_t batch_group_count = 1,
                           std::optional<DType> preferred_element_type = std::nullopt);
// NCHW / OIHW with SAME or VALID padding.
Array conv(const Array& lhs, const Array& rhs, const std::vector<int64_t>& window_strides,
           const Padding& padding, std::optional<DType> preferred_element_type = std::nullopt);
Array conv_with_general_padding(const Array& lhs, const Array& rhs,
                                const std::vector<int64_t>& window_strides,
                                const Padding& padding, const std::vector<int64_t>& lhs_dilation,
                                const std::vector<int64_t>& rhs_dilation,
                                std::optional<DType> preferred_element_type = std::nullopt);
// A fractionally strided convolution (jax.lax.conv_transpose); default dimension numbers
// are NHWC / HWIO / NHWC and their 1-D/3-D kin. transpose_kernel flips the spatial dims
// and swaps I and O, which makes it the gradient of conv (Keras' Conv2DTranspose).
Array conv_transpose(const Array& lhs, const Array& rhs, const std::vector<int64_t>& strides,
                     const Padding& padding, const std::vector<int64_t>& rhs_dilation = {},
                     const ConvDimensions& dimension_numbers = {}, bool transpose_kernel = false,
                     std::optional<DType> preferred_element_type = std::nullopt,
                     bool use_consistent_padding = false);

// Windowed reductions over every dim of the operand. Strides and dilations: empty means
// all 1. base_dilation spreads the operand's elements apart (holes hold the init value).
Array reduce_window_sum(const Array& operand, const std::vector<int64_t>& window_dimensions,
                        const std::vector<int64_t>& window_strides, const Padding& padding,
                        const std::vector<int64_t>& base_dilation = {},
                        const std::vector<int64_t>& window_dilation = {});
Array reduce_window_max(const Array& operand, const std::vector<int64_t>& window_dimensions,
                        const std::vector<int64_t>& window_strides, const Padding& padding,
                        const std::vector<int64_t>& base_dilation = {},
                        const std::vector<int64_t>& window_dilation = {});
Array reduce_window_min(const Array& operand, const std::vector<int64_t>& window_dimensions,
                        const std::vector<int64_t>& window_strides, const Padding& padding,
                        const std::vector<int64_t>& base_dilation = {},
                        const std::vector<int64_t>& window_dilation = {});
// jax.lax.reduce_window: `computation` combines two scalars. add with init 0, max with
// init -inf (or the lowest value), min with +inf (or the highest) bind the three
// primitives above; anything else binds the generic reduce_window.
using WindowComputation = std::function<Array(const Array&, const Array&)>;
Array reduce_window(const Array& operand, const Array& init_value,
                    const WindowComputation& computation,
                    const std::vector<int64_t>& window_dimensions,
                    const std::vector<int64_t>& window_strides, const Padding& padding,
                    const std::vector<int64_t>& base_dilation = {},
                    const std::vector<int64_t>& window_dilation = {});
// The building blocks of max/min pooling's derivatives (XLA's SelectAndScatter): each
// window's selected element (the first max for ge, min for le) of `operand` receives the
// sum of the `source` values of the windows that selected it ...
enum class WindowSelect { ge, le };
Array select_and_scatter_add(const Array& source, const Array& operand, WindowSelect select,
                             const std::vector<int64_t>& window_dimensions,
                             const std::vector<int64_t>& window_strides,
                             const Padding::Pairs& padding);
// ... and, for each window, the `tangents` value at the selected element of `operand`.
Array select_and_gather_add(const Array& tangents, const Array& operand, WindowSelect select,
                            const std::vector<int64_t>& window_dimensions,
                            const std::vector<int64_t>& window_strides,
                            const Padding::Pairs& padding,
                            const std::vector<int64_t>& base_dilation = {},
                            const std::vector<int64_t>& window_dilation = {});

}  // namespace jx::lax
