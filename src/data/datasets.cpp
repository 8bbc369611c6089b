// Datasets in the original MNIST layout (Fashion-MNIST, as Debian's dataset-fashion-mnist
// package installs it), and the batch iterator.
#include <filesystem>

#include "jx/data.h"
#include "jx/error.h"
#include "jx/numpy.h"
#include "jx/random.h"
#include "support/str.h"

namespace jx::data {

namespace {

// `dir/name.gz`, else `dir/name`; IOError naming both when neither exists.
std::string find_file(const std::string& dir, const std::string& name) {
  std::filesystem::path base = std::filesystem::path(dir) / name;
  std::string gz = base.string() + ".gz";
  std::error_code ec;
  if (std::filesystem::exists(gz, ec)) return gz;
  if (std::filesystem::exists(base, ec)) return base.string();
  throw IOError(str("[load_fashion_mnist] '", gz, "' does not exist (nor '", base.string(),
                    "'); pass the directory that holds the four Fashion-MNIST IDX files, or install "
                    "them (Debian: apt-get install dataset-fashion-mnist)"));
}

// Images [n, rows, cols] and labels [n] of one split, checked against each other.
void check_split(const Array& images, const Array& labels, const std::string& images_path,
                 const std::string& labels_path) {
  if (images.ndim() != 3 || labels.ndim() != 1 || images.shape()[0] != labels.shape()[0])
    throw ValueError(str("[load_fashion_mnist] '", images_path, "' holds images ",
                         type_str(images.dtype(), images.shape()), " and '", labels_path,
                         "' labels ", type_str(labels.dtype(), labels.shape()),
                         "; expected [n, rows, cols] images and [n] labels"));
}

}  // namespace

ImageDataset load_fashion_mnist(const std::string& dir) {
  ImageDataset ds;
  const struct {
    const char* images;
    const char* labels;
    Array* images_out;
    Array* labels_out;
  } splits[] = {{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", &ds.train_images,
                 &ds.train_labels},
                {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", &ds.test_images,
                 &ds.test_labels}};
  for (const auto& s : splits) {
    std::string ip = find_file(dir, s.images), lp = find_file(dir, s.labels);
    *s.images_out = load_idx(ip);
    *s.labels_out = load_idx(lp);
    check_split(*s.images_out, *s.labels_out, ip, lp);
  }
  return ds;
}

// ---- batches ----

namespace {

// Throws unless x and y can be batched together.
void check_batch_args(const Array& x, const Array& y, int64_t batch_size) {
  if (!x.valid() || !y.valid())
    throw ValueError("[batches] called with an empty jx::Array (default-constructed)");
  if (batch_size < 1)
    throw ValueError(str("[batches] batch_size must be at least 1, got ", batch_size));
  if (x.ndim() == 0 || y.ndim() == 0)
    throw ValueError(str("[batches] x and y need a leading axis of rows to batch; got x ",
                         type_str(x.dtype(), x.shape()), " and y ", type_str(y.dtype(), y.shape())));
  if (y.shape()[0] != x.shape()[0])
    throw ValueError(str("[batches] x and y must have as many rows (axis 0): x is ",
                         type_str(x.dtype(), x.shape()), ", y is ", type_str(y.dtype(), y.shape())));
}

}  // namespace

Batches::Batches(Array x, Array y, int64_t batch_size, std::optional<Array> order, bool drop_last)
    : x_(std::move(x)), y_(std::move(y)), order_(std::move(order)), batch_size_(batch_size) {
  check_batch_args(x_, y_, batch_size);
  rows_ = x_.shape()[0];
  num_batches_ = drop_last ? rows_ / batch_size : (rows_ + batch_size - 1) / batch_size;
}

std::pair<Array, Array> Batches::operator[](int64_t i) const {
  if (i < 0 || i >= num_batches_)
    throw IndexError(str("[batches] batch ", i, " is out of range: there are ", num_batches_));
  int64_t start = i * batch_size_, stop = std::min(rows_, start + batch_size_);
  if (!order_) return {x_(jx::slice(start, stop)), y_(jx::slice(start, stop))};
  Array rows = (*order_)(jx::slice(start, stop));
  return {numpy::take(x_, rows, 0), numpy::take(y_, rows, 0)};
}

Batches batches(const Array& x, const Array& y, int64_t batch_size, const Array& key,
                BatchOptions options) {
  check_batch_args(x, y, batch_size);  // before the permutation, which would fail less clearly
  Array order;
  // The user called batches: say so in front of the sampler's own message.
  try {
    order = random::permutation(key, Array(x.shape()[0]));
  } catch (const DTypeError& e) {
    throw DTypeError(str("[batches] the shuffle key: ", e.what()));
  } catch (const ShapeError& e) {
    throw ShapeError(str("[batches] the shuffle key: ", e.what()));
  } catch (const ValueError& e) {
    throw ValueError(str("[batches] the shuffle key: ", e.what()));
  }
  return Batches(x, y, batch_size, std::move(order), options.drop_last);
}

Batches batches(const Array& x, const Array& y, int64_t batch_size, BatchOptions options) {
  return Batches(x, y, batch_size, std::nullopt, options.drop_last);
}

}  // namespace jx::data
