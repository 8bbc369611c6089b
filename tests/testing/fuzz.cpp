#include "testing/fuzz.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <new>
#include <random>
#include <stdexcept>
#include <thread>
#include <typeinfo>

#include "core/allocator.h"
#include "jx/error.h"
#include "support/str.h"

namespace jx::testing {

using jx::str;

// ---- mutation generators ----

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// [begin, end) of a region, resolved against the seed's size.
std::pair<size_t, size_t> resolve(std::pair<int64_t, int64_t> region, size_t size) {
  int64_t n = int64_t(size);
  int64_t b = region.first < 0 ? n + region.first : region.first;
  int64_t e = region.second <= 0 ? n + region.second : region.second;
  b = std::clamp<int64_t>(b, 0, n);
  e = std::clamp<int64_t>(e, b, n);
  return {size_t(b), size_t(e)};
}

}  // namespace

void put_le(std::string& bytes, size_t offset, uint64_t value, int width) {
  for (int i = 0; i < width; ++i) bytes[offset + size_t(i)] = char((value >> (8 * i)) & 0xFF);
}

void put_be(std::string& bytes, size_t offset, uint64_t value, int width) {
  for (int i = 0; i < width; ++i)
    bytes[offset + size_t(i)] = char((value >> (8 * (width - 1 - i))) & 0xFF);
}

void truncations(const std::string& seed, const MutationOptions& o, const MutationSink& sink) {
  size_t n = seed.size();
  std::vector<bool> take(n, n <= o.full_truncation_limit);
  for (size_t len = 0; len < n; ++len)
    if (len < o.edge_bytes || n - len <= o.edge_bytes ||
        (o.truncation_stride && len % o.truncation_stride == 0))
      take[len] = true;
  Mutation m;
  for (size_t len = 0; len < n; ++len) {
    if (!take[len]) continue;
    m.description = str("truncated to ", len, " of ", n, " bytes");
    m.bytes.assign(seed, 0, len);
    sink(m);
  }
}

void random_mutations(const std::string& seed, const MutationOptions& o, const MutationSink& sink) {
  if (seed.empty()) return;
  size_t count = o.random_mutations;
  uint64_t rng_seed = o.rng_seed;
  if (const char* e = std::getenv("JX_FUZZ_RANDOM_MUTATIONS"))
    count = std::strtoull(e, nullptr, 10);
  if (const char* e = std::getenv("JX_FUZZ_RNG_SEED")) rng_seed = std::strtoull(e, nullptr, 10);
  std::mt19937_64 rng(rng_seed);
  // Half of the offsets fall in the integer regions (the headers: where a changed bit changes
  // the parse rather than one value), half anywhere.
  std::vector<std::pair<size_t, size_t>> regions;
  for (const auto& r : o.integer_regions) {
    auto [b, e] = resolve(r, seed.size());
    if (e > b) regions.emplace_back(b, e);
  }
  auto offset = [&]() -> size_t {
    if (!regions.empty() && rng() % 2 == 0) {
      auto [b, e] = regions[rng() % regions.size()];
      return b + size_t(rng() % (e - b));
    }
    return size_t(rng() % seed.size());
  };
  static constexpr unsigned char kBytes[] = {0x00, 0xFF, 0x7F, 0x80};
  Mutation m;
  for (size_t i = 0; i < count; ++i) {
    m.bytes = seed;
    uint64_t kind = rng() % 5;
    if (kind < 2) {
      size_t at = offset();
      int bit = int(rng() % 8);
      m.bytes[at] = char(m.bytes[at] ^ (1 << bit));
      m.description = str("bit ", bit, " of byte ", at, " flipped");
    } else if (kind == 2) {
      int flips = 2 + int(rng() % 7);
      m.description = "bits flipped:";
      for (int k = 0; k < flips; ++k) {
        size_t at = offset();
        int bit = int(rng() % 8);
        m.bytes[at] = char(m.bytes[at] ^ (1 << bit));
        m.description += str(k ? ", " : " ", "byte ", at, " bit ", bit);
      }
    } else {
      size_t at = offset();
      unsigned char v = kBytes[rng() % 4];
      m.bytes[at] = char(v);
      m.description = str("byte ", at, " set to ", hex(v));
    }
    if (m.bytes != seed) sink(m);
  }
}

