#include <ostream>
#include <sstream>

#include "core/array_impl.h"
#include "support/check.h"
#include "support/dtype_switch.h"
#include "support/str.h"

namespace jx {

namespace detail {

Array empty_array(const Shape& shape, DType dtype, bool weak) {
  auto im = std::make_shared<ArrayImpl>();
  im->shape = shape;
  im->dtype = dtype;
  im->weak = weak;
  im->buffer = std::make_shared<Buffer>(size_t(shape.numel()) * itemsize(dtype));
  return Array(std::move(im));
}

Array alias_array(const Array& a, const Shape& shape, DType dtype, bool weak) {
  const ArrayImpl& src = impl_of(a);
  JX_CHECK(src.buffer, "alias of a traced array");
  JX_CHECK(size_t(shape.numel()) * itemsize(dtype) == size_t(src.shape.numel()) * itemsize(src.dtype));
  auto im = std::make_shared<ArrayImpl>();
  im->shape = shape;
  im->dtype = dtype;
  im->weak = weak;
  im->buffer = src.buffer;
  return Array(std::move(im));
}

Array alias_array(const Array& a, const Shape& shape, bool weak) {
  return alias_array(a, shape, impl_of(a).dtype, weak);
}

void* raw_data(const Array& a) {
  const ArrayImpl& im = impl_of(a);
  JX_CHECK(im.buffer, "raw_data of a traced array");
  return im.buffer->data();
}

}  // namespace detail

namespace {

const detail::ArrayImpl& checked(const Array& a, const char* what) {
  if (!a.valid())
    throw ValueError(str("[", what, "] called on an empty jx::Array (default-constructed)"));
  return *a.impl();
}

void require_concrete(const Array& a, const char* what) {
  if (!a.is_concrete() && !a.impl()->tracer)
    throw ValueError(str("[", what, "] the array (", type_str(a.dtype(), a.shape()),
                         ") was deleted: it was donated to a jitted function (donate_argnums). "
                         "Use the function's outputs instead."));
  if (!a.is_concrete())
    throw ConcretizationError(
        str("[", what, "] needs a concrete value, but the array is traced (",
            type_str(a.dtype(), a.shape()),
            "). Inside jit/grad/vmap, keep the value as an Array and use jx::lax::cond / "
            "jnp::where instead of C++ control flow, or make it a static (non-Array) argument."));
}

template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<std::complex<T>> = true;

// A real value (never half/bhalf: those come as float) as To.
template <class To, class V>
To convert_real(V v) {
  if constexpr (std::is_same_v<To, half> || std::is_same_v<To, bhalf>)
    return To(static_cast<float>(v));
  else if constexpr (is_complex_v<To>)
    return To(static_cast<typename To::value_type>(v));
  else
    return static_cast<To>(v);
}

// One element as To. A complex element cast to a real To keeps its real part, as NumPy's
// astype does (NumPy also warns with ComplexWarning; jx has no warnings channel, so it is
// silent), except that bool tests both parts, as NumPy's and Python's bool(1j) do. A real
// element cast to complex gets imaginary part 0.
template <class To, class T>
To convert_one(T v) {
  if constexpr (is_complex_v<T>) {
    if constexpr (is_complex_v<To>)
      return To(typename To::value_type(v.real()), typename To::value_type(v.imag()));
    else if constexpr (std::is_same_v<To, bool>)
      return v.real() != 0 || v.imag() != 0;
    else
      return convert_real<To>(v.real());
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bhalf>) {
    return convert_real<To>(float(v));
  } else {
    return convert_real<To>(v);
  }
}

template <class To>
To convert_elem(const void* p, DType dt, int64_t i) {
  To r{};
  JX_DTYPE_SWITCH_C(dt, T, { r = convert_one<To>(static_cast<const T*>(p)[i]); });
  return r;
}

}  // namespace

Array::Array() = default;

Array Array::scalar_init(double v, bool is_bool, bool is_float, int64_t iv) {
  if (is_bool) {
    Array a = detail::empty_array({}, DType::Bool, false);
    *detail::data<bool>(a) = v != 0;
    return a;
  }
  if (is_float) {
    Array a = detail::empty_array({}, DType::Float32, true);
    *detail::data<float>(a) = float(v);
    a.impl()->cpp_value = v;
    return a;
  }
  if (iv < INT32_MIN || iv > INT32_MAX)
    throw ValueError(str("[asarray] the C++ integer ", iv,
                         " does not fit the default int32 of a weakly typed scalar; pass "
                         "jnp::array(value, jx::int64) to make an int64 array"));
  Array a = detail::empty_array({}, DType::Int32, true);
  *detail::data<int32_t>(a) = int32_t(iv);
  return a;
}

Array::Array(half v) {
  *this = detail::empty_array({}, DType::Float16, false);
  *detail::data<half>(*this) = v;
}

Array::Array(bhalf v) {
  *this = detail::empty_array({}, DType::BFloat16, false);
  *detail::data<bhalf>(*this) = v;
}

// Weak complex64, as JAX's x32 mode makes a Python complex.
Array::Array(std::complex<float> v) {
  *this = detail::empty_array({}, DType::Complex64, true);
  *detail::data<std::complex<float>>(*this) = v;
}

Array::Array(std::complex<double> v) : Array(std::complex<float>(v)) {}

const Shape& Array::shape() const { return checked(*this, "shape").shape; }
int64_t Array::shape(int axis) const {
  const Shape& s = shape();
  int n = int(s.size());
  if (axis < -n || axis >= n)
    throw IndexError(str("[shape] axis ", axis, " is out of bounds for an array of rank ", n));
  return s[size_t(axis < 0 ? axis + n : axis)];
}
int Array::ndim() const { return int(checked(*this, "ndim").shape.size()); }
int64_t Array::size() const { return checked(*this, "size").shape.numel(); }
DTypeObject Array::dtype() const { return DTypeObject(checked(*this, "dtype").dtype); }
bool Array::weak_type() const { return checked(*this, "weak_type").weak; }
bool Array::is_concrete() const { return bool(checked(*this, "is_concrete").buffer); }

template <class T>
T Array::item() const {
  const auto& im = checked(*this, "item");
  require_concrete(*this, "item");
  if (im.shape.numel() != 1)
    throw ValueError(str("[item] needs an array with exactly one element, got ",
                         type_str(im.dtype, im.shape), "; index it first, e.g. x(0).item<T>()"));
  return convert_elem<T>(im.buffer->data(), im.dtype, 0);
}

template <class T>
std::vector<T> Array::to_vector() const {
  const auto& im = checked(*this, "to_vector");
  require_concrete(*this, "to_vector");
  int64_t n = im.shape.numel();
  std::vector<T> out(static_cast<size_t>(n));
  const void* p = im.buffer->data();
  if constexpr (!std::is_same_v<T, bool>) {
    if (im.dtype == dtype_of<T>()) {
      if (n) std::memcpy(out.data(), p, size_t(n) * sizeof(T));
      return out;
    }
  }
  for (int64_t i = 0; i < n; ++i) out[size_t(i)] = convert_elem<T>(p, im.dtype, i);
  return out;
}

#define JX_INSTANTIATE(T)                   \
  template T Array::item<T>() const;        \
  template std::vector<T> Array::to_vector<T>() const;
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

Array::operator bool() const {
  const auto& im = checked(*this, "bool");
  require_concrete(*this, "bool");
  if (im.shape.numel() != 1)
    throw ValueError(str("[bool] the truth value of an array with more than one element is "
                         "ambiguous (", type_str(im.dtype, im.shape), "); use jnp::any or jnp::all"));
  return convert_elem<bool>(im.buffer->data(), im.dtype, 0);
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  if (s.size() == 1) os << ",";
  os << ")";
  return os.str();
}
std::ostream& operator<<(std::ostream& os, const Shape& s) { return os << shape_str(s); }

}  // namespace jx
