// Optax's classification (except ctc, in losses_ctc.cpp), regression and smoothing losses
// (optax/losses/_classification.py, _regression.py, _smoothing.py), formula for formula, so
// that values, dtypes and derivatives agree with Optax's, including its custom_jvp for
// safe_softmax_cross_entropy.
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "jx/custom_derivatives.h"
#include "jx/error.h"
#include "jx/nn/functions.h"
#include "jx/numpy.h"
#include "jx/optim/losses.h"
#include "jx/transforms.h"
#include "optim/losses_common.h"
#include "support/str.h"

namespace jx::optim {

namespace jnp = jx::numpy;
using detail::describe;
using detail::normalize_axes;
using detail::require_broadcastable;
using detail::require_floating;
using detail::require_integer;
using detail::require_same_shape;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

jnp::ReduceOptions masked(const std::optional<Array>& where, bool keepdims = false) {
  jnp::ReduceOptions o;
  o.keepdims = keepdims;
  o.where = where;
  return o;
}

// Optax: `if where is not None and where.ndim != logits.ndim: where = expand_dims(where, axis)`,
// so a batch-shaped mask selects whole examples.
std::optional<Array> where_like(const std::optional<Array>& where, const Array& x,
                                const std::vector<int64_t>& axes) {
  if (!where || where->ndim() == x.ndim()) return where;
  return jnp::expand_dims(*where, axes);
}

// jax.nn.log_softmax(x, axis, where): the max and the sum run over the selected entries
// only, and the others are -inf.
Array masked_log_softmax(const Array& x, const std::vector<int64_t>& axes, const Array& where) {
  jnp::ReduceOptions max_opts = masked(where, true);
  max_opts.initial = Array(-kInf);
  Array x_max = jnp::max(x, axes, max_opts);
  Array shifted = jnp::where(where, x, -kInf) - jx::stop_gradient(x_max);
  Array shifted_logsumexp = jnp::log(jnp::sum(jnp::exp(shifted), axes, masked(where, true)));
  return jnp::where(where, shifted - shifted_logsumexp, -kInf);
}

// Optax's weighted_logsoftmax: w * log_softmax(x) with 0 where w == 0, and a custom_jvp whose
// tangent never multiplies a -inf log-probability by the zero x-tangent.
Array weighted_log_softmax_value(const Array& x, const Array& w) {
  Array log_softmax = nn::log_softmax(x, -1);
  return jnp::where(w != 0.0, w * log_softmax, jnp::zeros_like(log_softmax));
}
const auto weighted_log_softmax = jx::custom_jvp(weighted_log_softmax_value).defjvp(
    [](const std::tuple<Array, Array>& primals, const std::tuple<Array, Array>& tangents) {
      const auto& [x, w] = primals;
      const auto& [x_dot, w_dot] = tangents;
      Array log_softmax = nn::log_softmax(x, -1);
      Array result = jnp::where(w != 0.0, w * log_softmax, jnp::zeros_like(log_softmax));
      Array out_tangent = w * x_dot -
                          w * jnp::sum(x_dot * nn::softmax(x, -1), -1, true) +
                          w_dot * log_softmax;
      return std::pair(result, out_tangent);
    });

std::optional<Array> errors_of(const char* fn, const Array& predictions,
                               const std::optional<Array>& targets) {
  require_floating(fn, "predictions", predictions);
  if (!targets) return std::nullopt;
  require_broadcastable(fn, "predictions", predictions, "targets", *targets);
  return predictions - *targets;
}

}  // namespace

// ---- classification ----

Array softmax_cross_entropy(const Array& logits, const Array& labels, Axes axis,
                            const std::optional<Array>& where) {
  const char* fn = "softmax_cross_entropy";
  require_floating(fn, "logits", logits);
  require_broadcastable(fn, "logits", logits, "labels", labels);
  const std::vector<int64_t> axes = normalize_axes(fn, logits, axis);
  std::optional<Array> mask = where_like(where, logits, axes);
  Array log_probs = mask ? masked_log_softmax(logits, axes, *mask) : nn::log_softmax(logits, axes);
  return -jnp::sum(labels * log_probs, axes, masked(mask));
}

