#include "backend/cpu/threefry.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/loops.h"
#include "backend/cpu/vmath.h"

namespace jx::cpu {
namespace {

// The hash is ~80 integer ops per element; split work across threads sooner than the
// memory-bound kernels do.
inline int threads_for_hash(int64_t n) { return num_threads_for(n * 4); }

inline uint32_t rotl(uint32_t x, int d) { return (x << d) | (x >> (32 - d)); }

#pragma omp declare simd
inline void block(uint32_t k0, uint32_t k1, uint32_t& x0, uint32_t& x1) {
  const uint32_t k2 = k0 ^ k1 ^ 0x1BD11BDAu;
  x0 += k0;
  x1 += k1;
#define JX_TF_ROUND(r) \
  x0 += x1;            \
  x1 = rotl(x1, r);    \
  x1 ^= x0;
  JX_TF_ROUND(13) JX_TF_ROUND(15) JX_TF_ROUND(26) JX_TF_ROUND(6)
  x0 += k1;
  x1 += k2 + 1u;
  JX_TF_ROUND(17) JX_TF_ROUND(29) JX_TF_ROUND(16) JX_TF_ROUND(24)
  x0 += k2;
  x1 += k0 + 2u;
  JX_TF_ROUND(13) JX_TF_ROUND(15) JX_TF_ROUND(26) JX_TF_ROUND(6)
  x0 += k0;
  x1 += k1 + 3u;
  JX_TF_ROUND(17) JX_TF_ROUND(29) JX_TF_ROUND(16) JX_TF_ROUND(24)
  x0 += k1;
  x1 += k2 + 4u;
  JX_TF_ROUND(13) JX_TF_ROUND(15) JX_TF_ROUND(26) JX_TF_ROUND(6)
  x0 += k2;
  x1 += k0 + 5u;
#undef JX_TF_ROUND
}

// The round structure written out as PRNG.md states it, independent of block().
void block_reference(uint32_t k0, uint32_t k1, uint32_t& x0, uint32_t& x1) {
  static constexpr int R[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  x0 += ks[0];
  x1 += ks[1];
  for (int i = 0; i < 5; ++i) {
    for (int r : R[i % 2]) {
      x0 += x1;
      x1 = (x1 << r) | (x1 >> (32 - r));
      x1 ^= x0;
    }
    x0 += ks[(i + 1) % 3];
    x1 += ks[(i + 2) % 3] + uint32_t(i + 1);
  }
}

// Inner run with the key broadcast (the common case): counters contiguous or broadcast.
template <bool X0C, bool X1C>
void run_scalar_key(uint32_t k0, uint32_t k1, const uint32_t* x0, const uint32_t* x1,
                    uint32_t* y0, uint32_t* y1, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    uint32_t a = X0C ? x0[i] : x0[0];
    uint32_t b = X1C ? x1[i] : x1[0];
    block(k0, k1, a, b);
    y0[i] = a;
    y1[i] = b;
  }
}

void run_general(const uint32_t* k0, int64_t s0, const uint32_t* k1, int64_t s1,
                 const uint32_t* x0, int64_t s2, const uint32_t* x1, int64_t s3, uint32_t* y0,
                 uint32_t* y1, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    uint32_t a = x0[i * s2], b = x1[i * s3];
    block(k0[i * s0], k1[i * s1], a, b);
    y0[i] = a;
    y1[i] = b;
  }
}

// Element i of the partitionable stream: counter (hi32(base+i), lo32(base+i)).
template <class Emit>
void for_each_partitionable(uint32_t k0, uint32_t k1, int64_t n, Emit&& emit) {
  // Chunks never straddle a 2^32 boundary, so within one the hi word is constant and the
  // lo word a plain iota: the loop vectorizes.
  constexpr int64_t kChunk = 1 << 14;
  const int64_t nchunks = (n + kChunk - 1) / kChunk;
  const int nt = threads_for_hash(n);
  // Chunks handed out on demand: on a busy machine a thread that loses its core for a
  // while no longer holds up half of the array.
#pragma omp parallel for num_threads(nt) schedule(dynamic) if (nt > 1)
  for (int64_t c = 0; c < nchunks; ++c) {
    int64_t b = c * kChunk, e = std::min(n, b + kChunk);
    while (b < e) {
      const uint64_t ub = uint64_t(b);
      const uint32_t hi = uint32_t(ub >> 32), lo0 = uint32_t(ub);
      const int64_t room = int64_t((uint64_t(1) << 32) - lo0);
      const int64_t m = std::min(e - b, room);
      emit(b, m, hi, lo0);
      b += m;
    }
  }
}

// Legacy words: word j of m = threefry_2x32(key, iota(m)). With h = ceil(m/2), pair p
// hashes (p, p + h) (the count padded with a 0 when m is odd) and word p = y0, word
// p + h = y1.
void legacy_words(uint32_t k0, uint32_t k1, int64_t m, uint32_t* w) {
  const int64_t h = (m + 1) / 2;
  const int nt = threads_for_hash(m);
#pragma omp parallel for simd num_threads(nt) schedule(static) if (nt > 1)
  for (int64_t p = 0; p < h; ++p) {
    uint32_t a = uint32_t(p);
    uint32_t b = (p + h < m) ? uint32_t(p + h) : 0u;
    block(k0, k1, a, b);
    w[p] = a;
    if (p + h < m) w[p + h] = b;
  }
}

void legacy_words_reference(uint32_t k0, uint32_t k1, int64_t m, uint32_t* w) {
  std::vector<uint32_t> count(static_cast<size_t>(m + (m & 1)), 0u);
  for (int64_t i = 0; i < m; ++i) count[size_t(i)] = uint32_t(i);
  const size_t h = count.size() / 2;
  std::vector<uint32_t> out(count.size());
  for (size_t p = 0; p < h; ++p) {
    uint32_t a = count[p], b = count[p + h];
    block_reference(k0, k1, a, b);
    out[p] = a;
    out[p + h] = b;
  }
  std::copy(out.begin(), out.begin() + m, w);
}

void pack_legacy(const uint32_t* words, int64_t m, int64_t n, int bit_width, void* out) {
  if (bit_width == 32) {
    if (n > 0) std::memcpy(out, words, size_t(n) * 4);  // an empty array's `out` may be null
  } else if (bit_width == 64) {
    // m == 2n: the first half gives the high words, the second half the low words.
    auto* o = static_cast<uint64_t*>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = (uint64_t(words[i]) << 32) | words[i + n];
  } else {
    // Each word unpacked little-endian: value j of word w is (w >> (bit_width*j)) & mask.
    const int per = 32 / bit_width;
    for (int64_t i = 0; i < n; ++i) {
      uint32_t v = words[i / per] >> (bit_width * int(i % per));
      if (bit_width == 16) static_cast<uint16_t*>(out)[i] = uint16_t(v);
      else static_cast<uint8_t*>(out)[i] = uint8_t(v);
    }
  }
  (void)m;
}

int64_t legacy_word_count(int64_t n, int bit_width) { return (int64_t(bit_width) * n + 31) / 32; }

}  // namespace

