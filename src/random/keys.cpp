// Keys, split, fold_in and random bits: the two threefry counter layouts of JAX
// (jax/_src/random/threefry2x32.py), each as a composition of the threefry2x32 primitive
// with bitwise ops on constant counters, plus one-pass kernels for a concrete key.
#include <cstring>

#include "backend/cpu/threefry.h"
#include "core/array_impl.h"
#include "jx/lax.h"
#include "jx/random.h"
#include "random/internal.h"
#include "support/str.h"
#include "transforms/bind.h"
#include "transforms/key_reuse.h"

namespace jx::random {
namespace detail {

thread_local bool force_composed = false;

Shape ones(size_t n) { return Shape(n, 1); }

Shape concat(const Shape& a, const Shape& b) {
  Shape s = a;
  for (int64_t d : b) s.push_back(d);
  return s;
}

namespace {

// A constant uint32 array of `shape` whose flat element i is f(i).
template <class F>
Array u32_array(const Shape& shape, F&& f) {
  Array a = jx::detail::empty_array(shape, DType::UInt32, false);
  uint32_t* p = jx::detail::data<uint32_t>(a);
  const int64_t n = shape.numel();
  for (int64_t i = 0; i < n; ++i) p[i] = f(i);
  return a;
}

std::pair<Array, Array> hash(const Array& k0, const Array& k1, const Array& x0, const Array& x1) {
  ops::Arrays out = bind(ops::Prim::Threefry2x32, std::vector<Array>{k0, k1, x0, x1});
  return {std::move(out[0]), std::move(out[1])};
}

// Keys reshaped to batch + (1,)*rank so they broadcast against counters of shape
// (1,)*batch_rank + shape.
std::pair<Array, Array> keys_for(const Keys& k, size_t rank) {
  Shape s = concat(k.batch(), ones(rank));
  return {lax::reshape(k.k0, s), lax::reshape(k.k1, s)};
}

bool single_concrete(const Keys& k) { return !force_composed && k.concrete() && k.batch().empty(); }

uint32_t key_word(const Array& a) { return *jx::detail::data<uint32_t>(a); }

DType uint_dtype(int bit_width) {
  switch (bit_width) {
    case 8: return DType::UInt8;
    case 16: return DType::UInt16;
    case 32: return DType::UInt32;
    default: return DType::UInt64;
  }
}

// Words at flat positions word(i) of the legacy stream of m words, threefry_2x32(key,
// iota(m)): with h = ceil(m/2), word w < h is y0 of pair w, word w >= h is y1 of pair
// w - h, and pair p hashes (p, p + h) (0 in place of the pad when m is odd). Both words
// of a pair come from one hash, so a mask picks y0 or y1 without a gather.
template <class F>
Array legacy_words(const Keys& k, int64_t m, const Shape& shape, F&& word) {
  const int64_t h = (m + 1) / 2;
  const Shape cshape = concat(ones(k.batch().size()), shape);
  auto pair_of = [&](int64_t i) {
    int64_t w = word(i);
    return w < h ? w : w - h;
  };
  Array x0 = u32_array(cshape, [&](int64_t i) { return uint32_t(pair_of(i)); });
  Array x1 = u32_array(cshape, [&](int64_t i) {
    int64_t p = pair_of(i);
    return p + h < m ? uint32_t(p + h) : 0u;
  });
  Array first = u32_array(cshape, [&](int64_t i) { return word(i) < h ? 0xFFFFFFFFu : 0u; });
  Array second = u32_array(cshape, [&](int64_t i) { return word(i) < h ? 0u : 0xFFFFFFFFu; });
  auto [k0, k1] = keys_for(k, shape.size());
  auto [y0, y1] = hash(k0, k1, x0, x1);
  return lax::bitwise_or(lax::bitwise_and(y0, first), lax::bitwise_and(y1, second));
}

// Partitionable counters of `shape`: the 64-bit row-major index as (hi, lo), prefixed
// with (1,)*batch_rank.
std::pair<Array, Array> iota_2x32(size_t batch_rank, const Shape& shape) {
  const Shape cshape = concat(ones(batch_rank), shape);
  Array lo = u32_array(cshape, [](int64_t i) { return uint32_t(uint64_t(i)); });
  Array hi = shape.numel() <= (int64_t(1) << 32)
                 ? u32_array(ones(cshape.size()), [](int64_t) { return 0u; })
                 : u32_array(cshape, [](int64_t i) { return uint32_t(uint64_t(i) >> 32); });
  return {hi, lo};
}

}  // namespace

Array u32(uint32_t v) {
  Array a = jx::detail::empty_array({}, DType::UInt32, false);
  *jx::detail::data<uint32_t>(a) = v;
  return a;
}

void check_shape(const char* fn, const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0)
      throw ValueError(str("[", fn, "] shape ", list_str(shape.vec()),
                           " has a negative dimension; dimensions must be >= 0"));
}

Keys unpack(const char* fn, const Array& key, bool allow_batched) {
  if (!key.valid())
    throw ValueError(str("[", fn, "] the key is an empty jx::Array; make one with "
                              "jx::random::PRNGKey(seed)"));
  const Shape& s = key.shape();
  if (key.dtype() != DType::UInt32 || s.empty() || s.back() != 2)
    throw DTypeError(str("[", fn, "] expects a PRNG key, a uint32[2] array as returned by "
                              "jx::random::PRNGKey or split, got ",
                         type_str(key.dtype(), s)));
  if (!allow_batched && s.size() != 1)
    throw ShapeError(str("[", fn, "] accepts a single key, but was given a key array of shape ",
                         list_str(s.vec()), " (", type_str(key.dtype(), s),
                         "); index one key, or use jx::vmap for batching"));
  Shape batch(s.begin(), s.end() - 1);
  if (key.is_concrete()) {
    const uint32_t* p = jx::detail::data<uint32_t>(key);
    Array k0 = u32_array(batch, [&](int64_t i) { return p[2 * i]; });
    Array k1 = u32_array(batch, [&](int64_t i) { return p[2 * i + 1]; });
    return {k0, k1};
  }
  const int64_t last = int64_t(s.size()) - 1;
  return {lax::reshape(lax::slice_in_dim(key, 0, 1, 1, last), batch),
          lax::reshape(lax::slice_in_dim(key, 1, 2, 1, last), batch)};
}

Array pack(const Keys& k) {
  const Shape& b = k.batch();
  if (k.concrete()) {
    Array out = jx::detail::empty_array(concat(b, Shape{2}), DType::UInt32, false);
    uint32_t* o = jx::detail::data<uint32_t>(out);
    const uint32_t* a = jx::detail::data<uint32_t>(k.k0);
    const uint32_t* c = jx::detail::data<uint32_t>(k.k1);
    const int64_t n = b.numel();
    for (int64_t i = 0; i < n; ++i) {
      o[2 * i] = a[i];
      o[2 * i + 1] = c[i];
    }
    return out;
  }
  const Shape col = concat(b, Shape{1});
  return lax::concatenate({lax::reshape(k.k0, col), lax::reshape(k.k1, col)}, int64_t(b.size()));
}

Keys split(const Keys& k, const Shape& shape) {
  if (partitionable()) {
    auto [hi, lo] = iota_2x32(k.batch().size(), shape);
    auto [k0, k1] = keys_for(k, shape.size());
    auto [y0, y1] = hash(k0, k1, hi, lo);
    return {y0, y1};
  }
  // Legacy: threefry_2x32(key, iota(2*num)) reshaped to (*shape, 2).
  const int64_t m = 2 * shape.numel();
  return {legacy_words(k, m, shape, [](int64_t j) { return 2 * j; }),
          legacy_words(k, m, shape, [](int64_t j) { return 2 * j + 1; })};
}

std::vector<Keys> split_n(const Keys& k, int64_t n) {
  std::vector<Keys> out;
  const size_t r = k.batch().size();
  for (int64_t j = 0; j < n; ++j) {
    if (partitionable()) {
      Array hi = lax::reshape(u32(uint32_t(uint64_t(j) >> 32)), ones(r));
      Array lo = lax::reshape(u32(uint32_t(j)), ones(r));
      auto [y0, y1] = hash(k.k0, k.k1, hi, lo);
      out.push_back({y0, y1});
    } else {
      out.push_back({legacy_words(k, 2 * n, Shape{}, [&](int64_t) { return 2 * j; }),
                     legacy_words(k, 2 * n, Shape{}, [&](int64_t) { return 2 * j + 1; })});
    }
  }
  return out;
}

Keys fold_in(const Keys& k, const Array& data) {
  // threefry_2x32(key, threefry_seed(data)) = hash(key, (0, data)).
  const size_t r = k.batch().size();
  Array d = data.ndim() == 0 ? lax::reshape(data, ones(r)) : data;
  auto [y0, y1] = hash(k.k0, k.k1, lax::reshape(u32(0), ones(r)), d);
  return {y0, y1};
}

Array random_bits(const Keys& k, int bit_width, const Shape& shape) {
  const DType dt = uint_dtype(bit_width);
  const int64_t n = shape.numel();
  if (single_concrete(k)) {
    Array out = jx::detail::empty_array(shape, dt, false);
    if (partitionable())
      cpu::threefry_bits_partitionable(key_word(k.k0), key_word(k.k1), n, bit_width,
                                       jx::detail::raw_data(out));
    else
      cpu::threefry_bits_legacy(key_word(k.k0), key_word(k.k1), n, bit_width,
                                jx::detail::raw_data(out));
    return out;
  }
  if (partitionable()) {
    auto [hi, lo] = iota_2x32(k.batch().size(), shape);
    auto [k0, k1] = keys_for(k, shape.size());
    auto [b1, b2] = hash(k0, k1, hi, lo);
    if (bit_width == 64) {
      Array h = lax::convert_element_type(b1, DType::UInt64);
      Array l = lax::convert_element_type(b2, DType::UInt64);
      Array s = lax::convert_element_type(u32(32), DType::UInt64);
      return lax::bitwise_or(lax::shift_left(h, lax::reshape(s, ones(h.ndim()))), l);
    }
    Array x = lax::bitwise_xor(b1, b2);
    return bit_width == 32 ? x : lax::convert_element_type(x, dt);
  }
  if (bit_width == 64) {
    // m = 2n words: value i = (word[i] << 32) | word[i + n], the two outputs of pair i.
    const Shape cshape = concat(ones(k.batch().size()), shape);
    Array x0 = u32_array(cshape, [](int64_t i) { return uint32_t(i); });
    Array x1 = u32_array(cshape, [&](int64_t i) { return uint32_t(i + n); });
    auto [k0, k1] = keys_for(k, shape.size());
    auto [y0, y1] = hash(k0, k1, x0, x1);
    Array h = lax::convert_element_type(y0, DType::UInt64);
    Array l = lax::convert_element_type(y1, DType::UInt64);
    Array s = lax::convert_element_type(u32(32), DType::UInt64);
    return lax::bitwise_or(lax::shift_left(h, lax::reshape(s, ones(h.ndim()))), l);
  }
  const int64_t m = (int64_t(bit_width) * n + 31) / 32;
  if (bit_width == 32) return legacy_words(k, m, shape, [](int64_t i) { return i; });
  // 8/16-bit values unpack each word little-endian: value i is bits
  // [bit_width*(i % per), ...) of word i / per.
  const int per = 32 / bit_width;
  Array w = legacy_words(k, m, shape, [&](int64_t i) { return i / per; });
  Array sh = u32_array(concat(ones(k.batch().size()), shape),
                       [&](int64_t i) { return uint32_t(bit_width * (i % per)); });
  return lax::convert_element_type(lax::shift_right_logical(w, sh), dt);
}

}  // namespace detail

