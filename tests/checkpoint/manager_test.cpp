// CheckpointManager: Orbax's save policy (interval, save_on_steps, should_save_fn), retention
// (max_to_keep, keep_period, best_fn/best_mode, keep_checkpoints_without_metrics) checked
// against hand-derived expectations; async saves that snapshot their arrays; errors from the
// background writer; leftovers of a crashed save; items, step names, reload, delete.
#include <fstream>

#include "checkpoint_testing.h"

namespace {

namespace fs = std::filesystem;
namespace ocp = jx::ckpt;
namespace jnp = jx::numpy;
using ckpt_testing::expect_error;
using ckpt_testing::expect_identical;
using ckpt_testing::pattern;
using ckpt_testing::TempDir;
using jx::Array;
using jx::DType;
using jx::Tree;

Tree state_at(int64_t step) {
  return Tree{{"w", pattern(DType::Float32, {3, 4}, step)}, {"count", jnp::array(int32_t(step))}};
}

void expect_state(const Tree& t, int64_t step) {
  expect_identical(t["w"].array(), pattern(DType::Float32, {3, 4}, step));
  EXPECT_EQ(t["count"].array().item<int32_t>(), step);
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> r;
  for (const auto& e : fs::directory_iterator(dir)) r.push_back(e.path().filename());
  std::sort(r.begin(), r.end());
  return r;
}

using Steps = std::vector<int64_t>;

TEST(CheckpointManager, SaveRestoreLatestAndSavePolicy) {
  TempDir dir;
  ocp::CheckpointManager m(dir / "run", {.save_interval_steps = 3, .save_on_steps = {4}});
  EXPECT_EQ(m.latest_step(), std::nullopt);
  EXPECT_TRUE(m.should_save(1));  // nothing saved yet: any step
  Steps saved;
  for (int64_t s = 1; s <= 10; ++s)
    if (m.save(s, state_at(s))) saved.push_back(s);
  m.wait_until_finished();
  EXPECT_EQ(saved, (Steps{1, 3, 4, 6, 9}));
  EXPECT_EQ(m.all_steps(), saved);
  EXPECT_EQ(m.latest_step(), 9);
  EXPECT_FALSE(m.should_save(9));  // not after the latest
  EXPECT_FALSE(m.should_save(8));
  expect_state(m.restore(), 9);
  expect_state(m.restore(4), 4);
  Tree typed = m.restore(6, state_at(0));
  expect_state(typed, 6);
  EXPECT_TRUE(m.save(10, state_at(10), std::nullopt, /*force=*/true));
  m.wait_until_finished();
  EXPECT_EQ(entries(dir / "run"), (std::vector<std::string>{"1", "10", "3", "4", "6", "9"}));
  expect_error<jx::ValueError>([&] { m.restore(5); }, {"step 5 does not exist", "(1, 3, 4, 6, 9, 10)"});
}

TEST(CheckpointManager, ShouldSaveFnReplacesTheInterval) {
  TempDir dir;
  std::vector<std::pair<int64_t, std::optional<int64_t>>> calls;
  ocp::CheckpointManager m(dir.path(), {.save_interval_steps = 100,
                                        .should_save_fn = [&](int64_t s, std::optional<int64_t> last) {
                                          calls.emplace_back(s, last);
                                          return s % 2 == 0;
                                        },
                                        .enable_async_checkpointing = false});
  for (int64_t s = 1; s <= 5; ++s) m.save(s, state_at(s));
  EXPECT_EQ(m.all_steps(), (Steps{2, 4}));
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(calls[2], (std::pair<int64_t, std::optional<int64_t>>{3, 2}));
}

TEST(CheckpointManager, MaxToKeepAndKeepPeriod) {
  TempDir dir;
  {
    ocp::CheckpointManager m(dir / "a", {.max_to_keep = 2});
    for (int64_t s = 0; s < 6; ++s) m.save(s, state_at(s));
    m.wait_until_finished();
    EXPECT_EQ(m.all_steps(), (Steps{4, 5}));
    EXPECT_EQ(entries(dir / "a"), (std::vector<std::string>{"4", "5"}));
  }
  {
    // Orbax: steps with step % keep_period == 0 survive besides the max_to_keep latest.
    ocp::CheckpointManager m(dir / "b", {.max_to_keep = 2, .keep_period = 4});
    for (int64_t s = 1; s <= 10; ++s) m.save(s, state_at(s));
    m.wait_until_finished();
    EXPECT_EQ(m.all_steps(), (Steps{4, 8, 9, 10}));
    ocp::CheckpointManager again(dir / "b");
    EXPECT_EQ(again.all_steps(), (Steps{4, 8, 9, 10}));
    expect_state(again.restore(8), 8);
  }
}

TEST(CheckpointManager, BestByMetric) {
  TempDir dir;
  // loss by step: 1:0.9 2:0.5 3:0.7 4:0.2 5:0.6 6:0.3
  const std::map<int64_t, double> loss = {{1, 0.9}, {2, 0.5}, {3, 0.7}, {4, 0.2}, {5, 0.6}, {6, 0.3}};
  auto run = [&](const std::string& name, ocp::ManagerOptions o, bool skip_metrics_at_3) {
    ocp::CheckpointManager m(dir / name, o);
    for (auto [s, l] : loss) {
      std::optional<ocp::Metrics> metrics = ocp::Metrics{{"loss", l}, {"accuracy", 1 - l}};
      if (skip_metrics_at_3 && s == 3) metrics.reset();
      m.save(s, state_at(s), metrics);
    }
    m.wait_until_finished();
    return std::make_pair(m.all_steps(), m.best_step());
  };
  auto by_loss = [](const ocp::Metrics& m) { return m.at("loss"); };
  auto [kept_min, best_min] =
      run("min", {.max_to_keep = 2, .best_fn = by_loss, .best_mode = ocp::BestMode::min}, false);
  EXPECT_EQ(kept_min, (Steps{4, 6}));
  EXPECT_EQ(best_min, 4);
  auto [kept_max, best_max] = run("max", {.max_to_keep = 3, .best_fn = by_loss}, false);
  EXPECT_EQ(kept_max, (Steps{1, 3, 5}));  // the highest losses, as asked
  EXPECT_EQ(best_max, 1);
  // A step saved without metrics is kept (keep_checkpoints_without_metrics)...
  auto [kept_nm, best_nm] =
      run("nm", {.max_to_keep = 2, .best_fn = by_loss, .best_mode = ocp::BestMode::min}, true);
  EXPECT_EQ(kept_nm, (Steps{3, 4, 6}));
  EXPECT_EQ(best_nm, 4);
  // ...unless told otherwise: then it ranks below every step with metrics.
  auto [kept_drop, best_drop] = run("drop",
                                    {.max_to_keep = 2, .best_fn = by_loss,
                                     .best_mode = ocp::BestMode::min,
                                     .keep_checkpoints_without_metrics = false},
                                    true);
  EXPECT_EQ(kept_drop, (Steps{4, 6}));
  // Metrics persist and rank after a reopen.
  ocp::CheckpointManager reopened(dir / "min", {.best_fn = by_loss, .best_mode = ocp::BestMode::min});
  EXPECT_EQ(reopened.best_step(), 4);
  ASSERT_TRUE(reopened.metrics(6).has_value());
  EXPECT_EQ(reopened.metrics(6)->at("loss"), 0.3);
}

// The async save copies the arrays: a donated buffer reused by the next jitted step does
// not change what is written.
TEST(CheckpointManager, AsyncSaveSnapshotsDonatedArrays) {
  TempDir dir;
  ocp::CheckpointManager m(dir.path(), {.max_to_keep = 4});
  auto step = jx::jit([](const Array& w) { return w * 2.0f + 1.0f; }, {.donate_argnums = {0}});
  Array w = pattern(DType::Float32, {256, 256}, 1);
  for (int64_t s = 0; s < 4; ++s) {
    m.save(s, Tree{{"w", w}});
    w = step(w);  // the saved array's buffer may now hold the next values
  }
  m.wait_until_finished();
  EXPECT_FALSE(m.is_saving_in_progress());
  Array want = pattern(DType::Float32, {256, 256}, 1);
  expect_identical(m.restore(0)["w"].array(), want);
  for (int64_t s = 1; s < 4; ++s) {
    want = want * 2.0f + 1.0f;
    expect_identical(m.restore(s)["w"].array(), want);
  }
}

TEST(CheckpointManager, BackgroundErrorsSurfaceAtTheNextCall) {
  TempDir dir;
  ocp::CheckpointManager m(dir.path());
  m.save(1, state_at(1));
  m.wait_until_finished();
  // A file where step 2's directory must go makes the commit fail in the background.
  std::ofstream(dir / "2") << "x";
  EXPECT_TRUE(m.save(2, state_at(2)));
  expect_error<jx::IOError>([&] { m.wait_until_finished(); }, {"'" + (dir / "2") + "'"});
  EXPECT_EQ(m.all_steps(), (Steps{1}));  // the failed step is forgotten
  for (const std::string& e : entries(dir.path())) EXPECT_EQ(e.find(".jx-tmp-"), std::string::npos) << e;
  fs::remove_all(dir / "2");
  EXPECT_TRUE(m.save(2, state_at(2)));
  m.wait_until_finished();
  EXPECT_EQ(m.all_steps(), (Steps{1, 2}));
  // The same failure reported by the next save instead of wait_until_finished.
  std::ofstream(dir / "3") << "x";
  m.save(3, state_at(3));
  expect_error<jx::IOError>([&] { m.save(4, state_at(4)); }, {"'" + (dir / "3") + "'"});
  expect_error<jx::ValueError>([&] {
    ocp::CheckpointManager s(dir / "sync", {.enable_async_checkpointing = false});
    s.save(1, state_at(1));
    s.save(1, state_at(1), std::nullopt, true);
  }, {"step 1 already exists"});
}

TEST(CheckpointManager, CrashLeftoversAreIgnoredAndCleanedUp) {
  TempDir dir;
  {
    ocp::CheckpointManager m(dir.path());
    m.save(1, state_at(1));
  }
  // What a save killed mid-write leaves: a temporary directory, torn.
  fs::create_directories(dir / "2.jx-tmp-123-456/default");
  std::ofstream(dir / "2.jx-tmp-123-456/default/arrays.safetensors") << "torn";
  fs::create_directories(dir / "1.jx-deleting-9-9");
  ocp::CheckpointManager m(dir.path());
  EXPECT_EQ(m.all_steps(), (Steps{1}));
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"1"}));
  // With cleanup off (Orbax's default) the leftovers stay, and are still never steps.
  fs::create_directories(dir / "2.jx-tmp-123-456");
  ocp::CheckpointManager keep(dir.path(), {.cleanup_tmp_directories = false});
  EXPECT_EQ(keep.all_steps(), (Steps{1}));
  EXPECT_TRUE(fs::exists(dir / "2.jx-tmp-123-456"));
}

