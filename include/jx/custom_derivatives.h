// Custom derivative rules and rematerialization, as JAX's jax.custom_jvp, jax.custom_vjp
// and jax.checkpoint (jax.remat). All three compose with grad, jvp, vjp, linearize, vmap
// and make_jaxpr, and accept any pytree arguments and results.
//
//   auto log1pexp = jx::custom_jvp([](const Array& x) { return jnp::log1p(jnp::exp(x)); })
//       .defjvp([](const std::tuple<Array>& primals, const std::tuple<Array>& tangents) {
//         auto [x] = primals;
//         auto [t] = tangents;
//         return std::pair(jnp::log1p(jnp::exp(x)), t * (1.0 - 1.0 / (1.0 + jnp::exp(x))));
//       });
//
//   auto clip_gradient = jx::custom_vjp(                  // the identity, gradient clipped
//       [](const Array& lo, const Array& hi, const Array& x) { return x; },       // f
//       [](const Array& lo, const Array& hi, const Array& x) {                    // fwd
//         return std::pair(x, std::pair(lo, hi));                                 //   (out, res)
//       },
//       [](const std::pair<Array, Array>& res, const Array& g) {                  // bwd
//         return std::tuple(Array(), Array(), jx::lax::clamp(res.first, g, res.second));
//       });
//
//   auto block = jx::checkpoint(layer);  // recomputes layer's internals on the backward pass
//
// A custom_jvp rule takes (primals, tangents), two std::tuples of the function's argument
// types, and returns std::pair(primal_out, tangent_out). Tangents that are symbolically
// zero arrive as real zeros (JAX's symbolic_zeros=False). A custom_vjp's fwd takes the
// function's arguments and returns std::pair(out, residuals); bwd takes (residuals,
// out_cotangent) and returns a std::tuple with one cotangent per argument (a
// default-constructed Array leaf means zero). Non-Array arguments are static, as everywhere
// in jx. Forward-mode differentiation (jvp, linearize's f_jvp, jacfwd) of a custom_vjp
// function throws, as in JAX.
#pragma once
#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.h"
#include "jx/transforms.h"
#include "jx/tree.h"

namespace jx {

// Which intermediate values of a checkpointed function may be saved for the backward pass
// (jax.checkpoint_policies); anything not saved is recomputed from the saved ones.
enum class CheckpointPolicy {
  NothingSaveable,               // only the function's inputs (JAX's default, policy=None)
  EverythingSaveable,            // as if there were no checkpoint
  DotsSaveable,                  // outputs of dot_general
  DotsWithNoBatchDimsSaveable,   // outputs of dot_general without batch dimensions
};
namespace checkpoint_policies {
inline constexpr CheckpointPolicy nothing_saveable = CheckpointPolicy::NothingSaveable;
inline constexpr CheckpointPolicy everything_saveable = CheckpointPolicy::EverythingSaveable;
inline constexpr CheckpointPolicy dots_saveable = CheckpointPolicy::DotsSaveable;
inline constexpr CheckpointPolicy checkpoint_dots = CheckpointPolicy::DotsSaveable;
inline constexpr CheckpointPolicy dots_with_no_batch_dims_saveable =
    CheckpointPolicy::DotsWithNoBatchDimsSaveable;
}  // namespace checkpoint_policies

struct CheckpointOptions {
  CheckpointPolicy policy = CheckpointPolicy::NothingSaveable;
  // Kept as JAX's param; the jit compiler's CSE must not merge the recomputation with
  // the forward pass when it is set.
  bool prevent_cse = true;
};

// ---- the flat interface the templates below are built on (src/control/custom_*.cpp) ----
namespace custom {

using FlatFn = ad::FlatFn;
using Flat = std::vector<Array>;
// (primals, tangents) -> (primal outs, tangent outs)
using FlatJvpRule = std::function<std::pair<Flat, Flat>(const Flat&, const Flat&)>;
// args -> (outs, residuals)
using FlatFwd = std::function<std::pair<Flat, Flat>(const Flat&)>;
// (residuals, out cotangents) -> one cotangent per argument leaf (invalid: zero)
using FlatBwd = std::function<Flat(const Flat&, const Flat&)>;

Flat custom_jvp_call(const FlatFn& fun, FlatJvpRule jvp, const Flat& args);
Flat custom_vjp_call(const FlatFn& fun, FlatFwd fwd, FlatBwd bwd, const Flat& args);
Flat checkpoint_call(const FlatFn& fun, const Flat& args, const CheckpointOptions& opts);

// Throws ValueError naming the op, `what`, and both pytree structures.
[[noreturn]] void structure_mismatch(const char* op, const char* what, const tree::TreeDef& got,
                                     const tree::TreeDef& want);

template <class T>
struct IsPair : std::false_type {};
template <class A, class B>
struct IsPair<std::pair<A, B>> : std::true_type {};
template <class T>
struct IsTuple : std::false_type {};
template <class... T>
struct IsTuple<std::tuple<T...>> : std::true_type {};

}  // namespace custom

// ---- custom_jvp ----

template <class F, class Rule>
class CustomJvp {
 public:
  CustomJvp(F f, Rule rule) : f_(std::move(f)), rule_(std::move(rule)) {}

