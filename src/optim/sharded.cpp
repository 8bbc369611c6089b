// Weight-update sharding (include/jx/optim/sharded.h). Which leaves of an optimizer state
// belong to a parameter is found as Optax's tree_map_params finds it: tx.init of marker
// parameters, parameter k an empty array of shape [0, k + 1], so that a state leaf of that
// shape is parameter k's (mu, nu, a trace) and a scalar is the transformation's own (a
// count). Any other leaf (a factored moment) cannot be split, and is refused.
#include "jx/optim/sharded.h"

#include <vector>

#include "jx/device.h"
#include "jx/lax.h"
#include "jx/numpy.h"
#include "jx/parallel.h"
#include "support/process_group.h"
#include "support/str.h"

namespace jx::optim {

namespace jnp = jx::numpy;

namespace detail {
namespace {
thread_local const std::string* g_axis = nullptr;

struct AxisScope {
  explicit AxisScope(const std::string& axis) : saved(g_axis) { g_axis = &axis; }
  ~AxisScope() { g_axis = saved; }
  const std::string* saved;
};
}  // namespace

const std::string* sharded_update_axis() { return g_axis; }

void require_whole_parameters(const char* transform) {
  if (g_axis)
    throw ValueError(str("[", transform, "] needs whole parameters, but inside optim::sharded_apply_gradients (axis '",
                         *g_axis, "') it sees 1-D blocks of them; use the replicated update (lax::pmean of the "
                         "gradients, then apply_gradients) for this optimizer"));
}
}  // namespace detail

namespace {

int64_t block_size(int64_t n, int64_t parts) { return (n + parts - 1) / parts; }

// x flattened, zero-padded to parts * block, as [parts, block].
Array rows_of(const Array& x, int64_t parts) {
  const int64_t n = x.size(), b = block_size(n, parts);
  Array flat = x.reshape({n});
  if (b * parts != n) flat = jnp::pad(flat, {0, b * parts - n});
  return flat.reshape({parts, b});
}

// Per leaf of tx's state: the parameter it belongs to, or -1 for a scalar of tx's own.
std::vector<int64_t> owners(const GradientTransformation& tx, const Tree& params, const Tree& state,
                            const char* fn) {
  auto [param_leaves, param_def] = jx::tree::flatten(params);
  std::vector<Array> markers;
  for (size_t k = 0; k < param_leaves.size(); ++k)
    markers.push_back(jnp::zeros({0, int64_t(k) + 1}, param_leaves[k].dtype()));
  auto [marked, marked_def] = jx::tree::flatten(tx.init(param_def.unflatten(markers)));
  auto [leaves, def] = jx::tree::flatten(state);
  if (!(def == marked_def))
    throw ValueError(str("[optim.", fn, "] the optimizer state has structure ", def.str(),
                         " but tx.init(params) has ", marked_def.str(), "; pass tx's state for these params"));
  std::vector<int64_t> owner;
  for (size_t i = 0; i < marked.size(); ++i) {
    const Shape& s = marked[i].shape();
    if (s.size() == 2 && s[0] == 0 && s[1] >= 1 && size_t(s[1]) <= param_leaves.size())
      owner.push_back(s[1] - 1);
    else if (s.empty())
      owner.push_back(-1);
    else
      throw ValueError(str("[optim.", fn, "] optimizer state leaf ", i, " has shape ", shape_str(leaves[i].shape()),
                           ", neither a parameter's nor a scalar (a factored moment, say), so it cannot be cut "
                           "into blocks; use the replicated update for this optimizer"));
  }
  return owner;
}

// Rows [lo, hi) of the blocks of params and of their state leaves ([hi - lo, block] each);
// tx's scalars repeated once per row.
Tree block_rows(const GradientTransformation& tx, const Tree& params, const Tree& opt_state, int64_t parts,
                int64_t lo, int64_t hi) {
  const std::vector<int64_t> owner = owners(tx, params, opt_state, "shard_update_state");
  auto rows = [&](const Array& x) { return lax::slice_in_dim(rows_of(x, parts), lo, hi, 1, 0); };
  auto [leaves, def] = jx::tree::flatten(opt_state);
  for (size_t i = 0; i < leaves.size(); ++i) {
    Shape repeated{hi - lo};
    for (int64_t d : leaves[i].shape()) repeated.push_back(d);
    leaves[i] = owner[i] >= 0 ? rows(leaves[i]) : jnp::broadcast_to(leaves[i], repeated);
  }
  return Tree{{"params", jx::tree::map(rows, params)}, {"opt", def.unflatten(leaves)}};
}

// The whole leaf shaped as `like` from every replica's block of it.
Array whole(const Array& block, const Array& like, const std::string& axis) {
  return lax::slice_in_dim(lax::all_gather(block, axis, 0, true), 0, like.size(), 1, 0).reshape(like.shape());
}

}  // namespace

Tree shard_update_state(const GradientTransformation& tx, const Tree& params, const Tree& opt_state, int64_t parts,
                        int64_t index) {
  if (parts < 1 || index < 0 || index >= parts)
    throw ValueError(str("[optim.shard_update_state] block ", index, " of ", parts,
                         " does not exist; give 0 <= index < parts"));
  return jx::tree::map([](const Array& x) { return x(0); },
                       block_rows(tx, params, opt_state, parts, index, index + 1));
}

Tree shard_update_state(const GradientTransformation& tx, const Tree& params, const Tree& opt_state) {
  const int64_t local = local_device_count(), first = int64_t(support::process_index()) * local;
  return block_rows(tx, params, opt_state, device_count(), first, first + local);
}

std::pair<Tree, Tree> sharded_apply_gradients(const GradientTransformation& tx, const Tree& grads, const Tree& block,
                                              const Tree& params, const std::string& axis) {
  const int64_t n = lax::axis_size(axis);
  const std::vector<Array> block_leaves = jx::tree::leaves(block["params"]), param_leaves = jx::tree::leaves(params);
  for (size_t k = 0; k < block_leaves.size() && k < param_leaves.size(); ++k)
    if (block_leaves[k].shape() != Shape{block_size(param_leaves[k].size(), n)})
      throw ValueError(str("[optim.sharded_apply_gradients] parameter leaf ", k, " (", param_leaves[k].size(),
                           " elements) has a block of shape ", shape_str(block_leaves[k].shape()), " but axis '", axis,
                           "' has ", n, " replicas, whose blocks have ", block_size(param_leaves[k].size(), n),
                           "; cut the state with shard_update_state for ", n, " parts"));
  // The mean gradient's block: psum_scatter of the [n, block] rows, as pmean then a slice.
  Tree g = jx::tree::map(
      [&](const Array& x) { return lax::psum_scatter(rows_of(x, n), axis) / double(n); }, grads);
  auto [updates, opt] = [&] {
    detail::AxisScope scope(axis);
    return tx.update(g, block["opt"], block["params"]);
  }();
  Tree mine = apply_updates(block["params"], updates);
  Tree full = jx::tree::map([&](const Array& b, const Array& like) { return whole(b, like, axis); }, mine, params);
  return {full, Tree{{"params", mine}, {"opt", opt}}};
}

Tree gather_opt_state(const GradientTransformation& tx, const Tree& block, const Tree& params,
                      const std::string& axis) {
  const std::vector<int64_t> owner = owners(tx, block["params"], block["opt"], "gather_opt_state");
  const std::vector<Array> param_leaves = jx::tree::leaves(params);
  auto [leaves, def] = jx::tree::flatten(block["opt"]);
  for (size_t i = 0; i < leaves.size(); ++i)
    if (owner[i] >= 0) leaves[i] = whole(leaves[i], param_leaves[size_t(owner[i])], axis);
  return def.unflatten(leaves);
}

}  // namespace jx::optim
