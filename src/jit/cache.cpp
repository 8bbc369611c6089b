#include "jit/cache.h"

#include <cstdlib>
#include <list>
#include <string>
#include <unordered_map>

#include "support/str.h"

namespace jx::jit_detail {

namespace {

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)); }

int64_t default_budget() {
  const char* s = std::getenv("JX_JIT_CACHE_BYTES");
  if (!s || !*s) return int64_t(1) << 30;
  char* end = nullptr;
  long long v = std::strtoll(s, &end, 10);
  if (!end || *end || v < 0)
    throw ValueError(str("[jit] environment variable JX_JIT_CACHE_BYTES='", s,
                         "' is not a byte count; give a non-negative integer"));
  return int64_t(v);
}

}  // namespace

void CacheKey::finish() {
  size_t h = size_t(kind) * 31 + owner;
  h = mix(h, std::hash<const void*>()(jaxpr.get()));
  h = mix(h, def.hash());
  for (const ops::Aval& a : avals) {
    h = mix(h, size_t(a.dtype) * 2 + size_t(a.weak));
    for (int64_t d : a.shape) h = mix(h, size_t(d));
  }
  for (bool b : mask) h = mix(h, b ? 2 : 1);
  hash = mix(h, size_t(extra));
}

bool CacheKey::operator==(const CacheKey& o) const {
  return hash == o.hash && kind == o.kind && owner == o.owner && jaxpr == o.jaxpr &&
         extra == o.extra && mask == o.mask && avals == o.avals && def == o.def;
}

struct KeyHash {
  size_t operator()(const CacheKey& k) const { return k.hash; }
};

struct JitCache::Impl {
  struct Slot {
    CacheKey key;
    std::shared_ptr<Entry> entry;
    int64_t bytes = 0;
  };
  std::mutex mu;
  std::list<Slot> lru;  // most recently used first
  std::unordered_map<CacheKey, std::list<Slot>::iterator, KeyHash> map;
  int64_t bytes = 0;
  int64_t budget = default_budget();
  int64_t hits = 0, misses = 0, evictions = 0;

  void drop(std::list<Slot>::iterator it) {
    bytes -= it->bytes;
    map.erase(it->key);
    lru.erase(it);
  }
};

JitCache::JitCache() : impl_(new Impl) {}

// Never destroyed: jitted functions held in static objects may outlive any destruction order.
JitCache& JitCache::get() {
  static JitCache* c = new JitCache();
  return *c;
}

std::shared_ptr<Entry> JitCache::find(const CacheKey& key, bool count) {
  std::lock_guard<std::mutex> g(impl_->mu);
  auto it = impl_->map.find(key);
  if (it == impl_->map.end()) {
    if (count) ++impl_->misses;
    return nullptr;
  }
  if (count) ++impl_->hits;
  impl_->lru.splice(impl_->lru.begin(), impl_->lru, it->second);
  return it->second->entry;
}

std::shared_ptr<Entry> JitCache::get_or_create_impl(const CacheKey& key, bool count,
                                                    std::shared_ptr<Entry> (*make)(), bool* created) {
  std::lock_guard<std::mutex> g(impl_->mu);
  auto it = impl_->map.find(key);
  if (it != impl_->map.end()) {
    if (count) ++impl_->hits;
    if (created) *created = false;
    impl_->lru.splice(impl_->lru.begin(), impl_->lru, it->second);
    return it->second->entry;
  }
  if (count) ++impl_->misses;
  if (created) *created = true;
  impl_->lru.push_front(Impl::Slot{key, make(), 0});
  impl_->map.emplace(key, impl_->lru.begin());
  return impl_->lru.front().entry;
}

void JitCache::set_bytes(const CacheKey& key, const Entry* e, int64_t bytes) {
  std::lock_guard<std::mutex> g(impl_->mu);
  auto it = impl_->map.find(key);
  if (it == impl_->map.end() || it->second->entry.get() != e) return;  // evicted meanwhile
  impl_->bytes += bytes - it->second->bytes;
  it->second->bytes = bytes;
  evict_locked(e);
}

// Drops least recently used entries until the total fits, never the one just filled.
void JitCache::evict_locked(const Entry* keep) {
  while (impl_->bytes > impl_->budget && !impl_->lru.empty()) {
    auto last = std::prev(impl_->lru.end());
    if (last->entry.get() == keep) {
      if (impl_->lru.size() == 1) return;
      impl_->lru.splice(impl_->lru.begin(), impl_->lru, last);
      continue;
    }
    impl_->drop(last);
    ++impl_->evictions;
  }
}

void JitCache::erase(const CacheKey& key, const Entry* e) {
  std::lock_guard<std::mutex> g(impl_->mu);
  auto it = impl_->map.find(key);
  if (it != impl_->map.end() && it->second->entry.get() == e) impl_->drop(it->second);
}

void JitCache::erase_owner(uint64_t owner) {
  std::lock_guard<std::mutex> g(impl_->mu);
  for (auto it = impl_->lru.begin(); it != impl_->lru.end();) {
    auto next = std::next(it);
    if (it->key.kind == EntryKind::Signature && it->key.owner == owner) impl_->drop(it);
    it = next;
  }
}

void JitCache::clear() {
  // Entries are destroyed outside the lock: an entry may own jaxprs whose destruction
  // releases arrays, never the cache, but keep the critical section short anyway.
  std::list<Impl::Slot> dropped;
  {
    std::lock_guard<std::mutex> g(impl_->mu);
    impl_->map.clear();
    dropped.swap(impl_->lru);
    impl_->bytes = 0;
  }
}

void JitCache::set_budget(int64_t bytes) {
  if (bytes < 0)
    throw ValueError(str("[jit] the cache budget must be non-negative, got ", bytes, " bytes"));
  std::lock_guard<std::mutex> g(impl_->mu);
  impl_->budget = bytes;
  evict_locked(nullptr);
}

int64_t JitCache::budget() {
  std::lock_guard<std::mutex> g(impl_->mu);
  return impl_->budget;
}

JitStats JitCache::stats() {
  std::lock_guard<std::mutex> g(impl_->mu);
  JitStats s;
  s.traces = traces_.load();
  s.compiles = compiles_.load();
  s.hits = impl_->hits;
  s.misses = impl_->misses;
  s.evictions = impl_->evictions;
  s.entries = int64_t(impl_->lru.size());
  s.bytes = impl_->bytes;
  return s;
}

void JitCache::reset_stats() {
  std::lock_guard<std::mutex> g(impl_->mu);
  impl_->hits = impl_->misses = impl_->evictions = 0;
  traces_ = 0;
  compiles_ = 0;
}

}  // namespace jx::jit_detail

namespace jx {

JitStats jit_stats() { return jit_detail::JitCache::get().stats(); }
void reset_jit_stats() { jit_detail::JitCache::get().reset_stats(); }
void clear_jit_cache() { jit_detail::JitCache::get().clear(); }
void set_jit_cache_bytes(int64_t bytes) { jit_detail::JitCache::get().set_budget(bytes); }
int64_t jit_cache_bytes() { return jit_detail::JitCache::get().budget(); }

}  // namespace jx
