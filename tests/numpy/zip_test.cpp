// The zip module under .npz and torch.save archives (src/numpy/zip.h): what Python's zipfile
// wrote reads back (tests/golden/gen_zip.py), stored and deflated members round-trip with the
// CRC-32 values zlib's standard check string and Python give, member data is aligned, zip64
// records appear exactly where a (lowered) limit asks for them, and every malformed archive
// throws an IOError naming the problem: crafted ones, and every mutant of valid ones.
#include "numpy/zip.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "jx/error.h"
#include "testing/expect_error.h"
#include "testing/fuzz.h"

namespace {

using jx::detail::ZipMethod;
using jx::detail::ZipReader;
using jx::detail::ZipWriter;
using jx::detail::ZipWriterOptions;
using jx::testing::put_le;

constexpr uint32_t kCheckCrc = 0xCBF43926u;      // CRC-32 of "123456789" (the standard check)
constexpr uint32_t kPatternCrc = 0xFA5FC4CAu;    // of pattern(), by Python's zlib.crc32
constexpr const char* kOp = "zip_test";

std::string data_path(const std::string& name) {
  if (const char* d = std::getenv("JX_TEST_DATA")) return std::string(d) + "/io/" + name;
  return std::string(JX_TEST_DATA_DIR) + "/io/" + name;
}

// bytes(i % 7 for i in range(5000)), as gen_zip.py writes "deflated.bin".
std::string pattern() {
  std::string s;
  for (int i = 0; i < 5000; ++i) s.push_back(char(i % 7));
  return s;
}

uint64_t get_le(const std::string& s, size_t at, int width) {
  uint64_t v = 0;
  for (int i = width; i-- > 0;) v = (v << 8) | uint8_t(s[at + size_t(i)]);
  return v;
}

// An archive written into memory; `fill` adds the members.
std::string archive(const std::function<void(ZipWriter&)>& fill, ZipWriterOptions options = {}) {
  std::string out;
  options.patch = [&](uint64_t at, const void* p, size_t n) {
    out.replace(size_t(at), n, static_cast<const char*>(p), n);
  };
  ZipWriter w([&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); },
              options);
  fill(w);
  w.finish();
  return out;
}

// "a.txt" stored ("123456789"), then "b.bin" deflated (pattern()).
std::string two_members(ZipWriterOptions options = {}) {
  return archive(
      [](ZipWriter& w) {
        w.add("a.txt", {"1234", "56789"});
        std::string p = pattern();
        w.add("b.bin", {p.substr(0, 1000), p.substr(1000)}, ZipMethod::Deflated);
      },
      options);
}

// Every member's uncompressed bytes, by name.
std::map<std::string, std::string> read_all(std::string_view bytes) {
  ZipReader z(bytes.data(), bytes.size(), "t.zip", kOp);
  std::map<std::string, std::string> out;
  std::vector<char> scratch;
  for (const ZipReader::Member& m : z.members()) out[m.name] = std::string(z.read(m, scratch));
  return out;
}

void expect_io(const std::string& bytes, const std::string& needle) {
  jx::testing::expect_error<jx::IOError>([&] { read_all(bytes); }, {"[zip_test] 't.zip' ", needle});
}

