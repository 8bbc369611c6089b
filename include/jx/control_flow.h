// Structured control flow, as jax.lax: cond, switch, while_loop, fori_loop, scan, map.
//
// Each construct is a primitive holding sub-jaxprs (its branches or loop body), traced
// once at the operands' shapes and dtypes, so it works eagerly and under every
// transformation (jit, grad, jvp, vmap) with JAX's semantics:
//
//   Array y = jx::lax::cond(x.sum() > 0, [](Array v) { return v; },
//                           [](Array v) { return -v; }, x);
//   Array s = jx::lax::fori_loop(0, 10, [](Array i, Array acc) { return acc + i; }, Array(0));
//   auto [h, hs] = jx::lax::scan([&](Array h, Array x) {
//     Array h2 = jnp::tanh(jnp::matmul(W, h) + x);
//     return std::make_pair(h2, h2);
//   }, h0, xs);
//
// Operands, carries and outputs are pytrees. Branch outputs and loop carries must keep
// their tree structure, shapes and dtypes (a TypeError names the offending leaf);
// weakly typed initial carries (C++ scalars) are promoted to the body's output type, as
// JAX does. Branches and bodies may also capture values instead of taking operands.
// Reverse-mode differentiation works through cond, switch, scan, map and fori_loop with
// static (C++ int) bounds; while_loop supports forward mode only, as in JAX.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.h"
#include "jx/tree.h"

