// The tutorial's full example: its CNN (Conv 32 - ReLU - max pool - Conv 64 - ReLU - Dense 256
// - dropout 0.1 - ReLU - Dense 10) trained on Fashion-MNIST with
// optax.chain(clip_by_global_norm(1.0), adamw(1e-3, weight_decay=1e-4)), batch 128, a jitted
// train step and a jitted evaluation, the data through a shuffled, prefetching jx::data
// pipeline, and a checkpoint after every epoch (jx::ckpt::CheckpointManager): rerun with
// --resume and it continues from the last one, to the same result as an uninterrupted run.
//
//   train_cnn [--epochs 2] [--batch-size 128] [--lr 1e-3] [--seed 0]
//             [--data /usr/share/datasets/fashion-mnist] [--out train_cnn_out] [--resume]
//             [--limit N]   (only the first N training and test images: quick runs, tests)
//             [--eval-batch-size N] [--eval-only]  (evaluate the last checkpoint in --out)
//             [--dropout 0.1]
//             [--data-parallel]  (a pmapped step over the CPU devices, JX_NUM_CPU_DEVICES
//                                 per process, of every process when launched with
//                                 `mpirun -np K`; each device takes batch / devices images)
//
// In --out: checkpoints/<epoch>/, metrics.csv, metrics.json and curves.svg (the training loss
// along the steps, train and test accuracy by epoch).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "../common/training.h"
#include "jx/jx.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace jd = jx::data;
namespace nn = jx::nn;
namespace ocp = jx::ckpt;
namespace optim = jx::optim;
namespace fs = std::filesystem;
using jx::Array;
using jx::Tree;

struct CNN : nn::Module<CNN> {
  double dropout = 0.1;

  Array call(Array x, bool deterministic) const {
    x = nn::relu(nn::Conv{.features = 32, .kernel_size = {3, 3}}(x));
    x = nn::max_pool(x, {2, 2}, {.strides = {2, 2}});
    x = nn::relu(nn::Conv{.features = 64, .kernel_size = {3, 3}}(x));
    x = x.reshape({x.shape(0), -1});
    x = nn::Dense{.features = 256}(x);
    x = nn::Dropout{.rate = dropout}(x, deterministic);
    return nn::Dense{.features = 10}(nn::relu(x));
  }
};

