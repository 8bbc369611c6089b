// Mutation fuzzing of the torch.save reader (zip + pickle): every truncation, random bit
// flips (fixed seed) of the whole file and of the pickle alone (re-wrapped in a valid
// archive, so that the CRC does not catch them first), huge declared sizes and deep nesting.
// Each input must load or end in a typed jx::Error: no crash, no hang, no other exception,
// and no allocation of a declared size.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "io/torch_common.h"

namespace {

using namespace torch_test;

// Loads `bytes`; returns true when it loaded, false for a jx::Error; anything else (an
// InternalError, std::bad_alloc, ...) propagates and fails the test.
bool loads(const std::string& bytes) {
  try {
    load_bytes(bytes);
    return true;
  } catch (const jx::Error&) {
    return false;
  }
}

struct Parts {
  std::string file, pickle;
  std::vector<std::pair<std::string, std::string>> storages;
};

Parts cnn_parts() {
  Parts p;
  p.file = read_bytes(data_path("cnn.pt"));
  jx::detail::ZipReader zip(p.file.data(), p.file.size(), "cnn.pt", "test");
  for (const auto& m : zip.members()) {
    std::string bytes(zip.data(m), size_t(m.size));
    if (m.name == "cnn/data.pkl") p.pickle = bytes;
    else if (m.name.rfind("cnn/data/", 0) == 0) p.storages.emplace_back(m.name.substr(9), bytes);
  }
  EXPECT_FALSE(p.pickle.empty());
  return p;
}

TEST(TorchFuzz, TheUnmutatedFilesLoad) {
  Parts p = cnn_parts();
  EXPECT_TRUE(loads(p.file));
  EXPECT_TRUE(loads(archive(p.pickle, p.storages)));
}

TEST(TorchFuzz, EveryTruncationThrows) {
  Parts p = cnn_parts();
  for (size_t n = 0; n < p.file.size(); ++n) EXPECT_FALSE(loads(p.file.substr(0, n))) << n;
  for (size_t n = 0; n < p.pickle.size(); ++n)
    EXPECT_FALSE(loads(archive(p.pickle.substr(0, n), p.storages))) << n;
}

TEST(TorchFuzz, RandomBitFlipsLoadOrThrowTypedErrors) {
  Parts p = cnn_parts();
  std::mt19937_64 rng(20240601);
  int loaded = 0, refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    // Half on the whole file, half on the pickle alone.
    bool whole = trial % 2 == 0;
    std::string bytes = whole ? p.file : p.pickle;
    int flips = 1 + int(rng() % 4);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] ^= char(1 << (rng() % 8));
    (loads(whole ? bytes : archive(bytes, p.storages)) ? loaded : refused)++;
  }
  // Byte-level mutations: random values at random places of the pickle (lengths, opcodes).
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = p.pickle;
    for (int f = 0; f < 3; ++f) bytes[rng() % bytes.size()] = char(rng());
    (loads(archive(bytes, p.storages)) ? loaded : refused)++;
  }
  EXPECT_GT(refused, 300);
  RecordProperty("loaded", loaded);
}