void threefry2x32(const uint32_t* k0, const int64_t* k0_shape, const uint32_t* k1,
                  const int64_t* k1_shape, const uint32_t* x0, const int64_t* x0_shape,
                  const uint32_t* x1, const int64_t* x1_shape, uint32_t* y0, uint32_t* y1,
                  const int64_t* out_shape, int ndim) {
  StridedLoop<4> loop(out_shape, ndim,
                      {broadcast_strides(k0_shape, out_shape, ndim),
                       broadcast_strides(k1_shape, out_shape, ndim),
                       broadcast_strides(x0_shape, out_shape, ndim),
                       broadcast_strides(x1_shape, out_shape, ndim)});
  for (int d = 0; d < ndim; ++d)
    if (out_shape[d] == 0) return;
  // The hash is compute-bound: weigh the work up so that threads start early.
  auto fn = [&](int64_t o, const std::array<int64_t, 4>& off, int64_t n,
                const std::array<int64_t, 4>& s) {
    const uint32_t *a = k0 + off[0], *b = k1 + off[1], *c = x0 + off[2], *d = x1 + off[3];
    uint32_t *p = y0 + o, *q = y1 + o;
    if (s[0] == 0 && s[1] == 0 && (s[2] | s[3]) >= 0 && s[2] <= 1 && s[3] <= 1) {
      if (s[2] == 1 && s[3] == 1) run_scalar_key<true, true>(*a, *b, c, d, p, q, n);
      else if (s[2] == 1) run_scalar_key<true, false>(*a, *b, c, d, p, q, n);
      else if (s[3] == 1) run_scalar_key<false, true>(*a, *b, c, d, p, q, n);
      else run_scalar_key<false, false>(*a, *b, c, d, p, q, n);
    } else {
      run_general(a, s[0], b, s[1], c, s[2], d, s[3], p, q, n);
    }
  };
  const int64_t total = loop.rows() * loop.inner();
  const int nt = threads_for_hash(total);
  if (nt > 1 && loop.rows() == 1) {
    const int64_t n = loop.inner();
    std::array<int64_t, 4> s;
    for (size_t k = 0; k < 4; ++k) s[k] = loop.strides[k].back();
#pragma omp parallel num_threads(nt)
    {
      int t = omp_get_thread_num(), T = omp_get_num_threads();
      int64_t b = n * t / T, e = n * (t + 1) / T;
      std::array<int64_t, 4> off;
      for (size_t k = 0; k < 4; ++k) off[k] = b * s[k];
      if (e > b) fn(b, off, e - b, s);
    }
  } else if (nt > 1) {
    const int64_t R = loop.rows();
#pragma omp parallel num_threads(nt)
    {
      int t = omp_get_thread_num(), T = omp_get_num_threads();
      int64_t b = R * t / T, e = R * (t + 1) / T;
      if (e > b) loop.run_rows(b, e, fn);
    }
  } else {
    loop.run_rows(0, loop.rows(), fn);
  }
}

