// The pickle program inside a torch.save archive (data.pkl): a restricted reader that
// understands exactly what a state dict contains, and the writer for save_torch_state_dict.
// Internal to jx.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "jx/array.h"

namespace jx::detail {

// Limits of the pickle reader. A state dict needs a handful of marks, a stack of a few
// thousand entries (pickle sets items in batches of 1000) and a nesting depth of about 4.
struct PickleLimits {
  size_t max_stack = size_t(1) << 18;
  size_t max_marks = 1024;
  size_t max_memo = size_t(1) << 22;
  int max_depth = 32;  // containers inside containers
  // A tensor may have more elements than its storage only through zero strides
  // (Tensor.expand); such a tensor is materialized only up to this many bytes.
  uint64_t max_expanded_bytes = uint64_t(1) << 28;
  // All tensors together may take at most this many times the bytes of the storages they
  // view (plus max_expanded_bytes): views may overlap (tied weights), but a small file must
  // not be able to demand a huge allocation by naming one storage many times.
  uint64_t max_amplification = 16;
};

// The bytes of storage `key` of `dtype` holding `numel` elements (a member of the archive);
// throws IOError when the archive has no such member or its size does not match.
using StorageResolver = std::function<const char*(const std::string& key, DType dtype, uint64_t numel)>;

// Runs the pickle program [p, p + n) on a small stack machine that executes nothing: the only
// globals it accepts are collections.OrderedDict, torch._utils._rebuild_tensor_v2,
// _rebuild_parameter, _rebuild_parameter_with_state and the torch.<X>Storage types; any
// other global is refused with an IOError naming it when its opcode is read. Storages are
// looked up, and tensors gathered (strides and offsets applied), only after the whole
// program has run and been checked. The result must be a
// dict (OrderedDict) of str -> tensor; it is returned in pickle order. Every length, size and
// index is checked against the bytes left and the limits: a malformed program throws IOError.
// `what` names the file in errors.
std::vector<std::pair<std::string, Array>> read_torch_pickle(const char* p, size_t n,
                                                             const StorageResolver& storages,
                                                             const std::string& what,
                                                             const char* op,
                                                             const PickleLimits& limits = {});

// The pickle torch.save writes for an OrderedDict of tensors (protocol 2): one storage per
// tensor, named "0", "1", ... in order, each tensor contiguous at offset 0 of its storage.
// Throws ValueError for a dtype torch has no storage for (uint16, uint32, uint64).
std::string write_torch_pickle(const std::vector<std::pair<std::string, Array>>& state_dict,
                               const char* op);

// torch's storage class name for a dtype ("FloatStorage"); ValueError when there is none.
const char* torch_storage_name(DType t, const char* op);

}  // namespace jx::detail
