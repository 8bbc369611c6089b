// jx::data pipelines: sources, shuffle (against its formula), batch, map / map_batches with
// threads, repeat / take / skip / shard on small ranges (expectations derived by hand from the
// semantics in docs/data.md), augmentation on tiny images, and the errors.
// Resuming, prefetching and iterator states are in pipeline_resume_test.cpp.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <omp.h>

#include <algorithm>
#include <mutex>
#include <filesystem>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "jx/data.h"
#include "jx/jx.h"
#include "jx/numpy/safetensors.h"
#include "testing/expect_error.h"
#include "testing/same_tree.h"
#include "testing/temp_dir.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace fs = std::filesystem;
using jx::Array;
using jx::Tree;
using jx::data::Dataset;
using jx::testing::TempDir;

namespace {

// The scalar elements of one epoch of `ds`, read with an Iterator.
std::vector<int32_t> epoch_ints(const Dataset& ds, int64_t epoch = 0) {
  std::vector<int32_t> out;
  for (const Tree& t : ds.epoch(epoch)) out.push_back(t.array().astype(jx::DType::Int32).item<int32_t>());
  return out;
}

// Each batch of one epoch as a vector of ints.
std::vector<std::vector<int32_t>> epoch_batches(const Dataset& ds, int64_t epoch = 0) {
  std::vector<std::vector<int32_t>> out;
  for (const Tree& t : ds.epoch(epoch)) out.push_back(t.array().astype(jx::DType::Int32).to_vector<int32_t>());
  return out;
}

std::vector<int32_t> ints(const Array& a) { return a.astype(jx::DType::Int32).to_vector<int32_t>(); }

std::vector<int32_t> iota(int32_t n, int32_t start = 0) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

using jx::testing::same_tree;

using jx::testing::expect_error;

// A fresh directory removed at the end.

const Array kKey = jr::PRNGKey(42);

// ---- sources ----

TEST(PipelineSource, RangeIsOneEpochThenEnd) {
  Dataset ds = jx::data::range(5);
  EXPECT_EQ(ds.size(), 5);
  EXPECT_EQ(ds.str(), "range(5)");
  jx::data::Iterator it = ds.iterator();
  for (int32_t i = 0; i < 5; ++i) {
    std::optional<Tree> t = it.next();
    ASSERT_TRUE(t);
    EXPECT_EQ(t->array().dtype(), jx::DType::Int32);
    EXPECT_EQ(t->array().item<int32_t>(), i);
  }
  EXPECT_EQ(it.epoch(), 0);
  EXPECT_FALSE(it.next());  // end of epoch 0
  EXPECT_EQ(it.epoch(), 1);
  EXPECT_EQ(it.position(), 0);
  EXPECT_EQ(it.next()->array().item<int32_t>(), 0);  // epoch 1 starts
  EXPECT_EQ(epoch_ints(ds), iota(5));
  EXPECT_EQ(ds[7].array().item<int32_t>(), 2);  // global index 7 = epoch 1, position 2
}

TEST(PipelineSource, ArraysElementIsRowOfEveryLeaf) {
  Array x = jnp::arange(12, jx::DType::Int32).reshape({6, 2});
  Array y = jnp::arange(6, jx::DType::Int32) * 10;
  Dataset ds = jx::data::from_arrays({{"x", x}, {"y", y}});
  EXPECT_EQ(ds.size(), 6);
  Tree e = ds[3];
  EXPECT_EQ(ints(e["x"].array()), (std::vector<int32_t>{6, 7}));
  EXPECT_EQ(e["x"].array().shape(), (jx::Shape{2}));
  EXPECT_EQ(e["y"].array().ndim(), 0);
  EXPECT_EQ(e["y"].array().item<int32_t>(), 30);
}

TEST(PipelineSource, IdxNpyNpzSafetensors) {
  TempDir dir;
  Array images = jnp::arange(5 * 3 * 2, jx::DType::UInt8).reshape({5, 3, 2});
  Array labels = jnp::array(std::vector<uint8_t>{9, 8, 7, 6, 5});
  jx::data::save_idx(dir / "img.gz", images, true);
  jx::data::save_idx(dir / "lab", labels);
  Dataset idx = jx::data::from_idx(dir / "img.gz", dir / "lab");
  Tree e = idx[2];
  EXPECT_EQ(e["image"].array().shape(), (jx::Shape{3, 2, 1}));  // a channel axis added
  EXPECT_EQ(e["image"].array().dtype(), jx::DType::UInt8);
  EXPECT_EQ(ints(e["image"].array()), iota(6, 12));
  EXPECT_EQ(e["label"].array().dtype(), jx::DType::Int32);
  EXPECT_EQ(e["label"].array().item<int32_t>(), 7);

  Array f = jnp::arange(8, jx::DType::Float32).reshape({4, 2});
  Array g = jnp::arange(4, jx::DType::Int32);
  jnp::save(dir / "f.npy", f);
  jnp::save(dir / "g.npy", g);
  Dataset npy = jx::data::from_npy({{"f", dir / "f.npy"}, {"g", dir / "g.npy"}});
  EXPECT_TRUE(same_tree(npy[1], Tree{{"f", jnp::array({2.0f, 3.0f})}, {"g", Array(int32_t(1))}}));

  jnp::savez(dir / "a.npz", std::vector<std::pair<std::string, Array>>{{"f", f}, {"g", g}});
  EXPECT_TRUE(same_tree(jx::data::from_npz(dir / "a.npz")[3],
                        Tree{{"f", jnp::array({6.0f, 7.0f})}, {"g", Array(int32_t(3))}}));
  EXPECT_TRUE(same_tree(jx::data::from_npz(dir / "a.npz", {"g"})[2], Tree{{"g", Array(int32_t(2))}}));

  jnp::save_safetensors(dir / "t.safetensors", {{"f", f}, {"g", g}});
  Dataset st = jx::data::from_safetensors(dir / "t.safetensors");
  Tree b = st.batch(3)[1];  // the remainder batch: row 3 only
  EXPECT_TRUE(same_tree(b, Tree{{"f", jnp::array({6.0f, 7.0f}).reshape({1, 2})},
                                {"g", jnp::array(std::vector<int32_t>{3})}}));

  expect_error<jx::IOError>([&] { jx::data::from_idx(dir / "missing", dir / "lab"); },
                            "[from_idx] '" + (dir / "missing") + "' does not exist");
  expect_error<jx::IOError>([&] { jx::data::from_npz(dir / "no.npz"); }, "[from_npz]");
  expect_error<jx::IOError>([&] { jx::data::from_npy({{"x", dir / "no.npy"}}); }, "[from_npy]");
  expect_error<jx::IOError>([&] { jx::data::from_safetensors(dir / "no"); }, "[from_safetensors]");
  expect_error<jx::ValueError>([&] { jx::data::from_npz(dir / "a.npz", {"h"}); },
                               "has no array 'h'; it has 'f', 'g'");
}

TEST(PipelineSource, Errors) {
  expect_error<jx::ValueError>(
      [] { jx::data::from_arrays({{"x", jnp::zeros({3, 2})}, {"y", jnp::zeros({4})}}); },
      "[from_arrays] the arrays must share their leading size (one row per element): 'x' is "
      "f32[3,2] but 'y' is f32[4]");
  expect_error<jx::ValueError>([] { jx::data::from_arrays({{"x", Array(1.0f)}}); },
                               "'x' is a scalar f32[]");
  expect_error<jx::ValueError>([] { jx::data::Dataset().batch(2); }, "[batch] the Dataset is empty");
}

// ---- shuffle ----

TEST(PipelineShuffle, OrderIsPermutationOfFoldInEpoch) {
  const int64_t n = 37;
  Dataset ds = jx::data::range(n).shuffle(kKey);
  std::set<std::vector<int32_t>> orders;
  for (int64_t e = 0; e < 3; ++e) {
    std::vector<int32_t> got = epoch_ints(ds, e);
    // The documented formula: order_e = jax.random.permutation(jax.random.fold_in(key, e), n).
    std::vector<int32_t> want = ints(jr::permutation(jr::fold_in(kKey, e), Array(int32_t(n))));
    EXPECT_EQ(got, want) << "epoch " << e;
    std::vector<int32_t> sorted = got;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, iota(int32_t(n))) << "epoch " << e << " is not a permutation";
    orders.insert(got);
  }
  EXPECT_EQ(orders.size(), 3u);  // a new order every epoch
  EXPECT_EQ(epoch_ints(jx::data::range(n).shuffle(kKey), 1), epoch_ints(ds, 1));  // same key
  EXPECT_NE(epoch_ints(jx::data::range(n).shuffle(jr::PRNGKey(43))), epoch_ints(ds));
  expect_error<jx::ValueError>([] { jx::data::range(3).repeat().shuffle(kKey); },
                               "shuffle a finite dataset and repeat after it");
  expect_error<jx::ValueError>([] { jx::data::range(3).shuffle(jnp::zeros({2})); },
                               "[shuffle] key must be a PRNG key, uint32[2]");
}

