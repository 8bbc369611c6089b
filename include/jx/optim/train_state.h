// flax.training.train_state.TrainState in C++: the step count, the parameters, the
// optimizer and its state, and the model's apply function, in one pytree.
//
//   auto state = optim::TrainState::create(
//       [model](const Tree& variables, const Array& x) { return model.apply(variables, x); },
//       variables["params"], optim::adam(1e-3));
//   auto train_step = jx::jit([](const optim::TrainState& s, const Array& x, const Array& y) {
//     auto [loss, grads] = jx::value_and_grad([&](const Tree& p) {
//       return loss_fn(s.apply_fn(Tree{{"params", p}}, x), y);
//     })(s.params);
//     return std::make_pair(s.apply_gradients(grads), loss);
//   });
//
// step, params and opt_state are traced leaves; apply_fn and tx are C++ functions, so they
// are static (Flax's struct.field(pytree_node=False)): StaticField puts an id for them in
// the TreeDef, so a TrainState passes through jit as an argument and a result, and two
// states with different optimizers never share a compiled step.
//
// Models with BatchNorm use TrainStateWithBatchStats (Flax's recipe: a TrainState subclass
// with a batch_stats field), whose apply_fn also returns the updated statistics.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "jx/optim/transform.h"
#include "jx/tree.h"

namespace jx::optim {

namespace detail {
// Process-wide registry of the C++ objects held by StaticFields. An entry lives as long as
// the process, as a Python treedef keeps its static fields alive: a compiled step's output
// structure may name it after every state holding it is gone.
int64_t register_static(std::shared_ptr<const void> object);
const std::shared_ptr<const void>& find_static(int64_t id);
}  // namespace detail

// A struct field that is part of the pytree's structure, not a leaf (Flax's
// struct.field(pytree_node=False)), for values jit cannot trace, such as functions. It is
// the value itself (T's members are its members) plus the id that stands for it in a
// TreeDef; copies share the id, so they compare equal as jit cache keys.
template <class T>
class StaticField : public T {
 public:
  StaticField() = default;
  StaticField(T value) : T(std::move(value)) {
    id_ = detail::register_static(std::make_shared<const T>(static_cast<const T&>(*this)));
  }
  int64_t static_id() const { return id_; }
  // The field registered under `id` (rebuilding a pytree from its TreeDef).
  static StaticField from_id(int64_t id) {
    StaticField f;
    if (id != 0) static_cast<T&>(f) = *static_cast<const T*>(detail::find_static(id).get());
    f.id_ = id;
    return f;
  }

 private:
  int64_t id_ = 0;  // 0: empty
};

// apply_fn(variables, inputs) -> outputs; wrap model.apply in a lambda.
using ApplyFn = std::function<Array(const Tree& variables, const Array& x)>;

struct TrainState {
  Array step;  // int32 0-d: the number of apply_gradients calls
  StaticField<ApplyFn> apply_fn;
  Tree params;
  StaticField<GradientTransformation> tx;
  Tree opt_state;

  // step 0, opt_state = tx.init(params).
  static TrainState create(ApplyFn apply_fn, Tree params, GradientTransformation tx);
  // One optimizer step: step + 1, params moved by tx's updates, opt_state updated.
  TrainState apply_gradients(const Tree& grads) const;
};

// apply_fn(variables, x, train) -> (outputs, batch_stats): in training, the batch
// statistics after the call (model.apply with nn::Mutable{"batch_stats"}); otherwise
// variables["batch_stats"] unchanged.
using BatchStatsApplyFn = std::function<std::pair<Array, Tree>(const Tree& variables, const Array& x, bool train)>;

// TrainState with the model's batch_stats collection (Flax's ImageNet recipe).
struct TrainStateWithBatchStats {
  Array step;
  StaticField<BatchStatsApplyFn> apply_fn;
  Tree params;
  StaticField<GradientTransformation> tx;
  Tree opt_state;
  Tree batch_stats;

  static TrainStateWithBatchStats create(BatchStatsApplyFn apply_fn, Tree params, GradientTransformation tx,
                                         Tree batch_stats);
  // {"params": params, "batch_stats": batch_stats}: what model.apply takes.
  Tree variables() const;
  TrainStateWithBatchStats apply_gradients(const Tree& grads) const;
  // The same, with the batch statistics the training forward pass returned.
  TrainStateWithBatchStats apply_gradients(const Tree& grads, Tree new_batch_stats) const;
};

JX_PYTREE(TrainState, step, apply_fn, params, tx, opt_state)
JX_PYTREE(TrainStateWithBatchStats, step, apply_fn, params, tx, opt_state, batch_stats)

}  // namespace jx::optim

namespace jx::optim::detail {
// The static kind of a StaticField's id: a handle (tree.h's EnumInfo), which checkpoints take
// from the restore target instead of storing a number that means nothing in another process.
inline const jx::tree::detail::EnumInfo* static_field_info() {
  static const jx::tree::detail::EnumInfo info("optim::StaticField", nullptr, /*handle=*/true);
  return &info;
}
}  // namespace jx::optim::detail

// A StaticField flattens to a static handle (its id) and is rebuilt from the registry.
template <class T>
struct jx::tree::PytreeTraits<jx::optim::StaticField<T>> {
  static constexpr bool defined = true;
  static void flatten(const jx::optim::StaticField<T>& x, detail::Builder& b) {
    detail::Node& n = b.static_node(detail::StaticKind::Enum);
    n.v.i = x.static_id();
    n.info = jx::optim::detail::static_field_info();
  }
  static jx::optim::StaticField<T> unflatten(detail::Reader& r) {
    const detail::Node& n = r.peek();
    if (n.kind != NodeKind::Static || n.skind != detail::StaticKind::Enum ||
        n.info != jx::optim::detail::static_field_info())
      r.mismatch("optim::StaticField");
    r.expect(NodeKind::Static, "optim::StaticField");
    return jx::optim::StaticField<T>::from_id(n.v.i);
  }
};
