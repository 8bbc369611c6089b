// jx::ckpt: checkpoints with the semantics of Orbax (orbax.checkpoint): save and restore any pytree, and a
// manager of numbered steps with retention, best-by-metric and asynchronous, atomic saves.
//
//   namespace ocp = jx::ckpt;
//   ocp::save("/tmp/ckpt", state);                    // StandardCheckpointer().save
//   auto state2 = ocp::restore("/tmp/ckpt", state);   // checked against state's shapes/dtypes
//   jx::Tree any = ocp::restore("/tmp/ckpt");          // rebuilt from the stored description
//
//   ocp::CheckpointManager mngr("/tmp/run", {.max_to_keep = 3});
//   mngr.save(step, jx::Tree{{"params", params}, {"opt_state", opt_state}, {"epoch", epoch}});
//   mngr.wait_until_finished();
//   auto restored = mngr.restore(mngr.latest_step(), target);
//
// On disk (docs/checkpoint.md), one directory per checkpoint:
//   <path>/tree.json             the tree: containers, key paths, dtypes, shapes, static values
//   <path>/arrays.safetensors    every Array leaf, named by its key path ("params/Dense_0/kernel")
// and for a manager, <dir>/<step>/_CHECKPOINT_METADATA plus one such directory per item.
// A checkpoint is written under a temporary name, fsynced and renamed into place: it exists
// completely or not at all.
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "jx/tree.h"

namespace jx::ckpt {

// ---- one checkpoint (Orbax's StandardCheckpointer / PyTreeCheckpointer) ----

struct SaveOptions {
  // Replace an existing checkpoint at `path` (atomically: the old one is swapped out whole).
  // Without it an existing path is a ValueError, as in Orbax.
  bool force = false;
};

namespace detail {
void save_flat(const std::string& path, const tree::TreeDef& def, const std::vector<Array>& leaves,
               const SaveOptions& options);
// The stored TreeDef with the target's containers and the stored static values, and the
// leaves read from disk, after checking them against the target's structure, shapes, dtypes.
std::pair<tree::TreeDef, std::vector<Array>> restore_flat(const std::string& path,
                                                          const tree::TreeDef& target_def,
                                                          const std::vector<Array>& target_leaves);
}  // namespace detail

// Saves `tree` (any pytree: Arrays, containers, JX_PYTREE structs and static values such as an
// `int epoch` or a std::string) as the checkpoint directory `path`, whose parent must exist.
// Throws ValueError when `path` exists (see SaveOptions::force), IOError when it cannot write.
template <class T>
void save(const std::string& path, const T& tree, const SaveOptions& options = {}) {
  auto [leaves, def] = tree::flatten(tree);
  detail::save_flat(path, def, leaves, options);
}

// Rebuilds the saved tree as a jx::Tree: dicts and structs become dicts (in their saved key
// order), tuples and lists become lists, static values stay static (enums as their integers).
Tree restore(const std::string& path);

// Restores into the structure of `target` (any pytree whose Array leaves give the expected
// shapes and dtypes; their values are not read). Static values (an `int epoch`) come from the
// checkpoint. A difference of structure, shape or dtype throws ValueError naming the key path,
// e.g. "['params']['Dense_0']['kernel']: the checkpoint holds f32[784,512], the target
// expects f32[784,256]". Throws IOError for a missing or corrupt checkpoint.
template <class T>
T restore(const std::string& path, const T& target) {
  auto [target_leaves, target_def] = tree::flatten(target);
  auto [def, leaves] = detail::restore_flat(path, target_def, target_leaves);
  return tree::unflatten<T>(def, leaves);
}

// ---- a series of checkpoints (Orbax's CheckpointManager) ----

// Scalar metrics saved with a step; best_fn ranks steps by them.
using Metrics = std::map<std::string, double>;

enum class BestMode { max, min };

struct ManagerOptions {
  // should_save(step) is true every save_interval_steps steps and on save_on_steps.
  int64_t save_interval_steps = 1;
  std::set<int64_t> save_on_steps = {};
  // If set, replaces the two rules above: (step, latest saved step) -> save?
  std::function<bool(int64_t, std::optional<int64_t>)> should_save_fn = {};
  // Retention, applied after each save: keep the max_to_keep most recent steps (or best, with
  // best_fn) and, besides them, every step with step % keep_period == 0. Unset: keep all.
  std::optional<int64_t> max_to_keep = {};
  std::optional<int64_t> keep_period = {};
  // Rank steps by best_fn(metrics) (higher is better for BestMode::max); steps saved without
  // metrics are never deleted while keep_checkpoints_without_metrics.
  std::function<double(const Metrics&)> best_fn = {};
  BestMode best_mode = BestMode::max;
  bool keep_checkpoints_without_metrics = true;
  // Step directory names: "<step_prefix>_<step>" (or "<step>"), zero-padded to
  // step_format_fixed_length digits when set.
  std::string step_prefix = {};
  std::optional<int> step_format_fixed_length = {};
  bool create = true;  // create the directory if missing
  // Remove temporary directories left by an interrupted save when the manager opens. Orbax
  // defaults to false; a stale one then fails later saves (docs/checkpoint.md), so jx cleans.
  bool cleanup_tmp_directories = true;
  // save() snapshots the arrays and returns; a background thread writes and commits.
  bool enable_async_checkpointing = true;
  bool read_only = false;  // restore only: save and delete_step do nothing
};

// Named items saved together in one step (Orbax's args.Composite), each restorable alone.
using Composite = std::vector<std::pair<std::string, Tree>>;

class CheckpointManager {
 public:
  // Opens (and with options.create, creates) `directory` and reads the steps in it. Throws
  // ValueError for invalid options, IOError when the directory cannot be used.
  explicit CheckpointManager(std::string directory, ManagerOptions options = {});
  // Waits for a save in progress; an error it raised is printed to stderr (call
  // wait_until_finished() or close() first to receive it as an exception).
  ~CheckpointManager();
  CheckpointManager(const CheckpointManager&) = delete;
  CheckpointManager& operator=(const CheckpointManager&) = delete;