TEST(ZipReader, ReadsWhatPythonsZipfileWrote) {
  std::string bytes = jx::testing::read_file_bytes(data_path("zipfile.zip"));
  ZipReader z(bytes.data(), bytes.size(), "zipfile.zip", kOp);
  ASSERT_EQ(z.members().size(), 4u);
  // Names, methods, sizes and CRCs as Python's zipfile reports them (infolist()).
  struct Expected {
    const char* name;
    ZipMethod method;
    uint64_t size, compressed_size, header_offset;
    uint32_t crc;
  };
  const Expected expected[] = {{"check.txt", ZipMethod::Stored, 9, 9, 0, kCheckCrc},
                               {"deflated.bin", ZipMethod::Deflated, 5000, 30, 48, kPatternCrc},
                               {"zip64.bin", ZipMethod::Stored, 100, 100, 120, 0xADAFB2A5u},
                               {"d\xc3\xa9j\xc3\xa0.txt", ZipMethod::Deflated, 5, 7, 279, 0x98AD42B5u}};
  for (size_t i = 0; i < 4; ++i) {
    const ZipReader::Member& m = z.members()[i];
    SCOPED_TRACE(m.name);
    EXPECT_EQ(m.name, expected[i].name);
    EXPECT_EQ(m.method, expected[i].method);
    EXPECT_EQ(m.size, expected[i].size);
    EXPECT_EQ(m.compressed_size, expected[i].compressed_size);
    EXPECT_EQ(m.header_offset, expected[i].header_offset);
    EXPECT_EQ(m.crc, expected[i].crc);
  }
  // zip64.bin's local header carries a zip64 extra field (20 bytes) that the data follows.
  EXPECT_EQ(z.members()[2].data_offset, 120u + 30 + 9 + 20);
  // Stored members are read in place; deflated ones through the scratch buffer.
  const ZipReader::Member* check = z.find("check.txt");
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(z.data(*check), bytes.data() + check->data_offset);
  std::vector<char> scratch;
  EXPECT_EQ(z.read(*check, scratch), "123456789");
  EXPECT_TRUE(scratch.empty());
  EXPECT_EQ(z.read(*z.find("deflated.bin"), scratch), pattern());
  EXPECT_EQ(z.read(*z.find("zip64.bin"), scratch), std::string(100, 'z'));
  EXPECT_EQ(z.read(z.members()[3], scratch), "caf\xc3\xa9");
  EXPECT_EQ(z.find("missing"), nullptr);
  jx::testing::expect_error<jx::IOError>([&] { z.data(*z.find("deflated.bin")); },
                                         "member 'deflated.bin' is compressed (method 8)");
}

TEST(ZipWriter, StoredAndDeflatedMembersRoundTrip) {
  std::string bytes = archive([](ZipWriter& w) {
    w.add("a.txt", {"1234", "56789"});
    std::string p = pattern();
    w.add("b.bin", {p.substr(0, 1000), p.substr(1000)}, ZipMethod::Deflated);
    w.add("empty", {});
    w.add("empty.z", {""}, ZipMethod::Deflated);
  });
  ZipReader z(bytes.data(), bytes.size(), "t.zip", kOp);
  ASSERT_EQ(z.members().size(), 4u);
  const ZipReader::Member &a = z.members()[0], &b = z.members()[1];
  EXPECT_EQ(a.crc, kCheckCrc);
  EXPECT_EQ(b.crc, kPatternCrc);
  EXPECT_EQ(b.method, ZipMethod::Deflated);
  EXPECT_LT(b.compressed_size, 100u);  // a period-7 pattern deflates to almost nothing
  EXPECT_EQ(z.members()[2].crc, 0u);
  EXPECT_EQ(z.members()[3].crc, 0u);
  EXPECT_EQ(z.members()[3].compressed_size, 2u);  // an empty raw deflate stream: 03 00
  std::vector<char> scratch;
  EXPECT_EQ(z.read(a, scratch), "123456789");
  EXPECT_EQ(z.read(b, scratch), pattern());
  EXPECT_EQ(z.read(z.members()[2], scratch), "");
  EXPECT_EQ(z.read(z.members()[3], scratch), "");

  // The local headers, field by field (APPNOTE 4.3.7): no alignment padding by default, and
  // the deflated member's CRC and compressed size patched in after its data.
  EXPECT_EQ(get_le(bytes, 0, 4), 0x04034b50u);
  EXPECT_EQ(get_le(bytes, 4, 2), 20u);  // version needed
  EXPECT_EQ(get_le(bytes, 8, 2), 0u);   // stored
  EXPECT_EQ(get_le(bytes, 10, 4), 0u);  // no timestamps by default (as PyTorch)
  EXPECT_EQ(get_le(bytes, 14, 4), kCheckCrc);
  EXPECT_EQ(get_le(bytes, 18, 4), 9u);
  EXPECT_EQ(get_le(bytes, 22, 4), 9u);
  EXPECT_EQ(get_le(bytes, 28, 2), 0u);  // no extra field
  EXPECT_EQ(a.data_offset, 35u);
  size_t lb = size_t(b.header_offset);
  EXPECT_EQ(lb, 44u);
  EXPECT_EQ(get_le(bytes, lb + 8, 2), 8u);
  EXPECT_EQ(get_le(bytes, lb + 14, 4), kPatternCrc);
  EXPECT_EQ(get_le(bytes, lb + 18, 4), b.compressed_size);
  EXPECT_EQ(get_le(bytes, lb + 22, 4), 5000u);
  // The central directory: rw-r--r-- by default; no zip64 records.
  size_t cd = bytes.find("PK\x01\x02");
  EXPECT_EQ(get_le(bytes, cd + 38, 4), uint64_t(0644) << 16);
  EXPECT_EQ(bytes.find("PK\x06\x06"), std::string::npos);

  // Python's zipfile's conventions: local-time stamps and rw-------.
  std::string stamped = archive([](ZipWriter& w) { w.add("a", {"x"}); },
                                {.timestamps = true, .unix_mode = 0600});
  EXPECT_GT(get_le(stamped, 12, 2) >> 9, 40u);  // the date's year field counts from 1980
  cd = stamped.find("PK\x01\x02");
  EXPECT_EQ(get_le(stamped, cd + 38, 4), uint64_t(0600) << 16);
  // A UTF-8 name sets the language-encoding flag (bit 11).
  std::string utf8 = archive([](ZipWriter& w) { w.add("d\xc3\xa9j\xc3\xa0", {"x"}); });
  EXPECT_EQ(get_le(utf8, 6, 2), 0x800u);
}

