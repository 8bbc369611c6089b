// System-compiler toolchain: locate the compiler, hash, compile into the disk cache with
// an atomic rename, dlopen.
#include "compiler/toolchain.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "support/profiler.h"
#include "support/str.h"

extern char** environ;

namespace jx::compiler {
namespace {

std::atomic<uint64_t> g_compiler_runs{0}, g_cache_hits{0}, g_failures{0};

std::string env_or(const char* var, const std::string& fallback) {
  const char* v = std::getenv(var);
  return v && *v ? std::string(v) : fallback;
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// `c++` -> /usr/bin/c++ by PATH; a name with a slash is taken as a path.
std::string resolve_program(const std::string& name) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return is_executable_file(name) ? name : std::string();
  std::string path = env_or("PATH", "/usr/local/bin:/usr/bin:/bin");
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string cand = str(end > start ? path.substr(start, end - start) : std::string("."), "/", name);
    if (is_executable_file(cand)) return cand;
    start = end + 1;
  }
  return {};
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  for (std::string w; is >> w;) out.push_back(w);
  return out;
}

// Starts argv[0] with stdout and stderr redirected to files (empty path: /dev/null; the
// same path for both: one log); returns its pid, or -1 when it could not be started.
pid_t start_process(const std::vector<std::string>& argv, const std::string& out_path,
                    const std::string& err_path) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const std::string out = out_path.empty() ? "/dev/null" : out_path;
  const std::string err = err_path.empty() ? "/dev/null" : err_path;
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (err == out && !out_path.empty())
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  else
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

// Its exit status, or -1 when it did not start or exit normally.
int wait_process(pid_t pid) {
  if (pid < 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int run_process(const std::vector<std::string>& argv, const std::string& out_path,
                const std::string& err_path) {
  return wait_process(start_process(argv, out_path, err_path));
}

// Splits a generated source at its part markers (codegen.h) into translation units for
// `jobs` parallel compiler runs: each unit is the text before the first marker (the
// prelude) followed by whole parts, balanced by size. Small sources stay one unit: a unit
// costs a parse of the prelude and the link a little more.
std::vector<std::string> translation_units(const std::string& source, int jobs) {
  const std::string marker = std::string("\n") + kPartMarker + "\n";
  size_t first = source.find(marker);
  if (jobs < 2 || first == std::string::npos || source.size() < 24000) return {source};
  std::string head = source.substr(0, first + 1);
  std::vector<std::string> parts;
  for (size_t at = first; at != std::string::npos;) {
    size_t next = source.find(marker, at + marker.size());
    parts.push_back(source.substr(at + 1, next == std::string::npos ? std::string::npos : next + 1 - (at + 1)));
    at = next;
  }
  int n = std::min<int>(jobs, int(parts.size()));
  if (n < 2) return {source};
  // Greedy by size, largest first, into the lightest unit; parts keep their order inside it.
  std::vector<size_t> order(parts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return parts[a].size() > parts[b].size(); });
  std::vector<std::vector<size_t>> units(static_cast<size_t>(n));
  std::vector<size_t> load(static_cast<size_t>(n), 0);
  for (size_t i : order) {
    size_t u = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    units[u].push_back(i);
    load[u] += parts[i].size();
  }
  std::vector<std::string> out;
  for (auto& u : units) {
    std::sort(u.begin(), u.end());
    std::string tu = head;
    for (size_t i : u) tu += parts[i];
    out.push_back(std::move(tu));
  }
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  return bool(f);
}

bool make_dirs(const std::string& dir) {
  if (dir.empty()) return false;
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos == dir.size() || dir[pos] == '/') {
      std::string part = dir.substr(0, pos);
      if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
  }
  struct stat st {};
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The compiler's `--version` first line, cached per compiler path: part of the cache key,
// so an upgraded compiler rebuilds every kernel.
std::string compiler_version(const std::string& cxx, const std::string& scratch_dir) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(cxx);
  if (it != cache.end()) return it->second;
  std::string out = scratch_dir + "/version." + std::to_string(::getpid()) + ".txt";
  std::string v;
  if (run_process({cxx, "--version"}, out, "") == 0) {
    v = read_file(out);
    v = v.substr(0, v.find('\n'));
  }
  std::remove(out.c_str());
  if (v.empty()) v = "unknown " + cxx;
  cache.emplace(cxx, v);
  return v;
}

// One mutex per cache key, so threads building the same library wait for each other
// (and then hit the cache) while different libraries build in parallel.
std::shared_ptr<std::mutex> key_mutex(const std::string& key) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<std::mutex>> locks;
  std::lock_guard<std::mutex> lock(mu);
  auto& m = locks[key];
  if (!m) m = std::make_shared<std::mutex>();
  return m;
}

