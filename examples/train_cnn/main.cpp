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
//
// In --out: checkpoints/<epoch>/, metrics.csv, metrics.json and curves.svg (the training loss
// along the steps, train and test accuracy by epoch).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "progress.h"
#include "report.h"

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
  Array call(Array x, bool deterministic) const {
    x = nn::relu(nn::Conv{.features = 32, .kernel_size = {3, 3}}(x));
    x = nn::max_pool(x, {2, 2}, {.strides = {2, 2}});
    x = nn::relu(nn::Conv{.features = 64, .kernel_size = {3, 3}}(x));
    x = x.reshape({x.shape(0), -1});
    x = nn::Dense{.features = 256}(x);
    x = nn::Dropout{.rate = 0.1}(x, deterministic);
    return nn::Dense{.features = 10}(nn::relu(x));
  }
};

struct Options {
  int epochs = 2;
  int64_t batch_size = 128;
  double lr = 1e-3;
  uint32_t seed = 0;
  std::string data = jd::kFashionMnistDir;
  std::string out = "train_cnn_out";
  bool resume = false;
  int64_t limit = 0;  // use only the first `limit` training and test images (0: all)
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "train_cnn: %s\nusage: train_cnn [--epochs N] [--batch-size N] [--lr X] [--seed N] "
               "[--data DIR] [--out DIR] [--resume] [--limit N]\n",
               problem.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--epochs") o.epochs = std::stoi(value());
      else if (a == "--batch-size") o.batch_size = std::stoll(value());
      else if (a == "--lr") o.lr = std::stod(value());
      else if (a == "--seed") o.seed = uint32_t(std::stoul(value()));
      else if (a == "--data") o.data = value();
      else if (a == "--out") o.out = value();
      else if (a == "--resume") o.resume = true;
      else if (a == "--limit") o.limit = std::stoll(value());
      else usage("unknown option " + a);
    } catch (const std::logic_error&) {
      usage("bad value for " + a);
    }
  }
  if (o.epochs < 1 || o.batch_size < 1 || !(o.lr > 0) || o.limit < 0)
    usage("epochs, batch size and lr must be positive, and the limit not negative");
  return o;
}

// The IDX file `name` in `dir`, compressed or not.
std::string idx_path(const std::string& dir, const std::string& name) {
  for (const char* ext : {"", ".gz"})
    if (fs::exists(fs::path(dir) / (name + ext))) return (fs::path(dir) / (name + ext)).string();
  std::fprintf(stderr, "train_cnn: %s is not in %s (install the Debian package dataset-fashion-mnist, "
               "or pass --data DIR)\n", name.c_str(), dir.c_str());
  std::exit(1);
}

// The history as a checkpoint item (arrays), and back.
Tree history_tree(const History& h) {
  std::vector<float> loss_step, loss;
  for (auto [step, v] : h.step_loss) loss_step.push_back(float(step)), loss.push_back(float(v));
  std::vector<float> cols[5];
  for (const auto& e : h.epochs)
    for (int k = 0; k < 5; ++k)
      cols[k].push_back(float(k == 0 ? e.train_loss : k == 1 ? e.train_accuracy : k == 2 ? e.test_accuracy
                                       : k == 3 ? e.seconds : e.images_per_second));
  auto arr = [](const std::vector<float>& v) { return jnp::array(v).reshape({int64_t(v.size())}); };
  return Tree{{"loss_step", arr(loss_step)}, {"loss", arr(loss)}, {"train_loss", arr(cols[0])}, {"train_accuracy", arr(cols[1])},
              {"test_accuracy", arr(cols[2])}, {"seconds", arr(cols[3])},
              {"images_per_second", arr(cols[4])}};
}

