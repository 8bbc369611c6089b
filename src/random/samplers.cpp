// Continuous samplers and the simple discrete ones, composed from lax as
// jax/_src/random/core.py composes them. uniform has a one-pass kernel for a concrete key
// and scalar bounds (float32/float64), normal one for a concrete key (float32).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/threefry.h"
#include "core/array_impl.h"
#include "jx/lax.h"
#include "jx/random.h"
#include "random/internal.h"
#include "support/dtype_switch.h"
#include "support/str.h"
#include "transforms/key_reuse.h"

namespace jx::random {
namespace detail {

namespace {

template <class V>
Array typed_const(V v, DType dt, size_t rank) {
  Array a = jx::detail::empty_array(ones(rank), dt, false);
  JX_DTYPE_SWITCH(dt, T, {
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bhalf>)
      *jx::detail::data<T>(a) = T(float(v));
    else
      *jx::detail::data<T>(a) = static_cast<T>(v);
  });
  return a;
}

// Bits of 1.0 in a float dtype, as an unsigned constant of the same width.
uint64_t one_bits(DType dt) {
  switch (dt) {
    case DType::Float16: return 0x3C00u;
    case DType::BFloat16: return 0x3F80u;
    case DType::Float32: return 0x3F800000u;
    default: return 0x3FF0000000000000ull;
  }
}

DType uint_of_width(int bits) {
  return bits == 8 ? DType::UInt8 : bits == 16 ? DType::UInt16 : bits == 32 ? DType::UInt32
                                                                            : DType::UInt64;
}

bool scalar_concrete(const Array& a) { return a.is_concrete() && a.size() == 1; }

}  // namespace

Array const_f(double v, DType dt, size_t rank) { return typed_const(v, dt, rank); }
Array const_i(int64_t v, DType dt, size_t rank) { return typed_const(v, dt, rank); }
Array const_u(uint64_t v, DType dt, size_t rank) { return typed_const(v, dt, rank); }

Array nextafter_const(double from, double to, DType dt, size_t rank) {
  Array a = jx::detail::empty_array(ones(rank), dt, false);
  switch (dt) {
    case DType::Float32: *jx::detail::data<float>(a) = std::nextafter(float(from), float(to)); break;
    case DType::Float64: *jx::detail::data<double>(a) = std::nextafter(from, to); break;
    default: {
      // 16-bit floats: step the bit pattern (the values used here are finite and nonzero).
      Array f = const_f(from, dt, rank);
      uint16_t b;
      std::memcpy(&b, jx::detail::raw_data(f), 2);
      const bool neg = (b & 0x8000u) != 0;
      const bool toward_larger_magnitude = (to > from) != neg;
      b = uint16_t(toward_larger_magnitude ? b + 1 : b - 1);
      std::memcpy(jx::detail::raw_data(a), &b, 2);
    }
  }
  return a;
}

Array to_rank(const char* fn, const Array& x, size_t rank) {
  if (size_t(x.ndim()) > rank)
    throw ShapeError(str("[", fn, "] parameter of shape ", list_str(x.shape().vec()),
                         " has more dimensions than the sample shape (rank ", rank, ")"));
  if (size_t(x.ndim()) == rank) return x;
  return lax::reshape(x, concat(ones(rank - size_t(x.ndim())), x.shape()));
}

// NumPy broadcasting of two shapes (written out: GCC 12 warns falsely on initializer
// lists of Shape).
Shape broadcast_all(const char* fn, const Shape& a, const Shape& b) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x != y && x != 1 && y != 1)
      throw ShapeError(str("[", fn, "] incompatible shapes for broadcasting: ", list_str(a.vec()),
                           " and ", list_str(b.vec()), "; parameters must broadcast to the sample "
                           "shape"));
    out[i] = x == 1 ? y : x;
  }
  return out;
}

void check_broadcast(const char* fn, const Shape& shape, const Shape& p) {
  Shape b = broadcast_all(fn, shape, p);
  if (b != shape)
    throw ShapeError(str("[", fn, "] parameter shapes must be broadcast-compatible with shape "
                              "argument, and the result of broadcasting the shapes must equal "
                              "the shape argument, but got result ",
                         list_str(b.vec()), " for shape argument ", list_str(shape.vec())));
}

void check_broadcast(const char* fn, const Shape& shape, const Shape& p, const Shape& q) {
  check_broadcast(fn, shape, p);
  check_broadcast(fn, shape, q);
}

void require_float(const char* fn, DType dt) {
  if (!is_floating(dt))
    throw DTypeError(str("[", fn, "] dtype argument to `", fn, "` must be a float dtype, got ",
                         dtype_name(dt), "; use float32 (the default), float64, float16 or "
                                         "bfloat16"));
}

