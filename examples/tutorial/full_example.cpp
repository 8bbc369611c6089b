// The full example of "Migrating from PyTorch to JAX": the tutorial's CNN trained on
// Fashion-MNIST with every piece of steps 1-11 together: the model (step 3), the loss and
// value_and_grad (4), Adam through a TrainState (5, 6), a jitted train step with a fresh
// dropout key each step (2, 7), shuffled batches keyed by a PRNG key (10), evaluation, and
// a checkpoint of the final state (11).
//
// To run in a few seconds it trains on a small sample, not the whole data set: the first
// 512 training images for 2 epochs of 16 steps (batch 32), evaluated on the first 256 test
// images. The data come from /usr/share/datasets/fashion-mnist (Debian's
// dataset-fashion-mnist) when it is installed; otherwise the program makes a synthetic set
// of the same shapes and says so. examples/train_mlp.cpp is the full-size run.
//
//   build/examples/tutorial_full_example [dir with the Fashion-MNIST files]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "jx/jx.h"
#include "models.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace jd = jx::data;
namespace nn = jx::nn;
namespace optim = jx::optim;
namespace ocp = jx::ckpt;
using jx::Array;
using jx::Tree;

constexpr int64_t kTrainSize = 512, kTestSize = 256, kBatch = 32, kEpochs = 2;

const tutorial::CNN model;

// uint8 images [n, 28, 28] -> float32 [n, 28, 28, 1] in [0, 1]. Inside the jitted step
// this fuses into the first convolution's input.
Array preprocess(const Array& images) {
  return (images.astype(jx::DType::Float32) / 255.0).reshape({images.shape(0), 28, 28, 1});
}

// Fashion-MNIST's first images when installed, else a synthetic stand-in: each image is
// its class's random template plus noise, in uint8 like the real files.
jd::ImageDataset load_data(const std::string& dir, bool* real) {
  *real = std::filesystem::exists(std::filesystem::path(dir) / "train-images-idx3-ubyte.gz") ||
          std::filesystem::exists(std::filesystem::path(dir) / "train-images-idx3-ubyte");
  if (*real) {
    jd::ImageDataset full = jd::load_fashion_mnist(dir);
    return {full.train_images(jx::slice(0, kTrainSize)), full.train_labels(jx::slice(0, kTrainSize)),
            full.test_images(jx::slice(0, kTestSize)), full.test_labels(jx::slice(0, kTestSize))};
  }
  auto [kt, k1, k2, k3, k4] = jr::split<5>(jr::PRNGKey(123));
  Array templates = jr::uniform(kt, {10, 28, 28}, jx::DType::Float32, 0.0, 255.0);
  auto make = [&](const Array& label_key, const Array& noise_key, int64_t n) {
    Array labels = jr::randint(label_key, {n}, 0, 10, jx::DType::UInt8);
    Array noisy = jnp::take(templates, labels, 0) + 80.0 * jr::normal(noise_key, {n, 28, 28});
    return std::make_pair(jnp::clip(noisy, 0.0, 255.0).astype(jx::DType::UInt8), labels);
  };
  auto [train_x, train_y] = make(k1, k2, kTrainSize);
  auto [test_x, test_y] = make(k3, k4, kTestSize);
  return {train_x, train_y, test_x, test_y};
}

// JAX:
//   @jax.jit
//   def train_step(state, images, labels, dropout_key):
//     def loss_fn(params):
//       logits = state.apply_fn({'params': params}, images, deterministic=False,
//                               rngs={'dropout': dropout_key})
//       return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
//     loss, grads = jax.value_and_grad(loss_fn)(state.params)
//     return state.apply_gradients(grads=grads), loss
// (jx's TrainState::apply_fn takes (variables, x) only, so the training call, with its
// dropout key, goes to the model directly.)
std::pair<optim::TrainState, Array> train_step(const optim::TrainState& state, const Array& images,
                                               const Array& labels, const Array& dropout_key) {
  auto loss_fn = [&](const Tree& params) {
    Array logits = model.apply(Tree{{"params", params}}, preprocess(images), /*deterministic=*/false,
                               nn::Rngs{{"dropout", dropout_key}});
    return optim::softmax_cross_entropy_with_integer_labels(logits, labels).mean();
  };
  auto [loss, grads] = jx::value_and_grad(loss_fn)(state.params);
  return {state.apply_gradients(grads), loss};
}

// JAX:
//   @jax.jit
//   def eval_step(state, images, labels):
//     logits = state.apply_fn({'params': state.params}, images)   # deterministic=True
//     return (logits.argmax(-1) == labels).mean()
Array eval_step(const optim::TrainState& state, const Array& images, const Array& labels) {
  Array logits = state.apply_fn(Tree{{"params", state.params}}, preprocess(images));
  return jnp::mean((jnp::argmax(logits, -1) == labels).astype(jx::DType::Float32));
}

