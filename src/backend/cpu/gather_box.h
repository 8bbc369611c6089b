// Box copies shared by the slice/gather/scatter kernels: a box is a strided
// sub-array of a row-major buffer. Dims that are contiguous across each other are merged
// once, so that a row slice of a 2-d array is a single memcpy.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "jx/error.h"

namespace jx::cpu::box {

// A box of `size` (merged, outermost first) read through `stride` (elements).
struct Box {
  std::vector<int64_t> size, stride;
  int64_t numel() const {
    int64_t n = 1;
    for (auto s : size) n *= s;
    return n;
  }
  int64_t inner() const { return size.back(); }
  int64_t inner_stride() const { return stride.back(); }
};

// Merges dims of `shape` read through `strides`; the contiguous side is dense row-major.
inline Box make(const int64_t* shape, const int64_t* strides, size_t ndim) {
  Box b;
  for (size_t d = 0; d < ndim; ++d) {
    if (shape[d] == 1) continue;
    if (!b.size.empty() && b.stride.back() == strides[d] * shape[d]) {
      b.size.back() *= shape[d];
      b.stride.back() = strides[d];
    } else {
      b.size.push_back(shape[d]);
      b.stride.push_back(strides[d]);
    }
  }
  if (b.size.empty()) {
    b.size.push_back(1);
    b.stride.push_back(1);
  }
  for (size_t d = 0; d < ndim; ++d)
    if (shape[d] == 0) b.size.assign(1, 0);
  return b;
}

inline std::vector<int64_t> row_major(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

inline int64_t rows_of(const Box& b) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < b.size.size(); ++d) rows *= b.size[d];
  return b.inner() == 0 ? 0 : rows;
}

// Calls fn(strided_offset, dense_offset, n, inner_stride) once per innermost run of the box,
// for runs [r0, r1).
template <class F>
inline void for_each_run(const Box& b, int64_t r0, int64_t r1, F&& fn) {
  const size_t nd = b.size.size();
  const int64_t n = b.inner();
  if (n == 0 || r0 >= r1) return;
  std::vector<int64_t> idx(nd > 1 ? nd - 1 : 0, 0);
  int64_t off = 0, rem = r0;
  for (size_t d = nd - 1; d-- > 0;) {
    idx[d] = rem % b.size[d];
    rem /= b.size[d];
    off += idx[d] * b.stride[d];
  }
  for (int64_t r = r0; r < r1; ++r) {
    fn(off, r * n, n, b.inner_stride());
    for (size_t d = nd - 1; d-- > 0;) {
      off += b.stride[d];
      if (++idx[d] < b.size[d]) break;
      off -= b.stride[d] * b.size[d];
      idx[d] = 0;
    }
  }
}
template <class F>
inline void for_each_run(const Box& b, F&& fn) {
  for_each_run(b, 0, rows_of(b), fn);
}

// Copies n elements of S bytes from a strided source to a dense destination (or back).
template <class S>
inline void gather_run(S* dst, const S* src, int64_t n, int64_t st) {
  if (st == 1) {
    std::memcpy(dst, src, size_t(n) * sizeof(S));
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i * st];
  }
}
template <class S>
inline void scatter_run(S* dst, const S* src, int64_t n, int64_t st) {
  if (st == 1) {
    std::memcpy(dst, src, size_t(n) * sizeof(S));
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) dst[i * st] = src[i];
  }
}

// complex128's 16 bytes, as two words (its buffers are only 8-byte aligned).
struct Bytes16 {
  uint64_t lo, hi;
};

// Dispatch on the element size: the kernels only move bytes.
template <template <class> class F, class... A>
inline void by_size(size_t itemsize, A&&... a) {
  switch (itemsize) {
    case 1: return F<uint8_t>::run(a...);
    case 2: return F<uint16_t>::run(a...);
    case 4: return F<uint32_t>::run(a...);
    case 8: return F<uint64_t>::run(a...);
    case 16: return F<Bytes16>::run(a...);
    default: throw InternalError("jx internal error: no copy kernel for this element size");
  }
}

}  // namespace jx::cpu::box
