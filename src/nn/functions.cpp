// jax.nn's functions (jax/_src/nn/functions.py and jax/_src/ops/special.py for logsumexp),
// written with the same formulas so that values, dtypes and derivatives agree with JAX's.
// Where JAX attaches a custom_jvp (relu, relu6, softmax, logsumexp) so do we, with the
// same rule.
#include "jx/nn/functions.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <tuple>
#include <utility>
#include <vector>

#include "jx/custom_derivatives.h"
#include "jx/lax.h"
#include "jx/numpy.h"
#include "jx/transforms.h"
#include "numpy/promote.h"
#include "support/str.h"

namespace jx::nn {

namespace jnp = jx::numpy;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// jnp's promote_args_inexact: integers and bools become float32 (weak stays weak).
Array to_inexact(const Array& x) { return jnp::detail::promote_inexact({x})[0]; }

std::string describe(const Array& x) { return type_str(x.dtype(), x.shape()); }

// lax.logistic accepts only floating-point operands; say so in the caller's name.
void require_floating(const char* fn, const Array& x) {
  if (!is_floating(x.dtype()))
    throw DTypeError(str("[", fn, "] needs a floating-point input, got ", describe(x),
                         " (JAX's lax.logistic rejects it too); convert it first, e.g. nn::", fn,
                         "(x.astype(jx::float32))"));
}

void check_axis(const char* fn, const Array& x, int64_t axis, int64_t rank) {
  if (rank == 0)
    throw IndexError(str("[", fn, "] axis ", axis, " is out of bounds: ", describe(x),
                         " is 0-d and has no axes"));
  if (axis < -rank || axis >= rank)
    throw IndexError(str("[", fn, "] axis ", axis, " is out of bounds for ", describe(x),
                         " (rank ", rank, "); valid axes are ", -rank, "..", rank - 1));
}

// The reduction axes of `axis` for x, sorted and non-negative; jx::none means all axes.
std::vector<int64_t> reduction_axes(const char* fn, const Array& x, const Axes& axis) {
  const int64_t rank = x.ndim();
  std::vector<int64_t> out;
  if (!axis.axes) {
    for (int64_t i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : *axis.axes) {
    check_axis(fn, x, a, rank);
    const int64_t c = a < 0 ? a + rank : a;
    if (std::find(out.begin(), out.end(), c) != out.end())
      throw ValueError(str("[", fn, "] duplicate value in axis ", list_str(*axis.axes), " for ",
                           describe(x), "; list each axis once"));
    out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  return out;
}

jnp::ReduceOptions keepdims_from_minus_inf() {
  jnp::ReduceOptions o;
  o.keepdims = true;
  o.initial = Array(-kInf);  // as JAX: size-0 axes reduce to -inf instead of throwing
  return o;
}

// ---- custom_jvp functions whose rule needs no static arguments ----

// JAX: relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0))).
const auto relu_with_rule =
    jx::custom_jvp([](const Array& x) { return jnp::maximum(x, 0); })
        .defjvp([](const std::tuple<Array>& primals, const std::tuple<Array>& tangents) {
          const Array& x = std::get<0>(primals);
          const Array& g = std::get<0>(tangents);
          return std::pair(jnp::maximum(x, 0), lax::select(x > 0, g, jnp::zeros_like(g)));
        });

// JAX: relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0))).
Array relu6_value(const Array& x) { return jnp::minimum(jnp::maximum(x, 0), 6.0); }
const auto relu6_with_rule = jx::custom_jvp(relu6_value).defjvp(
    [](const std::tuple<Array>& primals, const std::tuple<Array>& tangents) {
      const Array& x = std::get<0>(primals);
      const Array& g = std::get<0>(tangents);
      return std::pair(relu6_value(x), lax::select((x > 0) & (x < 6), g, jnp::zeros_like(g)));
    });

// ---- softmax and logsumexp bodies (the primal functions of their custom_jvps) ----

// JAX's _softmax: no stop_gradient is needed, the custom_jvp rule replaces differentiation.
Array softmax_value(const Array& x, const std::vector<int64_t>& axes) {
  Array x_max = jnp::max(x, axes, keepdims_from_minus_inf());
  Array unnormalized = jnp::exp(x - x_max);
  return unnormalized / jnp::sum(unnormalized, axes, true);
}

// jax._src.ops.special.logsumexp with return_sign=False; `b` may be null.
Array logsumexp_value(Array a, const Array* b, const std::vector<int64_t>& dims, bool keepdims) {
  if (b) a = jnp::where(*b != 0, a, -kInf);
  jnp::ReduceOptions o = keepdims_from_minus_inf();
  o.keepdims = keepdims;
  Array amax = jnp::max(a, dims, o);
  // An all -inf (or +inf) slice would give inf - inf; shift by 0 there instead.
  amax = jx::stop_gradient(jnp::where(jnp::isfinite(amax), amax, jnp::zeros_like(amax)));
  Array amax_with_dims = keepdims ? amax : jnp::expand_dims(amax, dims);
  Array exp_a = jnp::exp(a - amax_with_dims.astype(a.dtype()));
  if (b) exp_a = exp_a * *b;
  Array sumexp = jnp::sum(exp_a, dims, keepdims);
  Array sign = jnp::sign(sumexp);
  Array out = jnp::log(jnp::abs(sumexp)) + amax.astype(sumexp.dtype());
  if (b) out = jnp::where(sign < 0, jnp::full_like(out, std::nan("")), out);
  return out;
}

}  // namespace

// ---- activations ----

Array relu(const Array& x) { return relu_with_rule(x); }

Array relu6(const Array& x) { return relu6_with_rule(x); }

Array sigmoid(const Array& x) {
  require_floating("sigmoid", x);
  return lax::logistic(x);
}

Array softplus(const Array& x) { return jnp::logaddexp(x, 0); }

Array log_sigmoid(const Array& x) { return -softplus(-x); }

Array soft_sign(const Array& x) { return x / (jnp::abs(x) + 1); }

Array silu(const Array& x) {
  require_floating("silu", x);
  return x * lax::logistic(x);
}

Array swish(const Array& x) {
  require_floating("swish", x);
  return x * lax::logistic(x);
}

Array mish(const Array& x) { return x * jnp::tanh(softplus(x)); }

Array squareplus(const Array& x, const Array& b) { return (x + jnp::sqrt(jnp::square(x) + b)) / 2; }

Array sparse_plus(const Array& x) {
  return jnp::where(x <= -1.0, 0.0, jnp::where(x >= 1.0, x, jnp::power(x + 1.0, 2) / 4));
}

Array sparse_sigmoid(const Array& x) { return 0.5 * jnp::clip(x + 1.0, 0.0, 2.0); }

Array gelu(const Array& x_in, bool approximate) {
  const Array x = to_inexact(x_in);
  const DType t = x.dtype();
  // JAX forms the constants as NumPy scalars of x's dtype (strong), from float64 values.
  if (approximate) {
    const Array sqrt_2_over_pi = jnp::scalar(std::sqrt(2.0 / std::numbers::pi), t);
    const Array cdf = 0.5 * (1.0 + jnp::tanh(sqrt_2_over_pi * (x + 0.044715 * jnp::power(x, 3))));
    return x * cdf;
  }
  const Array sqrt_half = jnp::scalar(std::sqrt(0.5), t);
  return (0.5 * x * lax::erfc(-x * sqrt_half)).astype(t);
}

Array elu(const Array& x, const Array& alpha) {
  // The inner where keeps expm1 away from large positive x, whose inf would poison the
  // gradient of the unselected branch.
  return jnp::where(x > 0, x, alpha * jnp::expm1(jnp::where(x > 0, 0.0, x)));
}

Array celu(const Array& x, const Array& alpha) {
  return jnp::maximum(x, 0.0) + alpha * jnp::expm1(jnp::minimum(x, 0.0) / alpha);
}

Array selu(const Array& x) {
  constexpr double alpha = 1.6732632423543772848170429916717;
  constexpr double scale = 1.0507009873554804934193349852946;
  return scale * elu(x, alpha);
}

Array leaky_relu(const Array& x, const Array& negative_slope) {
  return jnp::where(x >= 0, x, negative_slope * x);
}

Array hard_tanh(const Array& x) { return jnp::where(x > 1, 1, jnp::where(x < -1, -1, x)); }

Array hard_sigmoid(const Array& x) { return relu6(x + 3.0) / 6.0; }

Array hard_silu(const Array& x) { return x * hard_sigmoid(x); }

Array hard_swish(const Array& x) { return hard_silu(x); }

Array glu(const Array& x, int64_t axis) {
  check_axis("glu", x, axis, x.ndim());
  const int64_t size = x.shape(int(axis));
  if (size % 2 != 0)
    throw ValueError(str("[glu] axis ", axis, " of ", describe(x), " has odd size ", size,
                         "; glu splits it into two equal halves, so it must be even"));
  require_floating("glu", x);
  std::vector<Array> halves = jnp::split(x, 2, axis);
  return halves[0] * lax::logistic(halves[1]);
}

// ---- normalizations and reductions ----

Array softmax(const Array& x_in, Axes axis) {
  const Array x = to_inexact(x_in);
  const std::vector<int64_t> axes = reduction_axes("softmax", x, axis);
  auto rule = [axes](const std::tuple<Array>& primals, const std::tuple<Array>& tangents) {
    const Array& x = std::get<0>(primals);
    const Array& x_dot = std::get<0>(tangents);
    // Through softmax itself, so that higher derivatives use this rule again (as JAX).
    Array y = softmax(x, axes);
    return std::pair(y, y * (x_dot - jnp::sum(y * x_dot, axes, true)));
  };
  auto primal = [axes](const Array& x) { return softmax_value(x, axes); };
  return jx::custom_jvp(primal, rule)(x);
}

Array log_softmax(const Array& x_in, Axes axis) {
  const Array x = to_inexact(x_in);
  const std::vector<int64_t> axes = reduction_axes("log_softmax", x, axis);
  Array x_max = jnp::max(x, axes, keepdims_from_minus_inf());
  Array shifted = x - jx::stop_gradient(x_max);
  Array shifted_logsumexp = jnp::log(jnp::sum(jnp::exp(shifted), axes, true));
  return shifted - shifted_logsumexp;
}

Array logsumexp(const Array& a_in, Axes axis, bool keepdims, const std::optional<Array>& b_in) {
  if (b_in) jnp::detail::check_broadcast("logsumexp", a_in, *b_in);
  // With b, a and b are first broadcast together: the axes refer to the joint shape.
  std::vector<Array> promoted = b_in ? jnp::broadcast_arrays(jnp::detail::promote_inexact({a_in, *b_in}))
                                     : std::vector<Array>{to_inexact(a_in)};
  const Array& a = promoted[0];
  const std::vector<int64_t> dims = reduction_axes("logsumexp", a, axis);
  // The tangent rule of jax._src.ops.special: sum((b * a_dot + b_dot) exp(a - out)).
  auto tangent = [dims, keepdims](const Array& a, const Array& out, const Array& weighted_dot) {
    Array out_with_dims = keepdims ? out : jnp::expand_dims(out, dims);
    return jnp::sum(weighted_dot * jnp::exp(a - out_with_dims), dims, keepdims);
  };
  if (!b_in) {
    auto primal = [dims, keepdims](const Array& a) {
      return logsumexp_value(a, nullptr, dims, keepdims);
    };
    auto rule = [dims, keepdims, tangent](const std::tuple<Array>& p, const std::tuple<Array>& t) {
      const Array& a = std::get<0>(p);
      Array out = logsumexp(a, dims, keepdims);
      return std::pair(out, tangent(a, out, std::get<0>(t)));
    };
    return jx::custom_jvp(primal, rule)(a);
  }
  auto primal = [dims, keepdims](const Array& a, const Array& b) {
    return logsumexp_value(a, &b, dims, keepdims);
  };
  auto rule = [dims, keepdims, tangent](const std::tuple<Array, Array>& p,
                                        const std::tuple<Array, Array>& t) {
    const auto& [a, b] = p;
    const auto& [a_dot, b_dot] = t;
    Array out = logsumexp(a, dims, keepdims, b);
    return std::pair(out, tangent(a, out, b * a_dot + b_dot));
  };
  return jx::custom_jvp(primal, rule)(a, promoted[1]);
}

Array standardize(const Array& x, Axes axis, const std::optional<Array>& mean,
                  const std::optional<Array>& variance, const Array& epsilon) {
  const std::vector<int64_t> axes = reduction_axes("standardize", x, axis);
  const Array m = mean ? *mean : jnp::mean(x, axes, true);
  // JAX's choice: E[x^2] - E[x]^2 rather than jnp.var's E[(x - E[x])^2].
  const Array v = variance ? *variance : jnp::mean(jnp::square(x), axes, true) - jnp::square(m);
  jnp::detail::check_broadcast("standardize", x, m);
  jnp::detail::check_broadcast("standardize", x, v);
  return jnp::subtract(x, m) * lax::rsqrt(to_inexact(v + epsilon));
}

Array one_hot(const Array& x, int64_t num_classes, DType dtype, int64_t axis) {
  if (num_classes < 0)
    throw ValueError(str("[one_hot] num_classes must be >= 0, got ", num_classes, " for indices ",
                         describe(x)));
  if (x.dtype() == DType::Bool)
    throw DTypeError(str("[one_hot] indices must be integers, got ", describe(x),
                         "; convert them first, e.g. nn::one_hot(x.astype(jx::int32), ",
                         num_classes, ")"));
  const int64_t rank = x.ndim() + 1;  // the axis is counted in the result
  if (axis < -rank || axis >= rank)
    throw IndexError(str("[one_hot] axis ", axis, " is out of bounds for the result of rank ",
                         rank, " (indices ", describe(x), " plus the class axis); valid axes are ",
                         -rank, "..", rank - 1));
  const int64_t pos = axis < 0 ? axis + rank : axis;
  Shape classes_shape(size_t(rank), 1);
  classes_shape[size_t(pos)] = num_classes;
  // An index equal to no class (negative, or >= num_classes) matches nowhere: a zero row.
  const Array classes = lax::broadcasted_iota(x.dtype(), classes_shape, pos);
  return (jnp::expand_dims(x, pos) == classes).astype(dtype);
}

}  // namespace jx::nn
