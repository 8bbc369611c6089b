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

// Throws DTypeError unless every leaf is floating (grad of an int input is an error, as JAX).
void check_differentiable_inputs(const char* op, const std::vector<Array>& leaves);
// Throws unless `out` is a floating scalar (grad needs a real scalar output).
void check_scalar_output(const char* op, const Array& out);
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

template <class R>
struct AuxSplit {
  static constexpr bool has_aux = false;
};
template <class A, class B>
struct AuxSplit<std::pair<A, B>> {
  static constexpr bool has_aux = true;
  using Aux = B;
};

}  // namespace ad

struct GradOptions {
  // f returns std::pair<Array, Aux>: only the first is differentiated; Aux comes back as is.
  bool has_aux = false;
};

// value_and_grad<I...>(f): (f(args...), gradient w.r.t. args I...), as JAX's
// value_and_grad(f, argnums=(I...)). One index gives one gradient (same type as that
// argument); several give a std::tuple. With has_aux, the value is std::pair(value, aux).
template <size_t... Is, class F>
auto value_and_grad(F f, GradOptions opts = {}) {
  static_assert(sizeof...(Is) <= 16);
  return [f, opts](const auto&... args) {
    constexpr bool single = sizeof...(Is) <= 1;
    auto all = std::tuple<std::decay_t<decltype(args)>...>(args...);
    auto diff = [&] {
      if constexpr (sizeof...(Is) == 0) return std::make_tuple(std::get<0>(all));
      else return std::make_tuple(std::get<Is>(all)...);
    }();
    using Diff = decltype(diff);
    auto [leaves, def] = tree::flatten(diff);
    ad::check_differentiable_inputs("grad", leaves);
    using R = std::decay_t<decltype(f(args...))>;
    constexpr bool aux = ad::AuxSplit<R>::has_aux;
    if (aux != opts.has_aux)
      throw ValueError(aux ? "[grad] f returns a pair; pass {.has_aux = true} to treat the second "
                             "element as auxiliary data"
                           : "[grad] has_aux=true needs f to return std::pair<Array, Aux>");
    tree::TreeDef aux_def;
    ad::FlatFn flat = [&](const std::vector<Array>& xs) {
      Diff d = tree::unflatten<Diff>(def, xs);
      auto replaced = [&] {
        if constexpr (sizeof...(Is) == 0) return ad::replace_args<0>(all, d);
        else return ad::replace_args<Is...>(all, d);
      }();
      R r = std::apply(f, replaced);
      std::vector<Array> outs;
      if constexpr (aux) {
        outs.push_back(Array(r.first));
        auto [al, ad_] = tree::flatten(r.second);
        aux_def = ad_;
        outs.insert(outs.end(), al.begin(), al.end());
      } else {
        outs.push_back(Array(r));
      }
      return outs;
    };
    ad::LinearFn lin = ad::linearize_flat(flat, leaves);
    const std::vector<Array>& outs = lin.primals_out();
    ad::check_scalar_output("grad", outs[0]);
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
      return std::make_pair(std::make_pair(outs[0], std::move(a)), std::move(grads));
    } else {
      return std::make_pair(outs[0], std::move(grads));
    }
  };
}

// grad<I...>(f): the gradient part of value_and_grad (with has_aux: (grad, aux)).
template <size_t... Is, class F>
auto grad(F f, GradOptions opts = {}) {
  return [g = value_and_grad<Is...>(std::move(f), opts), opts](const auto&... args) {
    auto [value, grads] = g(args...);
    if constexpr (requires { value.second; }) return std::make_pair(std::move(grads), std::move(value.second));
    else return grads;
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

// Jacobians of f: Array -> Array w.r.t. its first argument; shape out.shape + in.shape.
// Both linearize f once; jacfwd vmaps the linear map over the input's standard basis,
// jacrev vmaps its transpose over the output's.
Array jacfwd_flat(const std::function<Array(const Array&)>& f, const Array& x);
Array jacrev_flat(const std::function<Array(const Array&)>& f, const Array& x);
template <class F>
auto jacfwd(F f) {
  return [f](const Array& x) { return jacfwd_flat([&](const Array& a) { return Array(f(a)); }, x); };
}
template <class F>
auto jacrev(F f) {
  return [f](const Array& x) { return jacrev_flat([&](const Array& a) { return Array(f(a)); }, x); };
}
template <class F>
auto hessian(F f) {
  return jacfwd(jacrev(std::move(f)));
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
