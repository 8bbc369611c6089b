// Mutation fuzzing for jx's readers of untrusted files (.npy, .npz, IDX, safetensors, JSON, ...).
//
// A reader passes when every mutant of a valid seed file either reads (a mutation can leave the
// file valid, e.g. a flipped bit in the data) or throws a jx::Error whose message names the
// operation ("[load_npz]") and the file. Anything else fails the running gtest test with the
// seed and the mutation spelled out (offset, kind), so that a failure can be rebuilt by hand:
// another exception type (std::bad_alloc, std::out_of_range, jx::InternalError, ...), a message
// without "[op]" or the path, a jx array allocation above FuzzOptions::max_array_bytes. While a
// Fuzzer exists, a crash prints the mutation being read before the process dies, and a watchdog
// aborts the process with the same information when the Fuzzer lives longer than
// FuzzOptions::watchdog_seconds (a hang).
//
//   jx::testing::Fuzzer fuzzer({.op = "load"});
//   fuzzer.fuzz_file("f32_2x3.npy", seed_bytes, [](const std::string& path) { jnp::load(path); });
//   fuzzer.expect_file_error("shape (2^40,)", crafted_bytes, read, "is truncated");
//
// One Fuzzer at a time per process (gtest runs one test at a time; ctest one test per process).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jx::testing {

// One mutant of a seed, with a description precise enough to rebuild it ("bit 3 of byte 40
// flipped", "bytes [8, 12) set to 0x7fffffff as big-endian 32-bit").
struct Mutation {
  std::string description;
  std::string bytes;
};
using MutationSink = std::function<void(const Mutation&)>;

struct MutationOptions {
  // Seeds up to this many bytes get every truncation (all proper prefixes, the empty one
  // included); larger seeds every truncation_stride-th length plus every length within
  // edge_bytes of either end.
  size_t full_truncation_limit = 4096;
  size_t truncation_stride = 61;
  size_t edge_bytes = 512;
  // Random mutants, reproducible from rng_seed (std::mt19937_64): single-bit flips, 2-8 bit
  // flips spread over the file, and bytes set to 0x00, 0xFF, 0x7F or 0x80. For a longer local
  // campaign, the environment variables JX_FUZZ_RANDOM_MUTATIONS and JX_FUZZ_RNG_SEED override
  // both (a failure message names its mutation, so rerun with the same values to reproduce).
  size_t random_mutations = 400;
  uint64_t rng_seed = 0x6a78'667a'7a00ull;
  // Byte ranges [begin, end) (clamped to the seed; an end of 0 means the seed's end; a negative
  // begin counts from the end) where interesting integers are written at every `alignment`-th
  // offset: 0, 1, 2^31-1, 2^32-1 (= -1) as 32-bit, and 0, 1, 2^31-1, 2^32-1, 2^60, 2^63-1, -1
  // as 64-bit, each little- and big-endian. Point them at the binary header fields.
  std::vector<std::pair<int64_t, int64_t>> integer_regions = {{0, 128}};
  size_t integer_alignment = 1;
};

// The generators: each calls `sink` once per mutant, building it in place (no list is kept).
void truncations(const std::string& seed, const MutationOptions& options, const MutationSink& sink);
void random_mutations(const std::string& seed, const MutationOptions& options,
                      const MutationSink& sink);
void interesting_integers(const std::string& seed, const MutationOptions& options,
                          const MutationSink& sink);
// All three, in that order.
void all_mutations(const std::string& seed, const MutationOptions& options,
                   const MutationSink& sink);

struct FuzzOptions {
  // The operation a reader's error messages must name, as "[op]" (jx's "[load_npz] 'path' ...").
  std::string op = {};
  // For file readers: the message must also contain the path given to the reader.
  bool require_path = true;
  // Malformed files must throw jx::IOError; false accepts any jx::Error subclass.
  bool require_io_error = true;
  // The process's address-space limit (RLIMIT_AS) while the Fuzzer exists: its size when the
  // Fuzzer starts plus this margin. See fuzz.cpp for why this guard.
  size_t address_space_margin = size_t(1) << 30;
  // jx array buffers (src/core/allocator.cpp) one reader call may allocate.
  size_t max_array_bytes = size_t(64) << 20;
  // The Fuzzer aborts the process when it lives longer than this (a reader that hangs).
  int watchdog_seconds = 20;
  // Failures reported in full; the rest are counted.
  size_t max_reported_failures = 8;
  // Name of the temporary file a mutant is written to (some readers look at the extension).
  std::string file_name = "mutant.bin";
};

enum class Outcome { Ok, TypedError, Failure };

struct FuzzReport {
  size_t mutants = 0, ok = 0, typed_errors = 0, failures = 0;
  double slowest_ms = 0;  // the slowest reader call, and on which mutant
  std::string slowest;
};

using FileReader = std::function<void(const std::string& path)>;
using BytesReader = std::function<void(std::string_view bytes)>;

class Fuzzer {
 public:
  explicit Fuzzer(FuzzOptions options);
  ~Fuzzer();  // restores the address-space limit and the signal handlers; removes temp files
  Fuzzer(const Fuzzer&) = delete;
  Fuzzer& operator=(const Fuzzer&) = delete;

  // Every mutant of `seed` (all_mutations), read from a temporary file or from memory. The
  // unmutated seed must read without error (else the seed itself is reported). `label` names
  // the seed in failure messages.
  void fuzz_file(const std::string& label, const std::string& seed, const FileReader& read,
                 const MutationOptions& options = {});
  void fuzz_bytes(const std::string& label, const std::string& seed, const BytesReader& read,
                  const MutationOptions& options = {});

  // One input, under the same guards; failures are reported as in fuzz_file.
  Outcome run_file(const std::string& label, const Mutation& m, const FileReader& read);
  Outcome run_bytes(const std::string& label, const Mutation& m, const BytesReader& read);

  // A crafted input that must be rejected: it must throw the typed error (as above) and its
  // message must contain `must_contain`. Returns the message ("" when it did not throw one).
  std::string expect_file_error(const std::string& label, const std::string& bytes,
                                const FileReader& read, const std::string& must_contain);
  std::string expect_bytes_error(const std::string& label, const std::string& bytes,
                                 const BytesReader& read, const std::string& must_contain);

  const FuzzReport& report() const { return report_; }
  // "1234 mutants: 12 read, 1222 typed errors, 0 failures; slowest 0.8 ms (...)".
  std::string summary() const;
  const std::string& temp_dir() const { return dir_; }

 private:
  struct Guards;
  Outcome run(const std::string& label, const Mutation& m, const std::string& path,
              const std::function<void()>& call, std::string* message);
  void write_temp(const std::string& bytes);

  FuzzOptions options_;
  FuzzReport report_;
  std::string dir_, path_;
  int fd_ = -1;  // path_, open for rewriting
  std::unique_ptr<Guards> guards_;
};

// Small helpers for building seeds.
std::string read_file_bytes(const std::string& path);
void write_file_bytes(const std::string& path, std::string_view bytes);
// gzip (RFC 1952, one member) and back; gunzip throws std::runtime_error on a bad stream.
std::string gzip_bytes(std::string_view raw);
std::string gunzip_bytes(std::string_view gz);
// Little/big-endian integer of `width` bytes (1..8) written at `offset` (in bounds).
void put_le(std::string& bytes, size_t offset, uint64_t value, int width);
void put_be(std::string& bytes, size_t offset, uint64_t value, int width);

}  // namespace jx::testing
