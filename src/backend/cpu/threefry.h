// Threefry-2x32 (20 rounds, Random123-compatible), the hash behind JAX's default PRNG.
// Kernels take raw pointers + shapes; each fast kernel has a naive _reference beside it.
#pragma once
#include <cstdint>

namespace jx::cpu {

// (y0, y1) = threefry2x32((k0, k1), (x0, x1)) elementwise over `ndim`-d shapes. Each
// input has dims equal to out_shape's or 1 (size-1 dims broadcast, never materialized).
void threefry2x32(const uint32_t* k0, const int64_t* k0_shape, const uint32_t* k1,
                  const int64_t* k1_shape, const uint32_t* x0, const int64_t* x0_shape,
                  const uint32_t* x1, const int64_t* x1_shape, uint32_t* y0, uint32_t* y1,
                  const int64_t* out_shape, int ndim);
void threefry2x32_reference(const uint32_t* k0, const int64_t* k0_shape, const uint32_t* k1,
                            const int64_t* k1_shape, const uint32_t* x0, const int64_t* x0_shape,
                            const uint32_t* x1, const int64_t* x1_shape, uint32_t* y0,
                            uint32_t* y1, const int64_t* out_shape, int ndim);

// Fused eager paths of jx::random for one concrete key. They compute exactly what the
// composition of primitives computes (the tests compare the two), in one pass.
//
// jax_threefry_partitionable=True: element i hashes the 64-bit counter (hi32(i), lo32(i)).
// bit_width 64: (y0 << 32) | y1; 32: y0 ^ y1; 16/8: the low bits of y0 ^ y1.
void threefry_bits_partitionable(uint32_t k0, uint32_t k1, int64_t n, int bit_width, void* out);
void threefry_bits_partitionable_reference(uint32_t k0, uint32_t k1, int64_t n, int bit_width,
                                           void* out);
// Legacy stream: m = ceil(bit_width*n/32) words = threefry_2x32(key, iota(m)) (counts split
// in halves, outputs concatenated), then packed as JAX does for 64/16/8-bit widths.
void threefry_bits_legacy(uint32_t k0, uint32_t k1, int64_t n, int bit_width, void* out);
void threefry_bits_legacy_reference(uint32_t k0, uint32_t k1, int64_t n, int bit_width,
                                    void* out);

// jax.random.uniform for float32 in one pass over partitionable (or legacy) bits:
// f = bitcast((b >> 9) | 0x3F800000) - 1; out = max(lo, fma(f, hi - lo, lo)). The fused
// multiply-add is what XLA's CPU backend emits for this fusion (it always allows FMA
// contraction), so this matches JAX on CPU bit for bit.
void threefry_uniform_f32(uint32_t k0, uint32_t k1, int64_t n, float lo, float hi,
                          bool partitionable, float* out);
void threefry_uniform_f64(uint32_t k0, uint32_t k1, int64_t n, double lo, double hi,
                          bool partitionable, double* out);
// jax.random.normal for float32 in one pass: sqrt(2) * erf_inv(threefry_uniform_f32(...))
// with lo = nextafter(-1, 0), hi = 1, computed per L1-sized piece; bit for bit the
// composition of primitives.
void threefry_normal_f32(uint32_t k0, uint32_t k1, int64_t n, float lo, float hi,
                         bool partitionable, float* out);

}  // namespace jx::cpu