TEST(ZipWriter, AlignsMemberData) {
  for (uint64_t limit : {uint64_t(0xFFFFFFFFu), uint64_t(0)}) {
    SCOPED_TRACE(limit);
    std::vector<std::string> names{"x", "ab", "abc/defgh", "archive/data/17"};
    std::string bytes = archive(
        [&](ZipWriter& w) {
          for (size_t i = 0; i < names.size(); ++i)
            w.add(names[i], {std::string(i * 13 + 1, char('a' + i))});
        },
        {.alignment = 64, .zip64_limit = limit});
    ZipReader z(bytes.data(), bytes.size(), "t.zip", kOp);
    ASSERT_EQ(z.members().size(), names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      const ZipReader::Member& m = z.members()[i];
      EXPECT_EQ(m.data_offset % 64, 0u) << m.name;
      EXPECT_EQ(std::string(z.data(m), size_t(m.size)), std::string(i * 13 + 1, char('a' + i)));
    }
    // The padding is PyTorch's "FB" extra field: the first member's header is 30 + 1 + 4 bytes
    // (+ 20 with zip64) before its padding, which fills it up to 64.
    size_t zip64 = limit == 0 ? 20 : 0;
    EXPECT_EQ(get_le(bytes, 28, 2), 64u - 31);  // extra length: everything after the name
    EXPECT_EQ(get_le(bytes, 31 + zip64, 2), 0x4246u);
    EXPECT_EQ(get_le(bytes, 33 + zip64, 2), 64u - 35 - zip64);
  }
}

