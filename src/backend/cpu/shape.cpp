#include "backend/cpu/shape.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "backend/cpu/loops.h"
#include "support/check.h"
#include "support/dtype_switch.h"

namespace jx::cpu {
namespace {

int64_t numel(const int64_t* s, int n) {
  int64_t t = 1;
  for (int i = 0; i < n; ++i) t *= s[i];
  return t;
}

// complex128's 16 bytes, as two words (its buffers are only 8-byte aligned).
struct Item16 {
  uint64_t lo, hi;
};

// Shape kernels move bits, not values: dispatch on the element size only.
template <class F>
void by_size(size_t itemsize, F&& f) {
  switch (itemsize) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    case 16: return f(Item16{});  // complex128
    default: JX_CHECK(false, "unsupported element size ", itemsize);
  }
}

template <class T>
void fill(T* d, int64_t n, T v) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) d[i] = v;
}

template <class T>
void copy_nd_typed(const T* src, const int64_t* ss, T* dst, const int64_t* ds,
                   const int64_t* shape, int ndim) {
  StridedLoop<2> loop(shape, ndim,
                      {std::vector<int64_t>(ss, ss + ndim), std::vector<int64_t>(ds, ds + ndim)});
  loop.run([&](int64_t, const std::array<int64_t, 2>& off, int64_t n,
               const std::array<int64_t, 2>& st) {
    const T* s = src + off[0];
    T* d = dst + off[1];
    const int64_t a = st[0], b = st[1];
    if (b == 1) {
      if (a == 1) {
        std::memcpy(d, s, size_t(n) * sizeof(T));
      } else if (a == 0) {
        fill(d, n, s[0]);
      } else if (a == -1) {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) d[i] = s[-i];
      } else {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) d[i] = s[i * a];
      }
    } else {
      for (int64_t i = 0; i < n; ++i) d[i * b] = s[i * a];
    }
  });
}

// Square blocks of 4- and 8-byte elements transposed in registers: dst[r * ld + c] =
// src[c * ls + r] for r, c < n. Each source row is loaded once, whole, so the block's rows
// may share an L1 set (a power-of-two row length puts them 4 KB apart) without reloads,
// which the element-by-element loop below suffers.
#if defined(__AVX__)
inline void transpose8x8(const float* src, int64_t ls, float* dst, int64_t ld) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ls);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);  // per 128-bit lane: a0 b0 a1 b1
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // a2 b2 a3 b3
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);  // column 0 of four rows, per lane
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * ld, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * ld, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

inline void transpose4x4(const double* src, int64_t ls, double* dst, int64_t ld) {
  __m256d r[4], t[4];
  for (int i = 0; i < 4; ++i) r[i] = _mm256_loadu_pd(src + i * ls);
  t[0] = _mm256_unpacklo_pd(r[0], r[1]);  // per 128-bit lane: a0 b0
  t[1] = _mm256_unpackhi_pd(r[0], r[1]);  // a1 b1
  t[2] = _mm256_unpacklo_pd(r[2], r[3]);
  t[3] = _mm256_unpackhi_pd(r[2], r[3]);
  for (int i = 0; i < 2; ++i) {
    _mm256_storeu_pd(dst + i * ld, _mm256_permute2f128_pd(t[i], t[i + 2], 0x20));
    _mm256_storeu_pd(dst + (i + 2) * ld, _mm256_permute2f128_pd(t[i], t[i + 2], 0x31));
  }
}
#endif

#if defined(__AVX512F__)
// The unmasked forms pass _mm512_undefined_ps() through, which GCC 12 flags under
// -Wmaybe-uninitialized; a full zero-mask compiles to the same instruction.
constexpr __mmask16 kAll16 = 0xFFFF;
constexpr __mmask8 kAll8 = 0xFF;

// out[k] = the 128-bit lanes k of u0, u1, u2, u3, in that order.
inline void regroup_lanes(__m512 u0, __m512 u1, __m512 u2, __m512 u3, __m512 out[4]) {
  const __m512 a = _mm512_maskz_shuffle_f32x4(kAll16, u0, u1, 0x88);  // lanes 0, 2 of u0, then of u1
  const __m512 b = _mm512_maskz_shuffle_f32x4(kAll16, u0, u1, 0xDD);  // lanes 1, 3
  const __m512 c = _mm512_maskz_shuffle_f32x4(kAll16, u2, u3, 0x88);
  const __m512 d = _mm512_maskz_shuffle_f32x4(kAll16, u2, u3, 0xDD);
  out[0] = _mm512_maskz_shuffle_f32x4(kAll16, a, c, 0x88);
  out[1] = _mm512_maskz_shuffle_f32x4(kAll16, b, d, 0x88);
  out[2] = _mm512_maskz_shuffle_f32x4(kAll16, a, c, 0xDD);
  out[3] = _mm512_maskz_shuffle_f32x4(kAll16, b, d, 0xDD);
}

