// The tutorial CNN's training step as the benchmarks time it (bench_models, bench_soak):
// examples/train_cnn's model and optimizer, chain(clip_by_global_norm(1), adamw(1e-3,
// weight_decay 1e-4)), softmax cross-entropy, dropout keyed per step.
#pragma once
#include <utility>

#include "jx/jx.h"
#include "nn/tutorial_models.h"

namespace bench {

inline jx::optim::GradientTransformation tutorial_optimizer() {
  namespace optim = jx::optim;
  return optim::chain({optim::clip_by_global_norm(1.0), optim::adamw(1e-3, {.weight_decay = 1e-4})});
}

inline jx::optim::TrainState cnn_state(const jx::Array& x) {
  tutorial::CNN model;
  jx::Tree variables = model.init(jx::random::PRNGKey(0), x, true);
  return jx::optim::TrainState::create(
      [model](const jx::Tree& v, const jx::Array& in) { return model.apply(v, in, true); }, variables["params"],
      tutorial_optimizer());
}

// The batch's mean loss and its gradients.
inline std::pair<jx::Array, jx::Tree> cnn_loss_and_grads(const jx::Tree& params, const jx::Array& x,
                                                         const jx::Array& labels, const jx::Array& key) {
  tutorial::CNN model;
  auto loss_fn = [&](const jx::Tree& p) {
    jx::Array logits = model.apply(jx::Tree{{"params", p}}, x, false, jx::nn::Rngs{{"dropout", key}});
    return jx::numpy::mean(jx::optim::softmax_cross_entropy_with_integer_labels(logits, labels));
  };
  auto [loss, grads] = jx::value_and_grad(loss_fn)(params);
  return {loss, grads};
}

inline std::pair<jx::optim::TrainState, jx::Array> cnn_step(const jx::optim::TrainState& s, const jx::Array& x,
                                                            const jx::Array& labels, const jx::Array& key) {
  auto [loss, grads] = cnn_loss_and_grads(s.params, x, labels, key);
  return {s.apply_gradients(grads), loss};
}

}  // namespace bench
