// .npy and .npz files: what jnp::save writes equals what NumPy writes byte for byte; files
// NumPy wrote (tests/data/io, made by tests/golden/gen_io.py) load with the right values;
// malformed files throw jx::IOError naming the file and the problem, never crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/array_impl.h"
#include "jx/numpy.h"
#include "numpy/io_npy.h"
#include "support/dtype_switch.h"
#include "support/str.h"
#include "testing/expect_error.h"
#include "testing/temp_dir.h"

namespace io_testing {

namespace fs = std::filesystem;
using jx::Array;

inline std::string data_dir() {
  if (const char* d = std::getenv("JX_TEST_DATA")) return std::string(d) + "/io";
  return std::string(JX_TEST_DATA_DIR) + "/io";
}
inline std::string data(const std::string& name) { return data_dir() + "/" + name; }

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}
inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

// gen_io.py's formula: element i is 3i-7 (signed), 7i (unsigned), 0.5i-1.25 (float), i%3==0.
inline double formula(jx::DType t, int64_t i) {
  if (t == jx::DType::Bool) return i % 3 == 0;
  if (jx::is_signed_integer(t)) return double(3 * i - 7);
  if (jx::is_unsigned_integer(t)) return double(7 * i);
  return 0.5 * double(i) - 1.25;
}

inline Array make(jx::DType t, const jx::Shape& shape) {
  Array a = jx::detail::empty_array(shape, t, false);
  void* p = jx::detail::raw_data(a);
  JX_DTYPE_SWITCH(t, T, {
    for (int64_t i = 0; i < a.size(); ++i) {
      if constexpr (std::is_same_v<T, jx::half> || std::is_same_v<T, jx::bhalf>)
        static_cast<T*>(p)[i] = T(float(formula(t, i)));
      else
        static_cast<T*>(p)[i] = static_cast<T>(formula(t, i));
    }
  });
  return a;
}

inline void expect_formula(const Array& a, jx::DType t, const jx::Shape& shape,
                           const std::string& what) {
  ASSERT_EQ(a.dtype(), t) << what;
  ASSERT_EQ(a.shape(), shape) << what;
  EXPECT_FALSE(a.weak_type()) << what;
  std::vector<double> v = a.to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_EQ(v[i], formula(t, int64_t(i))) << what << " element " << i;
}

// A fresh directory under the system temp dir, removed with its contents at the end.
using jx::testing::TempDir;
using jx::testing::expect_error;


}  // namespace io_testing

using namespace io_testing;
namespace jnp = jx::numpy;

namespace {

const char* kDtypes[] = {"bool",   "int8",   "int16",  "int32",   "int64",   "uint8",
                         "uint16", "uint32", "uint64", "float16", "float32", "float64"};

std::string hex_of(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string r;
  for (unsigned char c : s) {
    r.push_back(d[c >> 4]);
    r.push_back(d[c & 15]);
  }
  return r;
}

void expect_same_file(const std::string& ours, const std::string& numpys) {
  std::string a = read_bytes(ours), b = read_bytes(numpys);
  EXPECT_EQ(a.size(), b.size()) << numpys;
  EXPECT_EQ(hex_of(a), hex_of(b)) << numpys;
}

Array scalar_f32(float v) {
  Array a = jx::detail::empty_array({}, jx::float32);
  *jx::detail::data<float>(a) = v;
  return a;
}

void expect_equal_arrays(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.nbytes(), want.nbytes()) << what;
  EXPECT_EQ(std::memcmp(jx::detail::raw_data(got), jx::detail::raw_data(want), want.nbytes()), 0)
      << what;
}

// Deterministic bytes for any dtype (bools 0/1 so that they stay valid C++ bools).
Array pattern(jx::DType t, const jx::Shape& shape, uint32_t seed) {
  Array a = jx::detail::empty_array(shape, t, false);
  auto* p = static_cast<unsigned char*>(jx::detail::raw_data(a));
  uint32_t s = seed * 2654435761u + 1;
  for (size_t i = 0; i < a.nbytes(); ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = t == jx::bool_ ? (s >> 24) & 1 : (s >> 24);
  }
  return a;
}

}  // namespace

