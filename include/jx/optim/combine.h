// Optax's combinators and wrappers (optax/transforms/_masking.py, _combining.py,
// _conditionality.py, _accumulation.py, _freezing.py, optax/schedules/_inject.py) and the
// tree helpers of optax.tree. Each wrapper keeps Optax's state layout, so that a state
// reads (and checkpoints) as Optax's:
//
//   masked            {inner_state}                         masked-out leaves are None
//   partition         {inner_states: {label: {inner_state}}}
//   apply_if_finite   {notfinite_count, last_finite, total_notfinite, inner_state}
//   MultiSteps        {mini_step, gradient_step, inner_opt_state, acc_grads, skip_state}
//   inject_hyperparams {count, hyperparams: {name: value}, inner_state}
//
//   // Adam on the kernels, SGD on the biases, nothing on the embedding:
//   auto tx = optim::partition({{"adam", optim::adam(1e-3)}, {"sgd", optim::sgd(1e-2)},
//                               {"none", optim::set_to_zero()}},
//                              [](const jx::tree::KeyPath& path, const Array&) -> std::string {
//                                std::string name = path.str();
//                                if (name.find("Embed") != std::string::npos) return "none";
//                                return name.ends_with("bias") ? "sgd" : "adam";
//                              });
//   // A learning rate that lives in the state, readable and changeable without retracing:
//   auto opt = optim::inject_hyperparams(
//       [](const optim::Hyperparams& h) { return optim::adam(h["learning_rate"]); },
//       {{"learning_rate", 1e-3}});
//   state["hyperparams"]["learning_rate"] = 1e-4;
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jx/optim/transform.h"

