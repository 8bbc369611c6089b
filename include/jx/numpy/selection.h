// jnp: selection and searching — where, take, take_along_axis, put_along_axis, nonzero,
// argwhere, flatnonzero, compress, extract, choose, select, searchsorted, digitize, unique.
#pragma once
#include <optional>
#include <vector>

#include "jx/array.h"

namespace jx::numpy {

// where(cond, x, y): elementwise cond ? x : y, with x and y promoted and all three broadcast.
// A non-bool cond means cond != 0.
Array where(const Array& condition, const Array& x, const Array& y);
// where(cond) is nonzero(cond).
std::vector<Array> where(const Array& condition, std::optional<int64_t> size = std::nullopt,
                         std::optional<double> fill_value = std::nullopt);

// Indices (int32, one array per dim) of the nonzero elements, in row-major order. The
// result's length depends on the values, so `a` must be concrete; with `size` the result
// is truncated or padded (with fill_value, default 0) to exactly `size` entries.
std::vector<Array> nonzero(const Array& a, std::optional<int64_t> size = std::nullopt,
                           std::optional<double> fill_value = std::nullopt);
// [count, ndim] int32: the nonzero indices as rows.
Array argwhere(const Array& a, std::optional<int64_t> size = std::nullopt,
               std::optional<double> fill_value = std::nullopt);
Array flatnonzero(const Array& a, std::optional<int64_t> size = std::nullopt,
                  std::optional<double> fill_value = std::nullopt);

// Out-of-bounds handling for take/take_along_axis/choose. jnp's default for take is fill
// (NaN / min int / max uint / true), unlike indexing, which clamps.
enum class TakeMode { fill, clip, wrap, promise_in_bounds };
Array take(const Array& a, const Array& indices, std::optional<int64_t> axis = std::nullopt,
           std::optional<TakeMode> mode = std::nullopt,
           std::optional<double> fill_value = std::nullopt, bool unique_indices = false,
           bool indices_are_sorted = false);
Array take_along_axis(const Array& a, const Array& indices, std::optional<int64_t> axis = -1,
                      std::optional<TakeMode> mode = std::nullopt,
                      std::optional<double> fill_value = std::nullopt);
// Returns a copy of `a` with values put along `axis` (jnp needs inplace=false: arrays are
// immutable; inplace=true throws, as in jax).
Array put_along_axis(const Array& a, const Array& indices, const Array& values,
                     std::optional<int64_t> axis, bool inplace = true,
                     std::optional<IndexMode> mode = std::nullopt);

// Slices of `a` along `axis` (flattened when none) where the 1-d condition is true.
Array compress(const Array& condition, const Array& a, std::optional<int64_t> axis = std::nullopt);
// The elements of ravel(arr) where ravel(condition) is nonzero.
Array extract(const Array& condition, const Array& arr);

enum class ChooseMode { raise, wrap, clip };
// choices[a[i]][i] elementwise, all broadcast together.
Array choose(const Array& a, const std::vector<Array>& choices, ChooseMode mode = ChooseMode::raise);
// The first choice whose condition holds, else `default_value`.
Array select(const std::vector<Array>& condlist, const std::vector<Array>& choicelist,
             const Array& default_value = 0);

enum class Side { left, right };
// Insertion indices (int32) of v into the sorted 1-d array a; NaNs sort last.
Array searchsorted(const Array& a, const Array& v, Side side = Side::left,
                   const std::optional<Array>& sorter = std::nullopt);
// Bin indices (int32) of x in monotonic 1-d bins.
Array digitize(const Array& x, const Array& bins, bool right = false);

// Sorted unique elements of the flattened array (NaNs collapse to one, as equal_nan=true).
Array unique(const Array& a);
struct UniqueResult {
  Array values;   // sorted unique values
  Array indices;  // int32: first occurrence of each value in ravel(a)
  Array inverse;  // int32, shape of a: ravel(a) == values[inverse]
  Array counts;   // int32: occurrences of each value
};
UniqueResult unique_all(const Array& a);

}  // namespace jx::numpy
