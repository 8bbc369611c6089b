// jit: trace a function once per argument signature, compile the jaxpr, and run the
// compiled program on later calls (jax.jit).
//
//   auto step = jx::jit(train_step, {.donate_argnums = {0}, .name = "step"});
//   auto [params2, loss] = step(params, x, y);   // same call signature as train_step
//
// Arguments and results are pytrees. Array leaves are traced, and so is an argument that
// is a C++ floating-point scalar: it becomes a weakly typed float32 scalar Array, as JAX
// traces a Python float, so `step(params, x, lr)` with a learning rate that changes every
// step compiles once (f must take that parameter as an Array; where f takes a `double`
// there, the value stays static). Every other leaf (bool, integers, enums, strings, and
// floating scalars inside containers or structs) is static: part of the cache key, so a
// changed static value retraces (no static_argnums needed). jx::static_arg(v) makes an
// argument static, jx::traced(v) makes a C++ number a traced weak scalar. The cache key is
// (the argument TreeDef with its static values, each Array leaf's shape, dtype and weak
// type).
//
// Semantics to know (as in JAX):
// - f runs once per signature, on tracers: side effects in f (printing, counting) happen at
//   trace time only; use jx::debug::print to print values at run time.
// - Values f reads from outside (captured by a lambda) are baked in when f is traced. Pass
//   anything that changes between calls as an argument.
// - donate_argnums: the buffers of the donated arguments' Array leaves may be reused for the
//   outputs. The caller's donated Arrays (and every copy of them) are deleted by the call:
//   using one afterwards is an error. Donation applies to top-level (eager) calls only.
// - Under another transformation (grad, vmap, an enclosing jit, a scan body) the call
//   becomes a `pjit` equation holding f's jaxpr, which those transformations then transform.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.h"
#include "jx/error.h"
#include "jx/tree.h"

