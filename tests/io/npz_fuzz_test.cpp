// Mutation fuzzing of jnp::load_npz: archives written by savez, savez_compressed (zip64 records
// forced through detail::write_npz's zip64_limit) and by NumPy (tests/data/io) are truncated at
// every byte, bit-flipped, and get interesting integers in every local header, the central
// directory and the end records; each mutant reads or throws a jx::IOError naming
// "[load_npz]" and the file, never a crash, hang or huge allocation. Crafted archives declaring
// 2^62-byte members or 2^62 directory entries fail fast without allocating.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "jx/numpy.h"
#include "numpy/io_npy.h"
#include "testing/fuzz.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;
using jx::DType;
using jx::testing::Fuzzer;
using jx::testing::MutationOptions;

std::string data(const std::string& name) {
  if (const char* d = std::getenv("JX_TEST_DATA")) return std::string(d) + "/io/" + name;
  return std::string(JX_TEST_DATA_DIR) + "/io/" + name;
}

void load(const std::string& path) { jnp::load_npz(path); }

std::vector<std::pair<std::string, Array>> arrays() {
  return {{"w", jnp::arange(6).astype(DType::Float32).reshape({2, 3})},
          {"b", jnp::arange(3).astype(DType::Int64)}};
}

// An archive written by jx: stored or deflated, with zip64 records everywhere when zip64.
std::string written(Fuzzer& f, bool compress, bool zip64) {
  std::string path = f.temp_dir() + "/seed.npz";
  jx::detail::write_npz(path, arrays(), compress, zip64 ? 0 : 0xFFFFFFFFu);
  return jx::testing::read_file_bytes(path);
}

std::vector<size_t> find_all(const std::string& bytes, const std::string& sig) {
  std::vector<size_t> at;
  for (size_t p = bytes.find(sig); p != std::string::npos; p = bytes.find(sig, p + 1))
    at.push_back(p);
  return at;
}

// Interesting integers in every local header and in the central directory and end records.
MutationOptions zip_regions(const std::string& seed) {
  MutationOptions o;
  o.integer_regions.clear();
  for (size_t at : find_all(seed, "PK\x03\x04"))
    o.integer_regions.emplace_back(int64_t(at), int64_t(at) + 50);
  size_t cd = find_all(seed, "PK\x01\x02").at(0);
  o.integer_regions.emplace_back(int64_t(cd), 0);
  return o;
}

void fuzz(Fuzzer& f, const std::string& label, const std::string& seed) {
  f.fuzz_file(label, seed, load, zip_regions(seed));
}

TEST(NpzFuzz, MutantsOfJxArchives) {
  Fuzzer f({.op = "load_npz"});
  fuzz(f, "savez", written(f, false, false));
  fuzz(f, "savez_compressed", written(f, true, false));
  fuzz(f, "savez zip64", written(f, false, true));
  fuzz(f, "savez_compressed zip64", written(f, true, true));
  std::cout << "[fuzz] jx archives: " << f.summary() << "\n";
  EXPECT_EQ(f.report().failures, 0u);
}

TEST(NpzFuzz, MutantsOfNumPyArchives) {
  Fuzzer f({.op = "load_npz"});
  for (const char* name : {"savez_compressed.npz", "savez_zip64.npz"})
    fuzz(f, name, jx::testing::read_file_bytes(data(name)));
  std::cout << "[fuzz] NumPy archives: " << f.summary() << "\n";
  EXPECT_EQ(f.report().failures, 0u);
}

TEST(NpzFuzz, HugeDeclaredSizesFailFastWithoutAllocating) {
  Fuzzer f({.op = "load_npz"});
  constexpr uint64_t k2to62 = uint64_t(1) << 62;
  // savez with zip64_limit 0: each central entry's zip64 extra holds usize, csize, offset.
  for (bool compress : {false, true}) {
    std::string seed = written(f, compress, true);
    size_t cd = find_all(seed, "PK\x01\x02").at(0);
    size_t nlen = uint8_t(seed[cd + 28]) | size_t(uint8_t(seed[cd + 29])) << 8;
    size_t extra = cd + 46 + nlen;
    ASSERT_EQ(seed.substr(extra, 2), std::string("\x01\x00", 2));
    std::string usize = seed, csize = seed, offset = seed;
    jx::testing::put_le(usize, extra + 4, k2to62, 8);
    jx::testing::put_le(csize, extra + 12, k2to62, 8);
    jx::testing::put_le(offset, extra + 20, k2to62, 8);
    std::string label = compress ? "deflated member " : "stored member ";
    f.expect_file_error(label + "declaring 2^62 bytes", usize, load,
                        "is corrupt: bad sizes for member 'w.npy'");
    f.expect_file_error(label + "of 2^62 compressed bytes", csize, load,
                        "is truncated: member 'w.npy' needs 4611686018427387904 bytes of data");
    f.expect_file_error(label + "at offset 2^62", offset, load,
                        "is truncated: ran out of data reading the local file header");
    // The zip64 end record: 2^62 entries in a 2^62-byte directory.
    size_t end64 = find_all(seed, "PK\x06\x06").at(0);
    std::string count = seed, size = seed;
    jx::testing::put_le(count, end64 + 32, k2to62, 8);
    jx::testing::put_le(size, end64 + 40, k2to62, 8);
    f.expect_file_error(label + "archive of 2^62 entries", count, load,
                        "entries cannot fit a central directory");
    f.expect_file_error(label + "archive with a 2^62-byte directory", size, load,
                        "the central directory lies outside the file");
  }
  EXPECT_EQ(f.report().failures, 0u);
}

// Regression: central directory entries sharing one local header (or overlapping data) were
// each inflated into their own array, so a small archive could make load_npz allocate its
// biggest member thousands of times over (an overlapping zip bomb).
TEST(NpzFuzz, OverlappingMembersAreRejected) {
  Fuzzer f({.op = "load_npz"});
  std::string path = f.temp_dir() + "/one.npz";
  jnp::savez_compressed(path, std::vector<std::pair<std::string, Array>>{
                                  {"z", jnp::zeros({1 << 16}, DType::Float32)}});  // 256 KiB
  std::string seed = jx::testing::read_file_bytes(path);
  size_t cd = find_all(seed, "PK\x01\x02").at(0), eocd = find_all(seed, "PK\x05\x06").at(0);
  std::string entry = seed.substr(cd, eocd - cd);
  // 1000 entries all pointing at the one member: 1000 x 256 KiB from a ~1 KB file.
  std::string bomb = seed.substr(0, cd);
  for (int i = 0; i < 1000; ++i) bomb += entry;
  std::string end = seed.substr(eocd);
  jx::testing::put_le(end, 8, 1000, 2);
  jx::testing::put_le(end, 10, 1000, 2);
  jx::testing::put_le(end, 12, entry.size() * 1000, 4);
  f.expect_file_error("1000 entries sharing one member", bomb + end, load,
                      "is corrupt: members 'z.npy' and 'z.npy' overlap");
  // A member whose recorded size runs into the central directory.
  std::string into = seed;
  jx::testing::put_le(into, cd + 20, uint8_t(seed[cd + 20]) + 256 * uint8_t(seed[cd + 21]) + 1, 2);
  f.expect_file_error("a member running into the directory", into, load,
                      "member 'z.npy' overlaps the central directory");
  EXPECT_EQ(f.report().failures, 0u);
}

}  // namespace