// ---- .npy: writing --------------------------------------------------------------------------

TEST(Npy, SaveMatchesNumPyByteForByte) {
  TempDir dir;
  for (const char* name : kDtypes) {
    jx::DType t = jx::dtype_from_name(name);
    std::string ours = dir / (std::string(name) + ".npy");
    jnp::save(ours, make(t, {2, 3}));
    expect_same_file(ours, data(std::string(name) + "_2x3.npy"));
  }
  jnp::save(dir / "s.npy", scalar_f32(3.5f));
  expect_same_file(dir / "s.npy", data("float32_scalar.npy"));
  jnp::save(dir / "e.npy", make(jx::int32, {0, 3}));
  expect_same_file(dir / "e.npy", data("int32_empty_0x3.npy"));
  jnp::save(dir / "3d.npy", make(jx::float64, {2, 3, 4}));
  expect_same_file(dir / "3d.npy", data("float64_2x3x4.npy"));
  jnp::save(dir / "1d.npy", make(jx::int16, {5}));
  expect_same_file(dir / "1d.npy", data("int16_5.npy"));
  jnp::save(dir / "4d.npy", make(jx::uint8, {1, 1, 1, 1}));
  expect_same_file(dir / "4d.npy", data("uint8_1x1x1x1.npy"));
  jnp::save(dir / "b.npy", Array(true));
  expect_same_file(dir / "b.npy", data("bool_scalar.npy"));
  // bfloat16 as jnp.save writes it (descr '<V2').
  jnp::save(dir / "bf.npy", make(jx::bfloat16, {2, 3}));
  expect_same_file(dir / "bf.npy", data("bfloat16_2x3.npy"));
}

TEST(Npy, SaveAppendsExtensionAndLeavesNoTemporaryFile) {
  TempDir dir;
  jnp::save(dir / "weights", make(jx::float32, {2, 3}));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"weights.npy"});
  // Overwriting replaces the file whole.
  jnp::save(dir / "weights.npy", make(jx::int8, {4}));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"weights.npy"});
  expect_formula(jnp::load(dir / "weights.npy"), jx::int8, {4}, "overwritten");
}

TEST(Npy, SaveErrors) {
  TempDir dir;
  expect_error<jx::IOError>([&] { jnp::save(dir / "no/such/dir/x.npy", make(jx::float32, {2})); },
                  {"[save]", "no/such/dir/x.npy", "No such file or directory"});
  EXPECT_THROW(jnp::save(dir / "x.npy", Array()), jx::ValueError);
  EXPECT_TRUE(dir.entries().empty());
}

// ---- .npy: reading --------------------------------------------------------------------------

TEST(Npy, LoadsEveryDtypeNumPyWrites) {
  for (const char* name : kDtypes) {
    jx::DType t = jx::dtype_from_name(name);
    expect_formula(jnp::load(data(std::string(name) + "_2x3.npy")), t, {2, 3}, name);
  }
  Array s = jnp::load(data("float32_scalar.npy"));
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.item<float>(), 3.5f);
  expect_formula(jnp::load(data("int32_empty_0x3.npy")), jx::int32, {0, 3}, "empty");
  expect_formula(jnp::load(data("float64_2x3x4.npy")), jx::float64, {2, 3, 4}, "3d");
  expect_formula(jnp::load(data("int16_5.npy")), jx::int16, {5}, "1d");
  expect_formula(jnp::load(data("uint8_1x1x1x1.npy")), jx::uint8, {1, 1, 1, 1}, "4d");
  EXPECT_TRUE(jnp::load(data("bool_scalar.npy")).item<bool>());
  expect_formula(jnp::load(data("bfloat16_2x3.npy")), jx::bfloat16, {2, 3}, "bfloat16 from '<V2'");
}

