// jx::data pipelines: the Dataset front end and the nodes that reorder, cut, batch and map
// elements. Sources are in pipeline_sources.cpp, augmentation in pipeline_augment.cpp, the
// iterator (prefetch, thread pool) in pipeline_iterator.cpp.
#include <algorithm>
#include <climits>
#include <cstring>
#include <deque>
#include <mutex>

#include "core/array_impl.h"
#include "data/pipeline_internal.h"
#include "jx/error.h"
#include "jx/numpy.h"
#include "jx/random.h"
#include "support/str.h"

namespace jx::data {

namespace detail {

// ---- shared helpers ----

Tree Node::get_batch(std::span<const int64_t> g, const Exec& exec) const {
  return stack_elements(get_many(g, exec), "batch");
}

namespace {

// numpy::stack(rows, 0) for rows of one shape and dtype, by one copy per row into the result.
Array stack_rows(const std::vector<Array>& rows) {
  for (const Array& r : rows)
    if (!r.is_concrete()) return numpy::stack(rows, 0);
  std::vector<int64_t> dims{int64_t(rows.size())};
  dims.insert(dims.end(), rows[0].shape().begin(), rows[0].shape().end());
  Array out = jx::detail::empty_array(Shape(dims), rows[0].dtype(), rows[0].weak_type());
  auto* dst = static_cast<char*>(jx::detail::raw_data(out));
  size_t bytes = rows[0].nbytes();
  for (size_t i = 0; i < rows.size(); ++i) std::memcpy(dst + i * bytes, jx::detail::raw_data(rows[i]), bytes);
  return out;
}

}  // namespace

Tree stack_elements(const std::vector<Tree>& elements, const char* op) {
  if (elements.empty()) throw InternalError("[stack_elements] no elements");
  auto [first, def] = tree::flatten(elements[0]);
  std::vector<std::vector<Array>> columns(first.size());
  for (size_t k = 0; k < first.size(); ++k) {
    columns[k].reserve(elements.size());
    columns[k].push_back(std::move(first[k]));
  }
  for (size_t i = 1; i < elements.size(); ++i) {
    auto [leaves, d] = tree::flatten(elements[i]);
    if (d != def)
      throw ValueError(jx::str("[", op, "] element ", i, " of a batch has structure ", d.str(),
                           " but element 0 has ", def.str(),
                           "; every element of a batch needs the same structure"));
    for (size_t k = 0; k < leaves.size(); ++k) {
      const Array& a = leaves[k];
      const Array& a0 = columns[k][0];
      if (a.shape() != a0.shape() || a.dtype() != a0.dtype())
        throw ValueError(jx::str("[", op, "] leaf '", def.leaf_paths()[k].str(), "' is ",
                             type_str(a.dtype(), a.shape()), " in element ", i, " of a batch but ",
                             type_str(a0.dtype(), a0.shape()),
                             " in element 0; batched leaves need one shape and dtype (crop or pad "
                             "them in a map before batch)"));
      columns[k].push_back(a);
    }
  }
  std::vector<Array> stacked;
  stacked.reserve(columns.size());
  for (auto& c : columns) stacked.push_back(stack_rows(c));
  return def.unflatten(stacked);
}

void rethrow_with_prefix(std::exception_ptr e, const std::string& prefix) {
  try {
    std::rethrow_exception(e);
  } catch (const ShapeError& x) {
    throw ShapeError(jx::str(prefix, x.what()));
  } catch (const DTypeError& x) {
    throw DTypeError(jx::str(prefix, x.what()));
  } catch (const IndexError& x) {
    throw IndexError(jx::str(prefix, x.what()));
  } catch (const ValueError& x) {
    throw ValueError(jx::str(prefix, x.what()));
  } catch (const IOError& x) {
    throw IOError(jx::str(prefix, x.what()));
  } catch (const ConcretizationError& x) {
    throw ConcretizationError(jx::str(prefix, x.what()));
  } catch (const TypeError& x) {
    throw TypeError(jx::str(prefix, x.what()));
  } catch (const FloatingPointError& x) {
    throw FloatingPointError(jx::str(prefix, x.what()));
  } catch (const Error& x) {
    throw Error(jx::str(prefix, x.what()));
  } catch (const InternalError& x) {
    throw InternalError(jx::str(prefix, x.what()));
  }
  // Any other exception type propagates from the catch-less rethrow above unchanged.
}

void check_key(const Array& key, const char* op) {
  if (!key.valid() || key.dtype() != DType::UInt32 || key.shape() != Shape{2})
    throw ValueError(jx::str("[", op, "] key must be a PRNG key, uint32[2] (jx::random::PRNGKey(seed) "
                         "or a key from jx::random::split); got ",
                         key.valid() ? type_str(key.dtype(), key.shape()) : std::string("no array")));
}

namespace {

// ---- nodes that only renumber elements ----

// Maps its own global indices to its parent's; batches pass through, so a batch of an array
// source stays one gather.
class IndexNode : public Node {
 public:
  using Node::Node;
  virtual void parent_indices(std::span<const int64_t> g, std::vector<int64_t>& out) const = 0;
  std::vector<Tree> get_many(std::span<const int64_t> g, const Exec& exec) const override {
    std::vector<int64_t> pg;
    parent_indices(g, pg);
    return parent_->get_many(pg, exec);
  }
  Tree get_batch(std::span<const int64_t> g, const Exec& exec) const override {
    std::vector<int64_t> pg;
    parent_indices(g, pg);
    return parent_->get_batch(pg, exec);
  }
};

class ShuffleNode : public IndexNode {
 public:
  ShuffleNode(std::shared_ptr<const Node> parent, Array key)
      : IndexNode(parent, parent->length(), parent->batched()), key_(std::move(key)) {}