void interesting_integers(const std::string& seed, const MutationOptions& o,
                          const MutationSink& sink) {
  static constexpr uint64_t k32[] = {0, 1, 0x7FFFFFFFu, 0xFFFFFFFFu};
  static constexpr uint64_t k64[] = {0, 1, 0x7FFFFFFFu, 0xFFFFFFFFu, 1ull << 60, ~0ull >> 1, ~0ull};
  size_t step = std::max<size_t>(1, o.integer_alignment);
  Mutation m;
  auto emit = [&](size_t at, uint64_t v, int width, bool big) {
    if (at + size_t(width) > seed.size()) return;
    m.bytes = seed;
    if (big)
      put_be(m.bytes, at, v, width);
    else
      put_le(m.bytes, at, v, width);
    if (m.bytes == seed) return;
    m.description = str("bytes [", at, ", ", at + size_t(width), ") set to ", hex(v), " as ",
                        big ? "big" : "little", "-endian ", 8 * width, "-bit");
    sink(m);
  };
  for (const auto& r : o.integer_regions) {
    auto [b, e] = resolve(r, seed.size());
    for (size_t at = b; at < e; at += step) {
      for (bool big : {false, true}) {
        for (uint64_t v : k32) emit(at, v, 4, big);
        for (uint64_t v : k64) emit(at, v, 8, big);
      }
    }
  }
}

void all_mutations(const std::string& seed, const MutationOptions& o, const MutationSink& sink) {
  truncations(seed, o, sink);
  random_mutations(seed, o, sink);
  interesting_integers(seed, o, sink);
}

// ---- guards ----
//
// Allocation guard. "No allocation of the declared size" is checked two ways, both robust in a
// gtest process that has OpenMP and oneDNN loaded:
//  * an address-space ceiling (RLIMIT_AS = the size at Fuzzer start + a margin, 1 GiB by
//    default, restored afterwards). jx's array buffers come from std::aligned_alloc
//    (src/core/allocator.cpp), which a replaced global operator new would never see; zlib and
//    std::vector go through malloc and new, and glibc serves large requests with mmap. A
//    ceiling makes every one of them fail up front (aligned_alloc/malloc return null, jx's
//    allocator and operator new throw std::bad_alloc, mmap returns MAP_FAILED), without
//    touching a page and without interposing symbols. The runner reports std::bad_alloc as a
//    failure, so a reader that allocates a declared 2^40 bytes fails the test in microseconds.
//  * jx's own allocator statistics, exact for array buffers below that ceiling: a reader call
//    whose peak of jx buffer bytes rises more than max_array_bytes above what was in use before
//    is reported (a small file declaring a few hundred MiB).
//
// Hang guard: a watchdog thread aborts the process with the mutation being read when the Fuzzer
// outlives watchdog_seconds (tests are discovered by gtest_discover_tests, without a TIMEOUT).
// Crash guard: handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT print that mutation,
// then let the signal kill the process as it would have.

namespace {

std::mutex g_current_mu;
char g_current[2048];  // the input being read; a plain buffer so that a signal handler can print it
bool g_active = false;
// The temporary file and folder, removed by the crash and hang handlers too (unlink and rmdir
// are async-signal-safe).
char g_temp_file[1024], g_temp_dir[1024];
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

void set_current(const std::string& s) {
  std::lock_guard<std::mutex> lock(g_current_mu);
  size_t n = std::min(s.size(), sizeof g_current - 1);
  std::memcpy(g_current, s.data(), n);
  g_current[n] = '\0';
}

void write_stderr(const char* s) { [[maybe_unused]] ssize_t r = ::write(2, s, std::strlen(s)); }

void remove_temp() {
  if (g_temp_file[0]) ::unlink(g_temp_file);
  if (g_temp_dir[0]) ::rmdir(g_temp_dir);
}

extern "C" void on_fatal_signal(int sig) {
  const char* name = sig == SIGSEGV  ? "SIGSEGV"
                     : sig == SIGBUS ? "SIGBUS"
                     : sig == SIGFPE ? "SIGFPE"
                     : sig == SIGILL ? "SIGILL"
                                     : "SIGABRT";
  write_stderr("\n[fuzz] fatal signal ");
  write_stderr(name);
  write_stderr(" while reading: ");
  write_stderr(g_current);
  write_stderr("\n");
  remove_temp();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

size_t address_space_now() {
  std::ifstream in("/proc/self/statm");
  size_t pages = 0;
  in >> pages;
  return pages * size_t(::sysconf(_SC_PAGESIZE));
}

std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : name;
  std::free(d);
  return out;
}

}  // namespace

struct Fuzzer::Guards {
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::thread watchdog;
  rlimit old_as{};
  bool as_set = false;
  struct sigaction old_actions[std::size(kSignals)] = {};
};