Array softmax_cross_entropy_with_integer_labels(const Array& logits, const Array& labels,
                                                Axes axis, const std::optional<Array>& where) {
  const char* fn = "softmax_cross_entropy_with_integer_labels";
  require_floating(fn, "logits", logits);
  require_integer(fn, "labels", labels);
  if (!axis.axes)
    throw ValueError(str("[optim.", fn, "] axis must be an axis or a list of axes, not "
                         "jx::none; the class axis of logits is usually -1"));
  const std::vector<int64_t> axes = normalize_axes(fn, logits, axis);
  if (axes.empty())
    throw ValueError(str("[optim.", fn, "] axis is an empty list; name the class axis of ",
                         describe(logits), ", usually -1"));
  Array x = logits;
  std::optional<Array> mask = where_like(where, logits, axes);
  int64_t class_axis = axes[0];
  if (axes.size() > 1) {
    // Move the class axes to the end, in the order given, and flatten them into one, so that
    // a label is a row-major flat index into logits[axes...] (as Optax).
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < x.ndim(); ++i)
      if (std::find(axes.begin(), axes.end(), i) == axes.end()) perm.push_back(i);
    class_axis = int64_t(perm.size());
    perm.insert(perm.end(), axes.begin(), axes.end());
    auto flatten_classes = [&](const Array& a) {
      Array t = jnp::transpose(a, perm);
      std::vector<int64_t> shape(t.shape().begin(), t.shape().begin() + class_axis);
      shape.push_back(-1);
      return t.reshape(Shape(shape));
    };
    x = flatten_classes(x);
    if (mask) mask = flatten_classes(jnp::broadcast_to(*mask, logits.shape()));
  }
  std::vector<int64_t> batch_shape(x.shape().begin(), x.shape().end());
  batch_shape.erase(batch_shape.begin() + class_axis);
  if (labels.shape() != Shape(batch_shape))
    throw ShapeError(str("[optim.", fn, "] labels ", describe(labels), " do not match logits ",
                         describe(logits), " with class axis ", list_str(axes),
                         ": labels must have logits' shape without the class axis, ",
                         type_str(labels.dtype(), Shape(batch_shape)),
                         "; one class id per example"));
  // Only the label's logit is gathered; the normalizer is not subtracted from every class.
  Array label_logits =
      jnp::squeeze(jnp::take_along_axis(x, jnp::expand_dims(labels, class_axis), class_axis),
                   class_axis);
  std::optional<Array> weights;
  if (mask) weights = mask->astype(x.dtype());  // logsumexp's b == 0 drops an entry, as where
  Array log_normalizers = nn::logsumexp(x, class_axis, false, weights);
  Array out = log_normalizers - label_logits;
  if (mask) out = jnp::where(jnp::any(*mask, class_axis), out, 0.0);
  return out;
}

Array safe_softmax_cross_entropy(const Array& logits, const Array& labels) {
  const char* fn = "safe_softmax_cross_entropy";
  require_floating(fn, "logits", logits);
  require_broadcastable(fn, "logits", logits, "labels", labels);
  if (logits.ndim() == 0)
    throw ValueError(str("[optim.", fn, "] logits ", describe(logits),
                         " is 0-d; it needs a class axis (the last one)"));
  return -jnp::sum(weighted_log_softmax(logits, labels), -1);
}

Array sigmoid_binary_cross_entropy(const Array& logits, const Array& labels) {
  const char* fn = "sigmoid_binary_cross_entropy";
  require_floating(fn, "logits", logits);
  require_broadcastable(fn, "logits", logits, "labels", labels);
  Array y = labels.astype(logits.dtype());
  // log(1 - sigmoid(x)) is log_sigmoid(-x): no cancellation for large x.
  return -y * nn::log_sigmoid(logits) - (1.0 - y) * nn::log_sigmoid(-logits);
}

Array sigmoid_focal_loss(const Array& logits, const Array& labels,
                         const std::optional<Array>& alpha, const Array& gamma) {
  const char* fn = "sigmoid_focal_loss";
  require_floating(fn, "logits", logits);
  require_broadcastable(fn, "logits", logits, "labels", labels);
  Array y = labels.astype(logits.dtype());
  Array ce_loss = sigmoid_binary_cross_entropy(logits, y);
  // log(1 - p_t) = log((1 - y) p + y (1 - p)), as a weighted logsumexp of the two log
  // probabilities, so that (1 - p_t)^gamma neither underflows to log(0) nor loses digits.
  std::vector<Array> b = jnp::broadcast_arrays(
      {nn::log_sigmoid(logits), nn::log_sigmoid(-logits), y});  // log p, log (1 - p), y
  Array weights = jnp::stack({1 - b[2], b[2]}, -1);
  // The entry of weight 0 (a hard label) is set to -inf first, as jax.scipy's logsumexp does
  // inside: jx's logsumexp rule would otherwise multiply that weight 0 by exp(log p - log q),
  // which overflows for a confident, correct logit (a NaN gradient at logits of 1e2 and up).
  Array log_probs = jnp::where(weights != 0, jnp::stack({b[0], b[1]}, -1), -kInf);
  Array log_one_minus_p_t = nn::logsumexp(log_probs, -1, false, weights);
  Array loss = ce_loss * jnp::exp(gamma * log_one_minus_p_t);
  if (!alpha) return loss;
  const Array a = detail::weak_as(*alpha, loss);
  return (a * y + (1.0 - a) * (1.0 - y)) * loss;
}

Array hinge_loss(const Array& predictor_outputs, const Array& targets) {
  require_broadcastable("hinge_loss", "predictor_outputs", predictor_outputs, "targets", targets);
  return jnp::maximum(0, 1 - predictor_outputs * targets);
}