using detail::Keys;

Array PRNGKey(const Array& seed) {
  if (!seed.valid()) throw ValueError("[PRNGKey] the seed is an empty jx::Array");
  if (seed.ndim() != 0)
    throw ShapeError(str("[PRNGKey] accepts a scalar seed, but was given an array of shape ",
                         list_str(seed.shape().vec()), " != (); use jx::vmap for batching"));
  if (!is_integer(seed.dtype()))
    throw DTypeError(str("[PRNGKey] the seed must be an integer, got ",
                         type_str(seed.dtype(), seed.shape()),
                         "; convert it with astype(jx::int32) (or int64 for a 64-bit seed)"));
  const bool wide = itemsize(seed.dtype()) == 8;
  if (!seed.is_concrete()) {
    Array lo = lax::convert_element_type(seed, DType::UInt32);  // wraps: the low 32 bits
    Array hi = wide ? lax::convert_element_type(
                          lax::shift_right_logical(seed, lax::convert_element_type(Array(32), seed.dtype())),
                          DType::UInt32)
                    : detail::u32(0);
    return detail::pack({hi, lo});
  }
  // threefry_seed: [shift_right_logical(seed, 32), seed & 0xFFFFFFFF] as uint32. The shift
  // gives 0 for types narrower than 64 bits; narrower signed seeds sign-extend first.
  uint64_t v = is_unsigned_integer(seed.dtype()) ? seed.item<uint64_t>()
                                                 : uint64_t(seed.item<int64_t>());
  return detail::pack({detail::u32(wide ? uint32_t(v >> 32) : 0u), detail::u32(uint32_t(v))});
}

