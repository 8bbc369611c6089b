// jnp.frexp, ldexp, modf and divmod: a float's parts, through its bits where exactness
// needs them (as jax/_src/numpy/ufuncs.py), with NumPy's results at zeros, infinities,
// NaNs and subnormals.
#include <cmath>
#include <limits>

#include "jx/numpy.h"
#include "numpy/promote.h"
#include "support/str.h"

namespace jx::numpy {

namespace {

// The IEEE layout of a float type and the signed integer type of its width.
struct FloatBits {
  DType int_type;
  int64_t nmant, bias;  // mantissa bits, exponent bias
  int64_t mask;         // of the exponent field, unshifted
};

FloatBits bits_of(DType t) {
  if (t == DType::Float64) return {DType::Int64, 52, 1023, 0x7ff};
  return {DType::Int32, 23, 127, 0xff};  // float32 (narrower types compute in float32)
}

Array ic(int64_t v, DType t) { return array<int64_t>(std::vector<int64_t>{v}, Shape{}).astype(t); }

// Integers and bools become float32, as promote_dtypes_inexact; float16 and bfloat16
// compute in float32, where their values are exact, and return in their type.
Array as_inexact(const Array& x) {
  Array y = detail::promote_inexact({x})[0];
  return y.dtype() == DType::Float64 ? y : y.astype(DType::Float32);
}

// 2^e for integer e (of b.int_type) from the smallest subnormal exponent to the largest
// normal one, built from its bits.
Array pow2(const Array& e, DType t, const FloatBits& b) {
  const DType it = b.int_type;
  Array normal = left_shift(e + ic(b.bias, it), ic(b.nmant, it));
  Array subnormal = left_shift(ic(1, it), e + ic(b.bias - 1 + b.nmant, it));
  return lax::bitcast_convert_type(where(e >= ic(1 - b.bias, it), normal, subnormal), t);
}

}  // namespace

std::pair<Array, Array> frexp(const Array& x0) {
  Array x = as_inexact(x0);
  const DType t = x.dtype();
  const FloatBits b = bits_of(t);
  const DType it = b.int_type;
  // Subnormals are scaled into the normal range first.
  Array sub = abs(x) < full({}, Array(finfo(t).tiny), t);
  Array xs = where(sub, x * full({}, Array(std::ldexp(1.0, int(b.nmant))), t), x);
  Array e_adj = where(sub, ic(-b.nmant, it), ic(0, it));
  Array bits = lax::bitcast_convert_type(xs, it);
  Array exponent = bitwise_and(right_shift(bits, ic(b.nmant, it)), ic(b.mask, it)) +
                   ic(1 - b.bias, it) + e_adj;
  Array mbits = bitwise_or(bitwise_and(bits, ic(~(b.mask << b.nmant), it)),
                                ic((b.bias - 1) << b.nmant, it));
  Array mantissa = lax::bitcast_convert_type(mbits, t);
  Array special = isinf(x) | isnan(x) | (x == 0);
  Array out_t = x0.dtype() == DType::Float16 || x0.dtype() == DType::BFloat16 ? x0 : x;
  return {where(special, x, mantissa).astype(out_t.dtype()),
          where(special, ic(0, it), exponent).astype(DType::Int32)};
}

// x1 2^x2 as a product of x1 and powers of two, each exact, ordered so that at most the
// last one rounds (NumPy's exact result where JAX's x1 * 2.0**x2 under- or overflows), and
// differentiable in x1 like JAX's.
Array ldexp(const Array& x1, const Array& x2) {
  if (!is_integer(x2.dtype()))
    throw DTypeError(str("[ldexp] the exponent must be an integer array, got ",
                         type_str(x2.dtype(), x2.shape()), "; convert it with astype(int32)"));
  Array x = as_inexact(x1);
  const DType t = x.dtype();
  const FloatBits b = bits_of(t);
  const DType it = b.int_type;
  const int64_t lo = 2 - b.bias, sub_lo = 1 - b.bias - b.nmant;  // x = m 2^e is normal iff e >= lo
  auto clamp = [&](const Array& v, int64_t a, int64_t z) { return clip(v, ic(a, it), ic(z, it)); };
  // Clipped in int64 first, so that no exponent wraps; beyond +-4 bias the result is 0 or inf.
  Array n = clip(x2.astype(DType::Int64), ic(-4 * b.bias, DType::Int64), ic(4 * b.bias, DType::Int64)).astype(it);
  Array e = frexp(x).second.astype(it);
  // Growing: exact until it overflows to infinity.
  Array na = clamp(n, 0, b.bias);
  Array nb = clamp(n - na, 0, b.bias);
  Array nc = clamp(n - na - nb, 0, b.bias);
  Array up = x * pow2(na, t, b) * pow2(nb, t, b) * pow2(nc, t, b);
  // Shrinking: down to the smallest normal exponent exactly (in two steps, each a
  // representable power), then one rounding step into the subnormals. A subnormal x rounds
  // in its one step.
  Array normal = e >= ic(lo, it);
  Array n1 = where(normal, maximum(n, ic(lo, it) - e), clamp(n, sub_lo, 0));
  Array p = -floor_divide(-n1, ic(2, it)), q = n1 - p;  // n1 <= 0, so p and q >= -bias
  Array n2 = where(normal, clamp(n - n1, sub_lo, 0), ic(0, it));
  Array down = x * pow2(p, t, b) * pow2(q, t, b) * pow2(n2, t, b);
  Array special = isinf(x) | isnan(x) | (x == 0);
  Array out = where(special, x, where(n >= ic(0, it), up, down));
  return x1.dtype() == DType::Float16 || x1.dtype() == DType::BFloat16 ? out.astype(x1.dtype()) : out;
}

std::pair<Array, Array> modf(const Array& x0) {
  Array x = detail::promote_inexact({x0})[0];
  Array whole = where(x >= 0, floor(x), ceil(x));
  // NumPy's fractional part of +-inf is +-0, and every fractional part has x's sign.
  Array frac = copysign(where(isinf(x), zeros({}, x.dtype()), x - whole), x);
  return {frac, whole};
}

std::pair<Array, Array> divmod(const Array& x1, const Array& x2) {
  return {floor_divide(x1, x2), remainder(x1, x2)};
}

}  // namespace jx::numpy
