// The jit front end: the call path of a jitted function (include/jx/jit.h). Eagerly, a call
// looks its argument signature up in the jit cache; a miss traces the function to a jaxpr
// and compiles it (once, even when threads race), a hit runs the executable. Under a
// transformation the call binds the pjit primitive with the (cached) jaxpr instead.
#include <atomic>
#include <cstdio>
#include <deque>

#include "jit/cache.h"
#include "jit/internal.h"
#include "jx/config.h"
#include "jx/jit.h"
#include "jx/lax.h"
#include "ops/common.h"
#include "transforms/bind.h"
#include "transforms/jaxpr_transforms.h"
#include "transforms/key_reuse.h"

namespace jx::jit_detail {

namespace {

std::string aval_text(const ops::Aval& a) {
  return ops::aval_str(a) + (a.weak ? "{weak_type=True}" : "");
}

// Config flags that change what tracing produces (or checks) are part of the key: a function
// traced with debug_key_reuse off is traced again, and checked, once it is on.
int64_t config_bits() {
  return (config::threefry_partitionable ? 1 : 0) | (config::debug_key_reuse ? 2 : 0);
}

}  // namespace

CacheKey signature_key(const JitCore& core, tree::TreeDef&& def, const std::vector<Array>& leaves) {
  CacheKey k;
  k.kind = EntryKind::Signature;
  k.owner = core.id;
  k.def = std::move(def);
  k.avals.reserve(leaves.size());
  for (const Array& x : leaves) k.avals.push_back(ops::aval_of(x));
  k.extra = config_bits();
  k.finish();
  return k;
}

// The differences between an earlier signature and this one, as "what: before -> now".
std::vector<std::string> differences(const CacheKey& before, const CacheKey& now) {
  std::vector<std::string> d;
  const char* flags[] = {"threefry_partitionable", "debug_key_reuse"};
  for (int bit = 0; bit < 2; ++bit)
    if (((before.extra ^ now.extra) >> bit) & 1)
      d.push_back(str("config ", flags[bit], ": ", (before.extra >> bit) & 1 ? "true" : "false", " -> ",
                      (now.extra >> bit) & 1 ? "true" : "false"));
  const auto& a = before.def.nodes();
  const auto& b = now.def.nodes();
  bool same_shape = a.size() == b.size();
  for (size_t i = 0; same_shape && i < a.size(); ++i) {
    same_shape = a[i].kind == b[i].kind && a[i].arity == b[i].arity;
    if (same_shape && a[i].kind == tree::NodeKind::Dict)
      same_shape = before.def.node_string(a[i]) == now.def.node_string(b[i]);
  }
  if (!same_shape) {
    d.push_back(str("the argument structure: ", before.def, " -> ", now.def));
    return d;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind != tree::NodeKind::Static) continue;
    std::string x = before.def.node_str(i), y = now.def.node_str(i);
    if (x == y) continue;
    d.push_back(str("static argument ", now.def.node_path(i), ": ", x, " -> ", y));
    // A float is static only where f takes a C++ double (or inside a container).
    if (a[i].skind == tree::detail::StaticKind::Float)
      d.back() += " (a floating scalar is traced only as a top-level argument that f takes as "
                  "an Array; take it as `const jx::Array&`, or pass jx::traced(v))";
  }
  std::vector<tree::KeyPath> paths = now.def.leaf_paths();
  for (size_t i = 0; i < now.avals.size(); ++i)
    if (!(before.avals[i] == now.avals[i]))
      d.push_back(str("argument ", paths[i].str(), ": ", aval_text(before.avals[i]), " -> ",
                      aval_text(now.avals[i])));
  return d;
}

namespace {

// Why `key` missed: compared with the closest signature seen before.
std::string explain_miss(JitCore& core, const CacheKey& key) {
  std::vector<std::string> best;
  bool any = false;
  {
    std::lock_guard<std::mutex> g(core.mu);
    for (const auto& s : core.seen) {
      std::vector<std::string> d = differences(*s, key);
      if (d.empty()) continue;  // the same signature, evicted since
      if (!any || d.size() < best.size()) best = std::move(d);
      any = true;
    }
    if (!any && !core.seen.empty()) return "cache miss: this signature was compiled before and evicted";
  }
  if (!any) return "first call";
  std::string s = "cache miss: ";
  for (size_t i = 0; i < best.size(); ++i) s += (i ? "; " : "") + best[i];
  return s;
}

}  // namespace

