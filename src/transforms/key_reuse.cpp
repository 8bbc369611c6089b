// The key-reuse checker (see key_reuse.h): a table from a key's identity (its buffer or
// tracer) to the uses that consumed it, each with the stack of jaxpr traces it happened
// under. Entries hold only weak references, so a key that dies is forgotten, and an
// address reused by a new buffer or tracer is never mistaken for the old one.
#include "transforms/key_reuse.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/array_impl.h"
#include "jx/error.h"
#include "support/str.h"
#include "transforms/staging.h"

namespace jx::config {
// Defined beside its only reader; declared with the other flags in jx/config.h.
BoolFlag debug_key_reuse("debug_key_reuse", "JX_DEBUG_KEY_REUSE", false);
}  // namespace jx::config

namespace jx::random {
namespace {

// The staging traces (jit, make_jaxpr, control-flow bodies) around the current point,
// outermost first. Weak references compare by owner, so a finished trace stays distinct
// from any trace allocated later at its address.
using Context = std::vector<std::weak_ptr<void>>;

Context current_context() {
  Context c;
  for (tr::Trace* t = tr::current_trace(); t; t = t->parent())
    if (auto* s = dynamic_cast<tr::StagingTrace*>(t)) c.push_back(s->weak_from_this());
  std::reverse(c.begin(), c.end());
  return c;
}

bool same_owner(const std::weak_ptr<void>& a, const std::weak_ptr<void>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

// Two uses conflict unless they happened in different branches: one context must be a
// prefix of the other (the same trace, or a trace and one nested in it).
bool related(const Context& a, const Context& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    if (!same_owner(a[i], b[i])) return false;
  return true;
}

struct Use {
  std::string by;  // the function that consumed the key
  Context context;
};

struct Entry {
  std::weak_ptr<void> owner;  // the buffer or tracer the key lives in
  std::vector<Use> uses;
};

struct Identity {
  const void* address = nullptr;
  std::weak_ptr<void> owner;
};

Identity identity_of(const Array& key) {
  if (!key.valid()) return {};
  const jx::detail::ArrayImpl& im = jx::detail::impl_of(key);
  if (im.tracer) return {im.tracer.get(), im.tracer};
  return {im.buffer.get(), im.buffer};
}

class Table {
 public:
  static Table& get() {
    static Table* t = new Table();  // never destroyed: keys may be consumed during exit
    return *t;
  }

  // The use of `id` that conflicts with one in context `c`, if any.
  const Use* conflict(const Identity& id, const Context& c) {
    Entry* e = find(id);
    if (!e) return nullptr;
    for (const Use& u : e->uses)
      if (related(u.context, c)) return &u;
    return nullptr;
  }

  void add(const Identity& id, std::string by, Context c) {
    Entry* e = find(id);
    if (!e) {
      sweep();
      e = &entries_[id.address];
      e->owner = id.owner;
    }
    e->uses.push_back(Use{std::move(by), std::move(c)});
  }

  // Drops the latest use of `address` (made by a call that then failed).
  void forget_last(const void* address) {
    auto it = entries_.find(address);
    if (it == entries_.end() || it->second.uses.empty()) return;
    it->second.uses.pop_back();
    if (it->second.uses.empty()) entries_.erase(it);
  }

  size_t size() {
    sweep(true);
    return entries_.size();
  }

  std::mutex mu;

 private:
  // The live entry for `id`, dropping a stale one (its owner died, the address moved on).
  Entry* find(const Identity& id) {
    auto it = entries_.find(id.address);
    if (it == entries_.end()) return nullptr;
    if (it->second.owner.expired() || !same_owner(it->second.owner, id.owner)) {
      entries_.erase(it);
      return nullptr;
    }
    return &it->second;
  }

  // Drops dead entries once the table has doubled since the last sweep (amortized O(1)).
  void sweep(bool now = false) {
    if (!now && entries_.size() < next_sweep_) return;
    for (auto it = entries_.begin(); it != entries_.end();)
      it = it->second.owner.expired() ? entries_.erase(it) : std::next(it);
    next_sweep_ = std::max<size_t>(1024, 2 * entries_.size());
  }

  std::unordered_map<const void*, Entry> entries_;
  size_t next_sweep_ = 1024;
};

std::string describe(const Array& key) {
  if (key.is_concrete() && key.size() == 2 && key.dtype() == DType::UInt32) {
    const uint32_t* p = jx::detail::data<uint32_t>(key);
    return str("PRNG key [", p[0], ", ", p[1], "]");
  }
  return str("PRNG key (", key.is_concrete() ? "" : "traced ", type_str(key.dtype(), key.shape()),
             ")");
}

const char* kFix =
    "a key may be consumed once, by one sampler or by split (fold_in and key_data do not "
    "consume it). Split it and give each consumer its own key: "
    "auto [key, subkey] = jr::split<2>(key); (or derive keys with jr::fold_in(key, i))";

[[noreturn]] void throw_reuse(const std::string& where, const Array& key, const Use& first) {
  throw KeyReuseError(str("[", where, "] debug_key_reuse: previously-consumed ", describe(key),
                          " (already consumed by ", first.by, ")",
                          key.is_concrete() ? "" : ", found while tracing: nothing has run", "; ",
                          kFix));
}

thread_local int t_depth = 0;

// Checks and marks `key`; returns the identity marked (null for an empty Array).
const void* consume(const char* fn, const Array& key) {
  const Identity id = identity_of(key);
  if (!id.address) return nullptr;
  Context c = current_context();
  Table& t = Table::get();
  std::lock_guard<std::mutex> g(t.mu);
  if (const Use* u = t.conflict(id, c)) throw_reuse(fn, key, *u);
  t.add(id, fn, std::move(c));
  return id.address;
}

}  // namespace

namespace detail {

KeyUse::KeyUse(const char* fn, const Array& key) : active_(config::debug_key_reuse.value()) {
  if (!active_) return;
  exceptions_ = std::uncaught_exceptions();
  if (t_depth == 0) recorded_ = consume(fn, key);  // may throw: the depth is raised after
  ++t_depth;
}

KeyUse::~KeyUse() {
  if (!active_) return;
  --t_depth;
  if (recorded_ && std::uncaught_exceptions() > exceptions_) {
    // The call failed (bad arguments): it drew nothing, so the key stays unconsumed. No
    // other thread can have marked it since (that would have been a reuse, and thrown).
    Table& t = Table::get();
    std::lock_guard<std::mutex> g(t.mu);
    t.forget_last(recorded_);
  }
}

}  // namespace detail

namespace key_reuse {

std::vector<bool> consumed_inputs(std::span<const Array> inputs) {
  std::vector<bool> mask(inputs.size(), false);
  if (!config::debug_key_reuse) return mask;
  for (size_t i = 0; i < inputs.size(); ++i) mask[i] = inputs[i].valid() && is_consumed(inputs[i]);
  return mask;
}

void consume_arguments(const std::string& what, std::span<const Array> args,
                       const std::vector<bool>& consumes) {
  if (!config::debug_key_reuse) return;
  Context c = current_context();
  Table& t = Table::get();
  std::lock_guard<std::mutex> g(t.mu);
  // Check every argument first, then mark, as JAX: one key passed twice is consumed once.
  for (size_t i = 0; i < args.size() && i < consumes.size(); ++i) {
    if (!consumes[i]) continue;
    const Identity id = identity_of(args[i]);
    if (const Use* u = id.address ? t.conflict(id, c) : nullptr)
      throw_reuse(str(what, ", argument ", i), args[i], *u);
  }
  for (size_t i = 0; i < args.size() && i < consumes.size(); ++i) {
    if (!consumes[i]) continue;
    const Identity id = identity_of(args[i]);
    if (id.address) t.add(id, what, c);
  }
}

bool is_consumed(const Array& key) {
  const Identity id = identity_of(key);
  if (!id.address) return false;
  Context c = current_context();
  Table& t = Table::get();
  std::lock_guard<std::mutex> g(t.mu);
  return t.conflict(id, c) != nullptr;
}

size_t tracked_keys() {
  Table& t = Table::get();
  std::lock_guard<std::mutex> g(t.mu);
  return t.size();
}

}  // namespace key_reuse
}  // namespace jx::random