namespace jx {

struct JitOptions {
  // Indices of the arguments whose Array leaves are donated (see above).
  std::vector<int> donate_argnums = {};
  // For logs, jaxpr printouts (pjit[name=...]) and errors; "<lambda>" when empty.
  std::string name = {};
};

// Counters of the process-wide jit cache.
struct JitStats {
  int64_t traces = 0;     // functions traced to jaxprs (top-level jit calls that missed)
  int64_t compiles = 0;   // jaxprs compiled (top-level, and transformed/nested pjit calls)
  int64_t hits = 0;       // jit calls whose signature was in the cache
  int64_t misses = 0;     // jit calls that had to trace
  int64_t evictions = 0;  // entries dropped to stay under the byte budget
  int64_t entries = 0;    // entries held now
  int64_t bytes = 0;      // their estimated size (constants + programs)
};
JitStats jit_stats();
void reset_jit_stats();  // zeroes the counters (entries stay)
void clear_jit_cache();  // drops every entry
// The cache's byte budget (least recently used entries are evicted beyond it). Default
// 1 GiB, or JX_JIT_CACHE_BYTES.
void set_jit_cache_bytes(int64_t bytes);
int64_t jit_cache_bytes();

// jx::static_arg(v): v is passed to f as it is and is part of the cache key (JAX's
// static_argnums for one argument), whatever its type.
template <class T>
struct StaticArg {
  T value;
};
template <class T>
StaticArg<std::decay_t<T>> static_arg(T&& v) {
  return {std::forward<T>(v)};
}
// jx::traced(v): a C++ number as a traced weak scalar (int32 or float32), e.g. a step count
// that should not recompile.
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Array traced(T v) {
  return Array(v);
}

namespace jit_detail {

// What f receives for a call argument of type T, and how.
template <class T>
struct Arg {
  using traced = T;  // what f receives when floating scalars are traced
  static const T& trace(const T& v) { return v; }
  static const T& plain_value(const T& v) { return v; }
};
template <class T>
  requires std::is_floating_point_v<T>
struct Arg<T> {
  using traced = Array;
  static Array trace(T v) { return Array(v); }
  static T plain_value(T v) { return v; }
};
template <class T>
struct Arg<StaticArg<T>> {
  using traced = T;
  static const T& trace(const StaticArg<T>& v) { return v.value; }
  static const T& plain_value(const StaticArg<T>& v) { return v.value; }
};

class JitCore;

// A non-owning reference to a callable (no allocation on the fast path).
template <class Sig>
class FnRef;
template <class R, class... A>
class FnRef<R(A...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FnRef>>>
  FnRef(F& f) : obj_(&f), call_([](void* o, A... a) -> R { return (*static_cast<F*>(o))(a...); }) {}
  R operator()(A... a) const { return call_(obj_, a...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};

// Traces the user's function on the given leaves (tracers) of arguments structured as
// `in_def` and returns the result leaves, storing the result TreeDef in *out_def.
using TraceFn =
    FnRef<std::vector<Array>(const std::vector<Array>&, const tree::TreeDef&, tree::TreeDef*)>;

// The arguments as one tuple pytree, flattened without copying them.
template <class... Args>
std::pair<std::vector<Array>, tree::TreeDef> flatten_args(const Args&... args) {
  std::vector<tree::detail::Node> nodes;
  nodes.reserve(8);
  std::string pool;
  std::vector<Array> leaves;
  tree::detail::Builder b(nodes, pool, &leaves);
  size_t root = b.open(tree::NodeKind::Tuple);
  (tree::detail::flatten_node(args, b), ...);
  b.close(root, sizeof...(Args));
  return {std::move(leaves), tree::detail::Builder::finish(nodes, std::move(pool))};
}

std::shared_ptr<JitCore> make_core(JitOptions opts);
bool disabled();
// The whole call path: cache lookup, tracing on a miss, compile, run (or bind pjit under a
// trace). `leaves` may be consumed (donation). *out_def is set to the results' structure.
std::vector<Array> call(JitCore& core, tree::TreeDef&& in_def, std::vector<Array>& leaves,
                        TraceFn trace, std::shared_ptr<const tree::TreeDef>* out_def);

}  // namespace jit_detail

// The callable jit returns. Copies share one cache.
template <class F>
class Jitted {
 public:
  Jitted(F f, JitOptions opts) : f_(std::move(f)), core_(jit_detail::make_core(std::move(opts))) {}

  template <class... Args>
  auto operator()(const Args&... args) const {
    using jit_detail::Arg;
    if constexpr (std::is_invocable_v<const F&, const typename Arg<Args>::traced&...>)
      return call(Arg<Args>::trace(args)...);
    else
      return call(Arg<Args>::plain_value(args)...);
  }

 private:
  template <class... Args>
  auto call(const Args&... args) const {
    using R = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
    if (jit_detail::disabled()) return R(f_(args...));
    using In = std::tuple<std::decay_t<Args>...>;
    auto flat = jit_detail::flatten_args(args...);
    auto trace = [this](const std::vector<Array>& xs, const tree::TreeDef& in_def, tree::TreeDef* out_def) {
      // Rebuilt from the TreeDef: static leaves come back with their values.
      auto out = tree::flatten(R(std::apply(f_, tree::unflatten<In>(in_def, xs))));
      *out_def = std::move(out.second);
      return std::move(out.first);
    };
    std::shared_ptr<const tree::TreeDef> out_def;
    std::vector<Array> outs = jit_detail::call(*core_, std::move(flat.second), flat.first,
                                               jit_detail::TraceFn(trace), &out_def);
    return tree::unflatten<R>(*out_def, std::move(outs));
  }

  F f_;
  std::shared_ptr<jit_detail::JitCore> core_;
};

template <class F>
Jitted<std::decay_t<F>> jit(F&& f, JitOptions opts = {}) {
  return Jitted<std::decay_t<F>>(std::forward<F>(f), std::move(opts));
}

}  // namespace jx
