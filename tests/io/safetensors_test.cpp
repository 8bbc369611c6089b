// safetensors files: jnp::save_safetensors / jnp::load_safetensors round trip every dtype
// (scalars, size-0 tensors, metadata); the file made by tests/golden/gen_safetensors.py (by the
// spec, with struct/json) loads with the exact values; every truncation and many corruptions of
// a valid file throw jx::IOError naming the file and the problem, never crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/array_impl.h"
#include "jx/numpy.h"
#include "support/dtype_switch.h"
#include "testing/expect_error.h"
#include "testing/temp_dir.h"

namespace {

namespace fs = std::filesystem;
namespace jnp = jx::numpy;
using jx::Array;
using jx::DType;

std::string data(const std::string& name) {
  if (const char* d = std::getenv("JX_TEST_DATA")) return std::string(d) + "/io/" + name;
  return std::string(JX_TEST_DATA_DIR) + "/io/" + name;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

// gen_safetensors.py's formula (gen_io.py's).
double formula(DType t, int64_t i) {
  if (t == DType::Bool) return i % 3 == 0;
  if (jx::is_signed_integer(t)) return double(3 * i - 7);
  if (jx::is_unsigned_integer(t)) return double(7 * i);
  return 0.5 * double(i) - 1.25;
}

Array make(DType t, const jx::Shape& shape) {
  Array a = jx::detail::empty_array(shape, t, false);
  void* p = jx::detail::raw_data(a);
  // A generic lambda, so that `if constexpr` discards the branches that do not fit T.
  auto fill = [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < a.size(); ++i) {
      if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
        static_cast<T*>(p)[i] = T(formula(t, i), -formula(t, i + 1));
      else if constexpr (std::is_same_v<T, jx::half> || std::is_same_v<T, jx::bhalf>)
        static_cast<T*>(p)[i] = T(float(formula(t, i)));
      else
        static_cast<T*>(p)[i] = static_cast<T>(formula(t, i));
    }
  };
  JX_DTYPE_SWITCH_C(t, T, fill(T{}));
  return a;
}

std::string bytes_of(const Array& a) {
  return std::string(static_cast<const char*>(jx::detail::raw_data(a)), size_t(a.nbytes()));
}

using jx::testing::TempDir;
using jx::testing::expect_error;


// A file whose header is `json` (padded to 8 bytes) followed by `payload`.
std::string file_with(const std::string& json, const std::string& payload) {
  std::string h = json;
  h.append((8 - h.size() % 8) % 8, ' ');
  uint64_t n = h.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + h + payload;
}

TEST(Safetensors, RoundTripEveryDtype) {
  TempDir dir;
  std::map<std::string, Array> in;
  const std::vector<jx::Shape> shapes = {{2, 3}, {}, {0}, {0, 3}, {5}};
  for (int t = 0; t < jx::kNumDTypes; ++t)
    for (size_t s = 0; s < shapes.size(); ++s)
      if (DType(t) != DType::Complex128)  // safetensors has no 128-bit complex
      in[std::string(jx::dtype_name(DType(t))) + "_" + std::to_string(s)] =
          make(DType(t), shapes[s]);
  std::map<std::string, std::string> meta = {
      {"format", "pt"}, {"odd \"key\"\n", "tab\there, back\\slash, \x01, \xc3\xa9"}, {"", ""}};
  std::string path = dir / "all.safetensors";
  jnp::save_safetensors(path, in, meta);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"all.safetensors"});  // no temp file left

  std::string bytes = read_bytes(path);
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes[8], '{');

  std::map<std::string, std::string> got_meta;
  auto out = jnp::load_safetensors(path, got_meta);
  EXPECT_EQ(got_meta, meta);
  ASSERT_EQ(out.size(), in.size());
  for (const auto& [name, a] : in) {
    ASSERT_TRUE(out.count(name)) << name;
    const Array& b = out.at(name);
    EXPECT_EQ(b.dtype(), a.dtype()) << name;
    EXPECT_EQ(b.shape(), a.shape()) << name;
    EXPECT_FALSE(b.weak_type()) << name;
    EXPECT_EQ(bytes_of(b), bytes_of(a)) << name;
  }
  EXPECT_EQ(jnp::load_safetensors(path).size(), in.size());  // overload without metadata
}

