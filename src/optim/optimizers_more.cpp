// Optax's aliases (optax/_src/alias.py): adamax, adamaxw, amsgrad, radam, adagrad,
// adadelta, adafactor, rmsprop, lamb, lars, lion, novograd, yogi, adabelief, noisy_sgd.
#include "jx/optim/optimizers_more.h"

#include "jx/optim/combine.h"
#include "jx/random.h"
#include "support/str.h"

namespace jx::optim {

GradientTransformation adamax(const ScalarOrSchedule& learning_rate, const AdamaxOptions& o) {
  return chain(scale_by_adamax(o), scale_by_learning_rate(learning_rate));
}

GradientTransformation adamaxw(const ScalarOrSchedule& learning_rate, const AdamaxWOptions& o) {
  return chain(scale_by_adamax({.b1 = o.b1, .b2 = o.b2, .eps = o.eps}),
               add_decayed_weights(o.weight_decay, o.mask), scale_by_learning_rate(learning_rate));
}

GradientTransformation amsgrad(const ScalarOrSchedule& learning_rate, const AmsgradOptions& o) {
  return chain(scale_by_amsgrad(o), scale_by_learning_rate(learning_rate));
}

GradientTransformation radam(const ScalarOrSchedule& learning_rate, const RadamOptions& o) {
  return chain(scale_by_radam(o), scale_by_learning_rate(learning_rate));
}

GradientTransformation adagrad(const ScalarOrSchedule& learning_rate, const AdagradOptions& o) {
  return chain(scale_by_rss(o.initial_accumulator_value, o.eps),
               scale_by_learning_rate(learning_rate));
}

GradientTransformation adadelta(std::optional<ScalarOrSchedule> learning_rate,
                                const AdadeltaOptions& o) {
  // scale(-1) has the empty state that Optax's last step has, so the state reads the same.
  return chain(add_decayed_weights(o.weight_decay, o.weight_decay_mask),
               scale_by_adadelta(o.rho, o.eps),
               learning_rate ? scale_by_learning_rate(*learning_rate) : scale(-1.0));
}

GradientTransformation adafactor(std::optional<ScalarOrSchedule> learning_rate,
                                 const AdafactorOptions& o) {
  if (o.clipping_threshold && !(*o.clipping_threshold >= 1.0))
    throw ValueError(
        str("[optim.adafactor] clipping_threshold must be >= 1 (or none to disable clipping), got ",
            *o.clipping_threshold));
  std::vector<GradientTransformation> tx{
      scale_by_factored_rms({.factored = o.factored,
                             .decay_rate = o.decay_rate,
                             .step_offset = o.decay_offset,
                             .min_dim_size_to_factor = o.min_dim_size_to_factor,
                             .epsilon = o.eps})};
  if (o.clipping_threshold) tx.push_back(clip_by_block_rms(*o.clipping_threshold));
  if (learning_rate) tx.push_back(scale_by_learning_rate(*learning_rate, /*flip_sign=*/false));
  if (o.multiply_by_parameter_scale) tx.push_back(scale_by_param_block_rms());
  if (o.momentum) tx.push_back(ema(*o.momentum, /*debias=*/false, o.dtype_momentum));
  if (o.weight_decay_rate)
    tx.push_back(add_decayed_weights(*o.weight_decay_rate, o.weight_decay_mask));
  tx.push_back(scale(-1.0));  // gradient descent follows the negative gradient
  return chain(std::move(tx));
}

GradientTransformation rmsprop(const ScalarOrSchedule& learning_rate, const RmspropOptions& o) {
  const RmsOptions rms{.decay = o.decay,
                       .eps = o.eps,
                       .initial_scale = o.initial_scale,
                       .eps_in_sqrt = o.eps_in_sqrt,
                       .bias_correction = o.bias_correction};
  return chain(o.centered ? scale_by_stddev(rms) : scale_by_rms(rms),
               scale_by_learning_rate(learning_rate),
               o.momentum ? trace(*o.momentum, o.nesterov) : identity());
}

GradientTransformation lamb(const ScalarOrSchedule& learning_rate, const LambOptions& o) {
  return chain(scale_by_adam({.b1 = o.b1, .b2 = o.b2, .eps = o.eps, .eps_root = o.eps_root}),
               add_decayed_weights(o.weight_decay, o.mask), scale_by_trust_ratio(),
               scale_by_learning_rate(learning_rate));
}

GradientTransformation lars(const ScalarOrSchedule& learning_rate, const LarsOptions& o) {
  GradientTransformation trust =
      scale_by_trust_ratio({.trust_coefficient = o.trust_coefficient, .eps = o.eps});
  return chain(add_decayed_weights(o.weight_decay, o.weight_decay_mask),
               // Optax masks even with the default mask (True), so the state has its inner_state.
               o.trust_ratio_mask ? masked(trust, *o.trust_ratio_mask) : masked(trust, Tree(true)),
               scale_by_learning_rate(learning_rate), trace(o.momentum, o.nesterov));
}

GradientTransformation lion(const ScalarOrSchedule& learning_rate, const LionAliasOptions& o) {
  return chain(scale_by_lion({.b1 = o.b1, .b2 = o.b2, .mu_dtype = o.mu_dtype}),
               add_decayed_weights(o.weight_decay, o.mask), scale_by_learning_rate(learning_rate));
}

GradientTransformation novograd(const ScalarOrSchedule& learning_rate,
                                const NovogradAliasOptions& o) {
  return chain(scale_by_novograd({.b1 = o.b1,
                                  .b2 = o.b2,
                                  .eps = o.eps,
                                  .eps_root = o.eps_root,
                                  .weight_decay = o.weight_decay}),
               scale_by_learning_rate(learning_rate));
}

GradientTransformation yogi(const ScalarOrSchedule& learning_rate, const YogiAliasOptions& o) {
  return chain(scale_by_yogi({.b1 = o.b1, .b2 = o.b2, .eps = o.eps}),
               scale_by_learning_rate(learning_rate));
}

GradientTransformation adabelief(const ScalarOrSchedule& learning_rate, const AdabeliefOptions& o) {
  GradientTransformation belief = scale_by_belief(
      {.b1 = o.b1, .b2 = o.b2, .eps = o.eps, .eps_root = o.eps_root, .nesterov = o.nesterov});
  if (o.weight_decay)
    return chain(belief, add_decayed_weights(*o.weight_decay, o.weight_decay_mask),
                 scale_by_learning_rate(learning_rate));
  return chain(belief, scale_by_learning_rate(learning_rate));
}

GradientTransformation noisy_sgd(const ScalarOrSchedule& learning_rate, const NoisySgdOptions& o) {
  const Array key = o.key ? *o.key : jx::random::PRNGKey(o.seed);
  return chain(add_noise(o.eta, o.gamma, key), scale_by_learning_rate(learning_rate));
}

}  // namespace jx::optim
