// jx::data pipelines: a deterministic, resumable input pipeline keyed by PRNG keys, after
// Google's Grain (grain.MapDataset) and tf.data. Included by jx/data.h.
//
//   Array key = jx::random::PRNGKey(0);
//   auto [shuffle_key, crop_key, flip_key] = jx::random::split<3>(key);
//   jx::data::Dataset ds = jx::data::from_idx(images_path, labels_path)  // {"image", "label"}
//                              .shuffle(shuffle_key)
//                              .random_crop(crop_key, {28, 28}, /*padding=*/2)
//                              .random_flip_left_right(flip_key)
//                              .batch(128, /*drop_remainder=*/true)
//                              .prefetch(2);
//   jx::data::Iterator it = ds.iterator();          // or ds.iterator(restored_state)
//   while (it.epoch() < 3)
//     while (std::optional<jx::Tree> batch = it.next()) train_step(*batch);
//   jx::data::IteratorState s = it.state();        // a pytree: save it with the model
//
// A Dataset is an immutable description (cheap to copy); elements are computed only when an
// iterator (or operator[]) asks for them. Element g of a dataset is a pure function of g and
// the keys, so the stream does not depend on threads or prefetching, and an iterator restored
// from a state continues exactly where the saved one stopped. docs/data.md has the formulas.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jx/array.h"
#include "jx/tree.h"

namespace jx::data {

namespace detail {
class Node;
}

class Iterator;
class EpochRange;

// The input iterator of a range-for over one epoch (Dataset::epoch, Dataset::begin).
class ElementIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Tree;
  using difference_type = std::ptrdiff_t;
  ElementIterator() = default;  // the end
  explicit ElementIterator(std::shared_ptr<Iterator> it);
  const Tree& operator*() const { return *current_; }
  const Tree* operator->() const { return &*current_; }
  ElementIterator& operator++();
  bool operator==(const ElementIterator& o) const { return done() == o.done(); }

 private:
  bool done() const { return !current_.has_value(); }
  std::shared_ptr<Iterator> it_;
  std::optional<Tree> current_;
};

// Where an iterator stands, as a pytree of Arrays (so a checkpoint saves it beside the model:
// {"params": ..., "opt_state": ..., "data": it.state()}). Every field is a leaf, so a state
// restored into a template made by a fresh iterator has the same structure.
struct IteratorState {
  Array epoch;         // int64 []: the epoch being read
  Array position;      // int64 []: elements of that epoch already returned by next()
  Array epoch_length;  // int64 []: the dataset's elements per epoch (-1: infinite); checked
  Array keys;          // uint32 [k, 2]: the pipeline's keys in order (shuffle, augmentations); checked
};
JX_PYTREE(IteratorState, epoch, position, epoch_length, keys)

struct MapOptions {
  // Threads that run fn (on a pool owned by the iterator); results keep the input order.
  int num_threads = 1;
};

// A transformation of elements: takes an element (a pytree) and returns the new one.
using MapFn = std::function<Tree(const Tree&)>;

// A lazily composed pipeline of elements, each a jx::Tree (for example
// {"image": u8[28,28,1], "label": i32[]}). Every dataset has a length per epoch (finite, or
// infinite after repeat()) and is indexed by a global index g >= 0: element g belongs to epoch
// g / length at position g % length, and shuffling and augmentation draw from the epoch, so
// epoch 1 of a shuffled dataset is another order than epoch 0.
// Invalid arguments throw ValueError naming the operation and the fix.
class Dataset {
 public:
  Dataset() = default;  // no elements: build one with from_arrays, from_idx, ...
  explicit Dataset(std::shared_ptr<const detail::Node> node, int64_t prefetch = 0);

  // ---- transformations (each returns a new Dataset; this one is unchanged) ----

