// Optax's CTC loss (optax/losses/_classification.py, ctc_loss_with_forward_probs): the
// forward (alpha) recursion of Graves et al. 2006 as a lax::scan over time, in log space,
// with log(0) replaced by a finite log_epsilon so that gradients stay finite. The states
// after n labels are split in two: "phi" (in the blank after label n, n = 0..N) and "emit"
// (in label n, n = 1..N); padded frames carry the state over unchanged.
#include <utility>
#include <vector>

#include "jx/control_flow.h"
#include "jx/error.h"
#include "jx/nn/functions.h"
#include "jx/numpy.h"
#include "jx/optim/losses.h"
#include "optim/losses_common.h"
#include "support/str.h"

namespace jx::optim {

namespace jnp = jx::numpy;
using detail::describe;

namespace {

constexpr const char* kFn = "ctc_loss";

void check_ctc_arguments(const Array& logits, const Array& logit_paddings, const Array& labels,
                         const Array& label_paddings, int64_t blank_id) {
  detail::require_floating(kFn, "logits", logits);
  detail::require_integer(kFn, "labels", labels);
  if (logits.ndim() != 3)
    throw ShapeError(str("[optim.", kFn, "] logits must be [batch, time, classes], got ",
                         describe(logits), "; add the missing axes, e.g. with jnp::expand_dims"));
  if (labels.ndim() != 2)
    throw ShapeError(str("[optim.", kFn, "] labels must be [batch, max_label_length], got ",
                         describe(labels)));
  const Shape& s = logits.shape();
  if (logit_paddings.shape() != Shape{s[0], s[1]})
    throw ShapeError(str("[optim.", kFn, "] logit_paddings ", describe(logit_paddings),
                         " must be [batch, time] = [", s[0], ",", s[1], "] for logits ",
                         describe(logits), "; 1 marks a padded frame"));
  if (label_paddings.shape() != labels.shape())
    throw ShapeError(str("[optim.", kFn, "] label_paddings ", describe(label_paddings),
                         " must have labels' shape ", describe(labels),
                         "; 1 marks a padded label"));
  if (labels.shape()[0] != s[0])
    throw ShapeError(str("[optim.", kFn, "] labels ", describe(labels), " has batch size ",
                         labels.shape()[0], " but logits ", describe(logits), " has ", s[0]));
  if (s[1] == 0 || labels.shape()[1] == 0)
    throw ValueError(str("[optim.", kFn, "] needs at least one frame and one label column, got "
                         "logits ", describe(logits), " and labels ", describe(labels),
                         "; for an empty target, pass one label column with label_paddings 1"));
  if (blank_id < 0 || blank_id >= s[2])
    throw ValueError(str("[optim.", kFn, "] blank_id ", blank_id, " is not a class of ",
                         describe(logits), " (", s[2], " classes); use 0..", s[2] - 1));
}

// phi[:, 1:] = logaddexp(phi[:, 1:], added): phi[:, 0] (nothing emitted yet) never receives.
Array update_phi_score(const Array& phi, const Array& added) {
  return jnp::concatenate(
      {phi(jx::slice(), jx::slice(0, 1)), jnp::logaddexp(phi(jx::slice(), jx::slice(1, none)), added)},
      -1);
}

}  // namespace

CtcForwardProbs ctc_loss_with_forward_probs(const Array& logits, const Array& logit_paddings,
                                            const Array& labels, const Array& label_paddings,
                                            int64_t blank_id, double log_epsilon) {
  check_ctc_arguments(logits, logit_paddings, labels, label_paddings, blank_id);
  const int64_t batch = logits.shape()[0], num_classes = logits.shape()[2];
  const int64_t max_label_len = labels.shape()[1];

  Array logprobs = nn::log_softmax(logits);  // [B, T, K]
  const DType dtype = logprobs.dtype();
  Array label_lens =
      max_label_len - jnp::sum(label_paddings, 1).astype(DType::Int32);  // [B]

  // repeat[b, n] = 1 when labels[b, n] == labels[b, n + 1]: a blank must separate them.
  Array repeat = (labels(jx::slice(), jx::slice(none, -1)) == labels(jx::slice(), jx::slice(1, none)))
                     .astype(dtype);
  repeat = jnp::pad(repeat, {{0, 0}, {0, 1}});

  // [T, B, 1]: the blank's log-probability per frame.
  Array logprobs_phi = jnp::transpose(
      logprobs(jx::slice(), jx::slice(), jx::slice(blank_id, blank_id + 1)), {1, 0, 2});
  // [T, B, N]: each label's log-probability per frame (a one-hot contraction, as Optax).
  Array one_hot = nn::one_hot(labels, num_classes, dtype);  // [B, N, K]
  Array logprobs_emit =
      jnp::transpose(jnp::einsum("btk,bnk->btn", logprobs, one_hot), {1, 0, 2});

  Array phi_init = jnp::full({batch, max_label_len + 1}, Array(log_epsilon), dtype)
                       .at(jx::slice(), 0)
                       .set(0.0);
  Array emit_init = jnp::full({batch, max_label_len}, Array(log_epsilon), dtype);

  using Carry = std::pair<Array, Array>;                    // (phi, emit)
  using Frame = std::tuple<Array, Array, Array>;            // (emit, phi, pad) log-probs
  auto step = [&](const Carry& prev, const Frame& x) {
    const auto& [prev_phi_orig, prev_emit] = prev;
    const auto& [logprob_emit, logprob_phi, pad_row] = x;
    // emit -> phi epsilon transition, except into a repeated label.
    Array prev_phi = update_phi_score(prev_phi_orig, prev_emit + log_epsilon * repeat);
    // phi -> emit and emit -> emit (self-loop).
    Array next_emit = jnp::logaddexp(prev_phi(jx::slice(), jx::slice(none, -1)) + logprob_emit,
                                     prev_emit + logprob_emit);
    // phi self-loop, and emit -> phi through a blank only before a repeated label.
    Array next_phi = prev_phi + logprob_phi;
    next_phi = update_phi_score(next_phi, prev_emit + logprob_phi + log_epsilon * (1.0 - repeat));
    Array pad = pad_row.reshape({batch, 1}).astype(dtype);
    next_emit = pad * prev_emit + (1.0 - pad) * next_emit;
    next_phi = pad * prev_phi_orig + (1.0 - pad) * next_phi;
    return std::make_pair(Carry(next_phi, next_emit), Carry(next_phi, next_emit));
  };
  Frame xs(logprobs_emit, logprobs_phi, jnp::transpose(logit_paddings, {1, 0}));
  auto [final_carry, alphas] = jx::lax::scan(step, Carry(phi_init, emit_init), xs);
  (void)final_carry;
  auto [logalpha_phi, logalpha_emit] = alphas;

  // The last frame still needs its final emit -> phi epsilon transition.
  Array phi_last = update_phi_score(logalpha_phi(-1), logalpha_emit(-1));
  logalpha_phi = logalpha_phi.at(-1).set(phi_last);

  // -log alpha in the blank after each sequence's last label.
  Array per_seq_loss =
      -jnp::sum(phi_last * nn::one_hot(label_lens, max_label_len + 1, dtype), 1);
  return {per_seq_loss, logalpha_phi, logalpha_emit};
}

Array ctc_loss(const Array& logits, const Array& logit_paddings, const Array& labels,
               const Array& label_paddings, int64_t blank_id, double log_epsilon) {
  return ctc_loss_with_forward_probs(logits, logit_paddings, labels, label_paddings, blank_id,
                                     log_epsilon)
      .loss;
}

}  // namespace jx::optim
