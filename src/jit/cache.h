// The process-wide jit cache: traced and compiled programs, bounded by an estimate of their
// bytes with least-recently-used eviction, thread-safe. Two kinds of entries share it:
//   - a jitted function's entry per argument signature (owner = the function's id);
//   - memoized transformations of a pjit's jaxpr (its compiled executable, jvp, linearize
//     split, transpose, batched forms), keyed by the source jaxpr's identity. Such an entry
//     holds the source jaxpr alive, so its address cannot be reused while the key exists.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ir/jaxpr.h"
#include "jx/jit.h"
#include "jx/tree.h"

namespace jx::jit_detail {

enum class EntryKind : uint8_t { Signature, Compiled, Jvp, Linearize, Transpose, Batch };

struct CacheKey {
  EntryKind kind = EntryKind::Signature;
  uint64_t owner = 0;                 // Signature: the jitted function's id
  std::shared_ptr<const ir::Jaxpr> jaxpr;  // memo entries: the source jaxpr (compared by identity)
  tree::TreeDef def;                  // Signature: the arguments' structure with static values
  std::vector<ops::Aval> avals;       // Signature: each leaf's type
  std::vector<bool> mask;             // memo entries: which inputs are nonzero/linear/batched
  int64_t extra = 0;                  // Signature: config bits; Batch: the axis size
  size_t hash = 0;

  void finish();  // computes hash
  bool operator==(const CacheKey& o) const;
};

// What a cache slot holds; filled once (call_once) by whoever created it.
struct Entry {
  virtual ~Entry() = default;
  std::once_flag filled;
};

class JitCache {
 public:
  static JitCache& get();

  // The entry for `key`, or null.
  std::shared_ptr<Entry> find(const CacheKey& key, bool count);
  // The entry for `key`, created by make() when absent. `*created` tells which.
  template <class E>
  std::shared_ptr<E> get_or_create(const CacheKey& key, bool count, bool* created = nullptr) {
    return std::static_pointer_cast<E>(get_or_create_impl(
        key, count, [] { return std::shared_ptr<Entry>(std::make_shared<E>()); }, created));
  }
  // Records the size of a filled entry and evicts beyond the budget.
  void set_bytes(const CacheKey& key, const Entry* e, int64_t bytes);
  void erase(const CacheKey& key, const Entry* e);
  void erase_owner(uint64_t owner);
  void clear();

  void set_budget(int64_t bytes);
  int64_t budget();
  JitStats stats();
  void reset_stats();
  void count_trace() { traces_.fetch_add(1, std::memory_order_relaxed); }
  void count_compile() { compiles_.fetch_add(1, std::memory_order_relaxed); }

 private:
  JitCache();
  std::shared_ptr<Entry> get_or_create_impl(const CacheKey& key, bool count,
                                            std::shared_ptr<Entry> (*make)(), bool* created);
  void evict_locked(const Entry* keep);
  struct Impl;
  Impl* impl_;
  std::atomic<int64_t> traces_{0}, compiles_{0};
};

}  // namespace jx::jit_detail