inline void transpose16x16(const float* src, int64_t ls, float* dst, int64_t ld) {
  __m512 r[16], t[16], out[4];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * ls);
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_maskz_unpacklo_ps(kAll16, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_ps(kAll16, r[i], r[i + 1]);
  }
  // u[4g + m], lane k: element 4k + m of rows 4g .. 4g + 3.
  for (int g = 0; g < 16; g += 4) {
    const __m512d a = _mm512_castps_pd(t[g]), b = _mm512_castps_pd(t[g + 1]);
    const __m512d c = _mm512_castps_pd(t[g + 2]), d = _mm512_castps_pd(t[g + 3]);
    r[g] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kAll8, a, c));
    r[g + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kAll8, a, c));
    r[g + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kAll8, b, d));
    r[g + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kAll8, b, d));
  }
  // Output row 4k + m is lane k of u[m], u[4 + m], u[8 + m], u[12 + m].
  for (int m = 0; m < 4; ++m) {
    regroup_lanes(r[m], r[4 + m], r[8 + m], r[12 + m], out);
    for (int k = 0; k < 4; ++k) _mm512_storeu_ps(dst + (4 * k + m) * ld, out[k]);
  }
}

inline void transpose8x8(const double* src, int64_t ls, double* dst, int64_t ld) {
  __m512d r[8], t[8];
  __m512 out[4];
  for (int i = 0; i < 8; ++i) r[i] = _mm512_loadu_pd(src + i * ls);
  // t[2g + m], lane k: element 2k + m of rows 2g, 2g + 1.
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm512_maskz_unpacklo_pd(kAll8, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_pd(kAll8, r[i], r[i + 1]);
  }
  // Output row 2k + m is lane k of t[m], t[2 + m], t[4 + m], t[6 + m].
  auto f = [](__m512d v) { return _mm512_castpd_ps(v); };
  for (int m = 0; m < 2; ++m) {
    regroup_lanes(f(t[m]), f(t[2 + m]), f(t[4 + m]), f(t[6 + m]), out);
    for (int k = 0; k < 4; ++k) _mm512_storeu_pd(dst + (2 * k + m) * ld, _mm512_castps_pd(out[k]));
  }
}
#endif

// d[r * drs + c] = s[r + c * scs] over rows [r0, r1) and columns [c0, c1): whole n x n
// blocks in registers, then the rest (an L of rows and columns) with smaller blocks.
template <class T>
void transpose_rect(const T* s, int64_t scs, T* d, int64_t drs, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                    int n) {
  if (r0 >= r1 || c0 >= c1) return;
  if (n == 1 && c1 - c0 < 8) {  // few columns: read the rows, write with stride
    for (int64_t c = c0; c < c1; ++c) {
      const T* srow = s + c * scs;
      for (int64_t r = r0; r < r1; ++r) d[r * drs + c] = srow[r];
    }
    return;
  }
  if (n == 1) {
    for (int64_t r = r0; r < r1; ++r) {
      T* drow = d + r * drs;
      const T* scol = s + r;
#pragma omp simd
      for (int64_t c = c0; c < c1; ++c) drow[c] = scol[c * scs];
    }
    return;
  }
  const int64_t rn = r0 + (r1 - r0) / n * n, cn = c0 + (c1 - c0) / n * n;
  // The same bits as float or double: shuffles move them unchanged.
  using V = std::conditional_t<sizeof(T) == 4, float, double>;
  for (int64_t r = r0; r < rn; r += n)
    for (int64_t c = c0; c < cn; c += n) {
      [[maybe_unused]] const V* from = reinterpret_cast<const V*>(s + r + c * scs);
      [[maybe_unused]] V* to = reinterpret_cast<V*>(d + r * drs + c);
#if defined(__AVX512F__)
      if constexpr (sizeof(T) == 4) if (n == 16) transpose16x16(from, scs, to, drs);
      if constexpr (sizeof(T) == 8) if (n == 8) transpose8x8(from, scs, to, drs);
#endif
#if defined(__AVX__)
      if constexpr (sizeof(T) == 4) if (n == 8) transpose8x8(from, scs, to, drs);
      if constexpr (sizeof(T) == 8) if (n == 4) transpose4x4(from, scs, to, drs);
#endif
    }
  const int next = n > 8 || (n == 8 && sizeof(T) == 8) ? n / 2 : 1;
  transpose_rect(s, scs, d, drs, r0, rn, cn, c1, next);
  transpose_rect(s, scs, d, drs, rn, r1, c0, c1, next);
}