  void parent_indices(std::span<const int64_t> g, std::vector<int64_t>& out) const override {
    out.resize(g.size());
    int64_t cached_epoch = -1;
    std::shared_ptr<const std::vector<int32_t>> ord;
    for (size_t j = 0; j < g.size(); ++j) {
      auto [e, p] = locate(g[j]);
      if (e != cached_epoch) {
        ord = order(e);
        cached_epoch = e;
      }
      out[j] = e * length_ + (*ord)[size_t(p)];
    }
  }
  void collect_keys(std::vector<Array>& keys) const override {
    parent_->collect_keys(keys);
    keys.push_back(key_);
  }
  std::string str() const override { return jx::str(parent_->str(), ".shuffle()"); }

 private:

  // permutation(fold_in(key, e), n), kept for the last two epochs (a prefetching iterator
  // near an epoch's end asks for both).
  std::shared_ptr<const std::vector<int32_t>> order(int64_t e) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [epoch, ord] : cache_)
      if (epoch == e) return ord;
    Array perm = random::permutation(random::fold_in(key_, e), Array(int32_t(length_)));
    auto ord = std::make_shared<const std::vector<int32_t>>(perm.to_vector<int32_t>());
    cache_.emplace_back(e, ord);
    if (cache_.size() > 2) cache_.pop_front();
    return ord;
  }

  Array key_;
  mutable std::mutex mu_;
  mutable std::deque<std::pair<int64_t, std::shared_ptr<const std::vector<int32_t>>>> cache_;
};

class RepeatNode : public IndexNode {
 public:
  RepeatNode(std::shared_ptr<const Node> parent, std::optional<int64_t> count)
      : IndexNode(parent, count && !parent->infinite() ? *count * parent->length() : kInfinite,
                  parent->batched()),
        count_(count) {}
  void parent_indices(std::span<const int64_t> g, std::vector<int64_t>& out) const override {
    out.assign(g.begin(), g.end());  // the parent's epochs follow one another
  }
  std::string str() const override {
    return count_ ? jx::str(parent_->str(), ".repeat(", *count_, ")")
                  : jx::str(parent_->str(), ".repeat()");
  }

