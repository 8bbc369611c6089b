// jnp: shape manipulation, joining, splitting, tiling, padding, flipping and rolling.
// Semantics are jax.numpy's: negative axes count from the end, joining promotes dtypes as
// jnp does (weak types included), and results never alias the caller's data visibly.
#pragma once
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.h"

namespace jx::numpy {

using jx::Array;
using jx::DType;

// ---- shapes and axes ----
// jnp.shape, jnp.ndim, jnp.size (e.g. jx::tree::map(jnp::shape, params)).
inline Shape shape(const Array& a) { return a.shape(); }
inline int ndim(const Array& a) { return a.ndim(); }
inline int64_t size(const Array& a) { return a.size(); }
// One dimension may be -1: it is inferred from the size.
Array reshape(const Array& a, const Shape& shape);
Array ravel(const Array& a);
// axes = {} reverses the dims, as NumPy's transpose(a).
Array transpose(const Array& a, const std::vector<int64_t>& axes = {});
Array permute_dims(const Array& a, const std::vector<int64_t>& axes);
// Swaps the last two dims (needs ndim >= 2).
Array matrix_transpose(const Array& a);
Array swapaxes(const Array& a, int64_t axis1, int64_t axis2);
Array moveaxis(const Array& a, int64_t source, int64_t destination);
Array moveaxis(const Array& a, const std::vector<int64_t>& source,
               const std::vector<int64_t>& destination);
Array expand_dims(const Array& a, int64_t axis);
Array expand_dims(const Array& a, const std::vector<int64_t>& axes);
// Removes the given size-1 axes, or every size-1 axis for jx::none.
Array squeeze(const Array& a, Axes axes = none);
Array broadcast_to(const Array& a, const Shape& shape);
std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays);
Shape broadcast_shapes(const std::vector<Shape>& shapes);
Array atleast_1d(const Array& a);
Array atleast_2d(const Array& a);
Array atleast_3d(const Array& a);
std::vector<Array> atleast_1d(const std::vector<Array>& arrays);
std::vector<Array> atleast_2d(const std::vector<Array>& arrays);
std::vector<Array> atleast_3d(const std::vector<Array>& arrays);

// ---- joining ----
// axis = std::nullopt ravels every array first. Dtypes are promoted unless `dtype` is given.
Array concatenate(const std::vector<Array>& arrays, std::optional<int64_t> axis = 0,
                  std::optional<DType> dtype = std::nullopt);
Array concat(const std::vector<Array>& arrays, std::optional<int64_t> axis = 0);
Array stack(const std::vector<Array>& arrays, int64_t axis = 0,
            std::optional<DType> dtype = std::nullopt);
Array hstack(const std::vector<Array>& arrays, std::optional<DType> dtype = std::nullopt);
Array vstack(const std::vector<Array>& arrays, std::optional<DType> dtype = std::nullopt);
Array dstack(const std::vector<Array>& arrays, std::optional<DType> dtype = std::nullopt);
Array column_stack(const std::vector<Array>& arrays);

// ---- splitting: into `sections` equal parts, or at the given indices ----
std::vector<Array> split(const Array& a, int64_t sections, int64_t axis = 0);
std::vector<Array> split(const Array& a, const std::vector<int64_t>& indices, int64_t axis = 0);
// As split, but `sections` need not divide the axis: the first parts get one more element.
std::vector<Array> array_split(const Array& a, int64_t sections, int64_t axis = 0);
std::vector<Array> array_split(const Array& a, const std::vector<int64_t>& indices,
                               int64_t axis = 0);
std::vector<Array> hsplit(const Array& a, int64_t sections);
std::vector<Array> hsplit(const Array& a, const std::vector<int64_t>& indices);
std::vector<Array> vsplit(const Array& a, int64_t sections);
std::vector<Array> vsplit(const Array& a, const std::vector<int64_t>& indices);
std::vector<Array> dsplit(const Array& a, int64_t sections);
std::vector<Array> dsplit(const Array& a, const std::vector<int64_t>& indices);

// ---- tiling and repeating ----
Array tile(const Array& a, int64_t reps);
Array tile(const Array& a, const std::vector<int64_t>& reps);
// axis = std::nullopt repeats the flattened array. Per-element repeats are static counts,
// one per element along the axis.
Array repeat(const Array& a, int64_t repeats, std::optional<int64_t> axis = std::nullopt);
Array repeat(const Array& a, const std::vector<int64_t>& repeats,
             std::optional<int64_t> axis = std::nullopt);

// ---- padding ----
// NumPy's pad_width forms: n, {n}, {before, after}, or {{before_0, after_0}, ...} with one
// pair per axis.
struct PadWidth {
  std::vector<std::pair<int64_t, int64_t>> pairs;  // one pair for all axes, or one per axis
  template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  PadWidth(T n) : pairs{{int64_t(n), int64_t(n)}} {}
  PadWidth(std::initializer_list<int64_t> v);
  PadWidth(std::initializer_list<std::pair<int64_t, int64_t>> v) : pairs(v) {}
  PadWidth(std::vector<std::pair<int64_t, int64_t>> v) : pairs(std::move(v)) {}
};
struct PadOptions {
  Array constant_values = 0;            // "constant": a scalar, or broadcastable to (ndim, 2)
  Array end_values = 0;                 // "linear_ramp": a scalar, or broadcastable to (ndim, 2)
  std::optional<PadWidth> stat_length = std::nullopt;  // maximum, minimum, mean, median
  std::string reflect_type = "even";    // "reflect", "symmetric": "even" or "odd"
};
// mode: constant, edge, reflect, symmetric, wrap, linear_ramp, maximum, minimum, mean,
// median or empty (zeros, as in JAX).
Array pad(const Array& a, const PadWidth& pad_width, const std::string& mode = "constant",
          const PadOptions& options = {});
Array pad(const Array& a, const PadWidth& pad_width, const Array& constant_values);

// ---- flipping and rolling ----
Array flip(const Array& a, Axes axes = none);
Array fliplr(const Array& a);
Array flipud(const Array& a);
// axes = jx::none rolls the flattened array. Several shifts/axes broadcast against each other.
Array roll(const Array& a, int64_t shift, Axes axes = none);
Array roll(const Array& a, const std::vector<int64_t>& shifts, Axes axes = none);
Array rot90(const Array& a, int64_t k = 1, std::pair<int64_t, int64_t> axes = {0, 1});

}  // namespace jx::numpy
