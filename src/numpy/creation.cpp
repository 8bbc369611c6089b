#include <cstring>

#include "core/array_impl.h"
#include "jx/numpy.h"
#include "numpy/promote.h"
#include "support/str.h"

namespace jx::numpy {

template <class T>
Array array(const std::vector<T>& data, const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) throw ValueError(str("[array] negative dimension in shape ", shape_str(shape)));
  if (int64_t(data.size()) != shape.numel())
    throw ShapeError(str("[array] ", data.size(), " values do not fill shape ", shape_str(shape),
                         " (", shape.numel(), " elements)"));
  Array a = jx::detail::empty_array(shape, dtype_of<T>(), false);
  if constexpr (std::is_same_v<T, bool>) {
    bool* p = jx::detail::data<bool>(a);
    for (size_t i = 0; i < data.size(); ++i) p[i] = data[i];
  } else {
    if (!data.empty()) std::memcpy(jx::detail::raw_data(a), data.data(), data.size() * sizeof(T));
  }
  return a;
}

template <class T>
Array array(std::initializer_list<std::initializer_list<T>> rows) {
  std::vector<T> flat;
  size_t cols = rows.size() ? rows.begin()->size() : 0;
  for (const auto& r : rows) {
    if (r.size() != cols)
      throw ShapeError(str("[array] ragged nested list: rows of length ", cols, " and ", r.size()));
    flat.insert(flat.end(), r.begin(), r.end());
  }
  return array(flat, Shape{int64_t(rows.size()), int64_t(cols)});
}

template <class T>
Array array(std::initializer_list<std::initializer_list<std::initializer_list<T>>> planes) {
  std::vector<T> flat;
  size_t rows = planes.size() ? planes.begin()->size() : 0;
  size_t cols = rows ? planes.begin()->begin()->size() : 0;
  for (const auto& p : planes) {
    if (p.size() != rows) throw ShapeError("[array] ragged nested list");
    for (const auto& r : p) {
      if (r.size() != cols) throw ShapeError("[array] ragged nested list");
      flat.insert(flat.end(), r.begin(), r.end());
    }
  }
  return array(flat, Shape{int64_t(planes.size()), int64_t(rows), int64_t(cols)});
}

#define JX_INSTANTIATE(T)                                                          \
  template Array array<T>(const std::vector<T>&, const Shape&);                    \
  template Array array<T>(std::initializer_list<std::initializer_list<T>>);        \
  template Array array<T>(                                                         \
      std::initializer_list<std::initializer_list<std::initializer_list<T>>>);
JX_INSTANTIATE(bool)
JX_INSTANTIATE(int8_t)
JX_INSTANTIATE(int16_t)
JX_INSTANTIATE(int32_t)
JX_INSTANTIATE(int64_t)
JX_INSTANTIATE(uint8_t)
JX_INSTANTIATE(uint16_t)
JX_INSTANTIATE(uint32_t)
JX_INSTANTIATE(uint64_t)
JX_INSTANTIATE(half)
JX_INSTANTIATE(bhalf)
JX_INSTANTIATE(float)
JX_INSTANTIATE(double)
JX_INSTANTIATE(std::complex<float>)
JX_INSTANTIATE(std::complex<double>)
#undef JX_INSTANTIATE

Array array(const Array& x, std::optional<DType> dtype) {
  if (!dtype) return x;
  return lax::convert_element_type(x, *dtype, false);
}
Array asarray(const Array& x, std::optional<DType> dtype) { return array(x, dtype); }

Array scalar(double value, DType dtype) {
  // Built directly (imaginary part 0): the result is the same as the cast below would give,
  // and zeros/ones/full of a complex dtype then need no float64 -> complex kernel.
  if (dtype == DType::Complex64) {
    Array a = jx::detail::empty_array({}, dtype, false);
    *jx::detail::data<std::complex<float>>(a) = {float(value), 0.0f};
    return a;
  }
  if (dtype == DType::Complex128) {
    Array a = jx::detail::empty_array({}, dtype, false);
    *jx::detail::data<std::complex<double>>(a) = {value, 0.0};
    return a;
  }
  Array a = jx::detail::empty_array({}, DType::Float64, false);
  *jx::detail::data<double>(a) = value;
  return lax::convert_element_type(a, dtype, false);
}

namespace detail {
Array integer_scalar(int64_t value, DType dtype) {
  Array a = jx::detail::empty_array({}, DType::Int64, false);
  *jx::detail::data<int64_t>(a) = value;
  return lax::convert_element_type(a, dtype, false);
}
Array unsigned_scalar(uint64_t value, DType dtype) {
  Array a = jx::detail::empty_array({}, DType::UInt64, false);
  *jx::detail::data<uint64_t>(a) = value;
  return lax::convert_element_type(a, dtype, false);
}
}  // namespace detail

Array astype(const Array& x, DType dtype) { return lax::convert_element_type(x, dtype, false); }

// Names the function the caller called (zeros, ones, empty build on full).
static void check_dims(const char* op, const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0)
      throw ValueError(str("[", op, "] negative dimension in shape ", shape_str(shape),
                           "; every dimension must be >= 0"));
}

Array full(const Shape& shape, const Array& fill_value, std::optional<DType> dtype) {
  if (fill_value.ndim() > int(shape.size()))
    throw ShapeError(str("[full] fill_value of shape ", shape_str(fill_value.shape()),
                         " does not broadcast to ", shape_str(shape)));
  check_dims("full", shape);
  Array v = dtype ? lax::convert_element_type(fill_value, *dtype, false) : fill_value;
  return detail::broadcast_to("full", v, shape);
}

Array zeros(const Shape& shape, DType dtype) {
  check_dims("zeros", shape);
  return full(shape, scalar(0, dtype));
}
Array ones(const Shape& shape, DType dtype) {
  check_dims("ones", shape);
  return full(shape, scalar(1, dtype));
}
Array empty(const Shape& shape, DType dtype) {
  check_dims("empty", shape);
  return full(shape, scalar(0, dtype));
}

Array zeros_like(const Array& x, std::optional<DType> dtype) {
  return zeros(x.shape(), dtype.value_or(x.dtype()));
}
Array ones_like(const Array& x, std::optional<DType> dtype) {
  return ones(x.shape(), dtype.value_or(x.dtype()));
}
Array empty_like(const Array& x, std::optional<DType> dtype) { return zeros_like(x, dtype); }
Array full_like(const Array& x, const Array& fill_value, std::optional<DType> dtype) {
  return full(x.shape(), fill_value, dtype.value_or(x.dtype()));
}

DType result_type(const std::vector<Array>& xs) {
  if (xs.empty()) throw ValueError("[result_type] needs at least one argument");
  TypedKind r{xs[0].dtype(), xs[0].weak_type()};
  for (size_t i = 1; i < xs.size(); ++i) r = jx::promote(r, {xs[i].dtype(), xs[i].weak_type()});
  return r.dtype;
}

}  // namespace jx::numpy