// The widest register block for T in this build (1: element by element).
template <class T>
constexpr int register_block() {
  if constexpr (sizeof(T) != 4 && sizeof(T) != 8) return 1;
#if defined(__AVX512F__)
  return sizeof(T) == 4 ? 16 : 8;
#elif defined(__AVX__)
  return sizeof(T) == 4 ? 8 : 4;
#else
  return 1;
#endif
}

// Tiled copy for a transpose whose innermost output dim is not the innermost input dim:
// output dim p reads the input's unit-stride dim, output dim k-1 reads with stride `scs`.
// Tiles keep both the strided reads and the contiguous writes in L1.
template <class T>
void transpose_tiled(const T* src, T* dst, const std::vector<int64_t>& os,
                     const std::vector<int64_t>& sst, int p) {
  const int k = int(os.size());
  auto dstr = contiguous_strides(os.data(), k);
  const int64_t R = os[size_t(p)], C = os[size_t(k - 1)];
  const int64_t drs = dstr[size_t(p)], scs = sst[size_t(k - 1)];
  std::vector<int64_t> osz, oss, ods;  // the other (outer) dims
  for (int i = 0; i < k - 1; ++i) {
    if (i == p) continue;
    osz.push_back(os[size_t(i)]);
    oss.push_back(sst[size_t(i)]);
    ods.push_back(dstr[size_t(i)]);
  }
  const int64_t outer = numel(osz.data(), int(osz.size()));
  // Tiles of B rows by Bc columns, Bc wider when there are fewer than B rows, so that a
  // tile (and a thread's share) never shrinks to a few elements: [50176, 3] -> [3, 50176]
  // is 148 tiles of 3 x 341, not 1568 of 3 x 32 on one thread.
  constexpr int64_t B = 32;
  const int64_t Bc = B * B / std::min(R, B);
  const int64_t nrt = (R + B - 1) / B, nct = (C + Bc - 1) / Bc;
  const int64_t items = outer * nrt * nct;
  const int nt = num_threads_for(outer * R * C);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
  for (int64_t w = 0; w < items; ++w) {
    int64_t o = w / (nrt * nct), rt = w / nct % nrt, ct = w % nct;
    int64_t soff = 0, doff = 0;
    for (int j = int(osz.size()) - 1; j >= 0; --j) {
      int64_t idx = o % osz[size_t(j)];
      o /= osz[size_t(j)];
      soff += idx * oss[size_t(j)];
      doff += idx * ods[size_t(j)];
    }
    const int64_t r0 = rt * B, r1 = std::min(R, r0 + B), c0 = ct * Bc;
    transpose_rect(src + soff, scs, dst + doff, drs, r0, r1, c0, std::min(C, c0 + Bc), register_block<T>());
  }
}

void parallel_memcpy(void* dst, const void* src, size_t bytes, size_t itemsize) {
  const int nt = num_threads_for(int64_t(bytes / itemsize));
  if (nt <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    const size_t t = size_t(omp_get_thread_num()), nth = size_t(omp_get_num_threads());
    const size_t b = bytes * t / nth, e = bytes * (t + 1) / nth;
    std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b);
  }
}

