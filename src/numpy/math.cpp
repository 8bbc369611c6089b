// jnp elementwise math, following jax/_src/numpy/ufuncs.py function by function.
#include <cmath>

#include "core/array_impl.h"
#include "jx/custom_derivatives.h"
#include "jx/numpy.h"
#include "numpy/promote.h"
#include "support/str.h"

namespace jx::numpy {

namespace {

using detail::binary;
using detail::binary_inexact;

bool is_bool(const Array& x) { return x.dtype() == DType::Bool; }
bool is_int(const Array& x) { return is_integer(x.dtype()); }
bool is_float(const Array& x) { return is_floating(x.dtype()); }

// promote_args_numeric: JAX promotion, then bool -> int32 (strong).
std::vector<Array> promote_numeric(std::vector<Array> xs) {
  xs = detail::promote(std::move(xs));
  for (auto& x : xs)
    if (is_bool(x)) x = lax::convert_element_type(x, DType::Int32, false);
  return xs;
}

std::vector<Array> broadcast_ranks(std::vector<Array> xs) {
  return detail::equalize_ranks(std::move(xs));
}

Array inexact1(const Array& x) { return detail::promote_inexact({x})[0]; }

// A 0-d constant with x's dtype and weak type, expanded to x's rank (free: no broadcast).
Array const_like(const Array& x, double v) {
  Array c = lax::convert_element_type(scalar(v, x.dtype()), x.dtype(), x.weak_type());
  return detail::expand_to_rank(c, size_t(x.ndim()));
}

Array full_bool(const Array& x, bool v) { return full(x.shape(), Array(v)); }

// lax.select with NumPy rank broadcasting; x and y already share a dtype.
Array where_(const Array& c, const Array& x, const Array& y) {
  auto v = broadcast_ranks({c, x, y});
  return lax::select(v[0], v[1], v[2]);
}

Array to_bool(const Array& x) { return is_bool(x) ? x : lax::ne(x, const_like(x, 0)); }

void require_int_or_bool(const char* op, const Array& x) {
  if (is_floating(x.dtype()))
    throw DTypeError(str("[", op, "] needs integer or bool operands, got ",
                         type_str(x.dtype(), x.shape()),
                         "; convert with astype, or use the logical_* functions"));
}

void require_int(const char* op, const Array& x) {
  if (!is_int(x))
    throw DTypeError(str("[", op, "] needs integer operands, got ", type_str(x.dtype(), x.shape()),
                         "; convert with astype to an integer dtype"));
}

// Python-style floor division and modulo for floats (CPython's float_divmod).
std::pair<Array, Array> float_divmod(const Array& x1, const Array& x2) {
  Array mod = lax::rem(x1, x2);
  Array div = lax::div(lax::sub(x1, mod), x2);
  Array zero = const_like(mod, 0);
  Array ind = lax::bitwise_and(lax::ne(mod, zero), lax::ne(lax::sign(x2), lax::sign(mod)));
  mod = lax::select(ind, lax::add(mod, x2), mod);
  div = lax::select(ind, lax::sub(div, const_like(div, 1)), div);
  return {lax::round(div), mod};  // lax.round's default: half away from zero
}

// jnp's integer ** integer: 6 rounds of binary exponentiation (larger exponents overflow
// any base > 1 anyway), starting from 0 for 0 ** y with y != 0.
Array pow_int_int(Array x1, Array x2) {
  Array zero = const_like(x2, 0), one = const_like(x2, 1);
  Array acc = lax::select(lax::bitwise_and(lax::eq(x1, zero), lax::ne(x2, zero)), zero, one);
  for (int i = 0; i < 6; ++i) {
    acc = lax::select(lax::ne(lax::bitwise_and(x2, one), zero), lax::mul(acc, x1), acc);
    x1 = lax::mul(x1, x1);
    x2 = lax::shift_right_logical(x2, one);
  }
  return acc;
}

// A C++ integer (a weak int 0-d array) plays Python's int: jnp.power's "concrete integer
// scalar exponent" case. Typed (strong) 0-d arrays take the array path, as jax.Arrays do.
bool is_concrete_int_scalar(const Array& y) {
  return y.valid() && y.is_concrete() && y.ndim() == 0 && is_integer(y.dtype()) && y.weak_type();
}

}  // namespace

// ---- arithmetic ----
Array add(const Array& x, const Array& y) {
  return binary("add", [](const Array& a, const Array& b) {
    return is_bool(a) ? lax::bitwise_or(a, b) : lax::add(a, b);
  }, x, y);
}
Array subtract(const Array& x, const Array& y) { return binary("subtract", lax::sub, x, y); }
Array multiply(const Array& x, const Array& y) {
  return binary("multiply", [](const Array& a, const Array& b) {
    return is_bool(a) ? lax::bitwise_and(a, b) : lax::mul(a, b);
  }, x, y);
}
Array true_divide(const Array& x, const Array& y) { return binary_inexact("true_divide", lax::div, x, y); }
Array divide(const Array& x, const Array& y) { return true_divide(x, y); }

Array floor_divide(const Array& x, const Array& y) {
  auto v = broadcast_ranks(promote_numeric({x, y}));
  const Array &a = v[0], &b = v[1];
  if (is_unsigned_integer(a.dtype())) return lax::div(a, b);
  if (is_int(a)) {
    Array q = lax::div(a, b);
    Array sel = lax::bitwise_and(lax::ne(lax::sign(a), lax::sign(b)),
                                 lax::ne(lax::rem(a, b), const_like(a, 0)));
    return lax::select(sel, lax::sub(q, const_like(q, 1)), q);
  }
  return float_divmod(a, b).first;
}

Array remainder(const Array& x, const Array& y) {
  auto v = broadcast_ranks(promote_numeric({x, y}));
  Array a = v[0], b = v[1];
  Array zero = const_like(a, 0);
  if (is_int(b)) b = lax::select(lax::eq(b, const_like(b, 0)), const_like(b, 1), b);
  Array trunc_mod = lax::rem(a, b);
  Array not_zero = lax::ne(trunc_mod, zero);
  Array do_plus = lax::bitwise_and(lax::ne(lax::lt(trunc_mod, zero), lax::lt(b, const_like(b, 0))),
                                   not_zero);
  return lax::select(do_plus, lax::add(trunc_mod, b), trunc_mod);
}
Array mod(const Array& x, const Array& y) { return remainder(x, y); }

Array fmod(const Array& x, const Array& y) {
  auto v = broadcast_ranks(promote_numeric({x, y}));
  Array a = v[0], b = v[1];
  if (is_int(b)) b = lax::select(lax::eq(b, const_like(b, 0)), const_like(b, 1), b);
  return lax::rem(a, b);
}

Array power(const Array& x, const Array& y) {
  // Case 1: a C++ integer exponent, as a Python int in jnp.
  if (is_concrete_int_scalar(y)) {
    Array b = promote_numeric({x})[0];
    return lax::integer_pow(b, y.item<int64_t>());
  }
  auto s = broadcast_ranks({x, y});
  auto v = promote_numeric({s[0], s[1]});
  // Case 2: integer result: binary exponentiation.
  if (is_int(v[0])) return pow_int_int(v[0], v[1]);
  // Case 3: float base, integer exponent: the base keeps its dtype.
  if (is_float(s[0]) && (is_int(s[1]) || is_bool(s[1]))) {
    Array e = lax::convert_element_type(s[1], s[0].dtype(), s[0].weak_type());
    return lax::pow(s[0], e);
  }
  return lax::pow(v[0], v[1]);
}

Array float_power(const Array& x, const Array& y) { return binary_inexact("float_power", lax::pow, x, y); }

Array negative(const Array& x) { return lax::neg(x); }
Array positive(const Array& x) { return x; }
Array absolute(const Array& x) {
  if (is_bool(x) || is_unsigned_integer(x.dtype())) return x;
  return lax::abs(x);
}
Array abs(const Array& x) { return absolute(x); }
Array sign(const Array& x) { return lax::sign(x); }
Array square(const Array& x) { return lax::integer_pow(promote_numeric({x})[0], 2); }
Array reciprocal(const Array& x) { return lax::integer_pow(inexact1(x), -1); }
Array maximum(const Array& x, const Array& y) { return binary("maximum", lax::max, x, y); }
Array minimum(const Array& x, const Array& y) { return binary("minimum", lax::min, x, y); }

// JAX's where(greater(x1, x2) | isnan(x2), x1, x2): jnp's comparison, so complex operands
// order lexicographically, and isnan is true for a NaN in either part.
Array fmax(const Array& x, const Array& y) {
  auto v = broadcast_ranks(detail::promote({x, y}));
  return lax::select(lax::bitwise_or(greater(v[0], v[1]), isnan(v[1])), v[0], v[1]);
}
Array fmin(const Array& x, const Array& y) {
  auto v = broadcast_ranks(detail::promote({x, y}));
  return lax::select(lax::bitwise_or(less(v[0], v[1]), isnan(v[1])), v[0], v[1]);
}

Array heaviside(const Array& x1, const Array& x2) {
  auto v = broadcast_ranks(detail::promote_inexact({x1, x2}));
  Array zero = const_like(v[0], 0);
  return where_(lax::lt(v[0], zero), zero, where_(lax::gt(v[0], zero), const_like(v[0], 1), v[1]));
}

Array signbit(const Array& x) {
  if (is_int(x)) return lax::lt(x, const_like(x, 0));
  if (is_bool(x)) return full_bool(x, false);
  DType it = itemsize(x.dtype()) == 2 ? DType::Int16
             : itemsize(x.dtype()) == 4 ? DType::Int32 : DType::Int64;
  Array bits = lax::bitcast_convert_type(x, it);
  return lax::lt(bits, const_like(bits, 0));
}

Array copysign(const Array& x1, const Array& x2) {
  auto v = broadcast_ranks(detail::promote_inexact({x1, x2}));
  Array a = lax::abs(v[0]);
  return where_(signbit(v[1]), lax::neg(a), a);
}

// ---- exponents and logarithms ----
Array exp(const Array& x) { return lax::exp(inexact1(x)); }
Array exp2(const Array& x) { return lax::exp2(inexact1(x)); }
Array expm1(const Array& x) { return lax::expm1(inexact1(x)); }
Array log(const Array& x) { return lax::log(inexact1(x)); }
Array log1p(const Array& x) { return lax::log1p(inexact1(x)); }
Array log2(const Array& x) {
  Array v = inexact1(x);
  return lax::div(lax::log(v), lax::log(const_like(v, 2)));
}
Array log10(const Array& x) {
  Array v = inexact1(x);
  return lax::div(lax::log(v), lax::log(const_like(v, 10)));
}
Array sqrt(const Array& x) { return lax::sqrt(inexact1(x)); }
Array cbrt(const Array& x) { return lax::cbrt(inexact1(x)); }

namespace {

Array logaddexp_value(const Array& x1, const Array& x2) {
  Array amax = lax::max(x1, x2);
  Array delta = lax::sub(x1, x2);
  // NaN delta: NaN operands or infinities of the same sign, where x1 + x2 is right.
  return lax::select(lax::ne(delta, delta), lax::add(x1, x2),
                     lax::add(amax, lax::log1p(lax::exp(lax::neg(lax::abs(delta))))));
}

Array logaddexp2_value(const Array& x1, const Array& x2) {
  Array amax = lax::max(x1, x2);
  Array delta = lax::sub(x1, x2);
  Array ln2 = const_like(x1, M_LN2);
  return lax::select(lax::ne(delta, delta), lax::add(x1, x2),
                     lax::add(amax, lax::div(lax::log1p(lax::exp2(lax::neg(lax::abs(delta)))), ln2)));
}

// JAX's _replace_inf: +inf becomes 0, so that exp(x - out) is exp(0) = 1 rather than NaN
// when an argument and the result are both +inf.
Array replace_posinf(const Array& x) {
  return lax::select(lax::eq(x, const_like(x, INFINITY)), const_like(x, 0.0), x);
}

}  // namespace

// As JAX, a custom_jvp: d/dx1 = exp(x1 - out), d/dx2 = exp(x2 - out), which is 1/2 each
// where x1 == x2 (differentiating the max-based body would give 1 and 0, or 0 and 0).
Array logaddexp(const Array& x1, const Array& x2) {
  static const auto with_rule = jx::custom_jvp(logaddexp_value).defjvp(
      [](const std::tuple<Array, Array>& primals, const std::tuple<Array, Array>& tangents) {
        const auto& [a, b] = primals;
        const auto& [ta, tb] = tangents;
        Array out = logaddexp_value(a, b);
        Array r = replace_posinf(out);
        return std::pair(out, lax::add(lax::mul(ta, lax::exp(lax::sub(replace_posinf(a), r))),
                                       lax::mul(tb, lax::exp(lax::sub(replace_posinf(b), r)))));
      });
  auto v = broadcast_ranks(detail::promote_inexact({x1, x2}));
  return with_rule(v[0], v[1]);
}

// d/dx1 = 2^(x1 - out), d/dx2 = 2^(x2 - out) (JAX's custom_jvp of logaddexp2).
Array logaddexp2(const Array& x1, const Array& x2) {
  static const auto with_rule = jx::custom_jvp(logaddexp2_value).defjvp(
      [](const std::tuple<Array, Array>& primals, const std::tuple<Array, Array>& tangents) {
        const auto& [a, b] = primals;
        const auto& [ta, tb] = tangents;
        Array out = logaddexp2_value(a, b);
        Array r = replace_posinf(out);
        return std::pair(out, lax::add(lax::mul(ta, lax::exp2(lax::sub(replace_posinf(a), r))),
                                       lax::mul(tb, lax::exp2(lax::sub(replace_posinf(b), r)))));
      });
  auto v = broadcast_ranks(detail::promote_inexact({x1, x2}));
  return with_rule(v[0], v[1]);
}

Array hypot(const Array& x1, const Array& x2) {
  auto v = broadcast_ranks(detail::promote_inexact({x1, x2}));
  Array a = lax::abs(v[0]), b = lax::abs(v[1]);
  Array inf = const_like(a, INFINITY);
  Array idx_inf = lax::bitwise_or(lax::eq(a, inf), lax::eq(b, inf));
  Array hi = lax::max(a, b), lo = lax::min(a, b);
  Array zero = const_like(hi, 0);
  Array hi_is_zero = lax::eq(hi, zero);
  Array safe = lax::select(hi_is_zero, const_like(hi, 1), hi);
  Array r = lax::mul(hi, lax::sqrt(lax::add(const_like(hi, 1), lax::square(lax::div(lo, safe)))));
  r = lax::select(hi_is_zero, hi, r);
  return where_(idx_inf, inf, r);
}

// ---- trigonometric and hyperbolic ----
Array sin(const Array& x) { return lax::sin(inexact1(x)); }
Array cos(const Array& x) { return lax::cos(inexact1(x)); }
Array tan(const Array& x) { return lax::tan(inexact1(x)); }
Array arcsin(const Array& x) { return lax::asin(inexact1(x)); }
Array arccos(const Array& x) { return lax::acos(inexact1(x)); }
Array arctan(const Array& x) { return lax::atan(inexact1(x)); }
Array arctan2(const Array& x1, const Array& x2) { return binary_inexact("arctan2", lax::atan2, x1, x2); }
Array sinh(const Array& x) { return lax::sinh(inexact1(x)); }
Array cosh(const Array& x) { return lax::cosh(inexact1(x)); }
Array tanh(const Array& x) { return lax::tanh(inexact1(x)); }
Array arcsinh(const Array& x) { return lax::asinh(inexact1(x)); }
Array arccosh(const Array& x) { return lax::acosh(inexact1(x)); }
Array arctanh(const Array& x) { return lax::atanh(inexact1(x)); }
Array deg2rad(const Array& x) {
  Array v = inexact1(x);
  return lax::mul(v, const_like(v, M_PI / 180));
}
Array rad2deg(const Array& x) {
  Array v = inexact1(x);
  return lax::mul(v, const_like(v, 180 / M_PI));
}
Array degrees(const Array& x) { return rad2deg(x); }
Array radians(const Array& x) { return deg2rad(x); }

Array sinc(const Array& x) {
  Array v = inexact1(x);
  Array eq_zero = lax::eq(v, const_like(v, 0));
  Array pi_x = lax::mul(const_like(v, M_PI), v);
  Array safe = lax::select(eq_zero, const_like(v, 1), pi_x);
  return lax::select(eq_zero, const_like(v, 1), lax::div(lax::sin(safe), safe));
}

// ---- rounding ----
Array floor(const Array& x) {
  if (!is_float(x)) return x;
  return lax::floor(x);
}
Array ceil(const Array& x) {
  if (!is_float(x)) return x;
  return lax::ceil(x);
}
Array trunc(const Array& x) {
  if (!is_float(x)) return x;
  return lax::select(lax::lt(x, const_like(x, 0)), lax::ceil(x), lax::floor(x));
}
Array fix(const Array& x) {
  if (!is_float(x)) return x;
  return lax::select(lax::ge(x, const_like(x, 0)), lax::floor(x), lax::ceil(x));
}
Array rint(const Array& x) {
  if (!is_float(x)) return lax::convert_element_type(x, default_float(), false);
  return lax::round(x, lax::RoundingMethod::to_nearest_even);
}

Array round(const Array& x, int decimals) {
  if (!is_float(x)) {
    if (decimals < 0 && is_int(x))
      throw ValueError(str("[round] integer round with decimals < 0 (", decimals,
                           ") is not implemented, as in jnp; convert to float first"));
    return x;
  }
  if (decimals == 0) return lax::round(x, lax::RoundingMethod::to_nearest_even);
  // Scale, round, unscale (jnp's strategy); float16 goes through float32 for range.
  bool f16 = x.dtype() == DType::Float16;
  Array v = f16 ? lax::convert_element_type(x, DType::Float32, x.weak_type()) : x;
  Array factor = const_like(v, std::pow(10.0, decimals));
  Array out = lax::div(lax::round(lax::mul(v, factor), lax::RoundingMethod::to_nearest_even), factor);
  return f16 ? lax::convert_element_type(out, DType::Float16, x.weak_type()) : out;
}
Array around(const Array& x, int decimals) { return round(x, decimals); }

Array clip(const Array& x, const std::optional<Array>& min, const std::optional<Array>& max) {
  // JAX's clip rejects complex values although maximum/minimum order them.
  if (is_complex(x.dtype()) || (min && is_complex(min->dtype())) || (max && is_complex(max->dtype())))
    throw ValueError("[clip] received a complex value either through the input or the min/max "
                     "arguments. Complex values have no ordering and cannot be clipped; clip "
                     "jnp::real(x) or jnp::imag(x) instead");
  Array r = x;
  if (min) r = maximum(*min, r);
  if (max) r = minimum(*max, r);
  return r;
}

// ---- classification ----
Array isnan(const Array& x) { return lax::ne(x, x); }
Array isinf(const Array& x) {
  if (is_complex(x.dtype())) return logical_or(isinf(lax::real(x)), isinf(lax::imag(x)));
  if (!is_float(x)) return full_bool(x, false);
  return lax::eq(lax::abs(x), const_like(x, INFINITY));
}
Array isfinite(const Array& x) {
  if (!is_inexact(x.dtype())) return full_bool(x, true);
  return lax::is_finite(x);
}
Array isposinf(const Array& x) {
  if (!is_float(x)) return full_bool(x, false);
  return lax::eq(x, const_like(x, INFINITY));
}
Array isneginf(const Array& x) {
  if (!is_float(x)) return full_bool(x, false);
  return lax::eq(x, const_like(x, -INFINITY));
}

Array nan_to_num(const Array& x, double nan, std::optional<double> posinf,
                 std::optional<double> neginf) {
  if (!is_float(x)) return x;
  FInfo info = finfo(x.dtype());
  auto fill = [&](const Array& cond, double v, const Array& cur) {
    return lax::select(cond, const_like(cur, v), cur);
  };
  Array out = fill(isnan(x), nan, x);
  out = fill(isposinf(out), posinf.value_or(info.max), out);
  out = fill(isneginf(out), neginf.value_or(info.min), out);
  return out;
}

// ---- comparison ----
Array equal(const Array& x, const Array& y) { return binary("equal", lax::eq, x, y); }
Array not_equal(const Array& x, const Array& y) { return binary("not_equal", lax::ne, x, y); }
namespace {
// jnp's _complex_comparison (jax/_src/numpy/ufuncs.py): lax's ordered comparisons take real
// operands only, so complex ones compare the real parts, or the imaginary parts where the
// real parts are equal. A NaN real part compares false; a NaN imaginary part only matters
// where the real parts are equal (NumPy's comparison is false whenever either part is NaN).
Array complex_comparison(detail::LaxBinary op, const Array& x, const Array& y) {
  if (!is_complex(x.dtype())) return op(x, y);
  Array xr = lax::real(x), yr = lax::real(y);
  return lax::select(lax::eq(xr, yr), op(lax::imag(x), lax::imag(y)), op(xr, yr));
}
Array lt_(const Array& x, const Array& y) { return complex_comparison(lax::lt, x, y); }
Array le_(const Array& x, const Array& y) { return complex_comparison(lax::le, x, y); }
Array gt_(const Array& x, const Array& y) { return complex_comparison(lax::gt, x, y); }
Array ge_(const Array& x, const Array& y) { return complex_comparison(lax::ge, x, y); }
}  // namespace

Array less(const Array& x, const Array& y) { return binary("less", lt_, x, y); }
Array less_equal(const Array& x, const Array& y) { return binary("less_equal", le_, x, y); }
Array greater(const Array& x, const Array& y) { return binary("greater", gt_, x, y); }
Array greater_equal(const Array& x, const Array& y) { return binary("greater_equal", ge_, x, y); }

Array isclose(const Array& a_, const Array& b_, double rtol, double atol, bool equal_nan) {
  detail::broadcast_shapes("isclose", {a_.shape(), b_.shape()});  // names isclose, not sub
  auto v = broadcast_ranks(detail::promote_inexact({a_, b_}));
  const Array &a = v[0], &b = v[1];
  Array rt = const_like(a, rtol), at = const_like(a, atol);
  Array out = lax::le(lax::abs(lax::sub(a, b)), lax::add(at, lax::mul(rt, lax::abs(b))));
  Array a_inf = isinf(a), b_inf = isinf(b);
  out = lax::bitwise_and(out, lax::bitwise_not(lax::bitwise_or(a_inf, b_inf)));
  out = lax::bitwise_or(out, lax::bitwise_and(lax::bitwise_and(a_inf, b_inf), lax::eq(a, b)));
  Array a_nan = isnan(a), b_nan = isnan(b);
  out = lax::bitwise_and(out, lax::bitwise_not(lax::bitwise_or(a_nan, b_nan)));
  if (equal_nan) out = lax::bitwise_or(out, lax::bitwise_and(a_nan, b_nan));
  return out;
}

Array allclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan) {
  return all(isclose(a, b, rtol, atol, equal_nan));
}

