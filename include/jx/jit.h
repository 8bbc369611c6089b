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
// - jit(f).lower(args...).compile() traces and compiles ahead of time, with the program's
//   text, generated source, cost and memory analyses (jx/aot.h).
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

#include "jx/aot.h"
#include "jx/array.h"
#include "jx/error.h"
#include "jx/jit_detail.h"
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

  // Traces f for these arguments' types without running it (jx/aot.h): the result's
  // compile() builds the executable, which then serves calls of this function too.
  template <class... Args>
  auto lower(const Args&... args) const {
    using jit_detail::Arg;
    if constexpr (std::is_invocable_v<const F&, const typename Arg<Args>::traced&...>)
      return lower_as(Arg<Args>::trace(args)...);
    else
      return lower_as(Arg<Args>::plain_value(args)...);
  }

 private:
  // Calls f on traced leaves of arguments of types Args; R is f's result type.
  template <class R, class... Args>
  struct Tracer {
    const F& f;
    std::vector<Array> operator()(const std::vector<Array>& xs, const tree::TreeDef& in_def,
                                  tree::TreeDef* out_def) const {
      using In = std::tuple<std::decay_t<Args>...>;
      // Rebuilt from the TreeDef: static leaves come back with their values.
      auto out = tree::flatten(R(std::apply(f, tree::unflatten<In>(in_def, xs))));
      *out_def = std::move(out.second);
      return std::move(out.first);
    }
  };

  template <class... Args>
  auto call(const Args&... args) const {
    using R = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
    if (jit_detail::disabled()) return R(f_(args...));
    auto flat = jit_detail::flatten_args(args...);
    Tracer<R, Args...> trace{f_};
    std::shared_ptr<const tree::TreeDef> out_def;
    std::vector<Array> outs = jit_detail::call(*core_, std::move(flat.second), flat.first,
                                               jit_detail::TraceFn(trace), &out_def);
    return tree::unflatten<R>(*out_def, std::move(outs));
  }

  template <class... Args>
  auto lower_as(const Args&... args) const {
    using R = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
    auto flat = jit_detail::flatten_args(args...);
    Tracer<R, Args...> trace{f_};
    return Lowered<R, std::decay_t<Args>...>(
        jit_detail::lower(core_, std::move(flat.second), flat.first, jit_detail::TraceFn(trace)));
  }

  F f_;
  std::shared_ptr<jit_detail::JitCore> core_;
};

template <class F>
Jitted<std::decay_t<F>> jit(F&& f, JitOptions opts = {}) {
  return Jitted<std::decay_t<F>>(std::forward<F>(f), std::move(opts));
}

}  // namespace jx