TEST(PipelineShuffle, ShuffledBatchesAreTakesOfThePermutation) {
  Array x = jnp::arange(50 * 3, jx::DType::Float32).reshape({50, 3});
  Array y = jnp::arange(50, jx::DType::Int32);
  Dataset ds = jx::data::from_arrays({{"x", x}, {"y", y}}).shuffle(kKey).batch(16);
  for (int64_t e = 0; e < 2; ++e) {
    Array order = jr::permutation(jr::fold_in(kKey, e), Array(int32_t(50)));
    int64_t i = 0;
    for (const Tree& b : ds.epoch(e)) {
      Array rows = order(jx::slice(16 * i, std::min<int64_t>(50, 16 * (i + 1))));
      EXPECT_TRUE(same_tree(b, Tree{{"x", jnp::take(x, rows, 0)}, {"y", jnp::take(y, rows, 0)}}))
          << "epoch " << e << " batch " << i;
      ++i;
    }
    EXPECT_EQ(i, 4);  // 16 + 16 + 16 + 2
  }
  // The gather path (batch of an index pipeline) and the stacking path (after a map) agree.
  Dataset stacked = jx::data::from_arrays({{"x", x}, {"y", y}})
                        .map([](const Tree& t) { return t; })
                        .shuffle(kKey)
                        .batch(16);
  EXPECT_TRUE(same_tree(stacked[5], ds[5]));
}