TEST(Npy, LoadsBigEndianFortranAndNewerVersions) {
  expect_formula(jnp::load(data("be_float32_2x3.npy")), jx::float32, {2, 3}, ">f4");
  expect_formula(jnp::load(data("be_int64_2x3.npy")), jx::int64, {2, 3}, ">i8");
  expect_formula(jnp::load(data("be_uint16_2x3.npy")), jx::uint16, {2, 3}, ">u2");
  expect_formula(jnp::load(data("be_float16_2x3.npy")), jx::float16, {2, 3}, ">f2");
  expect_formula(jnp::load(data("be_float64_2x3x4.npy")), jx::float64, {2, 3, 4}, ">f8 3d");
  expect_formula(jnp::load(data("f_float32_2x3.npy")), jx::float32, {2, 3}, "fortran 2d");
  expect_formula(jnp::load(data("f_int32_2x3x4.npy")), jx::int32, {2, 3, 4}, "fortran 3d");
  expect_formula(jnp::load(data("f_be_float64_3x2.npy")), jx::float64, {3, 2},
                 "fortran big-endian");
  expect_formula(jnp::load(data("v2_float32_2x3.npy")), jx::float32, {2, 3}, "version 2.0");
  expect_formula(jnp::load(data("v3_int8_2x3.npy")), jx::int8, {2, 3}, "version 3.0");
}

TEST(Npy, LoadsExtremeValues) {
  auto i = jnp::load(data("extremes_int64.npy")).to_vector<int64_t>();
  EXPECT_EQ(i, (std::vector<int64_t>{INT64_MIN, INT64_MAX, 0}));
  auto u = jnp::load(data("extremes_uint64.npy")).to_vector<uint64_t>();
  EXPECT_EQ(u, (std::vector<uint64_t>{0, UINT64_MAX}));
  auto f = jnp::load(data("extremes_float32.npy")).to_vector<float>();
  ASSERT_EQ(f.size(), 5u);
  EXPECT_TRUE(std::isnan(f[0]));
  EXPECT_EQ(f[1], INFINITY);
  EXPECT_EQ(f[2], -INFINITY);
  EXPECT_TRUE(f[3] == 0 && std::signbit(f[3]));
  uint32_t bits;
  std::memcpy(&bits, &f[4], 4);
  EXPECT_EQ(bits, 1u);  // the smallest subnormal
}

TEST(Npy, RoundTripsEveryDtypeAndShape) {
  TempDir dir;
  const jx::Shape shapes[] = {{}, {0}, {3, 0, 2}, {1}, {7}, {3, 5}, {2, 3, 4, 5}, {350, 401}};
  uint32_t seed = 0;
  for (int t = 0; t < jx::kNumDTypes; ++t) {
    for (const jx::Shape& s : shapes) {
      Array a = pattern(jx::DType(t), s, ++seed);
      std::string p = dir / "rt.npy";
      jnp::save(p, a);
      expect_equal_arrays(jnp::load(p), a, jx::type_str(a.dtype(), s));
    }
  }
}

TEST(Npy, RefusesUnsupportedDtypes) {
  EXPECT_EQ(jnp::load(data("complex64_2.npy")).dtype(), jx::complex64);  // supported now
  expect_error<jx::IOError>([] { jnp::load(data("str_2.npy")); }, {"unsupported dtype '<U2'"});
  expect_error<jx::IOError>([] { jnp::load(data("structured_2.npy")); },
                  {"structured_2.npy", "unsupported dtype: structured"});
}