 private:
  std::optional<int64_t> count_;
};

// take, skip and shard: element p of an epoch is the parent's element start + p * step of
// the same epoch (of an infinite parent: element start + g * step).
class SliceNode : public IndexNode {
 public:
  SliceNode(std::shared_ptr<const Node> parent, int64_t length, int64_t start, int64_t step,
            std::string text)
      : IndexNode(parent, length, parent->batched()), start_(start), step_(step),
        text_(std::move(text)) {}
  void parent_indices(std::span<const int64_t> g, std::vector<int64_t>& out) const override {
    out.resize(g.size());
    if (parent_->infinite()) {
      for (size_t j = 0; j < g.size(); ++j) out[j] = start_ + g[j] * step_;
      return;
    }
    for (size_t j = 0; j < g.size(); ++j) {
      auto [e, p] = locate(g[j]);
      out[j] = e * parent_->length() + start_ + p * step_;
    }
  }
  std::string str() const override { return jx::str(parent_->str(), text_); }

 private:
  int64_t start_, step_;
  std::string text_;
};

// ---- batch and map ----

class BatchNode : public Node {
 public:
  BatchNode(std::shared_ptr<const Node> parent, int64_t batch_size, bool drop_remainder)
      : Node(parent,
             parent->infinite() ? kInfinite
             : drop_remainder   ? parent->length() / batch_size
                                : (parent->length() + batch_size - 1) / batch_size,
             true),
        batch_size_(batch_size), drop_remainder_(drop_remainder) {}

  std::vector<Tree> get_many(std::span<const int64_t> g, const Exec& exec) const override {
    std::vector<Tree> out;
    out.reserve(g.size());
    std::vector<int64_t> pg;
    for (int64_t gi : g) {
      pg.clear();
      if (parent_->infinite()) {
        for (int64_t j = 0; j < batch_size_; ++j) pg.push_back(gi * batch_size_ + j);
      } else {
        auto [e, p] = locate(gi);
        int64_t start = p * batch_size_, stop = std::min(parent_->length(), start + batch_size_);
        for (int64_t i = start; i < stop; ++i) pg.push_back(e * parent_->length() + i);
      }
      out.push_back(parent_->get_batch(pg, exec));
    }
    return out;
  }
  // The batch itself computes in parallel (its map); batches come one at a time.
  int parallelism() const override { return 1; }
  std::string str() const override {
    return jx::str(parent_->str(), ".batch(", batch_size_, drop_remainder_ ? ", drop_remainder)" : ")");
  }

 private:
  int64_t batch_size_;
  bool drop_remainder_;
};

class MapNode : public Node {
 public:
  MapNode(std::shared_ptr<const Node> parent, MapFn fn, int num_threads, const char* op)
      : Node(parent, parent->length(), parent->batched()), fn_(std::move(fn)),
        num_threads_(num_threads), op_(op) {}

  std::vector<Tree> get_many(std::span<const int64_t> g, const Exec& exec) const override {
    std::vector<Tree> in = parent_->get_many(g, exec);
    std::vector<Tree> out(in.size());
    std::vector<std::exception_ptr> errors(in.size());
    auto run = [&](int64_t j) {
      try {
        out[size_t(j)] = fn_(in[size_t(j)]);
      } catch (...) {
        errors[size_t(j)] = std::current_exception();
      }
    };
    if (exec.pool && num_threads_ > 1 && in.size() > 1)
      exec.pool->parallel_for(int64_t(in.size()), num_threads_, run);
    else
      for (size_t j = 0; j < in.size(); ++j) run(int64_t(j));
    for (size_t j = 0; j < in.size(); ++j)
      if (errors[j]) rethrow_with_prefix(errors[j], jx::str("[", op_, "] element ", g[j], ": "));
    return out;
  }
  int parallelism() const override { return std::max(num_threads_, parent_->parallelism()); }
  int max_threads() const override { return std::max(num_threads_, parent_->max_threads()); }
  std::string str() const override {
    return jx::str(parent_->str(), ".", op_, num_threads_ > 1 ? jx::str("(num_threads=", num_threads_, ")") : "()");
  }