int main(int argc, char** argv) {
  auto start = std::chrono::steady_clock::now();
  const char* dir = argc > 1 ? argv[1] : jd::kFashionMnistDir;
  bool real = false;
  jd::ImageDataset data = load_data(dir, &real);
  Array train_labels = data.train_labels.astype(jx::DType::Int32);
  Array test_labels = data.test_labels.astype(jx::DType::Int32);
  if (real)
    std::printf("data: Fashion-MNIST from %s, a sample: %lld training and %lld test images\n", dir,
                (long long)kTrainSize, (long long)kTestSize);
  else
    std::printf("data: Fashion-MNIST not found in %s; a SYNTHETIC stand-in of the same shapes: %lld training "
                "and %lld test images\n", dir, (long long)kTrainSize, (long long)kTestSize);

  // Keys: one each for init, dropout and shuffling (JAX: jax.random.split(key, 3)).
  auto [init_key, dropout_root, shuffle_root] = jr::split<3>(jr::PRNGKey(0));
  Tree variables = model.init(init_key, jnp::ones({1, 28, 28, 1}), /*deterministic=*/true);
  int64_t count = 0;
  for (const Array& p : jx::tree::leaves(variables)) count += p.size();
  std::printf("model: the tutorial's CNN, %lld parameters\n", (long long)count);

  // JAX: state = train_state.TrainState.create(apply_fn=model.apply, params=variables['params'],
  //                                            tx=optax.adam(1e-3))
  auto state = optim::TrainState::create(
      [](const Tree& v, const Array& x) { return model.apply(v, x, /*deterministic=*/true); },
      variables["params"], optim::adam(1e-3));

  // The old state is donated: its buffers are reused for the new one.
  auto jit_train_step = jx::jit(train_step, {.donate_argnums = {0}, .name = "train_step"});
  auto jit_eval_step = jx::jit(eval_step, {.name = "eval_step"});

  const float accuracy_before = jit_eval_step(state, data.test_images, test_labels).item<float>();
  std::printf("test accuracy before training: %.1f%%\n", 100 * accuracy_before);
  float accuracy_after = accuracy_before;

  Array dropout_key = dropout_root, shuffle_key = shuffle_root;
  float first_losses = 0, last_losses = 0;
  int64_t step = 0;
  const int64_t steps_per_epoch = kTrainSize / kBatch, total_steps = kEpochs * steps_per_epoch;
  for (int64_t epoch = 1; epoch <= kEpochs; ++epoch) {
    Array epoch_key;
    std::tie(shuffle_key, epoch_key) = jr::split<2>(shuffle_key);
    float epoch_loss = 0;
    for (auto [images, labels] : jd::batches(data.train_images, train_labels, kBatch, epoch_key,
                                             {.drop_last = true})) {
      Array step_key;
      std::tie(dropout_key, step_key) = jr::split<2>(dropout_key);  // a new dropout mask every step
      auto [new_state, loss] = jit_train_step(state, images, labels, step_key);
      state = std::move(new_state);
      const float l = loss.item<float>();
      epoch_loss += l;
      if (step < 5) first_losses += l / 5;
      if (step >= total_steps - 5) last_losses += l / 5;
      ++step;
    }
    accuracy_after = jit_eval_step(state, data.test_images, test_labels).item<float>();
    std::printf("epoch %lld: %lld steps, mean train loss %.4f, test accuracy %.1f%%\n", (long long)epoch,
                (long long)steps_per_epoch, epoch_loss / float(steps_per_epoch), 100 * accuracy_after);
  }
  std::printf("mean loss of the first 5 steps %.4f, of the last 5 steps %.4f: loss %s\n", first_losses, last_losses,
              last_losses < first_losses ? "decreased" : "did NOT decrease");
  std::printf("test accuracy %.1f%% -> %.1f%%: %s\n", 100 * accuracy_before, 100 * accuracy_after,
              accuracy_after > accuracy_before ? "improved" : "did NOT improve");

  // Save the trained state and restore it, as a later run would (step 11).
  const std::filesystem::path ckpt_dir =
      std::filesystem::temp_directory_path() / ("jx_tutorial_full_example_" + std::to_string(getpid()));
  std::filesystem::remove_all(ckpt_dir);
  {
    ocp::CheckpointManager mngr(ckpt_dir.string(), {.max_to_keep = 1});
    mngr.save(state.step.item<int32_t>(), state);
    mngr.wait_until_finished();
    optim::TrainState restored = mngr.restore(mngr.latest_step(), state);
    bool same = true;
    auto saved_leaves = jx::tree::leaves(state.params), restored_leaves = jx::tree::leaves(restored.params);
    for (size_t i = 0; i < saved_leaves.size(); ++i)
      same = same && jnp::array_equal(saved_leaves[i], restored_leaves[i]).item<bool>();
    std::printf("checkpoint of step %lld restored: %s parameters\n", (long long)*mngr.latest_step(),
                same ? "the same" : "DIFFERENT");
  }
  std::filesystem::remove_all(ckpt_dir);
  std::printf("total time %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}