Array kl_divergence(const Array& log_predictions, const Array& targets, Axes axis,
                    const std::optional<Array>& where) {
  const char* fn = "kl_divergence";
  require_floating(fn, "log_predictions", log_predictions);
  require_floating(fn, "targets", targets);
  require_broadcastable(fn, "log_predictions", log_predictions, "targets", targets);
  // 0 log 0 = 0: a zero target contributes nothing.
  Array loss = targets * (jnp::where(targets == 0, 0, jnp::log(targets)) - log_predictions);
  return jnp::sum(loss, normalize_axes(fn, loss, axis), masked(where));
}

Array kl_divergence_with_log_targets(const Array& log_predictions, const Array& log_targets,
                                     Axes axis, const std::optional<Array>& where) {
  const char* fn = "kl_divergence_with_log_targets";
  require_floating(fn, "log_predictions", log_predictions);
  require_floating(fn, "log_targets", log_targets);
  require_broadcastable(fn, "log_predictions", log_predictions, "log_targets", log_targets);
  Array loss = jnp::exp(log_targets) * (log_targets - log_predictions);
  return jnp::sum(loss, normalize_axes(fn, loss, axis), masked(where));
}

// ---- regression ----

Array squared_error(const Array& predictions, const std::optional<Array>& targets) {
  const char* fn = "squared_error";
  require_floating(fn, "predictions", predictions);
  if (targets) require_same_shape(fn, "predictions", predictions, "targets", *targets);
  Array errors = targets ? predictions - *targets : predictions;
  return jnp::square(errors);
}

Array l2_loss(const Array& predictions, const std::optional<Array>& targets) {
  const char* fn = "l2_loss";
  require_floating(fn, "predictions", predictions);
  if (targets) require_same_shape(fn, "predictions", predictions, "targets", *targets);
  return 0.5 * squared_error(predictions, targets);
}

Array huber_loss(const Array& predictions, const std::optional<Array>& targets,
                 const Array& delta) {
  Array errors = errors_of("huber_loss", predictions, targets).value_or(predictions);
  Array abs_errors = jnp::abs(errors);
  Array quadratic = jnp::minimum(abs_errors, delta);
  // |e| - min(|e|, delta) rather than max(|e| - delta, 0): one kink, not a doubled gradient.
  Array linear = abs_errors - quadratic;
  return 0.5 * jnp::square(quadratic) + delta * linear;
}

Array log_cosh(const Array& predictions, const std::optional<Array>& targets) {
  Array errors = errors_of("log_cosh", predictions, targets).value_or(predictions);
  // log(cosh(e)) = log(exp(e) + exp(-e)) - log(2), which cannot overflow.
  return jnp::logaddexp(errors, -errors) - std::log(2.0);
}

Array cosine_similarity(const Array& predictions, const Array& targets, const Array& epsilon,
                        Axes axis, const std::optional<Array>& where) {
  const char* fn = "cosine_similarity";
  require_floating(fn, "predictions", predictions);
  require_floating(fn, "targets", targets);
  require_broadcastable(fn, "predictions", predictions, "targets", targets);
  const std::vector<int64_t> a_axes = normalize_axes(fn, predictions, axis);
  const std::vector<int64_t> b_axes = normalize_axes(fn, targets, axis);
  // epsilon bounds the squared norms (not the norms, nor their product as in PyTorch).
  Array a_norm = jnp::sqrt(jnp::clip(
      jnp::sum(jnp::square(predictions), a_axes, masked(where, true)), epsilon));
  Array b_norm =
      jnp::sqrt(jnp::clip(jnp::sum(jnp::square(targets), b_axes, masked(where, true)), epsilon));
  Array product = (predictions / a_norm) * (targets / b_norm);
  return jnp::sum(product, normalize_axes(fn, product, axis), masked(where));
}

Array cosine_distance(const Array& predictions, const Array& targets, const Array& epsilon,
                      Axes axis, const std::optional<Array>& where) {
  return 1.0 - cosine_similarity(predictions, targets, epsilon, std::move(axis), where);
}

// ---- smoothing ----

Array smooth_labels(const Array& labels, const Array& alpha, Axes axis,
                    const std::optional<Array>& where) {
  const char* fn = "smooth_labels";
  require_floating(fn, "labels", labels);
  const std::vector<int64_t> axes = normalize_axes(fn, labels, axis);
  const Array a = detail::weak_as(alpha, labels);
  if (where) {
    Array num_categories = jnp::sum(*where, axes, true);
    return (1.0 - a) * labels + a / num_categories;
  }
  int64_t num_categories = 1;
  for (int64_t ax : axes) num_categories *= labels.shape()[size_t(ax)];
  return (1.0 - a) * labels + a / num_categories;
}

}  // namespace jx::optim