Array array_equal(const Array& a, const Array& b, bool equal_nan) {
  if (a.shape() != b.shape()) return Array(false);
  Array eq = equal(a, b);
  if (equal_nan) eq = lax::bitwise_or(eq, lax::bitwise_and(isnan(a), isnan(b)));
  return all(eq);
}

Array array_equiv(const Array& a, const Array& b) {
  try {
    detail::broadcast_shapes("array_equiv", {a.shape(), b.shape()});
  } catch (const ShapeError&) {
    return Array(false);
  }
  return all(equal(a, b));
}

// ---- logic and bits ----
Array logical_and(const Array& x, const Array& y) {
  auto v = broadcast_ranks(detail::promote({x, y}));
  return lax::bitwise_and(to_bool(v[0]), to_bool(v[1]));
}
Array logical_or(const Array& x, const Array& y) {
  auto v = broadcast_ranks(detail::promote({x, y}));
  return lax::bitwise_or(to_bool(v[0]), to_bool(v[1]));
}
Array logical_xor(const Array& x, const Array& y) {
  auto v = broadcast_ranks(detail::promote({x, y}));
  return lax::bitwise_xor(to_bool(v[0]), to_bool(v[1]));
}
Array logical_not(const Array& x) { return lax::bitwise_not(to_bool(x)); }