namespace jx::lax {

// ---- the flat interface the templates below are built on (src/control) ----
namespace cf {

// What a traced branch or body returns: its output leaves, and the tree structure of
// each output part (cond: one; scan: carry and y; while's cond_fun: none).
struct FlatOut {
  std::vector<Array> leaves;
  std::vector<tree::TreeDef> defs;
};
using FlatBody = std::function<FlatOut(const std::vector<Array>&)>;

// `index` already clamped or 0/1; `api` ("cond" or "switch") names the construct in errors.
std::vector<Array> cond_flat(const char* api, const Array& index, const std::vector<FlatBody>& branches,
                             const std::vector<Array>& operands, tree::TreeDef* out_def);
// The int32 branch index of a cond predicate (bool, or a number compared with 0).
Array cond_index(const Array& pred);
// The clamped int32 index of a switch over `num_branches` branches.
Array switch_index(const Array& index, size_t num_branches);

// body_fun returns the new carry (defs[0]); cond_fun a bool scalar.
std::vector<Array> while_flat(const char* api, const FlatBody& cond_fun, const FlatBody& body_fun,
                              std::vector<Array> init, const tree::TreeDef& init_def);

struct ScanSpec {
  std::optional<int64_t> length = std::nullopt;
  bool reverse = false;
  int64_t unroll = 1;
};
// f(carry..., x...) returns (carry..., y...) with defs {carry, y}. Returns (carry..., ys...)
// and sets *y_def.
std::vector<Array> scan_flat(const char* api, const FlatBody& f, std::vector<Array> init,
                             const tree::TreeDef& init_def, const std::vector<Array>& xs,
                             const ScanSpec& spec, tree::TreeDef* y_def);

// The trip count of a fori_loop with static bounds (0 when upper < lower).
int64_t fori_length(int64_t lower, int64_t upper);
// For fori_loop with Array bounds: their common dtype (as jnp promotion of the two).
std::pair<Array, Array> fori_bounds(const Array& lower, const Array& upper);

template <class R>
FlatOut flatten_out(const R& r) {
  auto [leaves, def] = tree::flatten(r);
  return FlatOut{std::move(leaves), {std::move(def)}};
}

}  // namespace cf

// cond(pred, true_fun, false_fun, operands...): true_fun(operands...) if pred else
// false_fun(operands...). pred is a scalar (bool, or a number: nonzero is true) Array or a
// C++ bool. Both branches are traced; only the selected one runs.
template <class TrueFun, class FalseFun, class... Ops>
auto cond(const Array& pred, TrueFun true_fun, FalseFun false_fun, const Ops&... operands) {
  using In = std::tuple<Ops...>;
  using R = std::decay_t<std::invoke_result_t<TrueFun&, const Ops&...>>;
  In in(operands...);
  auto [leaves, in_def] = tree::flatten(in);
  auto wrap = [def = in_def](auto fn) -> cf::FlatBody {
    return [fn, def](const std::vector<Array>& xs) mutable {
      return cf::flatten_out(R(std::apply(fn, tree::unflatten<In>(def, xs))));
    };
  };
  // JAX's branches are (false_fun, true_fun), indexed by the predicate as 0/1.
  std::vector<cf::FlatBody> branches{wrap(std::move(false_fun)), wrap(std::move(true_fun))};
  tree::TreeDef out_def;
  auto outs = cf::cond_flat("cond", cf::cond_index(pred), branches, leaves, &out_def);
  return tree::unflatten<R>(out_def, outs);
}
template <class TrueFun, class FalseFun, class... Ops>
auto cond(bool pred, TrueFun true_fun, FalseFun false_fun, const Ops&... operands) {
  return cond(Array(pred), std::move(true_fun), std::move(false_fun), operands...);
}

// switch_(index, branches, operands...): branches[clamp(index, 0, n-1)](operands...), as
// lax.switch (a trailing underscore because `switch` is a C++ keyword). index is an
// integer scalar Array or C++ integer.
template <class Fn, class... Ops>
auto switch_(const Array& index, const std::vector<Fn>& branches, const Ops&... operands) {
  using In = std::tuple<Ops...>;
  using R = std::decay_t<std::invoke_result_t<const Fn&, const Ops&...>>;
  if (branches.empty()) throw ValueError("[switch] got an empty sequence of branches; give at least one");
  Array idx = cf::switch_index(index, branches.size());
  if (branches.size() == 1) return R(branches[0](operands...));
  In in(operands...);
  auto [leaves, in_def] = tree::flatten(in);
  std::vector<cf::FlatBody> flat;
  for (const Fn& fn : branches)
    flat.push_back([fn, def = in_def](const std::vector<Array>& xs) {
      return cf::flatten_out(R(std::apply(fn, tree::unflatten<In>(def, xs))));
    });
  tree::TreeDef out_def;
  auto outs = cf::cond_flat("switch", idx, flat, leaves, &out_def);
  return tree::unflatten<R>(out_def, outs);
}

// while_loop(cond_fun, body_fun, init): the carry after iterating body_fun while
// cond_fun(carry) is true. cond_fun returns a bool scalar Array.
template <class CondFun, class BodyFun, class T>
T while_loop(CondFun cond_fun, BodyFun body_fun, const T& init) {
  auto [leaves, def] = tree::flatten(init);
  cf::FlatBody c = [cond_fun, def = def](const std::vector<Array>& xs) mutable {
    return cf::FlatOut{{Array(cond_fun(tree::unflatten<T>(def, xs)))}, {}};
  };
  cf::FlatBody b = [body_fun, def = def](const std::vector<Array>& xs) mutable {
    return cf::flatten_out(T(body_fun(tree::unflatten<T>(def, xs))));
  };
  auto outs = cf::while_flat("while_loop", c, b, std::move(leaves), def);
  return tree::unflatten<T>(def, outs);
}

struct ScanOptions {
  std::optional<int64_t> length = std::nullopt;  // needed when xs has no leaves (jx::none)
  bool reverse = false;
  int64_t unroll = 1;  // a hint for compiled code; eager execution is the same
};

// scan(f, init, xs, opts) -> (carry, ys): f(carry, x) returns std::pair(carry, y); x is xs
// sliced along its leading axis, ys stacks the y's along a new leading axis. xs may be
// any pytree, or jx::none with opts.length. With reverse, the slices are visited from last
// to first (ys keep xs's order).
template <class F, class C, class X>
auto scan(F f, const C& init, const X& xs, ScanOptions opts = {}) {
  using SliceT = X;  // a slice of xs has the same tree type
  using Out = std::decay_t<std::invoke_result_t<F&, const C&, const SliceT&>>;
  using Y = std::decay_t<typename Out::second_type>;
  auto [init_leaves, init_def] = tree::flatten(init);
  auto [xs_leaves, xs_def] = tree::flatten(xs);
  size_t nc = init_leaves.size();
  cf::FlatBody body = [f, cd = init_def, xd = xs_def, nc](const std::vector<Array>& in) mutable {
    std::vector<Array> c(in.begin(), in.begin() + long(nc)), x(in.begin() + long(nc), in.end());
    Out r = f(tree::unflatten<C>(cd, c), tree::unflatten<SliceT>(xd, x));
    auto [cl, cdef] = tree::flatten(r.first);
    auto [yl, ydef] = tree::flatten(r.second);
    cl.insert(cl.end(), yl.begin(), yl.end());
    return cf::FlatOut{std::move(cl), {std::move(cdef), std::move(ydef)}};
  };
  tree::TreeDef y_def;
  auto outs = cf::scan_flat("scan", body, std::move(init_leaves), init_def, xs_leaves,
                            {opts.length, opts.reverse, opts.unroll}, &y_def);
  std::vector<Array> carry(outs.begin(), outs.begin() + long(nc)), ys(outs.begin() + long(nc), outs.end());
  return std::make_pair(tree::unflatten<C>(init_def, carry), tree::unflatten<Y>(y_def, ys));
}

// fori_loop(lower, upper, body(i, val), init): val after body for i = lower .. upper-1.
// With C++ integer bounds the trip count is static and the loop is a scan (so reverse-mode
// differentiation works), as JAX does for concrete bounds; i is a weak int32 scalar.
template <class F, class T>
T fori_loop(int64_t lower, int64_t upper, F body, const T& init, int64_t unroll = 1) {
  using Carry = std::pair<Array, T>;
  int64_t length = cf::fori_length(lower, upper);
  auto step = [body](const Carry& c, const None&) mutable {
    return std::make_pair(Carry(c.first + 1, T(body(c.first, c.second))), none);
  };
  auto r = scan(step, Carry(Array(lower), init), none, ScanOptions{length, false, unroll});
  return r.first.second;
}
// With Array bounds: concrete ones make a scan as above; traced ones (e.g. under jit or
// vmap) a while_loop, which has no reverse-mode derivative (as in JAX).
template <class F, class T>
T fori_loop(const Array& lower, const Array& upper, F body, const T& init, int64_t unroll = 1) {
  if (lower.is_concrete() && upper.is_concrete() && lower.ndim() == 0 && upper.ndim() == 0 &&
      is_integer(lower.dtype()) && is_integer(upper.dtype())) {
    auto [lo, hi] = cf::fori_bounds(lower, upper);
    using Carry = std::pair<Array, T>;
    int64_t length = cf::fori_length(lo.template item<int64_t>(), hi.template item<int64_t>());
    auto step = [body](const Carry& c, const None&) mutable {
      return std::make_pair(Carry(c.first + 1, T(body(c.first, c.second))), none);
    };
    auto r = scan(step, Carry(lo, init), none, ScanOptions{length, false, unroll});
    return r.first.second;
  }
  auto [lo, hi] = cf::fori_bounds(lower, upper);
  using Carry = std::tuple<Array, Array, T>;
  auto r = while_loop([](const Carry& c) { return std::get<0>(c) < std::get<1>(c); },
                      [body](const Carry& c) mutable {
                        const Array& i = std::get<0>(c);
                        return Carry(i + 1, std::get<1>(c), T(body(i, std::get<2>(c))));
                      },
                      Carry(lo, hi, init));
  return std::get<2>(r);
}

// map(f, xs): f applied to each slice of xs along its leading axis, results stacked
// (lax.map: a scan with no carry).
template <class F, class X>
auto map(F f, const X& xs) {
  auto step = [f](const None&, const X& x) mutable { return std::make_pair(none, f(x)); };
  return scan(step, none, xs).second;
}

}  // namespace jx::lax
