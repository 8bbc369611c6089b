// One checkpoint in one directory (Orbax's StandardCheckpointer): written under a temporary
// name, fsynced, renamed into place.
#include "checkpoint/files.h"
#include "checkpoint/item.h"
#include "jx/checkpoint.h"
#include "jx/error.h"
#include "support/profiler.h"
#include "support/str.h"

namespace jx::ckpt {

namespace detail {

namespace {

void write_flat(const std::string& path, const tree::TreeDef& def, const std::vector<Array>& leaves,
                const SaveOptions& options, const char* op) {
  JX_PROFILE_SCOPE("checkpoint",
                   [&](std::string& n, prof::Args& a) { n = op, a.add("path", path); });
  if (path.empty()) throw ValueError(str("[", op, "] the path is empty"));
  bool exists = path_exists(path);
  if (exists && !options.force)
    throw ValueError(str("[", op, "] '", path,
                         "' already exists; pass {.force = true} to replace it, or choose a new "
                         "path"));
  std::string parent = parent_directory(path);
  if (!is_directory(parent))
    throw IOError(str("[", op, "] '", path, "' cannot be written: its parent directory '", parent,
                      "' does not exist"));
  ItemImage image = make_item_image(def, leaves, /*snapshot=*/false, op);
  std::string tmp = temporary_name(path);
  try {
    write_item(tmp, image, op);
    if (exists) {
      // Swap the new checkpoint in whole; where the file system cannot exchange, the old one
      // goes out of sight first (a crash then leaves no checkpoint at `path`, never a torn one).
      if (exchange_paths(tmp, path, op)) {
        fsync_directory(parent, op);
        remove_tree(tmp, op);
        return;
      }
      delete_checkpoint_dir(path, op);
    }
    rename_path(tmp, path, op);
    fsync_directory(parent, op);
  } catch (...) {
    remove_tree(tmp, op);
    throw;
  }
}

}  // namespace

void save_flat(const std::string& path, const tree::TreeDef& def, const std::vector<Array>& leaves,
               const SaveOptions& options) {
  const char* op = "checkpoint.save";
  std::exception_ptr error;
  if (is_primary_process()) {
    try {
      write_flat(path, def, leaves, options, op);
    } catch (...) {
      error = std::current_exception();
    }
  }
  agree_written(error != nullptr, op, path);
  if (error) std::rethrow_exception(error);
}

std::pair<tree::TreeDef, std::vector<Array>> restore_flat(const std::string& path,
                                                          const tree::TreeDef& target_def,
                                                          const std::vector<Array>& target_leaves) {
  return read_item_into(path, target_def, target_leaves, "checkpoint.restore");
}

}  // namespace detail

Tree restore(const std::string& path) { return detail::read_item(path, "checkpoint.restore"); }

}  // namespace jx::ckpt
