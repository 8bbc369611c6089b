// jnp array creation, dtypes and promotion queries.
#pragma once
#include <optional>
#include <type_traits>
#include <vector>

#include "jx/array.h"

namespace jx::numpy {

using jx::Array;
using jx::DType;

// From C++ data. Typed C++ data keeps its type (strong), as a NumPy array does in JAX.
template <class T>
Array array(const std::vector<T>& data, const Shape& shape);
template <class T>
Array array(const std::vector<T>& data) {
  return array(data, Shape{int64_t(data.size())});
}
template <class T>
Array array(std::initializer_list<T> data) {
  return array(std::vector<T>(data));
}
template <class T>
Array array(std::initializer_list<std::initializer_list<T>> rows);
template <class T>
Array array(std::initializer_list<std::initializer_list<std::initializer_list<T>>> planes);
// A scalar of an explicit dtype: jnp.array(3, dtype=int64); the double is rounded once.
Array scalar(double value, DType dtype);
// Converts to `dtype` (an explicit dtype makes the result strong).
Array array(const Array& x, std::optional<DType> dtype = std::nullopt);
namespace detail {
Array integer_scalar(int64_t value, DType dtype);
Array unsigned_scalar(uint64_t value, DType dtype);
}  // namespace detail
// A C++ number. With a dtype it is rounded once, to that dtype: array(0.1, jx::float64) is
// the double 0.1, array(int64_t(1) << 40, jx::int64) keeps every bit. Without one it is a
// weak scalar (int32 / float32), as jnp.array of a Python scalar.
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Array array(T value, std::optional<DType> dtype = std::nullopt) {
  if (!dtype) return Array(value);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_signed_v<T>)
    return detail::integer_scalar(int64_t(value), *dtype);
  else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return detail::unsigned_scalar(uint64_t(value), *dtype);
  else
    return scalar(double(value), *dtype);
}
Array asarray(const Array& x, std::optional<DType> dtype = std::nullopt);

Array zeros(const Shape& shape, DType dtype = DType::Float32);
Array ones(const Shape& shape, DType dtype = DType::Float32);
Array empty(const Shape& shape, DType dtype = DType::Float32);
// fill_value's dtype unless `dtype` is given (a weak C++ scalar gives float32/int32).
Array full(const Shape& shape, const Array& fill_value, std::optional<DType> dtype = std::nullopt);
Array zeros_like(const Array& x, std::optional<DType> dtype = std::nullopt);
Array ones_like(const Array& x, std::optional<DType> dtype = std::nullopt);
Array empty_like(const Array& x, std::optional<DType> dtype = std::nullopt);
Array full_like(const Array& x, const Array& fill_value, std::optional<DType> dtype = std::nullopt);

// A C++ number that remembers whether it was an integer, as Python's int vs float decide
// jnp.arange's dtype.
struct Number {
  double value;
  bool is_int;
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Number(T v) : value(double(v)), is_int(std::is_integral_v<T>) {}
};
// arange(stop), arange(start, stop, step): int32 when every argument is a C++ integer,
// else float32 (arange(5) is int32, arange(5.0) float32, as in JAX).
Array arange(Number stop, std::optional<DType> dtype = std::nullopt);
Array arange(Number start, Number stop, Number step = 1, std::optional<DType> dtype = std::nullopt);
Array linspace(double start, double stop, int64_t num = 50, bool endpoint = true,
               std::optional<DType> dtype = std::nullopt);
Array logspace(double start, double stop, int64_t num = 50, bool endpoint = true, double base = 10,
               std::optional<DType> dtype = std::nullopt);
Array geomspace(double start, double stop, int64_t num = 50, bool endpoint = true,
                std::optional<DType> dtype = std::nullopt);
Array eye(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0,
          DType dtype = DType::Float32);
Array identity(int64_t n, DType dtype = DType::Float32);
Array tri(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0,
          DType dtype = DType::Float32);
Array tril(const Array& x, int64_t k = 0);
Array triu(const Array& x, int64_t k = 0);
Array diag(const Array& x, int64_t k = 0);
Array diagonal(const Array& x, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1);
std::vector<Array> meshgrid(const std::vector<Array>& xs, bool sparse = false,
                            const std::string& indexing = "xy");
Array copy(const Array& x);

// dtypes and promotion (JAX's lattice with weak types).
DType result_type(const std::vector<Array>& xs);
using jx::can_cast;
using jx::finfo;
using jx::iinfo;
using jx::promote_types;
Array astype(const Array& x, DType dtype);

}  // namespace jx::numpy
