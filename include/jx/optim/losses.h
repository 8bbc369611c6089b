// jx::optim losses: Optax's (optax/losses/_classification.py, _regression.py, _smoothing.py;
// optax.<name> and optax.losses.<name>), with the same formulas, defaults and argument
// order. They return per-example values; the caller reduces them, usually with jnp::mean:
//
//   Array loss = jnp::mean(optim::softmax_cross_entropy_with_integer_labels(logits, labels));
//   Array mse = jnp::mean(optim::squared_error(predictions, targets));
//
// Every loss is built from jnp / jax.nn ops, so it differentiates, batches (vmap) and
// traces (jit), and is stable for logits of any magnitude (1e4 gives finite values and
// gradients). Optax's keyword-only arguments (delta, alpha, gamma, epsilon, blank_id, ...)
// come after the positional ones, in Optax's order. docs/optim_schedules_losses.md gives each
// formula and how PyTorch's counterpart differs.
#pragma once
#include <cstdint>
#include <optional>

#include "jx/array.h"

namespace jx::optim {

using jx::Array;
using jx::Axes;

// ---- classification ----

// -sum(labels * log_softmax(logits, axis), axis). labels are probabilities (e.g. one-hot)
// broadcastable to logits. `where` (logits' shape, or the batch shape) leaves classes or
// examples out. Shape [batch] for logits [batch, classes].
Array softmax_cross_entropy(const Array& logits, const Array& labels, Axes axis = -1,
                            const std::optional<Array>& where = std::nullopt);

// logsumexp(logits, axis) - logits[label]: the cross entropy with integer class ids.
// labels has logits' shape without `axis`. With several axes, a label is a flat (row-major)
// index into the slice logits[axis...]. An out-of-range label gives NaN (take_along_axis's
// fill), as in Optax. `where` as for softmax_cross_entropy; fully masked rows give 0.
Array softmax_cross_entropy_with_integer_labels(const Array& logits, const Array& labels,
                                                Axes axis = -1,
                                                const std::optional<Array>& where = std::nullopt);

// softmax_cross_entropy over the last axis, with 0 * log 0 = 0: a -inf logit whose label is 0
// contributes 0 (not NaN) to the loss and to the gradient (Optax's weighted_logsoftmax,
// a custom_jvp).
Array safe_softmax_cross_entropy(const Array& logits, const Array& labels);

// -labels * log_sigmoid(logits) - (1 - labels) * log_sigmoid(-logits), elementwise; labels
// in [0, 1] are cast to logits' dtype.
Array sigmoid_binary_cross_entropy(const Array& logits, const Array& labels);

// sigmoid_binary_cross_entropy * (1 - p_t)^gamma, (1 - p_t) computed in log space; with
// alpha, times alpha * labels + (1 - alpha) * (1 - labels).
Array sigmoid_focal_loss(const Array& logits, const Array& labels,
                         const std::optional<Array>& alpha = std::nullopt,
                         const Array& gamma = 2.0);

// max(0, 1 - predictor_outputs * targets), targets in {-1, 1}.
Array hinge_loss(const Array& predictor_outputs, const Array& targets);

// sum(targets * (log(targets) - log_predictions), axis), with 0 log 0 = 0.
Array kl_divergence(const Array& log_predictions, const Array& targets, Axes axis = -1,
                    const std::optional<Array>& where = std::nullopt);
// sum(exp(log_targets) * (log_targets - log_predictions), axis).
Array kl_divergence_with_log_targets(const Array& log_predictions, const Array& log_targets,
                                     Axes axis = -1,
                                     const std::optional<Array>& where = std::nullopt);

// CTC loss (Graves et al. 2006) of each sequence, computed as Optax does: a scan over time
// of the forward variables in log space, log(0) approximated by log_epsilon.
//   logits [B, T, K] (K classes, blank included), logit_paddings [B, T] (1 = padded frame),
//   labels [B, N] integers, label_paddings [B, N] (1 = padded label; right-padded only).
// Returns [B]: -log p(labels | logits).
Array ctc_loss(const Array& logits, const Array& logit_paddings, const Array& labels,
               const Array& label_paddings, int64_t blank_id = 0, double log_epsilon = -1e5);

// ctc_loss and its forward variables: log alpha of ending at time t in the blank after n
// labels (logalpha_blank, [T, B, N + 1]) and in label n (logalpha_nonblank, [T, B, N]).
struct CtcForwardProbs {
  Array loss;
  Array logalpha_blank;
  Array logalpha_nonblank;
};
CtcForwardProbs ctc_loss_with_forward_probs(const Array& logits, const Array& logit_paddings,
                                            const Array& labels, const Array& label_paddings,
                                            int64_t blank_id = 0, double log_epsilon = -1e5);

// ---- regression ----

// (predictions - targets)^2, elementwise; targets (same shape, not broadcast, as in Optax)
// default to zeros. MSE is jnp::mean(squared_error(p, t)).
Array squared_error(const Array& predictions, const std::optional<Array>& targets = std::nullopt);
// 0.5 * squared_error.
Array l2_loss(const Array& predictions, const std::optional<Array>& targets = std::nullopt);
// 0.5 q^2 + delta (|e| - q) with e = predictions - targets, q = min(|e|, delta).
Array huber_loss(const Array& predictions, const std::optional<Array>& targets = std::nullopt,
                 const Array& delta = 1.0);
// log(cosh(e)) = logaddexp(e, -e) - log(2), without overflow for large |e|.
Array log_cosh(const Array& predictions, const std::optional<Array>& targets = std::nullopt);

// sum(a / sqrt(max(|a|^2, epsilon)) * b / sqrt(max(|b|^2, epsilon)), axis): epsilon bounds
// the squared norms from below.
Array cosine_similarity(const Array& predictions, const Array& targets,
                        const Array& epsilon = 0.0, Axes axis = -1,
                        const std::optional<Array>& where = std::nullopt);
// 1 - cosine_similarity.
Array cosine_distance(const Array& predictions, const Array& targets, const Array& epsilon = 0.0,
                      Axes axis = -1, const std::optional<Array>& where = std::nullopt);

// ---- smoothing ----

// (1 - alpha) * labels + alpha / num_categories, num_categories = the size of `axis` (or the
// number of true entries of `where` along it).
Array smooth_labels(const Array& labels, const Array& alpha, Axes axis = -1,
                    const std::optional<Array>& where = std::nullopt);

}  // namespace jx::optim
