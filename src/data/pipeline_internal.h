// The nodes of a jx::data pipeline and the thread pool that runs maps. Internal to src/data.
//
// Every node answers for any global index g >= 0 (epoch g / length, position g % length), so
// element g is a pure function of g: iterators, prefetching and thread counts only decide
// when elements are computed, never what they are.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "jx/data.h"

namespace jx::data::detail {

inline constexpr int64_t kInfinite = -1;

// A fixed set of worker threads for parallel_for; owned by an Iterator, joined on destruction.
// Called first on every pipeline thread (the prefetch producer, the map workers): their jx
// ops run without an OpenMP team of their own (pipeline_iterator.cpp says why).
void run_jx_ops_on_this_thread_only();

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  int size() const { return int(workers_.size()); }
  // Runs fn(0) ... fn(n-1) on up to max_workers workers and waits for all. fn must not throw
  // (callers catch per index, so that every error keeps its element).
  void parallel_for(int64_t n, int max_workers, const std::function<void(int64_t)>& fn);

 private:
  void work();
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
};

// How a node may run work: the iterator's pool, or none (serially, on the calling thread).
struct Exec {
  ThreadPool* pool = nullptr;
};

class Node {
 public:
  Node(std::shared_ptr<const Node> parent, int64_t length, bool batched)
      : parent_(std::move(parent)), length_(length), batched_(batched) {}
  virtual ~Node() = default;

  int64_t length() const { return length_; }  // per epoch, or kInfinite
  bool infinite() const { return length_ == kInfinite; }
  bool batched() const { return batched_; }
  const std::shared_ptr<const Node>& parent() const { return parent_; }

  // Elements g[0], g[1], ... (in that order).
  virtual std::vector<Tree> get_many(std::span<const int64_t> g, const Exec& exec) const = 0;
  // The same elements stacked leaf by leaf along a new axis 0 (a batch). Index nodes pass the
  // indices down, so that a batch of an array source is one take per leaf.
  virtual Tree get_batch(std::span<const int64_t> g, const Exec& exec) const;
  // How many elements one get_many call can compute in parallel (map threads above any batch).
  virtual int parallelism() const { return parent_ ? parent_->parallelism() : 1; }
  // The most threads any map of the pipeline uses (the iterator's pool size).
  virtual int max_threads() const { return parent_ ? parent_->max_threads() : 1; }
  // Appends the node's PRNG keys (uint32[2]) after its parents', in pipeline order.
  virtual void collect_keys(std::vector<Array>& keys) const {
    if (parent_) parent_->collect_keys(keys);
  }
  // "from_arrays(10).shuffle().batch(4)".
  virtual std::string str() const = 0;

  // (epoch, position) of global index g.
  std::pair<int64_t, int64_t> locate(int64_t g) const {
    if (infinite()) return {0, g};
    return {g / length_, g % length_};
  }

 protected:
  std::shared_ptr<const Node> parent_;
  int64_t length_;
  bool batched_;
};

// Stacks elements of one structure leaf by leaf along a new axis 0; `op` names the caller in
// the ValueError for elements that differ in structure, shape or dtype.
Tree stack_elements(const std::vector<Tree>& elements, const char* op);

// Rethrows the exception in `e` as the same jx error type with `prefix` in front of its
// message; other exceptions are rethrown unchanged.
[[noreturn]] void rethrow_with_prefix(std::exception_ptr e, const std::string& prefix);

// Checks that `key` is a raw PRNG key (uint32[2]).
void check_key(const Array& key, const char* op);

// Makes the augmentation node (pipeline_augment.cpp).
enum class Augment { Crop, FlipLeftRight };
struct AugmentParams {
  Augment kind = Augment::Crop;
  Array key;
  std::array<int64_t, 2> size{};
  int64_t padding = 0;
  std::string field;
};
std::shared_ptr<const Node> make_augment(std::shared_ptr<const Node> parent, AugmentParams params);

// Element keys fold_in(fold_in(key, e_j), p_j) as (k0, k1) pairs, computed together.
std::vector<std::array<uint32_t, 2>> element_keys(const Array& key, std::span<const int64_t> epochs,
                                                  std::span<const int64_t> positions);

}  // namespace jx::data::detail
