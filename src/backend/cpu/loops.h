// Strided iteration shared by the CPU kernels. Outputs are contiguous row-major; each
// input is read through strides in elements (0 along broadcast dims), so broadcasting is
// never materialized. Kernels know nothing of tracing: pointers, shapes, strides in.
#pragma once
#include <omp.h>

#include <array>
#include <cstdint>
#include <vector>

#include "jx/shape.h"

namespace jx::cpu {

// Elements per thread below which a loop stays single-threaded.
inline constexpr int64_t kParallelGrain = 1 << 15;

inline int num_threads_for(int64_t work) {
  if (work < 2 * kParallelGrain) return 1;
  int64_t t = work / kParallelGrain;
  int max = omp_get_max_threads();
  return int(t < max ? t : max);
}

inline int64_t flat_size(const int64_t* shape, int ndim) {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= shape[i];
  return n;
}

inline bool same_dims(const int64_t* a, const int64_t* b, int ndim) {
  for (int i = 0; i < ndim; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// Per-dim values (strides, merged shapes): Shape's inline storage keeps the common ranks off
// the heap, which a 1-element op would otherwise visit five times in its loop setup.
using DimVec = Shape;

// Row-major contiguous strides (in elements) of a shape.
inline DimVec contiguous_strides(const int64_t* shape, int ndim) {
  DimVec s(static_cast<size_t>(ndim));
  int64_t acc = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    s[size_t(i)] = acc;
    acc *= shape[i];
  }
  return s;
}

// Strides of an input of shape `in_shape` (same rank as out, dims equal or 1) broadcast
// to the output: 0 along size-1 dims.
inline DimVec broadcast_strides(const int64_t* in_shape, const int64_t* out_shape, int ndim) {
  auto s = contiguous_strides(in_shape, ndim);
  for (int i = 0; i < ndim; ++i)
    if (in_shape[i] == 1 && out_shape[i] != 1) s[size_t(i)] = 0;
  return s;
}

// An N-input strided loop nest over a contiguous output, with dims merged where every
// operand is contiguous across them. fn(out_index, in_index[N], n, in_inner_stride[N])
// handles one run of n elements along the innermost merged dim.
template <size_t N>
struct StridedLoop {
  DimVec shape;                   // merged shape
  std::array<DimVec, N> strides;  // merged input strides

  StridedLoop(const int64_t* out_shape, int ndim, const std::array<DimVec, N>& in) {
    for (int d = 0; d < ndim; ++d) {
      if (out_shape[d] == 1) continue;  // size-1 dims carry no iteration
      bool merge = !shape.empty();
      if (merge) {
        for (size_t k = 0; k < N; ++k)
          if (strides[k].back() != in[k][size_t(d)] * out_shape[d]) merge = false;
      }
      if (merge) {
        shape.back() *= out_shape[d];
        for (size_t k = 0; k < N; ++k) strides[k].back() = in[k][size_t(d)];
      } else {
        shape.push_back(out_shape[d]);
        for (size_t k = 0; k < N; ++k) strides[k].push_back(in[k][size_t(d)]);
      }
    }
    if (shape.empty()) {
      shape.push_back(1);
      for (size_t k = 0; k < N; ++k) strides[k].push_back(0);
    }
  }

  int64_t inner() const { return shape.back(); }
  int64_t rows() const {
    int64_t r = 1;
    for (size_t d = 0; d + 1 < shape.size(); ++d) r *= shape[d];
    return r;
  }

  // Runs fn over rows [r0, r1).
  template <class F>
  void run_rows(int64_t r0, int64_t r1, F&& fn) const {
    const int nd = int(shape.size());
    const int64_t n = inner();
    std::array<int64_t, N> inner_stride;
    for (size_t k = 0; k < N; ++k) inner_stride[k] = strides[k].back();
    // Decompose r0 into a multi-index over the outer dims.
    DimVec idx(size_t(nd > 1 ? nd - 1 : 0), 0);
    int64_t rem = r0;
    for (int d = nd - 2; d >= 0; --d) {
      idx[size_t(d)] = rem % shape[size_t(d)];
      rem /= shape[size_t(d)];
    }
    std::array<int64_t, N> off{};
    for (size_t k = 0; k < N; ++k)
      for (int d = 0; d < nd - 1; ++d) off[k] += idx[size_t(d)] * strides[k][size_t(d)];
    for (int64_t r = r0; r < r1; ++r) {
      fn(r * n, off, n, inner_stride);
      for (int d = nd - 2; d >= 0; --d) {  // increment the multi-index
        for (size_t k = 0; k < N; ++k) off[k] += strides[k][size_t(d)];
        if (++idx[size_t(d)] < shape[size_t(d)]) break;
        for (size_t k = 0; k < N; ++k) off[k] -= strides[k][size_t(d)] * shape[size_t(d)];
        idx[size_t(d)] = 0;
      }
    }
  }

  // Runs fn over all rows, split across threads when the work is large.
  template <class F>
  void run(F&& fn) const {
    const int64_t R = rows();
    const int64_t total = R * inner();
    if (total == 0) return;  // a size-0 dim: nothing to do (and no division by it below)
    int nt = num_threads_for(total);
    if (nt <= 1 || R == 1) {
      if (nt > 1 && R == 1) {  // one long row: split it
        const int64_t n = inner();
        std::array<int64_t, N> inner_stride;
        for (size_t k = 0; k < N; ++k) inner_stride[k] = strides[k].back();
#pragma omp parallel num_threads(nt)
        {
          int t = omp_get_thread_num(), T = omp_get_num_threads();
          int64_t b = n * t / T, e = n * (t + 1) / T;
          std::array<int64_t, N> off;
          for (size_t k = 0; k < N; ++k) off[k] = b * inner_stride[k];
          if (e > b) fn(b, off, e - b, inner_stride);
        }
        return;
      }
      run_rows(0, R, fn);
      return;
    }
#pragma omp parallel num_threads(nt)
    {
      int t = omp_get_thread_num(), T = omp_get_num_threads();
      int64_t b = R * t / T, e = R * (t + 1) / T;
      if (e > b) run_rows(b, e, fn);
    }
  }
};

}  // namespace jx::cpu
