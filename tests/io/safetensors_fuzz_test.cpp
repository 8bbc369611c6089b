// Mutation fuzzing of jnp::load_safetensors: files written by save_safetensors and the one
// tests/golden/gen_safetensors.py wrote are truncated at every byte, bit-flipped, get
// interesting integers in the 8-byte header length, and have every number of their JSON header
// replaced by interesting decimal numbers (0, 2^60, 2^64, -1, 1e3, ...; the header length
// adjusted) so that each shape and offset field sees huge declared sizes. Each mutant reads or
// throws a jx::IOError naming "[load_safetensors]" and the file: no crash, hang or allocation
// of a declared size. Crafted headers (offsets up to 2^60, shapes overflowing, 10^5 nested
// brackets) fail fast.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "jx/numpy.h"
#include "jx/numpy/safetensors.h"
#include "support/str.h"
#include "testing/fuzz.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;
using jx::DType;
using jx::testing::Fuzzer;
using jx::testing::Mutation;
using jx::testing::MutationOptions;

std::string data(const std::string& name) {
  if (const char* d = std::getenv("JX_TEST_DATA")) return std::string(d) + "/io/" + name;
  return std::string(JX_TEST_DATA_DIR) + "/io/" + name;
}

void load(const std::string& path) { jnp::load_safetensors(path); }

std::string written(Fuzzer& f, const std::map<std::string, Array>& tensors,
                    const std::map<std::string, std::string>& metadata = {}) {
  std::string path = f.temp_dir() + "/seed.safetensors";
  jnp::save_safetensors(path, tensors, metadata);
  return jx::testing::read_file_bytes(path);
}

// A file with this JSON header (unpadded) followed by `data`.
std::string with_header(const std::string& json, const std::string& data = "") {
  std::string out(8, '\0');
  jx::testing::put_le(out, 0, json.size(), 8);
  return out + json + data;
}

// Every decimal number of the JSON header replaced by each of these, the length field adjusted.
void number_mutations(const std::string& seed, const std::function<void(const Mutation&)>& sink) {
  static const char* kNumbers[] = {"0",
                                   "1",
                                   "2147483647",
                                   "4294967295",
                                   "4294967296",
                                   "1152921504606846976",
                                   "9223372036854775807",
                                   "18446744073709551615",
                                   "18446744073709551616",
                                   "-1",
                                   "1e3",
                                   "1.5",
                                   "00",
                                   "99999999999999999999999999999999"};
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(uint8_t(seed[size_t(i)])) << (8 * i);
  std::string json = seed.substr(8, n), rest = seed.substr(8 + n);
  Mutation m;
  for (size_t i = 0; i < json.size();) {
    if (!(json[i] >= '0' && json[i] <= '9') || (i > 0 && json[i - 1] == '"')) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < json.size() && json[end] >= '0' && json[end] <= '9') ++end;
    for (const char* number : kNumbers) {
      std::string mutated = json.substr(0, i) + number + json.substr(end);
      m.description = jx::str("header number \"", json.substr(i, end - i), "\" at byte ", 8 + i,
                              " replaced by ", number);
      m.bytes = with_header(mutated, rest);
      sink(m);
    }
    i = end;
  }
}

void fuzz(Fuzzer& f, const std::string& label, const std::string& seed) {
  MutationOptions o;
  o.integer_regions = {{0, 16}};  // the header length; the rest is JSON text and tensor bytes
  f.fuzz_file(label, seed, load, o);
  number_mutations(seed, [&](const Mutation& m) { f.run_file(label, m, load); });
}

TEST(SafetensorsFuzz, MutantsOfWrittenFiles) {
  Fuzzer f({.op = "load_safetensors"});
  fuzz(f, "five dtypes with metadata",
       written(f,
               {{"w", jnp::arange(6).astype(DType::Float32).reshape({2, 3})},
                {"step", jnp::arange(2).astype(DType::Int64)},
                {"mask", jnp::arange(3) > 0},
                {"h", jnp::arange(2).astype(DType::BFloat16)},
                {"empty", jnp::zeros({0, 2}, DType::UInt8)}},
               {{"format", "pt"}}));
  fuzz(f, "one scalar", written(f, {{"s", jnp::array(2.5, DType::Float64)}}));
  std::cout << "[fuzz] written files: " << f.summary() << "\n";
  EXPECT_EQ(f.report().failures, 0u);
}

TEST(SafetensorsFuzz, MutantsOfTheReferenceFile) {
  Fuzzer f({.op = "load_safetensors"});
  fuzz(f, "golden.safetensors", jx::testing::read_file_bytes(data("golden.safetensors")));
  std::cout << "[fuzz] golden.safetensors: " << f.summary() << "\n";
  EXPECT_EQ(f.report().failures, 0u);
}

TEST(SafetensorsFuzz, HugeDeclaredSizesFailFastWithoutAllocating) {
  Fuzzer f({.op = "load_safetensors"});
  f.expect_file_error(
      "data_offsets [0, 2^60]",
      with_header(
          R"({"a":{"dtype":"U8","shape":[1152921504606846976],"data_offsets":[0,1152921504606846976]}})"),
      load, "is truncated: the tensors need 1152921504606846976 data bytes, the file has 0");
  f.expect_file_error(
      "shape [2^31, 2^31] of F64",
      with_header(R"({"a":{"dtype":"F64","shape":[2147483648,2147483648],"data_offsets":[0,8]}})"),
      load, "which does not fit in 2^63 bytes");
  f.expect_file_error(
      "shape [2^62, 2^62]",
      with_header(
          R"({"a":{"dtype":"U8","shape":[4611686018427387904,4611686018427387904],"data_offsets":[0,0]}})"),
      load, "which does not fit in 2^63 bytes");
  std::string header_len(8, '\0');
  jx::testing::put_le(header_len, 0, ~uint64_t(0) >> 1, 8);
  f.expect_file_error("header length 2^63-1", header_len + "{}", load, "over the limit");
  f.expect_file_error(
      "10^5 nested arrays in the metadata",
      with_header("{\"__metadata__\":" + std::string(100000, '[') + std::string(100000, ']') + "}"),
      load, "nesting is too deep");
  EXPECT_EQ(f.report().failures, 0u);
}

// Regression: a shape whose nonzero dimensions overflow was accepted when a 0 came first
// (0 * 2^62 * 2^62 bytes == the 0 bytes of its data_offsets), giving an array whose element
// count and strides overflow int64; [2^62, 2^62, 0] was already refused.
TEST(SafetensorsFuzz, ZeroSizedShapeWithOverflowingDimensionsIsRejected) {
  Fuzzer f({.op = "load_safetensors"});
  for (const char* shape : {"[0,4611686018427387904,4611686018427387904]",
                            "[4611686018427387904,4611686018427387904,0]"})
    f.expect_file_error(shape,
                        with_header(jx::str(R"({"a":{"dtype":"F32","shape":)", shape,
                                            R"(,"data_offsets":[0,0]}})")),
                        load, "which does not fit in 2^63 bytes");
  // A large but representable zero-sized shape still reads.
  std::string path = f.temp_dir() + "/ok.safetensors";
  jx::testing::write_file_bytes(
      path, with_header(R"({"a":{"dtype":"F32","shape":[0,1099511627776],"data_offsets":[0,0]}})"));
  std::map<std::string, Array> t = jnp::load_safetensors(path);
  EXPECT_EQ(t.at("a").shape(), (jx::Shape{0, int64_t(1) << 40}));
}

}  // namespace
