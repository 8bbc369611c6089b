// jx::nn activation and normalization functions: jax.nn's (jax/_src/nn/functions.py), with
// the same formulas, defaults, dtypes and derivatives. docs/nn_functions.md lists them.
//
//   Array h = nn::relu(x);                     // derivative 0 at x == 0, as JAX
//   Array p = nn::softmax(logits);             // over the last axis; axis = {1, 2} or jx::none
//   Array y = nn::one_hot(labels, 10);         // float32 [..., 10]; out-of-range rows are 0
//
// Dtypes follow JAX: a C++ scalar argument (alpha, negative_slope, epsilon) is weak and
// keeps x's dtype; functions whose formula divides or takes exp/log (softplus, elu, gelu,
// softmax, ...) turn integer inputs into float32, as jnp does; relu and hard_tanh keep
// integers; sigmoid, silu and glu reject integers, as lax.logistic does in JAX.
#pragma once
#include <cstdint>
#include <optional>

#include "jx/array.h"

namespace jx::nn {

using jx::Array;
using jx::Axes;
using jx::DType;

// ---- activations (elementwise) ----

// max(x, 0). A custom_jvp: the derivative is 0 at x == 0 (JAX's choice; jnp.maximum's
// own rule would give 0.5 there).
Array relu(const Array& x);
// min(max(x, 0), 6). A custom_jvp: the derivative is 0 at x == 0 and at x == 6.
Array relu6(const Array& x);
// 1 / (1 + exp(-x)) (lax.logistic).
Array sigmoid(const Array& x);
// log(sigmoid(x)) = -softplus(-x), without overflow for large |x|.
Array log_sigmoid(const Array& x);
// log(1 + exp(x)) = logaddexp(x, 0).
Array softplus(const Array& x);
// x / (|x| + 1).
Array soft_sign(const Array& x);
// x * sigmoid(x); swish is the same function.
Array silu(const Array& x);
Array swish(const Array& x);
// x * tanh(softplus(x)).
Array mish(const Array& x);
// (x + sqrt(x^2 + b)) / 2.
Array squareplus(const Array& x, const Array& b = 4.0);
// 0 for x <= -1, (x + 1)^2 / 4 in between, x for x >= 1.
Array sparse_plus(const Array& x);
// clip(x + 1, 0, 2) / 2: the derivative of sparse_plus.
Array sparse_sigmoid(const Array& x);
// approximate (JAX's default): x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)));
// exact: x/2 erfc(-x / sqrt(2)).
Array gelu(const Array& x, bool approximate = true);
// x for x > 0, alpha (exp(x) - 1) otherwise.
Array elu(const Array& x, const Array& alpha = 1.0);
// max(x, 0) + alpha (exp(min(x, 0) / alpha) - 1).
Array celu(const Array& x, const Array& alpha = 1.0);
// scale * elu(x, alpha) with the self-normalizing constants (lambda 1.0507..., alpha 1.6732...).
Array selu(const Array& x);
// x for x >= 0, negative_slope * x otherwise.
Array leaky_relu(const Array& x, const Array& negative_slope = 0.01);
// clip(x, -1, 1).
Array hard_tanh(const Array& x);
// relu6(x + 3) / 6.
Array hard_sigmoid(const Array& x);
// x * hard_sigmoid(x); hard_swish is the same function.
Array hard_silu(const Array& x);
Array hard_swish(const Array& x);
// Splits x in two halves along `axis` (its size must be even) and returns a * sigmoid(b).
Array glu(const Array& x, int64_t axis = -1);

// ---- normalizations and reductions ----

// exp(x - max) / sum(exp(x - max)) over `axis` (an int, a list, or jx::none for all axes).
// A custom_jvp as JAX's (jax_softmax_custom_jvp): the tangent is y * (t - sum(y * t)).
Array softmax(const Array& x, Axes axis = -1);
// x - max - log(sum(exp(x - max))) over `axis`, the max held out of differentiation
// (stop_gradient), as JAX.
Array log_softmax(const Array& x, Axes axis = -1);
// log(sum(b * exp(a))) over `axis` (jx::none: all axes), computed around the max so that it
// neither overflows nor underflows. With b, entries where b == 0 are left out and a
// negative sum gives NaN (JAX's return_sign=False). A custom_jvp, as jax.nn.logsumexp.
Array logsumexp(const Array& a, Axes axis = none, bool keepdims = false,
                const std::optional<Array>& b = std::nullopt);
// (x - mean) / sqrt(variance + epsilon) over `axis`. When not given, mean = mean(x) and
// variance = mean(x^2) - mean(x)^2 (JAX's formula, not jnp.var's).
Array standardize(const Array& x, Axes axis = -1, const std::optional<Array>& mean = std::nullopt,
                  const std::optional<Array>& variance = std::nullopt,
                  const Array& epsilon = 1e-5);
// One-hot encoding along a new axis `axis` (counted in the result, so -1 is last) of size
// num_classes. Indices outside [0, num_classes), negative ones included, give all-zero
// rows, as in JAX. x should be an integer array (JAX also accepts floats, with a warning).
Array one_hot(const Array& x, int64_t num_classes, DType dtype = DType::Float32,
              int64_t axis = -1);

}  // namespace jx::nn
