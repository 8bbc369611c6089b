// Atomicity under SIGKILL: a child process saves checkpoints in a loop (a manager with
// max_to_keep, and a standalone checkpoint replaced with force) and is killed at random
// moments, dozens of times. After every kill, each visible step restores with exactly the
// values saved for it, the latest step never goes back, and the standalone checkpoint is
// whole; torn temporary directories are never steps and are cleaned up.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <random>
#include <thread>

#include "checkpoint/files.h"
#include "checkpoint_testing.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace ocp = jx::ckpt;
using ckpt_testing::expect_identical;
using ckpt_testing::pattern;
using ckpt_testing::TempDir;
using jx::DType;
using jx::Tree;

// About 2 MB per checkpoint, so that a save spends milliseconds writing and syncing.
Tree state_at(int64_t step) {
  return Tree{{"w", pattern(DType::Float32, {512, 1024}, step)},
              {"b", pattern(DType::BFloat16, {1000}, step)},
              {"step", Tree::static_value(jx::tree::StaticValue::integer(step))}};
}

void expect_state(const Tree& t, int64_t step) {
  expect_identical(t["w"].array(), pattern(DType::Float32, {512, 1024}, step), "w");
  expect_identical(t["b"].array(), pattern(DType::BFloat16, {1000}, step), "b");
  EXPECT_EQ(t["step"].static_value().as_int(), step);
}

// Whether `dir` holds a committed step (a directory named by its number), read without a
// manager: opening one would clean up the running child's temporaries.
bool has_committed_step(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) return true;
  }
  return false;
}

// The child: runs only when started by the test below (JX_CKPT_KILL_DIR set).
TEST(CheckpointKill, ChildWriter) {
  const char* dir = std::getenv("JX_CKPT_KILL_DIR");
  if (!dir) GTEST_SKIP() << "runs only as the child process of CheckpointKill.SaveKilledAtRandomMoments";
  ocp::CheckpointManager m(dir, {.max_to_keep = 2});
  int64_t step = m.latest_step().value_or(-1) + 1;
  std::cout << "ready" << std::endl;
  for (;; ++step) {
    m.save(step, state_at(step));
    ocp::save(std::string(dir) + "/../single", state_at(step), {.force = true});
  }
}

TEST(CheckpointKill, SaveKilledAtRandomMoments) {
  TempDir root;
  std::string dir = root / "run";
  std::string single = root / "single";
  fs::create_directory(dir);
  std::string env_dir = "JX_CKPT_KILL_DIR=" + dir;
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  envp.push_back(env_dir.data());
  envp.push_back(nullptr);
  std::string exe = fs::read_symlink("/proc/self/exe");
  std::string filter = "--gtest_filter=CheckpointKill.ChildWriter";
  std::vector<char*> argv{exe.data(), filter.data(), nullptr};

  std::mt19937 rng(1234);
  // A sanitized build (scripts/sanitize) starts and saves several times slower: without a
  // longer window no save would commit before the kill.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  std::uniform_int_distribution<int> delay_us(0, 400000);
#else
  std::uniform_int_distribution<int> delay_us(0, 40000);
#endif
  const int trials = 30;
  int torn_seen = 0;
  std::optional<int64_t> latest_before;
  for (int trial = 0; trial < trials; ++trial) {
    int out[2];
    ASSERT_EQ(pipe(out), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    pid_t pid;
    ASSERT_EQ(posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    std::string seen;
    char c;
    while (seen.find("ready\n") == std::string::npos && read(out[0], &c, 1) == 1) seen.push_back(c);
    ASSERT_NE(seen.find("ready\n"), std::string::npos) << "the child did not start: " << seen;
    // Until a step has committed, the random moment counts from the first commit: with the
    // disk busy (tests beside this one compiling and syncing) a save can outlast the whole
    // window, and then no kill would ever leave a checkpoint behind to check.
    if (!latest_before)
      for (int i = 0; i < 20000 && !has_committed_step(dir); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    close(out[0]);
    ASSERT_TRUE(WIFSIGNALED(status)) << "trial " << trial << ": the child ended on its own";

    for (const auto& e : fs::directory_iterator(dir))
      if (jx::ckpt::detail::is_temporary_name(e.path().filename())) ++torn_seen;
    ocp::CheckpointManager m(dir);  // cleans up what the killed save left
    for (const auto& e : fs::directory_iterator(dir))
      EXPECT_FALSE(jx::ckpt::detail::is_temporary_name(e.path().filename())) << e.path();
    std::vector<int64_t> steps = m.all_steps();
    if (latest_before) {
      ASSERT_FALSE(steps.empty()) << "trial " << trial << ": the previous checkpoint is gone";
      EXPECT_GE(*m.latest_step(), *latest_before) << "trial " << trial;
    }
    for (int64_t s : steps) expect_state(m.restore(s), s);
    if (!steps.empty()) latest_before = m.latest_step();
    if (fs::exists(single)) {
      Tree t = ocp::restore(single);
      expect_state(t, t["step"].static_value().as_int());
    }
    if (HasFailure()) break;
  }
  ASSERT_TRUE(latest_before.has_value()) << "no checkpoint was ever committed";
  // The kills must have landed inside saves, or this test proves nothing.
  EXPECT_GE(torn_seen, 3) << "of " << trials << " kills";
  std::cout << trials << " kills, " << torn_seen << " inside a save, last step " << *latest_before
            << "\n";
}

}  // namespace
