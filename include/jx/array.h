// jx::Array: a value-semantics handle to an immutable array. Copying an Array copies the
// handle, never the data; no operation mutates an existing array (`.at(...).set(...)`
// returns a new one). Under a transformation the handle holds a tracer instead of data.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "jx/device.h"
#include "jx/dtype.h"
#include "jx/error.h"
#include "jx/shape.h"

namespace jx {

namespace detail {
struct ArrayImpl;
}

class Array;

// `jx::none` is Python's None: an absent slice bound, an unmapped vmap axis, "all axes".
struct None {};
inline constexpr None none{};
struct NewAxis {};
inline constexpr NewAxis newaxis{};
struct Ellipsis {};
inline constexpr Ellipsis ellipsis{};

// A shape argument that may be absent (JAX's shape=None): jx::none, std::nullopt, {} or
// omitted mean "absent"; a Shape or a brace list {64, 128} gives one. So every function
// that takes a shape takes {...}: jr::bernoulli(key, 0.5, {64, 128}).
struct OptionalShape : std::optional<Shape> {
  OptionalShape() = default;
  OptionalShape(std::nullopt_t) {}
  OptionalShape(None) {}
  OptionalShape(Shape s) : std::optional<Shape>(std::move(s)) {}
  OptionalShape(std::initializer_list<int64_t> dims) : std::optional<Shape>(Shape(dims)) {}
  OptionalShape(const std::vector<int64_t>& dims) : std::optional<Shape>(Shape(dims)) {}
};

// Python's slice(start, stop, step); an absent bound is jx::none.
struct Slice {
  std::optional<int64_t> start, stop, step;
};
struct SliceBound {
  std::optional<int64_t> v;
  SliceBound(None) {}
  template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  SliceBound(T x) : v(int64_t(x)) {}
};
inline Slice slice() { return {}; }
inline Slice slice(SliceBound stop) { return {std::nullopt, stop.v, std::nullopt}; }
inline Slice slice(SliceBound start, SliceBound stop, SliceBound step = none) {
  return {start.v, stop.v, step.v};
}

// One entry of an index expression: x(2, jx::slice(1, 7, 2), jx::newaxis, jx::ellipsis, idx).
class IndexArg {
 public:
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  IndexArg(T i) : v_(int64_t(i)) {}
  IndexArg(Slice s) : v_(s) {}
  IndexArg(NewAxis) : v_(NewAxis{}) {}
  IndexArg(None) : v_(NewAxis{}) {}  // as in NumPy, x[None] adds an axis
  IndexArg(Ellipsis) : v_(Ellipsis{}) {}
  IndexArg(const Array& a);
  IndexArg(const std::vector<int64_t>& idx);
  IndexArg(const IndexArg&);
  IndexArg(IndexArg&&) noexcept;
  IndexArg& operator=(const IndexArg&);
  ~IndexArg();
  using Value = std::variant<int64_t, Slice, NewAxis, Ellipsis, std::shared_ptr<Array>>;
  const Value& value() const { return v_; }

 private:
  Value v_;
};

// JAX's out-of-bounds modes for .at[] and gathers.
enum class IndexMode { promise_in_bounds, clip, drop, fill };
struct AtOptions {
  std::optional<IndexMode> mode;
  std::optional<double> fill_value;  // for get with mode=fill; default NaN / min int / max uint / true
  bool indices_are_sorted = false;
  bool unique_indices = false;
};

// x.at(idx...): functional updates, as JAX's x.at[idx].
class AtRef {
 public:
  Array get(const AtOptions& opts = {}) const;
  Array set(const Array& values, const AtOptions& opts = {}) const;
  Array add(const Array& values, const AtOptions& opts = {}) const;
  Array subtract(const Array& values, const AtOptions& opts = {}) const;
  Array multiply(const Array& values, const AtOptions& opts = {}) const;
  Array divide(const Array& values, const AtOptions& opts = {}) const;
  Array power(const Array& values, const AtOptions& opts = {}) const;
  Array min(const Array& values, const AtOptions& opts = {}) const;
  Array max(const Array& values, const AtOptions& opts = {}) const;