  // Epoch e visits the elements in the order jax.random.permutation(fold_in(key, e), n):
  // element p of epoch e is the parent's element order_e[p] of epoch e. A new order every
  // epoch, the same for the same key. Grain: .shuffle(seed); tf.data: .shuffle(n, seed,
  // reshuffle_each_iteration=True) with a full buffer. Throws ValueError on an infinite
  // dataset (shuffle before repeat()) and for a key that is not uint32[2].
  Dataset shuffle(const Array& key) const;
  // Groups `batch_size` consecutive elements of an epoch into one element whose leaves are
  // stacked along a new axis 0. The last batch of an epoch is smaller unless drop_remainder.
  // Elements of a batch must have one structure and leaf shapes. Grain: .batch(n,
  // drop_remainder); tf.data: .batch(n, drop_remainder).
  Dataset batch(int64_t batch_size, bool drop_remainder = false) const;
  // fn applied to every element, on options.num_threads threads, results in order. An
  // exception thrown by fn reaches the consumer as the same jx error type with
  // "[map] element g: " in front. Grain: .map(fn); tf.data: .map(fn, num_parallel_calls).
  Dataset map(MapFn fn, MapOptions options = {}) const;
  // map() for a batched dataset (fn sees whole batches); ValueError before batch().
  // tf.data: .batch(n).map(fn); Grain: .batch(n).map(fn).
  Dataset map_batches(MapFn fn, MapOptions options = {}) const;
  // Computes elements on a background thread, up to buffer_size ahead of the consumer, so
  // that data work overlaps the training step. Must be the last transformation. Destroying
  // the iterator stops and joins the thread. Grain: IterDataset.prefetch / mp_prefetch;
  // tf.data: .prefetch(n).
  Dataset prefetch(int64_t buffer_size) const;
  // count epochs of the parent as one epoch (forever without count); a shuffle before it
  // reshuffles every parent epoch. tf.data / Grain: .repeat(count).
  Dataset repeat(std::optional<int64_t> count = std::nullopt) const;
  // The first n elements of each epoch. Of an infinite parent, epoch e is its elements
  // [e*n, (e+1)*n). tf.data: .take(n); Grain: slicing ds[:n].
  Dataset take(int64_t n) const;
  // Each epoch without its first n elements. tf.data: .skip(n); Grain: ds[n:].
  Dataset skip(int64_t n) const;
  // Elements index, index + num_shards, index + 2*num_shards, ... of each epoch (element i
  // goes to shard i % num_shards), as tf.data's .shard(num_shards, index); Grain:
  // ds[index::num_shards]. Shard before shuffling to split a data set among processes.
  Dataset shard(int64_t num_shards, int64_t index) const;

  // ---- augmentation (images HWC, or NHWC when applied after batch) ----
  // Both change the leaf at `field` (dict keys joined by '/'; the element itself when it is a
  // single array). Element p of epoch e draws from k = fold_in(fold_in(key, e), p); row j of
  // a batched (NHWC) element from fold_in(k, j). Results do not depend on threads or
  // prefetching. Use a different key for each augmentation (jx::random::split).

  // Pads height and width with `padding` zeros on each side, then cuts a size[0] x size[1]
  // window at top = b0 % (H + 2*padding - size[0] + 1), left = b1 % (W + 2*padding -
  // size[1] + 1), with [b0, b1] = jax.random.bits(k, (2,), uint32). torchvision:
  // RandomCrop(size, padding); tf: tf.image.random_crop of a padded image.
  Dataset random_crop(const Array& key, std::array<int64_t, 2> size, int64_t padding = 0,
                      const std::string& field = "image") const;
  // Mirrors the width axis when the top bit of jax.random.bits(k, (), uint32) is set
  // (probability 1/2). torchvision: RandomHorizontalFlip(); tf: tf.image.random_flip_left_right.
  Dataset random_flip_left_right(const Array& key, const std::string& field = "image") const;

  // ---- reading ----