Array key_data(const Array& keys) {
  detail::unpack("key_data", keys, /*allow_batched=*/true);
  return keys;
}

Array split(const Array& key, const Shape& shape) {
  Keys k = detail::unpack("split", key);
  detail::KeyUse use("split", key);
  detail::check_shape("split", shape);
  if (!detail::force_composed && k.concrete()) {
    const int64_t n = shape.numel();
    Shape out_shape = shape;
    out_shape.push_back(2);
    Array out = jx::detail::empty_array(out_shape, DType::UInt32, false);
    uint32_t* o = jx::detail::data<uint32_t>(out);
    const uint32_t k0 = *jx::detail::data<uint32_t>(k.k0), k1 = *jx::detail::data<uint32_t>(k.k1);
    if (detail::partitionable()) {
      // Key j = hash(key, (hi32(j), lo32(j))) = both words of the 64-bit bits at j.
      std::vector<uint64_t> b(static_cast<size_t>(n));
      cpu::threefry_bits_partitionable(k0, k1, n, 64, b.data());
      for (int64_t j = 0; j < n; ++j) {
        o[2 * j] = uint32_t(b[size_t(j)] >> 32);
        o[2 * j + 1] = uint32_t(b[size_t(j)]);
      }
    } else {
      cpu::threefry_bits_legacy(k0, k1, 2 * n, 32, o);
    }
    return out;
  }
  return detail::pack(detail::split(k, shape));
}