TEST(Npy, MalformedFilesThrowIOError) {
  TempDir dir;
  expect_error<jx::IOError>([&] { jnp::load(dir / "missing.npy"); },
                  {"[load]", "missing.npy", "cannot be opened", "No such file"});
  expect_error<jx::IOError>([&] { jnp::load(dir.path()); }, {"is a directory"});
  std::string good = read_bytes(data("float32_2x3.npy"));
  std::string p = dir / "bad.npy";
  auto with = [&](std::string bytes, std::initializer_list<std::string> parts) {
    write_bytes(p, bytes);
    expect_error<jx::IOError>([&] { jnp::load(p); }, parts);
  };
  std::string b = good;
  b[1] = 'X';
  with(b, {"bad.npy", "magic string"});
  with("", {"truncated", "magic string"});
  b = good;
  b[6] = 4;
  with(b, {"unsupported .npy format version 4.0"});
  with(good.substr(0, 9), {"truncated", "array header length"});
  with(good.substr(0, 60), {"truncated", "array header"});
  with(good.substr(0, good.size() - 1), {"truncated", "needs 24 data bytes, the file has 23"});
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string r = good;
    size_t at = r.find(from);
    EXPECT_NE(at, std::string::npos);
    r.replace(at, from.size(), to);
    return r;
  };
  with(replace("'descr'", "'descx'"), {"unexpected key 'descx'"});
  with(replace("False", "Maybe"), {"fortran_order is not a valid bool"});
  with(replace("(2, 3)", "(2,-3)"), {"shape is not a tuple of non-negative integers"});
  with(replace("(2, 3)", "(9, 3)"), {"truncated", "needs 108 data bytes, the file has 24"});
  with(replace("(2, 3)", "(99999999999, 99999999999, 99999999999)"), {"too large"});
  with(replace("{", "["), {"cannot parse header"});
  with(replace("'<f4'", "'<c32'"), {"unsupported dtype '<c32'"});
  // A header longer than NumPy reads from untrusted files.
  b = good;
  b[8] = char(0xff);
  b[9] = char(0x7f);
  with(b, {"header is 32767 bytes"});
  // An .npz archive is pointed at load_npz.
  expect_error<jx::IOError>([] { jnp::load(data("savez.npz")); }, {"savez.npz", "jnp::load_npz"});
}

TEST(Npy, EveryTruncationAndByteFlipIsAnIOErrorNeverACrash) {
  TempDir dir;
  std::string p = dir / "t.npy";
  for (const char* name : {"float64_2x3x4.npy", "f_be_float64_3x2.npy", "v3_int8_2x3.npy"}) {
    std::string good = read_bytes(data(name));
    for (size_t n = 0; n < good.size(); ++n) {
      write_bytes(p, good.substr(0, n));
      EXPECT_THROW(jnp::load(p), jx::IOError) << name << " cut at " << n;
    }
    // Any corruption of the header either still parses or is an IOError.
    uint32_t s = 12345;
    for (int trial = 0; trial < 150; ++trial) {
      std::string bad = good;
      s = s * 1664525u + 1013904223u;
      size_t at = (s >> 8) % 128;
      bad[at] = char(s >> 24);
      write_bytes(p, bad);
      try {
        jnp::load(p);
      } catch (const jx::IOError&) {
      }
    }
  }
}

TEST(Npy, BoolBytesOtherThanOneAreTrue) {
  TempDir dir;
  std::string b = read_bytes(data("bool_2x3.npy"));
  b[b.size() - 1] = 2;  // NumPy reads any nonzero byte as True
  write_bytes(dir / "b.npy", b);
  auto v = jnp::load(dir / "b.npy").to_vector<uint8_t>();
  EXPECT_EQ(v.back(), 1);
}

// ---- .npz -----------------------------------------------------------------------------------

namespace {

void expect_numpy_archive(const jnp::NpzFile& z, const std::string& what) {
  EXPECT_EQ(z.files(), (std::vector<std::string>{"a", "b", "c", "d"})) << what;
  expect_formula(z["a"], jx::float32, {2, 3}, what + " a");
  expect_formula(z["b"], jx::int64, {5}, what + " b");
  EXPECT_EQ(z["c"].dtype(), jx::bool_);
  EXPECT_TRUE(z["c"].item<bool>()) << what;
  expect_formula(z["d"], jx::float16, {0, 4}, what + " d");
}

}  // namespace

