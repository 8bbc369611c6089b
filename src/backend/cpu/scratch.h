// Temporary memory for kernels, from the caching allocator: fresh pages cost milliseconds
// per MB on these machines, so a kernel that news and frees a large buffer per call
// spends its time in page faults. Not initialized.
#pragma once
#include <cstddef>

#include "core/allocator.h"

namespace jx::cpu {

class Scratch {
 public:
  Scratch() = default;
  explicit Scratch(size_t bytes) { reset(bytes); }
  ~Scratch() { release(); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void reset(size_t bytes) {
    release();
    bytes_ = bytes;
    data_ = detail::allocate(bytes);
  }
  void* data() const { return data_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void release() {
    if (data_) detail::deallocate(data_, bytes_);
    data_ = nullptr;
  }
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace jx::cpu
