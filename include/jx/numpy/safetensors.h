// The safetensors file format (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON describing each tensor (dtype, shape, byte
// offsets) plus an optional "__metadata__" string map, then the tensors' bytes, row-major,
// little-endian.
#pragma once
#include <map>
#include <string>

#include "jx/array.h"

namespace jx::numpy {

// Writes `tensors` (names in sorted order, offsets contiguous from 0) and `metadata` (omitted
// when empty) as the reference writer does: the JSON header is padded with spaces to a
// multiple of 8 bytes. dtypes map to BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16,
// F32, F64. The file is written under a temporary name in the same directory, fsynced and
// renamed, so a reader never sees a half-written file. Throws ValueError for a tensor named
// "__metadata__", IOError when the file cannot be written.
void save_safetensors(const std::string& path, const std::map<std::string, Array>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads a safetensors file (memory-mapped; each tensor is copied into its own Array). Every
// part is validated: header length, strict JSON, dtype names, shapes, data offsets (contiguous,
// in the file, covering the whole buffer), shape x itemsize == byte length, BOOL bytes 0 or 1.
// Throws jx::IOError naming the file and the problem.
std::map<std::string, Array> load_safetensors(const std::string& path);
// The same, also returning the "__metadata__" map (empty when the file has none).
std::map<std::string, Array> load_safetensors(const std::string& path,
                                              std::map<std::string, std::string>& metadata);

}  // namespace jx::numpy
