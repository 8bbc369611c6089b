// Step 6 of "Migrating from PyTorch to JAX": the training step. PyTorch's step mutates
// the model and the optimizer; JAX's is a function from the old state to the new one:
// (params, opt_state, batch) -> (params, opt_state, loss). Flax's TrainState bundles
// params, optimizer and step count into one pytree so that the step takes and returns one
// value. This step runs eagerly; step 7 compiles it with jit.
//
// The data: a small synthetic set shaped like Fashion-MNIST (28x28x1 images, 10 classes),
// each image its class's random template plus noise, so the loss has something to learn.
//
//   build/examples/tutorial_step06_train_step
#include <cstdio>
#include <iostream>

#include "jx/jx.h"
#include "models.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace optim = jx::optim;
using jx::Array;
using jx::Tree;

const tutorial::MLP model;

Array loss_fn(const Tree& params, const Array& x, const Array& y) {
  Array logits = model.apply(Tree{{"params", params}}, x);
  return optim::softmax_cross_entropy_with_integer_labels(logits, y).mean();
}

// PyTorch:
//   def train_step(x, y):
//     optimizer.zero_grad()
//     loss = F.cross_entropy(model(x), y)
//     loss.backward()
//     optimizer.step()
//     return loss.item()
// JAX (the optimizer tx is fixed, so it is not an argument):
//   def train_step(params, opt_state, x, y):
//     loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
//     updates, opt_state = tx.update(grads, opt_state, params)
//     return optax.apply_updates(params, updates), opt_state, loss
const optim::GradientTransformation tx = optim::adam(1e-3);

std::tuple<Tree, Tree, Array> train_step(const Tree& params, const Tree& opt_state, const Array& x,
                                         const Array& y) {
  auto [loss, grads] = jx::value_and_grad(loss_fn)(params, x, y);
  auto [updates, new_opt_state] = tx.update(grads, opt_state, params);
  return {optim::apply_updates(params, updates), new_opt_state, loss};
}

// The same with Flax's TrainState:
//   state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=tx)
//   def train_step(state, x, y):
//     def loss_fn(params):
//       logits = state.apply_fn({'params': params}, x)
//       return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
//     loss, grads = jax.value_and_grad(loss_fn)(state.params)
//     return state.apply_gradients(grads=grads), loss
std::pair<optim::TrainState, Array> state_train_step(const optim::TrainState& state, const Array& x,
                                                     const Array& y) {
  auto loss = [&](const Tree& params) {
    Array logits = state.apply_fn(Tree{{"params", params}}, x);
    return optim::softmax_cross_entropy_with_integer_labels(logits, y).mean();
  };
  auto [value, grads] = jx::value_and_grad(loss)(state.params);
  return {state.apply_gradients(grads), value};
}

int main() {
  auto [template_key, label_key, noise_key, init_key, test_key] = jr::split<5>(jr::PRNGKey(0));
  Array templates = jr::normal(template_key, {10, 28, 28, 1});
  Array labels = jr::randint(label_key, {256}, 0, 10);
  Array images = jnp::take(templates, labels, 0) + 5.0 * jr::normal(noise_key, {256, 28, 28, 1});
  std::cout << "synthetic data: images " << images.shape() << " " << images.dtype() << ", labels "
            << labels.shape() << " " << labels.dtype() << "\n";
  const int64_t batch = 32, steps = 24;
  auto batch_at = [&](int64_t step) {
    int64_t start = (step * batch) % images.shape(0);
    return std::make_pair(images(jx::slice(start, start + batch)), labels(jx::slice(start, start + batch)));
  };

  std::cout << "\n== A functional train step: (params, opt_state, batch) -> (params, opt_state, loss) ==\n";
  Tree params = model.init(init_key, jnp::ones({1, 28, 28, 1}))["params"];
  Tree opt_state = tx.init(params);
  float first = 0, last = 0;
  for (int64_t step = 0; step < steps; ++step) {
    auto [x, y] = batch_at(step);
    // Python: params, opt_state, loss = train_step(params, opt_state, x, y)
    Array loss;
    std::tie(params, opt_state, loss) = train_step(params, opt_state, x, y);
    if (step == 0) first = loss.item<float>();
    last = loss.item<float>();
    if (step % 8 == 0 || step == steps - 1) std::printf("step %2lld  loss %.4f\n", (long long)step, last);
  }
  std::printf("first loss %.4f, last loss %.4f: loss %s\n", first, last,
              last < first ? "decreased" : "did NOT decrease");

  std::cout << "\n== The same with TrainState ==\n";
  auto state = optim::TrainState::create(
      [](const Tree& variables, const Array& x) { return model.apply(variables, x); },
      model.init(init_key, jnp::ones({1, 28, 28, 1}))["params"], tx);
  for (int64_t step = 0; step < steps; ++step) {
    auto [x, y] = batch_at(step);
    auto [next, loss] = state_train_step(state, x, y);
    state = next;
    if (step == 0) first = loss.item<float>();
    last = loss.item<float>();
  }
  std::printf("TrainState: step %d, first loss %.4f, last loss %.4f: loss %s\n", state.step.item<int32_t>(),
              first, last, last < first ? "decreased" : "did NOT decrease");
  // Both loops start from the same key and see the same batches: the same parameters.
  bool same = jnp::allclose(params["Dense_2"]["kernel"].array(),
                            state.params["Dense_2"]["kernel"].array(), 1e-5, 1e-6)
                  .item<bool>();
  std::cout << "TrainState ends with the same parameters as the hand-written loop: " << (same ? "yes" : "no")
            << "\n";

  // Evaluation on new images from the same distribution. PyTorch: model.eval() and
  // torch.no_grad(); here it is apply alone: nothing records gradients unless asked.
  auto [test_label_key, test_noise_key] = jr::split<2>(test_key);
  Array test_labels = jr::randint(test_label_key, {256}, 0, 10);
  Array test_images = jnp::take(templates, test_labels, 0) + 5.0 * jr::normal(test_noise_key, {256, 28, 28, 1});
  Array predicted = jnp::argmax(model.apply(Tree{{"params", state.params}}, test_images), 1);
  std::printf("accuracy on 256 new images after %lld steps: %.1f%%\n", (long long)steps,
              100 * jnp::mean((predicted == test_labels).astype(jx::DType::Float32)).item<float>());
  return 0;
}