 private:
  MapFn fn_;
  int num_threads_;
  const char* op_;
};

}  // namespace

}  // namespace detail

// ---- Dataset ----

using detail::kInfinite;

Dataset::Dataset(std::shared_ptr<const detail::Node> node, int64_t prefetch)
    : node_(std::move(node)), prefetch_(prefetch) {}

const detail::Node& Dataset::checked(const char* op) const {
  if (!node_)
    throw ValueError(jx::str("[", op, "] the Dataset is empty (default-constructed); start from a "
                         "source: jx::data::from_arrays, range, from_idx, from_npy, from_npz or "
                         "from_safetensors"));
  return *node_;
}

Dataset Dataset::with(std::shared_ptr<const detail::Node> node, const char* op) const {
  if (prefetch_ > 0)
    throw ValueError(jx::str("[", op, "] comes after prefetch(", prefetch_,
                         "); prefetch must be the last transformation (it buffers the "
                         "pipeline's output): move it to the end"));
  return Dataset(std::move(node), 0);
}

Dataset Dataset::shuffle(const Array& key) const {
  const detail::Node& n = checked("shuffle");
  detail::check_key(key, "shuffle");
  if (n.infinite())
    throw ValueError(jx::str("[shuffle] ", n.str(), " is infinite (repeat() without a count); shuffle "
                         "a finite dataset and repeat after it: .shuffle(key).repeat()"));
  if (n.length() > INT32_MAX)
    throw ValueError(jx::str("[shuffle] ", n.length(), " elements per epoch; at most 2^31 - 1 can be "
                         "shuffled (jax.random.permutation without x64)"));
  return with(std::make_shared<detail::ShuffleNode>(node_, key), "shuffle");
}

Dataset Dataset::batch(int64_t batch_size, bool drop_remainder) const {
  checked("batch");
  if (batch_size < 1)
    throw ValueError(jx::str("[batch] batch_size must be at least 1, got ", batch_size));
  return with(std::make_shared<detail::BatchNode>(node_, batch_size, drop_remainder), "batch");
}

Dataset Dataset::map(MapFn fn, MapOptions options) const {
  checked("map");
  if (!fn) throw ValueError("[map] fn is empty (a default-constructed std::function)");
  if (options.num_threads < 1)
    throw ValueError(jx::str("[map] num_threads must be at least 1, got ", options.num_threads));
  return with(std::make_shared<detail::MapNode>(node_, std::move(fn), options.num_threads, "map"),
              "map");
}

Dataset Dataset::map_batches(MapFn fn, MapOptions options) const {
  const detail::Node& n = checked("map_batches");
  if (!n.batched())
    throw ValueError(jx::str("[map_batches] ", n.str(), " is not batched; call batch(n) first, or use "
                         "map for single elements"));
  if (!fn) throw ValueError("[map_batches] fn is empty (a default-constructed std::function)");
  if (options.num_threads < 1)
    throw ValueError(jx::str("[map_batches] num_threads must be at least 1, got ", options.num_threads));
  return with(
      std::make_shared<detail::MapNode>(node_, std::move(fn), options.num_threads, "map_batches"),
      "map_batches");
}

Dataset Dataset::prefetch(int64_t buffer_size) const {
  checked("prefetch");
  if (buffer_size < 1)
    throw ValueError(jx::str("[prefetch] buffer_size must be at least 1, got ", buffer_size,
                         " (leave prefetch out for none)"));
  if (prefetch_ > 0)
    throw ValueError(jx::str("[prefetch] the dataset already prefetches ", prefetch_,
                         " elements; call prefetch once"));
  return Dataset(node_, buffer_size);
}

Dataset Dataset::repeat(std::optional<int64_t> count) const {
  checked("repeat");
  if (count && *count < 0)
    throw ValueError(jx::str("[repeat] count must be at least 0, got ", *count,
                         " (leave it out to repeat forever)"));
  return with(std::make_shared<detail::RepeatNode>(node_, count), "repeat");
}