  template <class... Args>
  auto operator()(const Args&... args) const {
    using In = std::tuple<std::decay_t<Args>...>;
    using Out = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
    In in(args...);
    auto [leaves, def] = tree::flatten(in);
    // The rule may run long after this call (when a staged program is differentiated),
    // so everything it needs is owned by the closures.
    auto out_def = std::make_shared<tree::TreeDef>();
    custom::FlatFn fun = [f = f_, def, out_def](const custom::Flat& xs) {
      auto [ol, od] = tree::flatten(Out(std::apply(f, tree::unflatten<In>(def, xs))));
      *out_def = od;
      return ol;
    };
    custom::FlatJvpRule rule = [rule = rule_, def, out_def](const custom::Flat& ps, const custom::Flat& ts) {
      const In primals = tree::unflatten<In>(def, ps);
      const In tangents = tree::unflatten<In>(def, ts);
      auto r = rule(primals, tangents);
      static_assert(custom::IsPair<std::decay_t<decltype(r)>>::value,
                    "a custom_jvp rule must return std::pair(primal_out, tangent_out)");
      auto [pl, pd] = tree::flatten(r.first);
      auto [tl, td] = tree::flatten(r.second);
      if (pd != *out_def)
        custom::structure_mismatch("custom_jvp", "the jvp rule's primal output", pd, *out_def);
      if (td != pd) custom::structure_mismatch("custom_jvp", "the jvp rule's tangent output", td, pd);
      return std::make_pair(std::move(pl), std::move(tl));
    };
    return tree::unflatten<Out>(*out_def, custom::custom_jvp_call(fun, std::move(rule), leaves));
  }

 private:
  F f_;
  Rule rule_;
};

// custom_jvp(f) before its rule is given: only .defjvp is available.
template <class F>
class CustomJvpFn {
 public:
  explicit CustomJvpFn(F f) : f_(std::move(f)) {}
  // Returns the callable with the rule attached (C++ has no decorator that mutates f).
  template <class Rule>
  [[nodiscard]] CustomJvp<F, Rule> defjvp(Rule rule) const {
    return CustomJvp<F, Rule>(f_, std::move(rule));
  }
  template <class... Args>
  void operator()(const Args&...) const {
    static_assert(sizeof...(Args) < 0, "custom_jvp: define the rule with .defjvp(rule) first");
  }

 private:
  F f_;
};

template <class F>
CustomJvpFn<F> custom_jvp(F f) {
  return CustomJvpFn<F>(std::move(f));
}
template <class F, class Rule>
CustomJvp<F, Rule> custom_jvp(F f, Rule rule) {
  return CustomJvp<F, Rule>(std::move(f), std::move(rule));
}

// ---- custom_vjp ----

template <class F, class Fwd, class Bwd>
class CustomVjp {
 public:
  CustomVjp(F f, Fwd fwd, Bwd bwd) : f_(std::move(f)), fwd_(std::move(fwd)), bwd_(std::move(bwd)) {}

