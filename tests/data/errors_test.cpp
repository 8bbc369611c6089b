// Bad input to jx::data (issue 19, "bad input everywhere"): IDX files that are missing or
// malformed, arrays IDX cannot hold, batching with bad sizes or rows that do not pair up, and
// pipelines built or read wrongly (bad keys, sizes, shards, fields, augmentation windows,
// elements that do not stack, states from another pipeline). Each row must throw exactly the
// expected jx error whose message names the operation, the offending value and the fix.
#include <gtest/gtest.h>

#include <exception>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "jx/data.h"
#include "jx/jx.h"
#include "testing/error_table.h"
#include "testing/temp_dir.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
using jx::Array;
using jx::DType;
using jx::Tree;
using jx::data::Dataset;

namespace {

using jx::testing::ErrorRow;
using jx::testing::row;
using jx::testing::run_rows;

Array key() { return jr::PRNGKey(0); }
Dataset images() {  // 4 HWC images 3x3x1 with labels
  return jx::data::from_arrays({{"image", jnp::zeros({4, 3, 3, 1})}, {"label", jnp::arange(4)}});
}

std::vector<ErrorRow> data_rows(const std::string& dir) {
  using jx::DTypeError;
  using jx::IndexError;
  using jx::IOError;
  using jx::ShapeError;
  using jx::ValueError;
  const std::string missing = dir + "/missing.idx";
  const std::string garbage = dir + "/garbage.idx";
  std::ofstream(garbage) << "not an idx file";
  const std::string labels = dir + "/labels.idx";
  jx::data::save_idx(labels, jnp::zeros({3}, DType::UInt8));
  const std::string images3 = dir + "/images.idx";
  jx::data::save_idx(images3, jnp::zeros({4, 2, 2}, DType::UInt8));
  return {
      // ---- IDX files ----
      row<IOError>("load_idx of a missing file", [missing] { jx::data::load_idx(missing); },
                   {"[load_idx]", "missing.idx", "cannot be opened"}),
      row<IOError>("load_idx of a file that is not IDX", [garbage] { jx::data::load_idx(garbage); },
                   {"[load_idx]", "garbage.idx", "magic number", "0x00000803"}),
      row<DTypeError>("save_idx of a bool array",
                      [dir] { jx::data::save_idx(dir + "/b.idx", jnp::zeros({2}, DType::Bool)); },
                      {"[save_idx]", "not bool", "astype"}),
      row<ValueError>("save_idx of a scalar",
                      [dir] { jx::data::save_idx(dir + "/s.idx", jnp::zeros({}, DType::UInt8)); },
                      {"[save_idx]", "1 to 255 dimensions", "u8[]", "reshape a scalar to (1,)"}),
      row<IOError>(
          "save_idx into a missing directory",
          [dir] { jx::data::save_idx(dir + "/no/such/dir/a.idx", jnp::zeros({2}, DType::UInt8)); },
          {"[save_idx]", "no/such/dir", "cannot be created"}),
      row<IOError>("load_fashion_mnist from a directory without the files",
                   [dir] { jx::data::load_fashion_mnist(dir + "/"); },
                   {"[load_fashion_mnist]", "train-images-idx3-ubyte", "pass the directory"}),
      row<ValueError>("from_idx with image and label counts that differ",
                      [images3, labels] { jx::data::from_idx(images3, labels); },
                      {"[from_idx]", "u8[4,2,2]", "u8[3]", "n labels"}),
      // ---- batches ----
      row<ValueError>("batches of size 0",
                      [] {
                        jx::data::batches(jnp::zeros({4, 2}), jnp::zeros({4}), 0);
                      },
                      {"[batches]", "at least 1", "got 0"}),
      row<ValueError>("batches of x and y with different row counts",
                      [] {
                        jx::data::batches(jnp::zeros({4, 2}), jnp::zeros({5}), 2);
                      },
                      {"[batches]", "f32[4,2]", "f32[5]", "as many rows"}),
      row<ValueError>("batches of a 0-d x",
                      [] { jx::data::batches(Array(1.0f), jnp::zeros({1}), 1); },
                      {"[batches]", "x f32[]", "leading axis"}),
      row<DTypeError>("batches with a malformed key",
                      [] {
                        jx::data::batches(jnp::zeros({4, 2}), jnp::zeros({4}), 2, jnp::zeros({3}));
                      },
                      {"[batches] the shuffle key: [permutation]", "f32[3]", "uint32[2]", "PRNGKey"}),
      row<IndexError>("batch index out of range",
                      [] {
                        jx::data::batches(jnp::zeros({4, 2}), jnp::zeros({4}), 2)[2];
                      },
                      {"[batches]", "batch 2", "there are 2"}),
      // ---- sources ----
      row<ValueError>("from_arrays with leaves of different leading sizes",
                      [] {
                        jx::data::from_arrays({{"x", jnp::zeros({3, 2})}, {"y", jnp::zeros({4})}});
                      },
                      {"[from_arrays]", "f32[3,2]", "f32[4]", "leading size"}),
      row<ValueError>("from_arrays with a 0-d leaf",
                      [] {
                        jx::data::from_arrays({{"x", Array(1.0f)}});
                      },
                      {"[from_arrays]", "f32[]", "reshape it to [1]"}),
      row<ValueError>("range of a negative size", [] { jx::data::range(-1); },
                      {"[range]", "got -1", "[0, 2^31 - 1]"}),
      row<IOError>("from_npz of a missing file", [missing] { jx::data::from_npz(missing); },
                   {"[from_npz]", "missing.idx", "np.savez"}),
      // ---- transformations ----
      row<ValueError>("shuffle with a float key",
                      [] { jx::data::range(4).shuffle(jnp::zeros({2})); },
                      {"[shuffle]", "f32[2]", "uint32[2]", "PRNGKey"}),
      row<ValueError>("shuffle after repeat", [] { jx::data::range(4).repeat().shuffle(key()); },
                      {"[shuffle]", "infinite", ".shuffle(key).repeat()"}),
      row<ValueError>("batch of size 0", [] { jx::data::range(4).batch(0); },
                      {"[batch]", "at least 1", "got 0"}),
      row<ValueError>("map_batches before batch",
                      [] { jx::data::range(4).map_batches([](const Tree& t) { return t; }); },
                      {"[map_batches]", "not batched", "call batch(n) first"}),
      row<ValueError>(
          "map with 0 threads",
          [] { jx::data::range(4).map([](const Tree& t) { return t; }, {.num_threads = 0}); },
          {"[map]", "num_threads", "got 0"}),
      row<ValueError>("prefetch of a negative buffer", [] { jx::data::range(4).prefetch(-1); },
                      {"[prefetch]", "got -1", "leave prefetch out"}),
      row<ValueError>("repeat a negative count", [] { jx::data::range(4).repeat(-2); },
                      {"[repeat]", "got -2", "repeat forever"}),
      row<ValueError>("take a negative count", [] { jx::data::range(4).take(-1); },
                      {"[take]", "at least 0", "got -1"}),
      row<ValueError>("skip a negative count", [] { jx::data::range(4).skip(-1); },
                      {"[skip]", "at least 0", "got -1"}),
      row<ValueError>("shard into 0 shards", [] { jx::data::range(4).shard(0, 0); },
                      {"[shard]", "num_shards", "got 0"}),
      row<ValueError>("shard index not below num_shards", [] { jx::data::range(4).shard(2, 2); },
                      {"[shard]", "index 2", "0 <= index < num_shards"}),
      row<ValueError>(
          "random_crop larger than the padded image",
          [] {
            images().random_crop(key(), {5, 5})[0];
          },
          {"[random_crop]", "(5, 5) crop", "3x3 image", "smaller size or more padding"}),
      row<ValueError>("random_crop of a missing field",
                      [] {
                        images().random_crop(key(), {2, 2}, 0, "img")[0];
                      },
                      {"[random_crop]", "no 'img'", "pass field"}),
      row<ValueError>("random_flip_left_right of a missing field",
                      [] { images().random_flip_left_right(key(), "picture")[0]; },
                      {"[random_flip_left_right]", "no 'picture'", "pass field"}),
      row<ValueError>("batch of elements that do not stack",
                      [] {
                        jx::data::range(4)
                            .map([](const Tree& t) {
                              return Tree(jnp::zeros({t.array().item<int32_t>() + 1}));
                            })
                            .batch(2)[0];
                      },
                      {"[batch]", "f32[2]", "f32[1]", "one shape and dtype"}),
      // ---- reading ----
      row<IndexError>("element at a negative index", [] { jx::data::range(4)[-1]; },
                      {"[Dataset[]]", "index -1", "start at 0"}),
      row<ValueError>("an empty Dataset used", [] { Dataset().batch(2); },
                      {"[batch]", "empty", "from_arrays"}),
      row<ValueError>("iterator from another pipeline's state",
                      [] {
                        jx::data::IteratorState s = jx::data::range(4).iterator().state();
                        jx::data::range(5).iterator(s);
                      },
                      {"[Iterator.set_state]", "4 elements per epoch", "range(5)",
                       "pipeline it was saved from"}),
      row<ValueError>("epoch of a negative number", [] { jx::data::range(4).epoch(-1).begin(); },
                      {"[epoch]", "epoch -1", "negative"}),
  };
}

TEST(DataErrors, EveryBadCallThrowsATypedErrorNamingTheFix) {
  jx::testing::TempDir dir("jx_data_errors");
  std::vector<ErrorRow> rows = data_rows(dir.path());
  EXPECT_GE(rows.size(), 20u);
  run_rows(rows);
}

}  // namespace