  // Saves `item` (any pytree) as step `step`'s item "default", with optional metrics, when
  // should_save(step) or `force`; returns whether it saved. Waits for the previous save first
  // and rethrows its error. Throws ValueError if the step already exists.
  template <class T>
  bool save(int64_t step, const T& item, std::optional<Metrics> metrics = std::nullopt,
            bool force = false) {
    return save_items(step, Composite{{"default", Tree::from(item)}}, std::move(metrics), force);
  }
  bool save_items(int64_t step, const Composite& items,
                  std::optional<Metrics> metrics = std::nullopt, bool force = false);

  // Restores step `step` (the latest when absent) of item "default", as a jx::Tree or into
  // the structure of `target` (checked as ckpt::restore checks). A step still being
  // written is waited for. Throws ValueError when there is no such step.
  Tree restore(std::optional<int64_t> step = std::nullopt);
  template <class T>
  T restore(std::optional<int64_t> step, const T& target) {
    return ckpt::restore(item_path(step, "default"), target);
  }
  Tree restore_item(std::optional<int64_t> step, const std::string& name);
  template <class T>
  T restore_item(std::optional<int64_t> step, const std::string& name, const T& target) {
    return ckpt::restore(item_path(step, name), target);
  }
  std::vector<std::string> item_names(int64_t step);

  std::vector<int64_t> all_steps() const;  // ascending
  std::optional<int64_t> latest_step() const;
  // The step ranked best by best_fn (the latest without best_fn); none when nothing is saved.
  std::optional<int64_t> best_step() const;
  std::optional<Metrics> metrics(int64_t step) const;
  bool should_save(int64_t step) const;

  // Blocks until a save in progress is committed; rethrows its error (and forgets the step).
  void wait_until_finished();
  // Rethrows a finished background save's error without waiting.
  void check_for_errors();
  bool is_saving_in_progress() const;
  // Deletes a step (Orbax's delete). Throws ValueError for a step that does not exist.
  void delete_step(int64_t step);
  // Re-reads the steps on disk (after another process wrote to the directory).
  void reload();
  void close() { wait_until_finished(); }

  const std::string& directory() const { return directory_; }
  // The directory of step `step` (the latest when absent), waiting for it if it is being
  // written; ValueError when it does not exist.
  std::string step_path(std::optional<int64_t> step);

 private:
  struct Info {
    int64_t step;
    std::optional<Metrics> metrics;
  };
  struct Pending;
  std::string item_path(std::optional<int64_t> step, const std::string& name);
  std::string step_name(int64_t step) const;
  std::vector<int64_t> steps_to_remove() const;
  void load_infos();
  // Ends a save on every process (agree_written), then rethrows its error, if any.
  void finish_save(std::exception_ptr error, int64_t step);

  std::string directory_;
  ManagerOptions options_;
  std::vector<Info> checkpoints_;  // ascending steps, the one being saved included
  std::unique_ptr<Pending> pending_;
};

}  // namespace jx::ckpt
