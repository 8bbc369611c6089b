// Bad input to jx::ckpt (issue 19, "bad input everywhere"): a table of wrong calls to
// save/restore and CheckpointManager (bad paths, damaged files, targets of another
// structure, shape or dtype, invalid options and steps), each of which must throw exactly
// the expected jx error type with a message that names the operation ("[restore]"), the
// offending path, key path, shape, dtype or value, and the fix. Files live in a TempDir.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "testing/error_table.h"
#include "testing/temp_dir.h"

namespace {

namespace jnp = jx::numpy;
namespace ocp = jx::ckpt;
using jx::Array;
using jx::DType;
using jx::Tree;

using jx::testing::ErrorRow;
using jx::testing::row;
using jx::testing::run_rows;

Tree state() {
  return Tree{{"params", Tree{{"w", jnp::ones({3})}, {"b", jnp::zeros({2})}}}, {"epoch", 7}};
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}

// Rows over a directory holding a good checkpoint "good", a good manager directory "run"
// with step 1, and whatever the rows write themselves (each under its own name).
std::vector<ErrorRow> checkpoint_rows(const std::string& root) {
  std::vector<ErrorRow> rows;
  const std::string good = root + "/good";
  const std::string run = root + "/run";
  // ---- save ----
  rows.push_back(row<jx::ValueError>("save: an empty path", [] { ocp::save("", state()); },
                                     {"[checkpoint.save]", "the path is empty"}));
  rows.push_back(row<jx::ValueError>(
      "save: over an existing checkpoint without force", [good] { ocp::save(good, state()); },
      {"[checkpoint.save]", "/good' already exists", "{.force = true}"}));
  rows.push_back(row<jx::IOError>("save: a parent directory that does not exist",
                                  [root] { ocp::save(root + "/missing/ckpt", state()); },
                                  {"[checkpoint.save]", "/missing' does not exist"}));
  rows.push_back(row<jx::ConcretizationError>(
      "save: a traced array (a tracer escaping jit)",
      [root] {
        jx::jit([root](const Array& x) {
          ocp::save(root + "/traced", Tree{{"x", x}});
          return x;
        })(jnp::ones({2}));
      },
      {"[checkpoint.save]", "traced array (f32[2])", "outside jit/grad/vmap"}));
  // ---- restore ----
  rows.push_back(row<jx::IOError>(
      "restore: a missing checkpoint", [root] { ocp::restore(root + "/nothing"); },
      {"[checkpoint.restore]", "/nothing' is not a checkpoint", "does not exist"}));
  rows.push_back(row<jx::IOError>("restore: a directory that is not a checkpoint",
                                  [root] {
                                    std::filesystem::create_directory(root + "/empty");
                                    ocp::restore(root + "/empty");
                                  },
                                  {"[checkpoint.restore]", "/empty/tree.json' cannot be opened"}));
  rows.push_back(row<jx::ValueError>(
      "restore: a target leaf of another shape",
      [good] {
        ocp::restore(good, Tree{{"params", Tree{{"w", jnp::ones({4})}, {"b", jnp::zeros({2})}}},
                                {"epoch", 0}});
      },
      {"[checkpoint.restore]", "['params']['w']", "holds f32[3]", "expects f32[4]"}));
  rows.push_back(row<jx::ValueError>(
      "restore: a target leaf of another dtype",
      [good] {
        ocp::restore(good, Tree{{"params",
                                 Tree{{"w", jnp::ones({3}, DType::Int32)}, {"b", jnp::zeros({2})}}},
                                {"epoch", 0}});
      },
      {"[checkpoint.restore]", "['params']['w']", "holds f32[3]", "expects i32[3]"}));
  rows.push_back(row<jx::ValueError>(
      "restore: a target without a key the checkpoint has",
      [good] {
        ocp::restore(good, Tree{{"params", Tree{{"w", jnp::ones({3})}}}, {"epoch", 0}});
      },
      {"[checkpoint.restore]", "['params']", "keys the target lacks (b,)"}));
  rows.push_back(row<jx::IOError>(
      "restore: tree.json that is not JSON",
      [root, good] {
        std::filesystem::copy(good, root + "/badjson");
        write_file(root + "/badjson/tree.json", "{\"format\": ");
        ocp::restore(root + "/badjson");
      },
      {"[checkpoint.restore]", "/badjson/tree.json' is not valid JSON", "byte 11"}));
  rows.push_back(
      row<jx::IOError>("restore: a truncated arrays file",
                       [root, good] {
                         std::filesystem::copy(good, root + "/truncated");
                         std::filesystem::resize_file(root + "/truncated/arrays.safetensors", 20);
                         ocp::restore(root + "/truncated");
                       },
                       {"[checkpoint.restore]", "/truncated/arrays.safetensors' is truncated",
                        "header length is 240 bytes"}));
  rows.push_back(
      row<jx::IOError>("restore: the arrays file missing",
                       [root, good] {
                         std::filesystem::copy(good, root + "/noarrays");
                         std::filesystem::remove(root + "/noarrays/arrays.safetensors");
                         ocp::restore(root + "/noarrays");
                       },
                       {"[checkpoint.restore]", "/noarrays/arrays.safetensors' cannot be opened"}));
  // ---- CheckpointManager ----
  rows.push_back(row<jx::ValueError>(
      "CheckpointManager: save_interval_steps 0",
      [root] { ocp::CheckpointManager(root + "/m0", {.save_interval_steps = 0}); },
      {"[CheckpointManager]", "save_interval_steps must be at least 1", "not 0"}));
  rows.push_back(row<jx::ValueError>(
      "CheckpointManager: a negative max_to_keep",
      [root] { ocp::CheckpointManager(root + "/m1", {.max_to_keep = -1}); },
      {"[CheckpointManager]", "max_to_keep must be unset or non-negative", "not -1"}));
  rows.push_back(
      row<jx::ValueError>("CheckpointManager: a step_prefix with '/'",
                          [root] { ocp::CheckpointManager(root + "/m2", {.step_prefix = "a/b"}); },
                          {"[CheckpointManager]", "step_prefix 'a/b'", "may not contain '/'"}));
  rows.push_back(
      row<jx::IOError>("CheckpointManager: the directory is a file",
                       [good] { ocp::CheckpointManager(good + "/tree.json"); },
                       {"[CheckpointManager]", "/good/tree.json' exists and is not a directory"}));
  rows.push_back(
      row<jx::IOError>("CheckpointManager: a missing directory without create",
                       [root] { ocp::CheckpointManager(root + "/m3", {.create = false}); },
                       {"[CheckpointManager]", "/m3' does not exist", "{.create = true}"}));
  rows.push_back(row<jx::ValueError>("CheckpointManager.save: a negative step",
                                     [run] { ocp::CheckpointManager(run).save(-1, state()); },
                                     {"[CheckpointManager.save]", "non-negative", "not -1"}));
  rows.push_back(row<jx::ValueError>(
      "CheckpointManager.save: a step that exists",
      [run] { ocp::CheckpointManager(run).save(1, state(), std::nullopt, /*force=*/true); },
      {"[CheckpointManager.save]", "step 1 already exists", "/run'"}));
  rows.push_back(row<jx::ValueError>("CheckpointManager.save_items: no items",
                                     [run] { ocp::CheckpointManager(run).save_items(5, {}); },
                                     {"[CheckpointManager.save]", "nothing to save"}));
  rows.push_back(row<jx::ValueError>(
      "CheckpointManager.save_items: an item name twice",
      [run] {
        ocp::CheckpointManager(run).save_items(6, {{"a", state()}, {"a", state()}});
      },
      {"[CheckpointManager.save]", "'a' appears twice"}));
  rows.push_back(
      row<jx::ValueError>("CheckpointManager.save_items: an item name with '/'",
                          [run] {
                            ocp::CheckpointManager(run).save_items(7, {{"a/b", state()}});
                          },
                          {"[CheckpointManager.save]", "'a/b' cannot name", "without '/'"}));
  rows.push_back(row<jx::ValueError>(
      "CheckpointManager.restore: a step that does not exist",
      [run] { ocp::CheckpointManager(run).restore(3); },
      {"[CheckpointManager.restore]", "step 3 does not exist", "the steps are (1,)"}));
  rows.push_back(row<jx::ValueError>("CheckpointManager.restore: an empty directory",
                                     [root] { ocp::CheckpointManager(root + "/m4").restore(); },
                                     {"[CheckpointManager.restore]", "/m4' holds no checkpoint"}));
  rows.push_back(row<jx::ValueError>(
      "CheckpointManager.restore: a target of another shape",
      [run] {
        ocp::CheckpointManager(run).restore(
            1, Tree{{"params", Tree{{"w", jnp::ones({3})}, {"b", jnp::zeros({5})}}}, {"epoch", 0}});
      },
      {"[checkpoint.restore]", "/run/1/default'", "['params']['b']", "holds f32[2]",
       "expects f32[5]"}));
  rows.push_back(
      row<jx::ValueError>("CheckpointManager.restore_item: an unknown item",
                          [run] { ocp::CheckpointManager(run).restore_item(1, "opt_state"); },
                          {"[CheckpointManager.restore]", "/run/1' has no item 'opt_state'",
                           "its items are 'default'"}));
  rows.push_back(row<jx::ValueError>(
      "CheckpointManager.delete_step: a step that does not exist",
      [run] { ocp::CheckpointManager(run).delete_step(9); },
      {"[CheckpointManager.delete_step]", "step 9 does not exist", "the steps are (1,)"}));
  return rows;
}

TEST(CheckpointErrors, EveryBadCallThrowsATypedErrorNamingTheOperation) {
  jx::testing::TempDir dir("jx_ckpt_errors");
  ocp::save(dir / "good", state());
  {
    ocp::CheckpointManager m(dir / "run", {.enable_async_checkpointing = false});
    m.save(1, state());
  }
  const std::vector<ErrorRow> rows = checkpoint_rows(dir.path());
  EXPECT_GE(rows.size(), 20u);
  run_rows(rows);
}

}  // namespace