TEST(ZipWriter, Zip64RecordsWhereTheLimitAsks) {
  // With a limit of 16: "s" has 20 bytes (zip64 sizes, offset 0); "t" has 10 bytes but starts
  // past offset 16 (a zip64 offset only).
  std::string bytes = archive(
      [](ZipWriter& w) {
        w.add("s", {std::string(20, 's')});
        w.add("t", {std::string(10, 't')});
      },
      {.zip64_limit = 16});
  // "s": local sizes 0xFFFFFFFF and a zip64 extra (id 1, 16 bytes: size, compressed size).
  EXPECT_EQ(get_le(bytes, 4, 2), 45u);
  EXPECT_EQ(get_le(bytes, 18, 4), 0xFFFFFFFFu);
  EXPECT_EQ(get_le(bytes, 22, 4), 0xFFFFFFFFu);
  EXPECT_EQ(get_le(bytes, 28, 2), 20u);
  EXPECT_EQ(get_le(bytes, 31, 2), 1u);
  EXPECT_EQ(get_le(bytes, 33, 2), 16u);
  EXPECT_EQ(get_le(bytes, 35, 8), 20u);
  EXPECT_EQ(get_le(bytes, 43, 8), 20u);
  size_t t = 31 + 20 + 20;  // "t"'s local header: plain, sizes in place
  EXPECT_EQ(get_le(bytes, t, 4), 0x04034b50u);
  EXPECT_EQ(get_le(bytes, t + 18, 4), 10u);
  EXPECT_EQ(get_le(bytes, t + 28, 2), 0u);
  // Central directory: "s" has both sizes in its zip64 extra, "t" only its offset (71).
  size_t cd = bytes.find("PK\x01\x02");
  EXPECT_EQ(cd, t + 31 + 10);
  EXPECT_EQ(get_le(bytes, cd + 30, 2), 20u);
  EXPECT_EQ(get_le(bytes, cd + 47 + 4, 8), 20u);
  EXPECT_EQ(get_le(bytes, cd + 47 + 12, 8), 20u);
  size_t cd_t = cd + 46 + 1 + 20;
  EXPECT_EQ(get_le(bytes, cd_t + 20, 4), 10u);
  EXPECT_EQ(get_le(bytes, cd_t + 42, 4), 0xFFFFFFFFu);
  EXPECT_EQ(get_le(bytes, cd_t + 30, 2), 12u);
  EXPECT_EQ(get_le(bytes, cd_t + 47 + 4, 8), t);
  // The zip64 end record and its locator, then the end record with the true (small) values.
  size_t end64 = cd_t + 46 + 1 + 12, cd_size = end64 - cd;
  EXPECT_EQ(get_le(bytes, end64, 4), 0x06064b50u);
  EXPECT_EQ(get_le(bytes, end64 + 32, 8), 2u);
  EXPECT_EQ(get_le(bytes, end64 + 40, 8), cd_size);
  EXPECT_EQ(get_le(bytes, end64 + 48, 8), cd);
  EXPECT_EQ(get_le(bytes, end64 + 56, 4), 0x07064b50u);
  EXPECT_EQ(get_le(bytes, end64 + 64, 8), end64);
  size_t end = end64 + 56 + 20;
  EXPECT_EQ(bytes.size(), end + 22);
  EXPECT_EQ(get_le(bytes, end + 10, 2), 2u);
  EXPECT_EQ(get_le(bytes, end + 12, 4), cd_size);
  EXPECT_EQ(get_le(bytes, end + 16, 4), cd);
  auto all = read_all(bytes);
  EXPECT_EQ(all["s"], std::string(20, 's'));
  EXPECT_EQ(all["t"], std::string(10, 't'));
  // Deflated members: zip64 sizes as soon as zlib's bound on the compressed size reaches the
  // limit (15 bytes may deflate to 15 + 7 or more; 8 bytes to at most 15).
  for (size_t n : {8, 15}) {
    std::string d = archive(
        [&](ZipWriter& w) { w.add("d", {std::string(n, 'd')}, ZipMethod::Deflated); },
        {.zip64_limit = 16});
    EXPECT_EQ(get_le(d, 28, 2), n == 15 ? 20u : 0u) << n;
    EXPECT_EQ(read_all(d)["d"], std::string(n, 'd'));
  }
}

TEST(ZipWriter, MisuseIsAnInternalError) {
  ZipWriter w([](const void*, size_t) {});
  EXPECT_THROW(w.add("d", {"x"}, ZipMethod::Deflated), jx::InternalError);  // no patch
  EXPECT_THROW(w.add(std::string(70000, 'n'), {"x"}), jx::InternalError);
  EXPECT_THROW(ZipWriter([](const void*, size_t) {}, {.alignment = 8192}), jx::InternalError);
}