std::shared_ptr<SharedLibrary> load(const std::string& path, std::string* error) {
  JX_PROFILE_SCOPE("jit", [&](std::string& n, prof::Args& a) { n = "load", a.add("library", path); });
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    *error = str("dlopen ", path, " failed: ", e ? e : "unknown error");
    return nullptr;
  }
  return std::make_shared<SharedLibrary>(h, path);
}

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

SharedLibrary::~SharedLibrary() {
  if (handle_) ::dlclose(handle_);
}

void* SharedLibrary::symbol(const std::string& name) const { return ::dlsym(handle_, name.c_str()); }

ToolchainConfig toolchain_config() {
  ToolchainConfig c;
  c.cxx_asked = env_or("JX_CXX", "c++");
  c.cxx = resolve_program(c.cxx_asked);
  // JX_JIT_MARCH is the -march jx itself was built with (CMake's JX_MARCH): generated code
  // must call the same libm vector variants as the eager kernels. -fno-trapping-math lets
  // GCC if-convert a fused loop's selects and NaN checks without AVX-512 masks; a loop it
  // cannot vectorize would call scalar libm and differ from eager in the last bit. It
  // changes no value (FP exceptions are never unmasked or read).
  c.flags = env_or("JX_CXXFLAGS", std::string("-O3 ") + JX_JIT_MARCH +
                                      " -fopenmp -fPIC -shared -ffp-contract=off -fno-math-errno"
                                      " -fno-trapping-math");
  const char* home = std::getenv("HOME");
  c.cache_dir = env_or("JX_CACHE_DIR", std::string(home && *home ? home : "/tmp") + "/.cache/jx");
  c.dump_dir = env_or("JX_DUMP_DIR", "");
  return c;
}

ToolchainStats toolchain_stats() {
  return {g_compiler_runs.load(), g_cache_hits.load(), g_failures.load()};
}

std::string cache_key(const std::string& source, const std::string& flags,
                      const std::string& compiler_version) {
  // Two FNV-1a streams with different offsets: 128 bits, so a collision is not a concern
  // for a cache of a few thousand files.
  std::string all = compiler_version + '\0' + flags + '\0' + source;
  uint64_t a = fnv1a(all, 0xcbf29ce484222325ULL);
  uint64_t b = fnv1a(all, 0x84222325cbf29ce4ULL ^ 0x9e3779b97f4a7c15ULL);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return buf;
}

void report_fallback_once(const std::string& why) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::cerr << "jx: jit runs the optimized jaxpr op by op (no compiled kernels): " << why
              << std::endl;
  });
}

