// jnp: reductions, statistics, cumulative ops and sorting.
//
// Axis arguments take jx::none (all axes), an int or a list ({0, 2}); negative axes count
// from the end. Results follow JAX's dtype rules: sum/prod promote bool and small ints to
// int32 (unsigned to uint32) unless `promote_integers` is false; mean/var/std of integers
// are float32; half-precision inputs accumulate in float32. The less common knobs live in
// ReduceOptions: jnp::sum(x, 1, {.keepdims = true, .where = mask}).
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "jx/array.h"

namespace jx::numpy {

using jx::Array;
using jx::Axes;
using jx::DType;

struct ReduceOptions {
  std::optional<DType> dtype;       // accumulate in and return this dtype
  bool keepdims = false;            // keep reduced axes as size 1
  std::optional<Array> where;       // only elements where this (broadcast) mask is true
  std::optional<Array> initial;     // a scalar folded into the result (sum/prod/max/min)
  int64_t ddof = 0;                 // var/std: divide by N - ddof
  bool promote_integers = true;     // sum/prod: accumulate small ints in int32/uint32
};

Array sum(const Array& a, Axes axis = none, bool keepdims = false);
Array sum(const Array& a, Axes axis, const ReduceOptions& opts);
Array prod(const Array& a, Axes axis = none, bool keepdims = false);
Array prod(const Array& a, Axes axis, const ReduceOptions& opts);
// max/min of an empty reduction throw ValueError unless `initial` is given.
Array max(const Array& a, Axes axis = none, bool keepdims = false);
Array max(const Array& a, Axes axis, const ReduceOptions& opts);
Array min(const Array& a, Axes axis = none, bool keepdims = false);
Array min(const Array& a, Axes axis, const ReduceOptions& opts);
Array amax(const Array& a, Axes axis = none, bool keepdims = false);
Array amin(const Array& a, Axes axis = none, bool keepdims = false);
Array all(const Array& a, Axes axis = none, bool keepdims = false);
Array all(const Array& a, Axes axis, const ReduceOptions& opts);
Array any(const Array& a, Axes axis = none, bool keepdims = false);
Array any(const Array& a, Axes axis, const ReduceOptions& opts);
Array mean(const Array& a, Axes axis = none, bool keepdims = false);
Array mean(const Array& a, Axes axis, const ReduceOptions& opts);
// An axis of size <= ddof gives NaN, as in JAX.
Array var(const Array& a, Axes axis = none, int64_t ddof = 0, bool keepdims = false);
Array var(const Array& a, Axes axis, const ReduceOptions& opts);
Array std(const Array& a, Axes axis = none, int64_t ddof = 0, bool keepdims = false);
Array std(const Array& a, Axes axis, const ReduceOptions& opts);
Array ptp(const Array& a, Axes axis = none, bool keepdims = false);
Array count_nonzero(const Array& a, Axes axis = none, bool keepdims = false);
// Weighted mean; 1-d weights need an explicit axis. `returned` gives (avg, sum of weights).
Array average(const Array& a, Axes axis = none, const std::optional<Array>& weights = std::nullopt,
              bool keepdims = false);
std::pair<Array, Array> average_returned(const Array& a, Axes axis = none,
                                         const std::optional<Array>& weights = std::nullopt,
                                         bool keepdims = false);

// Index of the first max/min (the first NaN, if any); axis = nullopt flattens. int32.
Array argmax(const Array& a, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Array argmin(const Array& a, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);

// NaN-ignoring reductions (NaNs count as the identity; all-NaN slices give NaN for
// nanmax/nanmin/nanmean).
Array nansum(const Array& a, Axes axis = none, bool keepdims = false);
Array nansum(const Array& a, Axes axis, const ReduceOptions& opts);
Array nanprod(const Array& a, Axes axis = none, bool keepdims = false);
Array nanprod(const Array& a, Axes axis, const ReduceOptions& opts);
Array nanmax(const Array& a, Axes axis = none, bool keepdims = false);
Array nanmin(const Array& a, Axes axis = none, bool keepdims = false);
Array nanmean(const Array& a, Axes axis = none, bool keepdims = false);
Array nanmean(const Array& a, Axes axis, const ReduceOptions& opts);
Array nanvar(const Array& a, Axes axis = none, int64_t ddof = 0, bool keepdims = false);
Array nanstd(const Array& a, Axes axis = none, int64_t ddof = 0, bool keepdims = false);

// Quantiles with method "linear" (NumPy's default); q in [0, 1] (percentile: [0, 100]).
// A scalar q drops the q axis; a list of q adds a leading axis of that length.
Array quantile(const Array& a, double q, Axes axis = none, bool keepdims = false);
Array quantile(const Array& a, const std::vector<double>& q, Axes axis = none,
               bool keepdims = false);
Array percentile(const Array& a, double q, Axes axis = none, bool keepdims = false);
Array percentile(const Array& a, const std::vector<double>& q, Axes axis = none,
                 bool keepdims = false);
Array median(const Array& a, Axes axis = none, bool keepdims = false);

// Cumulative ops; axis = nullopt flattens. bool accumulates in int32; other dtypes keep
// their own unless `dtype` is given.
Array cumsum(const Array& a, std::optional<int64_t> axis = std::nullopt,
             std::optional<DType> dtype = std::nullopt);
Array cumprod(const Array& a, std::optional<int64_t> axis = std::nullopt,
              std::optional<DType> dtype = std::nullopt);
Array nancumsum(const Array& a, std::optional<int64_t> axis = std::nullopt,
                std::optional<DType> dtype = std::nullopt);
Array nancumprod(const Array& a, std::optional<int64_t> axis = std::nullopt,
                 std::optional<DType> dtype = std::nullopt);
// The array-API cumulative sum: small ints promote as in sum; axis may be omitted only
// for 1-d input; include_initial prepends a zero.
Array cumulative_sum(const Array& x, std::optional<int64_t> axis = std::nullopt,
                     std::optional<DType> dtype = std::nullopt, bool include_initial = false);

// Sorting. axis = nullopt flattens. Stable by default; NaNs sort last. descending keeps
// equal elements in their original order, as JAX does.
Array sort(const Array& a, std::optional<int64_t> axis = -1, bool stable = true,
           bool descending = false);
Array argsort(const Array& a, std::optional<int64_t> axis = -1, bool stable = true,
              bool descending = false);
// Indirect stable sort by several keys; the LAST key is the primary one (as NumPy).
Array lexsort(const std::vector<Array>& keys, int64_t axis = -1);

}  // namespace jx::numpy
