// What the training examples (train_cnn, train_resnet) share around their train steps: the
// command line, Fashion-MNIST as jx::data datasets, the training history as a checkpoint
// item, and the line that closes an epoch. Each program keeps its model, its step and its
// loop, the parts that differ and that a reader comes to see.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "progress.h"
#include "report.h"

namespace examples {

struct TrainFlags {
  int epochs = 2;
  int64_t batch_size = 128;
  double lr = 1e-3;
  uint32_t seed = 0;
  std::string data = jx::data::kFashionMnistDir;
  std::string out;
  bool resume = false;
  int64_t limit = 0;  // use only the first `limit` training and test images (0: all)
  int64_t eval_batch_size = 1000;
  bool eval_only = false;  // evaluate the last checkpoint in `out`, no training
  // train_cnn only: the dropout rate, and data-parallel steps over this process' devices
  // (JX_NUM_CPU_DEVICES; each device takes batch_size / devices images of a batch).
  double dropout = 0.1;
  bool data_parallel = false;
};

[[noreturn]] inline void usage(const std::string& program, const std::string& problem) {
  std::fprintf(stderr,
               "%s: %s\nusage: %s [--epochs N] [--batch-size N] [--lr X] [--seed N] [--data DIR] "
               "[--out DIR] "
               "[--resume] [--limit N] [--eval-batch-size N] [--eval-only] [--dropout X] [--data-parallel]\n",
               program.c_str(), problem.c_str(), program.c_str());
  std::exit(2);
}

// The flags of TrainFlags, spelled --epochs, --batch-size, ...; `out` defaults to
// "<program>_out". A bad flag prints the usage and exits with status 2.
inline TrainFlags parse_flags(int argc, char** argv, const std::string& program) {
  TrainFlags o;
  o.out = program + "_out";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(program, a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--epochs")
        o.epochs = std::stoi(value());
      else if (a == "--batch-size")
        o.batch_size = std::stoll(value());
      else if (a == "--lr")
        o.lr = std::stod(value());
      else if (a == "--seed")
        o.seed = uint32_t(std::stoul(value()));
      else if (a == "--data")
        o.data = value();
      else if (a == "--out")
        o.out = value();
      else if (a == "--resume")
        o.resume = true;
      else if (a == "--limit")
        o.limit = std::stoll(value());
      else if (a == "--eval-batch-size")
        o.eval_batch_size = std::stoll(value());
      else if (a == "--eval-only")
        o.eval_only = true;
      else if (a == "--dropout")
        o.dropout = std::stod(value());
      else if (a == "--data-parallel")
        o.data_parallel = true;
      else
        usage(program, "unknown option " + a);
    } catch (const std::logic_error&) {
      usage(program, "bad value for " + a);
    }
  }
  if (o.epochs < 1 || o.batch_size < 1 || o.eval_batch_size < 1 || !(o.lr > 0) || o.limit < 0)
    usage(program, "epochs, batch sizes and lr must be positive, and the limit not negative");
  if (!(o.dropout >= 0 && o.dropout < 1)) usage(program, "the dropout rate must be in [0, 1)");
  return o;
}

// One split of Fashion-MNIST ("train" or "t10k") as {"image": u8[28,28,1], "label": i32[]}
// per example, the first `limit` examples when limit > 0. Exits with a hint when the IDX
// files (compressed or not) are not in `dir`.
inline jx::data::Dataset fashion_mnist(const std::string& program, const std::string& dir,
                                       const std::string& split, int64_t limit) {
  namespace fs = std::filesystem;
  auto path = [&](const std::string& name) {
    for (const char* ext : {"", ".gz"})
      if (fs::exists(fs::path(dir) / (name + ext))) return (fs::path(dir) / (name + ext)).string();
    std::fprintf(stderr,
                 "%s: %s is not in %s (install the Debian package dataset-fashion-mnist, or pass "
                 "--data DIR)\n",
                 program.c_str(), name.c_str(), dir.c_str());
    std::exit(1);
  };
  jx::data::Dataset ds =
      jx::data::from_idx(path(split + "-images-idx3-ubyte"), path(split + "-labels-idx1-ubyte"));
  return limit > 0 ? ds.take(std::min(limit, *ds.size())) : ds;
}

// The history as a checkpoint item (float64 arrays, so that a resumed run prints the restored
// epochs exactly as the run that trained them did), and back.
inline jx::Tree history_tree(const History& h) {
  std::vector<double> loss_step, loss, cols[5];
  for (auto [step, v] : h.step_loss) loss_step.push_back(step), loss.push_back(v);
  for (const auto& e : h.epochs) {
    const double values[5] = {e.train_loss, e.train_accuracy, e.test_accuracy, e.seconds,
                              e.images_per_second};
    for (int k = 0; k < 5; ++k) cols[k].push_back(values[k]);
  }
  auto arr = [](const std::vector<double>& v) {
    return jx::numpy::array(v).reshape({int64_t(v.size())});
  };
  return jx::Tree{{"loss_step", arr(loss_step)},      {"loss", arr(loss)},
                  {"train_loss", arr(cols[0])},       {"train_accuracy", arr(cols[1])},
                  {"test_accuracy", arr(cols[2])},    {"seconds", arr(cols[3])},
                  {"images_per_second", arr(cols[4])}};
}