Array uniform_keys(const Keys& k, const Shape& shape, DType dt, const Array& minval_in,
                   const Array& maxval_in) {
  const size_t rank = shape.size();
  if (!force_composed && k.concrete() && k.batch().empty() &&
      (dt == DType::Float32 || dt == DType::Float64) && scalar_concrete(minval_in) &&
      scalar_concrete(maxval_in) && size_t(minval_in.ndim()) <= rank &&
      size_t(maxval_in.ndim()) <= rank) {
    const uint32_t k0 = *jx::detail::data<uint32_t>(k.k0), k1 = *jx::detail::data<uint32_t>(k.k1);
    Array lo = lax::convert_element_type(minval_in, dt), hi = lax::convert_element_type(maxval_in, dt);
    Array out = jx::detail::empty_array(shape, dt, false);
    if (dt == DType::Float32)
      cpu::threefry_uniform_f32(k0, k1, shape.numel(), *jx::detail::data<float>(lo),
                                *jx::detail::data<float>(hi), partitionable(),
                                jx::detail::data<float>(out));
    else
      cpu::threefry_uniform_f64(k0, k1, shape.numel(), *jx::detail::data<double>(lo),
                                *jx::detail::data<double>(hi), partitionable(),
                                jx::detail::data<double>(out));
    return out;
  }
  const size_t batch_rank = k.batch().size();
  const size_t full_rank = batch_rank + rank;
  Array minval = to_rank("uniform", lax::convert_element_type(minval_in, dt), full_rank);
  Array maxval = to_rank("uniform", lax::convert_element_type(maxval_in, dt), full_rank);
  const FInfo fi = finfo(dt);
  const int nbits = fi.bits, nmant = fi.nmant;
  const int rng_bits = nmant < 8 ? 8 : nbits;
  const DType udt = uint_of_width(nbits);
  Array bits = random_bits(k, rng_bits, shape);
  if (rng_bits != nbits) bits = lax::convert_element_type(bits, udt);
  Array float_bits =
      lax::bitwise_or(lax::shift_right_logical(bits, const_u(uint64_t(rng_bits - nmant), udt, full_rank)),
                      const_u(one_bits(dt), udt, full_rank));
  Array floats = lax::sub(lax::bitcast_convert_type(float_bits, dt), const_f(1.0, dt, full_rank));
  return lax::max(minval, lax::add(lax::mul(floats, lax::sub(maxval, minval)), minval));
}

Array normal_keys(const Keys& k, const Shape& shape, DType dt) {
  if (!force_composed && k.concrete() && k.batch().empty() && dt == DType::Float32) {
    // The bits, the uniform, erf_inv and the scale fused (three full-array passes apart).
    Array out = jx::detail::empty_array(shape, dt, false);
    cpu::threefry_normal_f32(*jx::detail::data<uint32_t>(k.k0), *jx::detail::data<uint32_t>(k.k1),
                             shape.numel(), std::nextafter(-1.0f, 0.0f), 1.0f, partitionable(),
                             jx::detail::data<float>(out));
    return out;
  }
  const size_t r = k.batch().size() + shape.size();
  Array lo = nextafter_const(-1.0, 0.0, dt);
  Array u = uniform_keys(k, shape, dt, lo, const_f(1.0, dt));
  return lax::mul(const_f(M_SQRT2, dt, r), lax::erf_inv(u));
}

Array exponential_keys(const Keys& k, const Shape& shape, DType dt) {
  Array u = uniform_keys(k, shape, dt, const_f(0.0, dt), const_f(1.0, dt));
  return lax::neg(lax::log1p(lax::neg(u)));
}

Array gumbel_keys(const Keys& k, const Shape& shape, DType dt, const std::string& mode) {
  const FInfo fi = finfo(dt);
  if (mode == "low") {
    Array u = uniform_keys(k, shape, dt, const_f(fi.tiny, dt), const_f(1.0, dt));
    return lax::neg(lax::log(lax::neg(lax::log(u))));
  }
  if (mode != "high")
    throw ValueError(str("[gumbel] mode must be \"low\" or \"high\", got \"", mode, "\""));
  // Two uniforms per value: (high, low) = uniform(key, (2, *shape)).
  const size_t br = k.batch().size();
  Array hl = uniform_keys(k, concat(Shape{2}, shape), dt, const_f(0.0, dt), const_f(1.0, dt));
  const Shape out = concat(k.batch(), shape);
  Array high = lax::reshape(lax::slice_in_dim(hl, 0, 1, 1, int64_t(br)), out);
  Array low = lax::reshape(lax::slice_in_dim(hl, 1, 2, 1, int64_t(br)), out);
  const size_t r = out.size();
  Array x = lax::select(lax::ge(high, const_f(0.5, dt, r)), high,
                        lax::add(lax::add(high, lax::mul(const_f(std::ldexp(1.0, -fi.nmant), dt, r), low)),
                                 const_f(fi.tiny, dt, r)));
  return lax::neg(lax::log(lax::neg(lax::log1p(lax::neg(x)))));
}

}  // namespace detail