Array split(const Array& key, int64_t num) {
  if (num < 0)
    throw ValueError(str("[split] num must be >= 0, got ", num));
  return split(key, Shape{num});
}

namespace detail {
std::vector<Array> split_list(const Array& key, int64_t n) {
  Array ks = random::split(key, n);
  std::vector<Array> out;
  if (ks.is_concrete()) {
    const uint32_t* p = jx::detail::data<uint32_t>(ks);
    for (int64_t i = 0; i < n; ++i) out.push_back(pack({u32(p[2 * i]), u32(p[2 * i + 1])}));
    return out;
  }
  for (int64_t i = 0; i < n; ++i) out.push_back(lax::reshape(lax::slice_in_dim(ks, i, i + 1, 1, 0), Shape{2}));
  return out;
}
}  // namespace detail

Array fold_in(const Array& key, const Array& data) {
  Keys k = detail::unpack("fold_in", key);
  if (!data.valid()) throw ValueError("[fold_in] data is an empty jx::Array");
  if (data.ndim() != 0)
    throw ShapeError(str("[fold_in] accepts a scalar, but was given an array of shape ",
                         list_str(data.shape().vec()), " != (); use jx::vmap for batching"));
  Array d;
  if (data.is_concrete()) {
    // jnp.asarray(data, dtype=uint32): integers wrap, floats truncate toward zero.
    uint32_t v = is_unsigned_integer(data.dtype()) ? uint32_t(data.item<uint64_t>())
                 : is_floating(data.dtype())       ? uint32_t(int64_t(data.item<double>()))
                                                   : uint32_t(data.item<int64_t>());
    d = detail::u32(v);
  } else {
    d = lax::convert_element_type(data, DType::UInt32);
  }
  return detail::pack(detail::fold_in(k, d));
}

