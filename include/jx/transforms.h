// Function transformations over pytrees: jvp, linearize, vjp, grad, value_and_grad,
// jacfwd, jacrev, hessian, make_jaxpr, stop_gradient. As in JAX, they nest to any depth
// (grad of grad, jacfwd of jacrev) and accept any pytree arguments; non-Array leaves of
// the arguments (bool, int, enums, strings) are static and never traced.
//
//   auto [loss, grads] = jx::value_and_grad(loss_fn)(params, x, y);  // grads: like params
//   auto dfdx_dy = jx::grad<0, 1>(f)(x, y);                          // std::tuple of grads
//   std::cout << jx::make_jaxpr(f)(x);
#pragma once
#include <array>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.h"
#include "jx/tree.h"

namespace jx {

// ---- the flat interface the templates below are built on (src/transforms/api.cpp) ----
namespace ad {

using FlatFn = std::function<std::vector<Array>(const std::vector<Array>&)>;

std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const FlatFn& f,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents);

// f linearized at a point: its outputs and the linear map (forward and transposed).
class LinearFn {
 public:
  const std::vector<Array>& primals_out() const;
  std::vector<Array> apply(const std::vector<Array>& tangents) const;        // J . t
  std::vector<Array> transpose(const std::vector<Array>& cotangents) const;  // J^T . c
  size_t num_inputs() const;
  std::vector<std::pair<Shape, DType>> out_types() const;
  struct Impl;
  explicit LinearFn(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
};
LinearFn linearize_flat(const FlatFn& f, const std::vector<Array>& primals);

// Throws DTypeError unless every leaf is floating or complex (grad of an int input is an
// error, as JAX). With `holomorphic` every leaf must be complex; without `allow_complex`
// (jacfwd) every leaf must be real.
void check_differentiable_inputs(const char* op, const std::vector<Array>& leaves,
                                 bool holomorphic = false, bool allow_complex = true);
// Throws unless `out` is a real floating scalar (grad needs a real scalar output), or with
// `holomorphic` a complex scalar.
void check_scalar_output(const char* op, const Array& out, bool holomorphic = false);
Array ones_like(const Array& x);

// A copy of `args` with the argument at each index Is[k] replaced by std::get<k>(diff).
template <size_t... Is, class Diff, class... Args>
std::tuple<Args...> replace_args(const std::tuple<Args...>& args, const Diff& diff) {
  std::tuple<Args...> out = args;
  constexpr std::array<size_t, sizeof...(Is)> idx{Is...};
  [&]<size_t... K>(std::index_sequence<K...>) {
    ((std::get<idx[K]>(out) = std::get<K>(diff)), ...);
  }(std::make_index_sequence<sizeof...(Is)>{});
  return out;
}

// Whether f's result carries auxiliary data: std::pair<Array, Aux> or std::tuple<Array, Aux>
// (JAX's `return loss, aux`). The type decides; there is no flag to get out of step with it.
// The arguments at argnums Is (argument 0 when there are none), as a tuple.
template <size_t... Is, class Tuple>
auto diff_args(const Tuple& all) {
  if constexpr (sizeof...(Is) == 0) return std::make_tuple(std::get<0>(all));
  else return std::make_tuple(std::get<Is>(all)...);
}
// f applied to `all` with the arguments at argnums Is replaced by `diff`'s elements.
template <size_t... Is, class F, class Tuple, class Diff>
auto call_with_diff(F& f, const Tuple& all, const Diff& diff) {
  if constexpr (sizeof...(Is) == 0) return std::apply(f, replace_args<0>(all, diff));
  else return std::apply(f, replace_args<Is...>(all, diff));
}

template <class R>
struct AuxSplit {
  using Value = R;
  static constexpr bool has_aux = false;
  static constexpr bool valid = std::is_convertible_v<R, Array>;
};
template <class A, class B>
struct AuxSplit<std::pair<A, B>> {
  using Value = A;
  static constexpr bool has_aux = true;
  static constexpr bool valid = std::is_convertible_v<A, Array>;
  using Aux = B;
  static const A& value(const std::pair<A, B>& r) { return r.first; }
  static const B& aux(const std::pair<A, B>& r) { return r.second; }
};
template <class A, class B>
struct AuxSplit<std::tuple<A, B>> {
  using Value = A;
  static constexpr bool has_aux = true;
  static constexpr bool valid = std::is_convertible_v<A, Array>;
  using Aux = B;
  static const A& value(const std::tuple<A, B>& r) { return std::get<0>(r); }
  static const B& aux(const std::tuple<A, B>& r) { return std::get<1>(r); }
};

}  // namespace ad

// jx::has_aux, as the second argument of grad / value_and_grad, states what f's return type
// already says (JAX's has_aux=True); it only adds a compile-time check that f returns
// (value, aux).
struct HasAux {};
inline constexpr HasAux has_aux{};
// jx::holomorphic, as the second argument of grad / value_and_grad / jacfwd / jacrev, is
// JAX's holomorphic=True: f takes complex inputs to complex outputs and the result is the
// complex derivative df/dz. Without it, grad of a real-valued function of complex inputs
// follows JAX's convention: grad(|z|^2) = 2 conj(z) (docs/complex.md).
struct Holomorphic {};
inline constexpr Holomorphic holomorphic{};

// value_and_grad<I...>(f): (f(args...), gradient w.r.t. args I...), as JAX's
// value_and_grad(f, argnums=(I...)). One index gives one gradient (same type as that
// argument); several give a std::tuple. When f returns (value, aux) -- a std::pair or a
// two-element std::tuple -- only value is differentiated and the result is the flat triple
// (value, aux, grads), so that JAX's `(loss, aux), grads = ...` is one line:
//   auto [loss, aux, grads] = jx::value_and_grad(loss_fn)(params, x);
namespace ad {
template <bool Holo, size_t... Is, class F>
auto value_and_grad_impl(F f) {
  static_assert(sizeof...(Is) <= 16);
  return [f](const auto&... args) {
    static_assert(((Is < sizeof...(args)) && ...),
                  "jx::grad<I...> / value_and_grad<I...>: an argnum I is not less than the "
                  "number of arguments f is called with");
    constexpr bool single = sizeof...(Is) <= 1;
    auto all = std::tuple<std::decay_t<decltype(args)>...>(args...);
    auto diff = ad::diff_args<Is...>(all);
    using Diff = decltype(diff);
    auto [leaves, def] = tree::flatten(diff);
    ad::check_differentiable_inputs("grad", leaves, Holo);
    using R = std::decay_t<decltype(f(args...))>;
    static_assert(ad::AuxSplit<R>::valid,
                  "jx::grad / value_and_grad: f must return a scalar Array, or (value, aux) as "
                  "std::pair<Array, Aux> or std::tuple<Array, Aux> (JAX's has_aux)");
    constexpr bool aux = ad::AuxSplit<R>::has_aux;
    tree::TreeDef aux_def;
    ad::FlatFn flat = [&](const std::vector<Array>& xs) {
      Diff d = tree::unflatten<Diff>(def, xs);
      R r = ad::call_with_diff<Is...>(f, all, d);
      std::vector<Array> outs;
      if constexpr (aux) {
        outs.push_back(Array(ad::AuxSplit<R>::value(r)));
        auto [al, ad_] = tree::flatten(ad::AuxSplit<R>::aux(r));
        aux_def = ad_;
        outs.insert(outs.end(), al.begin(), al.end());
      } else {
        outs.push_back(Array(r));
      }
      return outs;
    };
    ad::LinearFn lin = ad::linearize_flat(flat, leaves);
    const std::vector<Array>& outs = lin.primals_out();
    ad::check_scalar_output("grad", outs[0], Holo);
    std::vector<Array> cts(outs.size());
    cts[0] = ad::ones_like(outs[0]);
    Diff g = tree::unflatten<Diff>(def, lin.transpose(cts));
    auto grads = [&] {
      if constexpr (single) return std::get<0>(std::move(g));
      else return g;
    }();
    if constexpr (aux) {
      using Aux = typename ad::AuxSplit<R>::Aux;
      std::vector<Array> aux_leaves(outs.begin() + 1, outs.end());
      Aux a = tree::unflatten<Aux>(aux_def, aux_leaves);
      return std::make_tuple(outs[0], std::move(a), std::move(grads));
    } else {
      return std::make_pair(outs[0], std::move(grads));
    }
  };
}
}  // namespace ad

template <size_t... Is, class F>
auto value_and_grad(F f) {
  return ad::value_and_grad_impl<false, Is...>(std::move(f));
}
template <size_t... Is, class F>
auto value_and_grad(F f, Holomorphic) {
  return ad::value_and_grad_impl<true, Is...>(std::move(f));
}

template <size_t... Is, class F>
auto value_and_grad(F f, HasAux) {
  auto g = value_and_grad<Is...>(std::move(f));
  return [g](const auto&... args) {
    using R = decltype(g(args...));
    static_assert(std::tuple_size_v<R> == 3,
                  "jx::value_and_grad(f, jx::has_aux): f must return (value, aux) as "
                  "std::pair<Array, Aux> or std::tuple<Array, Aux>");
    return g(args...);
  };
}

// grad<I...>(f): the gradient part of value_and_grad; when f returns (value, aux), the
// pair (grads, aux), as JAX's grad(f, has_aux=True).
template <size_t... Is, class F>
auto grad(F f) {
  return [g = value_and_grad<Is...>(std::move(f))](const auto&... args) {
    auto result = g(args...);
    if constexpr (std::tuple_size_v<decltype(result)> == 3)
      return std::make_pair(std::get<2>(std::move(result)), std::get<1>(std::move(result)));
    else
      return std::get<1>(std::move(result));
  };
}
template <size_t... Is, class F>
auto grad(F f, Holomorphic) {
  return [g = value_and_grad<Is...>(std::move(f), holomorphic)](const auto&... args) {
    auto result = g(args...);
    if constexpr (std::tuple_size_v<decltype(result)> == 3)
      return std::make_pair(std::get<2>(std::move(result)), std::get<1>(std::move(result)));
    else
      return std::get<1>(std::move(result));
  };
}
template <size_t... Is, class F>
auto grad(F f, HasAux) {
  auto g = grad<Is...>(std::move(f));
  return [g](const auto&... args) {
    static_assert(ad::AuxSplit<std::decay_t<decltype(std::declval<F&>()(args...))>>::has_aux,
                  "jx::grad(f, jx::has_aux): f must return (value, aux) as std::pair<Array, "
                  "Aux> or std::tuple<Array, Aux>");
    return g(args...);
  };
}

// jvp(f, primals, tangents) -> (f(primals...), J . tangents); primals and tangents are
// std::tuples of f's arguments (pytrees of matching structure).
template <class F, class... Args>
auto jvp(F f, const std::tuple<Args...>& primals, const std::tuple<Args...>& tangents) {
  auto [pl, def] = tree::flatten(primals);
  std::vector<Array> tl = tree::detail::flatten_matching("jvp", def, tangents, 1);
  using R = std::decay_t<decltype(std::apply(f, primals))>;
  tree::TreeDef out_def;
  ad::FlatFn flat = [&](const std::vector<Array>& xs) {
    auto args = tree::unflatten<std::tuple<Args...>>(def, xs);
    auto [ol, od] = tree::flatten(R(std::apply(f, args)));
    out_def = od;
    return ol;
  };
  auto [po, to] = ad::jvp_flat(flat, pl, tl);
  return std::make_pair(tree::unflatten<R>(out_def, po), tree::unflatten<R>(out_def, to));
}

namespace ad {
// f linearized at args, with the pytree structures needed to map flat results back.
template <class R, class In>
struct TreeLinearized {
  LinearFn lin;
  tree::TreeDef in_def, out_def;
  R out;
};
template <class F, class... Args>
auto linearize_tree(F& f, const Args&... args) {
  using In = std::tuple<std::decay_t<Args>...>;
  using R = std::decay_t<decltype(f(args...))>;
  In in(args...);
  auto [leaves, def] = tree::flatten(in);
  tree::TreeDef out_def;
  FlatFn flat = [&](const std::vector<Array>& xs) {
    auto [ol, od] = tree::flatten(R(std::apply(f, tree::unflatten<In>(def, xs))));
    out_def = od;
    return ol;
  };
  LinearFn lin = linearize_flat(flat, leaves);
  R out = tree::unflatten<R>(out_def, lin.primals_out());
  return TreeLinearized<R, In>{std::move(lin), std::move(def), std::move(out_def), std::move(out)};
}
}  // namespace ad

// vjp(f, args...) -> (f(args...), f_vjp) with f_vjp(cotangent) -> std::tuple of cotangents.
template <class F, class... Args>
auto vjp(F f, const Args&... args) {
  using In = std::tuple<std::decay_t<Args>...>;
  auto t = ad::linearize_tree(f, args...);
  using R = decltype(t.out);
  auto f_vjp = [lin = t.lin, in_def = t.in_def, out_def = t.out_def](const R& ct) {
    std::vector<Array> cl = tree::detail::flatten_matching("vjp", out_def, ct, 1);
    return tree::unflatten<In>(in_def, lin.transpose(cl));
  };
  return std::make_pair(std::move(t.out), std::move(f_vjp));
}

// linearize(f, args...) -> (f(args...), f_jvp) with f_jvp(tangents...) -> J . tangents.
template <class F, class... Args>
auto linearize(F f, const Args&... args) {
  using In = std::tuple<std::decay_t<Args>...>;
  auto t = ad::linearize_tree(f, args...);
  using R = decltype(t.out);
  auto f_jvp = [lin = t.lin, in_def = t.in_def, out_def = t.out_def](const std::decay_t<Args>&... ts) {
    std::vector<Array> tl = tree::detail::flatten_matching("linearize", in_def, In(ts...), 1);
    return tree::unflatten<R>(out_def, lin.apply(tl));
  };
  return std::make_pair(std::move(t.out), std::move(f_jvp));
}

namespace ad {
// d out_i / d in_j for every output leaf i and input leaf j (shape out_i + in_j), from one
// linearization: the linear map vmapped over the inputs' standard basis (forward) or its
// transpose over the outputs' (reverse), as JAX's jacfwd / jacrev. Outputs from
// `num_diff` on are carried along (aux data), not differentiated.
struct Jacobian {
  std::vector<Array> outs;
  std::vector<std::vector<Array>> blocks;
};
// num_diff is read after f has run (f sets it while it is traced).
Jacobian jacobian_flat(const char* op, const FlatFn& f, const std::vector<Array>& xs, bool forward,
                       const size_t& num_diff, bool holomorphic = false);

template <bool Forward, bool Aux, bool Holo, size_t... Is, class F>
auto jacobian(F f) {
  return [f](const auto&... args) {
    const char* op = Forward ? "jacfwd" : "jacrev";
    static_assert(((Is < sizeof...(args)) && ...),
                  "jx::jacfwd<I...> / jacrev<I...> / hessian<I...>: an argnum I is not less "
                  "than the number of arguments f is called with");
    constexpr bool single = sizeof...(Is) <= 1;
    auto all = std::tuple<std::decay_t<decltype(args)>...>(args...);
    auto diff = ad::diff_args<Is...>(all);
    using Diff = decltype(diff);
    auto [leaves, def] = tree::flatten(diff);
    using R = std::decay_t<decltype(f(args...))>;
    static_assert(!Aux || AuxSplit<R>::has_aux,
                  "jx::jacfwd / jacrev / hessian with jx::has_aux: f must return (value, aux) as "
                  "std::pair or a two-element std::tuple");
    using V = std::conditional_t<Aux, typename AuxSplit<R>::Value, R>;
    tree::TreeDef out_def, aux_def;
    size_t num_diff = 0;
    FlatFn flat = [&](const std::vector<Array>& xs) {
      Diff d = tree::unflatten<Diff>(def, xs);
      R r = call_with_diff<Is...>(f, all, d);
      std::vector<Array> outs;
      if constexpr (Aux) {
        std::tie(outs, out_def) = tree::flatten(V(AuxSplit<R>::value(r)));
        num_diff = outs.size();
        auto [al, ad_] = tree::flatten(AuxSplit<R>::aux(r));
        aux_def = ad_;
        outs.insert(outs.end(), al.begin(), al.end());
      } else {
        std::tie(outs, out_def) = tree::flatten(r);
        num_diff = outs.size();
      }
      return outs;
    };
    Jacobian J = jacobian_flat(op, flat, leaves, Forward, num_diff, Holo);
    auto result = [&] {
      using First = std::tuple_element_t<0, Diff>;
      if constexpr (std::is_same_v<V, Array>) {
        // One output: the inputs' structure and types, each leaf its block.
        Diff g = tree::unflatten<Diff>(def, J.blocks[0]);
        if constexpr (single) return std::get<0>(std::move(g));
        else return g;
      } else if constexpr (single && std::is_same_v<First, Array>) {
        // One Array input: the output's structure and type, each leaf its block.
        std::vector<Array> col;
        for (size_t i = 0; i < num_diff; ++i) col.push_back(J.blocks[i][0]);
        return tree::unflatten<V>(out_def, col);
      } else {
        // Both pytrees: a jx::Tree of the output's structure whose leaves are trees of the
        // inputs' structure (JAX's nesting).
        std::vector<Tree> per_out;
        for (size_t i = 0; i < num_diff; ++i) {
          Tree t = def.unflatten(J.blocks[i]);
          per_out.push_back(single ? t.children()[0] : t);
        }
        std::vector<Array> vals(J.outs.begin(), J.outs.begin() + std::ptrdiff_t(num_diff));
        return tree::detail::replace_leaves(out_def.unflatten(vals), std::move(per_out));
      }
    }();
    if constexpr (Aux) {
      using A = typename AuxSplit<R>::Aux;
      std::vector<Array> al(J.outs.begin() + std::ptrdiff_t(num_diff), J.outs.end());
      return std::make_pair(std::move(result), tree::unflatten<A>(aux_def, al));
    } else {
      return result;
    }
  };
}
}  // namespace ad

// jacfwd<I...>(f) / jacrev<I...>(f): JAX's jacfwd / jacrev with argnums=(I...) (default 0),
// over pytree arguments and results. The Jacobian of an output leaf of shape S by an input
// leaf of shape T has shape S + T. It comes back as the input's type when f returns one
// Array (several argnums: a std::tuple), as f's result type when the input is one Array,
// and otherwise as a jx::Tree of f's result structure whose leaves are trees of the
// inputs'. With jx::has_aux, f returns (value, aux) and the result is (jacobian, aux).
template <size_t... Is, class F>
auto jacfwd(F f) {
  return ad::jacobian<true, false, false, Is...>(std::move(f));
}
template <size_t... Is, class F>
auto jacfwd(F f, HasAux) {
  return ad::jacobian<true, true, false, Is...>(std::move(f));
}
template <size_t... Is, class F>
auto jacfwd(F f, Holomorphic) {
  return ad::jacobian<true, false, true, Is...>(std::move(f));
}
template <size_t... Is, class F>
auto jacrev(F f) {
  return ad::jacobian<false, false, false, Is...>(std::move(f));
}
template <size_t... Is, class F>
auto jacrev(F f, HasAux) {
  return ad::jacobian<false, true, false, Is...>(std::move(f));
}
template <size_t... Is, class F>
auto jacrev(F f, Holomorphic) {
  return ad::jacobian<false, false, true, Is...>(std::move(f));
}
// hessian<I...>(f) = jacfwd<I...>(jacrev<I...>(f)), as JAX.
template <size_t... Is, class F>
auto hessian(F f) {
  return jacfwd<Is...>(jacrev<Is...>(std::move(f)));
}
template <size_t... Is, class F>
auto hessian(F f, HasAux) {
  return jacfwd<Is...>(jacrev<Is...>(std::move(f), has_aux), has_aux);
}

// stop_gradient(x): x, with a zero derivative.
Array stop_gradient(const Array& x);

// A traced program (JAX's ClosedJaxpr), printable in JAX's text form.
class ClosedJaxpr {
 public:
  std::string str() const;
  struct Impl;
  explicit ClosedJaxpr(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  const Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<const Impl> impl_;
};
std::ostream& operator<<(std::ostream& os, const ClosedJaxpr& j);
namespace ad {
ClosedJaxpr make_jaxpr_flat(const FlatFn& f, const std::vector<Array>& example_args);
}

// make_jaxpr(f)(args...): the jaxpr of f at the args' shapes and dtypes.
template <class F>
auto make_jaxpr(F f) {
  return [f](const auto&... args) {
    using In = std::tuple<std::decay_t<decltype(args)>...>;
    In in(args...);
    auto [leaves, def] = tree::flatten(in);
    ad::FlatFn flat = [&](const std::vector<Array>& xs) {
      auto a = tree::unflatten<In>(def, xs);
      return tree::leaves(std::apply(f, a));
    };
    return ad::make_jaxpr_flat(flat, leaves);
  };
}

}  // namespace jx