TEST(ZipReader, MalformedArchivesThrowIOErrorNamingTheProblem) {
  const std::string good = two_members();
  ASSERT_EQ(read_all(good).size(), 2u);
  const size_t cd = good.find("PK\x01\x02"), cd_b = cd + 51, eocd = good.size() - 22;
  auto with = [&](size_t at, uint64_t value, int width) {
    std::string s = good;
    put_le(s, at, value, width);
    return s;
  };
  expect_io("hello", "is not a zip archive (5 bytes, too short");
  expect_io(std::string(100, 'x'), "no end-of-central-directory record");
  expect_io(good.substr(0, good.size() - 1), "no end-of-central-directory record");
  expect_io(with(eocd + 4, 1, 2), "is a multi-disk zip archive");
  expect_io(with(eocd + 16, 0xFFFFFFFFu, 4), "asks for zip64 records that are missing");
  expect_io(with(eocd + 16, cd + 1000, 4), "the central directory lies outside the file");
  expect_io(with(eocd + 10, 1000, 2), "1000 entries cannot fit a central directory of 102 bytes");
  expect_io(with(cd_b, 0x02014b51u, 4), "bad central directory entry 1");
  expect_io(with(cd + 28, 200, 2), "central directory entry 0 overruns the directory");
  expect_io(with(cd + 8, 1, 2), "member 'a.txt' is encrypted");
  expect_io(with(cd + 10, 12, 2), "member 'a.txt' uses compression method 12");
  expect_io(with(cd_b + 42, 5000, 4),
            "is truncated: ran out of data reading the local file header of member 'b.bin'");
  expect_io(with(0, 0x04034b51u, 4), "bad local header signature for member 'a.txt'");
  expect_io(with(30, 'x', 1), "the local header of member 'a.txt' names 'x.txt'");
  std::string long_a = with(cd + 20, 100000, 4);
  put_le(long_a, cd + 24, 100000, 4);
  expect_io(long_a, "is truncated: member 'a.txt' needs 100000 bytes of data at offset 35");
  expect_io(with(cd + 24, 10, 4), "bad sizes for member 'a.txt'");
  expect_io(with(cd_b + 24, 1000000000, 4), "bad sizes for member 'b.bin'");
  // a.txt's data running into b.bin's local header; b.bin's into the central directory.
  std::string into_b = with(cd + 20, 10, 4);
  put_le(into_b, cd + 24, 10, 4);
  expect_io(into_b, "members 'a.txt' and 'b.bin' overlap");
  expect_io(with(cd_b + 20, get_le(good, cd_b + 20, 4) + 1, 4),
            "member 'b.bin' overlaps the central directory");
  // Two disjoint members of one name.
  std::string twice = archive([](ZipWriter& w) {
    w.add("a.txt", {"1"});
    w.add("b.txt", {"2"});
  });
  for (size_t at = twice.find("b.txt"); at != std::string::npos; at = twice.find("b.txt", at))
    twice[at] = 'a';
  expect_io(twice, "it holds two members named 'a.txt'");
  // Data that does not match its CRC or its recorded size.
  std::string flipped = good;
  flipped[35] ^= 1;
  expect_io(flipped, "CRC-32 mismatch in member 'a.txt'");
  expect_io(with(cd_b + 16, kPatternCrc ^ 1, 4), "CRC-32 mismatch in member 'b.bin'");
  expect_io(with(cd_b + 24, 4999, 4), "member 'b.bin' does not inflate to its recorded 4999 bytes");
  expect_io(with(cd_b + 24, 5001, 4), "member 'b.bin' does not inflate to its recorded 5001 bytes");
  std::string garbled = good;
  for (size_t i = 44 + 35; i < 44 + 45; ++i) garbled[i] = char(0xFF);
  expect_io(garbled, "member 'b.bin' does not inflate");

  // zip64 records (every size and offset in them with a limit of 0).
  const std::string g64 = two_members({.zip64_limit = 0});
  ASSERT_EQ(read_all(g64).size(), 2u);
  const size_t cd64 = g64.find("PK\x01\x02"), end64 = g64.find("PK\x06\x06");
  const size_t locator = g64.size() - 22 - 20;
  std::string s = g64;
  put_le(s, locator + 8, g64.size(), 8);
  expect_io(s, "its zip64 end-of-central-directory record (at offset");
  s = g64;
  s[end64 + 3] = 7;
  expect_io(s, "bad zip64 end-of-central-directory signature");
  s = g64;
  put_le(s, cd64 + 46 + 5 + 2, 100, 2);  // a.txt's zip64 extra runs past its extra fields
  expect_io(s, "a bad extra field in 'a.txt'");
  s = g64;
  put_le(s, cd64 + 46 + 5 + 2, 8, 2);  // room for one of its three 8-byte values
  expect_io(s, "short zip64 field in 'a.txt'");
}

// Every mutant of valid archives (jx's plain, aligned and zip64 ones, and Python's) either
// reads or throws an IOError naming "[zip_test]": no crash, no hang, no other exception, no
// allocation of a declared size.
TEST(ZipReader, MutantsReadOrThrowIOError) {
  jx::testing::Fuzzer f({.op = kOp, .require_path = false});
  jx::testing::MutationOptions whole;
  whole.integer_regions = {{0, 0}};
  auto read = [](std::string_view bytes) { read_all(bytes); };
  f.fuzz_bytes("plain", two_members(), read, whole);
  f.fuzz_bytes("aligned zip64", two_members({.alignment = 64, .zip64_limit = 0}), read, whole);
  f.fuzz_bytes("zipfile.zip", jx::testing::read_file_bytes(data_path("zipfile.zip")), read, whole);
  std::cout << "[fuzz] zip archives: " << f.summary() << "\n";
  EXPECT_EQ(f.report().failures, 0u);
}

}  // namespace