// ---- batch ----

TEST(PipelineBatch, ShapesRemainderAndDropRemainder) {
  EXPECT_EQ(epoch_batches(jx::data::range(10).batch(4)),
            (std::vector<std::vector<int32_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}));
  EXPECT_EQ(epoch_batches(jx::data::range(10).batch(4, true)),
            (std::vector<std::vector<int32_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(jx::data::range(10).batch(4).size(), 3);
  EXPECT_EQ(jx::data::range(10).batch(4, true).size(), 2);
  EXPECT_EQ(jx::data::range(10).batch(5, true).size(), 2);
  Dataset img = jx::data::from_arrays(
      {{"image", jnp::zeros({10, 3, 3, 1}, jx::DType::UInt8)}, {"label", jnp::zeros({10}, jx::DType::Int32)}});
  Tree b = img.batch(4)[0];
  EXPECT_EQ(b["image"].array().shape(), (jx::Shape{4, 3, 3, 1}));
  EXPECT_EQ(b["label"].array().shape(), (jx::Shape{4}));
  EXPECT_EQ(img.batch(4)[2]["image"].array().shape(), (jx::Shape{2, 3, 3, 1}));
  // Batches of batches stack again.
  EXPECT_EQ(jx::data::range(8).batch(2).batch(2)[1].array().shape(), (jx::Shape{2, 2}));
  expect_error<jx::ValueError>([] { jx::data::range(3).batch(0); },
                               "[batch] batch_size must be at least 1, got 0");
  // Elements that cannot stack.
  Dataset ragged = jx::data::range(4).map([](const Tree& t) {
    return Tree{{"v", jnp::zeros({int64_t(t.array().item<int32_t>()) + 1})}};
  });
  expect_error<jx::ValueError>([&] { ragged.batch(2)[0]; },
                               "[batch] leaf 'v' is f32[2] in element 1 of a batch but f32[1] in "
                               "element 0");
}

// ---- map ----

TEST(PipelineMap, ResultsInOrderWithOneOrSeveralThreads) {
  auto fn = [](const Tree& t) { return Tree{{"v", t.array() * 3 + 1}}; };
  std::vector<int32_t> want;
  for (int32_t i = 0; i < 23; ++i) want.push_back(3 * i + 1);
  for (int threads : {1, 2, 4}) {
    Dataset ds = jx::data::range(23).map(fn, {.num_threads = threads});
    std::vector<int32_t> got;
    for (const Tree& t : ds) got.push_back(t["v"].array().item<int32_t>());
    EXPECT_EQ(got, want) << threads << " threads";
    std::vector<int32_t> batched;
    for (const Tree& b : ds.batch(5)) {
      std::vector<int32_t> v = ints(b["v"].array());
      batched.insert(batched.end(), v.begin(), v.end());
    }
    EXPECT_EQ(batched, want) << threads << " threads, batched";
  }
  EXPECT_EQ(jx::data::range(3).map(fn, {.num_threads = 2}).str(), "range(3).map(num_threads=2)");
}

TEST(PipelineMap, MapBatchesSeesWholeBatches) {
  auto sum = [](const Tree& b) { return Tree(b.array().sum()); };
  for (int threads : {1, 3}) {
    std::vector<int32_t> got = epoch_ints(jx::data::range(10).batch(4).map_batches(sum, {.num_threads = threads}));
    EXPECT_EQ(got, (std::vector<int32_t>{6, 22, 17})) << threads << " threads";
  }
  expect_error<jx::ValueError>([&] { jx::data::range(10).map_batches(sum); },
                               "[map_batches] range(10) is not batched; call batch(n) first");
}

TEST(PipelineMap, ErrorKeepsItsTypeAndElementIndex) {
  auto fn = [](const Tree& t) {
    int32_t v = t.array().item<int32_t>();
    if (v == 5) throw jx::ShapeError("bad shape");
    if (v == 8) throw std::runtime_error("plain");
    return t;
  };
  for (int threads : {1, 4}) {
    jx::data::Iterator it = jx::data::range(10).map(fn, {.num_threads = threads}).iterator();
    for (int32_t i = 0; i < 5; ++i) EXPECT_EQ(it.next()->array().item<int32_t>(), i);
    for (int attempt = 0; attempt < 2; ++attempt)  // the failing element stays next
      expect_error<jx::ShapeError>([&] { it.next(); }, "[map] element 5: bad shape");
    EXPECT_EQ(it.position(), 5);
  }
  // Not a jx error: rethrown unchanged.
  Dataset ds = jx::data::range(10).skip(6).map(fn);
  jx::data::Iterator it = ds.iterator();
  EXPECT_EQ(it.next()->array().item<int32_t>(), 6);
  EXPECT_EQ(it.next()->array().item<int32_t>(), 7);
  expect_error<std::runtime_error>([&] { it.next(); }, "plain");
  // Under batch: the index is the map's own.
  expect_error<jx::ShapeError>([&] { jx::data::range(10).map(fn, {.num_threads = 2}).batch(4)[1]; },
                               "[map] element 5: bad shape");
}

// ---- repeat, take, skip, shard ----

TEST(PipelineSlicing, RepeatTakeSkipShard) {
  Dataset r = jx::data::range(10);
  std::vector<int32_t> twice = iota(10);
  twice.insert(twice.end(), twice.begin(), twice.end());
  EXPECT_EQ(epoch_ints(r.repeat(2)), twice);
  EXPECT_EQ(r.repeat(2).size(), 20);
  EXPECT_EQ(r.repeat(0).size(), 0);
  EXPECT_EQ(epoch_ints(r.repeat(0)), std::vector<int32_t>{});
  EXPECT_EQ(r.repeat().size(), std::nullopt);
  std::vector<int32_t> first25 = twice;
  for (int32_t i = 0; i < 5; ++i) first25.push_back(i);
  EXPECT_EQ(epoch_ints(r.repeat().take(25)), first25);
  // take of an infinite dataset: epoch e continues the stream.
  EXPECT_EQ(epoch_ints(r.repeat().take(4), 1), (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(epoch_ints(r.take(3)), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(epoch_ints(r.take(30)), iota(10));
  EXPECT_EQ(epoch_ints(r.take(3), 2), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(epoch_ints(r.skip(7)), (std::vector<int32_t>{7, 8, 9}));
  EXPECT_EQ(epoch_ints(r.skip(12)), std::vector<int32_t>{});
  EXPECT_EQ(epoch_ints(r.skip(3).take(2)), (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(epoch_ints(r.repeat().skip(8).take(4)), (std::vector<int32_t>{8, 9, 0, 1}));
  EXPECT_EQ(epoch_ints(r.shard(3, 0)), (std::vector<int32_t>{0, 3, 6, 9}));
  EXPECT_EQ(epoch_ints(r.shard(3, 1)), (std::vector<int32_t>{1, 4, 7}));
  EXPECT_EQ(epoch_ints(r.shard(3, 2)), (std::vector<int32_t>{2, 5, 8}));
  EXPECT_EQ(epoch_ints(r.shard(1, 0)), iota(10));
  EXPECT_EQ(epoch_ints(r.take(2).shard(3, 2)), std::vector<int32_t>{});
  EXPECT_EQ(epoch_ints(r.repeat().shard(4, 1).take(4)), (std::vector<int32_t>{1, 5, 9, 3}));
  // batch then repeat keeps batches inside epochs; repeat then batch lets them span epochs.
  EXPECT_EQ(epoch_batches(jx::data::range(5).batch(2).repeat(2)),
            (std::vector<std::vector<int32_t>>{{0, 1}, {2, 3}, {4}, {0, 1}, {2, 3}, {4}}));
  EXPECT_EQ(epoch_batches(jx::data::range(5).repeat(2).batch(4)),
            (std::vector<std::vector<int32_t>>{{0, 1, 2, 3}, {4, 0, 1, 2}, {3, 4}}));
  EXPECT_EQ(r.str(), "range(10)");
  EXPECT_EQ(r.shard(3, 1).repeat(2).take(5).str(), "range(10).shard(3, 1).repeat(2).take(5)");

  expect_error<jx::ValueError>([&] { r.shard(3, 3); },
                               "[shard] index 3 is out of range for 3 shards; pass 0 <= index < num_shards");
  expect_error<jx::ValueError>([&] { r.shard(0, 0); }, "[shard] num_shards must be at least 1");
  expect_error<jx::ValueError>([&] { r.take(-1); }, "[take] n must be at least 0");
  expect_error<jx::ValueError>([&] { r.skip(-2); }, "[skip] n must be at least 0");
  expect_error<jx::ValueError>([&] { r.repeat(-1); }, "[repeat] count must be at least 0");
  expect_error<jx::IndexError>([&] { r[-1]; }, "[Dataset[]] index -1 is negative");
}

TEST(PipelineSlicing, ShuffleBeforeRepeatReshufflesEachParentEpoch) {
  Dataset ds = jx::data::range(6).shuffle(kKey).repeat(2);
  std::vector<int32_t> want = ints(jr::permutation(jr::fold_in(kKey, 0), Array(int32_t(6))));
  std::vector<int32_t> e1 = ints(jr::permutation(jr::fold_in(kKey, 1), Array(int32_t(6))));
  want.insert(want.end(), e1.begin(), e1.end());
  EXPECT_EQ(epoch_ints(ds), want);
  // Epoch 1 of the repeated dataset is epochs 2 and 3 of the shuffle.
  std::vector<int32_t> want1 = ints(jr::permutation(jr::fold_in(kKey, 2), Array(int32_t(6))));
  std::vector<int32_t> e3 = ints(jr::permutation(jr::fold_in(kKey, 3), Array(int32_t(6))));
  want1.insert(want1.end(), e3.begin(), e3.end());
  EXPECT_EQ(epoch_ints(ds, 1), want1);
  // Shard, then shuffle the shard.
  std::vector<int32_t> shard = {0, 2, 4, 6, 8};
  std::vector<int32_t> order = ints(jr::permutation(jr::fold_in(kKey, 0), Array(int32_t(5))));
  std::vector<int32_t> want_shard;
  for (int32_t o : order) want_shard.push_back(shard[size_t(o)]);
  EXPECT_EQ(epoch_ints(jx::data::range(10).shard(2, 0).shuffle(kKey)), want_shard);
}

// ---- augmentation ----

// The documented draws for element p of epoch e: bits(fold_in(fold_in(key, e), p), (count,)).
std::vector<uint32_t> element_bits(const Array& key, int64_t e, int64_t p, int64_t count) {
  return jr::bits(jr::fold_in(jr::fold_in(key, e), p), {count}).to_vector<uint32_t>();
}

// Crop of an [H, W, C] image padded by `pad`, at (top, left) of the padded image, by loops.
Array crop_by_hand(const Array& img, int64_t pad, int64_t top, int64_t left, int64_t h, int64_t w) {
  int64_t H = img.shape()[0], W = img.shape()[1], C = img.shape()[2];
  std::vector<float> v = img.astype(jx::DType::Float32).to_vector<float>(), out;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t c = 0; c < C; ++c) {
        int64_t sy = top + y - pad, sx = left + x - pad;
        out.push_back(sy < 0 || sy >= H || sx < 0 || sx >= W ? 0.0f : v[size_t((sy * W + sx) * C + c)]);
      }
  return jnp::array(out, {h, w, C}).astype(img.dtype());
}

TEST(PipelineAugment, CropHandChecked) {
  // 2x2 image, padding 1, a 4x4 crop: only one window fits, the whole padded image.
  Array img = jnp::array(std::vector<uint8_t>{1, 2, 3, 4}, {1, 2, 2, 1});
  Tree e = jx::data::from_arrays(img).random_crop(kKey, {4, 4}, 1, "")[0];
  EXPECT_EQ(e.array().shape(), (jx::Shape{4, 4, 1}));
  EXPECT_EQ(ints(e.array()), (std::vector<int32_t>{0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0}));
  // No padding, crop of the full size: the image itself.
  EXPECT_EQ(ints(jx::data::from_arrays(img).random_crop(kKey, {2, 2}, 0, "")[0].array()),
            (std::vector<int32_t>{1, 2, 3, 4}));

  // 3x3 images (two channels), padding 1, 3x3 crops: offsets from the documented draws.
  const int64_t n = 6;
  Array imgs = (jnp::arange(n * 3 * 3 * 2, jx::DType::Float32) + 1).reshape({n, 3, 3, 2});
  Dataset ds = jx::data::from_arrays({{"image", imgs}, {"label", jnp::arange(n)}})
                   .random_crop(kKey, {3, 3}, 1);
  std::set<std::pair<uint32_t, uint32_t>> offsets;
  for (int64_t e = 0; e < 2; ++e)
    for (int64_t p = 0; p < n; ++p) {
      std::vector<uint32_t> b = element_bits(kKey, e, p, 2);
      uint32_t top = b[0] % 3, left = b[1] % 3;  // (3 + 2*1 - 3 + 1) positions each way
      offsets.insert({top, left});
      Tree got = ds[e * n + p];
      EXPECT_TRUE(same_tree(got["image"], Tree(crop_by_hand(imgs(p), 1, top, left, 3, 3))))
          << "epoch " << e << " element " << p << " top " << top << " left " << left;
      EXPECT_EQ(got["label"].array().item<int32_t>(), p);  // other leaves untouched
    }
  EXPECT_GT(offsets.size(), 3u);  // the draws vary
  // The batched (gather) path gives the same crops as element by element.
  Tree b = ds.batch(4)[1];  // epoch 0, elements 4, 5
  EXPECT_TRUE(same_tree(b["image"], Tree(jnp::stack({ds[4]["image"].array(), ds[5]["image"].array()}))));
  // Too large a crop.
  expect_error<jx::ValueError>([&] { jx::data::from_arrays(img).random_crop(kKey, {5, 4}, 1, "")[0]; },
                               "[random_crop] a (5, 4) crop does not fit in a 2x2 image padded by 1");
}

TEST(PipelineAugment, FlipHandChecked) {
  const int64_t n = 16;
  // Row r of every image is [10r+1, 10r+2, 10r+3]; flipped it is [10r+3, 10r+2, 10r+1].
  std::vector<int32_t> v;
  for (int64_t i = 0; i < n; ++i)
    for (int32_t r = 0; r < 2; ++r)
      for (int32_t c = 1; c <= 3; ++c) v.push_back(10 * r + c);
  Array imgs = jnp::array(v, {n, 2, 3, 1});
  Array fkey = jr::PRNGKey(7);
  for (jx::DType dt : {jx::DType::Int32, jx::DType::UInt8}) {  // 4-byte and 1-byte pixels
    Dataset ds = jx::data::from_arrays({{"image", imgs.astype(dt)}}).random_flip_left_right(fkey);
    int flipped = 0;
    for (int64_t p = 0; p < n; ++p) {
      bool flip = (element_bits(fkey, 0, p, 1)[0] >> 31) == 1;
      flipped += flip;
      std::vector<int32_t> want = flip ? std::vector<int32_t>{3, 2, 1, 13, 12, 11}
                                       : std::vector<int32_t>{1, 2, 3, 11, 12, 13};
      EXPECT_EQ(ints(ds[p]["image"].array()), want) << "element " << p;
      EXPECT_EQ(ds[p]["image"].array().dtype(), dt);
    }
    EXPECT_GT(flipped, 2);
    EXPECT_LT(flipped, 14);
  }
  // NHWC after batch: row j of batch p uses fold_in(fold_in(fold_in(key, e), p), j).
  Dataset batched = jx::data::from_arrays({{"image", imgs}}).batch(4).random_flip_left_right(fkey);
  Tree b = batched[1];
  for (int64_t j = 0; j < 4; ++j) {
    uint32_t bit = jr::bits(jr::fold_in(jr::fold_in(jr::fold_in(fkey, 0), 1), j), {1}).to_vector<uint32_t>()[0];
    std::vector<int32_t> row = ints(b["image"].array()(j));
    EXPECT_EQ(row[0], (bit >> 31) ? 3 : 1) << "row " << j;
  }
  expect_error<jx::ValueError>(
      [&] { jx::data::from_arrays({{"image", jnp::zeros({4, 2, 3})}}).random_flip_left_right(fkey)[0]; },
      "[random_flip_left_right] element 0: 'image' is f32[2,3]; expected an HWC image [H, W, C]");
  expect_error<jx::ValueError>(
      [&] { jx::data::from_arrays({{"img", imgs}}).random_flip_left_right(fkey)[0]; },
      "has no 'image' (keys: 'img'); pass field = the key path of the image leaf");
}

TEST(PipelineAugment, DeterministicAndIndependentOfThreads) {
  const int64_t n = 20;
  Array imgs = jr::randint(jr::PRNGKey(1), {n, 5, 5, 3}, 0, 255).astype(jx::DType::UInt8);
  auto [k1, k2, k3] = jr::split<3>(kKey);
  auto pipeline = [&](int threads) {
    return jx::data::from_arrays({{"image", imgs}, {"label", jnp::arange(n)}})
        .shuffle(k1)
        .map([](const Tree& t) { return t; }, {.num_threads = threads})
        .random_crop(k2, {4, 4}, 2)
        .random_flip_left_right(k3)
        .batch(6);
  };
  Dataset fast = jx::data::from_arrays({{"image", imgs}, {"label", jnp::arange(n)}})
                     .shuffle(k1)
                     .random_crop(k2, {4, 4}, 2)
                     .random_flip_left_right(k3)
                     .batch(6);
  for (int64_t g = 0; g < 8; ++g) {  // two epochs of 4 batches
    Tree want = fast[g];
    EXPECT_TRUE(same_tree(pipeline(1)[g], want)) << g;
    EXPECT_TRUE(same_tree(pipeline(3)[g], want)) << g;
  }
  jx::data::Iterator a = pipeline(3).prefetch(2).iterator(), b = fast.iterator();
  for (int i = 0; i < 6; ++i) {
    std::optional<Tree> x = a.next(), y = b.next();
    ASSERT_EQ(bool(x), bool(y));
    if (x) {
      EXPECT_TRUE(same_tree(*x, *y)) << i;
    }
  }
  EXPECT_FALSE(same_tree(fast[0], fast[4]));  // epoch 1 draws anew
  Dataset other = jx::data::from_arrays({{"image", imgs}, {"label", jnp::arange(n)}})
                      .shuffle(k1)
                      .random_crop(k3, {4, 4}, 2)
                      .random_flip_left_right(k2)
                      .batch(6);
  EXPECT_FALSE(same_tree(other[0], fast[0]));
}

TEST(PipelineErrors, PrefetchLastAndKeys) {
  expect_error<jx::ValueError>([] { jx::data::range(4).prefetch(2).batch(2); },
                               "[batch] comes after prefetch(2); prefetch must be the last transformation");
  expect_error<jx::ValueError>([] { jx::data::range(4).prefetch(0); },
                               "[prefetch] buffer_size must be at least 1");
  expect_error<jx::ValueError>([] { jx::data::range(4).map(nullptr); }, "[map] fn is empty");
  expect_error<jx::ValueError>([] { jx::data::range(4).map([](const Tree& t) { return t; }, {.num_threads = 0}); },
                               "[map] num_threads must be at least 1, got 0");
  expect_error<jx::ValueError>([] { jx::data::range(4).random_crop(jnp::zeros({2}, jx::DType::Int32), {1, 1}); },
                               "[random_crop] key must be a PRNG key, uint32[2]");
  EXPECT_EQ(jx::data::range(4).shuffle(kKey).batch(2, true).prefetch(3).str(),
            "range(4).shuffle().batch(2, drop_remainder).prefetch(3)");
}

// The prefetch producer and the map workers run their jx ops without an OpenMP team of
// their own (pipeline_iterator.cpp: a second team beside the training step's put twice as
// many threads as cores on a 2-core machine and made train_cnn's epoch 1.3x slower).
TEST(PipelinePrefetch, ThreadsRunJxOpsWithoutAnOpenMPTeam) {
  std::mutex mu;
  std::set<int> teams;
  auto record = [&](const Tree& t) {
    std::lock_guard<std::mutex> lock(mu);
    teams.insert(omp_get_max_threads());
    return t;
  };
  for (int threads : {1, 2}) {
    Dataset ds = jx::data::range(8).map(record, {.num_threads = threads}).prefetch(2);
    EXPECT_EQ(epoch_ints(ds), iota(8));
  }
  EXPECT_EQ(teams, std::set<int>{1});
}

}  // namespace