template <class T>
void pad_typed(const T* src, const int64_t* in_shape, T value, const int64_t* lo,
               const int64_t* interior, T* dst, const int64_t* out_shape, int ndim) {
  const int last = ndim - 1;
  const int64_t n = out_shape[last];
  const int64_t rows = numel(out_shape, last);
  if (n == 0 || rows == 0) return;
  const auto in_st = contiguous_strides(in_shape, ndim);
  // The input range [i0, i1) of the last dim that lands inside the output row.
  const int64_t s = interior[last] + 1, L = lo[last], in_n = in_shape[last];
  const int64_t i0 = L >= 0 ? 0 : (-L + s - 1) / s;
  int64_t i1 = (n - 1 - L) < 0 ? 0 : std::min(in_n, (n - 1 - L) / s + 1);
  if (i1 < i0) i1 = i0;
  auto do_rows = [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> idx(static_cast<size_t>(last), 0);
    int64_t rem = r0;
    for (int d = last - 1; d >= 0; --d) {
      idx[size_t(d)] = rem % out_shape[d];
      rem /= out_shape[d];
    }
    for (int64_t r = r0; r < r1; ++r) {
      T* drow = dst + r * n;
      bool valid = i1 > i0;
      int64_t soff = 0;
      for (int d = 0; d < last && valid; ++d) {
        const int64_t t = idx[size_t(d)] - lo[d], sd = interior[d] + 1;
        if (t < 0 || t % sd != 0 || t / sd >= in_shape[d]) valid = false;
        soff += (t / sd) * in_st[size_t(d)];
      }
      if (!valid) {
        fill(drow, n, value);
      } else if (s == 1) {
        const int64_t j0 = L + i0, cnt = i1 - i0;
        fill(drow, j0, value);
        std::memcpy(drow + j0, src + soff + i0, size_t(cnt) * sizeof(T));
        fill(drow + j0 + cnt, n - j0 - cnt, value);
      } else {
        fill(drow, n, value);
        const T* srow = src + soff;
        for (int64_t i = i0; i < i1; ++i) drow[L + i * s] = srow[i];
      }
      for (int d = last - 1; d >= 0; --d) {
        if (++idx[size_t(d)] < out_shape[d]) break;
        idx[size_t(d)] = 0;
      }
    }
  };
  const int nt = num_threads_for(rows * n);
  if (nt <= 1) {
    do_rows(0, rows);
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    const int64_t t = omp_get_thread_num(), nth = omp_get_num_threads();
    const int64_t b = rows * t / nth, e = rows * (t + 1) / nth;
    if (e > b) do_rows(b, e);
  }
}

template <class T>
T from_index(int64_t i) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bhalf>) return T(float(i));
  else if constexpr (std::is_same_v<T, bool>) return i != 0;
  else return static_cast<T>(i);
}

template <class T>
void iota_typed(T* dst, const int64_t* shape, int ndim, int dim) {
  const int64_t outer = numel(shape, dim), D = shape[dim];
  const int64_t inner = numel(shape + dim + 1, ndim - dim - 1);
  const int64_t total = outer * D * inner;
  if (total == 0) return;
  const int nt = num_threads_for(total);
  if (inner == 1) {
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t o = 0; o < outer; ++o) {
      T* p = dst + o * D;
      for (int64_t i = 0; i < D; ++i) p[i] = from_index<T>(i);
    }
    return;
  }
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
  for (int64_t r = 0; r < outer * D; ++r) fill(dst + r * inner, inner, from_index<T>(r % D));
}

}  // namespace

void copy_nd(size_t itemsize, const void* src, const int64_t* src_strides, void* dst,
             const int64_t* dst_strides, const int64_t* shape, int ndim) {
  if (numel(shape, ndim) == 0) return;
  by_size(itemsize, [&](auto tag) {
    using T = decltype(tag);
    copy_nd_typed(static_cast<const T*>(src), src_strides, static_cast<T*>(dst), dst_strides,
                  shape, ndim);
  });
}

