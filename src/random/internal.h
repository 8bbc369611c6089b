// Shared machinery of jx::random: keys as (k0, k1) column pairs with batch dims, the
// counter layouts of both threefry streams, and the eager fast paths.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "jx/array.h"
#include "jx/config.h"

namespace jx::random::detail {

// A batch of raw keys: k0 and k1 are uint32 arrays of shape `batch`, one key per element.
// Samplers take one key (batch ()); gamma's per-element loops carry a batch.
struct Keys {
  Array k0, k1;
  const Shape& batch() const { return k0.shape(); }
  bool concrete() const { return k0.is_concrete() && k1.is_concrete(); }
};

// Checks that `key` is a raw key (uint32[2], or uint32[..., 2] when allow_batched) and
// splits it into columns; throws naming `fn`.
Keys unpack(const char* fn, const Array& key, bool allow_batched = false);
// uint32[*batch, 2].
Array pack(const Keys& k);

inline bool partitionable() { return config::threefry_partitionable.value(); }

// New keys of shape batch + shape.
Keys split(const Keys& k, const Shape& shape);
// Per-key fold_in of uint32 data (shape () or batch).
Keys fold_in(const Keys& k, const Array& data);
// Bits of the given width (8/16/32/64), shape batch + shape, dtype uint<width>.
Array random_bits(const Keys& k, int bit_width, const Shape& shape);

// A uint32/uint64 scalar of exact type (not weak).
Array u32(uint32_t v);
Array full_like_shape(double v, DType dtype, const Shape& shape);
Array scalar_of(double v, DType dtype);
void check_shape(const char* fn, const Shape& shape);

// Tests set this to run the composition of primitives where an eager fast path exists,
// so that the two can be compared.
extern thread_local bool force_composed;

}  // namespace jx::random::detail

namespace jx::random::detail {

// Exact constants of a dtype (not weak), optionally reshaped to (1,)*rank so that they
// broadcast in lax's equal-rank elementwise ops.
Array const_f(double v, DType dt, size_t rank = 0);
Array const_i(int64_t v, DType dt, size_t rank = 0);
Array const_u(uint64_t v, DType dt, size_t rank = 0);
// x with (1,)* prepended up to `rank` (lax.broadcast_to_rank); throws if x has more dims.
Array to_rank(const char* fn, const Array& x, size_t rank);
// JAX's _check_shape: the params broadcast with shape to exactly shape.
void check_broadcast(const char* fn, const Shape& shape, const Shape& p);
void check_broadcast(const char* fn, const Shape& shape, const Shape& p, const Shape& q);
Shape broadcast_all(const char* fn, const Shape& a, const Shape& b);
// Throws DTypeError unless dt is floating.
void require_float(const char* fn, DType dt);
Shape ones(size_t n);
Shape concat(const Shape& a, const Shape& b);
// nextafter(-1, 0) etc. in dtype dt, exactly.
Array nextafter_const(double from, double to, DType dt, size_t rank = 0);
// The uniform sampler on Keys (shape, dtype already checked).
Array uniform_keys(const Keys& k, const Shape& shape, DType dt, const Array& minval,
                   const Array& maxval);
Array normal_keys(const Keys& k, const Shape& shape, DType dt);
Array exponential_keys(const Keys& k, const Shape& shape, DType dt);
Array gumbel_keys(const Keys& k, const Shape& shape, DType dt, const std::string& mode);
// JAX's _shuffle: one round per 32 bits of collision budget; sorts x along axis.
Array shuffle_keys(const Keys& k, const Array& x, int64_t axis);

}  // namespace jx::random::detail

namespace jx::random::detail {
// n subkeys of each key, each from one hash with constant counters (no slicing): equal to
// split(key, n)[j] in either mode.
std::vector<Keys> split_n(const Keys& k, int64_t n);
}  // namespace jx::random::detail