std::string signature_text(const CacheKey& key) {
  std::string s = "(";
  for (size_t i = 0; i < key.avals.size(); ++i) s += (i ? ", " : "") + aval_text(key.avals[i]);
  return s + ")";
}

namespace {

// Traces the user's function at the key's leaf types, with the current trace as parent;
// `consumes` gets the leaves that the function consumes as PRNG keys (debug_key_reuse).
tr::TracedJaxpr trace(const CacheKey& key, TraceFn fn, std::shared_ptr<const tree::TreeDef>* out_def,
                      std::vector<bool>* consumes) {
  JitCache::get().count_trace();
  tree::TreeDef def;
  tr::TracedJaxpr t = tr::trace_to_jaxpr(
      [&](const Arrays& xs) {
        Arrays out = fn(xs, key.def, &def);
        *consumes = random::key_reuse::consumed_inputs(xs);
        return out;
      },
      key.avals);
  *out_def = std::make_shared<const tree::TreeDef>(std::move(def));
  return t;
}

bool all_concrete(const Arrays& xs) {
  for (const Array& x : xs)
    if (!x.is_concrete()) return false;
  return true;
}

// Per leaf: whether its argument is in donate_argnums.
std::vector<bool> donated_leaves(const JitCore& core, const tree::TreeDef& in_def) {
  std::vector<bool> mask(in_def.num_leaves(), false);
  if (core.opts.donate_argnums.empty()) return mask;
  std::vector<tree::TreeDef> args = in_def.children();
  size_t off = 0;
  std::vector<size_t> first;
  for (const tree::TreeDef& a : args) {
    first.push_back(off);
    off += a.num_leaves();
  }
  for (int a : core.opts.donate_argnums) {
    if (size_t(a) >= args.size())
      throw ValueError(str("[jit] donate_argnums holds ", a, " but '", core.opts.name, "' is called with ",
                           args.size(), " arguments; give indices of its arguments"));
    for (size_t k = 0; k < args[size_t(a)].num_leaves(); ++k) mask[first[size_t(a)] + k] = true;
  }
  return mask;
}

void compile_entry(JitCore& core, SignatureEntry& e, const CacheKey& key, const std::string& why) {
  ir::Jaxpr j = *e.jaxpr;
  size_t n = e.consts.size();
  j.constvars.assign(j.invars.begin(), j.invars.begin() + long(n));
  j.invars.erase(j.invars.begin(), j.invars.begin() + long(n));
  j.consts = e.consts;
  compiler::CompileOptions opts;
  opts.name = core.opts.name;
  opts.donate = e.donate;
  e.exe = compile_counted(j, opts, why);
  JitCache::get().set_bytes(key, &e, program_bytes(*e.jaxpr) + arrays_bytes(e.consts));
}

// The caller's donated Arrays give up their buffers: the executable gets each as its only
// owner (so it may be reused for an output) and the caller's handles are left deleted.
Array take_donated(const Array& x, const std::vector<Array>& leaves, size_t self) {
  const auto& im = x.impl();
  for (size_t k = 0; k < leaves.size(); ++k)
    if (k != self && leaves[k].impl() == im) return lax::copy(x);  // also passed elsewhere: keep it
  Array arg = im->buffer.use_count() > 1 ? lax::copy(x) : x;  // a view shares the buffer
  auto fresh = std::make_shared<detail::ArrayImpl>();
  fresh->shape = im->shape;
  fresh->dtype = im->dtype;
  fresh->weak = im->weak;
  fresh->buffer = arg.impl()->buffer;
  im->buffer.reset();
  if (arg.impl() != im) arg.impl()->buffer.reset();
  return Array(std::move(fresh));
}

}  // namespace

std::vector<Array> run_entry(JitCore& core, SignatureEntry& e, std::vector<Array>& leaves) {
  bool any_donated = false;
  for (bool d : e.donate) any_donated = any_donated || d;
  tr::CurrentTraceGuard g(nullptr);
  Arrays rerun_args = e.consts;
  if (config::debug_nans) {
    // The rerun needs the inputs as they were, donated or not.
    for (size_t i = 0; i < leaves.size(); ++i) rerun_args.push_back(e.donate[i] ? lax::copy(leaves[i]) : leaves[i]);
  }
  if (!any_donated) return run_checked(*e.exe, leaves, *e.jaxpr, rerun_args, core.opts.name);
  std::vector<Array> args(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) args[i] = e.donate[i] ? take_donated(leaves[i], leaves, i) : leaves[i];
  leaves.clear();
  return run_checked(*e.exe, args, *e.jaxpr, rerun_args, core.opts.name);
}