Fuzzer::Fuzzer(FuzzOptions options) : options_(std::move(options)), guards_(new Guards) {
  if (g_active) throw std::logic_error("jx::testing::Fuzzer: only one Fuzzer may exist at a time");
  set_current("(no input yet)");
  std::string tmpl = str(::testing::TempDir(), "jx_fuzz_XXXXXX");
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) throw std::runtime_error(str("mkdtemp failed for ", tmpl));
  dir_ = buf.data();
  path_ = str(dir_, "/", options_.file_name);
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd_ < 0) throw std::runtime_error(str("cannot create ", path_, ": ", std::strerror(errno)));
  std::snprintf(g_temp_file, sizeof g_temp_file, "%s", path_.c_str());
  std::snprintf(g_temp_dir, sizeof g_temp_dir, "%s", dir_.c_str());

  Guards& g = *guards_;
  int seconds = options_.watchdog_seconds;
  std::string op = options_.op;
  // The thread is started before the address-space ceiling, which its stack would count against.
  g.watchdog = std::thread([&g, seconds, op] {
    std::unique_lock<std::mutex> lock(g.mu);
    if (g.cv.wait_for(lock, std::chrono::seconds(seconds), [&g] { return g.stop; })) return;
    std::string current;
    {
      std::lock_guard<std::mutex> lc(g_current_mu);
      current = g_current;
    }
    std::fprintf(stderr,
                 "\n[fuzz] [%s] no result after %d s (a reader that hangs?); it was reading: %s\n",
                 op.c_str(), seconds, current.c_str());
    std::fflush(stderr);
    remove_temp();
    ::signal(SIGABRT, SIG_DFL);
    std::abort();
  });

  struct sigaction sa = {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &sa, &g.old_actions[i]);

  if (::getrlimit(RLIMIT_AS, &g.old_as) == 0) {
    rlimit lim = g.old_as;
    rlim_t want = rlim_t(address_space_now() + options_.address_space_margin);
    if (lim.rlim_cur == RLIM_INFINITY || want < lim.rlim_cur) {
      lim.rlim_cur = lim.rlim_max == RLIM_INFINITY ? want : std::min(want, lim.rlim_max);
      g.as_set = ::setrlimit(RLIMIT_AS, &lim) == 0;
    }
  }
  g_active = true;
}

Fuzzer::~Fuzzer() {
  Guards& g = *guards_;
  if (g.as_set) ::setrlimit(RLIMIT_AS, &g.old_as);
  {
    std::lock_guard<std::mutex> lock(g.mu);
    g.stop = true;
  }
  g.cv.notify_all();
  g.watchdog.join();
  for (size_t i = 0; i < std::size(kSignals); ++i)
    ::sigaction(kSignals[i], &g.old_actions[i], nullptr);
  if (report_.failures > options_.max_reported_failures)
    ADD_FAILURE() << "[fuzz] [" << options_.op << "] "
                  << report_.failures - options_.max_reported_failures
                  << " more failures not shown; " << summary();
  ::close(fd_);
  g_temp_file[0] = g_temp_dir[0] = '\0';
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  g_active = false;
}

void Fuzzer::write_temp(const std::string& bytes) {
  // Rewritten in place through one descriptor: recreating the file for each of thousands of
  // mutants costs ~10x more on ext4.
  bool ok = ::pwrite(fd_, bytes.data(), bytes.size(), 0) == ssize_t(bytes.size()) &&
            ::ftruncate(fd_, off_t(bytes.size())) == 0;
  if (!ok) throw std::runtime_error(str("cannot write ", path_, ": ", std::strerror(errno)));
}

Outcome Fuzzer::run(const std::string& label, const Mutation& m, const std::string& path,
                    const std::function<void()>& call, std::string* message) {
  std::string where = str(label, ": ", m.description, " (", m.bytes.size(), " bytes)");
  set_current(where);
  detail::AllocatorStats before = detail::allocator_stats();
  auto t0 = std::chrono::steady_clock::now();
  Outcome outcome = Outcome::Ok;
  std::string failure;
  try {
    call();
  } catch (const Error& e) {
    outcome = Outcome::TypedError;
    std::string what = e.what();
    if (message) *message = what;
    if (options_.require_io_error && !dynamic_cast<const IOError*>(&e))
      failure = str("threw ", demangle(typeid(e).name()), ", not jx::IOError: ", what);
    else if (what.find(str("[", options_.op, "]")) == std::string::npos)
      failure = str("threw a message that does not name the operation [", options_.op, "]: ", what);
    else if (options_.require_path && !path.empty() && what.find(path) == std::string::npos)
      failure = str("threw a message that does not name the file: ", what);
  } catch (const std::bad_alloc&) {
    failure = str("threw std::bad_alloc: it tried to allocate beyond the ",
                  options_.address_space_margin >> 20,
                  " MiB address-space guard (a declared size allocated before being checked?)");
  } catch (const std::exception& e) {
    failure = str("threw ", demangle(typeid(e).name()), " (not a jx::Error): ", e.what());
  } catch (...) {
    failure = "threw something that is not a std::exception";
  }
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  detail::AllocatorStats after = detail::allocator_stats();
  if (failure.empty() && after.peak_bytes_in_use > before.peak_bytes_in_use &&
      after.peak_bytes_in_use - before.bytes_in_use > options_.max_array_bytes)
    failure = str("allocated ", after.peak_bytes_in_use - before.bytes_in_use,
                  " bytes of jx array buffers, over the ", options_.max_array_bytes, " allowed");
  report_.mutants++;
  if (ms > report_.slowest_ms) {
    report_.slowest_ms = ms;
    report_.slowest = where;
  }
  if (!failure.empty()) {
    if (++report_.failures <= options_.max_reported_failures)
      ADD_FAILURE() << "[fuzz] [" << options_.op << "] " << where << ": " << failure;
    return Outcome::Failure;
  }
  (outcome == Outcome::Ok ? report_.ok : report_.typed_errors)++;
  return outcome;
}