  // Elements per epoch; none when infinite (after repeat()).
  std::optional<int64_t> size() const;
  // Element g (global index: epoch g / size(), position g % size()), computed now, serially.
  // Throws IndexError for g < 0 or an empty dataset.
  Tree operator[](int64_t g) const;
  // An iterator at the start of epoch 0, or where `state` says (ValueError when the state was
  // taken from a pipeline with another length per epoch or other keys).
  Iterator iterator() const;
  Iterator iterator(const IteratorState& state) const;
  // One epoch, for range-for: `for (const jx::Tree& batch : ds.epoch(e))`.
  EpochRange epoch(int64_t e) const;
  // Epoch 0 (`for (const jx::Tree& x : ds)`): the same order every time; loop over
  // ds.epoch(e), or use one Iterator, for a new order each epoch.
  ElementIterator begin() const;
  ElementIterator end() const { return ElementIterator(); }
  // The pipeline in Grain-like spelling, e.g. "from_arrays(10).shuffle().batch(4)".
  std::string str() const;

  // ---- for jx internals ----
  const std::shared_ptr<const detail::Node>& node() const { return node_; }
  int64_t prefetch_size() const { return prefetch_; }

 private:
  Dataset with(std::shared_ptr<const detail::Node> node, const char* op) const;
  const detail::Node& checked(const char* op) const;
  std::shared_ptr<const detail::Node> node_;
  int64_t prefetch_ = 0;
};

// ---- sources ----

// Element i is row i of every leaf of `arrays` (a pytree of Arrays with one leading size,
// e.g. {{"image", x}, {"label", y}}), taken when asked for; a batch of such rows is gathered
// with one take per leaf. Grain: MapDataset.source(arrays); tf.data: from_tensor_slices.
// Throws ValueError for a 0-d leaf, leaves with different leading sizes, or no leaves.
Dataset from_arrays(const Tree& arrays);
// Elements 0, 1, ..., n-1 as int32 scalars. Grain: MapDataset.range(n); tf.data: range(n).
Dataset range(int64_t n);
// {"image": images, "label": labels} from two IDX files (gzip-compressed or not): a 3-d image
// file [n, H, W] gets a channel axis ([n, H, W, 1], HWC, what jx::nn::Conv takes); labels
// become int32. IOError for a missing or malformed file, ValueError when counts differ.
Dataset from_idx(const std::string& images_path, const std::string& labels_path);
// Named leaves, each the rows of one .npy file: from_npy({{"image", "x.npy"}, ...}).
Dataset from_npy(const std::map<std::string, std::string>& paths);
// The arrays of an .npz archive (np.savez), named as in the archive; `names` picks some.
Dataset from_npz(const std::string& path, const std::vector<std::string>& names = {});
// The tensors of a safetensors file, named as in the file; `names` picks some.
Dataset from_safetensors(const std::string& path, const std::vector<std::string>& names = {});

// ---- iteration ----

// Reads a dataset epoch after epoch: next() returns the elements of the current epoch in
// order, then none once at the end of the epoch, after which it reads the next epoch. An
// infinite dataset has one endless epoch. Move-only; owns the map thread pool and the
// prefetch thread, which its destructor stops and joins. Not for use from several threads.
class Iterator {
 public:
  Iterator(Dataset ds, int64_t epoch, int64_t position);
  Iterator(Iterator&&) noexcept;
  Iterator& operator=(Iterator&&) noexcept;
  ~Iterator();

  // The next element, or none at the end of an epoch. An error in the pipeline is thrown
  // here, for the element it belongs to; calling next() again retries that element.
  std::optional<Tree> next();
  int64_t epoch() const;
  int64_t position() const;
  IteratorState state() const;
  // Continues from `state` (ValueError when taken from another pipeline, see iterator()).
  void set_state(const IteratorState& state);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One epoch as an input range (what Dataset::epoch returns).
class EpochRange {
 public:
  EpochRange(Dataset ds, int64_t epoch) : ds_(std::move(ds)), epoch_(epoch) {}
  ElementIterator begin() const;
  ElementIterator end() const { return ElementIterator(); }

 private:
  Dataset ds_;
  int64_t epoch_;
};

}  // namespace jx::data
