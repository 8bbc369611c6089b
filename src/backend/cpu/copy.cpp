#include <cstring>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"

namespace jx::cpu {
namespace {

template <class T>
void copy_typed(const T* src, const int64_t* ss, T* dst, const int64_t* os, int ndim) {
  StridedLoop<1> loop(os, ndim, {std::vector<int64_t>(ss, ss + ndim)});
  loop.run([&](int64_t o, const std::array<int64_t, 1>& off, int64_t n,
               const std::array<int64_t, 1>& st) {
    const T* s = src + off[0];
    T* d = dst + o;
    if (st[0] == 1) {
      std::memcpy(d, s, size_t(n) * sizeof(T));
    } else if (st[0] == 0) {
      const T v = s[0];
      for (int64_t i = 0; i < n; ++i) d[i] = v;
    } else {
      for (int64_t i = 0; i < n; ++i) d[i] = s[i * st[0]];
    }
  });
}

}  // namespace

void copy_strided(size_t itemsize, const void* src, const int64_t* ss, void* dst,
                  const int64_t* os, int ndim) {
  int64_t total = 1;
  for (int d = 0; d < ndim; ++d) total *= os[d];
  if (total == 0) return;
  switch (itemsize) {
    case 1: return copy_typed(static_cast<const uint8_t*>(src), ss, static_cast<uint8_t*>(dst), os, ndim);
    case 2: return copy_typed(static_cast<const uint16_t*>(src), ss, static_cast<uint16_t*>(dst), os, ndim);
    case 4: return copy_typed(static_cast<const uint32_t*>(src), ss, static_cast<uint32_t*>(dst), os, ndim);
    case 8: return copy_typed(static_cast<const uint64_t*>(src), ss, static_cast<uint64_t*>(dst), os, ndim);
    default: copy_strided_reference(itemsize, src, ss, dst, os, ndim);
  }
}

void copy_strided_reference(size_t itemsize, const void* src, const int64_t* ss, void* dst,
                            const int64_t* os, int ndim) {
  int64_t total = 1;
  for (int d = 0; d < ndim; ++d) total *= os[d];
  for (int64_t i = 0; i < total; ++i) {
    int64_t rem = i, off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      off += (rem % os[d]) * ss[d];
      rem /= os[d];
    }
    std::memcpy(static_cast<char*>(dst) + size_t(i) * itemsize,
                static_cast<const char*>(src) + size_t(off) * itemsize, itemsize);
  }
}

}  // namespace jx::cpu
