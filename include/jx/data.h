// Data loading: IDX files (the MNIST family's format, gzip-compressed or not), the
// Fashion-MNIST dataset, a deterministic batch iterator shuffled by a PRNG key, and the
// resumable input pipeline jx::data::Dataset (jx/data/pipeline.h, included at the end).
//
//   auto ds = jx::data::load_fashion_mnist();           // uint8 [60000,28,28], [60000], ...
//   Array key = jx::random::PRNGKey(0);
//   for (int epoch = 0; epoch < 3; ++epoch) {
//     auto [next, shuffle_key] = jx::random::split<2>(key);
//     key = next;
//     for (auto [x, y] : jx::data::batches(ds.train_images, ds.train_labels, 128, shuffle_key,
//                                          {.drop_last = true}))
//       ...;
//   }
#pragma once
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include "jx/array.h"

namespace jx::data {

// ---- IDX files ----

// Reads an IDX file (http://yann.lecun.com/exdb/mnist/ "FILE FORMATS"): two zero bytes, a
// type code, the number of dimensions, each dimension as a big-endian uint32, then the data in
// row-major order. The file may be gzip-compressed (recognized by its content, whatever its
// name). Returns an array of the file's shape and type: 0x08 uint8 (every MNIST file),
// 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64 (multi-byte values are
// big-endian in the file). Throws jx::IOError naming the file for a missing or unreadable
// file, a bad magic number or type code, corrupt compressed data, data cut short, or bytes
// left over after the data.
Array load_idx(const std::string& path);

// Writes `a` as an IDX file (gzip-compressed when `compress`; then give it a .gz name): the
// inverse of load_idx, for uint8, int8, int16, int32, float32 and float64 arrays of 1 to 255
// dimensions, each below 2^32. Throws DTypeError / ValueError for arrays IDX cannot hold.
void save_idx(const std::string& path, const Array& a, bool compress = false);

// ---- datasets ----

struct ImageDataset {
  Array train_images;  // uint8 [60000, 28, 28]
  Array train_labels;  // uint8 [60000]
  Array test_images;   // uint8 [10000, 28, 28]
  Array test_labels;   // uint8 [10000]
};

// Fashion-MNIST (Xiao et al. 2017) from `dir`: the four files under their distribution names
// (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
// t10k-labels-idx1-ubyte), each with ".gz" or without. The default is where Debian's dataset
// package installs them. Any directory laid out like the original MNIST works the same way.
// Throws IOError naming the missing file, or ValueError when images and labels disagree.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist/";
ImageDataset load_fashion_mnist(const std::string& dir = kFashionMnistDir);

// ---- batching ----

struct BatchOptions {
  // Leave out the last, smaller batch when the row count is not a multiple of the batch size
  // (so every batch has one shape, and a jitted step compiles once).
  bool drop_last = false;
};

// One pass over (x, y) in batches of `batch_size` rows along axis 0: in order without a key,
// or in the order of jx::random::permutation(key, n) with one (split a fresh key per epoch
// for a new order each epoch). Batch i holds rows order[i*b : (i+1)*b] of x and of y, so
// pairs stay together. Indexable and iterable; each batch is gathered when it is asked for.
class Batches {
 public:
  Batches(Array x, Array y, int64_t batch_size, std::optional<Array> order, bool drop_last);

  int64_t size() const { return num_batches_; }  // number of batches
  int64_t batch_size() const { return batch_size_; }
  // The i-th batch (0 <= i < size()), as (x rows, y rows).
  std::pair<Array, Array> operator[](int64_t i) const;

  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = std::pair<Array, Array>;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const Batches* owner, int64_t i) : owner_(owner), i_(i) {}
    value_type operator*() const { return (*owner_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++i_;
      return old;
    }
    bool operator==(const iterator& o) const { return i_ == o.i_; }

   private:
    const Batches* owner_ = nullptr;
    int64_t i_ = 0;
  };
  iterator begin() const { return iterator(this, 0); }
  iterator end() const { return iterator(this, num_batches_); }

 private:
  Array x_, y_;
  std::optional<Array> order_;  // int32 row indices; none: rows in order
  int64_t batch_size_ = 0, rows_ = 0, num_batches_ = 0;
};

// Batches of (x, y) in a random order drawn from `key` (a PRNG key, as jx::random takes).
// Throws ValueError for batch_size < 1, x or y without rows, or differing row counts.
Batches batches(const Array& x, const Array& y, int64_t batch_size, const Array& key,
                BatchOptions options = {});
// Batches of (x, y) in row order (evaluation).
Batches batches(const Array& x, const Array& y, int64_t batch_size, BatchOptions options = {});

}  // namespace jx::data

// The input pipeline (Dataset: sources, shuffle, batch, map, prefetch, resumable iterators).
#include "jx/data/pipeline.h"