  template <class... Args>
  auto operator()(const Args&... args) const {
    using In = std::tuple<std::decay_t<Args>...>;
    using Out = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
    using FwdOut = std::decay_t<std::invoke_result_t<const Fwd&, const Args&...>>;
    static_assert(custom::IsPair<FwdOut>::value,
                  "a custom_vjp fwd must return std::pair(primal_out, residuals)");
    using Res = std::decay_t<typename FwdOut::second_type>;
    In in(args...);
    auto [leaves, def] = tree::flatten(in);
    struct Trees {
      tree::TreeDef out, res;
    };
    auto trees = std::make_shared<Trees>();
    custom::FlatFn fun = [f = f_, def, trees](const custom::Flat& xs) {
      auto [ol, od] = tree::flatten(Out(std::apply(f, tree::unflatten<In>(def, xs))));
      trees->out = od;
      return ol;
    };
    custom::FlatFwd fwd = [fwd = fwd_, def, trees](const custom::Flat& xs) {
      FwdOut r = std::apply(fwd, tree::unflatten<In>(def, xs));
      auto [ol, od] = tree::flatten(r.first);
      if (od != trees->out)
        custom::structure_mismatch("custom_vjp", "the fwd rule's primal output", od, trees->out);
      auto [rl, rd] = tree::flatten(r.second);
      trees->res = rd;
      return std::make_pair(std::move(ol), std::move(rl));
    };
    custom::FlatBwd bwd = [bwd = bwd_, def, trees](const custom::Flat& res, const custom::Flat& cts) {
      auto r = bwd(tree::unflatten<Res>(trees->res, res), tree::unflatten<Out>(trees->out, cts));
      static_assert(custom::IsTuple<std::decay_t<decltype(r)>>::value,
                    "a custom_vjp bwd must return a std::tuple with one cotangent per argument");
      auto [cl, cd] = tree::flatten(r);
      if (cd != def) custom::structure_mismatch("custom_vjp", "the bwd rule's output", cd, def);
      return cl;
    };
    return tree::unflatten<Out>(trees->out,
                                custom::custom_vjp_call(fun, std::move(fwd), std::move(bwd), leaves));
  }

 private:
  F f_;
  Fwd fwd_;
  Bwd bwd_;
};

template <class F>
class CustomVjpFn {
 public:
  explicit CustomVjpFn(F f) : f_(std::move(f)) {}
  template <class Fwd, class Bwd>
  [[nodiscard]] CustomVjp<F, Fwd, Bwd> defvjp(Fwd fwd, Bwd bwd) const {
    return CustomVjp<F, Fwd, Bwd>(f_, std::move(fwd), std::move(bwd));
  }
  template <class... Args>
  void operator()(const Args&...) const {
    static_assert(sizeof...(Args) < 0, "custom_vjp: define fwd and bwd with .defvjp(fwd, bwd) first");
  }

 private:
  F f_;
};

template <class F>
CustomVjpFn<F> custom_vjp(F f) {
  return CustomVjpFn<F>(std::move(f));
}
template <class F, class Fwd, class Bwd>
CustomVjp<F, Fwd, Bwd> custom_vjp(F f, Fwd fwd, Bwd bwd) {
  return CustomVjp<F, Fwd, Bwd>(std::move(f), std::move(fwd), std::move(bwd));
}

// ---- checkpoint (remat) ----

// f, recomputing its intermediate values on the backward pass instead of storing them
// (only what opts.policy allows is stored).
template <class F>
auto checkpoint(F f, CheckpointOptions opts = {}) {
  return [f, opts](const auto&... args) {
    using In = std::tuple<std::decay_t<decltype(args)>...>;
    using Out = std::decay_t<decltype(f(args...))>;
    In in(args...);
    auto [leaves, def] = tree::flatten(in);
    tree::TreeDef out_def;
    custom::FlatFn fun = [&](const custom::Flat& xs) {
      auto [ol, od] = tree::flatten(Out(std::apply(f, tree::unflatten<In>(def, xs))));
      out_def = od;
      return ol;
    };
    custom::Flat outs = custom::checkpoint_call(fun, leaves, opts);
    return tree::unflatten<Out>(out_def, outs);
  };
}
template <class F>
auto remat(F f, CheckpointOptions opts = {}) {
  return checkpoint(std::move(f), opts);
}

}  // namespace jx