TEST(Safetensors, WritesTheReferenceLayout) {
  TempDir dir;
  std::string path = dir / "x.safetensors";
  jnp::save_safetensors(path, {{"b", make(DType::Int16, {2})}, {"a", make(DType::Float32, {1})}},
                        {{"k", "v"}});
  std::string json =
      "{\"__metadata__\":{\"k\":\"v\"},\"a\":{\"dtype\":\"F32\",\"shape\":[1],"
      "\"data_offsets\":[0,4]},\"b\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[4,8]}}";
  std::string payload = bytes_of(make(DType::Float32, {1})) + bytes_of(make(DType::Int16, {2}));
  EXPECT_EQ(read_bytes(path), file_with(json, payload));
  // No tensors, no metadata: "{}" padded to 8.
  jnp::save_safetensors(path, {});
  EXPECT_EQ(read_bytes(path), file_with("{}", ""));
  EXPECT_TRUE(jnp::load_safetensors(path).empty());
}

TEST(Safetensors, ReadsTheGoldenFile) {
  std::map<std::string, std::string> meta;
  auto t = jnp::load_safetensors(data("golden.safetensors"), meta);
  EXPECT_EQ(meta.at("format"), "pt");
  EXPECT_EQ(meta.at("note"), "quote \" backslash \\ tab\t \xc3\xa9 \xe2\x9c\x93");
  const std::map<std::string, std::pair<DType, jx::Shape>> want = {
      {"BOOL", {DType::Bool, {2, 3}}},     {"U8", {DType::UInt8, {5}}},
      {"I8", {DType::Int8, {2, 2}}},       {"I16", {DType::Int16, {3, 1}}},
      {"U16", {DType::UInt16, {4}}},       {"I32", {DType::Int32, {2, 3}}},
      {"U32", {DType::UInt32, {3}}},       {"I64", {DType::Int64, {2, 2}}},
      {"U64", {DType::UInt64, {2}}},       {"F16", {DType::Float16, {2, 3}}},
      {"BF16", {DType::BFloat16, {7}}},    {"F32", {DType::Float32, {2, 3, 2}}},
      {"F64", {DType::Float64, {3}}},      {"scalar_F64", {DType::Float64, {}}},
      {"empty_I32", {DType::Int32, {0, 3}}}};
  ASSERT_EQ(t.size(), want.size());
  for (const auto& [name, ds] : want) {
    ASSERT_TRUE(t.count(name)) << name;
    const Array& a = t.at(name);
    ASSERT_EQ(a.dtype(), ds.first) << name;
    ASSERT_EQ(a.shape(), ds.second) << name;
    std::vector<double> v = a.to_vector<double>();
    ASSERT_EQ(int64_t(v.size()), a.size()) << name;
    for (size_t i = 0; i < v.size(); ++i)
      EXPECT_EQ(v[i], formula(ds.first, int64_t(i))) << name << " element " << i;
  }
}

TEST(Safetensors, EveryTruncationThrows) {
  TempDir dir;
  std::string good = read_bytes(data("golden.safetensors"));
  std::string path = dir / "t.safetensors";
  for (size_t len = 0; len < good.size(); ++len) {
    write_bytes(path, good.substr(0, len));
    expect_error<jx::IOError>([&] { jnp::load_safetensors(path); }, {"load_safetensors", path});
  }
}

TEST(Safetensors, CorruptionsThrowOrLoadNeverCrash) {
  TempDir dir;
  std::string good = read_bytes(data("golden.safetensors"));
  std::string path = dir / "c.safetensors";
  uint64_t n;
  std::memcpy(&n, good.data(), 8);
  int threw = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    // Every byte of the header and length; the data bytes only matter for BOOL.
    if (i >= 8 + n && i % 7 != 0) continue;
    for (unsigned char x : {0x00, 0xFF, 0x22, 0x30, 0x5D}) {
      std::string bad = good;
      if (static_cast<unsigned char>(bad[i]) == x) continue;
      bad[i] = char(x);
      write_bytes(path, bad);
      try {
        auto t = jnp::load_safetensors(path);
        for (const auto& [name, a] : t) (void)a.nbytes();
      } catch (const jx::IOError& e) {
        ++threw;
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      }
    }
  }
  EXPECT_GT(threw, 1000);
}

