// Mutation fuzzing of jx::data::load_idx: files written by save_idx (several type codes and
// shapes), plain and gzip-compressed, are truncated at every byte, bit-flipped and get
// interesting integers in the magic number and dimension sizes. For gzip the decompressed IDX
// is also mutated and recompressed, so that the IDX parser, not only zlib's CRC, sees the
// mutations. Each mutant reads or throws a jx::IOError naming "[load_idx]" and the file: no
// crash, hang or allocation of a declared size. Crafted headers declaring 2^31 x 2^31 elements
// fail fast without allocating, compressed or not.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "jx/data.h"
#include "jx/numpy.h"
#include "testing/fuzz.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;
using jx::DType;
using jx::testing::Fuzzer;
using jx::testing::gzip_bytes;
using jx::testing::Mutation;
using jx::testing::MutationOptions;

void load(const std::string& path) { jx::data::load_idx(path); }

std::string written(Fuzzer& f, const Array& a) {
  std::string path = f.temp_dir() + "/seed-idx";
  jx::data::save_idx(path, a, false);
  return jx::testing::read_file_bytes(path);
}

// An IDX header of type `code` and these sizes, then `data`.
std::string idx(uint8_t code, const std::vector<uint32_t>& dims, const std::string& data = "") {
  std::string out = {'\0', '\0', char(code), char(dims.size())};
  out.resize(4 + 4 * dims.size());
  for (size_t i = 0; i < dims.size(); ++i) jx::testing::put_be(out, 4 + 4 * i, dims[i], 4);
  return out + data;
}

std::vector<std::pair<std::string, Array>> seeds() {
  return {{"uint8 [2,3,4]", jnp::arange(24).astype(DType::UInt8).reshape({2, 3, 4})},
          {"int16 [5]", jnp::arange(5).astype(DType::Int16)},
          {"float32 [2,2]", jnp::arange(4).astype(DType::Float32).reshape({2, 2})},
          {"float64 [1,1,1,2]", jnp::arange(2).astype(DType::Float64).reshape({1, 1, 1, 2})},
          {"int32 [0,3]", jnp::zeros({0, 3}, DType::Int32)}};
}

MutationOptions header() {
  MutationOptions o;
  o.integer_regions = {{0, 24}};  // magic number and up to 5 dimension sizes
  o.random_mutations = 300;
  return o;
}

TEST(IdxFuzz, MutantsOfPlainFiles) {
  Fuzzer f({.op = "load_idx"});
  for (const auto& [label, a] : seeds()) f.fuzz_file(label, written(f, a), load, header());
  std::cout << "[fuzz] plain IDX: " << f.summary() << "\n";
  EXPECT_EQ(f.report().failures, 0u);
}

TEST(IdxFuzz, MutantsOfGzipFiles) {
  Fuzzer f({.op = "load_idx"});
  for (const auto& [label, a] : seeds()) {
    std::string raw = written(f, a);
    // The compressed bytes themselves (gzip header, deflate data, CRC-32 and size trailer)...
    MutationOptions gz = header();
    gz.integer_regions = {{0, 16}, {-8, 0}};
    f.fuzz_file(label + " gzip", gzip_bytes(raw), load, gz);
    // ...and the IDX inside, recompressed.
    jx::testing::all_mutations(raw, header(), [&](const Mutation& m) {
      f.run_file(label, {m.description + ", then gzip-compressed", gzip_bytes(m.bytes)}, load);
    });
  }
  std::cout << "[fuzz] gzip IDX: " << f.summary() << "\n";
  EXPECT_EQ(f.report().failures, 0u);
}

// Regression: load_idx allocated the declared shape before reading any data, so a 15-byte file
// declaring 2^31 x 2^31 uint8 asked for 4 EiB (std::bad_alloc, not an IOError) and one
// declaring 2^15 x 2^15 float64 got 8 GiB of address space before finding the data missing.
TEST(IdxFuzz, HugeDeclaredSizesFailFastWithoutAllocating) {
  Fuzzer f({.op = "load_idx"});
  std::string huge = idx(0x08, {0x80000000u, 0x80000000u}, "abc");
  f.expect_file_error("plain, 2^31 x 2^31", huge, load,
                      "is truncated: its data needs 4611686018427387904 bytes for shape "
                      "(2147483648, 2147483648), only 3 remain");
  f.expect_file_error(
      "gzip, 2^31 x 2^31", gzip_bytes(huge), load,
      "its header declares shape (2147483648, 2147483648) (4611686018427387904 bytes), "
      "more than its");
  f.expect_file_error("plain, 2^15 x 2^15 float64", idx(0x0E, {1u << 15, 1u << 15}), load,
                      "is truncated: its data needs 8589934592 bytes");
  f.expect_file_error("gzip, 2^15 x 2^15 float64", gzip_bytes(idx(0x0E, {1u << 15, 1u << 15})),
                      load, "gzip-compressed bytes can hold");
  f.expect_file_error("(2^32-1)^3 float64", idx(0x0E, {~0u, ~0u, ~0u}), load, "too large to hold");
  // A gzip whose IDX declares more than it holds (within what its size could inflate to).
  f.expect_file_error("gzip, declares 4000 bytes, holds 10",
                      gzip_bytes(idx(0x08, {4000}, "0123456789")), load,
                      "is truncated: its data needs 4000 bytes for shape (4000,), only 10 remain");
  EXPECT_EQ(f.report().failures, 0u);
}

// Regression: sizes after a 0 were not checked, so (0, 2^32-1, 2^32-1, 2^32-1) read as an empty
// array whose element count and strides overflow int64. NumPy refuses such a shape.
TEST(IdxFuzz, ZeroSizedShapeWithOverflowingSizesIsRejected) {
  Fuzzer f({.op = "load_idx"});
  f.expect_file_error("(0, (2^32-1) x 3)", idx(0x08, {0, ~0u, ~0u, ~0u}), load,
                      "too large to hold");
  std::string path = f.temp_dir() + "/ok-idx";
  jx::testing::write_file_bytes(path, idx(0x0D, {0, ~0u}));
  Array a = jx::data::load_idx(path);
  EXPECT_EQ(a.shape(), (jx::Shape{0, int64_t(~0u)}));
  EXPECT_EQ(a.dtype(), DType::Float32);
}

}  // namespace