int main(int argc, char** argv) {
  // Subnormal floats flushed to zero, as JAX computes on CPU (docs/jit.md, "Subnormal
  // numbers"), set before any thread starts. AdamW's first moment of a weight whose
  // gradient stays 0 (a dead ReLU unit's) shrinks by 0.9 a step and turns subnormal after
  // about 700 steps; updating such values made train_cnn's second epoch 1.3x slower.
  jx::config::set_flush_denormal(true);
  examples::TrainFlags opt = examples::parse_flags(argc, argv, "train_cnn");
  // Under `mpirun -np K` the processes join one run (else this stays a single process).
  // Process 0 prints, writes the reports and the checkpoints.
  jx::distributed::initialize();
  const int processes = jx::process_count(), process = jx::process_index();
  if (processes > 1 && !opt.data_parallel)
    examples::usage("train_cnn", "launched as " + std::to_string(processes) + " processes: pass --data-parallel");
  if (process != 0 && !std::freopen("/dev/null", "w", stdout)) return 1;
  fs::create_directories(opt.out);

  // Data: {"image": u8[28,28,1], "label": i32[]} per example.
  jd::Dataset test = examples::fashion_mnist("train_cnn", opt.data, "t10k", opt.limit).batch(opt.eval_batch_size);
  auto [init_key, shuffle_key, dropout_root] = jr::split<3>(jr::PRNGKey(opt.seed));
  // Epoch e reads permutation(fold_in(shuffle_key, e)): the order is a function of the seed
  // and the epoch, so a resumed run reads what an uninterrupted one would.
  // With K processes, process p reads elements p, p + K, ... of each shuffled epoch in
  // batches of batch / K: step t's K batches together are the one-process run's batch t.
  jd::Dataset train_images = examples::fashion_mnist("train_cnn", opt.data, "train", opt.limit);
  const int64_t steps_per_epoch = *train_images.size() / opt.batch_size;
  if (opt.batch_size % (processes * (opt.data_parallel ? jx::local_device_count() : 1)) != 0)
    examples::usage("train_cnn", "--data-parallel splits a batch over " + std::to_string(jx::device_count()) +
                                     " devices: give a batch size divisible by it");
  jd::Dataset train = train_images.shuffle(shuffle_key)
                          .shard(processes, process)
                          .batch(opt.batch_size / processes, true)
                          .take(steps_per_epoch)
                          .prefetch(2);

  CNN model;
  model.dropout = opt.dropout;
  Tree variables = model.init(init_key, jnp::zeros({1, 28, 28, 1}), true);
  auto tx = optim::chain({optim::clip_by_global_norm(1.0), optim::adamw(opt.lr, {.weight_decay = 1e-4})});
  auto state = optim::TrainState::create(
      [model](const Tree& v, const Array& x) { return model.apply(v, x, true); }, variables["params"], tx);

  // One step: loss, accuracy on the batch, gradients, update. The dropout key of global step
  // t is fold_in(dropout_root, t): a function of the seed and the step, as the data order is.
  auto local_step = [model](const optim::TrainState& s, const Array& images, const Array& labels, const Array& key) {
    Array x = images.astype(jx::DType::Float32) / 255.0;
    auto loss_fn = [&](const Tree& params) {
      Array logits = model.apply(Tree{{"params", params}}, x, false, nn::Rngs{{"dropout", key}});
      Array loss = jnp::mean(optim::softmax_cross_entropy_with_integer_labels(logits, labels));
      return std::make_pair(loss, logits);
    };
    auto [loss, logits, grads] = jx::value_and_grad(loss_fn)(s.params);
    Array correct = jnp::sum((jnp::argmax(logits, 1) == labels).astype(jx::DType::Int32));
    return std::make_tuple(grads, loss, correct);
  };
  auto train_step = jx::jit(
      [local_step](const optim::TrainState& s, const Array& images, const Array& labels, const Array& key) {
        auto [grads, loss, correct] = local_step(s, images, labels, key);
        return std::make_tuple(s.apply_gradients(grads), loss, correct);
      },
      {.donate_argnums = {0}, .name = "train_step"});
  // Data-parallel (jax.pmap): each device takes a slice of the batch and computes its
  // gradients; the update is sharded (optim/sharded.h, ZeRO-1): the gradients are
  // reduce-scattered over the devices of every process, device i updates block i of every
  // parameter with the optimizer state of that block only, and the new parameters are
  // all-gathered, so params stay replicated (out_axes none) and each device does 1/n of
  // AdamW's work. Donated, so that the update runs in place. Each device draws its dropout
  // mask from fold_in(key, global device index), as JAX programs do.
  const int devices = opt.data_parallel ? jx::local_device_count() : 1;
  auto parallel_step = jx::pmap(
      [local_step, tx](const optim::TrainState& s, const Tree& block, const Array& images, const Array& labels,
                       const Array& key) {
        Array mine = jr::fold_in(key, jx::lax::axis_index("batch").astype(jx::DType::UInt32));
        auto [grads, loss, correct] = local_step(s, images, labels, mine);
        auto [params, next_block] = optim::sharded_apply_gradients(tx, grads, block, s.params, "batch");
        return std::make_tuple(params, next_block, jx::lax::pmean(loss, "batch"), jx::lax::psum(correct, "batch"));
      },
      {.axis_name = "batch",
       .in_axes = {jx::none, 0, 0, 0, jx::none},
       .out_axes = {jx::none, 0, jx::none, jx::none},
       .name = "train_step",
       .donate_argnums = {1}});
  // The whole optimizer state from the devices' blocks, for a checkpoint (which then
  // restores on any number of processes and devices).
  auto gather_opt_state = jx::pmap(
      [tx](const Tree& block, const Tree& params) { return optim::gather_opt_state(tx, block, params, "batch"); },
      {.axis_name = "batch", .in_axes = {0, jx::none}, .out_axes = jx::none, .name = "gather_opt_state"});
  Tree blocks;  // this process' devices' blocks of the update (data-parallel only)
  // Runs one step on the batch, updating `state` (and `blocks`); returns the loss and the
  // number of right answers.
  auto step = [&](const Array& images, const Array& labels, const Array& key) {
    if (!opt.data_parallel) {
      auto [next, loss, right] = train_step(state, images, labels, key);
      state = std::move(next);
      return std::make_pair(loss, right);
    }
    // Device d takes examples d, d + devices, ... of the batch, as process p takes examples
    // p, p + processes, ... of the data (shard): so the devices of K processes x 1 device
    // see the same examples as K devices in one process.
    auto split = [&](const Array& a) {
      std::vector<int64_t> shape{a.shape(0) / devices, devices};
      for (int64_t d = 1; d < a.ndim(); ++d) shape.push_back(a.shape(d));
      return a.reshape(shape).swapaxes(0, 1);
    };
    auto [params, next_blocks, loss, right] = parallel_step(state, blocks, split(images), split(labels), key);
    state.params = std::move(params);
    state.step = state.step + 1;
    blocks = std::move(next_blocks);
    return std::make_pair(loss, right);
  };
  auto eval_step = jx::jit(
      [model](const Tree& params, const Array& images, const Array& labels) {
        Array logits = model.apply(Tree{{"params", params}}, images.astype(jx::DType::Float32) / 255.0, true);
        return jnp::sum((jnp::argmax(logits, 1) == labels).astype(jx::DType::Int32));
      },
      {.name = "eval_step"});

  auto evaluate = [&](const Tree& params) {
    return examples::evaluate(
        test, [&](const Tree& b) { return eval_step(params, b["image"].array(), b["label"].array()); });
  };

  ocp::CheckpointManager checkpoints(opt.out + "/checkpoints", {.max_to_keep = 2});
  History history;
  if (opt.eval_only) {
    if (!checkpoints.latest_step()) {
      std::fprintf(stderr, "train_cnn: --eval-only needs a checkpoint in %s/checkpoints; train first\n",
                   opt.out.c_str());
      return 1;
    }
    examples::resume(checkpoints, opt.out, state, history);
    auto [correct, total] = evaluate(state.params);
    std::printf("test accuracy %.6f (%lld of %lld images)\n", double(correct) / double(total), (long long)correct,
                (long long)total);
    return 0;
  }
  const int first_epoch = opt.resume ? examples::resume(checkpoints, opt.out, state, history) : 1;
  if (opt.data_parallel) {  // the blocks of the state as it stands (fresh, or resumed from any process count)
    blocks = optim::shard_update_state(tx, state.params, state.opt_state);
    state.opt_state = Tree();  // in blocks; a checkpoint gathers it
  }
  std::printf("CNN on Fashion-MNIST: %lld steps of %lld per epoch, %d epochs, adamw(%g), seed %u%s\n",
              (long long)steps_per_epoch, (long long)opt.batch_size, opt.epochs, opt.lr, opt.seed,
              opt.data_parallel ? (", data-parallel over " + std::to_string(jx::device_count()) + " devices" +
                                   (processes > 1 ? " in " + std::to_string(processes) + " processes" : ""))
                                      .c_str()
                                : "");

  for (int epoch = first_epoch; epoch <= opt.epochs; ++epoch) {
    examples::run_epoch(
        train, epoch, opt, history,
        [&](const Tree& batch, int64_t global) {
          Array key = jr::fold_in(dropout_root, uint32_t(global));
          return step(batch["image"].array(), batch["label"].array(), key);
        },
        [&] { return evaluate(state.params); });
    optim::TrainState saved = state;
    if (opt.data_parallel) saved.opt_state = gather_opt_state(blocks, state.params);
    checkpoints.save_items(epoch, {{"state", Tree::from(saved)}, {"history", examples::history_tree(history)}});
  }
  checkpoints.wait_until_finished();

  if (process == 0) examples::write_reports(opt.out, history, "CNN on Fashion-MNIST (jx)");
  return 0;
}
