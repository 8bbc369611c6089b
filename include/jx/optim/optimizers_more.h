// The rest of Optax's optimizer aliases (optax/_src/alias.py) with Optax's defaults: chains
// of transformations (transform.h, transforms_more.h) ending in the negative learning rate.
//
//   optim::rmsprop(1e-3)                                    // optax.rmsprop(1e-3): eps inside the
//   sqrt optim::rmsprop(1e-3, {.eps_in_sqrt = false})            // torch.optim.RMSprop's update
//   optim::lamb(schedule, {.weight_decay = 1e-2})
//   optim::adafactor()                                      // optax.adafactor(): no learning rate
//
// Where Optax and PyTorch differ (eps placement, initial accumulators, weight-decay
// coupling) the defaults are Optax's; docs/optim_optimizers.md lists each difference.
#pragma once
#include <optional>

#include "jx/optim/optimizers.h"
#include "jx/optim/transforms_more.h"

namespace jx::optim {

// chain(scale_by_adamax, scale_by_learning_rate(lr)).
GradientTransformation adamax(const ScalarOrSchedule& learning_rate,
                              const AdamaxOptions& options = {});

struct AdamaxWOptions {
  double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  double weight_decay = 1e-4;    // decoupled: added to the Adamax update, then scaled by lr
  std::optional<MaskFn> mask{};  // which parameters decay (all when none)
};
// chain(scale_by_adamax, add_decayed_weights(weight_decay, mask), scale_by_learning_rate(lr)).
GradientTransformation adamaxw(const ScalarOrSchedule& learning_rate,
                               const AdamaxWOptions& options = {});

// chain(scale_by_amsgrad, scale_by_learning_rate(lr)). Differs from PyTorch's
// Adam(amsgrad=True), which takes the maximum of the raw second moment.
GradientTransformation amsgrad(const ScalarOrSchedule& learning_rate,
                               const AmsgradOptions& options = {});

// chain(scale_by_radam, scale_by_learning_rate(lr)).
GradientTransformation radam(const ScalarOrSchedule& learning_rate,
                             const RadamOptions& options = {});

struct AdagradOptions {
  double initial_accumulator_value = 0.1;  // PyTorch's default is 0
  double eps = 1e-7;                       // inside the sqrt (PyTorch: 1e-10, outside)
};
// chain(scale_by_rss(initial_accumulator_value, eps), scale_by_learning_rate(lr)).
GradientTransformation adagrad(const ScalarOrSchedule& learning_rate,
                               const AdagradOptions& options = {});

struct AdadeltaOptions {
  double rho = 0.9, eps = 1e-6;
  double weight_decay = 0.0;  // coupled: added to the gradient before Adadelta's scaling
  std::optional<MaskFn> weight_decay_mask{};
};
// chain(add_decayed_weights(weight_decay, mask), scale_by_adadelta(rho, eps),
// scale_by_learning_rate(lr)). With no learning rate the step is Adadelta's own (lr 1,
// descending, as the paper and PyTorch's default); see docs/optim_optimizers.md for Optax's
// learning_rate=None.
GradientTransformation adadelta(std::optional<ScalarOrSchedule> learning_rate = std::nullopt,
                                const AdadeltaOptions& options = {});

struct AdafactorOptions {
  int64_t min_dim_size_to_factor = 128;
  double decay_rate = 0.8;
  int64_t decay_offset = 0;
  bool multiply_by_parameter_scale = true;         // scale the step by max(rms(param), 1e-3)
  std::optional<double> clipping_threshold = 1.0;  // clip_by_block_rms; none: no clipping
  std::optional<double> momentum{};                // ema(momentum, debias=false); none: no momentum
  DType dtype_momentum = DType::Float32;           // the momentum buffer's dtype
  std::optional<double> weight_decay_rate{};
  double eps = 1e-30;
  bool factored = true;
  std::optional<MaskFn> weight_decay_mask{};
};
// chain(scale_by_factored_rms, [clip_by_block_rms], [scale_by_learning_rate(lr, flip_sign
// = false)], [scale_by_param_block_rms], [ema], [add_decayed_weights], scale(-1)); the
// bracketed steps are present as the options (and a learning rate) ask, as in Optax.
GradientTransformation adafactor(std::optional<ScalarOrSchedule> learning_rate = std::nullopt,
                                 const AdafactorOptions& options = {});

struct RmspropOptions {
  double decay = 0.9, eps = 1e-8;
  double initial_scale = 0.0;
  // Optax's default: 1/sqrt(nu + eps). PyTorch's RMSprop divides by sqrt(nu) + eps, which
  // is eps_in_sqrt = false. The two differ most where nu is small (early steps, rare features).
  bool eps_in_sqrt = true;
  bool centered = false;  // divide by the standard deviation (scale_by_stddev)
  std::optional<double> momentum{};
  bool nesterov = false;
  bool bias_correction = false;
};
// chain(scale_by_rms or scale_by_stddev, scale_by_learning_rate(lr), trace(momentum,
// nesterov) or identity): the momentum accumulates the already scaled step, as PyTorch's.
GradientTransformation rmsprop(const ScalarOrSchedule& learning_rate,
                               const RmspropOptions& options = {});

struct LambOptions {
  double b1 = 0.9, b2 = 0.999, eps = 1e-6, eps_root = 0.0;
  double weight_decay = 0.0;
  std::optional<MaskFn> mask{};
};
// chain(scale_by_adam, add_decayed_weights, scale_by_trust_ratio, scale_by_learning_rate(lr)).
GradientTransformation lamb(const ScalarOrSchedule& learning_rate, const LambOptions& options = {});

struct LarsOptions {
  double weight_decay = 0.0;
  std::optional<MaskFn> weight_decay_mask{};  // none: every parameter (Optax's True)
  double trust_coefficient = 0.001;
  double eps = 0.0;
  std::optional<MaskFn> trust_ratio_mask{};  // none: every parameter (Optax's True)
  double momentum = 0.9;
  bool nesterov = false;
};
// chain(add_decayed_weights, masked(scale_by_trust_ratio), scale_by_learning_rate(lr),
// trace(momentum, nesterov)).
GradientTransformation lars(const ScalarOrSchedule& learning_rate, const LarsOptions& options = {});

struct LionAliasOptions {
  double b1 = 0.9, b2 = 0.99;
  std::optional<DType> mu_dtype{};
  double weight_decay = 1e-3;  // decoupled, scaled by lr
  std::optional<MaskFn> mask{};
};
// chain(scale_by_lion, add_decayed_weights, scale_by_learning_rate(lr)).
GradientTransformation lion(const ScalarOrSchedule& learning_rate,
                            const LionAliasOptions& options = {});

struct NovogradAliasOptions {
  double b1 = 0.9, b2 = 0.25, eps = 1e-6, eps_root = 0.0, weight_decay = 0.0;
};
// chain(scale_by_novograd, scale_by_learning_rate(lr)).
GradientTransformation novograd(const ScalarOrSchedule& learning_rate,
                                const NovogradAliasOptions& options = {});

struct YogiAliasOptions {
  double b1 = 0.9, b2 = 0.999, eps = 1e-3;
};
// chain(scale_by_yogi (initial accumulators 1e-6), scale_by_learning_rate(lr)).
GradientTransformation yogi(const ScalarOrSchedule& learning_rate,
                            const YogiAliasOptions& options = {});

struct AdabeliefOptions {
  double b1 = 0.9, b2 = 0.999, eps = 1e-16, eps_root = 1e-16;
  std::optional<double> weight_decay{};  // decoupled, as adamw's; none: no decay step
  std::optional<MaskFn> weight_decay_mask{};
  bool nesterov = false;
};
// chain(scale_by_belief, [add_decayed_weights], scale_by_learning_rate(lr)).
GradientTransformation adabelief(const ScalarOrSchedule& learning_rate,
                                 const AdabeliefOptions& options = {});

struct NoisySgdOptions {
  double eta = 0.01, gamma = 0.55;
  std::optional<Array> key{};  // none: jx::random::PRNGKey(seed)
  int64_t seed = 0;
};
// chain(add_noise(eta, gamma, key), scale_by_learning_rate(lr)).
GradientTransformation noisy_sgd(const ScalarOrSchedule& learning_rate,
                                 const NoisySgdOptions& options = {});

}  // namespace jx::optim
