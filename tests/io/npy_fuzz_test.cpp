// Mutation fuzzing of jnp::load (.npy) and of the in-memory .npy decoder that load_npz uses:
// every truncation, random bit flips and byte replacements, interesting integers in the binary
// prefix (magic, version, header length) of files written by jnp::save and by NumPy
// (tests/data/io: Fortran order, big-endian, versions 2.0 and 3.0) end in the array or in a
// jx::IOError naming "[load]" and the file, never a crash, hang or huge allocation; crafted
// headers declaring huge shapes fail fast without allocating (tests/testing/fuzz.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "jx/numpy.h"
#include "numpy/io_npy.h"
#include "support/str.h"
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

void load(const std::string& path) { jnp::load(path); }

// The bytes jnp::save writes for `a`.
std::string saved(Fuzzer& f, const Array& a) {
  std::string path = f.temp_dir() + "/seed.npy";
  jnp::save(path, a);
  return jx::testing::read_file_bytes(path);
}

// A v1.0 .npy image with the given header dict and `data_bytes` zero bytes of data.
std::string npy_with_header(const std::string& dict, size_t data_bytes) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64) h.push_back(' ');
  h.push_back('\n');
  std::string out = "\x93NUMPY\x01";
  out.push_back('\0');
  out.push_back(char(h.size() & 0xFF));
  out.push_back(char(h.size() >> 8));
  return out + h + std::string(data_bytes, '\0');
}

MutationOptions binary_prefix() {
  MutationOptions o;
  o.integer_regions = {{0, 16}};  // magic, version, header length; the rest is ASCII
  return o;
}

TEST(NpyFuzz, MutantsOfSavedFiles) {
  Fuzzer f({.op = "load"});
  std::vector<std::pair<std::string, Array>> seeds = {
      {"float32 [2,3]", jnp::arange(6).astype(DType::Float32).reshape({2, 3})},
      {"int64 [5]", jnp::arange(5).astype(DType::Int64)},
      {"bool [2,2]", jnp::arange(4).reshape({2, 2}) > 1},
      {"float16 scalar", jnp::array(1.5, DType::Float16)},
      {"bfloat16 [3]", jnp::arange(3).astype(DType::BFloat16)},
      {"uint8 [0,3]", jnp::zeros({0, 3}, DType::UInt8)},
  };
  for (const auto& [label, a] : seeds) f.fuzz_file(label, saved(f, a), load, binary_prefix());
  std::cout << "[fuzz] jnp::save seeds: " << f.summary() << "\n";
  EXPECT_EQ(f.report().failures, 0u);
}

TEST(NpyFuzz, MutantsOfNumPyFiles) {
  Fuzzer f({.op = "load"});
  for (const char* name : {"f_be_float64_3x2.npy", "f_int32_2x3x4.npy", "be_uint16_2x3.npy",
                           "v2_float32_2x3.npy", "v3_int8_2x3.npy", "bool_scalar.npy"})
    f.fuzz_file(name, jx::testing::read_file_bytes(data(name)), load, binary_prefix());
  std::cout << "[fuzz] NumPy seeds: " << f.summary() << "\n";
  EXPECT_EQ(f.report().failures, 0u);
}

// load_npz decodes its members in memory, after their CRC-32 matched: the .npy decoder gets
// mutants directly here, as a corrupt archive with a recomputed CRC would give them.
TEST(NpyFuzz, MutantsOfInMemoryMembers) {
  Fuzzer f({.op = "load_npz"});
  auto decode = [](std::string_view b) {
    jx::detail::npy_decode(b.data(), b.size(), "archive.npz' member 'x.npy", "load_npz");
  };
  Array a = jnp::arange(12).astype(DType::Int32).reshape({3, 4});
  f.fuzz_bytes("int32 [3,4]", saved(f, a), decode, binary_prefix());
  std::cout << "[fuzz] in-memory members: " << f.summary() << "\n";
  EXPECT_EQ(f.report().failures, 0u);
}

TEST(NpyFuzz, HugeDeclaredShapesFailFastWithoutAllocating) {
  Fuzzer f({.op = "load"});
  // 2^40 float32 elements (4 TiB) in a 128-byte file.
  f.expect_file_error(
      "shape (2^40,)",
      npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", 0),
      load, "is truncated: shape (1099511627776,) of float32 needs 4398046511104 data bytes");
  f.expect_file_error(
      "shape (2^31, 2^31) Fortran order",
      npy_with_header(
          "{'descr': '<f8', 'fortran_order': True, 'shape': (2147483648, 2147483648), }", 8),
      load, "is too large");
  f.expect_file_error(
      "shape (2^31, 2^31) uint8",
      npy_with_header(
          "{'descr': '|u1', 'fortran_order': True, 'shape': (2147483648, 2147483648), }", 8),
      load, "is truncated: shape (2147483648, 2147483648) of uint8 needs 4611686018427387904");
  f.expect_file_error("shape (2^62, 2^62)",
                      npy_with_header("{'descr': '|u1', 'fortran_order': False, 'shape': "
                                      "(4611686018427387904, 4611686018427387904), }",
                                      0),
                      load, "is too large");
  f.expect_file_error(
      "a dimension of 10^30",
      npy_with_header(
          "{'descr': '|u1', 'fortran_order': False, 'shape': (1000000000000000000000000000000,), }",
          0),
      load, "too large");
  // A header length of 65535 (v1.0) or 2^32-1 (v2.0) in a tiny file.
  std::string v1 = npy_with_header("{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }", 1);
  v1[8] = v1[9] = char(0xFF);
  f.expect_file_error("header length 65535", v1, load, "header is 65535 bytes");
  std::string v2 = "\x93NUMPY\x02";
  v2 += std::string(1, '\0') + "\xFF\xFF\xFF\xFF" + "{}";
  f.expect_file_error("header length 2^32-1", v2, load, "header is 4294967295 bytes");
  EXPECT_EQ(f.report().failures, 0u);
}

// Regression: a shape whose nonzero dimensions overflow was accepted when another dimension is
// 0 (the byte count is 0), giving an array whose element count and strides overflow int64.
// NumPy refuses such a shape ("array is too big").
TEST(NpyFuzz, ZeroSizedShapeWithOverflowingDimensionsIsRejected) {
  Fuzzer f({.op = "load"});
  f.expect_file_error("shape (0, 2^62, 2^62)",
                      npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (0, "
                                      "4611686018427387904, 4611686018427387904), }",
                                      0),
                      load, "is too large");
  f.expect_file_error("shape (2^62, 2^62, 0) Fortran order",
                      npy_with_header("{'descr': '<f4', 'fortran_order': True, 'shape': "
                                      "(4611686018427387904, 4611686018427387904, 0), }",
                                      0),
                      load, "is too large");
  // Large but representable zero-sized shapes still read, as in NumPy.
  std::string ok =
      npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 1099511627776), }", 0);
  jx::testing::write_file_bytes(f.temp_dir() + "/ok.npy", ok);
  Array a = jnp::load(f.temp_dir() + "/ok.npy");
  EXPECT_EQ(a.shape(), (jx::Shape{0, int64_t(1) << 40}));
  EXPECT_EQ(a.size(), 0);
}

}  // namespace