Outcome Fuzzer::run_file(const std::string& label, const Mutation& m, const FileReader& read) {
  write_temp(m.bytes);
  return run(
      label, m, path_, [&] { read(path_); }, nullptr);
}

Outcome Fuzzer::run_bytes(const std::string& label, const Mutation& m, const BytesReader& read) {
  return run(
      label, m, "", [&] { read(std::string_view(m.bytes)); }, nullptr);
}

void Fuzzer::fuzz_file(const std::string& label, const std::string& seed, const FileReader& read,
                       const MutationOptions& options) {
  if (run_file(label, {"the unmutated seed", seed}, read) != Outcome::Ok)
    ADD_FAILURE() << "[fuzz] the seed " << label << " itself does not read";
  all_mutations(seed, options, [&](const Mutation& m) { run_file(label, m, read); });
}

void Fuzzer::fuzz_bytes(const std::string& label, const std::string& seed, const BytesReader& read,
                        const MutationOptions& options) {
  if (run_bytes(label, {"the unmutated seed", seed}, read) != Outcome::Ok)
    ADD_FAILURE() << "[fuzz] the seed " << label << " itself does not read";
  all_mutations(seed, options, [&](const Mutation& m) { run_bytes(label, m, read); });
}

std::string Fuzzer::expect_file_error(const std::string& label, const std::string& bytes,
                                      const FileReader& read, const std::string& must_contain) {
  write_temp(bytes);
  std::string msg;
  Mutation m{"crafted input", bytes};
  Outcome o = run(
      label, m, path_, [&] { read(path_); }, &msg);
  if (o == Outcome::Ok) ADD_FAILURE() << "[fuzz] " << label << ": read without an error";
  if (o == Outcome::TypedError && msg.find(must_contain) == std::string::npos)
    ADD_FAILURE() << "[fuzz] " << label << ": the message lacks \"" << must_contain
                  << "\": " << msg;
  return msg;
}

std::string Fuzzer::expect_bytes_error(const std::string& label, const std::string& bytes,
                                       const BytesReader& read, const std::string& must_contain) {
  std::string msg;
  Mutation m{"crafted input", bytes};
  Outcome o = run(
      label, m, "", [&] { read(std::string_view(m.bytes)); }, &msg);
  if (o == Outcome::Ok) ADD_FAILURE() << "[fuzz] " << label << ": read without an error";
  if (o == Outcome::TypedError && msg.find(must_contain) == std::string::npos)
    ADD_FAILURE() << "[fuzz] " << label << ": the message lacks \"" << must_contain
                  << "\": " << msg;
  return msg;
}

std::string Fuzzer::summary() const {
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.2f", report_.slowest_ms);
  return str(report_.mutants, " inputs: ", report_.ok, " read, ", report_.typed_errors,
             " typed errors, ", report_.failures, " failures; slowest call ", ms, " ms (",
             report_.slowest, ")");
}

// ---- helpers ----

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(str("cannot read ", path));
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file_bytes(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw std::runtime_error(str("cannot write ", path));
}

std::string gzip_bytes(std::string_view raw) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::string out(deflateBound(&zs, uLong(raw.size())) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  zs.avail_in = uInt(raw.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = uInt(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate failed");
  return out;
}

std::string gunzip_bytes(std::string_view gz) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) throw std::runtime_error("inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = uInt(gz.size());
  std::string out;
  char buf[16384];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  } while (rc == Z_OK);
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("gunzip: not a complete gzip stream");
  return out;
}

}  // namespace jx::testing
