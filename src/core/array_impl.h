// What an Array handle points at. Internal to jx.
#pragma once
#include <memory>
#include <optional>

#include "core/allocator.h"
#include "jx/array.h"

namespace jx::detail {

// An owned, 64-byte-aligned block from the caching allocator.
class Buffer {
 public:
  explicit Buffer(size_t nbytes) : data_(allocate(nbytes)), nbytes_(nbytes) {}
  ~Buffer() { deallocate(data_, nbytes_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }

 private:
  void* data_;
  size_t nbytes_;
};

// The transforms layer derives its tracers from this; core only needs to know that an
// array may hold one instead of a buffer.
class Tracer {
 public:
  virtual ~Tracer() = default;
};

struct ArrayImpl {
  Shape shape;
  DType dtype = DType::Float32;
  bool weak = false;
  std::shared_ptr<Buffer> buffer;  // concrete data (row-major, contiguous); null for tracers
  std::shared_ptr<Tracer> tracer;  // set while traced
  // A weak 0-d array made from a C++ floating-point number keeps the number itself (its
  // float32 data is rounded): a conversion to another dtype rounds once, from this value,
  // so x_f64 * 0.3 multiplies by the double 0.3, as JAX does with a Python float.
  std::optional<double> cpp_value;
};

// A fresh concrete array with uninitialized data.
Array empty_array(const Shape& shape, DType dtype, bool weak = false);
// A new handle that shares `a`'s buffer under another shape (same element count).
Array alias_array(const Array& a, const Shape& shape, bool weak);
Array alias_array(const Array& a, const Shape& shape, DType dtype, bool weak);

inline const ArrayImpl& impl_of(const Array& a) { return *a.impl(); }
// Raw data of a concrete array; throws InternalError for a tracer.
void* raw_data(const Array& a);
template <class T>
T* data(const Array& a) {
  return static_cast<T*>(raw_data(a));
}

}  // namespace jx::detail
