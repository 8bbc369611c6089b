// jx::data iterators: resuming from a state (mid-epoch, across epoch boundaries, with
// shuffling and augmentation), the state as a pytree (flatten / unflatten, savez / load_npz),
// prefetching (same sequence, clean early destruction, errors at the consumer), and the
// checks that reject a state from another pipeline. Every expectation is an uninterrupted run
// of the same pipeline, or derived by hand.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "jx/data.h"
#include "jx/jx.h"
#include "testing/expect_error.h"
#include "testing/same_tree.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace fs = std::filesystem;
using jx::Array;
using jx::Tree;
using jx::data::Dataset;
using jx::data::Iterator;
using jx::data::IteratorState;

namespace {

using jx::testing::same_tree;

using jx::testing::expect_error;

// What next() returned, end-of-epoch markers included (as None trees), for `count` calls.
std::vector<std::optional<Tree>> run(Iterator& it, int count) {
  std::vector<std::optional<Tree>> out;
  for (int i = 0; i < count; ++i) out.push_back(it.next());
  return out;
}

void expect_same_run(const std::vector<std::optional<Tree>>& a,
                     const std::vector<std::optional<Tree>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(bool(a[i]), bool(b[i])) << "call " << i;
    if (a[i]) {
      EXPECT_TRUE(same_tree(*a[i], *b[i])) << "call " << i;
    }
  }
}

// 23 images 4x4x1 with labels: shuffled, cropped, flipped, batched by 5 (5 batches an epoch,
// the last one of 3).
Dataset augmented_pipeline(int64_t prefetch = 0, int threads = 1) {
  Array images = jr::randint(jr::PRNGKey(3), {23, 4, 4, 1}, 0, 255).astype(jx::DType::UInt8);
  auto [k1, k2, k3] = jr::split<3>(jr::PRNGKey(0));
  Dataset ds = jx::data::from_arrays({{"image", images}, {"label", jnp::arange(23)}})
                   .shuffle(k1)
                   .map([](const Tree& t) { return t; }, {.num_threads = threads})
                   .random_crop(k2, {4, 4}, 1)
                   .random_flip_left_right(k3)
                   .batch(5);
  return prefetch > 0 ? ds.prefetch(prefetch) : ds;
}

TEST(PipelineResume, MidEpochAndAcrossEpochs) {
  Dataset ds = augmented_pipeline();
  Iterator full = ds.iterator();
  std::vector<std::optional<Tree>> all = run(full, 18);  // 3 epochs of 5 batches + 3 ends
  ASSERT_FALSE(all[5]);
  ASSERT_FALSE(all[11]);
  for (int stop : {0, 2, 5, 6, 9, 13}) {  // 5: at the end of epoch 0; 6: start of epoch 1
    Iterator it = ds.iterator();
    std::vector<std::optional<Tree>> head = run(it, stop);
    IteratorState s = it.state();
    Iterator resumed = ds.iterator(s);
    std::vector<std::optional<Tree>> tail = run(resumed, 18 - stop);
    head.insert(head.end(), tail.begin(), tail.end());
    expect_same_run(head, all);
  }
  // The state says where: after 7 calls, epoch 1 (5 batches and its end), position 1.
  Iterator it = ds.iterator();
  run(it, 7);
  IteratorState s = it.state();
  EXPECT_EQ(s.epoch.item<int64_t>(), 1);
  EXPECT_EQ(s.position.item<int64_t>(), 1);
  EXPECT_EQ(s.epoch_length.item<int64_t>(), 5);
  EXPECT_EQ(s.keys.shape(), (jx::Shape{3, 2}));
  EXPECT_EQ(s.epoch.dtype(), jx::DType::Int64);
}

TEST(PipelineResume, RepeatAcrossEpochBoundaryAndPrefetchThreads) {
  // repeat before batch: batches span the shuffle's epochs (10 elements each).
  Dataset ds = jx::data::range(10).shuffle(jr::PRNGKey(5)).repeat(3).batch(4);
  Iterator full = ds.iterator();
  std::vector<std::optional<Tree>> all = run(full, 9);  // 8 batches (the last of 2), end
  ASSERT_FALSE(all[8]);
  Iterator it = ds.iterator();
  run(it, 3);  // stops inside the shuffle's epoch 1
  Iterator resumed = ds.iterator(it.state());
  std::vector<std::optional<Tree>> tail = run(resumed, 6);
  expect_same_run(tail, std::vector<std::optional<Tree>>(all.begin() + 3, all.end()));

  // A prefetching, multi-threaded pipeline resumes into the same stream, and its states
  // restore a serial pipeline too (they are the same dataset).
  Iterator serial = augmented_pipeline().iterator();
  std::vector<std::optional<Tree>> want = run(serial, 14);
  Iterator fast = augmented_pipeline(3, 2).iterator();
  std::vector<std::optional<Tree>> got = run(fast, 8);
  Iterator rest = augmented_pipeline(2, 3).iterator(fast.state());
  std::vector<std::optional<Tree>> more = run(rest, 6);
  got.insert(got.end(), more.begin(), more.end());
  expect_same_run(got, want);
  // set_state on a running prefetching iterator rewinds it.
  IteratorState start = augmented_pipeline().iterator().state();
  fast.set_state(start);
  expect_same_run(run(fast, 14), want);
}