TEST(Npz, LoadsArchivesNumPyWrites) {
  expect_numpy_archive(jnp::load_npz(data("savez.npz")), "savez");
  expect_numpy_archive(jnp::load_npz(data("savez_compressed.npz")), "savez_compressed");
  expect_numpy_archive(jnp::load_npz(data("savez_zip64.npz")), "savez zip64");
  expect_numpy_archive(jnp::load_npz(data("savez_compressed_zip64.npz")), "savez_compressed zip64");
  jnp::NpzFile p = jnp::load_npz(data("savez_positional.npz"));
  EXPECT_EQ(p.files(), (std::vector<std::string>{"arr_0", "arr_1"}));
  expect_formula(p["arr_0"], jx::int32, {3}, "arr_0");
  expect_formula(p["arr_1"], jx::uint8, {2, 2}, "arr_1");
  jnp::NpzFile big = jnp::load_npz(data("savez_compressed_big.npz"));
  std::vector<float> v = big["big"].to_vector<float>();
  ASSERT_EQ(v.size(), 1000000u);
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], i % 997 == 0 ? 0.5f : 0.0f) << i;
  expect_formula(big["small"], jx::float64, {2, 3}, "small");
}

TEST(Npz, RoundTripsStoredAndCompressed) {
  TempDir dir;
  std::vector<std::pair<std::string, Array>> arrays;
  uint32_t seed = 0;
  for (int t = 0; t < jx::kNumDTypes; ++t)
    arrays.emplace_back(jx::dtype_name(jx::DType(t)), pattern(jx::DType(t), {3, 5}, ++seed));
  arrays.emplace_back("scalar", scalar_f32(2.5f));
  arrays.emplace_back("empty", pattern(jx::float32, {0, 7}, 1));
  arrays.emplace_back("large", make(jx::float32, {400, 300}));     // more than one deflate chunk
  arrays.emplace_back("noise", pattern(jx::uint8, {3 << 20}, 9));  // incompressible, > 1 MiB
  for (bool compress : {false, true}) {
    std::string p = dir / (compress ? "c" : "s");
    if (compress)
      jnp::savez_compressed(p, arrays);
    else
      jnp::savez(p, arrays);
    jnp::NpzFile z = jnp::load_npz(p + ".npz");
    ASSERT_EQ(z.size(), arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
      EXPECT_EQ(z.files()[i], arrays[i].first);
      expect_equal_arrays(z[arrays[i].first], arrays[i].second, arrays[i].first);
    }
  }
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"c.npz", "s.npz"}));
  EXPECT_LT(read_bytes(dir / "c.npz").size(), read_bytes(dir / "s.npz").size());
}

TEST(Npz, Zip64RecordsRoundTrip) {
  // Archives past 4 GiB need zip64 records; a lowered limit writes them for small arrays.
  TempDir dir;
  std::vector<std::pair<std::string, Array>> arrays{{"a", make(jx::float32, {2, 3})},
                                                    {"b", pattern(jx::int16, {300, 7}, 3)},
                                                    {"c", make(jx::bool_, {})}};
  for (bool compress : {false, true}) {
    std::string p = dir / (compress ? "c64.npz" : "s64.npz");
    jx::detail::write_npz(p, arrays, compress, 16);
    std::string bytes = read_bytes(p);
    EXPECT_NE(bytes.find("PK\x06\x06"), std::string::npos);  // zip64 end of central directory
    EXPECT_NE(bytes.find("PK\x06\x07"), std::string::npos);  // and its locator
    jnp::NpzFile z = jnp::load_npz(p);
    ASSERT_EQ(z.size(), 3u);
    for (const auto& [name, a] : arrays) expect_equal_arrays(z[name], a, name);
  }
}

TEST(Npz, MembersAreTheNpyFilesNumPyWrites) {
  // A stored member's bytes sit in the archive verbatim: find the .npy NumPy wrote inside ours.
  TempDir dir;
  jnp::savez(dir / "z.npz", std::map<std::string, Array>{{"a", make(jx::float32, {2, 3})}});
  std::string archive = read_bytes(dir / "z.npz");
  std::string npy = read_bytes(data("float32_2x3.npy"));
  EXPECT_NE(archive.find(npy), std::string::npos);
  EXPECT_EQ(archive.compare(0, 4, "PK\x03\x04"), 0);
}