using detail::const_f;
using detail::Keys;

namespace {

Keys key_of(const char* fn, const Array& key) { return detail::unpack(fn, key); }

void check_sample(const char* fn, const Shape& shape, DType dt) {
  detail::check_shape(fn, shape);
  detail::require_float(fn, dt);
}

// A parameter converted to dtype and broadcast to (1,)*k + its shape for `shape`.
Array param(const char* fn, const Array& p, DType dt, const Shape& shape) {
  return detail::to_rank(fn, lax::convert_element_type(p, dt), shape.size());
}

}  // namespace

Array uniform(const Array& key, const Shape& shape, DType dtype, const Array& minval,
              const Array& maxval) {
  Keys k = key_of("uniform", key);
  detail::KeyUse use("uniform", key);
  check_sample("uniform", shape, dtype);
  detail::check_broadcast("uniform", shape, minval.shape(), maxval.shape());
  return detail::uniform_keys(k, shape, dtype, minval, maxval);
}

Array normal(const Array& key, const Shape& shape, DType dtype) {
  Keys k = key_of("normal", key);
  detail::KeyUse use("normal", key);
  check_sample("normal", shape, dtype);
  return detail::normal_keys(k, shape, dtype);
}

Array truncated_normal(const Array& key, const Array& lower, const Array& upper,
                       OptionalShape shape_opt, DType dtype) {
  Keys k = key_of("truncated_normal", key);
  detail::KeyUse use("truncated_normal", key);
  detail::require_float("truncated_normal", dtype);
  Shape shape;
  if (shape_opt) {
    shape = *shape_opt;
    detail::check_shape("truncated_normal", shape);
    detail::check_broadcast("truncated_normal", shape, lower.shape(), upper.shape());
  } else {
    shape = detail::broadcast_all("truncated_normal", lower.shape(), upper.shape());
  }
  const size_t r = shape.size();
  Array lo = param("truncated_normal", lower, dtype, shape);
  Array hi = param("truncated_normal", upper, dtype, shape);
  Array sqrt2 = const_f(M_SQRT2, dtype, r);
  Array a = lax::erf(lax::div(lo, sqrt2));
  Array b = lax::erf(lax::div(hi, sqrt2));
  Array u = detail::uniform_keys(k, shape, dtype, a, b);
  Array out = lax::mul(sqrt2, lax::erf_inv(u));
  // Clamp to the open interval (lower, upper): jnp.clip is max then min.
  const double inf = INFINITY;
  Array lo_open = lax::nextafter(lo, const_f(inf, dtype, r));
  Array hi_open = lax::nextafter(hi, const_f(-inf, dtype, r));
  return lax::min(hi_open, lax::max(lo_open, out));
}

Array bernoulli(const Array& key, const Array& p, OptionalShape shape_opt,
                const std::string& mode) {
  if (mode != "low" && mode != "high")
    throw ValueError(str("[bernoulli] got mode=\"", mode, "\", expected \"high\" or \"low\""));
  Keys k = key_of("bernoulli", key);
  detail::KeyUse use("bernoulli", key);
  if (!is_floating(p.dtype()))
    throw DTypeError(str("[bernoulli] probability `p` must have a floating dtype, got ",
                         type_str(p.dtype(), p.shape()), "; pass e.g. 0.5 or a float array"));
  const DType dt = p.dtype();
  Shape shape;
  if (shape_opt) {
    shape = *shape_opt;
    detail::check_shape("bernoulli", shape);
    detail::check_broadcast("bernoulli", shape, p.shape());
  } else {
    shape = p.shape();
  }
  Array pp = detail::to_rank("bernoulli", lax::convert_element_type(p, dt), shape.size());
  if (mode == "low") {
    Array u = detail::uniform_keys(k, shape, dt, const_f(0.0, dt), const_f(1.0, dt));
    return lax::lt(u, pp);
  }
  Array uu = detail::uniform_keys(k, detail::concat(Shape{2}, shape), dt, const_f(0.0, dt),
                                  const_f(1.0, dt));
  Array u1 = lax::reshape(lax::slice_in_dim(uu, 0, 1, 1, 0), shape);
  Array u2 = lax::reshape(lax::slice_in_dim(uu, 1, 2, 1, 0), shape);
  u2 = lax::mul(u2, const_f(std::ldexp(1.0, -finfo(dt).nmant), dt, shape.size()));
  return lax::lt(u2, lax::sub(pp, u1));
}