TEST(Safetensors, ErrorsByText) {
  TempDir dir;
  std::string path = dir / "e.safetensors";
  auto with = [&](const std::string& bytes, std::initializer_list<std::string> parts) {
    write_bytes(path, bytes);
    expect_error<jx::IOError>([&] { jnp::load_safetensors(path); }, parts);
  };
  std::string four(4, '\0');  // one F32 / I32 element
  auto one = [](const std::string& dtype, const std::string& shape, const std::string& off) {
    return "{\"x\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":" + off +
           "}}";
  };
  with("", {"truncated", "8-byte header length"});
  with(std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}", {"over the limit"});
  with(std::string("\x10\0\0\0\0\0\0\0{}", 10), {"truncated", "header length is 16"});
  with(file_with("[]", ""), {"not a JSON object"});
  with(file_with("{\"x\":}", ""), {"malformed JSON", "unexpected character"});
  with(file_with("{\"x\":1,}", ""), {"malformed JSON", "expected a string key"});
  with(file_with("{\"a\":\"\\q\"}", ""), {"malformed JSON", "invalid escape"});
  with(file_with("{\"a\":\"\xff\"}", ""), {"malformed JSON", "UTF-8"});
  with(file_with("{} x", ""), {"malformed JSON", "after the JSON value"});
  with(file_with("{\"a\":1,\"a\":2}", ""), {"duplicate key \"a\""});
  with(file_with(std::string(100, '[') + std::string(100, ']'), ""), {"not a JSON object"});
  with(file_with("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}", ""),
       {"nesting is too deep"});
  with(file_with(one("F8", "[1]", "[0,4]"), four), {"unknown dtype \"F8\""});
  with(file_with(one("F32", "[1]", "[0,4]"), four + "xx"), {"2 bytes after the last tensor"});
  with(file_with(one("F32", "[1]", "[0,4]"), "xx"), {"truncated", "need 4 data bytes"});
  with(file_with(one("F32", "[2]", "[0,4]"), four), {"tensor \"x\"", "does not fit its 4 bytes"});
  with(file_with(one("F32", "[-1]", "[0,4]"), four), {"not a non-negative integer"});
  with(file_with(one("F32", "[1.0]", "[0,4]"), four), {"not a non-negative integer"});
  with(file_with(one("F32", "[1]", "[0]"), four), {"[begin, end]"});
  with(file_with(one("F32", "[1]", "[4,0]"), four), {"end before they begin"});
  with(file_with(one("F32", "[1]", "[4,8]"), four + four), {"must be contiguous"});
  with(file_with(one("F32", "[99999999999,99999999999,9999999]", "[0,4]"), four),
       {"does not fit"});
  with(file_with(one("F32", "[1]", "[0,99999999999999999999999]"), four), {"too large"});
  with(file_with(one("BOOL", "[1]", "[0,1]"), "\x02"), {"BOOL byte 2"});
  with(file_with("{\"x\":{\"dtype\":\"F32\",\"shape\":[]}}", ""), {"lacks one of the keys"});
  with(file_with("{\"x\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4],\"y\":1}}", four),
       {"unexpected key \"y\""});
  with(file_with("{\"__metadata__\":{\"a\":1}}", ""), {"\"__metadata__\" value for \"a\""});
  with(file_with("{\"__metadata__\":[]}", ""), {"\"__metadata__\" that is an array"});
  expect_error<jx::IOError>([&] { jnp::load_safetensors(dir / "missing.safetensors"); },
                  {"cannot be opened", "missing.safetensors"});
}

TEST(Safetensors, SaveErrors) {
  TempDir dir;
  EXPECT_THROW(jnp::save_safetensors(dir / "m.safetensors", {{"__metadata__", make(DType::Int8, {1})}}),
               jx::ValueError);
  expect_error<jx::IOError>(
      [&] { jnp::save_safetensors(dir / "no/such/dir/x.safetensors", {}); },
      {"save_safetensors", "cannot be written"});
  EXPECT_TRUE(dir.entries().empty());
}

}  // namespace
