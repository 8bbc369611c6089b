// A small ResNet with BatchNorm (resnet.h) trained on Fashion-MNIST: train_cnn's job
// (../train_cnn/main.cpp) for a model with state that is not a parameter. The running
// averages of every BatchNorm live in the "batch_stats" collection, carried in an
// optim::TrainStateWithBatchStats next to the parameters (Flax's ImageNet example):
//   - the jitted train step applies the model with train = true and
//     nn::Mutable{"batch_stats"}: BatchNorm normalizes with the batch's statistics and
//     the step returns the updated running averages with the new parameters;
//   - the jitted evaluation applies it with train = false and no Mutable: BatchNorm
//     normalizes with the running averages, which are read-only there (an update would
//     throw), so each example's prediction does not depend on the rest of its batch.
// Optimizer chain(clip_by_global_norm(1.0), adamw(1e-3, weight_decay=1e-4)), batch 128, the
// data through a shuffled, prefetching jx::data pipeline, a checkpoint after every epoch
// (jx::ckpt::CheckpointManager; --resume continues from the last one, to the same result as
// an uninterrupted run).
//
//   train_resnet [--epochs 2] [--batch-size 128] [--lr 1e-3] [--seed 0]
//                [--data /usr/share/datasets/fashion-mnist] [--out train_resnet_out] [--resume]
//                [--limit N]             (only the first N training and test images)
//                [--eval-batch-size N]   (test batches of N images, default 1000)
//                [--eval-only]           (evaluate the last checkpoint in --out, no training)
//
// In --out: checkpoints/<epoch>/, metrics.csv, metrics.json and curves.svg.
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include "../common/training.h"
#include "jx/jx.h"
#include "resnet.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace jd = jx::data;
namespace nn = jx::nn;
namespace ocp = jx::ckpt;
namespace optim = jx::optim;
namespace fs = std::filesystem;
using jx::Array;
using jx::Tree;
using State = optim::TrainStateWithBatchStats;

// The first BatchNorm's running averages against their initial values (mean 0, var 1): after
// training they must have moved, or the train step dropped the updated batch_stats.
void print_first_batch_norm(const Tree& batch_stats) {
  Array mean = batch_stats["BatchNorm_0"]["mean"].array(), var = batch_stats["BatchNorm_0"]["var"].array();
  std::printf("BatchNorm_0 running averages (%lld channels): mean |mean| %.6f (initially 0), "
              "mean var %.6f (initially 1)\n",
              (long long)mean.shape(0), jnp::mean(jnp::abs(mean)).item<double>(), jnp::mean(var).item<double>());
}

int64_t parameter_count(const Tree& params) {
  int64_t n = 0;
  for (const Array& leaf : jx::tree::leaves(params)) n += leaf.size();
  return n;
}

