// The file-system steps of an atomic checkpoint: write fully and fsync, fsync directories,
// rename into place, delete by first renaming out of sight. POSIX; internal to jx.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace jx::ckpt::detail {

// Every failure throws IOError("[op] 'path' ...") with the system's reason.
bool path_exists(const std::string& path);
bool is_directory(const std::string& path);
void make_directory(const std::string& path, const char* op);
void make_directories(const std::string& path, const char* op);  // mkdir -p
// Creates `path` (which must not exist), writes the pieces in order, fsyncs and closes it.
void write_file(const std::string& path, const std::vector<std::pair<const void*, size_t>>& pieces,
                const char* op);
std::string read_small_file(const std::string& path, size_t limit, const char* op);
void fsync_directory(const std::string& path, const char* op);
void rename_path(const std::string& from, const std::string& to, const char* op);
// Swaps two existing paths atomically (renameat2 RENAME_EXCHANGE); false when the file
// system cannot, in which case nothing happened.
bool exchange_paths(const std::string& a, const std::string& b, const char* op);
// rm -rf; a missing path is not an error.
void remove_tree(const std::string& path, const char* op);
std::vector<std::string> list_directory(const std::string& path, const char* op);

// "<base>.jx-tmp-<pid>-<ns>": where a checkpoint is written before it is renamed to `base`.
std::string temporary_name(const std::string& base);
// "<base>.jx-deleting-<pid>-<ns>": where a checkpoint goes before it is removed, so that a
// crash mid-delete never leaves a partial checkpoint under a real name.
std::string deleting_name(const std::string& base);
// A name made by temporary_name or deleting_name: never a checkpoint, safe to clean up.
bool is_temporary_name(const std::string& name);
// Renames `path` out of sight (deleting_name), fsyncs its parent, then removes it.
void delete_checkpoint_dir(const std::string& path, const char* op);

// Multi-process runs write each checkpoint once, from process 0 (Orbax's primary host): the
// saved state is replicated, so process 0's copy is the whole of it, and it restores on any
// number of processes.
bool is_primary_process();
// After process 0's write (a no-op in a single process): every process learns whether it
// committed, so that none goes on to read a step that is not there. `failed`: this
// process' write failed. Throws IOError on the others when process 0's failed.
void agree_written(bool failed, const char* op, const std::string& path);

std::string parent_directory(const std::string& path);
std::string join_path(const std::string& a, const std::string& b);

}  // namespace jx::ckpt::detail
