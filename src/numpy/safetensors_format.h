// The safetensors format's two halves, shared by jnp::load_safetensors / save_safetensors and
// jx::checkpoint (which writes from a snapshot buffer and reads into arrays it allocates).
// Files are read through io_npy.h's MappedFile.
// Internal to jx.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "jx/array.h"

namespace jx::detail {

struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets in the data section
};

struct SafetensorsLayout {
  std::vector<SafetensorsEntry> entries;  // by data offset
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;  // file offset of the data section
};

// Validates a whole safetensors image p[0, size) (header, offsets, BOOL bytes) and describes
// it; throws IOError("[op] 'path': ...") for anything malformed. `complex128` accepts the
// dtype "C128", which safetensors lacks: jx checkpoints write it for complex128 leaves.
SafetensorsLayout parse_safetensors(const char* p, size_t size, const std::string& path,
                                    const char* op, bool complex128 = false);

// The 8-byte length and the padded JSON header for `tensors` written in this order, data
// contiguous from offset 0. Throws ValueError / DTypeError for a tensor that cannot be saved.
std::string safetensors_header(const std::vector<std::pair<std::string, const Array*>>& tensors,
                               const std::map<std::string, std::string>& metadata,
                               const char* op, bool complex128 = false);

}  // namespace jx::detail
