// Optax's core transformations (optax/_src/transform.py, combine.py, update.py,
// numerics.py), with the same state fields, so that a checkpoint of an optimizer state
// reads as Optax's (count, mu, nu, trace).
#include "jx/optim/transform.h"

#include <limits>

#include "jx/lax.h"
#include "jx/numpy.h"
#include "jx/optim/sharded.h"
#include "jx/parallel.h"
#include "optim/transforms_more_common.h"
#include "support/str.h"

namespace jx::optim {

namespace jnp = jx::numpy;

namespace detail {

Array zero_count() { return jnp::zeros({}, DType::Int32); }

Array safe_increment(const Array& count) {
  const int32_t max = std::numeric_limits<int32_t>::max();
  return jnp::where(count < max, count + 1, jnp::full({}, Array(max), DType::Int32));
}

Tree map(const std::function<Array(const Array&)>& f, const Tree& t) {
  return jx::tree::map([&](const Array& x) { return f(x); }, t);
}

Tree map2(const std::function<Array(const Array&, const Array&)>& f, const Tree& a, const Tree& b) {
  return jx::tree::map([&](const Array& x, const Array& y) { return f(x, y); }, a, b);
}

Tree bias_correction(const Tree& moment, double decay, const Array& count) {
  return map([&](const Array& m) { return m / (1.0 - jnp::power(decay, count.astype(m.dtype()))); }, moment);
}

const Tree& field(const Tree& state, const char* name, const char* transform) {
  if (!state.is_dict() || !state.contains(name))
    throw ValueError(str("[optim.", transform, "] the state has no field \"", name, "\": ", state.str(),
                         "; pass the state this transformation's init returned"));
  return state.at(name);
}

}  // namespace detail

using detail::field;

// ---- updates and trees ----

namespace {

// Two trees that are combined leaf by leaf must match exactly: jnp's broadcasting would
// otherwise turn a parameter f32[3] plus an update f32[2,3] into an f32[2,3] parameter.
void check_matching_trees(const char* fn, const char* a_name, const Tree& a, const char* b_name,
                          const Tree& b) {
  auto [a_leaves, a_def] = jx::tree::flatten(a);
  auto [b_leaves, b_def] = jx::tree::flatten(b);
  if (!(a_def == b_def))
    throw ValueError(str("[optim.", fn, "] the ", b_name, " have structure ", b_def.str(), " but the ",
                         a_name, " have structure ", a_def.str(), "; pass ", b_name,
                         " with the same keys and containers as ", a_name));
  const std::vector<tree::KeyPath> paths = a_def.leaf_paths();
  for (size_t i = 0; i < a_leaves.size(); ++i)
    if (a_leaves[i].shape() != b_leaves[i].shape())
      throw ShapeError(str("[optim.", fn, "] at ", paths[i].keystr(), " the ", b_name, " are ",
                           type_str(b_leaves[i].dtype(), b_leaves[i].shape()), " but the ", a_name,
                           " are ", type_str(a_leaves[i].dtype(), a_leaves[i].shape()),
                           "; every leaf must keep its shape (compute the ", b_name, " from these ",
                           a_name, ")"));
}

}  // namespace

Tree apply_updates(const Tree& params, const Tree& updates) {
  check_matching_trees("apply_updates", "params", params, "updates", updates);
  return detail::map2([](const Array& p, const Array& u) { return (p + u).astype(p.dtype()); }, params, updates);
}

Tree incremental_update(const Tree& new_tensors, const Tree& old_tensors, double step_size) {
  check_matching_trees("incremental_update", "new tensors", new_tensors, "old tensors", old_tensors);
  return detail::map2([&](const Array& n, const Array& o) { return n * step_size + o * (1.0 - step_size); },
                      new_tensors, old_tensors);
}

Array global_norm(const Tree& updates) {
  Array sum = jnp::zeros({});
  bool first = true;
  for (const Array& x : jx::tree::leaves(updates)) {
    Array s = jnp::sum(jnp::square(x));
    sum = first ? s : sum + s;
    first = false;
  }
  // In a sharded update each replica holds blocks of the updates: the norm is of all of them.
  if (const std::string* axis = detail::sharded_update_axis()) sum = lax::psum(sum, *axis);
  return jnp::sqrt(sum);
}

// ---- combinators ----

GradientTransformation chain(std::vector<GradientTransformation> transforms) {
  auto ts = std::make_shared<const std::vector<GradientTransformation>>(std::move(transforms));
  return {[ts](const Tree& params) {
            Tree states = Tree::list();
            for (const GradientTransformation& t : *ts) states.push_back(t.init(params));
            return states;
          },
          [ts](const Tree& updates, const Tree& state, const Tree& params) {
            if (!state.is_list() || state.size() != ts->size())
              throw ValueError(str("[optim.chain] the state must be the list of ", ts->size(),
                                   " states chain's init returned, got ", state.str()));
            Tree u = updates;
            Tree states = Tree::list();
            for (size_t i = 0; i < ts->size(); ++i) {
              auto [next, s] = (*ts)[i].update(u, state[i], params);
              u = std::move(next);
              states.push_back(std::move(s));
            }
            return std::make_pair(u, states);
          }};
}

GradientTransformation named_chain(std::vector<std::pair<std::string, GradientTransformation>> transforms) {
  auto ts = std::make_shared<const std::vector<std::pair<std::string, GradientTransformation>>>(std::move(transforms));
  return {[ts](const Tree& params) {
            Tree states = Tree::dict();
            for (const auto& [name, t] : *ts) states.insert(name, t.init(params));
            return states;
          },
          [ts](const Tree& updates, const Tree& state, const Tree& params) {
            Tree u = updates;
            Tree states = Tree::dict();
            for (const auto& [name, t] : *ts) {
              auto [next, s] = t.update(u, field(state, name.c_str(), "named_chain"), params);
              u = std::move(next);
              states.insert(name, std::move(s));
            }
            return std::make_pair(u, states);
          }};
}

GradientTransformation identity() {
  return {[](const Tree&) { return Tree::dict(); },
          [](const Tree& updates, const Tree& state, const Tree&) { return std::make_pair(updates, state); }};
}

// ---- transformations ----

GradientTransformation scale(double step_size) {
  return {[](const Tree&) { return Tree::dict(); },
          [step_size](const Tree& updates, const Tree& state, const Tree&) {
            return std::make_pair(detail::map([&](const Array& g) { return g * step_size; }, updates), state);
          }};
}

GradientTransformation scale_by_schedule(Schedule step_size_fn) {
  return {[](const Tree&) { return Tree{{"count", detail::zero_count()}}; },
          [fn = std::move(step_size_fn)](const Tree& updates, const Tree& state, const Tree&) {
            const Array& count = field(state, "count", "scale_by_schedule").array();
            const Array step = fn(count);
            Tree u = detail::map([&](const Array& g) { return g * step.astype(g.dtype()); }, updates);
            return std::make_pair(u, Tree{{"count", detail::safe_increment(count)}});
          }};
}

GradientTransformation scale_by_learning_rate(const ScalarOrSchedule& learning_rate, bool flip_sign) {
  const double m = flip_sign ? -1.0 : 1.0;
  if (!learning_rate.is_schedule()) return scale(m * learning_rate.value());
  Schedule s = learning_rate.schedule();
  return scale_by_schedule([s, m](const Array& count) { return s(count) * m; });
}

GradientTransformation scale_by_adam(const AdamOptions& o) {
  return {[o](const Tree& params) {
            auto zeros = [&](const Array& p) { return jnp::zeros_like(p, o.mu_dtype); };
            return Tree{{"count", detail::zero_count()},
                        {"mu", detail::map(zeros, params)},
                        {"nu", detail::map([](const Array& p) { return jnp::zeros_like(p); }, params)}};
          },
          [o](const Tree& updates, const Tree& state, const Tree&) {
            const Tree& mu0 = more::field_like(state, "mu", "scale_by_adam", updates);
            const Tree& nu0 = more::field_like(state, "nu", "scale_by_adam", updates);
            const Array& count = field(state, "count", "scale_by_adam").array();
            // optax's update_moment / update_moment_per_elem_norm.
            Tree mu = detail::map2([&](const Array& g, const Array& m) { return g * (1.0 - o.b1) + m * o.b1; },
                                   updates, mu0);
            Tree nu = detail::map2([&](const Array& g, const Array& v) { return jnp::square(g) * (1.0 - o.b2) + v * o.b2; },
                                   updates, nu0);
            const Array count_inc = detail::safe_increment(count);
            Tree mu_hat;
            if (o.nesterov) {
              mu_hat = detail::map2([&](const Array& m, const Array& g) { return m * o.b1 + g * (1.0 - o.b1); },
                                    detail::bias_correction(mu, o.b1, detail::safe_increment(count_inc)),
                                    detail::bias_correction(updates, o.b1, count_inc));
            } else {
              mu_hat = detail::bias_correction(mu, o.b1, count_inc);
            }
            Tree nu_hat = detail::bias_correction(nu, o.b2, count_inc);
            Tree u = detail::map2([&](const Array& m, const Array& v) { return m / (jnp::sqrt(v + o.eps_root) + o.eps); },
                                  mu_hat, nu_hat);
            if (o.mu_dtype) mu = detail::map([&](const Array& m) { return m.astype(*o.mu_dtype); }, mu);
            return std::make_pair(u, Tree{{"count", count_inc}, {"mu", mu}, {"nu", nu}});
          }};
}

GradientTransformation add_decayed_weights(double weight_decay, std::optional<MaskFn> mask) {
  return {[](const Tree&) { return Tree::dict(); },
          [weight_decay, mask](const Tree& updates, const Tree& state, const Tree& params) {
            if (params.is_none())
              throw ValueError("[optim.add_decayed_weights] needs the params: call update(grads, state, params)");
            if (!mask)
              return std::make_pair(
                  detail::map2([&](const Array& g, const Array& p) { return g + p * weight_decay; }, updates, params),
                  state);
            const Tree m = (*mask)(params);
            auto [gl, def] = jx::tree::flatten(updates);
            std::vector<Array> pl = jx::tree::leaves(params);
            std::vector<Array> ml = jx::tree::leaves(m);
            if (ml.size() != gl.size())
              throw ValueError(str("[optim.add_decayed_weights] the mask has ", ml.size(), " leaves for ",
                                   gl.size(), " parameters; give one bool per parameter"));
            for (size_t i = 0; i < gl.size(); ++i)
              if (ml[i].item<bool>()) gl[i] = gl[i] + pl[i] * weight_decay;
            return std::make_pair(def.unflatten(gl), state);
          }};
}

GradientTransformation trace(double decay, bool nesterov, std::optional<DType> accumulator_dtype) {
  return {[accumulator_dtype](const Tree& params) {
            return Tree{{"trace", detail::map([&](const Array& p) { return jnp::zeros_like(p, accumulator_dtype); }, params)}};
          },
          [decay, nesterov, accumulator_dtype](const Tree& updates, const Tree& state, const Tree&) {
            auto f = [&](const Array& g, const Array& t) { return g + t * decay; };
            Tree new_trace = detail::map2(f, updates, more::field_like(state, "trace", "trace", updates));
            Tree u = nesterov ? detail::map2(f, updates, new_trace) : new_trace;
            if (accumulator_dtype)
              new_trace = detail::map([&](const Array& t) { return t.astype(*accumulator_dtype); }, new_trace);
            return std::make_pair(u, Tree{{"trace", new_trace}});
          }};
}

GradientTransformation clip_by_global_norm(double max_norm) {
  return {[](const Tree&) { return Tree::dict(); },
          [max_norm](const Tree& updates, const Tree& state, const Tree&) {
            const Array g_norm = global_norm(updates);
            const Array trigger = g_norm < max_norm;
            Tree u = detail::map(
                [&](const Array& t) { return jnp::where(trigger, t, (t / g_norm.astype(t.dtype())) * max_norm); },
                updates);
            return std::make_pair(u, state);
          }};
}

}  // namespace jx::optim
