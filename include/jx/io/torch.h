// PyTorch weights: reading and writing `torch.save(model.state_dict(), path)` files, and
// mapping a state dict to and from the Flax-shaped variables of a jx::nn model
// ({"params": ..., "batch_stats": ...}). See docs/pytorch_weights.md.
//
//   auto sd = jx::io::load_torch_state_dict("model.pt");          // torch.load(path)
//   jx::Tree variables = jx::io::torch_to_flax(sd, {.linear_after_flatten = {{"fc1", {16, 7, 7}}}});
//   Array logits = model.apply(variables, x_nhwc, /*train=*/false);
//   jx::io::save_torch_state_dict("out.pt", jx::io::flax_to_torch(variables, sd));
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "jx/array.h"
#include "jx/tree.h"

namespace jx::io {

// A PyTorch state dict: tensor names ("features.0.weight") and values, in the file's order
// (PyTorch's module registration order).
using StateDict = std::vector<std::pair<std::string, Array>>;

// torch.load(path) of a file written by torch.save(model.state_dict(), path) (the zip format,
// PyTorch >= 1.6's default). Dtypes are kept (float32 stays float32, the int64
// num_batches_tracked stays int64); strided and offset views are gathered into plain arrays.
// The pickle inside is read by a restricted reader that executes nothing: only
// collections.OrderedDict, torch tensors/Parameters and torch.<X>Storage are accepted, and a
// file asking for any other global (os.system, builtins.eval, ...) is refused.
// Throws IOError naming the file and the problem for an unreadable, malformed, hostile,
// compressed or legacy-format (pre-1.6, non-zip) file, or one that is not a dict of tensors.
StateDict load_torch_state_dict(const std::string& path);

// torch.save(state_dict, path): a zip archive of one pickle (an OrderedDict of
// torch._utils._rebuild_tensor_v2 over storages) and one 64-byte-aligned storage per tensor,
// readable by torch.load and by load_torch_state_dict. Written to a temporary file in the
// same directory and renamed. Throws ValueError for a duplicate name or a dtype torch has no
// tensor for (uint16/32/64), IOError when the file cannot be written.
void save_torch_state_dict(const std::string& path, const StateDict& state_dict);

// How torch module prefixes map to Flax module paths. A prefix is a tensor name without its
// last component ("encoder.0" for "encoder.0.weight").
struct TorchMapping {
  // Explicit Flax paths for torch prefixes: {"fc", "Dense_1"}, {"tok", "Embed_0"},
  // {"encoder.proj", "encoder/Dense_0"}, {"", ""} (a root module). When the last component
  // of the Flax path names a layer class (Dense_1, Embed_0, Conv_2, BatchNorm_0,
  // LayerNorm_0, GroupNorm_0, RMSNorm_0) it also fixes the layer kind. An entry whose torch
  // prefix is a parent of modules ({"encoder", "Encoder_0"}) places them under that path,
  // auto-numbered there. Modules without an entry are auto-named at the root.
  std::vector<std::pair<std::string, std::string>> names{};
  // Linear layers that follow a flatten of an NCHW activation of shape [C, H, W]
  // (torch prefix -> {C, H, W}): PyTorch's flatten orders features C,H,W, a Flax model
  // flattening NHWC orders them H,W,C, so the kernel rows are permuted accordingly.
  std::vector<std::pair<std::string, std::vector<int64_t>>> linear_after_flatten{};
  // Drop tensors that fit no known layer instead of throwing.
  bool ignore_unmapped = false;
};

// Maps a state dict to Flax variables {"params": {...}, "batch_stats": {...}} (batch_stats
// only when there are BatchNorm layers). Each prefix's layer kind is inferred from its
// tensor names and ranks, and auto-named <Kind>_<i> counting per kind in state dict order
// (Flax's naming for a sequential model):
//   Linear weight [out, in]           -> Dense_i/kernel [in, out], bias -> bias
//   Conv1d/2d/3d weight [O, I, *k]    -> Conv_i/kernel [*k, I, O], bias -> bias
//   BatchNorm weight, bias            -> params/BatchNorm_i/scale, bias;
//     running_mean, running_var       -> batch_stats/BatchNorm_i/mean, var; num_batches_tracked dropped
//   Embedding weight [n, d] (prefix containing "emb", or named Embed_i) -> Embed_i/embedding
//   LayerNorm weight, bias [d]        -> LayerNorm_i/scale, bias
// A rank-2 weight without bias is a Linear unless the prefix says otherwise. Dtypes are kept.
// Throws ValueError listing the tensors no layer fits (unless ignore_unmapped), for two
// modules mapped to one path, a names/linear_after_flatten entry that matches nothing, or a
// [C, H, W] that does not match the Linear's input width.
Tree torch_to_flax(const StateDict& state_dict, const TorchMapping& mapping = {});

// The inverse of torch_to_flax: the state dict whose names, order, shapes and
// num_batches_tracked values are those of `template_state_dict` (e.g. the file the weights
// came from, or torch's model.state_dict()), with values from `variables` (mapped back:
// kernels transposed, scale -> weight, mean -> running_mean, ...). The values keep the
// variables' dtypes; num_batches_tracked, and with ignore_unmapped the tensors no layer
// fits, are the template's. Throws ValueError for a variable that is missing, ShapeError
// for one whose shape does not give the template's.
StateDict flax_to_torch(const Tree& variables, const StateDict& template_state_dict,
                        const TorchMapping& mapping = {});

// The same without a template: `modules` lists (Flax path, torch prefix) pairs in the order
// the state dict should have ({"Conv_0", "conv"}, {"BatchNorm_0", "bn"}, ...); each layer
// kind is inferred from the Flax variables (kernel rank 2: Linear, 3-5: Conv; embedding;
// scale/bias with batch_stats mean/var: BatchNorm, whose num_batches_tracked is written as
// int64 0; scale/bias alone: LayerNorm). `mapping.linear_after_flatten` uses torch prefixes.
StateDict flax_to_torch(const Tree& variables,
                        const std::vector<std::pair<std::string, std::string>>& modules,
                        const TorchMapping& mapping = {});

}  // namespace jx::io
