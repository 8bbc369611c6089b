// The system C++ compiler as jit's back end: C++ source in, a loaded shared library out.
// Libraries are cached on disk by a hash of (source, flags, compiler version), so a
// second process that needs the same kernels loads them without compiling. Writes go to
// a temporary file in the cache directory and are renamed into place, so two processes
// (or threads) building the same library at once both end with a complete file.
//
// Environment: JX_CXX (compiler; default `c++` on PATH), JX_CXXFLAGS (default
// `-O3 -march=<jx's own> -fopenmp -fPIC -shared -ffp-contract=off -fno-math-errno
// -fno-trapping-math` (so that fused loops with selects vectorize without AVX-512): the
// -march jx was built with (CMake's JX_MARCH), so generated code calls the same libmvec
// variants as the eager kernels; no multiply-add contraction, so that a*b+c rounds twice
// as in the eager kernels; libmvec and libm are always linked), JX_CACHE_DIR (default ~/.cache/jx),
// JX_DUMP_DIR (also write the generated source there). All are read at each build, so a
// program (or a test) may change them between builds.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace jx::compiler {

struct ToolchainConfig {
  std::string cxx;        // resolved path of the compiler; empty when none was found
  std::string cxx_asked;  // what JX_CXX (or the default) named, for messages
  std::string flags;
  std::string cache_dir;
  std::string dump_dir;   // empty: no dump
};
ToolchainConfig toolchain_config();

// Counters for tests and logs (process-wide, monotonic).
struct ToolchainStats {
  uint64_t compiler_runs = 0;  // times the C++ compiler was started for a library
  uint64_t cache_hits = 0;     // libraries loaded from the disk cache without compiling
  uint64_t failures = 0;       // builds that produced no library
};
ToolchainStats toolchain_stats();

// A dlopen'ed library; dlclose'd when the last owner lets go.
class SharedLibrary {
 public:
  SharedLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  void* symbol(const std::string& name) const;  // nullptr when absent
  const std::string& path() const { return path_; }

 private:
  void* handle_;
  std::string path_;
};

struct BuildResult {
  std::shared_ptr<SharedLibrary> library;  // null on failure
  std::string error;                        // why, when library is null
};

// A line that splits a generated source into parts (codegen.cpp puts one before each
// kernel): the text before the first marker is the prelude every part needs, each part
// is self-contained after it. A large source is compiled as several translation units in
// parallel, one per core, then linked; the cache key is still the whole source's.
inline constexpr const char* kPartMarker = "// jx:part";

// Compiles `source` (or finds it in the disk cache) and loads it. `name` only labels
// dump files. Never throws for a missing or failing compiler: that is reported in
// `error`, and the caller falls back to interpretation.
BuildResult build_shared_library(const std::string& source, const std::string& name);

// The 128-bit hex key of (source, flags, compiler version) that names cached files.
std::string cache_key(const std::string& source, const std::string& flags,
                      const std::string& compiler_version);

// Prints `why` to stderr the first time it is called in this process, never again, so a
// program without a compiler is told once that jit interprets.
void report_fallback_once(const std::string& why);

}  // namespace jx::compiler