inline History history_from(const jx::Tree& t) {
  History h;
  auto col = [&](const char* k) { return t[k].array().to_vector<double>(); };
  auto loss_step = col("loss_step"), loss_value = col("loss");
  for (size_t i = 0; i < loss_step.size(); ++i)
    h.step_loss.emplace_back(loss_step[i], loss_value[i]);
  auto loss = col("train_loss"), tacc = col("train_accuracy"), acc = col("test_accuracy"),
       sec = col("seconds"), ips = col("images_per_second");
  for (size_t i = 0; i < loss.size(); ++i)
    h.epochs.push_back({int(i) + 1, loss[i], tacc[i], acc[i], sec[i], ips[i]});
  return h;
}

// --resume: the state and history of the last checkpoint in `checkpoints` (items "state" and
// "history"), restored into `state` and `history`; returns the first epoch still to run.
template <class State>
int resume(jx::ckpt::CheckpointManager& checkpoints, const std::string& out, State& state,
           History& history) {
  if (!checkpoints.latest_step()) {
    std::printf("no checkpoint in %s/checkpoints: starting from scratch\n", out.c_str());
    return 1;
  }
  int64_t done = *checkpoints.latest_step();
  state = checkpoints.restore_item(done, "state", state);
  history = history_from(checkpoints.restore_item(done, "history"));
  std::printf("resumed from %s/checkpoints/%lld: epoch %lld done, test accuracy %.2f%%\n",
              out.c_str(), (long long)done, (long long)done,
              history.epochs.empty() ? 0.0 : 100 * history.epochs.back().test_accuracy);
  return int(done) + 1;
}

// "epoch 1/2  train loss 0.3694  train acc 86.73%  test acc 88.31%  19.0 s  3145 img/s"
inline std::string epoch_line(const EpochMetrics& m, int epochs) {
  char line[200];
  std::snprintf(
      line, sizeof line,
      "epoch %d/%d  train loss %.4f  train acc %.2f%%  test acc %.2f%%  %.1f s  %.0f img/s",
      m.epoch, epochs, m.train_loss, 100 * m.train_accuracy, 100 * m.test_accuracy, m.seconds,
      m.images_per_second);
  return line;
}

// The test set's {right answers, images}: `right(batch)` runs the jitted evaluation of one
// batch and returns its number of right answers as an array.
template <class Right>
std::pair<int64_t, int64_t> evaluate(const jx::data::Dataset& test, Right right) {
  int64_t correct = 0, total = 0;
  for (const jx::Tree& b : test) {
    correct += right(b).template item<int64_t>();
    total += b["label"].array().shape(0);
  }
  return {correct, total};
}

// One epoch: `step(batch, global_step)` for every batch of `train` (it runs the train step and
// returns the batch's loss and number of right answers as arrays), the progress line as it
// goes, then `evaluate()` (the test set's {right, total}) and the epoch's summary line. The
// metrics are appended to `history` and returned.
template <class Step, class Evaluate>
EpochMetrics run_epoch(const jx::data::Dataset& train, int epoch, const TrainFlags& flags,
                       History& history, Step step, Evaluate evaluate) {
  const int64_t steps = *train.size();
  Progress progress(epoch, flags.epochs, steps, flags.batch_size);
  jx::data::Iterator batches(train, epoch - 1, 0);
  double loss_sum = 0, window = 0;
  int64_t correct = 0, done = 0;
  while (std::optional<jx::Tree> batch = batches.next()) {
    const int64_t global = int64_t(epoch - 1) * steps + done;
    double l = 0;
    {
      // One range per step in a trace (JX_PROFILE=dir), as jax.profiler.StepTraceAnnotation;
      // it ends once the step's results are read, i.e. once the step has finished.
      jx::profiler::StepTraceAnnotation traced("train", global);
      auto [loss, right] = step(*batch, global);
      l = loss.template item<double>();
      correct += right.template item<int64_t>();
    }
    loss_sum += l;
    window += l;
    ++done;
    if (done % history.loss_every == 0) {
      history.step_loss.emplace_back(double(global + 1), window / history.loss_every);
      window = 0;
    }
    progress.update(done, loss_sum / double(done),
                    double(correct) / double(done * flags.batch_size));
  }
  const double seconds = progress.elapsed();
  auto [test_correct, test_total] = evaluate();
  EpochMetrics m{epoch,
                 loss_sum / double(done),
                 double(correct) / double(done * flags.batch_size),
                 double(test_correct) / double(test_total),
                 seconds,
                 double(done * flags.batch_size) / seconds};
  history.epochs.push_back(m);
  progress.finish(epoch_line(m, flags.epochs));
  return m;
}

// metrics.csv, metrics.json and curves.svg in `out`.
inline void write_reports(const std::string& out, const History& history,
                          const std::string& title) {
  write_text(out + "/metrics.csv", metrics_csv(history));
  write_text(out + "/metrics.json", metrics_json(history));
  write_text(out + "/curves.svg", curves_svg(history, title));
  std::printf("wrote %s/metrics.csv, metrics.json, curves.svg and checkpoints/\n", out.c_str());
}

}  // namespace examples