  AtRef(const Array& base, std::vector<IndexArg> idx);
  ~AtRef();

 private:
  std::unique_ptr<Array> base_;
  std::vector<IndexArg> idx_;
};

// Which axes a reduction runs over: jx::none (all), an int, or a list.
struct Axes {
  std::optional<std::vector<int64_t>> axes;
  Axes() = default;
  Axes(None) {}
  template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  Axes(T a) : axes(std::vector<int64_t>{int64_t(a)}) {}
  Axes(std::initializer_list<int64_t> a) : axes(std::vector<int64_t>(a)) {}
  Axes(std::vector<int64_t> a) : axes(std::move(a)) {}
};

namespace detail {
template <class T>
inline constexpr bool always_false_v = false;
}

class Array {
 public:
  Array();
  Array(const Array&) = default;
  Array(Array&&) noexcept = default;
  Array& operator=(const Array&) & = default;
  Array& operator=(Array&&) & noexcept = default;
  ~Array() = default;
  // x(0, jx::slice()) = v and tree.array()(...) = v would assign to a temporary copy and
  // change nothing, as JAX's x[0] = v cannot: arrays are immutable.
  template <class T>
  Array& operator=(T&&) && {
    static_assert(detail::always_false_v<T>,
                  "jx::Array is immutable: assigning to an index result x(...) (or to any "
                  "temporary Array) changes nothing. Write x = x.at(...).set(value) to get a "
                  "new array with the update.");
    return *this;
  }
  // A C++ arithmetic scalar becomes a weakly typed 0-d array (int32 or float32), as a
  // Python scalar does in JAX; bool becomes a (strong) bool scalar.
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Array(T v) : Array(scalar_init(double(v), std::is_same_v<T, bool>, std::is_floating_point_v<T>,
                                 std::is_integral_v<T> ? int64_t(v) : 0)) {}
  Array(half v);
  Array(bhalf v);
  // A C++ complex number becomes a weakly typed complex64 scalar, as a Python complex does
  // in JAX; jnp::array(std::vector<std::complex<double>>{...}) keeps complex128.
  Array(std::complex<float> v);
  Array(std::complex<double> v);

  bool valid() const { return bool(impl_); }
  const Shape& shape() const;
  int64_t shape(int axis) const;  // negative axes count from the end
  int ndim() const;
  int64_t size() const;
  DTypeObject dtype() const;  // converts to DType; x.dtype().name() == "float32"
  bool weak_type() const;
  size_t itemsize() const { return jx::itemsize(dtype()); }
  size_t nbytes() const { return size_t(size()) * itemsize(); }
  // True for an array that holds data (not a tracer).
  bool is_concrete() const;
  // The device the array is committed to (device_put), else the default device (see
  // jx/device.h). Throws ConcretizationError for a traced array.
  Device device() const;
  bool committed() const;
  // JAX's x.block_until_ready(): jx computes on the calling thread, so a returned array is
  // already complete; this returns it, so that timing code written for JAX reads the same.
  const Array& block_until_ready() const { return *this; }

  // The single element, converted to T. Throws for size != 1 or a traced array.
  template <class T>
  T item() const;
  // All elements in row-major order, converted to T.
  template <class T>
  std::vector<T> to_vector() const;

  Array astype(DType t) const;
  Array reshape(const Shape& new_shape) const;  // one dim may be -1
  Array T() const;
  Array transpose(const std::vector<int64_t>& axes = {}) const;
  Array flatten() const;
  Array ravel() const { return flatten(); }
  Array squeeze(Axes axes = none) const;
  Array swapaxes(int64_t a, int64_t b) const;
  Array copy() const;
  // x.real, x.imag, x.conj() of JAX (jnp::real / imag / conjugate).
  Array real() const;
  Array imag() const;
  Array conj() const;