TEST(Npz, PositionalNamesAndLookupErrors) {
  TempDir dir;
  jnp::savez(dir / "p", std::vector<Array>{make(jx::int32, {2}), make(jx::bool_, {3})});
  jnp::NpzFile z = jnp::load_npz(dir / "p.npz");
  EXPECT_EQ(z.files(), (std::vector<std::string>{"arr_0", "arr_1"}));
  EXPECT_TRUE(z.contains("arr_1"));
  EXPECT_FALSE(z.contains("arr_2"));
  try {
    (void)z["weights"];
    FAIL();
  } catch (const jx::IndexError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "'weights' is not in the archive; its arrays are: 'arr_0', 'arr_1'"),
              std::string::npos)
        << e.what();
  }
  std::vector<std::pair<std::string, Array>> twice{{"x", Array(1)}, {"x", Array(2)}};
  EXPECT_THROW(jnp::savez(dir / "d", twice), jx::ValueError);
}

TEST(Npz, MalformedArchivesThrowIOError) {
  TempDir dir;
  expect_error<jx::IOError>([&] { jnp::load_npz(dir / "missing.npz"); },
                  {"[load_npz]", "missing.npz", "cannot be opened"});
  expect_error<jx::IOError>([] { jnp::load_npz(data("float32_2x3.npy")); }, {"is an .npy file", "jnp::load"});
  std::string p = dir / "bad.npz";
  write_bytes(p, "hello");
  expect_error<jx::IOError>([&] { jnp::load_npz(p); }, {"bad.npz", "not a zip archive"});
  write_bytes(p, std::string(100, 'x'));
  expect_error<jx::IOError>([&] { jnp::load_npz(p); }, {"no end-of-central-directory record"});

  // A flipped data byte in a stored member: CRC-32 mismatch.
  std::string z = read_bytes(data("savez.npz"));
  size_t at = z.find("\x93NUMPY");
  ASSERT_NE(at, std::string::npos);
  std::string bad = z;
  bad[at + 130] ^= 0x40;
  write_bytes(p, bad);
  expect_error<jx::IOError>([&] { jnp::load_npz(p); }, {"CRC-32 mismatch in member 'a.npy'"});
  // A corrupt deflate stream.
  std::string c = read_bytes(data("savez_compressed.npz"));
  bad = c;
  for (size_t i = 60; i < 90; ++i) bad[i] = char(0xff);
  write_bytes(p, bad);
  EXPECT_THROW(jnp::load_npz(p), jx::IOError);
  // Every truncation of a stored and of a compressed archive.
  // (every length of the compressed one; every 5th of the others, to keep the test quick)
  const std::string archives[] = {c, z, read_bytes(data("savez_zip64.npz"))};
  for (size_t k = 0; k < 3; ++k) {
    const std::string& good = archives[k];
    for (size_t n = 0; n < good.size(); n += (k == 0 ? 1 : 5)) {
      write_bytes(p, good.substr(0, n));
      EXPECT_THROW(jnp::load_npz(p), jx::IOError) << "cut at " << n;
    }
  }
}

TEST(Npz, RandomCorruptionIsAnIOErrorNeverACrash) {
  TempDir dir;
  std::string p = dir / "f.npz";
  for (const char* name : {"savez.npz", "savez_compressed.npz", "savez_compressed_zip64.npz"}) {
    std::string good = read_bytes(data(name));
    uint32_t s = 777;
    for (int trial = 0; trial < 300; ++trial) {
      std::string bad = good;
      for (int k = 0; k < 3; ++k) {
        s = s * 1664525u + 1013904223u;
        bad[(s >> 4) % bad.size()] = char(s >> 24);
      }
      write_bytes(p, bad);
      try {
        jnp::load_npz(p);
      } catch (const jx::IOError&) {
      }
    }
  }
}