std::shared_ptr<SignatureEntry> traced_entry(JitCore& core, const CacheKey& key, TraceFn fn, std::string* why) {
  JitCache& cache = JitCache::get();
  auto e = cache.get_or_create<SignatureEntry>(key, true);
  try {
    std::call_once(e->filled, [&] {
      if (config::log_compiles) *why = explain_miss(core, key);
      tr::TracedJaxpr t = trace(key, fn, &e->out_def, &e->consumes);
      e->jaxpr = std::make_shared<const ir::Jaxpr>(std::move(t.jaxpr));
      e->consts = std::move(t.consts);
      e->donate = donated_leaves(core, key.def);
      core.remember(key);
      e->ready = true;
    });
  } catch (...) {
    cache.erase(key, e.get());
    throw;
  }
  return e;
}

void compile_once(JitCore& core, SignatureEntry& e, const CacheKey& key, std::string why) {
  try {
    std::call_once(e.compiled_once, [&] {
      if (why.empty()) why = "first call (traced under a transformation before)";
      compile_entry(core, e, key, why);
    });
  } catch (...) {
    JitCache::get().erase(key, &e);
    throw;
  }
}

std::shared_ptr<JitCore> make_core(JitOptions opts) { return std::make_shared<JitCore>(std::move(opts)); }

bool disabled() { return config::disable_jit; }

std::vector<Array> call(JitCore& core, tree::TreeDef&& in_def, std::vector<Array>& leaves,
                        TraceFn fn, std::shared_ptr<const tree::TreeDef>* out_def) {
  bool eager = tr::current_trace() == nullptr;
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!leaves[i].valid())
      throw ValueError(str("[jit] argument leaf ", i, " of '", core.opts.name,
                           "' is an empty jx::Array (default-constructed); give it a value first"));
    eager = eager && leaves[i].is_concrete();
  }
  CacheKey key = signature_key(core, std::move(in_def), leaves);
  JitCache& cache = JitCache::get();

  if (eager) {
    std::string why;
    std::shared_ptr<SignatureEntry> e = traced_entry(core, key, fn, &why);
    compile_once(core, *e, key, std::move(why));
    *out_def = e->out_def;
    // JAX: a jitted function that consumes a key argument consumes the caller's key.
    if (config::debug_key_reuse)
      random::key_reuse::consume_arguments(str("jit '", core.opts.name, "'"), leaves, e->consumes);
    // Committed arguments commit the results to their device (jx/device.h).
    const int32_t device = detail::committed_device("jit", leaves);
    std::vector<Array> outs = run_entry(core, *e, leaves);
    if (device >= 0)
      for (Array& o : outs) detail::commit(o, device);
    return outs;
  }

  // Under a transformation: bind pjit on [consts..., leaves...], so the enclosing traces
  // transform the call. The jaxpr is cached unless it captured a value of an enclosing
  // transformation (then it belongs to this call only).
  std::shared_ptr<const ir::Jaxpr> jaxpr;
  Arrays operands;
  std::vector<bool> consumes;
  auto found = std::static_pointer_cast<SignatureEntry>(cache.find(key, true));
  if (found && found->ready) {
    jaxpr = found->jaxpr;
    operands = found->consts;
    consumes = found->consumes;
    *out_def = found->out_def;
  } else {
    if (config::log_compiles) {
      std::string line = str("[jit] tracing '", core.opts.name, "' for ", signature_text(key),
                             " under a transformation: ", explain_miss(core, key), "\n");
      std::fputs(line.c_str(), stderr);
    }
    tr::TracedJaxpr t = trace(key, fn, out_def, &consumes);
    jaxpr = std::make_shared<const ir::Jaxpr>(std::move(t.jaxpr));
    operands = std::move(t.consts);
    core.remember(key);
    if (all_concrete(operands)) {
      auto e = cache.get_or_create<SignatureEntry>(key, false);
      std::call_once(e->filled, [&] {
        e->jaxpr = jaxpr;
        e->consts = operands;
        e->out_def = *out_def;
        e->donate = donated_leaves(core, key.def);
        e->consumes = consumes;
        e->ready = true;
        cache.set_bytes(key, e.get(), program_bytes(*jaxpr) + arrays_bytes(operands));
      });
    }
  }
  if (config::debug_key_reuse)
    random::key_reuse::consume_arguments(str("jit '", core.opts.name, "'"), leaves, consumes);
  operands.insert(operands.end(), leaves.begin(), leaves.end());
  return bind_pjit(jaxpr, core.opts.name, operands);
}

}  // namespace jx::jit_detail
