// Data-parallel training over MPI processes against one process (issue 18): the tutorial
// CNN's step (bench/cnn_step.h) at one global batch, either
//   - in one process, jitted, with its OpenMP threads, or
//   - under `mpirun -np K`: pmapped over the processes (one device each), each process
//     taking batch / K images, the gradients averaged with pmean (an MPI all-reduce).
// It prints the median step time, and in the multi-process case what the gradient
// all-reduce costs: jx's pmean over the gradient tree alone against MPI_Allreduce called
// directly on the same number of float32s (what osu_allreduce would time for that message;
// Debian ships no OSU or Intel MPI benchmark). bench/data_parallel.sh runs both ways, in
// turns, and prints the throughput ratio.
//
//   OMP_NUM_THREADS=2 build/bench/bench_data_parallel [--batch=128] [--steps=30] [--pmap=1]
//   (--pmap=1: the pmapped step in one process, to separate pmap's cost from MPI's;
//    --shard-update=1: the weight update sharded over the processes, ZeRO-1;
//    --checksum=1: print sum(|p|) per parameter at the end, to compare the two updates)
//   mpirun -np 2 --bind-to core -x OMP_NUM_THREADS=1 build/bench/bench_data_parallel
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cnn_step.h"
#include "jx/jx.h"

namespace {

namespace jnp = jx::numpy;
namespace jr = jx::random;
using jx::Array;
using jx::Tree;

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median over `steps` timed calls of f, after `warmup` untimed ones; every process times
// the same calls, and the slowest process' median is the run's.
template <class F>
double time_ms(int warmup, int steps, F f) {
  for (int i = 0; i < warmup; ++i) f(i);
  std::vector<double> t;
  for (int i = 0; i < steps; ++i) {
    const double start = now_ms();
    f(warmup + i);
    t.push_back(now_ms() - start);
  }
  double m = median(t);
  if (jx::process_count() > 1) MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

int64_t flag(int argc, char** argv, const char* name, int64_t fallback) {
  const std::string prefix = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) return std::atoll(argv[i] + prefix.size());
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  jx::distributed::initialize();
  const int64_t batch = flag(argc, argv, "batch", 128), steps = flag(argc, argv, "steps", 30);
  const int processes = jx::process_count();
  if (batch % processes != 0) {
    std::fprintf(stderr, "bench_data_parallel: --batch=%lld is not divisible by %d processes\n", (long long)batch,
                 processes);
    return 2;
  }
  const int64_t mine = batch / processes;
  // This process' share of a fresh random global batch per step.
  auto batch_of = [&](int step) {
    Array key = jr::fold_in(jr::PRNGKey(1), uint32_t(step * processes + jx::process_index()));
    auto [kx, ky] = jr::split<2>(key);
    return std::make_pair(jr::uniform(kx, {mine, 28, 28, 1}), jr::randint(ky, {mine}, 0, 10));
  };
  jx::optim::TrainState state = bench::cnn_state(jnp::zeros({1, 28, 28, 1}));
  const Array dropout_key = jr::PRNGKey(2);

  if (processes == 1 && !flag(argc, argv, "pmap", 0)) {
    auto step = jx::jit([](const jx::optim::TrainState& s, const Array& x, const Array& y, const Array& k) {
      return bench::cnn_step(s, x, y, k);
    }, {.donate_argnums = {0}});
    const double ms = time_ms(5, int(steps), [&](int i) {
      auto [x, y] = batch_of(i);
      auto [next, loss] = step(state, x, y, jr::fold_in(dropout_key, uint32_t(i)));
      state = std::move(next);
      loss.item<float>();
    });
    std::printf("one process, %d threads: batch %lld, %.2f ms/step, %.0f images/s\n", omp_get_max_threads(),
                (long long)batch, ms, double(batch) / ms * 1e3);
    return 0;
  }

  if (flag(argc, argv, "shard-update", 0)) {
    // Weight-update sharding (optim/sharded.h, ZeRO-1; XLA's cross-replica sharding of the
    // weight update): each process reduce-scatters the gradients, clips and updates its
    // block of every parameter with AdamW state for that block only, and all-gathers the new
    // parameters; what train_cnn --data-parallel runs.
    namespace optim = jx::optim;
    const optim::GradientTransformation tx = state.tx;
    jx::Tree params = state.params;
    jx::Tree blocks = optim::shard_update_state(tx, params, state.opt_state);
    auto sharded_step = jx::pmap(
        [tx](const Tree& full, const Tree& block, const Array& x, const Array& y, const Array& k) {
          auto [loss, grads] = bench::cnn_loss_and_grads(full, x, y, k);
          auto [next, next_block] = optim::sharded_apply_gradients(tx, grads, block, full, "batch");
          return std::make_tuple(next, next_block, jx::lax::pmean(loss, "batch"));
        },
        {.axis_name = "batch",
         .in_axes = {jx::none, 0, 0, 0, jx::none},
         .out_axes = {jx::none, 0, jx::none},
         .donate_argnums = {1}});
    const double ms = time_ms(5, int(steps), [&](int i) {
      auto [x, y] = batch_of(i);
      auto [next, next_blocks, loss] = sharded_step(params, blocks, x.reshape({1, mine, 28, 28, 1}),
                                                    y.reshape({1, mine}), jr::fold_in(dropout_key, uint32_t(i)));
      params = std::move(next);
      blocks = std::move(next_blocks);
      loss.item<float>();
    });
    if (flag(argc, argv, "checksum", 0) && jx::process_index() == 0)
      for (const Array& a : jx::tree::leaves(params)) std::printf("checksum %.9g\n", jnp::sum(jnp::abs(a)).item<float>());
    if (jx::process_index() == 0)
      std::printf("%d processes, %d thread(s) each, sharded update: batch %lld (%lld each), %.2f ms/step, "
                  "%.0f images/s\n", processes, omp_get_max_threads(), (long long)batch, (long long)mine, ms,
                  double(batch) / ms * 1e3);
    return 0;
  }

  // Data-parallel: one device per process (JX_NUM_CPU_DEVICES unset), axis "batch".
  auto step = jx::pmap(
      [](const jx::optim::TrainState& s, const Array& x, const Array& y, const Array& k) {
        auto [loss, grads] = bench::cnn_loss_and_grads(s.params, x, y, k);
        return std::make_pair(s.apply_gradients(jx::lax::pmean(grads, "batch")), jx::lax::pmean(loss, "batch"));
      },
      {.axis_name = "batch", .in_axes = {jx::none, 0, 0, jx::none}, .out_axes = jx::none, .donate_argnums = {0}});
  const double ms = time_ms(5, int(steps), [&](int i) {
    auto [x, y] = batch_of(i);
    auto [next, loss] = step(state, x.reshape({1, mine, 28, 28, 1}), y.reshape({1, mine}),
                             jr::fold_in(dropout_key, uint32_t(i)));
    state = std::move(next);
    loss.item<float>();
  });
  if (flag(argc, argv, "checksum", 0) && jx::process_index() == 0)
    for (const Array& a : jx::tree::leaves(state.params)) std::printf("checksum %.9g\n", jnp::sum(jnp::abs(a)).item<float>());

  // The all-reduce alone: jx's pmean over a gradient-shaped tree, and MPI on the same floats.
  const Tree grads = jx::tree::map([](const Array& a) { return a.reshape([&] {
    jx::Shape s{1};
    for (int64_t d : a.shape()) s.push_back(d);
    return s;
  }()); }, state.params);  // one slice per process
  int64_t count = 0, leaves = 0;
  for (const Array& a : jx::tree::leaves(grads)) count += a.size(), ++leaves;
  auto mean = jx::pmap([](const Tree& g) { return jx::lax::pmean(g, "batch"); },
                       {.axis_name = "batch", .out_axes = jx::none});
  const double jx_ms = time_ms(3, 20, [&](int) { mean(grads); });
  auto sum = jx::pmap([](const Tree& g) { return jx::lax::psum(g, "batch"); },
                      {.axis_name = "batch", .out_axes = jx::none});
  const double sum_ms = time_ms(3, 20, [&](int) { sum(grads); });
  auto same = jx::pmap([](const Tree& g) { return g; }, {.axis_name = "batch", .out_axes = jx::none});
  const double pmap_ms = time_ms(3, 20, [&](int) { same(grads); });

  std::vector<float> buf(size_t(count), 1.0f);
  const double mpi_ms = processes == 1 ? 0.0 : time_ms(3, 20, [&](int) {
    MPI_Allreduce(MPI_IN_PLACE, buf.data(), int(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  });
  if (jx::process_index() == 0) {
    std::printf("%d processes, %d thread(s) each: batch %lld (%lld each), %.2f ms/step, %.0f images/s\n",
                processes, omp_get_max_threads(), (long long)batch, (long long)mine, ms, double(batch) / ms * 1e3);
    std::printf("gradient all-reduce, %lld float32 in %lld leaves (%.1f MB): jx pmean %.2f ms, "
                "MPI_Allreduce %.2f ms (%.2fx), %.0f%% of the step\n",
                (long long)count, (long long)leaves, double(count) * 4 / 1e6, jx_ms, mpi_ms, jx_ms / mpi_ms,
                100.0 * jx_ms / ms);
    std::printf("  of which psum %.2f ms (the division by the axis size is the rest); a pmap without "
                "collectives %.2f ms\n",
                sum_ms, pmap_ms);
  }
  return 0;
}
