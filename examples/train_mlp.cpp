// The tutorial's end-to-end example in C++: an MLP 784-256-256-10 (ReLU, dropout 0.1) trained
// on Fashion-MNIST with softmax cross-entropy and Adam, batch 128, 3 epochs, the training step
// jitted. Prints the train loss, test accuracy and time of each epoch; it reaches about 87%
// test accuracy.
//
//   build/examples/train_mlp [dir with the Fashion-MNIST IDX files]
//
// Parameters start as PyTorch's nn.Linear defaults (uniform in +-1/sqrt(fan_in) for weights and
// biases), so the run can be compared step for step with the PyTorch version of the tutorial.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include "jx/jx.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
using jx::Array;

// Parameters as a Flax model names them: {"Dense_0": {"kernel": [784, 256], "bias": [256]}, ...},
// kernels stored [in, out].
using jx::Tree;
namespace optim = jx::optim;

constexpr double kDropout = 0.1;
constexpr double kLearningRate = 1e-3;

// PyTorch's nn.Linear init: kaiming_uniform(a=sqrt(5)) for w, which is U(-1/sqrt(in), 1/sqrt(in)),
// and the same bound for b.
Tree init_mlp(Array key, const std::vector<int64_t>& sizes) {
  Tree params = Tree::dict();
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    auto [next, kw, kb] = jr::split<3>(key);
    key = next;
    double bound = 1.0 / std::sqrt(double(sizes[i]));
    params.insert("Dense_" + std::to_string(i),
                  Tree{{"kernel", jr::uniform(kw, {sizes[i], sizes[i + 1]}, jx::DType::Float32, -bound, bound)},
                       {"bias", jr::uniform(kb, {sizes[i + 1]}, jx::DType::Float32, -bound, bound)}});
  }
  return params;
}

// Logits for a batch of uint8 images. With a key, dropout as nn.Dropout in training mode:
// zero each hidden unit with probability 0.1 and scale the kept ones by 1/0.9.
Array forward(const Tree& params, const Array& images, const std::optional<Array>& dropout_key) {
  Array h = images.reshape({images.shape(0), -1}).astype(jx::DType::Float32) / 255.0;
  std::optional<Array> key = dropout_key;
  const size_t layers = params.size();
  for (size_t i = 0; i < layers; ++i) {
    const Tree& dense = params["Dense_" + std::to_string(i)];
    h = jnp::matmul(h, dense["kernel"].array()) + dense["bias"].array();
    if (i + 1 == layers) break;
    h = jnp::maximum(h, 0.0);
    if (key) {
      auto [next, sub] = jr::split<2>(*key);
      key = next;
      Array keep = jr::bernoulli(sub, 1.0 - kDropout, h.shape());
      h = jnp::where(keep, h / (1.0 - kDropout), 0.0);
    }
  }
  return h;
}

// Mean softmax cross-entropy against integer labels (optax.softmax_cross_entropy_with_integer_labels).
Array cross_entropy(const Array& logits, const Array& labels) {
  Array shifted = logits - jx::stop_gradient(jnp::max(logits, 1, true));
  Array log_probs = shifted - jnp::log(jnp::sum(jnp::exp(shifted), 1, true));
  Array one_hot = (labels.reshape({-1, 1}) == jnp::arange(logits.shape(1))).astype(jx::DType::Float32);
  return -jnp::mean(jnp::sum(log_probs * one_hot, 1));
}

Array loss_fn(const Tree& params, const Array& images, const Array& labels, const Array& key) {
  return cross_entropy(forward(params, images, key), labels);
}

// One training step: the loss and its gradient on a batch, then an Adam update through the
// TrainState's optimizer (optax.adam; torch.optim.Adam computes the same update).
std::pair<optim::TrainState, Array> train_step(const optim::TrainState& state, const Array& images,
                                               const Array& labels, const Array& dropout_key) {
  auto [loss, grads] = jx::value_and_grad(loss_fn)(state.params, images, labels, dropout_key);
  return {state.apply_gradients(grads), loss};
}

// Fraction of correctly classified images (no dropout).
Array accuracy(const optim::TrainState& state, const Array& images, const Array& labels) {
  Array predicted = jnp::argmax(state.apply_fn(Tree{{"params", state.params}}, images), 1);
  return jnp::mean((predicted == labels).astype(jx::DType::Float32));
}

int main(int argc, char** argv) {
  jx::data::ImageDataset ds = jx::data::load_fashion_mnist(argc > 1 ? argv[1] : jx::data::kFashionMnistDir);
  std::printf("Fashion-MNIST: %lld train and %lld test images of 28x28\n",
              (long long)ds.train_images.shape(0), (long long)ds.test_images.shape(0));

  auto [init_key, dropout_root, shuffle_root] = jr::split<3>(jr::PRNGKey(0));
  auto state = optim::TrainState::create(
      [](const Tree& variables, const Array& images) { return forward(variables["params"], images, std::nullopt); },
      init_mlp(init_key, {784, 256, 256, 10}), optim::adam(kLearningRate));

  // Traced and compiled on the first call; later calls with the same shapes run the compiled
  // code. The old state is donated: its buffers are reused for the new one.
  auto step = jx::jit(train_step, {.donate_argnums = {0}, .name = "train_step"});
  auto test_accuracy = jx::jit(accuracy, {.name = "accuracy"});

  Array dropout_key = dropout_root, shuffle_key = shuffle_root;
  for (int epoch = 1; epoch <= 3; ++epoch) {
    auto start = std::chrono::steady_clock::now();
    auto [next_shuffle, epoch_key] = jr::split<2>(shuffle_key);
    shuffle_key = next_shuffle;
    double loss_sum = 0;
    auto batches = jx::data::batches(ds.train_images, ds.train_labels, 128, epoch_key, {.drop_last = true});
    for (auto [images, labels] : batches) {
      auto [next, step_key] = jr::split<2>(dropout_key);  // a new dropout mask every step
      dropout_key = next;
      auto [new_state, loss] = step(state, images, labels, step_key);
      state = std::move(new_state);
      loss_sum += loss.item<double>();
    }
    double acc = test_accuracy(state, ds.test_images, ds.test_labels).item<double>();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("epoch %d  train loss %.4f  test accuracy %.2f%%  time %.2f s\n", epoch,
                loss_sum / double(batches.size()), 100 * acc, seconds);
  }
  return 0;
}
