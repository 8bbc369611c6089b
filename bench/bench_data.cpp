// jx::data pipelines.
//
// 1. Prefetch overlap. A loop whose "training step" busy-waits T1 ms per batch reads batches
//    of 32 examples from a pipeline whose per-example map does real work (uint8 -> float32,
//    then `reps` rounds of tanh(x @ W) on the 28x28 image) calibrated to T2 ms per batch.
//    Without prefetch a batch costs T1 + T2; with prefetch(2) the map runs on the producer
//    thread during the step, so about max(T1, T2). Counters: T1_ms, T2_ms (the map alone,
//    measured in the same run), ms_per_batch, and ms_per_batch divided by T1 + T2 and by
//    max(T1, T2).
// 2. Overhead. shuffle + batch(128) of Fashion-MNIST-sized arrays (uint8 [60000,28,28,1],
//    int32 [60000]) against a plain take of the same rows with a precomputed order, and
//    against the same pipeline with an identity map before batch (128 rows cut and stacked
//    instead of one take per leaf).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>

#include "jx/jx.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
using jx::Array;
using jx::Tree;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int64_t kBatch = 32;

void busy_wait_ms(double ms) {
  auto end = Clock::now() + std::chrono::duration<double, std::milli>(ms);
  while (Clock::now() < end) {
  }
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The per-example map: real work whose cost grows with reps.
jx::data::MapFn work_map(int reps) {
  Array w = jr::normal(jr::PRNGKey(1), {28, 28}) * 0.1;
  return [w, reps](const Tree& t) {
    Array x = t["image"].array().astype(jx::DType::Float32).reshape({28, 28}) / 255.0;
    for (int r = 0; r < reps; ++r) x = jnp::tanh(jnp::matmul(x, w));
    return Tree{{"image", x}, {"label", t["label"].array()}};
  };
}

Tree small_data() {
  return Tree{{"image", jr::randint(jr::PRNGKey(0), {4096, 28, 28, 1}, 0, 256).astype(jx::DType::UInt8)},
              {"label", jr::randint(jr::PRNGKey(1), {4096}, 0, 10)}};
}

// Rounds of tanh(x @ W) that make the map cost about t2_ms per batch of kBatch examples.
int calibrate_reps(double t2_ms) {
  static const double us_per_rep = [] {
    jx::data::MapFn f = work_map(50);
    Tree e = jx::data::from_arrays(small_data())[0];
    f(e);
    auto t0 = Clock::now();
    for (int i = 0; i < 20; ++i) f(e);
    return ms_since(t0) * 1000.0 / (20 * 50);
  }();
  return std::max(1, int(t2_ms * 1000.0 / (us_per_rep * kBatch) + 0.5));
}

jx::data::Dataset overlap_pipeline(int reps, int64_t prefetch) {
  jx::data::Dataset ds = jx::data::from_arrays(small_data())
                             .shuffle(jr::PRNGKey(2))
                             .map(work_map(reps))
                             .batch(kBatch, true)
                             .repeat();
  return prefetch > 0 ? ds.prefetch(prefetch) : ds;
}

// Args: prefetch buffer (0: none), T1 in ms, T2 in ms.
void BM_prefetch_overlap(benchmark::State& st) {
  int64_t prefetch = st.range(0);
  double t1 = double(st.range(1)), t2_goal = double(st.range(2));
  int reps = calibrate_reps(t2_goal);
  double t2 = 0;
  {  // the map's real cost per batch, alone
    jx::data::Iterator it = overlap_pipeline(reps, 0).iterator();
    it.next();
    auto t0 = Clock::now();
    for (int i = 0; i < 10; ++i) it.next();
    t2 = ms_since(t0) / 10;
  }
  jx::data::Iterator it = overlap_pipeline(reps, prefetch).iterator();
  for (int i = 0; i < 3; ++i) {  // warm: the first shuffle, the buffer filled
    it.next();
    busy_wait_ms(t1);
  }
  auto t0 = Clock::now();
  for (auto _ : st) {
    std::optional<Tree> b = it.next();
    benchmark::DoNotOptimize(b);
    busy_wait_ms(t1);
  }
  double per_batch = ms_since(t0) / double(st.iterations());
  st.counters["T1_ms"] = t1;
  st.counters["T2_ms"] = t2;
  st.counters["ms_per_batch"] = per_batch;
  st.counters["vs_T1+T2"] = per_batch / (t1 + t2);
  st.counters["vs_max"] = per_batch / std::max(t1, t2);
}
BENCHMARK(BM_prefetch_overlap)
    ->ArgNames({"prefetch", "T1", "T2"})
    ->Args({0, 10, 10})
    ->Args({2, 10, 10})
    ->Args({0, 10, 5})
    ->Args({2, 10, 5})
    ->Args({0, 5, 10})
    ->Args({2, 5, 10})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(60);

// ---- overhead of shuffle + batch(128) against a plain take ----

const Tree& fashion_sized() {
  static const Tree t{
      {"image", jr::randint(jr::PRNGKey(0), {60000, 28, 28, 1}, 0, 256).astype(jx::DType::UInt8)},
      {"label", jr::randint(jr::PRNGKey(1), {60000}, 0, 10)}};
  return t;
}

void BM_plain_take_128(benchmark::State& st) {
  const Tree& d = fashion_sized();
  Array order = jr::permutation(jr::PRNGKey(3), Array(int32_t(60000)));
  int64_t i = 0;
  for (auto _ : st) {
    Array rows = order(jx::slice(i * 128, (i + 1) * 128));
    Array x = jnp::take(d["image"].array(), rows, 0), y = jnp::take(d["label"].array(), rows, 0);
    benchmark::DoNotOptimize(x);
    benchmark::DoNotOptimize(y);
    i = (i + 1) % (60000 / 128);
  }
}
BENCHMARK(BM_plain_take_128)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Amortized over epochs: includes one permutation of 60000 per 468 batches.
void BM_pipeline_shuffle_batch_128(benchmark::State& st) {
  jx::data::Iterator it =
      jx::data::from_arrays(fashion_sized()).shuffle(jr::PRNGKey(3)).batch(128, true).repeat().iterator();
  it.next();
  for (auto _ : st) {
    std::optional<Tree> b = it.next();
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_pipeline_shuffle_batch_128)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Within an epoch only (the permutation computed before timing).
void BM_pipeline_shuffle_batch_128_in_epoch(benchmark::State& st) {
  jx::data::Dataset ds = jx::data::from_arrays(fashion_sized()).shuffle(jr::PRNGKey(3)).batch(128, true);
  jx::data::Iterator it = ds.iterator();
  it.next();
  for (auto _ : st) {
    std::optional<Tree> b = it.next();
    if (!b) {  // the end of the epoch: rewind without timing the next permutation
      st.PauseTiming();
      it = ds.iterator();
      it.next();
      st.ResumeTiming();
      b = it.next();
    }
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_pipeline_shuffle_batch_128_in_epoch)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_jax_permutation_60000(benchmark::State& st) {
  int64_t e = 0;
  for (auto _ : st) {
    Array p = jr::permutation(jr::fold_in(jr::PRNGKey(3), e++), Array(int32_t(60000)));
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_jax_permutation_60000)->Unit(benchmark::kMillisecond)->UseRealTime();

// An identity map before batch: 128 rows cut one by one and stacked.
void BM_pipeline_map_then_batch_128(benchmark::State& st) {
  jx::data::Iterator it = jx::data::from_arrays(fashion_sized())
                              .shuffle(jr::PRNGKey(3))
                              .map([](const Tree& t) { return t; })
                              .batch(128, true)
                              .repeat()
                              .iterator();
  it.next();
  for (auto _ : st) {
    std::optional<Tree> b = it.next();
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_pipeline_map_then_batch_128)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The augmented hot path: crop (padding 2) and flip on the gathered batch.
void BM_pipeline_augment_batch_128(benchmark::State& st) {
  auto [k1, k2, k3] = jr::split<3>(jr::PRNGKey(3));
  jx::data::Iterator it = jx::data::from_arrays(fashion_sized())
                              .shuffle(k1)
                              .random_crop(k2, {28, 28}, 2)
                              .random_flip_left_right(k3)
                              .batch(128, true)
                              .repeat()
                              .iterator();
  it.next();
  for (auto _ : st) {
    std::optional<Tree> b = it.next();
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_pipeline_augment_batch_128)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