TEST(PipelineResume, StateIsAPytreeThatSavesAndLoads) {
  Dataset ds = augmented_pipeline();
  Iterator it = ds.iterator();
  run(it, 8);
  IteratorState s = it.state();

  // flatten / unflatten round trip: four leaves, no static values.
  auto [leaves, def] = jx::tree::flatten(s);
  ASSERT_EQ(leaves.size(), 4u);
  EXPECT_EQ(def, jx::tree::structure(ds.iterator().state()));  // same structure when fresh
  IteratorState back = jx::tree::unflatten<IteratorState>(def, leaves);
  Iterator a = ds.iterator(back), b = ds.iterator(s);
  expect_same_run(run(a, 5), run(b, 5));

  // Saved beside a model's state, the way a checkpoint holds it; here through savez.
  Tree ckpt{{"params", Tree{{"w", jnp::ones({2, 2})}}}, {"data", Tree::from(s)}};
  std::string tmpl = (fs::temp_directory_path() / "jx_pipeline_resume_XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  std::string dir = mkdtemp(buf.data());
  auto [paths, ckdef] = jx::tree::flatten_with_path(ckpt);
  std::vector<std::pair<std::string, Array>> named;
  for (auto& [path, leaf] : paths) named.emplace_back(path.str(), leaf);
  jnp::savez(dir + "/ckpt.npz", named);
  jnp::NpzFile f = jnp::load_npz(dir + "/ckpt.npz");
  fs::remove_all(dir);
  std::vector<Array> loaded;
  for (auto& [path, leaf] : paths) loaded.push_back(f[path.str()]);
  Tree restored = ckdef.unflatten(loaded);
  // The restored subtree becomes an IteratorState through its structure.
  auto [dl, dd] = jx::tree::flatten(std::as_const(restored)["data"]);
  IteratorState from_file =
      jx::tree::unflatten<IteratorState>(jx::tree::structure(s), dl);
  EXPECT_EQ(from_file.epoch.item<int64_t>(), 1);
  EXPECT_EQ(from_file.position.item<int64_t>(), 2);
  Iterator c = ds.iterator(from_file), d = ds.iterator(s);
  expect_same_run(run(c, 5), run(d, 5));
}

TEST(PipelineResume, EndOfEpochStateAndInfiniteDatasets) {
  Dataset ds = jx::data::range(3);
  Iterator it = ds.iterator();
  run(it, 3);
  IteratorState s = it.state();  // epoch 0, position 3: the end marker comes next
  EXPECT_EQ(s.position.item<int64_t>(), 3);
  Iterator r = ds.iterator(s);
  EXPECT_FALSE(r.next());
  EXPECT_EQ(r.next()->array().item<int32_t>(), 0);
  EXPECT_EQ(r.epoch(), 1);
  // Infinite: one epoch 0, the position counts every element.
  Dataset inf = jx::data::range(3).repeat();
  Iterator i = inf.iterator();
  run(i, 7);
  EXPECT_EQ(i.state().epoch_length.item<int64_t>(), -1);
  Iterator j = inf.iterator(i.state());
  EXPECT_EQ(j.next()->array().item<int32_t>(), 1);  // element 7 = 7 % 3
  // An empty epoch ends at once, every time.
  Iterator e = jx::data::range(0).iterator();
  EXPECT_FALSE(e.next());
  EXPECT_FALSE(e.next());
  EXPECT_EQ(e.epoch(), 2);
}

TEST(PipelineResume, StateFromAnotherPipelineIsRejected) {
  IteratorState s = augmented_pipeline().iterator().state();
  expect_error<jx::ValueError>([&] { jx::data::range(23).batch(5).iterator(s); },
                               "[Iterator.set_state] the state's keys u32[3,2] differ from the 0 keys of "
                               "range(23).batch(5)");
  IteratorState t = jx::data::range(10).iterator().state();
  expect_error<jx::ValueError>([&] { jx::data::range(11).iterator(t); },
                               "[Iterator.set_state] the state was taken from a dataset with 10 elements "
                               "per epoch, but range(11) has 11");
  t.position = jnp::array(int64_t(11), jx::DType::Int64);
  expect_error<jx::ValueError>([&] { jx::data::range(10).iterator(t); },
                               "position 11 is past the end of an epoch of 10 elements");
  t.position = Array(1.5f);
  expect_error<jx::ValueError>([&] { jx::data::range(10).iterator(t); },
                               "state.position must be an integer scalar, got f32[]");
}

// ---- prefetch ----

TEST(PipelinePrefetch, SameSequenceAsWithout) {
  auto ds = [](int64_t prefetch, int threads) {
    Dataset d = jx::data::range(30).shuffle(jr::PRNGKey(9)).map(
        [](const Tree& t) { return Tree{{"x", t.array() * 2}, {"y", t.array() + 100}}; },
        {.num_threads = threads});
    return prefetch ? d.prefetch(prefetch) : d;
  };
  Iterator plain = ds(0, 1).iterator();
  std::vector<std::optional<Tree>> want = run(plain, 62);  // two epochs and their ends
  for (auto [prefetch, threads] : {std::pair{1, 1}, {4, 1}, {3, 4}, {64, 2}}) {
    Iterator it = ds(prefetch, threads).iterator();
    expect_same_run(run(it, 62), want);
  }
}

TEST(PipelinePrefetch, DestroyingEarlyIsClean) {
  std::atomic<int> calls{0};
  Dataset slow = jx::data::range(1000)
                     .map(
                         [&calls](const Tree& t) {
                           ++calls;
                           std::this_thread::sleep_for(std::chrono::milliseconds(1));
                           return t;
                         },
                         {.num_threads = 2})
                     .prefetch(8);
  {
    Iterator it = slow.iterator();
    EXPECT_EQ(it.next()->array().item<int32_t>(), 0);
    EXPECT_EQ(it.next()->array().item<int32_t>(), 1);
  }  // stops and joins the producer mid-epoch
  int after = calls.load();
  EXPECT_LT(after, 1000);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(calls.load(), after);  // nothing runs after destruction
  { Iterator never_read = slow.iterator(); }  // never started
  {
    Iterator moved = slow.iterator();
    moved.next();
    Iterator other = std::move(moved);  // the thread keeps working for the new owner
    EXPECT_EQ(other.next()->array().item<int32_t>(), 1);
  }
}

TEST(PipelinePrefetch, ErrorsReachTheConsumerInOrder) {
  Dataset ds = jx::data::range(20)
                   .map(
                       [](const Tree& t) {
                         if (t.array().item<int32_t>() == 6) throw jx::IndexError("no six");
                         return t;
                       },
                       {.num_threads = 3})
                   .prefetch(4);
  Iterator it = ds.iterator();
  for (int32_t i = 0; i < 6; ++i) EXPECT_EQ(it.next()->array().item<int32_t>(), i);
  expect_error<jx::IndexError>([&] { it.next(); }, "[map] element 6: no six");
  expect_error<jx::IndexError>([&] { it.next(); }, "[map] element 6: no six");  // retried
  EXPECT_EQ(it.position(), 6);
  // Skipping it by a state: the pipeline goes on.
  IteratorState s = it.state();
  s.position = jnp::array(int64_t(7), jx::DType::Int64);
  it.set_state(s);
  EXPECT_EQ(it.next()->array().item<int32_t>(), 7);
}

TEST(PipelinePrefetch, RangeForAndTutorialLoop) {
  Dataset ds = jx::data::range(7).shuffle(jr::PRNGKey(2)).batch(3, true).prefetch(2);
  std::vector<std::vector<int32_t>> by_range, by_loop;
  for (int64_t e = 0; e < 2; ++e)
    for (const Tree& b : ds.epoch(e)) by_range.push_back(b.array().to_vector<int32_t>());
  Iterator it = ds.iterator();
  while (it.epoch() < 2)
    while (std::optional<Tree> b = it.next()) by_loop.push_back(b->array().to_vector<int32_t>());
  EXPECT_EQ(by_range, by_loop);
  ASSERT_EQ(by_loop.size(), 4u);
  EXPECT_NE(by_loop[0], by_loop[2]);  // a new order in epoch 1
  std::vector<int32_t> epoch0;
  for (const Tree& b : ds) {
    std::vector<int32_t> v = b.array().to_vector<int32_t>();
    epoch0.insert(epoch0.end(), v.begin(), v.end());
  }
  std::vector<int32_t> order = jr::permutation(jr::fold_in(jr::PRNGKey(2), 0), Array(int32_t(7))).to_vector<int32_t>();
  EXPECT_EQ(epoch0, std::vector<int32_t>(order.begin(), order.begin() + 6));
}

}  // namespace

namespace {

TEST(PipelineResume, MovedFromIteratorIsAnErrorNotACrash) {
  Iterator a = jx::data::range(4).iterator();
  Iterator b = std::move(a);
  EXPECT_EQ(b.next()->array().item<int32_t>(), 0);
  EXPECT_THROW(a.next(), jx::ValueError);  // NOLINT(bugprone-use-after-move): the point
  EXPECT_THROW(a.state(), jx::ValueError);
}

}  // namespace
