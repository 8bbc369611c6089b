// Optax's optimizer aliases (optax/_src/alias.py) with Optax's defaults: chains of
// transformations (transform.h) whose last step scales by the negative learning rate.
// Options are structs read with designated initializers, as Python's keyword arguments:
//
//   optim::adamw(1e-3, {.weight_decay = 1e-4})       // optax.adamw(1e-3, weight_decay=1e-4)
//   optim::sgd(schedule, {.momentum = 0.9, .nesterov = true})
#pragma once
#include <optional>

#include "jx/optim/transform.h"

namespace jx::optim {

struct SgdOptions {
  std::optional<double> momentum{};
  bool nesterov = false;
  std::optional<DType> accumulator_dtype{};
};
// chain(trace(momentum, nesterov) if momentum, scale_by_learning_rate(lr)).
GradientTransformation sgd(const ScalarOrSchedule& learning_rate, const SgdOptions& options = {});

// chain(scale_by_adam, scale_by_learning_rate(lr)).
GradientTransformation adam(const ScalarOrSchedule& learning_rate, const AdamOptions& options = {});
// adam with nesterov = true.
GradientTransformation nadam(const ScalarOrSchedule& learning_rate, AdamOptions options = {});

struct AdamWOptions {
  double b1 = 0.9, b2 = 0.999, eps = 1e-8, eps_root = 0.0;
  std::optional<DType> mu_dtype{};
  double weight_decay = 1e-4;       // Optax's default; PyTorch's AdamW uses 1e-2
  std::optional<MaskFn> mask{};     // which parameters decay (all when none)
  bool nesterov = false;
};
// chain(scale_by_adam, add_decayed_weights(weight_decay, mask), scale_by_learning_rate(lr)):
// the decay is added to Adam's update and scaled by the learning rate, as PyTorch's AdamW.
GradientTransformation adamw(const ScalarOrSchedule& learning_rate, const AdamWOptions& options = {});
// adamw with nesterov = true.
GradientTransformation nadamw(const ScalarOrSchedule& learning_rate, AdamWOptions options = {});

}  // namespace jx::optim
