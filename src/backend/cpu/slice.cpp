// slice / dynamic_slice / dynamic_update_slice kernels: strided box copies.
#include <cstring>

#include "backend/cpu/gather.h"
#include "backend/cpu/gather_box.h"
#include "backend/cpu/loops.h"

namespace jx::cpu {
namespace {

using box::Box;

// Runs over the box's rows, split across threads when the box is large.
template <class F>
void parallel_runs(const Box& b, F&& fn) {
  const int64_t rows = box::rows_of(b);
  const int nt = num_threads_for(rows * b.inner());
  if (nt <= 1 || rows < nt) {
    box::for_each_run(b, 0, rows, fn);
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num(), T = omp_get_num_threads();
    box::for_each_run(b, rows * t / T, rows * (t + 1) / T, fn);
  }
}

template <class S>
struct SliceCopy {
  static void run(const Box& b, const char* src, char* dst) {
    parallel_runs(b, [&](int64_t so, int64_t d, int64_t n, int64_t st) {
      box::gather_run(reinterpret_cast<S*>(dst) + d, reinterpret_cast<const S*>(src) + so, n, st);
    });
  }
};
template <class S>
struct UpdateCopy {
  static void run(const Box& b, const char* src, char* dst) {
    parallel_runs(b, [&](int64_t so, int64_t d, int64_t n, int64_t st) {
      box::scatter_run(reinterpret_cast<S*>(dst) + so, reinterpret_cast<const S*>(src) + d, n, st);
    });
  }
};

int64_t offset_of(const Dims& start, const std::vector<int64_t>& strides) {
  int64_t o = 0;
  for (size_t d = 0; d < start.size(); ++d) o += start[d] * strides[d];
  return o;
}

// Element offset of dense index `i` of `shape` inside a buffer read through `strides`.
int64_t strided_offset(int64_t i, const Dims& shape, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t d = shape.size(); d-- > 0;) {
    off += (i % shape[d]) * strides[d];
    i /= shape[d];
  }
  return off;
}

int64_t numel(const Dims& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

}  // namespace

void slice(size_t itemsize, const void* src, const Dims& src_shape, const Dims& start,
           const Dims& strides, void* out, const Dims& out_shape) {
  if (numel(out_shape) == 0) return;
  auto ss = box::row_major(src_shape);
  const int64_t base = offset_of(start, ss);
  for (size_t d = 0; d < ss.size(); ++d) ss[d] *= strides[d];
  Box b = box::make(out_shape.data(), ss.data(), out_shape.size());
  const char* s = static_cast<const char*>(src) + size_t(base) * itemsize;
  box::by_size<SliceCopy>(itemsize, b, s, static_cast<char*>(out));
}

void slice_reference(size_t itemsize, const void* src, const Dims& src_shape, const Dims& start,
                     const Dims& strides, void* out, const Dims& out_shape) {
  auto ss = box::row_major(src_shape);
  const int64_t n = numel(out_shape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0;
    for (size_t d = out_shape.size(); d-- > 0;) {
      off += (start[d] + (rem % out_shape[d]) * strides[d]) * ss[d];
      rem /= out_shape[d];
    }
    std::memcpy(static_cast<char*>(out) + size_t(i) * itemsize,
                static_cast<const char*>(src) + size_t(off) * itemsize, itemsize);
  }
}

void update_slice(size_t itemsize, void* dst, const Dims& dst_shape, const Dims& start,
                  const void* update, const Dims& upd_shape) {
  if (numel(upd_shape) == 0) return;
  auto ds = box::row_major(dst_shape);
  const int64_t base = offset_of(start, ds);
  Box b = box::make(upd_shape.data(), ds.data(), upd_shape.size());
  char* d = static_cast<char*>(dst) + size_t(base) * itemsize;
  box::by_size<UpdateCopy>(itemsize, b, static_cast<const char*>(update), d);
}

void update_slice_reference(size_t itemsize, void* dst, const Dims& dst_shape, const Dims& start,
                            const void* update, const Dims& upd_shape) {
  auto ds = box::row_major(dst_shape);
  const int64_t base = offset_of(start, ds);
  const int64_t n = numel(upd_shape);
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(static_cast<char*>(dst) + size_t(base + strided_offset(i, upd_shape, ds)) * itemsize,
                static_cast<const char*>(update) + size_t(i) * itemsize, itemsize);
}

}  // namespace jx::cpu