History history_from(const Tree& t) {
  History h;
  auto col = [&](const char* k) { return t[k].array().to_vector<float>(); };
  auto loss_step = col("loss_step"), loss_value = col("loss");
  for (size_t i = 0; i < loss_step.size(); ++i) h.step_loss.emplace_back(loss_step[i], loss_value[i]);
  auto loss = col("train_loss"), tacc = col("train_accuracy"), acc = col("test_accuracy"),
       sec = col("seconds"), ips = col("images_per_second");
  for (size_t i = 0; i < loss.size(); ++i)
    h.epochs.push_back({int(i) + 1, loss[i], tacc[i], acc[i], sec[i], ips[i]});
  return h;
}

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);
  fs::create_directories(opt.out);

  // Data: {"image": u8[28,28,1], "label": i32[]} per example.
  jd::Dataset train_source = jd::from_idx(idx_path(opt.data, "train-images-idx3-ubyte"),
                                          idx_path(opt.data, "train-labels-idx1-ubyte"));
  jd::Dataset test = jd::from_idx(idx_path(opt.data, "t10k-images-idx3-ubyte"),
                                  idx_path(opt.data, "t10k-labels-idx1-ubyte"));
  if (opt.limit > 0) test = test.take(std::min(opt.limit, *test.size()));
  test = test.batch(1000);
  auto [init_key, shuffle_key, dropout_root] = jr::split<3>(jr::PRNGKey(opt.seed));
  // Epoch e reads permutation(fold_in(shuffle_key, e)): the order is a function of the seed
  // and the epoch, so a resumed run reads what an uninterrupted one would.
  if (opt.limit > 0) train_source = train_source.take(std::min(opt.limit, *train_source.size()));
  jd::Dataset train = train_source.shuffle(shuffle_key).batch(opt.batch_size, true).prefetch(2);
  const int64_t steps_per_epoch = *train.size();

  CNN model;
  Tree variables = model.init(init_key, jnp::zeros({1, 28, 28, 1}), true);
  auto tx = optim::chain({optim::clip_by_global_norm(1.0), optim::adamw(opt.lr, {.weight_decay = 1e-4})});
  auto state = optim::TrainState::create(
      [model](const Tree& v, const Array& x) { return model.apply(v, x, true); }, variables["params"], tx);

  // One step: loss, accuracy on the batch, gradients, update. The dropout key of global step
  // t is fold_in(dropout_root, t): a function of the seed and the step, as the data order is.
  auto train_step = jx::jit(
      [model](const optim::TrainState& s, const Array& images, const Array& labels, const Array& key) {
        Array x = images.astype(jx::DType::Float32) / 255.0;
        auto loss_fn = [&](const Tree& params) {
          Array logits = model.apply(Tree{{"params", params}}, x, false, nn::Rngs{{"dropout", key}});
          Array loss = jnp::mean(optim::softmax_cross_entropy_with_integer_labels(logits, labels));
          return std::make_pair(loss, logits);
        };
        auto [loss, logits, grads] = jx::value_and_grad(loss_fn)(s.params);
        Array correct = jnp::sum((jnp::argmax(logits, 1) == labels).astype(jx::DType::Int32));
        return std::make_tuple(s.apply_gradients(grads), loss, correct);
      },
      {.donate_argnums = {0}, .name = "train_step"});
  auto eval_step = jx::jit(
      [model](const Tree& params, const Array& images, const Array& labels) {
        Array logits = model.apply(Tree{{"params", params}}, images.astype(jx::DType::Float32) / 255.0, true);
        return jnp::sum((jnp::argmax(logits, 1) == labels).astype(jx::DType::Int32));
      },
      {.name = "eval_step"});

  ocp::CheckpointManager checkpoints(opt.out + "/checkpoints", {.max_to_keep = 2});
  History history;
  int first_epoch = 1;
  if (opt.resume && checkpoints.latest_step()) {
    int64_t done = *checkpoints.latest_step();
    state = checkpoints.restore_item(done, "state", state);
    history = history_from(checkpoints.restore_item(done, "history"));
    first_epoch = int(done) + 1;
    std::printf("resumed from %s/checkpoints/%lld: epoch %lld done, test accuracy %.2f%%\n",
                opt.out.c_str(), (long long)done, (long long)done,
                history.epochs.empty() ? 0.0 : 100 * history.epochs.back().test_accuracy);
  } else if (opt.resume) {
    std::printf("no checkpoint in %s/checkpoints: starting from scratch\n", opt.out.c_str());
  }
  std::printf("CNN on Fashion-MNIST: %lld steps of %lld per epoch, %d epochs, adamw(%g), seed %u\n",
              (long long)steps_per_epoch, (long long)opt.batch_size, opt.epochs, opt.lr, opt.seed);

  for (int epoch = first_epoch; epoch <= opt.epochs; ++epoch) {
    Progress progress(epoch, opt.epochs, steps_per_epoch, opt.batch_size);
    jd::Iterator batches(train, epoch - 1, 0);
    double loss_sum = 0, window = 0;
    int64_t correct = 0, step = 0;
    while (std::optional<Tree> batch = batches.next()) {
      int64_t global = int64_t(epoch - 1) * steps_per_epoch + step;
      Array key = jr::fold_in(dropout_root, uint32_t(global));
      auto [next, loss, right] = train_step(state, (*batch)["image"].array(), (*batch)["label"].array(), key);
      state = std::move(next);
      double l = loss.item<double>();
      loss_sum += l;
      window += l;
      correct += right.item<int64_t>();
      ++step;
      if (step % history.loss_every == 0) {
        history.step_loss.emplace_back(double(global + 1), window / history.loss_every);
        window = 0;
      }
      progress.update(step, loss_sum / double(step), double(correct) / double(step * opt.batch_size));
    }
    double seconds = progress.elapsed();
    int64_t test_correct = 0, test_total = 0;
    for (const Tree& b : test) {
      test_correct += eval_step(state.params, b["image"].array(), b["label"].array()).item<int64_t>();
      test_total += b["label"].array().shape(0);
    }
    EpochMetrics m{epoch, loss_sum / double(step), double(correct) / double(step * opt.batch_size),
                   double(test_correct) / double(test_total), seconds,
                   double(step * opt.batch_size) / seconds};
    history.epochs.push_back(m);
    char line[200];
    std::snprintf(line, sizeof line,
                  "epoch %d/%d  train loss %.4f  train acc %.2f%%  test acc %.2f%%  %.1f s  %.0f img/s",
                  epoch, opt.epochs, m.train_loss, 100 * m.train_accuracy, 100 * m.test_accuracy,
                  m.seconds, m.images_per_second);
    progress.finish(line);
    checkpoints.save_items(epoch, {{"state", Tree::from(state)}, {"history", history_tree(history)}});
  }
  checkpoints.wait_until_finished();

  write_text(opt.out + "/metrics.csv", metrics_csv(history));
  write_text(opt.out + "/metrics.json", metrics_json(history));
  write_text(opt.out + "/curves.svg", curves_svg(history, "CNN on Fashion-MNIST (jx)"));
  std::printf("wrote %s/metrics.csv, metrics.json, curves.svg and checkpoints/\n", opt.out.c_str());
  return 0;
}