TEST(CheckpointManager, ItemsStepNamesReloadDeleteReadOnly) {
  TempDir dir;
  ocp::ManagerOptions o{.step_prefix = "ckpt", .step_format_fixed_length = 6};
  ocp::CheckpointManager m(dir.path(), o);
  m.save_items(10, {{"state", state_at(10)}, {"dataset", Tree{{"position", jnp::array(int64_t(77))}}}});
  m.wait_until_finished();
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"ckpt_000010"});
  EXPECT_EQ(entries(dir / "ckpt_000010"),
            (std::vector<std::string>{"_CHECKPOINT_METADATA", "dataset", "state"}));
  EXPECT_EQ(m.item_names(10), (std::vector<std::string>{"state", "dataset"}));
  expect_state(m.restore_item(10, "state"), 10);
  EXPECT_EQ(m.restore_item(std::nullopt, "dataset")["position"].array().item<int64_t>(), 77);
  expect_error<jx::ValueError>([&] { m.save_items(11, {{"a/b", state_at(1)}}); }, {"'a/b' cannot name"});

  ocp::CheckpointManager other(dir.path(), o);
  other.save(20, state_at(20));
  other.wait_until_finished();
  EXPECT_EQ(m.all_steps(), (Steps{10}));
  m.reload();
  EXPECT_EQ(m.all_steps(), (Steps{10, 20}));
  m.delete_step(10);
  EXPECT_EQ(m.all_steps(), (Steps{20}));
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"ckpt_000020"});
  expect_error<jx::ValueError>([&] { m.delete_step(10); }, {"step 10 does not exist", "(20,)"});

  ocp::CheckpointManager ro(dir.path(), {.step_prefix = "ckpt", .step_format_fixed_length = 6,
                                         .read_only = true});
  EXPECT_FALSE(ro.save(30, state_at(30)));
  ro.delete_step(20);
  EXPECT_EQ(ro.all_steps(), (Steps{20}));
  expect_state(ro.restore(), 20);
  expect_error<jx::IOError>([&] { ocp::CheckpointManager(dir / "absent", {.create = false}); },
                            {"does not exist"});
  expect_error<jx::ValueError>([&] { ocp::CheckpointManager(dir.path(), {.max_to_keep = -1}); },
                               {"max_to_keep must be unset or non-negative"});
}

}  // namespace