Array bitwise_and(const Array& x, const Array& y) {
  auto v = broadcast_ranks(detail::promote({x, y}));
  require_int_or_bool("bitwise_and", v[0]);
  return lax::bitwise_and(v[0], v[1]);
}
Array bitwise_or(const Array& x, const Array& y) {
  auto v = broadcast_ranks(detail::promote({x, y}));
  require_int_or_bool("bitwise_or", v[0]);
  return lax::bitwise_or(v[0], v[1]);
}
Array bitwise_xor(const Array& x, const Array& y) {
  auto v = broadcast_ranks(detail::promote({x, y}));
  require_int_or_bool("bitwise_xor", v[0]);
  return lax::bitwise_xor(v[0], v[1]);
}
Array bitwise_not(const Array& x) {
  require_int_or_bool("bitwise_not", x);
  return lax::bitwise_not(x);
}
Array invert(const Array& x) {
  require_int_or_bool("invert", x);
  return lax::bitwise_not(x);
}
Array left_shift(const Array& x, const Array& y) {
  auto v = broadcast_ranks(promote_numeric({x, y}));
  require_int("left_shift", v[0]);
  return lax::shift_left(v[0], v[1]);
}
Array right_shift(const Array& x, const Array& y) {
  auto v = broadcast_ranks(promote_numeric({x, y}));
  require_int("right_shift", v[0]);
  return is_unsigned_integer(v[0].dtype()) ? lax::shift_right_logical(v[0], v[1])
                                           : lax::shift_right_arithmetic(v[0], v[1]);
}

}  // namespace jx::numpy

// ---- Array methods declared in array.h ----
namespace jx {

Array Array::clip(const Array& lo, const Array& hi) const { return numpy::clip(*this, lo, hi); }
Array Array::round(int decimals) const { return numpy::round(*this, decimals); }

}  // namespace jx
