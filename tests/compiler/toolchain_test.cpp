// The system-compiler toolchain: the disk cache (a second build of the same source runs
// no compiler, also in another process), concurrent builds of one library from two
// threads and two processes, and the fallback to interpretation when the compiler is
// missing or fails.
#include "compiler/toolchain.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "compiler/jit_testing.h"

namespace {

using namespace jx;
using namespace jx::testing;
using compiler::build_shared_library;
using compiler::toolchain_stats;
using ops::Arrays;

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    if (old) old_ = old;
    had_ = old != nullptr;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

std::string fresh_dir() {
  char tmpl[] = "/tmp/jx_toolchain_test_XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  EXPECT_NE(d, nullptr);
  return d ? d : "/tmp";
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A source with a per-test marker, so that no other test's cache entry answers it.
std::string tiny_source(int value) {
  return str("extern \"C\" int jx_answer() { return ", value, "; }\n");
}

int call_answer(const compiler::BuildResult& r) {
  if (!r.library) return -1;
  auto fn = reinterpret_cast<int (*)()>(r.library->symbol("jx_answer"));
  return fn ? fn() : -1;
}

// First in the file: fork() is safest before this process has started any threads.
TEST(Toolchain, TwoProcessesBuildTheSameLibraryAtOnce) {
  ScopedEnv cache("JX_CACHE_DIR", fresh_dir());
  const std::string src = tiny_source(4242);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    compiler::BuildResult r = build_shared_library(src, "fork_child");
    ::_exit(call_answer(r) == 4242 ? 0 : 1);
  }
  compiler::BuildResult r = build_shared_library(src, "fork_parent");
  EXPECT_EQ(call_answer(r), 4242) << r.error;
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // One library and its source; no temporaries left behind by either process.
  std::vector<std::string> files = list_dir(std::getenv("JX_CACHE_DIR"));
  int so = 0, tmp = 0;
  for (const std::string& f : files) {
    so += f.size() > 3 && f.compare(f.size() - 3, 3, ".so") == 0;
    tmp += f.find(".tmp") != std::string::npos;
  }
  EXPECT_EQ(so, 1) << files.size() << " files";
  EXPECT_EQ(tmp, 0);

  // A third process finds it in the cache and runs no compiler.
  pid_t again = ::fork();
  ASSERT_GE(again, 0);
  if (again == 0) {
    // The counters were copied by fork(): compare before and after.
    const uint64_t runs = toolchain_stats().compiler_runs;
    compiler::BuildResult r2 = build_shared_library(src, "fork_again");
    bool ok = call_answer(r2) == 4242 && toolchain_stats().compiler_runs == runs;
    ::_exit(ok ? 0 : 1);
  }
  ASSERT_EQ(::waitpid(again, &status, 0), again);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(Toolchain, SecondCompileLoadsFromDiskCache) {
  ScopedEnv cache("JX_CACHE_DIR", fresh_dir());
  ir::Jaxpr j = trace_closed([](const Arrays& a) -> Arrays { return {lax::exp(lax::neg(a[0]))}; },
                             {aval(DType::Float32, {9})});
  const auto before = toolchain_stats();
  auto e1 = compiler::compile(j, {.name = "cache_test", .donate = {}});
  const auto mid = toolchain_stats();
  EXPECT_EQ(mid.compiler_runs, before.compiler_runs + 1);
  auto e2 = compiler::compile(j, {.name = "cache_test", .donate = {}});
  const auto after = toolchain_stats();
  EXPECT_EQ(after.compiler_runs, mid.compiler_runs);
  EXPECT_EQ(after.cache_hits, mid.cache_hits + 1);
  Arrays x = {input(DType::Float32, {9}, 1)};
  EXPECT_TRUE(close_values(e2->run(x), ir::eval_jaxpr(j, x), 4));
}

TEST(Toolchain, TwoThreadsBuildTheSameLibraryOnce) {
  ScopedEnv cache("JX_CACHE_DIR", fresh_dir());
  const std::string src = tiny_source(777);
  const auto before = toolchain_stats();
  compiler::BuildResult r1, r2;
  std::thread t1([&] { r1 = build_shared_library(src, "thread1"); });
  std::thread t2([&] { r2 = build_shared_library(src, "thread2"); });
  t1.join();
  t2.join();
  EXPECT_EQ(call_answer(r1), 777) << r1.error;
  EXPECT_EQ(call_answer(r2), 777) << r2.error;
  EXPECT_EQ(toolchain_stats().compiler_runs, before.compiler_runs + 1);
}

TEST(Toolchain, DumpDirGetsTheGeneratedSource) {
  ScopedEnv cache("JX_CACHE_DIR", fresh_dir());
  const std::string dump = fresh_dir();
  ScopedEnv d("JX_DUMP_DIR", dump);
  ir::Jaxpr j = trace_closed([](const Arrays& a) -> Arrays { return {lax::tanh(a[0])}; },
                             {aval(DType::Float32, {3})});
  compiler::compile(j, {.name = "dumped", .donate = {}});
  std::vector<std::string> files = list_dir(dump);
  bool found = false;
  for (const std::string& f : files) found |= f.rfind("dumped.", 0) == 0 && f.find(".cpp") != std::string::npos;
  EXPECT_TRUE(found);
}

// The fallback message is printed once per process: these two tests run in order, and
// the first is the first fallback of this binary.
TEST(Toolchain, MissingCompilerFallsBackWithOneMessage) {
  ScopedEnv cache("JX_CACHE_DIR", fresh_dir());
  ScopedEnv cxx("JX_CXX", "/nonexistent/c++");
  ir::Jaxpr j1 = trace_closed([](const Arrays& a) -> Arrays { return {lax::add(lax::exp(a[0]), a[0])}; },
                              {aval(DType::Float32, {5})});
  ir::Jaxpr j2 = trace_closed([](const Arrays& a) -> Arrays { return {lax::reduce_sum(lax::mul(a[0], a[0]), {0})}; },
                              {aval(DType::Float64, {6})});
  const auto before = toolchain_stats();
  ::testing::internal::CaptureStderr();
  auto e1 = compiler::compile(j1, {.name = "nocc1", .donate = {}});
  auto e2 = compiler::compile(j2, {.name = "nocc2", .donate = {}});
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(toolchain_stats().compiler_runs, before.compiler_runs);
  size_t first = err.find("jx: jit runs the optimized jaxpr op by op");
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find("jx: jit", first + 1), std::string::npos) << err;
  EXPECT_NE(err.find("/nonexistent/c++"), std::string::npos) << err;
  EXPECT_EQ(e1->describe().rfind("interpreted", 0), 0u) << e1->describe();
  Arrays x1 = {input(DType::Float32, {5}, 2)}, x2 = {input(DType::Float64, {6}, 3)};
  EXPECT_TRUE(close_values(e1->run(x1), ir::eval_jaxpr(j1, x1), 0));
  EXPECT_TRUE(close_values(e2->run(x2), ir::eval_jaxpr(j2, x2), 0));
}

TEST(Toolchain, FailingCompileFallsBackSilentlyAfterTheFirstMessage) {
  ScopedEnv cache("JX_CACHE_DIR", fresh_dir());
  ScopedEnv flags("JX_CXXFLAGS", "-O2 --no-such-flag-for-jx -shared -fPIC");
  ir::Jaxpr j = trace_closed([](const Arrays& a) -> Arrays { return {lax::sin(a[0])}; },
                             {aval(DType::Float32, {4})});
  // ctest runs each test in its own process: make the first failure here (its message may
  // or may not have been printed by an earlier test), then the second must be silent.
  ::testing::internal::CaptureStderr();
  compiler::compile(j, {.name = "badflags_first", .donate = {}});
  ::testing::internal::GetCapturedStderr();
  ir::Jaxpr j2 = trace_closed([](const Arrays& a) -> Arrays { return {lax::cos(a[0])}; },
                              {aval(DType::Float32, {4})});
  const auto before = toolchain_stats();
  ::testing::internal::CaptureStderr();
  auto e = compiler::compile(j2, {.name = "badflags", .donate = {}});
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "");  // said once already
  EXPECT_EQ(toolchain_stats().failures, before.failures + 1);
  EXPECT_EQ(e->describe().rfind("interpreted", 0), 0u);
  Arrays x = {input(DType::Float32, {4}, 4)};
  EXPECT_TRUE(close_values(e->run(x), ir::eval_jaxpr(j2, x), 0));
}

TEST(Toolchain, CacheKeyDependsOnSourceFlagsAndCompiler) {
  using compiler::cache_key;
  const std::string k = cache_key("a", "-O3", "g++ 12");
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(k, cache_key("a", "-O3", "g++ 12"));
  EXPECT_NE(k, cache_key("b", "-O3", "g++ 12"));
  EXPECT_NE(k, cache_key("a", "-O2", "g++ 12"));
  EXPECT_NE(k, cache_key("a", "-O3", "g++ 13"));
}

}  // namespace
