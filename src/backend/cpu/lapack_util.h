// Helpers shared by the LAPACK kernels (linalg.cpp, schur.cpp). Internal to backend/cpu.
#pragma once
#include <algorithm>
#include <complex>
#include <cstdint>
#include <limits>

#include "backend/cpu/linalg.h"

namespace jx::cpu::linalg {

// NaN, or NaN + NaN i (as JAX fills a failed complex decomposition).
template <class T>
inline const T kNaN = [] {
  const Real<T> nan = std::numeric_limits<Real<T>>::quiet_NaN();
  if constexpr (kComplex<T>) return T(nan, nan);
  else return nan;
}();

// LAPACK reports the optimal workspace size as a floating-point number (a complex one's
// real part, for the complex routines).
template <class T>
int work_size(T query) {
  return std::max(1, static_cast<int>(std::real(query)));
}

// dst (cols x rows, row-major) = transpose of src (rows x cols, row-major): the change
// between row- and column-major storage.
template <class T>
void transpose(const T* src, int64_t rows, int64_t cols, T* dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[j * rows + i] = src[i * cols + j];
}

template <class T>
void fill_nan(T* p, int64_t n) {
  if (p) std::fill(p, p + n, kNaN<T>);
}

}  // namespace jx::cpu::linalg
