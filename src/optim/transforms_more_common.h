// Tree helpers shared by the optimizers (transform.cpp, transforms_more*.cpp; private to optim).
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "jx/numpy.h"
#include "jx/optim/transform.h"
#include "support/str.h"

namespace jx::optim::more {

namespace jnp = jx::numpy;

// The leaves of a, b, c mapped together; a's structure kept.
inline Tree map3(const std::function<Array(const Array&, const Array&, const Array&)>& f,
                 const Tree& a, const Tree& b, const Tree& c) {
  auto [la, def] = jx::tree::flatten(a);
  std::vector<Array> lb = jx::tree::leaves(b);
  std::vector<Array> lc = jx::tree::leaves(c);
  for (size_t i = 0; i < la.size(); ++i) la[i] = f(la[i], lb.at(i), lc.at(i));
  return def.unflatten(la);
}

inline Tree zeros_like(const Tree& params, std::optional<DType> dtype = std::nullopt) {
  return detail::map([&](const Array& p) { return jnp::zeros_like(p, dtype); }, params);
}

inline Tree full_like(const Tree& params, double value) {
  return detail::map([&](const Array& p) { return jnp::full_like(p, Array(value)); }, params);
}

inline Tree cast(const Tree& t, std::optional<DType> dtype) {
  if (!dtype) return t;
  return detail::map([&](const Array& x) { return x.astype(*dtype); }, t);
}

// optax.tree.update_moment: (1 - decay) * g^order + decay * moment, order 1 or 2.
inline Tree update_moment(const Tree& updates, const Tree& moment, double decay, int order) {
  return detail::map2(
      [&](const Array& g, const Array& m) {
        return (order == 2 ? jnp::square(g) : g) * (1.0 - decay) + m * decay;
      },
      updates, moment);
}

// Adam's first-moment estimate: mu / (1 - b1^t), or with Nesterov
// b1 * mu / (1 - b1^(t+1)) + (1 - b1) * g / (1 - b1^t).
inline Tree mu_hat(const Tree& mu, const Tree& updates, double b1, const Array& count_inc,
                   bool nesterov) {
  if (!nesterov) return detail::bias_correction(mu, b1, count_inc);
  return detail::map2([&](const Array& m, const Array& g) { return m * b1 + g * (1.0 - b1); },
                      detail::bias_correction(mu, b1, detail::safe_increment(count_inc)),
                      detail::bias_correction(updates, b1, count_inc));
}

// The params, with an error naming the transformation when update was called without them.
inline const Tree& need_params(const Tree& params, const char* transform) {
  if (params.is_none())
    throw ValueError(
        str("[optim.", transform, "] needs the params: call update(grads, state, params)"));
  return params;
}

// A per-leaf state field, checked against the updates' structure and shapes, so that a
// state from other params fails here and not deep inside an elementwise op.
inline const Tree& field_like(const Tree& state, const char* name, const char* transform,
                              const Tree& updates) {
  const Tree& f = detail::field(state, name, transform);
  auto [fl, fdef] = jx::tree::flatten(f);
  auto [ul, udef] = jx::tree::flatten(updates);
  bool same = fdef == udef;
  for (size_t i = 0; same && i < fl.size(); ++i) same = fl[i].shape() == ul[i].shape();
  if (!same)
    throw ValueError(str(
        "[optim.", transform, "] the state's \"", name, "\" is ", f.str(), " but the updates are ",
        updates.str(), "; pass the state that init returned for params shaped like these updates"));
  return f;
}

}  // namespace jx::optim::more
