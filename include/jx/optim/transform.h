// jx::optim: Optax's gradient transformations (optax/_src/base.py, transform.py,
// combine.py, update.py). A transformation is a value holding two pure functions:
//
//   init(params) -> state
//   update(updates, state, params) -> (updates, state)
//
// Parameters, updates and states are pytrees (jx::Tree), so they pass through jit, vmap
// and checkpoints. Optimizers are chains of transformations whose last step scales by the
// negative learning rate, so that apply_updates adds:
//
//   auto opt = optim::chain(optim::clip_by_global_norm(1.0),
//                           optim::adamw(1e-3, {.weight_decay = 1e-4}));
//   jx::Tree state = opt.init(params);
//   auto [updates, new_state] = opt.update(grads, state, params);
//   params = optim::apply_updates(params, updates);
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "jx/array.h"
#include "jx/optim/schedules.h"
#include "jx/tree.h"

namespace jx::optim {

class GradientTransformation {
 public:
  using InitFn = std::function<Tree(const Tree& params)>;
  using UpdateFn = std::function<std::pair<Tree, Tree>(const Tree& updates, const Tree& state, const Tree& params)>;
  GradientTransformation() = default;
  GradientTransformation(InitFn init, UpdateFn update) : init_(std::move(init)), update_(std::move(update)) {}
  Tree init(const Tree& params) const { return init_(params); }
  // params may be omitted (a None tree) for transformations that do not read it; those
  // that do (add_decayed_weights, ...) say so in their error.
  std::pair<Tree, Tree> update(const Tree& updates, const Tree& state, const Tree& params = Tree()) const {
    return update_(updates, state, params);
  }

 private:
  InitFn init_;
  UpdateFn update_;
};

// A learning rate (or other step size): a number, or a schedule of the step count.
class ScalarOrSchedule {
 public:
  ScalarOrSchedule(double v) : value_(v) {}
  ScalarOrSchedule(Schedule s) : value_(std::move(s)) {}
  bool is_schedule() const { return std::holds_alternative<Schedule>(value_); }
  double value() const { return std::get<double>(value_); }
  const Schedule& schedule() const { return std::get<Schedule>(value_); }

 private:
  std::variant<double, Schedule> value_;
};

// ---- updates and trees ----
// params + updates leaf by leaf, cast to each parameter's dtype.
Tree apply_updates(const Tree& params, const Tree& updates);
// step_size * new + (1 - step_size) * old (Polyak averaging of a target network).
Tree incremental_update(const Tree& new_tensors, const Tree& old_tensors, double step_size);
// sqrt(sum of the squares of every leaf), a 0-d array.
Array global_norm(const Tree& updates);

// ---- combinators ----
// Applies each transformation in order; the state is the list of their states.
GradientTransformation chain(std::vector<GradientTransformation> transforms);
template <class... T>
GradientTransformation chain(const GradientTransformation& first, const T&... rest) {
  return chain(std::vector<GradientTransformation>{first, rest...});
}
// The same with named states: a dict {name: state} (optax.named_chain).
GradientTransformation named_chain(std::vector<std::pair<std::string, GradientTransformation>> transforms);
// Leaves updates unchanged; an empty state.
GradientTransformation identity();

// ---- the transformations every optimizer is built from ----
GradientTransformation scale(double step_size);
// updates * -learning_rate (flip_sign false: * learning_rate); a schedule is read at the
// step count, which the state keeps.
GradientTransformation scale_by_learning_rate(const ScalarOrSchedule& learning_rate, bool flip_sign = true);
// updates * schedule(count); state {count}.
GradientTransformation scale_by_schedule(Schedule step_size_fn);

struct AdamOptions {
  double b1 = 0.9, b2 = 0.999, eps = 1e-8, eps_root = 0.0;
  std::optional<DType> mu_dtype{};
  bool nesterov = false;
};
// Adam's moments with bias correction; state {count, mu, nu}.
GradientTransformation scale_by_adam(const AdamOptions& options = {});
// updates + weight_decay * params, on the leaves where `mask` (a tree of bools of the
// params' structure, or a function of the params giving one) is true.
using MaskFn = std::function<Tree(const Tree& params)>;
GradientTransformation add_decayed_weights(double weight_decay = 0.0, std::optional<MaskFn> mask = std::nullopt);
// Momentum: trace = updates + decay * trace; with nesterov, updates + decay * new trace.
GradientTransformation trace(double decay, bool nesterov = false, std::optional<DType> accumulator_dtype = std::nullopt);
// Scales every update by max_norm / global_norm when the global norm exceeds max_norm.
GradientTransformation clip_by_global_norm(double max_norm);

namespace detail {
// A 0-d int32 zero, and Optax's safe_int32_increment (saturates at the int32 maximum).
Array zero_count();
Array safe_increment(const Array& count);
// Optax's bias_correction: moment / (1 - decay^count), computed in the moment's dtype.
Tree bias_correction(const Tree& moment, double decay, const Array& count);
// The leaves of `t` that are arrays, mapped; the structure kept.
Tree map(const std::function<Array(const Array&)>& f, const Tree& t);
Tree map2(const std::function<Array(const Array&, const Array&)>& f, const Tree& a, const Tree& b);
// A state field, with an error naming the transformation when it is missing.
const Tree& field(const Tree& state, const char* name, const char* transform);
}  // namespace detail

}  // namespace jx::optim
