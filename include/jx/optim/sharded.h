// Weight-update sharding for data-parallel steps (ZeRO stage 1; what XLA does on its own as
// cross-replica sharding of the weight update). In a replicated data-parallel step every
// replica all-reduces the whole gradient and then repeats the same optimizer update over
// every parameter. Sharded, replica i of n reduce-scatters the gradient (receiving the mean
// of block i of every parameter), updates only that block with optimizer state for that
// block, and all-gathers the new parameters: the same bytes move, and each replica does
// 1/n of the optimizer's work and holds 1/n of its state.
//
//   auto tx = optim::chain({optim::clip_by_global_norm(1.0), optim::adamw(1e-3)});
//   Tree blocks = optim::shard_update_state(tx, params, tx.init(params));  // [local devices, ...]
//   auto step = jx::pmap([tx](const Tree& params, const Tree& block, const Array& x, const Array& y) {
//         Tree grads = jx::grad(loss)(params, x, y);
//         return optim::sharded_apply_gradients(tx, grads, block, params, "batch");
//       },
//       {.axis_name = "batch", .in_axes = {jx::none, 0, 0, 0}, .out_axes = {jx::none, 0},
//        .donate_argnums = {1}});
//   std::tie(params, blocks) = step(params, blocks, xs, ys);
//
// A block of a parameter is a row of it flattened and zero-padded to a multiple of n, so
// any shape splits. The transformation must work element by element on each parameter,
// as sgd, adam(w), rmsprop, lion and their kin do; a global norm (clip_by_global_norm,
// global_norm) is summed over the replicas' blocks, so it is the whole gradient's.
// Transformations that need a whole parameter (lamb and lars' trust ratio, adafactor,
// novograd, adaptive_grad_clip, clip_by_block_rms, the param-block scalings, centralize)
// throw ValueError here. The zero padding stays zero through such updates.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#include "jx/optim/transform.h"
#include "jx/tree.h"

namespace jx::optim {

// {"params": block `index` of every parameter, "opt": opt_state (tx's state for the whole
// params) with each per-parameter leaf cut the same way}; scalar leaves (step counts) are
// kept whole. Blocks are 1-D, of ceil(size / parts) elements.
Tree shard_update_state(const GradientTransformation& tx, const Tree& params, const Tree& opt_state, int64_t parts,
                        int64_t index);
// The blocks of this process' local devices, stacked along a leading axis (pmap's in_axes 0):
// parts = jx::device_count(), the block of global device process_index() *
// local_device_count() + d in row d.
Tree shard_update_state(const GradientTransformation& tx, const Tree& params, const Tree& opt_state);

// Inside pmap or shard_map over `axis`, with `block` this replica's shard_update_state:
// grads (this replica's gradient, as in the replicated step before pmean) averaged over
// the axis, this replica's block updated with tx, the new parameters gathered. Returns
// {the new params, the same on every replica; the new block}.
std::pair<Tree, Tree> sharded_apply_gradients(const GradientTransformation& tx, const Tree& grads, const Tree& block,
                                              const Tree& params, const std::string& axis);

// Inside pmap or shard_map over `axis`: the whole optimizer state from the replicas' blocks
// (as tx.init(params) has it), the same on every replica: what a checkpoint stores, so that
// it restores on any number of devices.
Tree gather_opt_state(const GradientTransformation& tx, const Tree& block, const Tree& params,
                      const std::string& axis);

namespace detail {
// Set while sharded_apply_gradients runs tx.update (on the tracing thread): global_norm
// sums over this axis, and whole-parameter transformations refuse to run.
const std::string* sharded_update_axis();
// Throws ValueError naming `transform` when called inside a sharded update.
void require_whole_parameters(const char* transform);
}  // namespace detail

}  // namespace jx::optim
