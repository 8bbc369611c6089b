// randint, permutation/shuffle, choice and categorical, composed from lax as
// jax/_src/random/core.py composes them.
#include <cmath>

#include "core/array_impl.h"
#include "jx/lax.h"
#include "jx/random.h"
#include "numpy/promote.h"
#include "ops/common.h"
#include "random/internal.h"
#include "support/str.h"
#include "transforms/key_reuse.h"

namespace jx::random {

using detail::const_f;
using detail::const_i;
using detail::const_u;
using detail::Keys;

namespace {

DType uint_of(int bits) {
  return bits == 8 ? DType::UInt8 : bits == 16 ? DType::UInt16 : bits == 32 ? DType::UInt32
                                                                            : DType::UInt64;
}

Array clip_const(const Array& x, int64_t lo, uint64_t hi) {
  // lo/hi are representable in x's dtype (callers clip them to its range first).
  const size_t r = size_t(x.ndim());
  const DType dt = x.dtype();
  Array l = is_unsigned_integer(dt) ? const_u(uint64_t(lo), dt, r) : const_i(lo, dt, r);
  Array h = is_unsigned_integer(dt) ? const_u(hi, dt, r) : const_i(int64_t(hi), dt, r);
  return lax::min(h, lax::max(l, x));
}

// JAX's _convert_and_clip_integer: convert, clipping into dtype's range instead of wrapping.
Array convert_and_clip(const Array& val, DType dtype) {
  const IInfo to = iinfo(dtype), from = iinfo(val.dtype());
  const int64_t lo = std::max(to.min, from.min);
  const uint64_t hi = std::min(to.max, from.max);
  return lax::convert_element_type(clip_const(val, lo, hi), dtype);
}

Array as_int(const Array& x) {
  return is_integer(x.dtype()) ? x : lax::convert_element_type(x, DType::Int32);
}

Array randint_impl(const Keys& k, Array minval, Array maxval, const Shape& shape, DType dtype) {
  minval = as_int(minval);
  maxval = as_int(maxval);
  const IInfo info = iinfo(dtype);
  // Where maxval exceeds dtype's max (randint(key, shape, 0, 256, uint8)), the span is one
  // larger.
  Array dmax = is_unsigned_integer(dtype) ? const_u(info.max, dtype) : const_i(int64_t(info.max), dtype);
  Array out_of_range =
      lax::gt(maxval, lax::reshape(convert_and_clip(dmax, maxval.dtype()), detail::ones(size_t(maxval.ndim()))));
  const size_t r = shape.size();
  minval = detail::to_rank("randint", convert_and_clip(minval, dtype), r);
  maxval = detail::to_rank("randint", convert_and_clip(maxval, dtype), r);
  out_of_range = detail::to_rank("randint", out_of_range, r);
  const int nbits = info.bits;
  std::vector<Keys> ks = detail::split_n(k, 2);
  Array higher = detail::random_bits(ks[0], nbits, shape);
  Array lower = detail::random_bits(ks[1], nbits, shape);
  const DType udt = uint_of(nbits);
  Array span = lax::convert_element_type(lax::sub(maxval, minval), udt);
  Array one = const_u(1, udt, r);
  span = lax::select(lax::le(maxval, minval), lax::add(lax::mul(span, const_u(0, udt, r)), one), span);
  span = lax::select(lax::bitwise_and(out_of_range, lax::gt(maxval, minval)), lax::add(span, one),
                     span);
  // 2**nbits % span without overflow: ((2**(nbits/2) % span)**2) % span.
  Array mult = lax::rem(const_u(uint64_t(1) << (nbits / 2), udt, r), span);
  mult = lax::rem(lax::mul(mult, mult), span);
  Array off = lax::add(lax::mul(lax::rem(higher, span), mult), lax::rem(lower, span));
  off = lax::rem(off, span);
  return lax::add(minval, lax::convert_element_type(off, dtype));
}

int64_t num_rounds(int64_t n) {
  // ceil(3 * ln(max(1, n)) / ln(2**32 - 1)): 1 below ~1.6e9 elements.
  return int64_t(std::ceil(3.0 * std::log(double(std::max<int64_t>(1, n))) / std::log(4294967295.0)));
}

Array arange_i32(int64_t n) { return lax::iota(DType::Int32, n); }

// x permuted along axis by the permutation _shuffle gives arange(n): each round's sort keys
// (bits of length n) broadcast across the other dims, so every slice moves alike and the
// result is take(x, permutation(key, n), axis) without a gather.
Array permute_along(const Keys& k0, const Array& x, int64_t axis) {
  const int64_t n = x.shape(int(axis));
  Keys k = k0;
  Array out = x;
  for (int64_t r = 0; r < num_rounds(n); ++r) {
    std::vector<Keys> ks = detail::split_n(k, 2);
    k = ks[0];
    Array sk = detail::random_bits(ks[1], 32, Shape{n});
    if (x.ndim() > 1) sk = lax::broadcast_in_dim(sk, x.shape(), {axis});
    out = lax::sort(std::vector<Array>{sk, out}, axis, true, 1)[1];
  }
  return out;
}

// jnp.take(a, ind, axis) for in-bounds int indices.
Array take(const Array& a, const Array& ind, int64_t axis) {
  const int64_t R = a.ndim(), I = ind.ndim();
  Array idx = lax::reshape(lax::convert_element_type(ind, DType::Int32), detail::concat(ind.shape(), Shape{1}));
  lax::GatherDimensionNumbers dn;
  for (int64_t d = 0; d < axis; ++d) dn.offset_dims.push_back(d);
  for (int64_t d = axis + 1; d < R; ++d) dn.offset_dims.push_back(d - 1 + I);
  dn.collapsed_slice_dims = {axis};
  dn.start_index_map = {axis};
  std::vector<int64_t> sizes = a.shape().vec();
  sizes[size_t(axis)] = 1;
  return lax::gather(a, idx, dn, sizes, lax::GatherScatterMode::clip);
}

// Indices of the k largest along the last axis, largest first, ties by lower index
// (lax.top_k), through a stable sort of the negated values.
Array top_k_indices(const Array& v, int64_t k) {
  const int64_t last = v.ndim() - 1;
  Array iota = lax::broadcasted_iota(DType::Int32, v.shape(), last);
  Array idx = lax::sort(std::vector<Array>{lax::neg(v), iota}, last, true, 1)[1];
  return lax::slice_in_dim(idx, 0, k, 1, last);
}

}  // namespace

Array randint(const Array& key, const Shape& shape, const Array& minval, const Array& maxval,
              DType dtype) {
  Keys k = detail::unpack("randint", key);
  detail::KeyUse use("randint", key);
  detail::check_shape("randint", shape);
  if (!is_integer(dtype))
    throw DTypeError(str("[randint] only accepts integer dtypes, got ", dtype_name(dtype),
                         "; use int32 (the default) or another integer dtype"));
  detail::check_broadcast("randint", shape, minval.shape(), maxval.shape());
  const IInfo info = iinfo(dtype);
  if (info.bits >= 32) return randint_impl(k, minval, maxval, shape, dtype);
  // Narrow dtypes are sampled as int32 with clipped bounds (less modulo bias), then cast.
  Array mn = clip_const(lax::convert_element_type(minval, DType::Int32), info.min, info.max);
  Array mx = clip_const(lax::convert_element_type(maxval, DType::Int32), info.min, info.max + 1);
  return lax::convert_element_type(randint_impl(k, mn, mx, shape, DType::Int32), dtype);
}

namespace detail {
Array shuffle_keys(const Keys& k, const Array& x, int64_t axis) {
  // JAX's _shuffle sorts x itself, with sort keys of x's full shape, one round per
  // collision budget of x.size.
  Keys key = k;
  Array out = x;
  for (int64_t r = 0; r < num_rounds(x.size()); ++r) {
    std::vector<Keys> ks = split_n(key, 2);
    key = ks[0];
    Array sk = random_bits(ks[1], 32, x.shape());
    out = lax::sort(std::vector<Array>{sk, out}, axis, true, 1)[1];
  }
  return out;
}
}  // namespace detail

Array permutation(const Array& key, const Array& x, int64_t axis, bool independent) {
  Keys k = detail::unpack("permutation", key);
  detail::KeyUse use("permutation", key);
  if (x.ndim() == 0) {
    if (!is_integer(x.dtype()))
      throw DTypeError(str("[permutation] x must be an integer or at least 1-dimensional, got ",
                           type_str(x.dtype(), x.shape())));
    if (!x.is_concrete())
      throw ConcretizationError("[permutation] x must be a concrete integer (it sets the "
                                "output shape); pass a C++ integer");
    const int64_t n = x.item<int64_t>();
    if (n < 0) throw ValueError(str("[permutation] n must be >= 0, got ", n));
    ops::canonical_axis("permutation", axis, 1);
    return detail::shuffle_keys(k, arange_i32(n), 0);
  }
  axis = ops::canonical_axis("permutation", axis, x.ndim());
  if (independent || x.ndim() == 1) return detail::shuffle_keys(k, x, axis);
  return permute_along(k, x, axis);
}

Array shuffle(const Array& key, const Array& x, int64_t axis) {
  Keys k = detail::unpack("shuffle", key);
  detail::KeyUse use("shuffle", key);
  axis = ops::canonical_axis("shuffle", axis, x.ndim());
  return detail::shuffle_keys(k, x, axis);
}

Array choice(const Array& key, const Array& a, const Shape& shape, bool replace,
             const std::optional<Array>& p, int64_t axis, const std::string& mode) {
  Keys k = detail::unpack("choice", key);
  detail::KeyUse use("choice", key);
  detail::check_shape("choice", shape);
  int64_t n_inputs;
  if (a.ndim() == 0) {
    if (!a.is_concrete())
      throw ConcretizationError("[choice] an integer `a` must be concrete (it sets the range)");
    n_inputs = a.item<int64_t>();
  } else {
    axis = ops::canonical_axis("choice", axis, a.ndim());
    n_inputs = a.shape(int(axis));
  }
  const int64_t n_draws = shape.numel();
  if (n_draws == 0) return lax::broadcast(detail::const_f(0, a.dtype()), shape);
  if (n_inputs <= 0)
    throw ValueError("[choice] a must be greater than 0 unless no samples are taken");
  if (!replace && n_draws > n_inputs)
    throw ValueError(str("[choice] cannot take a larger sample (size ", n_draws,
                         ") than population (size ", n_inputs, ") when replace=false"));
  Array result;
  if (!p) {
    if (replace) {
      Array ind = randint(key, shape, 0, int32_t(n_inputs));
      result = a.ndim() == 0 ? ind : take(a, ind, axis);
    } else {
      Array perm = a.ndim() == 0 ? permutation(key, Array(int32_t(n_inputs))) : permutation(key, a, axis);
      result = lax::slice_in_dim(perm, 0, n_draws, 1, a.ndim() == 0 ? 0 : axis);
    }
  } else {
    Array pa = numpy::detail::promote_inexact({*p})[0];
    if (pa.shape() != Shape{n_inputs})
      throw ShapeError(str("[choice] p must be None or a 1D vector with the same size as "
                           "a.shape[axis]; p has shape ",
                           list_str(pa.shape().vec()), " and a.shape[axis] is ", n_inputs));
    const DType dt = pa.dtype();
    Array ind;
    if (replace) {
      Array cum = lax::cumsum(pa, 0);
      Array total = lax::slice_in_dim(cum, n_inputs - 1, n_inputs, 1, 0);  // (1,)
      Array u = detail::uniform_keys(k, shape, dt, const_f(0.0, dt), const_f(1.0, dt));
      const size_t r = shape.size();
      Array rr = lax::mul(lax::reshape(total, detail::ones(r)), lax::sub(const_f(1.0, dt, r), u));
      // searchsorted(cum, r, side='left'): how many entries of the sorted cum are < r.
      Array lt = lax::lt(lax::reshape(cum, detail::concat(detail::ones(r), Shape{n_inputs})),
                         lax::reshape(rr, detail::concat(shape, Shape{1})));
      ind = lax::reduce_sum(lax::convert_element_type(lt, DType::Int32), {int64_t(r)});
    } else {
      Array g = lax::add(detail::gumbel_keys(k, Shape{n_inputs}, dt, mode), lax::log(pa));
      ind = top_k_indices(g, n_draws);
    }
    result = a.ndim() == 0 ? ind : take(a, ind, axis);
  }
  if (a.ndim() == 0) return lax::reshape(result, shape);
  Shape out;
  for (int64_t d = 0; d < axis; ++d) out.push_back(a.shape(int(d)));
  for (int64_t d : shape) out.push_back(d);
  for (int64_t d = axis + 1; d < a.ndim(); ++d) out.push_back(a.shape(int(d)));
  return lax::reshape(result, out);
}

Array categorical(const Array& key, const Array& logits, int64_t axis,
                  OptionalShape shape_opt, bool replace, const std::string& mode) {
  Keys k = detail::unpack("categorical", key);
  detail::KeyUse use("categorical", key);
  const int64_t nd = logits.ndim();
  if (nd == 0)
    throw ShapeError("[categorical] logits must have at least one dimension (the categories)");
  const int64_t ax = ops::canonical_axis("categorical", axis, nd);
  if (!is_floating(logits.dtype()))
    throw DTypeError(str("[categorical] logits must be floating, got ",
                         type_str(logits.dtype(), logits.shape())));
  Shape batch;
  for (int64_t d = 0; d < nd; ++d)
    if (d != ax) batch.push_back(logits.shape(int(d)));
  Shape shape = batch;
  if (shape_opt) {
    shape = *shape_opt;
    detail::check_shape("categorical", shape);
    detail::check_broadcast("categorical", shape, batch);
  }
  const size_t np = shape.size() - batch.size();
  Shape prefix(shape.begin(), shape.begin() + long(np));
  const DType dt = logits.dtype();
  if (replace) {
    Shape lshape(shape.begin() + long(np), shape.end());
    lshape.insert(size_t(ax), logits.shape(int(ax)));
    Array g = detail::gumbel_keys(k, detail::concat(prefix, lshape), dt, mode);
    Array l = lax::reshape(logits, detail::concat(detail::ones(np), logits.shape()));
    return lax::argmax(lax::add(g, l), int64_t(np) + ax, DType::Int32);
  }
  Array l = lax::add(logits, detail::gumbel_keys(k, logits.shape(), dt, mode));
  const int64_t kk = prefix.numel();
  if (kk > logits.shape(int(ax)))
    throw ValueError(str("[categorical] number of samples without replacement (", kk,
                         ") cannot exceed number of categories (", logits.shape(int(ax)), ")"));
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < nd; ++d)
    if (d != ax) perm.push_back(d);
  perm.push_back(ax);
  Array idx = top_k_indices(lax::transpose(l, perm), kk);  // batch + (k,)
  std::vector<int64_t> front{idx.ndim() - 1};
  for (int64_t d = 0; d + 1 < idx.ndim(); ++d) front.push_back(d);
  return lax::reshape(lax::transpose(idx, front), shape);
}

}  // namespace jx::random