Array bits(const Array& key, const Shape& shape, DType dtype) {
  Keys k = detail::unpack("bits", key);
  detail::KeyUse use("bits", key);
  if (!is_unsigned_integer(dtype))
    throw DTypeError(str("[bits] dtype argument must be an unsigned int dtype, got ",
                         dtype_name(dtype), "; use uint8, uint16, uint32 or uint64"));
  detail::check_shape("bits", shape);
  return detail::random_bits(k, int(itemsize(dtype) * 8), shape);
}

std::pair<Array, Array> threefry2x32(const Array& k0, const Array& k1, const Array& x0,
                                     const Array& x1) {
  ops::Arrays out = bind(ops::Prim::Threefry2x32, std::vector<Array>{k0, k1, x0, x1});
  return {std::move(out[0]), std::move(out[1])};
}

Array threefry_2x32(const Array& key, const Array& count) {
  Keys k = detail::unpack("threefry_2x32", key);
  if (count.dtype() != DType::UInt32)
    throw DTypeError(str("[threefry_2x32] count must be uint32, got ",
                         type_str(count.dtype(), count.shape())));
  const int64_t n = count.size();
  const int64_t h = (n + 1) / 2;
  if (!count.is_concrete() || !k.concrete()) {
    Array flat = lax::reshape(count, Shape{n});
    if (n % 2) flat = lax::concatenate({flat, lax::reshape(detail::u32(0), Shape{1})}, 0);
    auto [y0, y1] = threefry2x32(lax::reshape(k.k0, Shape{1}), lax::reshape(k.k1, Shape{1}),
                                 lax::slice_in_dim(flat, 0, h), lax::slice_in_dim(flat, h, 2 * h));
    Array out = lax::concatenate({y0, y1}, 0);
    if (n % 2) out = lax::slice_in_dim(out, 0, n);
    return lax::reshape(out, count.shape());
  }
  // Flatten, pad to even with a 0, hash first half against second half, concatenate the
  // outputs, drop the pad.
  std::vector<uint32_t> c(static_cast<size_t>(2 * h), 0u);
  if (n) std::memcpy(c.data(), jx::detail::data<uint32_t>(count), size_t(n) * 4);
  std::vector<uint32_t> y(static_cast<size_t>(2 * h));
  const int64_t hs[1] = {h}, one[1] = {1};
  cpu::threefry2x32(jx::detail::data<uint32_t>(k.k0), one, jx::detail::data<uint32_t>(k.k1), one,
                    c.data(), hs, c.data() + h, hs, y.data(), y.data() + h, hs, 1);
  Array out = jx::detail::empty_array(count.shape(), DType::UInt32, false);
  if (n) std::memcpy(jx::detail::raw_data(out), y.data(), size_t(n) * 4);
  return out;
}

}  // namespace jx::random