namespace jx::optim {

// ---- tree helpers (optax.tree / optax.tree_utils) ----
// Zeros of each leaf's shape, in `dtype` or the leaf's own.
Tree tree_zeros_like(const Tree& t, std::optional<DType> dtype = std::nullopt);
Tree tree_add(const Tree& a, const Tree& b);
Tree tree_sub(const Tree& a, const Tree& b);
// scalar * each leaf (a C++ number is weakly typed: the leaves keep their dtypes).
Tree tree_scale(const Array& scalar, const Tree& t);
// sum over leaves of vdot(a_i, b_i), a 0-d array.
Array tree_vdot(const Tree& a, const Tree& b);
// sqrt(sum of |x|^2 over all leaves), or the sum itself when squared.
Array tree_l2_norm(const Tree& t, bool squared = false);
// Each leaf cast to dtype (no change when none).
Tree tree_cast(const Tree& t, std::optional<DType> dtype);

// ---- masking ----
// mask: a tree of bools (0-d bool arrays or static bools) of the params' structure, or of a
// prefix of it (one bool for a whole subtree), or a function of the params (of the updates,
// in update) giving one. The mask must be concrete: it decides the structure, not values.
//
// `inner` sees only the leaves where the mask is true: the others are replaced by None
// (Optax's MaskedNode), carry no inner state and pass through unchanged. State
// {inner_state}.
GradientTransformation masked(GradientTransformation inner, Tree mask);
GradientTransformation masked(GradientTransformation inner, MaskFn mask);

// Updates set to zero; an empty state (optax.set_to_zero).
GradientTransformation set_to_zero();
// Zero updates where the mask is true: those parameters do not move (optax.freeze =
// masked(set_to_zero(), mask)).
GradientTransformation freeze(Tree mask);
GradientTransformation freeze(MaskFn mask);

// ---- partition (multi_transform) ----
// One transformation per label. Labels: a tree of static strings of the params' structure
// (or a prefix of it), a function of the params giving one, or a function of each leaf's
// path and value giving its label. Each transformation runs masked to its label's
// leaves; every label must name a transformation. State {inner_states: {label:
// {inner_state}}}, in the order given.
using LabelFn = std::function<Tree(const Tree& params)>;
using PathLabelFn = std::function<std::string(const tree::KeyPath& path, const Array& leaf)>;
using LabeledTransforms = std::vector<std::pair<std::string, GradientTransformation>>;
GradientTransformation partition(LabeledTransforms transforms, Tree param_labels);
GradientTransformation partition(LabeledTransforms transforms, LabelFn param_labels);
GradientTransformation partition(LabeledTransforms transforms, PathLabelFn param_labels);
// Optax's older name for partition.
template <class Labels>
GradientTransformation multi_transform(LabeledTransforms transforms, Labels&& param_labels) {
  return partition(std::move(transforms), std::forward<Labels>(param_labels));
}
// A label tree's leaf: a static string (Tree(std::string) would be a leaf-less value).
Tree label(std::string name);

// ---- conditionality ----
// Runs `inner` only when every update is finite; otherwise the updates are zero and the
// inner state is kept, until more than max_consecutive_errors non-finite steps in a row,
// after which the update is applied anyway. State {notfinite_count (int32), last_finite
// (bool), total_notfinite (int32), inner_state}.
GradientTransformation apply_if_finite(GradientTransformation inner, int max_consecutive_errors);

// ---- gradient accumulation ----
// (skip, skip_state) from (updates, gradient_step, params): Optax's should_skip_update_fn.
using ShouldSkipUpdateFn =
    std::function<std::pair<Array, Tree>(const Tree& updates, const Array& gradient_step, const Tree& params)>;
// Skips a mini-step whose updates are not all finite; skip_state {should_skip,
// num_not_finite} (optax.skip_not_finite).
std::pair<Array, Tree> skip_not_finite(const Tree& updates, const Array& gradient_step, const Tree& params);

struct MultiStepsOptions {
  bool use_grad_mean = true;  // average the accumulated gradients; false: sum them
  ShouldSkipUpdateFn should_skip_update_fn = nullptr;
  std::optional<DType> accumulator_dtype = DType::Float32;  // Optax's default; none: the params'
};

// Accumulates gradients over k mini-steps and applies the inner optimizer to their mean
// (or sum) on the k-th; the other mini-steps return zero updates (optax.MultiSteps).
// every_k_schedule: a number, or a function of the gradient step giving k.
class MultiSteps {
 public:
  struct EveryK {
    EveryK(int k);
    EveryK(Schedule schedule) : schedule(std::move(schedule)) {}
    Schedule schedule;
  };
  MultiSteps(GradientTransformation opt, EveryK every_k_schedule, MultiStepsOptions options = {});
  Tree init(const Tree& params) const;
  std::pair<Tree, Tree> update(const Tree& updates, const Tree& state, const Tree& params = Tree()) const;
  // True after a mini-step that applied the inner optimizer (mini_step == 0 and
  // gradient_step > 0).
  Array has_updated(const Tree& state) const;
  GradientTransformation gradient_transformation() const;
  const GradientTransformation& inner_opt() const { return opt_; }

 private:
  GradientTransformation opt_;
  Schedule every_k_;
  MultiStepsOptions options_;
};

// ---- hyper-parameters in the state ----
// The injected hyper-parameters as the factory receives them: 0-d arrays, traced under jit.
class Hyperparams {
 public:
  explicit Hyperparams(Tree values) : values_(std::move(values)) {}
  // The value (a 0-d array).
  const Array& array(std::string_view name) const;
  // The value as an optimizer's learning-rate argument: a schedule that returns it.
  ScalarOrSchedule operator[](std::string_view name) const;

 private:
  Tree values_;
};
using HyperparamsFactory = std::function<GradientTransformation(const Hyperparams&)>;

// factory(hyperparams) built at every init/update with the hyper-parameters read from the
// state, where they live as {name: 0-d array} under "hyperparams": numbers are stored once
// and may be read or changed (state["hyperparams"]["learning_rate"] = 1e-4) without
// retracing a jitted step; schedules are evaluated at the state's count each update. Floating
// values are stored, weakly typed, in hyperparam_dtype or the dtype of the first floating
// leaf of the params (Optax's default), so assigning a C++ number keeps the jit signature.
// Numbers the factory captures itself stay static (Optax's static_args). State {count,
// hyperparams, inner_state}.
GradientTransformation inject_hyperparams(HyperparamsFactory factory,
                                          std::vector<std::pair<std::string, ScalarOrSchedule>> hyperparams,
                                          std::optional<DType> hyperparam_dtype = std::nullopt);

}  // namespace jx::optim