  Array sum(Axes axes = none, bool keepdims = false) const;
  Array prod(Axes axes = none, bool keepdims = false) const;
  Array mean(Axes axes = none, bool keepdims = false) const;
  Array var(Axes axes = none, int64_t ddof = 0, bool keepdims = false) const;
  Array std(Axes axes = none, int64_t ddof = 0, bool keepdims = false) const;
  Array max(Axes axes = none, bool keepdims = false) const;
  Array min(Axes axes = none, bool keepdims = false) const;
  Array all(Axes axes = none, bool keepdims = false) const;
  Array any(Axes axes = none, bool keepdims = false) const;
  Array argmax(std::optional<int64_t> axis = std::nullopt, bool keepdims = false) const;
  Array argmin(std::optional<int64_t> axis = std::nullopt, bool keepdims = false) const;
  Array cumsum(std::optional<int64_t> axis = std::nullopt) const;
  Array clip(const Array& lo, const Array& hi) const;
  Array round(int decimals = 0) const;
  Array dot(const Array& other) const;
  Array sort(int64_t axis = -1) const;
  Array argsort(int64_t axis = -1) const;

  // NumPy indexing: x(2, jx::slice(1, 7, 2), jx::newaxis, jx::ellipsis, index_array).
  // Out-of-bounds integer reads are clamped, as in JAX.
  template <class... I>
  Array operator()(I&&... idx) const {
    return index(std::vector<IndexArg>{IndexArg(std::forward<I>(idx))...});
  }
  Array index(const std::vector<IndexArg>& idx) const;
  template <class... I>
  AtRef at(I&&... idx) const {
    return AtRef(*this, std::vector<IndexArg>{IndexArg(std::forward<I>(idx))...});
  }

  // JAX's x[i] is x(i) here; operator[] exists only to say so at compile time.
  template <class I>
  Array operator[](I&&) const {
    static_assert(detail::always_false_v<I>,
                  "jx::Array has no operator[]: index with x(0), x(jx::slice(1, 3)), "
                  "x(jx::ellipsis, 0), as JAX's x[0], x[1:3], x[..., 0].");
    return *this;
  }

  // Truth value of a one-element concrete array (throws for size != 1 or a tracer).
  explicit operator bool() const;

  // NumPy's repr: Array([[1., 2.]], dtype=float32).
  std::string repr() const;

  // ---- for jx internals ----
  explicit Array(std::shared_ptr<detail::ArrayImpl> impl) : impl_(std::move(impl)) {}
  const std::shared_ptr<detail::ArrayImpl>& impl() const { return impl_; }

 private:
  static Array scalar_init(double v, bool is_bool, bool is_float, int64_t iv);
  std::shared_ptr<detail::ArrayImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Array& a);

// Operators follow jnp: NumPy broadcasting and JAX's promotion.
Array operator+(const Array& a, const Array& b);
Array operator-(const Array& a, const Array& b);
Array operator*(const Array& a, const Array& b);
Array operator/(const Array& a, const Array& b);  // true division
Array operator%(const Array& a, const Array& b);  // Python's modulo (sign of b)
Array operator-(const Array& a);
Array operator+(const Array& a);
Array operator==(const Array& a, const Array& b);
Array operator!=(const Array& a, const Array& b);
Array operator<(const Array& a, const Array& b);
Array operator<=(const Array& a, const Array& b);
Array operator>(const Array& a, const Array& b);
Array operator>=(const Array& a, const Array& b);
Array operator&(const Array& a, const Array& b);
Array operator|(const Array& a, const Array& b);
Array operator^(const Array& a, const Array& b);
Array operator~(const Array& a);
Array operator!(const Array& a);  // logical_not
Array operator<<(const Array& a, const Array& b);
Array operator>>(const Array& a, const Array& b);
// Rebinding, as Python's x += y on a jax.Array: x becomes a new array.
inline Array& operator+=(Array& a, const Array& b) { return a = a + b; }
inline Array& operator-=(Array& a, const Array& b) { return a = a - b; }
inline Array& operator*=(Array& a, const Array& b) { return a = a * b; }
inline Array& operator/=(Array& a, const Array& b) { return a = a / b; }

}  // namespace jx
