// jit's plumbing, shared by jx::jit (jit.h) and ahead-of-time compilation (aot.h): how a
// call's arguments become traced leaves, and the non-template entry points. Include
// jx/jit.h, not this file.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.h"
#include "jx/tree.h"

namespace jx {

struct JitOptions;
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

// One replica's call of f (pmap, shard_map): f(args...) jitted through `core` with `key` as a
// leading static argument (so the programs of different axis sizes or meshes never share a
// cache entry), or eagerly under disable_jit. Returns the result's leaves; *out_def is set
// to their structure.
template <class R, class Key, class F, class... Args>
std::vector<Array> call_replica(JitCore& core, const Key& key, const F& f, const std::tuple<Args...>& args,
                                std::shared_ptr<const tree::TreeDef>* out_def) {
  if (disabled()) {
    auto flat = tree::flatten(R(std::apply(f, args)));
    *out_def = std::make_shared<const tree::TreeDef>(std::move(flat.second));
    return std::move(flat.first);
  }
  auto flat = std::apply([&](const auto&... a) { return flatten_args(key, a...); }, args);
  // f on traced leaves of (key, args...), the key dropped.
  auto trace = [&f](const std::vector<Array>& xs, const tree::TreeDef& in_def, tree::TreeDef* od) {
    auto in = tree::unflatten<std::tuple<Key, Args...>>(in_def, xs);
    auto out = tree::flatten(R(std::apply([&](const Key&, const auto&... a) { return f(a...); }, in)));
    *od = std::move(out.second);
    return std::move(out.first);
  };
  return call(core, std::move(flat.second), flat.first, TraceFn(trace), out_def);
}

}  // namespace jit_detail

}  // namespace jx
