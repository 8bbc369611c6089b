// jx::data pipeline sources: in-memory arrays, and the files that load into them (IDX, .npy,
// .npz, safetensors) through jx's readers.
#include <climits>
#include <cstring>
#include <filesystem>

#include "core/array_impl.h"
#include "data/pipeline_internal.h"
#include "jx/error.h"
#include "jx/numpy.h"
#include "jx/numpy/safetensors.h"
#include "support/str.h"

namespace jx::data {

namespace detail {
namespace {

// Element i is row i of every leaf. Rows are cut when asked for; a batch is one take per leaf.
class ArraySource : public Node {
 public:
  ArraySource(std::vector<Array> leaves, tree::TreeDef def, int64_t rows, std::string text)
      : Node(nullptr, rows, false), leaves_(std::move(leaves)), def_(std::move(def)),
        text_(std::move(text)) {}

  std::vector<Tree> get_many(std::span<const int64_t> g, const Exec&) const override {
    std::vector<Tree> out;
    out.reserve(g.size());
    std::vector<Array> row(leaves_.size());
    for (int64_t gi : g) {
      int64_t r = gi % length_;
      for (size_t k = 0; k < leaves_.size(); ++k) row[k] = cut_row(leaves_[k], r);
      out.push_back(def_.unflatten(row));
    }
    return out;
  }
  Tree get_batch(std::span<const int64_t> g, const Exec&) const override {
    Array idx;
    if (length_ <= INT32_MAX) {
      std::vector<int32_t> r(g.size());
      for (size_t j = 0; j < g.size(); ++j) r[j] = int32_t(g[j] % length_);
      idx = numpy::array(r);
    } else {
      std::vector<int64_t> r(g.size());
      for (size_t j = 0; j < g.size(); ++j) r[j] = g[j] % length_;
      idx = numpy::array(r);
    }
    std::vector<Array> cols;
    cols.reserve(leaves_.size());
    for (const Array& leaf : leaves_) cols.push_back(numpy::take(leaf, idx, 0));
    return def_.unflatten(cols);
  }
  std::string str() const override { return text_; }

 private:
  // a[r] as a new array: one memcpy (an indexing op costs several times more, and a batch
  // after a map cuts batch_size rows per leaf).
  static Array cut_row(const Array& a, int64_t r) {
    Shape s(std::vector<int64_t>(a.shape().begin() + 1, a.shape().end()));
    Array row = jx::detail::empty_array(s, a.dtype(), a.weak_type());
    size_t bytes = row.nbytes();
    std::memcpy(jx::detail::raw_data(row), static_cast<const char*>(jx::detail::raw_data(a)) + size_t(r) * bytes,
                bytes);
    return row;
  }