int main(int argc, char** argv) {
  // Subnormal floats flushed to zero, as JAX computes on CPU (docs/jit.md, "Subnormal
  // numbers"), set before any thread starts. AdamW's first moment of a weight whose
  // gradient stays 0 (a dead ReLU unit's) shrinks by 0.9 a step and turns subnormal after
  // about 700 steps; updating such values made train_cnn's second epoch 1.3x slower.
  jx::config::set_flush_denormal(true);
  examples::TrainFlags opt = examples::parse_flags(argc, argv, "train_resnet");
  if (opt.data_parallel || opt.dropout != examples::TrainFlags{}.dropout)
    examples::usage("train_resnet", "--dropout and --data-parallel are train_cnn's (this model has no dropout, "
                                    "and its BatchNorm has no cross-device statistics yet)");
  fs::create_directories(opt.out);

  // Data: {"image": u8[28,28,1], "label": i32[]} per example.
  jd::Dataset test = examples::fashion_mnist("train_resnet", opt.data, "t10k", opt.limit).batch(opt.eval_batch_size);
  auto [init_key, shuffle_key] = jr::split<2>(jr::PRNGKey(opt.seed));
  // Epoch e reads permutation(fold_in(shuffle_key, e)): the order is a function of the seed
  // and the epoch, so a resumed run reads what an uninterrupted one would.
  jd::Dataset train = examples::fashion_mnist("train_resnet", opt.data, "train", opt.limit)
                          .shuffle(shuffle_key)
                          .batch(opt.batch_size, true)
                          .prefetch(2);
  const int64_t steps_per_epoch = *train.size();

  // Flax:
  //   variables = model.init(key, jnp.zeros((1, 28, 28, 1)), train=False)
  //   class TrainState(train_state.TrainState): batch_stats: Any
  //   state = TrainState.create(apply_fn=model.apply, params=variables['params'], tx=tx,
  //                             batch_stats=variables['batch_stats'])
  resnet::ResNet model;
  const Tree variables = model.init(init_key, jnp::zeros({1, 28, 28, 1}), false);
  auto apply = [model](const Tree& v, const Array& x, bool train) -> std::pair<Array, Tree> {
    if (!train) return {model.apply(v, x, false), v["batch_stats"]};
    auto [logits, updates] = model.apply(v, x, true, nn::Mutable{"batch_stats"});
    return {logits, updates["batch_stats"]};
  };
  auto tx = optim::chain({optim::clip_by_global_norm(1.0), optim::adamw(opt.lr, {.weight_decay = 1e-4})});
  State state = State::create(apply, variables["params"], tx, variables["batch_stats"]);

  // Flax:
  //   def loss_fn(params):
  //     logits, updates = state.apply_fn({'params': params, 'batch_stats': state.batch_stats},
  //                                      images, train=True, mutable=['batch_stats'])
  //     return loss, (logits, updates)
  //   (loss, (logits, updates)), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
  //   state = state.apply_gradients(grads=grads, batch_stats=updates['batch_stats'])
  auto train_step = jx::jit(
      [](const State& s, const Array& images, const Array& labels) {
        Array x = images.astype(jx::DType::Float32) / 255.0;
        auto loss_fn = [&](const Tree& params) {
          auto [logits, stats] = s.apply_fn(Tree{{"params", params}, {"batch_stats", s.batch_stats}}, x, true);
          Array loss = jnp::mean(optim::softmax_cross_entropy_with_integer_labels(logits, labels));
          return std::make_pair(loss, std::make_pair(logits, stats));
        };
        auto [loss, aux, grads] = jx::value_and_grad(loss_fn, jx::has_aux)(s.params);
        const auto& [logits, stats] = aux;
        Array correct = jnp::sum((jnp::argmax(logits, 1) == labels).astype(jx::DType::Int32));
        return std::make_tuple(s.apply_gradients(grads, stats), loss, correct);
      },
      {.donate_argnums = {0}, .name = "train_step"});
  // Running averages: train = false, and no Mutable, so batch_stats cannot change here.
  auto eval_step = jx::jit(
      [](const State& s, const Array& images, const Array& labels) {
        Array logits = s.apply_fn(s.variables(), images.astype(jx::DType::Float32) / 255.0, false).first;
        return jnp::sum((jnp::argmax(logits, 1) == labels).astype(jx::DType::Int32));
      },
      {.name = "eval_step"});
  auto evaluate = [&](const State& s) {
    return examples::evaluate(
        test, [&](const Tree& b) { return eval_step(s, b["image"].array(), b["label"].array()); });
  };

  ocp::CheckpointManager checkpoints(opt.out + "/checkpoints", {.max_to_keep = 2});
  History history;
  if (opt.eval_only) {
    if (!checkpoints.latest_step()) {
      std::fprintf(stderr, "train_resnet: --eval-only needs a checkpoint in %s/checkpoints; train first "
                   "(the same --out without --eval-only)\n", opt.out.c_str());
      return 1;
    }
    int64_t done = *checkpoints.latest_step();
    state = checkpoints.restore_item(done, "state", state);
    auto [correct, total] = evaluate(state);
    std::printf("checkpoint %s/checkpoints/%lld: test accuracy %.6f (%lld of %lld images, batches of %lld)\n",
                opt.out.c_str(), (long long)done, double(correct) / double(total), (long long)correct,
                (long long)total, (long long)opt.eval_batch_size);
    print_first_batch_norm(state.batch_stats);
    return 0;
  }
  const int first_epoch = opt.resume ? examples::resume(checkpoints, opt.out, state, history) : 1;
  std::printf("ResNet (%lld parameters) on Fashion-MNIST: %lld steps of %lld per epoch, %d epochs, adamw(%g), "
              "seed %u\n",
              (long long)parameter_count(state.params), (long long)steps_per_epoch, (long long)opt.batch_size,
              opt.epochs, opt.lr, opt.seed);

  for (int epoch = first_epoch; epoch <= opt.epochs; ++epoch) {
    examples::run_epoch(
        train, epoch, opt, history,
        [&](const Tree& batch, int64_t) {
          auto [next, loss, right] = train_step(state, batch["image"].array(), batch["label"].array());
          state = std::move(next);
          return std::make_pair(loss, right);
        },
        [&] { return evaluate(state); });
    checkpoints.save_items(epoch, {{"state", Tree::from(state)}, {"history", examples::history_tree(history)}});
  }
  checkpoints.wait_until_finished();
  print_first_batch_norm(state.batch_stats);

  examples::write_reports(opt.out, history, "ResNet with BatchNorm on Fashion-MNIST (jx)");
  return 0;
}