void threefry2x32_reference(const uint32_t* k0, const int64_t* k0_shape, const uint32_t* k1,
                            const int64_t* k1_shape, const uint32_t* x0, const int64_t* x0_shape,
                            const uint32_t* x1, const int64_t* x1_shape, uint32_t* y0,
                            uint32_t* y1, const int64_t* out_shape, int ndim) {
  int64_t total = 1;
  for (int d = 0; d < ndim; ++d) total *= out_shape[d];
  std::vector<int64_t> idx(static_cast<size_t>(ndim), 0);
  auto at = [&](const uint32_t* p, const int64_t* shape) {
    int64_t off = 0;
    for (int d = 0; d < ndim; ++d) off = off * shape[d] + (shape[d] == 1 ? 0 : idx[size_t(d)]);
    return p[off];
  };
  for (int64_t i = 0; i < total; ++i) {
    int64_t r = i;
    for (int d = ndim - 1; d >= 0; --d) {
      idx[size_t(d)] = r % out_shape[d];
      r /= out_shape[d];
    }
    uint32_t a = at(x0, x0_shape), b = at(x1, x1_shape);
    block_reference(at(k0, k0_shape), at(k1, k1_shape), a, b);
    y0[i] = a;
    y1[i] = b;
  }
}

void threefry_bits_partitionable(uint32_t k0, uint32_t k1, int64_t n, int bit_width, void* out) {
  for_each_partitionable(k0, k1, n, [&](int64_t base, int64_t m, uint32_t hi, uint32_t lo0) {
    if (bit_width == 64) {
      uint64_t* o = static_cast<uint64_t*>(out) + base;
#pragma omp simd
      for (int64_t i = 0; i < m; ++i) {
        uint32_t a = hi, b = lo0 + uint32_t(i);
        block(k0, k1, a, b);
        o[i] = (uint64_t(a) << 32) | b;
      }
    } else if (bit_width == 32) {
      uint32_t* o = static_cast<uint32_t*>(out) + base;
#pragma omp simd
      for (int64_t i = 0; i < m; ++i) {
        uint32_t a = hi, b = lo0 + uint32_t(i);
        block(k0, k1, a, b);
        o[i] = a ^ b;
      }
    } else if (bit_width == 16) {
      uint16_t* o = static_cast<uint16_t*>(out) + base;
#pragma omp simd
      for (int64_t i = 0; i < m; ++i) {
        uint32_t a = hi, b = lo0 + uint32_t(i);
        block(k0, k1, a, b);
        o[i] = uint16_t(a ^ b);
      }
    } else {
      uint8_t* o = static_cast<uint8_t*>(out) + base;
#pragma omp simd
      for (int64_t i = 0; i < m; ++i) {
        uint32_t a = hi, b = lo0 + uint32_t(i);
        block(k0, k1, a, b);
        o[i] = uint8_t(a ^ b);
      }
    }
  });
}

void threefry_bits_partitionable_reference(uint32_t k0, uint32_t k1, int64_t n, int bit_width,
                                           void* out) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t a = uint32_t(uint64_t(i) >> 32), b = uint32_t(uint64_t(i));
    block_reference(k0, k1, a, b);
    switch (bit_width) {
      case 64: static_cast<uint64_t*>(out)[i] = (uint64_t(a) << 32) | b; break;
      case 32: static_cast<uint32_t*>(out)[i] = a ^ b; break;
      case 16: static_cast<uint16_t*>(out)[i] = uint16_t(a ^ b); break;
      default: static_cast<uint8_t*>(out)[i] = uint8_t(a ^ b); break;
    }
  }
}

void threefry_bits_legacy(uint32_t k0, uint32_t k1, int64_t n, int bit_width, void* out) {
  const int64_t m = legacy_word_count(n, bit_width);
  if (bit_width == 32) {
    legacy_words(k0, k1, m, static_cast<uint32_t*>(out));
    return;
  }
  std::vector<uint32_t> w(static_cast<size_t>(m));
  legacy_words(k0, k1, m, w.data());
  pack_legacy(w.data(), m, n, bit_width, out);
}

void threefry_bits_legacy_reference(uint32_t k0, uint32_t k1, int64_t n, int bit_width,
                                    void* out) {
  const int64_t m = legacy_word_count(n, bit_width);
  std::vector<uint32_t> w(static_cast<size_t>(m));
  legacy_words_reference(k0, k1, m, w.data());
  pack_legacy(w.data(), m, n, bit_width, out);
}