  std::vector<Array> leaves_;
  tree::TreeDef def_;
  std::string text_;
};

Dataset array_source(const Tree& arrays, const char* op, const std::string& text) {
  auto [leaves, def] = tree::flatten(arrays);
  if (leaves.empty())
    throw ValueError(str("[", op, "] no arrays given (", def.str(),
                         "); pass a pytree of arrays, e.g. {{\"image\", x}, {\"label\", y}}"));
  std::vector<tree::KeyPath> paths = def.leaf_paths();
  auto name = [&](size_t k) {
    std::string s = paths[k].str();
    return s.empty() ? std::string("the array") : str("'", s, "'");
  };
  for (size_t k = 0; k < leaves.size(); ++k) {
    if (!leaves[k].valid())
      throw ValueError(str("[", op, "] ", name(k), " is an empty jx::Array (default-constructed)"));
    if (leaves[k].ndim() == 0)
      throw ValueError(str("[", op, "] ", name(k), " is a scalar ",
                           type_str(leaves[k].dtype(), leaves[k].shape()),
                           "; every array needs a leading axis of elements (reshape it to [1])"));
    if (!leaves[k].is_concrete())
      throw ValueError(str("[", op, "] ", name(k), " is a traced value; make datasets outside jit"));
  }
  int64_t rows = leaves[0].shape()[0];
  for (size_t k = 1; k < leaves.size(); ++k)
    if (leaves[k].shape()[0] != rows)
      throw ValueError(str("[", op, "] the arrays must share their leading size (one row per "
                           "element): ", name(0), " is ", type_str(leaves[0].dtype(), leaves[0].shape()),
                           " but ", name(k), " is ", type_str(leaves[k].dtype(), leaves[k].shape())));
  return Dataset(std::make_shared<ArraySource>(std::move(leaves), std::move(def), rows,
                                               text.empty() ? str(op, "(", rows, ")") : text));
}

void check_exists(const std::string& path, const char* op, const char* what) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw IOError(str("[", op, "] '", path, "' does not exist; pass the path of ", what));
}

// The named members of `all` (every one when `names` is empty), as a dict Tree.
Tree pick(const std::vector<std::pair<std::string, Array>>& all,
          const std::vector<std::string>& names, const char* op, const std::string& path) {
  Tree out = Tree::dict();
  if (names.empty()) {
    for (const auto& [n, a] : all) out.insert(n, a);
    return out;
  }
  for (const std::string& n : names) {
    const Array* found = nullptr;
    for (const auto& [m, a] : all)
      if (m == n) found = &a;
    if (!found) {
      std::string have;
      for (const auto& [m, a] : all) have += jx::str(have.empty() ? "" : ", ", "'", m, "'");
      throw ValueError(str("[", op, "] '", path, "' has no array '", n, "'; it has ",
                           have.empty() ? std::string("none") : have));
    }
    out.insert(n, *found);
  }
  return out;
}

}  // namespace
}  // namespace detail

Dataset from_arrays(const Tree& arrays) { return detail::array_source(arrays, "from_arrays", ""); }

Dataset range(int64_t n) {
  if (n < 0 || n > INT32_MAX)
    throw ValueError(str("[range] n must be in [0, 2^31 - 1], got ", n));
  return detail::array_source(Tree(numpy::arange(n, DType::Int32)), "range", str("range(", n, ")"));
}

Dataset from_idx(const std::string& images_path, const std::string& labels_path) {
  const char* what = "an IDX file (e.g. train-images-idx3-ubyte.gz)";
  detail::check_exists(images_path, "from_idx", what);
  detail::check_exists(labels_path, "from_idx", what);
  Array images = load_idx(images_path), labels = load_idx(labels_path);
  if (labels.ndim() != 1 || images.ndim() < 2 || images.shape()[0] != labels.shape()[0])
    throw ValueError(str("[from_idx] '", images_path, "' holds ", type_str(images.dtype(), images.shape()),
                         " and '", labels_path, "' ", type_str(labels.dtype(), labels.shape()),
                         "; expected n images [n, H, W] (or [n, H, W, C]) and n labels [n]"));
  if (images.ndim() == 3) images = images.reshape({images.shape()[0], images.shape()[1], images.shape()[2], 1});
  return detail::array_source(Tree{{"image", images}, {"label", labels.astype(DType::Int32)}},
                              "from_idx", str("from_idx(", labels.shape()[0], ")"));
}

Dataset from_npy(const std::map<std::string, std::string>& paths) {
  Tree arrays = Tree::dict();
  for (const auto& [name, path] : paths) {
    detail::check_exists(path, "from_npy", "an .npy file (np.save / jnp::save)");
    arrays.insert(name, numpy::load(path));
  }
  return detail::array_source(arrays, "from_npy", "");
}

Dataset from_npz(const std::string& path, const std::vector<std::string>& names) {
  detail::check_exists(path, "from_npz", "an .npz archive (np.savez / jnp::savez)");
  numpy::NpzFile f = numpy::load_npz(path);
  std::vector<std::pair<std::string, Array>> all(f.begin(), f.end());
  return detail::array_source(detail::pick(all, names, "from_npz", path), "from_npz", "");
}

Dataset from_safetensors(const std::string& path, const std::vector<std::string>& names) {
  detail::check_exists(path, "from_safetensors", "a safetensors file");
  std::map<std::string, Array> m = numpy::load_safetensors(path);
  std::vector<std::pair<std::string, Array>> all(m.begin(), m.end());
  return detail::array_source(detail::pick(all, names, "from_safetensors", path),
                              "from_safetensors", "");
}

}  // namespace jx::data