void transpose(size_t itemsize, const void* src, const int64_t* in_shape, const int64_t* perm,
               void* dst, int ndim) {
  const int64_t total = numel(in_shape, ndim);
  if (total == 0) return;
  // Drop size-1 dims, then merge runs of input dims that stay adjacent in the output: perm
  // (0, 2, 3, 1) of a [2, 3, 4, 5] array is a batched 2-d swap of [2, 3, 20].
  std::vector<int64_t> newid(static_cast<size_t>(ndim), -1), kept;
  for (int d = 0; d < ndim; ++d)
    if (in_shape[d] != 1) {
      newid[size_t(d)] = int64_t(kept.size());
      kept.push_back(in_shape[d]);
    }
  std::vector<std::pair<int64_t, int64_t>> groups;  // [first, last] input ids, output order
  for (int i = 0; i < ndim; ++i) {
    int64_t id = newid[size_t(perm[i])];
    if (id < 0) continue;
    if (!groups.empty() && id == groups.back().second + 1) groups.back().second = id;
    else groups.emplace_back(id, id);
  }
  const int k = int(groups.size());
  if (k <= 1) return parallel_memcpy(dst, src, size_t(total) * itemsize, itemsize);
  std::vector<int64_t> firsts;
  for (auto& g : groups) firsts.push_back(g.first);
  std::sort(firsts.begin(), firsts.end());
  std::vector<int64_t> rs(static_cast<size_t>(k)), rp(static_cast<size_t>(k));
  for (int i = 0; i < k; ++i) {
    auto [f, l] = groups[size_t(i)];
    int64_t m = std::lower_bound(firsts.begin(), firsts.end(), f) - firsts.begin();
    rp[size_t(i)] = m;
    int64_t sz = 1;
    for (int64_t j = f; j <= l; ++j) sz *= kept[size_t(j)];
    rs[size_t(m)] = sz;
  }
  auto in_st = contiguous_strides(rs.data(), k);
  std::vector<int64_t> os(static_cast<size_t>(k)), sst(static_cast<size_t>(k));
  int p = -1;
  for (int i = 0; i < k; ++i) {
    os[size_t(i)] = rs[size_t(rp[size_t(i)])];
    sst[size_t(i)] = in_st[size_t(rp[size_t(i)])];
    if (rp[size_t(i)] == k - 1) p = i;
  }
  if (p == k - 1) {  // contiguous inner runs: a strided copy of rows
    auto dst_st = contiguous_strides(os.data(), k);
    return copy_nd(itemsize, src, sst.data(), dst, dst_st.data(), os.data(), k);
  }
  by_size(itemsize, [&](auto tag) {
    using T = decltype(tag);
    transpose_tiled(static_cast<const T*>(src), static_cast<T*>(dst), os, sst, p);
  });
}

void transpose_reference(size_t itemsize, const void* src, const int64_t* in_shape,
                         const int64_t* perm, void* dst, int ndim) {
  auto in_st = contiguous_strides(in_shape, ndim);
  std::vector<int64_t> os(static_cast<size_t>(ndim));
  for (int i = 0; i < ndim; ++i) os[size_t(i)] = in_shape[perm[i]];
  const int64_t total = numel(in_shape, ndim);
  for (int64_t f = 0; f < total; ++f) {
    int64_t rem = f, off = 0;
    for (int i = ndim - 1; i >= 0; --i) {
      off += (rem % os[size_t(i)]) * in_st[size_t(perm[i])];
      rem /= os[size_t(i)];
    }
    std::memcpy(static_cast<char*>(dst) + size_t(f) * itemsize,
                static_cast<const char*>(src) + size_t(off) * itemsize, itemsize);
  }
}

void rev(size_t itemsize, const void* src, const int64_t* shape, const bool* reversed, void* dst,
         int ndim) {
  if (numel(shape, ndim) == 0) return;
  auto st = contiguous_strides(shape, ndim);
  DimVec ss = st;
  int64_t base = 0;
  for (int d = 0; d < ndim; ++d) {
    if (!reversed[d] || shape[d] <= 1) continue;
    base += (shape[d] - 1) * st[size_t(d)];
    ss[size_t(d)] = -st[size_t(d)];
  }
  copy_nd(itemsize, static_cast<const char*>(src) + base * int64_t(itemsize), ss.data(), dst,
          st.data(), shape, ndim);
}

void rev_reference(size_t itemsize, const void* src, const int64_t* shape, const bool* reversed,
                   void* dst, int ndim) {
  auto st = contiguous_strides(shape, ndim);
  const int64_t total = numel(shape, ndim);
  for (int64_t f = 0; f < total; ++f) {
    int64_t rem = f, off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      int64_t i = rem % shape[d];
      rem /= shape[d];
      off += (reversed[d] ? shape[d] - 1 - i : i) * st[size_t(d)];
    }
    std::memcpy(static_cast<char*>(dst) + size_t(f) * itemsize,
                static_cast<const char*>(src) + size_t(off) * itemsize, itemsize);
  }
}

