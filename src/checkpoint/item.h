// One checkpoint item on disk: `tree.json` (the tree's description) beside
// `arrays.safetensors` (its Array leaves). Internal to jx; the format is in docs/checkpoint.md.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jx/tree.h"

namespace jx::ckpt::detail {

inline constexpr const char* kTreeFile = "tree.json";
inline constexpr const char* kArraysFile = "arrays.safetensors";
inline constexpr int kFormatVersion = 1;

// An item ready to be written. With a snapshot, the array bytes were copied into `data` (the
// caller may then donate or drop its arrays while a background thread writes); without one,
// `arrays` are written from their own buffers.
struct ItemImage {
  std::string tree_json;
  std::string arrays_header;  // the safetensors header
  std::vector<Array> arrays;
  std::shared_ptr<char> data;  // from jx's caching allocator: repeated saves reuse its pages
  size_t data_size = 0;
};

// Throws ValueError/DTypeError for a leaf that cannot be saved (a tracer, a deleted array).
ItemImage make_item_image(const tree::TreeDef& def, const std::vector<Array>& leaves,
                          bool snapshot, const char* op);
// Creates directory `dir` holding the item's two files, each fsynced, and fsyncs `dir`.
void write_item(const std::string& dir, const ItemImage& image, const char* op);

// Reads the item in `dir` as a jx::Tree (dicts, lists, static values, Array leaves).
Tree read_item(const std::string& dir, const char* op);
// Reads the item in `dir` into the structure of a target (see ckpt::restore).
std::pair<tree::TreeDef, std::vector<Array>> read_item_into(const std::string& dir,
                                                            const tree::TreeDef& target_def,
                                                            const std::vector<Array>& target_leaves,
                                                            const char* op);

}  // namespace jx::ckpt::detail
