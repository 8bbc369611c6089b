// flax.training.train_state.TrainState, and the registry behind StaticField.
#include "jx/optim/train_state.h"

#include <mutex>
#include <unordered_map>

#include "jx/error.h"
#include "jx/numpy.h"
#include "support/str.h"

namespace jx::optim {

namespace detail {

namespace {
struct StaticRegistry {
  std::mutex mu;
  int64_t next = 1;
  std::unordered_map<int64_t, std::shared_ptr<const void>> objects;
};
StaticRegistry& registry() {
  static StaticRegistry* r = new StaticRegistry;  // never destroyed: TreeDefs may outlive main's locals
  return *r;
}
}  // namespace

int64_t register_static(std::shared_ptr<const void> object) {
  StaticRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const int64_t id = r.next++;
  r.objects.emplace(id, std::move(object));
  return id;
}

const std::shared_ptr<const void>& find_static(int64_t id) {
  StaticRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.objects.find(id);
  if (it == r.objects.end())
    throw ValueError(str("[optim.StaticField] no static field has id ", id,
                         "; a TreeDef holding a StaticField can only be unflattened in the process that made it"));
  return it->second;
}

}  // namespace detail

namespace {
Array step_zero() { return jx::numpy::zeros({}, DType::Int32); }

// Flax's apply_gradients: updates from tx, then params + updates.
std::pair<Tree, Tree> optimizer_step(const GradientTransformation& tx, const Tree& grads, const Tree& params,
                                     const Tree& opt_state, const char* who) {
  if (jx::tree::structure(grads) != jx::tree::structure(params))
    throw ValueError(str("[optim.", who, ".apply_gradients] the grads ", grads.str(),
                         " do not have the params' structure ", params.str(),
                         "; differentiate with respect to state.params"));
  auto [updates, new_opt_state] = tx.update(grads, opt_state, params);
  return {apply_updates(params, updates), std::move(new_opt_state)};
}
}  // namespace

TrainState TrainState::create(ApplyFn apply_fn, Tree params, GradientTransformation tx) {
  TrainState s;
  s.step = step_zero();
  s.apply_fn = StaticField<ApplyFn>(std::move(apply_fn));
  s.opt_state = tx.init(params);
  s.params = std::move(params);
  s.tx = StaticField<GradientTransformation>(std::move(tx));
  return s;
}

TrainState TrainState::apply_gradients(const Tree& grads) const {
  TrainState s = *this;
  std::tie(s.params, s.opt_state) = optimizer_step(tx, grads, params, opt_state, "TrainState");
  s.step = step + 1;
  return s;
}

TrainStateWithBatchStats TrainStateWithBatchStats::create(BatchStatsApplyFn apply_fn, Tree params,
                                                          GradientTransformation tx, Tree batch_stats) {
  TrainStateWithBatchStats s;
  s.step = step_zero();
  s.apply_fn = StaticField<BatchStatsApplyFn>(std::move(apply_fn));
  s.opt_state = tx.init(params);
  s.params = std::move(params);
  s.tx = StaticField<GradientTransformation>(std::move(tx));
  s.batch_stats = std::move(batch_stats);
  return s;
}

Tree TrainStateWithBatchStats::variables() const { return Tree{{"params", params}, {"batch_stats", batch_stats}}; }

TrainStateWithBatchStats TrainStateWithBatchStats::apply_gradients(const Tree& grads) const {
  return apply_gradients(grads, batch_stats);
}

TrainStateWithBatchStats TrainStateWithBatchStats::apply_gradients(const Tree& grads, Tree new_batch_stats) const {
  TrainStateWithBatchStats s = *this;
  std::tie(s.params, s.opt_state) = optimizer_step(tx, grads, params, opt_state, "TrainStateWithBatchStats");
  s.step = step + 1;
  s.batch_stats = std::move(new_batch_stats);
  return s;
}

}  // namespace jx::optim
