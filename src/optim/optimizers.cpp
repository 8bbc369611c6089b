// Optax's aliases (optax/_src/alias.py): sgd, adam, nadam, adamw, nadamw.
#include "jx/optim/optimizers.h"

namespace jx::optim {

GradientTransformation sgd(const ScalarOrSchedule& learning_rate, const SgdOptions& o) {
  if (o.momentum) return chain(trace(*o.momentum, o.nesterov, o.accumulator_dtype), scale_by_learning_rate(learning_rate));
  return chain(identity(), scale_by_learning_rate(learning_rate));
}

GradientTransformation adam(const ScalarOrSchedule& learning_rate, const AdamOptions& o) {
  return chain(scale_by_adam(o), scale_by_learning_rate(learning_rate));
}

GradientTransformation nadam(const ScalarOrSchedule& learning_rate, AdamOptions o) {
  o.nesterov = true;
  return adam(learning_rate, o);
}

GradientTransformation adamw(const ScalarOrSchedule& learning_rate, const AdamWOptions& o) {
  return chain(scale_by_adam({.b1 = o.b1, .b2 = o.b2, .eps = o.eps, .eps_root = o.eps_root, .mu_dtype = o.mu_dtype,
                              .nesterov = o.nesterov}),
               add_decayed_weights(o.weight_decay, o.mask), scale_by_learning_rate(learning_rate));
}

GradientTransformation nadamw(const ScalarOrSchedule& learning_rate, AdamWOptions o) {
  o.nesterov = true;
  return adamw(learning_rate, o);
}

}  // namespace jx::optim