namespace {

// jax.random.uniform's float32 step for one word of bits: the top 23 bits as a float in
// [1, 2), minus 1, then max(lo, fma(f, hi - lo, lo)), NaN-propagating as lax.max.
[[gnu::always_inline]] inline float uniform_f32_of(uint32_t bits, float lo, float scale) {
  const uint32_t u = (bits >> 9) | 0x3F800000u;
  float f;
  std::memcpy(&f, &u, 4);
  const float v = std::fma(f - 1.0f, scale, lo);
  return (v > lo || v != v) ? v : lo;
}

// normal's tail over a piece of uniforms in place: sqrt(2) * erf_inv(u), the product in
// the order lax.mul(sqrt2, erf_inv(u)) has it.
void sqrt2_erf_inv_in_place(float* o, int64_t m) {
  vm::erf_inv_block(o, o, m);
  const float sqrt2 = float(M_SQRT2);
#pragma omp simd
  for (int64_t i = 0; i < m; ++i) o[i] = sqrt2 * o[i];
}

// Pieces small enough that the uniforms are still in L1 when erf_inv reads them back.
constexpr int64_t kNormalPiece = 1024;

}  // namespace

void threefry_uniform_f32(uint32_t k0, uint32_t k1, int64_t n, float lo, float hi,
                          bool partitionable, float* out) {
  const float scale = hi - lo;
  if (partitionable) {
    for_each_partitionable(k0, k1, n, [&](int64_t base, int64_t m, uint32_t chi, uint32_t lo0) {
      float* o = out + base;
#pragma omp simd
      for (int64_t i = 0; i < m; ++i) {
        uint32_t a = chi, b = lo0 + uint32_t(i);
        block(k0, k1, a, b);
        o[i] = uniform_f32_of(a ^ b, lo, scale);
      }
    });
    return;
  }
  threefry_bits_legacy(k0, k1, n, 32, out);
  auto* u = reinterpret_cast<uint32_t*>(out);
  const int nt = num_threads_for(n);
#pragma omp parallel for simd num_threads(nt) if (nt > 1)
  for (int64_t i = 0; i < n; ++i) out[i] = uniform_f32_of(u[i], lo, scale);
}

void threefry_normal_f32(uint32_t k0, uint32_t k1, int64_t n, float lo, float hi,
                         bool partitionable, float* out) {
  const float scale = hi - lo;
  if (partitionable) {
    for_each_partitionable(k0, k1, n, [&](int64_t base, int64_t m, uint32_t chi, uint32_t lo0) {
      for (int64_t s = 0; s < m; s += kNormalPiece) {
        float* o = out + base + s;
        const int64_t len = std::min(kNormalPiece, m - s);
        const uint32_t c0 = lo0 + uint32_t(s);
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) {
          uint32_t a = chi, b = c0 + uint32_t(i);
          block(k0, k1, a, b);
          o[i] = uniform_f32_of(a ^ b, lo, scale);
        }
        sqrt2_erf_inv_in_place(o, len);
      }
    });
    return;
  }
  // Legacy: the words depend on n as a whole (pairs (p, p + n/2)), so they come first.
  threefry_bits_legacy(k0, k1, n, 32, out);
  auto* u = reinterpret_cast<uint32_t*>(out);
  const int64_t pieces = (n + kNormalPiece - 1) / kNormalPiece;
  const int nt = num_threads_for(n * 8);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 16) if (nt > 1)
  for (int64_t p = 0; p < pieces; ++p) {
    const int64_t b = p * kNormalPiece, len = std::min(kNormalPiece, n - b);
#pragma omp simd
    for (int64_t i = b; i < b + len; ++i) out[i] = uniform_f32_of(u[i], lo, scale);
    sqrt2_erf_inv_in_place(out + b, len);
  }
}

void threefry_uniform_f64(uint32_t k0, uint32_t k1, int64_t n, double lo, double hi,
                          bool partitionable, double* out) {
  const double scale = hi - lo;
  auto to_double = [](uint64_t bits) {
    uint64_t u = (bits >> 12) | 0x3FF0000000000000ull;
    double f;
    std::memcpy(&f, &u, 8);
    return f - 1.0;
  };
  auto* u = reinterpret_cast<uint64_t*>(out);
  if (partitionable) threefry_bits_partitionable(k0, k1, n, 64, out);
  else threefry_bits_legacy(k0, k1, n, 64, out);
  const int nt = num_threads_for(n);
#pragma omp parallel for simd num_threads(nt) if (nt > 1)
  for (int64_t i = 0; i < n; ++i) {
    double v = std::fma(to_double(u[i]), scale, lo);
    out[i] = (v > lo || v != v) ? v : lo;
  }
}

}  // namespace jx::cpu