void concatenate(size_t itemsize, const void* const* srcs, const int64_t* sizes, int n,
                 int64_t outer, int64_t inner, void* dst) {
  // Each thread fills one contiguous byte range of the output, copying the pieces of the
  // operands' rows that fall into it: balanced whatever the operand sizes.
  std::vector<int64_t> piece(static_cast<size_t>(n)), start(static_cast<size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) {
    piece[size_t(i)] = sizes[i] * inner * int64_t(itemsize);
    start[size_t(i) + 1] = start[size_t(i)] + piece[size_t(i)];
  }
  const int64_t row = start[size_t(n)], total = outer * row;
  if (total == 0) return;
  auto run = [&](int64_t b, int64_t e) {
    int64_t pos = b;
    while (pos < e) {
      const int64_t o = pos / row, in_row = pos % row;
      const size_t i =
          size_t(std::upper_bound(start.begin(), start.end(), in_row) - start.begin() - 1);
      const int64_t off = in_row - start[i];
      const int64_t len = std::min(piece[i] - off, e - pos);
      std::memcpy(static_cast<char*>(dst) + pos,
                  static_cast<const char*>(srcs[i]) + o * piece[i] + off, size_t(len));
      pos += len;
    }
  };
  const int nt = num_threads_for(total / int64_t(itemsize));
  if (nt <= 1) return run(0, total);
#pragma omp parallel num_threads(nt)
  {
    const int64_t t = omp_get_thread_num(), nth = omp_get_num_threads();
    run(total * t / nth, total * (t + 1) / nth);
  }
}

void concatenate_reference(size_t itemsize, const void* const* srcs, const int64_t* sizes, int n,
                           int64_t outer, int64_t inner, void* dst) {
  int64_t total_d = 0;
  for (int i = 0; i < n; ++i) total_d += sizes[i];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < total_d; ++j)
      for (int64_t k = 0; k < inner; ++k) {
        int i = 0;
        int64_t jj = j;
        while (jj >= sizes[i]) jj -= sizes[i++];
        int64_t src_off = (o * sizes[i] + jj) * inner + k;
        int64_t dst_off = (o * total_d + j) * inner + k;
        std::memcpy(static_cast<char*>(dst) + size_t(dst_off) * itemsize,
                    static_cast<const char*>(srcs[i]) + size_t(src_off) * itemsize, itemsize);
      }
}

void pad(size_t itemsize, const void* src, const int64_t* in_shape, const void* value,
         const int64_t* lo, const int64_t* interior, void* dst, const int64_t* out_shape,
         int ndim) {
  if (ndim == 0) {
    std::memcpy(dst, src, itemsize);
    return;
  }
  by_size(itemsize, [&](auto tag) {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, value, sizeof(T));
    pad_typed(static_cast<const T*>(src), in_shape, v, lo, interior, static_cast<T*>(dst),
              out_shape, ndim);
  });
}

void pad_reference(size_t itemsize, const void* src, const int64_t* in_shape, const void* value,
                   const int64_t* lo, const int64_t* interior, void* dst,
                   const int64_t* out_shape, int ndim) {
  auto in_st = contiguous_strides(in_shape, ndim);
  const int64_t total = numel(out_shape, ndim);
  for (int64_t f = 0; f < total; ++f) {
    int64_t rem = f, off = 0;
    bool valid = true;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t j = rem % out_shape[d];
      rem /= out_shape[d];
      const int64_t t = j - lo[d], s = interior[d] + 1;
      if (t < 0 || t % s != 0 || t / s >= in_shape[d]) valid = false;
      else off += (t / s) * in_st[size_t(d)];
    }
    const void* from = valid ? static_cast<const char*>(src) + size_t(off) * itemsize : value;
    std::memcpy(static_cast<char*>(dst) + size_t(f) * itemsize, from, itemsize);
  }
}

void iota(DType dtype, void* dst, const int64_t* shape, int ndim, int dimension) {
  JX_DTYPE_SWITCH_C(dtype, T, iota_typed(static_cast<T*>(dst), shape, ndim, dimension));
}

void iota_reference(DType dtype, void* dst, const int64_t* shape, int ndim, int dimension) {
  const int64_t total = numel(shape, ndim);
  JX_DTYPE_SWITCH_C(dtype, T, {
    T* p = static_cast<T*>(dst);
    for (int64_t f = 0; f < total; ++f) {
      int64_t rem = f, coord = 0;
      for (int d = ndim - 1; d >= 0; --d) {
        if (d == dimension) coord = rem % shape[d];
        rem /= shape[d];
      }
      p[f] = from_index<T>(coord);
    }
  });
}

}  // namespace jx::cpu