Array gumbel(const Array& key, const Shape& shape, DType dtype, const std::string& mode) {
  Keys k = key_of("gumbel", key);
  detail::KeyUse use("gumbel", key);
  check_sample("gumbel", shape, dtype);
  return detail::gumbel_keys(k, shape, dtype, mode);
}

Array exponential(const Array& key, const Shape& shape, DType dtype) {
  Keys k = key_of("exponential", key);
  detail::KeyUse use("exponential", key);
  check_sample("exponential", shape, dtype);
  return detail::exponential_keys(k, shape, dtype);
}

Array laplace(const Array& key, const Shape& shape, DType dtype) {
  Keys k = key_of("laplace", key);
  detail::KeyUse use("laplace", key);
  check_sample("laplace", shape, dtype);
  Array u = detail::uniform_keys(k, shape, dtype, const_f(-1.0 + finfo(dtype).epsneg, dtype),
                                 const_f(1.0, dtype));
  return lax::mul(lax::sign(u), lax::log1p(lax::neg(lax::abs(u))));
}

Array logistic(const Array& key, const Shape& shape, DType dtype) {
  Keys k = key_of("logistic", key);
  detail::KeyUse use("logistic", key);
  check_sample("logistic", shape, dtype);
  Array x = detail::uniform_keys(k, shape, dtype, const_f(finfo(dtype).tiny, dtype),
                                 const_f(1.0, dtype));
  return lax::sub(lax::log(x), lax::log1p(lax::neg(x)));
}

Array cauchy(const Array& key, const Shape& shape, DType dtype) {
  Keys k = key_of("cauchy", key);
  detail::KeyUse use("cauchy", key);
  check_sample("cauchy", shape, dtype);
  Array u = detail::uniform_keys(k, shape, dtype, const_f(finfo(dtype).eps, dtype),
                                 const_f(1.0, dtype));
  const size_t r = shape.size();
  return lax::tan(lax::mul(const_f(M_PI, dtype, r), lax::sub(u, const_f(0.5, dtype, r))));
}

Array pareto(const Array& key, const Array& b, OptionalShape shape_opt, DType dtype) {
  Keys k = key_of("pareto", key);
  detail::KeyUse use("pareto", key);
  detail::require_float("pareto", dtype);
  Shape shape = shape_opt ? *shape_opt : b.shape();
  detail::check_shape("pareto", shape);
  detail::check_broadcast("pareto", shape, b.shape());
  Array e = detail::exponential_keys(k, shape, dtype);
  return lax::exp(lax::div(e, param("pareto", b, dtype, shape)));
}

Array weibull_min(const Array& key, const Array& scale, const Array& concentration,
                  const Shape& shape, DType dtype) {
  Keys k = key_of("weibull_min", key);
  detail::KeyUse use("weibull_min", key);
  check_sample("weibull_min", shape, dtype);
  detail::check_broadcast("weibull_min", shape, scale.shape(), concentration.shape());
  const size_t r = shape.size();
  Array u = detail::uniform_keys(k, shape, dtype, const_f(0.0, dtype), const_f(1.0, dtype));
  Array c = param("weibull_min", concentration, dtype, shape);
  Array s = param("weibull_min", scale, dtype, shape);
  return lax::mul(lax::pow(lax::neg(lax::log1p(lax::neg(u))), lax::div(const_f(1.0, dtype, r), c)),
                  s);
}

Array maxwell(const Array& key, const Shape& shape, DType dtype) {
  Keys k = key_of("maxwell", key);
  detail::KeyUse use("maxwell", key);
  check_sample("maxwell", shape, dtype);
  Array z = detail::normal_keys(k, detail::concat(shape, Shape{3}), dtype);
  return lax::sqrt(lax::reduce_sum(lax::mul(z, z), {int64_t(shape.size())}));
}

Array rademacher(const Array& key, const Shape& shape, DType dtype) {
  Keys k = key_of("rademacher", key);
  detail::KeyUse use("rademacher", key);
  detail::check_shape("rademacher", shape);
  Array b = lax::lt(detail::uniform_keys(k, shape, DType::Float32, const_f(0.0, DType::Float32),
                                         const_f(1.0, DType::Float32)),
                    const_f(0.5, DType::Float32, shape.size()));
  const size_t r = shape.size();
  Array v = lax::sub(lax::mul(detail::const_i(2, dtype, r), lax::convert_element_type(b, dtype)),
                     detail::const_i(1, dtype, r));
  return v;
}

}  // namespace jx::random