TEST(TorchFuzz, HugeDeclaredSizesThrowWithoutAllocating) {
  auto expect_io = [](const std::string& bytes, const std::string& needle) {
    try {
      load_bytes(bytes);
      ADD_FAILURE() << "loaded; expected: " << needle;
    } catch (const jx::IOError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const int64_t big = int64_t(1) << 60;
  std::string f4 = float_bytes({1, 2, 3, 4});
  auto one = [](int64_t numel, std::vector<int64_t> sizes) {
    return Pickle().ordered_dict().op('(').str("w").tensor("FloatStorage", "0", numel, 0, sizes, {1})
        .op('u').done();
  };
  expect_io(archive(one(big, {4}), {{"0", f4}}), "has a storage '0' of 1152921504606846976 float32");
  expect_io(archive(one(4, {big}), {{"0", f4}}), "reaches outside its storage");
  // String and bytes lengths larger than what is left.
  expect_io(archive(Pickle().op('X').u32(0xFFFFFFFFu).done()), "needs 4294967295 more bytes");
  expect_io(archive(Pickle().op(char(0x8d)).u64(uint64_t(big)).done()), "needs 1152921504606846976 more");
  expect_io(archive(Pickle().op(char(0x8e)).u64(~uint64_t(0)).done()), "more bytes");
  expect_io(archive(Pickle().op(char(0x8b)).u32(0x7FFFFFFF).done()), "does not fit 64 bits");
  expect_io(archive(Pickle().op('T').u32(0x80000000u).done()), "negative length");
  // A zip member (zip64 sizes) of 2^60 bytes.
  std::string z = jx::detail::torch_archive_of(one(4, {4}), {{"0", f4}}, "archive", /*zip64_limit=*/0);
  size_t at = z.rfind("archive/data/0") + 14;  // its central directory entry's zip64 extra
  ASSERT_EQ(z[at], 1);
  for (size_t field : {at + 4, at + 12})
    for (int b = 0; b < 8; ++b) z[field + size_t(b)] = char((uint64_t(big) >> (8 * b)) & 0xFF);
  expect_io(z, "needs 1152921504606846976 bytes");
  // A central directory claiming 2^60 entries (zip64 end record).
  std::string c = jx::detail::torch_archive_of(one(4, {4}), {{"0", f4}}, "archive", 0);
  size_t e64 = c.rfind(std::string("PK\x06\x06", 4));
  for (size_t field : {e64 + 24, e64 + 32})
    for (int b = 0; b < 8; ++b) c[field + size_t(b)] = char((uint64_t(big) >> (8 * b)) & 0xFF);
  expect_io(c, "entries cannot fit a central directory");
  // One storage named by many tensors: the bytes produced are bounded.
  Pickle many;
  many.ordered_dict().op('(');
  for (int i = 0; i < 40; ++i)
    many.str(jx::str("w", i)).tensor("FloatStorage", "0", 4, 0, {4}, {1});
  jx::detail::PickleLimits no_expansion;
  no_expansion.max_expanded_bytes = 0;
  try {
    load_bytes(archive(many.op('u').done(), {{"0", f4}}), no_expansion);
    ADD_FAILURE();
  } catch (const jx::IOError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 16 times their storages' 16 bytes"), std::string::npos)
        << e.what();
  }
}

TEST(TorchFuzz, DeepNestingAndFloodsEndInErrorsQuickly) {
  auto start = std::chrono::steady_clock::now();
  auto expect_io = [](const std::string& pickle, const std::string& needle) {
    try {
      load_bytes(archive(pickle));
      ADD_FAILURE() << "loaded; expected: " << needle;
    } catch (const jx::IOError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const size_t n = 100000;
  // 100000 nested tuples via MARK ... TUPLE.
  expect_io(Pickle().raw(std::string(n, '(')).op(')').raw(std::string(n, 't')).done(), "open MARKs");
  // Nested without marks: TUPLE1 around TUPLE1 around ...
  expect_io(Pickle().op(')').raw(std::string(n, char(0x85))).done(), "nested more than 32 deep");
  // EMPTY_LIST + MARK repeated, closed by APPENDS.
  std::string lists;
  for (size_t i = 0; i < n; ++i) lists += "](";
  expect_io(Pickle().raw(lists).raw(std::string(n, 'e')).done(), "open MARKs");
  std::string shallow;  // APPEND-nesting without marks
  for (size_t i = 0; i < n; ++i) shallow += "]";
  expect_io(Pickle().raw(shallow).raw(std::string(n - 1, 'a')).done(), "nested more than 32 deep");
  // A list appended to itself (a cycle), and a dict filled after it was nested.
  expect_io(Pickle().op(']').op('q').op(0).op('h').op(0).op('a').done(), "self-referencing");
  expect_io(Pickle().op('}').op('q').op(0).op(char(0x85)).op('h').op(0).str("k").op('N').op('s').done(),
            "self-referencing");
  // Stack and memo floods, a GET of nothing, an unbalanced program.
  expect_io(Pickle().raw(std::string(size_t(1) << 19, 'N')).done(), "the stack exceeds");
  expect_io(Pickle().op('N').op('r').u32(0xFFFFFFFFu).op('j').u32(7).done(), "never stored");
  expect_io(Pickle().op('t').done(), "closes a MARK that was never set");
  expect_io(Pickle().op('0').done(), "pops from an empty stack");
  expect_io(std::string("\x80\x02", 2), "truncated");
  // A memo limit reached with PUTs.
  jx::detail::PickleLimits small;
  small.max_memo = 100;
  Pickle puts;
  puts.op('N');
  for (uint32_t i = 0; i < 200; ++i) puts.op('r').u32(i);
  try {
    load_bytes(archive(puts.done()), small);
    ADD_FAILURE();
  } catch (const jx::IOError& e) {
    EXPECT_NE(std::string(e.what()).find("the memo exceeds 100 entries"), std::string::npos) << e.what();
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);
}

}  // namespace