BuildResult build_shared_library(const std::string& source, const std::string& name) {
  BuildResult r;
  ToolchainConfig cfg = toolchain_config();
  auto fail = [&](std::string why) {
    g_failures.fetch_add(1);
    r.error = std::move(why);
    return r;
  };
  if (cfg.cxx.empty())
    return fail(str("no C++ compiler: JX_CXX names '", cfg.cxx_asked,
                    "', which is not an executable file here (set JX_CXX to a compiler such as "
                    "/usr/bin/g++)"));
  if (!make_dirs(cfg.cache_dir))
    return fail(str("cannot create the kernel cache directory '", cfg.cache_dir,
                    "' (set JX_CACHE_DIR to a writable directory)"));
  const std::string version = compiler_version(cfg.cxx, cfg.cache_dir);
  const std::string key = cache_key(source, cfg.flags, version);
  const std::string base = cfg.cache_dir + "/jx_" + key;
  const std::string so_path = base + ".so";

  if (!cfg.dump_dir.empty() && make_dirs(cfg.dump_dir))
    write_file(cfg.dump_dir + "/" + name + "." + key.substr(0, 12) + ".cpp", source);

  std::shared_ptr<std::mutex> m = key_mutex(key);
  std::lock_guard<std::mutex> lock(*m);
  std::string err;
  if (::access(so_path.c_str(), R_OK) == 0) {
    if (auto lib = load(so_path, &err)) {
      g_cache_hits.fetch_add(1);
      r.library = std::move(lib);
      return r;
    }
    // An unloadable cached file (another machine's, say): rebuild it below.
  }

  // Unique temporaries in the cache directory itself, so that rename() is atomic.
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = str(base, ".tmp", ::getpid(), "_", counter.fetch_add(1));
  const std::string src_path = tmp + ".cpp", tmp_so = tmp + ".so", log_path = tmp + ".log";
  if (!write_file(src_path, source))
    return fail(str("cannot write '", src_path, "' (is JX_CACHE_DIR writable?)"));
  std::vector<std::string> flags = split_words(cfg.flags);
  auto failed = [&](int rc, const std::string& log_file, const std::vector<std::string>& temps) {
    std::string log = read_file(log_file);
    for (const std::string& t : temps) std::remove(t.c_str());
    std::remove(tmp_so.c_str());
    std::remove(src_path.c_str());
    if (log.size() > 2000) log = log.substr(0, 2000) + "...";
    return fail(str(cfg.cxx, " failed (exit ", rc, ") on the generated source for '", name,
                    "'; log in ", log_file, ":\n", log));
  };
  // Large programs compile as several translation units at once (one per core), then link.
  unsigned cores = std::thread::hardware_concurrency();
  std::vector<std::string> units = translation_units(source, int(cores ? cores : 1));
  g_compiler_runs.fetch_add(1);
  prof::Scope compiling("jit", [&](std::string& n, prof::Args& a) {
    n = "compile", a.add("program", name).add("compiler", cfg.cxx).add("units", units.size()); });
  if (units.size() == 1) {
    std::vector<std::string> argv{cfg.cxx};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"-o", tmp_so, src_path, "-lmvec", "-lm"});
    int rc = run_process(argv, log_path, log_path);
    if (rc != 0) return failed(rc, log_path, {});
  } else {
    std::vector<std::string> temps, objects, logs;
    std::vector<pid_t> pids;
    for (size_t u = 0; u < units.size(); ++u) {
      std::string part = str(tmp, ".part", u);
      temps.insert(temps.end(), {part + ".cpp", part + ".o", part + ".log"});
      if (!write_file(part + ".cpp", units[u])) {
        for (pid_t p : pids) wait_process(p);
        for (const std::string& t : temps) std::remove(t.c_str());
        std::remove(src_path.c_str());
        return fail(str("cannot write '", part, ".cpp' (is JX_CACHE_DIR writable?)"));
      }
      std::vector<std::string> argv{cfg.cxx};
      argv.insert(argv.end(), flags.begin(), flags.end());
      argv.insert(argv.end(), {"-c", "-o", part + ".o", part + ".cpp"});
      pids.push_back(start_process(argv, part + ".log", part + ".log"));
      objects.push_back(part + ".o");
      logs.push_back(part + ".log");
    }
    int bad = -1, bad_rc = 0;
    for (size_t u = 0; u < pids.size(); ++u) {
      int rc = wait_process(pids[u]);
      if (rc != 0 && bad < 0) bad = int(u), bad_rc = rc;
    }
    if (bad >= 0) {
      std::rename(logs[size_t(bad)].c_str(), log_path.c_str());
      return failed(bad_rc, log_path, temps);
    }
    std::vector<std::string> argv{cfg.cxx};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"-o", tmp_so});
    argv.insert(argv.end(), objects.begin(), objects.end());
    argv.insert(argv.end(), {"-lmvec", "-lm"});
    int rc = run_process(argv, log_path, log_path);
    if (rc != 0) return failed(rc, log_path, temps);
    for (const std::string& t : temps) std::remove(t.c_str());
  }
  std::remove(log_path.c_str());
  if (std::rename(tmp_so.c_str(), so_path.c_str()) != 0) {
    std::remove(tmp_so.c_str());
    std::remove(src_path.c_str());
    return fail(str("cannot rename the built library into '", so_path, "'"));
  }
  // Keep the source beside the library, for reading what was compiled.
  std::rename(src_path.c_str(), (base + ".cpp").c_str());
  compiling.end();
  r.library = load(so_path, &err);
  if (!r.library) return fail(err);
  return r;
}

}  // namespace jx::compiler
