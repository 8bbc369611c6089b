// jnp elementwise math, comparison and logic (jax/_src/numpy/ufuncs.py). Every function
// applies JAX's promotion (weak C++ scalars keep the array's dtype) and NumPy broadcasting.
// Functions that need an inexact result (divide, sqrt, exp, ...) promote integers and bools
// to float32.
#pragma once
#include <optional>
#include <string>
#include <utility>

#include "jx/array.h"

namespace jx::numpy {

using jx::Array;

// ---- arithmetic ----
Array add(const Array& x, const Array& y);       // bool: logical or
Array subtract(const Array& x, const Array& y);
Array multiply(const Array& x, const Array& y);  // bool: logical and
Array divide(const Array& x, const Array& y);    // true division
Array true_divide(const Array& x, const Array& y);
Array floor_divide(const Array& x, const Array& y);  // Python's //: rounds toward -inf
Array remainder(const Array& x, const Array& y);     // Python's %: sign of y; x % 0 == 0 for ints
Array mod(const Array& x, const Array& y);
Array fmod(const Array& x, const Array& y);  // C's fmod: sign of x; x fmod 0 == 0 for ints
// (floor_divide(x, y), remainder(x, y)).
std::pair<Array, Array> divmod(const Array& x, const Array& y);
// A C++ integer exponent (power(x, 3): a weak int scalar) uses exact repeated
// multiplication (lax.integer_pow), as jnp does for a Python int exponent.
Array power(const Array& x, const Array& y);
Array float_power(const Array& x, const Array& y);
Array negative(const Array& x);
Array positive(const Array& x);
Array abs(const Array& x);
Array absolute(const Array& x);
Array sign(const Array& x);
Array square(const Array& x);
Array reciprocal(const Array& x);
Array maximum(const Array& x, const Array& y);  // NaN propagates
Array minimum(const Array& x, const Array& y);
Array fmax(const Array& x, const Array& y);  // NaN ignored
Array fmin(const Array& x, const Array& y);
Array heaviside(const Array& x1, const Array& x2);
Array copysign(const Array& x1, const Array& x2);
// The float's parts, exact at subnormals, infinities and NaNs as NumPy's (math_float_parts.cpp):
// frexp: (mantissa in [0.5, 1) with x's sign, int32 exponent), x = mantissa * 2^exponent.
std::pair<Array, Array> frexp(const Array& x);
// x1 * 2^x2 for an integer array x2, rounded once; differentiable in x1.
Array ldexp(const Array& x1, const Array& x2);
// (fractional part, integral part), both with x's sign.
std::pair<Array, Array> modf(const Array& x);
Array signbit(const Array& x);

// ---- complex numbers (math_complex.cpp; docs/complex.md) ----
// real/imag/conj of a real array: the array itself, zeros, the array itself (as jnp).
Array real(const Array& x);
Array imag(const Array& x);
Array conj(const Array& x);
Array conjugate(const Array& x);
// The argument atan2(imag, real), in radians (degrees with deg); integers give float32.
Array angle(const Array& z, bool deg = false);
Array iscomplex(const Array& x);  // elementwise: imag != 0 (false for real dtypes)
Array isreal(const Array& x);     // elementwise: imag == 0 (true for real dtypes)
bool iscomplexobj(const Array& x);  // the dtype is complex
bool isrealobj(const Array& x);

// ---- exponents, logarithms, powers ----
Array exp(const Array& x);
Array exp2(const Array& x);
Array expm1(const Array& x);
Array log(const Array& x);
Array log2(const Array& x);
Array log10(const Array& x);
Array log1p(const Array& x);
Array logaddexp(const Array& x1, const Array& x2);
Array logaddexp2(const Array& x1, const Array& x2);
Array sqrt(const Array& x);
Array cbrt(const Array& x);
Array hypot(const Array& x1, const Array& x2);

// ---- trigonometric and hyperbolic ----
Array sin(const Array& x);
Array cos(const Array& x);
Array tan(const Array& x);
Array arcsin(const Array& x);
Array arccos(const Array& x);
Array arctan(const Array& x);
Array arctan2(const Array& x1, const Array& x2);
Array sinh(const Array& x);
Array cosh(const Array& x);
Array tanh(const Array& x);
Array arcsinh(const Array& x);
Array arccosh(const Array& x);
Array arctanh(const Array& x);
Array deg2rad(const Array& x);
Array rad2deg(const Array& x);
Array degrees(const Array& x);
Array radians(const Array& x);
Array sinc(const Array& x);  // sin(pi x) / (pi x), 1 at 0

// ---- rounding ----
Array floor(const Array& x);  // integers and bools are returned unchanged
Array ceil(const Array& x);
Array trunc(const Array& x);
Array fix(const Array& x);
Array rint(const Array& x);  // half to even; integers become float32
// Half to even at `decimals` digits (negative: tens, hundreds, ...); integers unchanged.
Array round(const Array& x, int decimals = 0);
Array around(const Array& x, int decimals = 0);
// min/max may be std::nullopt (no bound); bounds take part in promotion, as in jnp.
Array clip(const Array& x, const std::optional<Array>& min = std::nullopt,
           const std::optional<Array>& max = std::nullopt);

// ---- floating-point classification ----
Array isnan(const Array& x);
Array isinf(const Array& x);
Array isfinite(const Array& x);
Array isposinf(const Array& x);
Array isneginf(const Array& x);
// NaN -> nan, +inf -> posinf (default: the dtype's max), -inf -> neginf (default: lowest).
Array nan_to_num(const Array& x, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                 std::optional<double> neginf = std::nullopt);

// ---- convolution (1-D, as numpy; jx::lax::conv_general_dilated for the rest) ----
// mode "full" (default), "same" or "valid"; ints promote to float.
Array convolve(const Array& a, const Array& v, const std::string& mode = "full");
// mode "valid" (default), "same" or "full".
Array correlate(const Array& a, const Array& v, const std::string& mode = "valid");

// ---- comparison ----
Array equal(const Array& x, const Array& y);
Array not_equal(const Array& x, const Array& y);
Array less(const Array& x, const Array& y);
Array less_equal(const Array& x, const Array& y);
Array greater(const Array& x, const Array& y);
Array greater_equal(const Array& x, const Array& y);
// |a - b| <= atol + rtol * |b|, elementwise; inf == inf; NaN only with equal_nan.
Array isclose(const Array& a, const Array& b, double rtol = 1e-05, double atol = 1e-08,
              bool equal_nan = false);
// 0-d bool arrays, as in JAX (use bool(...) or .item<bool>() for a C++ bool).
Array allclose(const Array& a, const Array& b, double rtol = 1e-05, double atol = 1e-08,
               bool equal_nan = false);
Array array_equal(const Array& a, const Array& b, bool equal_nan = false);
Array array_equiv(const Array& a, const Array& b);

// ---- logic and bits ----
Array logical_and(const Array& x, const Array& y);
Array logical_or(const Array& x, const Array& y);
Array logical_xor(const Array& x, const Array& y);
Array logical_not(const Array& x);
Array bitwise_and(const Array& x, const Array& y);
Array bitwise_or(const Array& x, const Array& y);
Array bitwise_xor(const Array& x, const Array& y);
Array bitwise_not(const Array& x);
Array invert(const Array& x);
Array left_shift(const Array& x, const Array& y);
Array right_shift(const Array& x, const Array& y);  // arithmetic for signed, logical for unsigned

}  // namespace jx::numpy