Dataset Dataset::take(int64_t n) const {
  const detail::Node& p = checked("take");
  if (n < 0) throw ValueError(jx::str("[take] n must be at least 0, got ", n));
  int64_t len = p.infinite() ? n : std::min(n, p.length());
  return with(std::make_shared<detail::SliceNode>(node_, len, 0, 1, jx::str(".take(", n, ")")), "take");
}

Dataset Dataset::skip(int64_t n) const {
  const detail::Node& p = checked("skip");
  if (n < 0) throw ValueError(jx::str("[skip] n must be at least 0, got ", n));
  int64_t len = p.infinite() ? kInfinite : std::max<int64_t>(0, p.length() - n);
  return with(std::make_shared<detail::SliceNode>(node_, len, n, 1, jx::str(".skip(", n, ")")), "skip");
}

Dataset Dataset::shard(int64_t num_shards, int64_t index) const {
  const detail::Node& p = checked("shard");
  if (num_shards < 1)
    throw ValueError(jx::str("[shard] num_shards must be at least 1, got ", num_shards));
  if (index < 0 || index >= num_shards)
    throw ValueError(jx::str("[shard] index ", index, " is out of range for ", num_shards,
                         " shards; pass 0 <= index < num_shards (e.g. the process index)"));
  int64_t len = p.infinite()           ? kInfinite
                : p.length() <= index ? 0
                                      : (p.length() - index + num_shards - 1) / num_shards;
  return with(std::make_shared<detail::SliceNode>(node_, len, index, num_shards,
                                                  jx::str(".shard(", num_shards, ", ", index, ")")),
              "shard");
}

Dataset Dataset::random_crop(const Array& key, std::array<int64_t, 2> size, int64_t padding,
                             const std::string& field) const {
  checked("random_crop");
  detail::check_key(key, "random_crop");
  if (size[0] < 1 || size[1] < 1 || padding < 0)
    throw ValueError(jx::str("[random_crop] size must be positive and padding at least 0; got size (",
                         size[0], ", ", size[1], "), padding ", padding));
  return with(detail::make_augment(node_, {detail::Augment::Crop, key, size, padding, field}),
              "random_crop");
}

Dataset Dataset::random_flip_left_right(const Array& key, const std::string& field) const {
  checked("random_flip_left_right");
  detail::check_key(key, "random_flip_left_right");
  return with(detail::make_augment(node_, {detail::Augment::FlipLeftRight, key, {}, 0, field}),
              "random_flip_left_right");
}

std::optional<int64_t> Dataset::size() const {
  const detail::Node& n = checked("size");
  if (n.infinite()) return std::nullopt;
  return n.length();
}

Tree Dataset::operator[](int64_t g) const {
  const detail::Node& n = checked("Dataset[]");
  if (g < 0) throw IndexError(jx::str("[Dataset[]] index ", g, " is negative; indices start at 0"));
  if (n.length() == 0) throw IndexError(jx::str("[Dataset[]] ", n.str(), " has no elements"));
  int64_t idx[1] = {g};
  return std::move(n.get_many(idx, detail::Exec{})[0]);
}

Iterator Dataset::iterator() const {
  checked("iterator");
  return Iterator(*this, 0, 0);
}

Iterator Dataset::iterator(const IteratorState& state) const {
  checked("iterator");
  Iterator it(*this, 0, 0);
  it.set_state(state);
  return it;
}

EpochRange Dataset::epoch(int64_t e) const {
  checked("epoch");
  if (e < 0) throw ValueError(jx::str("[epoch] epoch ", e, " is negative"));
  return EpochRange(*this, e);
}

ElementIterator Dataset::begin() const { return epoch(0).begin(); }

std::string Dataset::str() const {
  if (!node_) return "Dataset()";
  return prefetch_ > 0 ? jx::str(node_->str(), ".prefetch(", prefetch_, ")") : node_->str();
}

}  // namespace jx::data
