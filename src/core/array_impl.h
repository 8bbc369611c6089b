// What an Array handle points at. Internal to jx.
#pragma once
#include <memory>
#include <optional>
#include <span>

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
  // The device the array is committed to (jx::device_put, or an operation on committed
  // operands), -1 when uncommitted.
  int32_t device = -1;
};

// A fresh concrete array with uninitialized data.
Array empty_array(const Shape& shape, DType dtype, bool weak = false);
// A new handle that shares `a`'s buffer under another shape (same element count).
Array alias_array(const Array& a, const Shape& shape, bool weak);
Array alias_array(const Array& a, const Shape& shape, DType dtype, bool weak);

inline const ArrayImpl& impl_of(const Array& a) { return *a.impl(); }

// The device an operation on `operands` runs on: the one they are committed to, -1 when
// none is; operands committed to two devices throw ValueError naming `op`. Tracers are
// skipped.
int32_t committed_device(const char* op, std::span<const Array> operands);
// Merges one more operand's device into `device` (as above).
void merge_device(const char* op, int32_t& device, const Array& operand);
// Commits `out` to `device` (>= 0); a handle shared with others is re-aliased first, so that
// an operand or a cached constant returned as a result keeps its own device.
void commit(Array& out, int32_t device);
// Raw data of a concrete array; throws InternalError for a tracer.
void* raw_data(const Array& a);
template <class T>
T* data(const Array& a) {
  return static_cast<T*>(raw_data(a));
}

}  // namespace jx::detail
