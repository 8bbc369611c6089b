// support/json.h under hostile input: mutants of JSON documents (safetensors headers,
// checkpoint-like descriptions) parse or throw JsonSyntaxError with an offset inside the text;
// 10^5 nested brackets give a typed depth error, not a stack overflow; long strings, invalid
// UTF-8, huge numbers and 200k-key objects are handled. Also tests the fuzz harness itself
// (tests/testing/fuzz.h): its generators are exact and reproducible, and its guards do report
// a huge allocation, a wrong exception type or message, a hang and a crash.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/array_impl.h"
#include "jx/error.h"
#include "support/json.h"
#include "support/str.h"
#include "testing/fuzz.h"

namespace {

using jx::detail::Json;
using jx::detail::JsonSyntaxError;
using jx::detail::parse_json;
using jx::testing::Fuzzer;
using jx::testing::Mutation;
using jx::testing::MutationOptions;

// parse_json as a reader: its syntax errors become the typed error a caller would throw, and an
// offset outside the text is a bug.
void parse(std::string_view text) {
  try {
    parse_json(text.data(), text.size());
  } catch (const JsonSyntaxError& e) {
    if (e.offset > text.size())
      throw std::logic_error(jx::str("offset ", e.offset, " is past the end (", text.size(), ")"));
    throw jx::IOError(jx::str("[parse_json] ", e.what(), " at byte ", e.offset));
  }
}

// The syntax error parse_json reports for `text`, or "" when it parses.
std::string syntax_error(const std::string& text) {
  try {
    parse_json(text.data(), text.size());
  } catch (const JsonSyntaxError& e) {
    EXPECT_LE(e.offset, text.size());
    return e.what();
  }
  return "";
}

const char* kDescription = R"({
  "format": "jx.checkpoint", "version": 1, "step": 18446744073709551615,
  "tree": {"kind": "dict", "keys": ["params", "opt_state"], "children": [
    {"kind": "leaf", "dtype": "float32", "shape": [2, 3], "offset": 0, "nbytes": 24},
    {"kind": "tuple", "children": [null, true, false, -1.5e-7, 0, {"empty": {}}, []]}]},
  "note": "tab\t quote\" backslash\\ \u00e9 \ud83d\ude00 \u0000 ok \u00e9t\u00e9 \u2603"
})";

const char* kHeader =
    R"({"__metadata__":{"format":"pt"},"b":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},)"
    R"("w":{"dtype":"F32","shape":[2,3],"data_offsets":[16,40]}})";

TEST(JsonFuzz, MutantsOfDocuments) {
  Fuzzer f({.op = "parse_json", .require_path = false});
  MutationOptions o;
  o.integer_regions = {{0, 0}};  // the whole text
  f.fuzz_bytes("checkpoint-like description", kDescription, parse, o);
  f.fuzz_bytes("safetensors header", kHeader, parse, o);
  std::cout << "[fuzz] JSON documents: " << f.summary() << "\n";
  EXPECT_EQ(f.report().failures, 0u);
}

TEST(JsonFuzz, DeepNestingIsATypedDepthError) {
  Fuzzer f({.op = "parse_json", .require_path = false});
  for (const std::string& open :
       {std::string("["), std::string("{\"a\":"), std::string("[{\"\":")}) {
    std::string deep;
    for (int i = 0; i < 100000; ++i) deep += open;
    f.expect_bytes_error(jx::str("10^5 x ", open), deep, parse, "nesting is too deep at byte ");
  }
  // The default limit is 64 levels below the top value.
  EXPECT_EQ(syntax_error(std::string(65, '[') + std::string(65, ']')), "");
  EXPECT_EQ(syntax_error(std::string(66, '[') + std::string(66, ']')), "nesting is too deep");
  std::string ok = std::string(1000, '[') + std::string(1000, ']');
  EXPECT_NO_THROW(parse_json(ok.data(), ok.size(), 1000));
  EXPECT_EQ(f.report().failures, 0u);
}

TEST(JsonFuzz, LongStrings) {
  std::string body;
  for (int i = 0; i < 100000; ++i) body += "ab\\n\\u00e9";  // 5 bytes each once decoded
  std::string text = "\"" + body + "\"";
  Json v = parse_json(text.data(), text.size());
  ASSERT_EQ(v.kind, Json::Str);
  ASSERT_EQ(v.s.size(), 500000u);
  EXPECT_EQ(v.s.substr(0, 5), "ab\n\xC3\xA9");
  EXPECT_EQ(syntax_error("\"" + std::string(1 << 20, 'x')), "unterminated string");
  EXPECT_EQ(syntax_error("\"" + std::string(1000, 'x') + "\\"), "unterminated string");
  std::string emoji = "\"\\ud83d\\ude00\"";
  EXPECT_EQ(parse_json(emoji.data(), emoji.size()).s, "\xF0\x9F\x98\x80");
}

TEST(JsonFuzz, InvalidUtf8AndSurrogates) {
  for (const char* bad : {"\xC0\x80",          // overlong NUL
                          "\xC1\xBF",          // overlong
                          "\xE0\x80\xAF",      // overlong '/'
                          "\xED\xA0\x80",      // an encoded surrogate
                          "\xF4\x90\x80\x80",  // past U+10FFFF
                          "\xF5\x80\x80\x80",  // no such lead byte
                          "\x80",              // a lone continuation byte
                          "\xC3",              // cut short by the closing quote
                          "\xE2\x82",          // cut short
                          "\xFF"})
    EXPECT_EQ(syntax_error(jx::str("\"a", bad, "\"")), "invalid UTF-8 in a string") << bad;
  std::string cut = "\"\xF0\x9F\x98";  // the text ends inside the sequence
  EXPECT_EQ(syntax_error(cut), "invalid UTF-8 in a string");
  for (const char* bad : {R"("\ud800")", R"("\udc00")", R"("\ud800\u0041")", R"("\ud800x")"})
    EXPECT_EQ(syntax_error(bad), "unpaired surrogate") << bad;
  EXPECT_EQ(syntax_error("\"\\u12zz\""), "invalid \\u escape");
  EXPECT_EQ(syntax_error("\"\\u12"), "truncated \\u escape");
  EXPECT_EQ(syntax_error("\"\x01\""), "control character in a string");
  EXPECT_EQ(syntax_error("\"\\x\""), "invalid escape '\\x'");
}

TEST(JsonFuzz, HugeNumbersKeepTheirTextAndDoNotConvert) {
  std::string digits(100000, '7');
  Json v = parse_json(digits.data(), digits.size());
  ASSERT_EQ(v.kind, Json::Num);
  EXPECT_EQ(v.s, digits);
  uint64_t u = 0;
  int64_t i = 0;
  EXPECT_FALSE(jx::detail::json_uint(v, &u));
  EXPECT_FALSE(jx::detail::json_int(v, &i));
  auto num = [](const std::string& s) { return parse_json(s.data(), s.size()); };
  EXPECT_TRUE(jx::detail::json_uint(num("18446744073709551615"), &u));
  EXPECT_EQ(u, UINT64_MAX);
  EXPECT_FALSE(jx::detail::json_uint(num("18446744073709551616"), &u));
  EXPECT_FALSE(jx::detail::json_uint(num("-1"), &u));
  EXPECT_FALSE(jx::detail::json_uint(num("1e3"), &u));
  EXPECT_TRUE(jx::detail::json_int(num("-9223372036854775808"), &i));
  EXPECT_EQ(i, INT64_MIN);
  EXPECT_FALSE(jx::detail::json_int(num("-9223372036854775809"), &i));
  EXPECT_FALSE(jx::detail::json_int(num("9223372036854775808"), &i));
  EXPECT_EQ(num("1e999999999999").s, "1e999999999999");
  EXPECT_EQ(num("-0.0E-0").s, "-0.0E-0");
  for (const char* bad : {"-", "1.", ".5", "1e", "1e+", "+1", "0x10", "--1"})
    EXPECT_NE(syntax_error(bad), "") << bad;
  EXPECT_EQ(syntax_error("01"), "unexpected data after the JSON value");
}

// Regression: duplicate keys were found by comparing each key with every earlier one, so an
// object of n keys took O(n^2): 50k keys 5 s, 200k over a minute (a 2 MB safetensors header).
TEST(JsonFuzz, ObjectsWithManyKeysParseInLinearTime) {
  // The watchdog turns a return of the quadratic scan into an abort naming this input.
  // 100k keys took ~20 s before, a few ms now.
  Fuzzer f({.op = "parse_json", .require_path = false, .watchdog_seconds = 10});
  std::string text = "{";
  for (int i = 0; i < 100000; ++i) {
    text += i ? ",\"key" : "\"key";
    text += std::to_string(i);
    text += "\":0";
  }
  text += "}";
  Json v = parse_json(text.data(), text.size());
  ASSERT_EQ(v.obj.size(), 100000u);
  EXPECT_EQ(v.obj[12345].first, "key12345");
  // Duplicates are still found, in small objects and large ones, wherever they are.
  EXPECT_EQ(syntax_error(R"({"a":1,"b":2,"a":3})"), "duplicate key \"a\"");
  std::string late = text.substr(0, text.size() - 1) + ",\"key99999\":0}";
  EXPECT_EQ(syntax_error(late), "duplicate key \"key99999\"");
  std::string early = text.substr(0, text.size() - 1) + ",\"key0\":0}";
  EXPECT_EQ(syntax_error(early), "duplicate key \"key0\"");
  std::string escaped = R"({"k\u0041":1,"kA":2})";  // the same key once unescaped
  EXPECT_EQ(syntax_error(escaped), "duplicate key \"kA\"");
}

TEST(JsonFuzz, ValueCountIsCapped) {
  // Every value counts, containers included: [0,0,0] is 4 values.
  auto values = [](int zeros) {
    std::string t = "[0";
    for (int i = 1; i < zeros; ++i) t += ",0";
    return t + "]";
  };
  auto error = [](const std::string& t, size_t cap) -> std::string {
    try {
      parse_json(t.data(), t.size(), 64, cap);
    } catch (const JsonSyntaxError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error(values(999), 1000), "");
  EXPECT_EQ(error(values(1000), 1000), "more than 1000 values");
  EXPECT_EQ(error("{\"a\":[1,{\"b\":2}]}", 4), "more than 4 values");
}

// ---- the harness ----

std::vector<Mutation> collect(void (*gen)(const std::string&, const MutationOptions&,
                                          const jx::testing::MutationSink&),
                              const std::string& seed, const MutationOptions& o) {
  std::vector<Mutation> out;
  gen(seed, o, [&](const Mutation& m) { out.push_back(m); });
  return out;
}

TEST(FuzzHarness, TruncationsAreEveryPrefixOfASmallSeed) {
  auto t = collect(jx::testing::truncations, "0123456789", {});
  ASSERT_EQ(t.size(), 10u);
  for (size_t i = 0; i < t.size(); ++i)
    EXPECT_EQ(t[i].bytes, std::string("0123456789").substr(0, i));
  EXPECT_EQ(t[3].description, "truncated to 3 of 10 bytes");
  // A large seed: the first and last 512 lengths and every 61st between.
  std::string big(10000, 'x');
  auto b = collect(jx::testing::truncations, big, {});
  size_t expected = 0;
  for (size_t len = 0; len < big.size(); ++len)
    expected += len < 512 || len >= 10000 - 512 || len % 61 == 0;
  EXPECT_EQ(b.size(), expected);
  EXPECT_EQ(b.front().bytes.size(), 0u);
  EXPECT_EQ(b.back().bytes.size(), 9999u);
}

TEST(FuzzHarness, RandomMutationsAreReproducibleAndChangeTheSeed) {
  std::string seed(300, 'a');
  MutationOptions o;
  o.random_mutations = 200;
  auto first = collect(jx::testing::random_mutations, seed, o);
  auto again = collect(jx::testing::random_mutations, seed, o);
  ASSERT_EQ(first.size(), 200u);  // 'a' ^ any bit and 0x00/0xFF/0x7F/0x80 all differ from 'a'
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].description, again[i].description);
    EXPECT_EQ(first[i].bytes, again[i].bytes);
    EXPECT_EQ(first[i].bytes.size(), seed.size());
    EXPECT_NE(first[i].bytes, seed);
  }
  o.rng_seed += 1;
  auto other = collect(jx::testing::random_mutations, seed, o);
  size_t same = 0;
  for (size_t i = 0; i < other.size(); ++i) same += other[i].bytes == first[i].bytes;
  EXPECT_LT(same, 20u);
}

TEST(FuzzHarness, InterestingIntegersAtEveryOffset) {
  std::string seed(8, '\0');
  MutationOptions o;
  o.integer_regions = {{0, 0}};
  auto m = collect(jx::testing::interesting_integers, seed, o);
  // Offset 0: 1, 2^31-1, 2^32-1 as 32-bit and 1, 2^31-1, 2^32-1, 2^60, 2^63-1, -1 as 64-bit,
  // each in two byte orders (0 leaves the seed as it is); offsets 1-4: the 32-bit ones.
  EXPECT_EQ(m.size(), 18u + 4 * 6u);
  bool found = false;
  for (const Mutation& x : m)
    if (x.description == "bytes [0, 8) set to 0x1000000000000000 as big-endian 64-bit") {
      EXPECT_EQ(x.bytes, std::string("\x10\0\0\0\0\0\0\0", 8));
      found = true;
    }
  EXPECT_TRUE(found);
  o.integer_regions = {{-4, 0}};  // the last 4 bytes: 32-bit values at offset 4 only
  EXPECT_EQ(collect(jx::testing::interesting_integers, seed, o).size(), 6u);
}

// Readers that misbehave in each way the harness must catch (static: EXPECT_NONFATAL_FAILURE
// cannot see locals).
void run_bad_reader(void (*reader)(std::string_view)) {
  Fuzzer f({.op = "t", .require_path = false});
  f.run_bytes("bad reader", {"an input", "xyz"}, reader);
}
char* volatile g_allocated = nullptr;  // volatile: the compiler may not elide the new below
[[maybe_unused]] void allocate_2gib(std::string_view) {
  g_allocated = new char[size_t(2) << 30];  // a declared size, never touched
  delete[] g_allocated;
}
void allocate_128mib_array(std::string_view) {
  jx::detail::empty_array(jx::Shape{int64_t(128) << 20}, jx::DType::UInt8);
}
void throw_out_of_range(std::string_view s) { (void)std::string(s).substr(10); }
void throw_without_op(std::string_view) { throw jx::IOError("'file' is bad"); }
void throw_value_error(std::string_view) { throw jx::ValueError("[t] bad value"); }

TEST(FuzzHarness, GuardsReportWhatIsNotATypedError) {
#ifndef __SANITIZE_ADDRESS__
  // AddressSanitizer's operator new ends the process when an allocation fails instead of
  // throwing std::bad_alloc (whatever allocator_may_return_null says), so under
  // scripts/sanitize a reader that does this is reported by ASan itself.
  EXPECT_NONFATAL_FAILURE(run_bad_reader(allocate_2gib), "threw std::bad_alloc");
#endif
  EXPECT_NONFATAL_FAILURE(run_bad_reader(allocate_128mib_array), "bytes of jx array buffers");
  EXPECT_NONFATAL_FAILURE(run_bad_reader(throw_out_of_range),
                          "std::out_of_range (not a jx::Error)");
  EXPECT_NONFATAL_FAILURE(run_bad_reader(throw_without_op), "does not name the operation [t]");
  EXPECT_NONFATAL_FAILURE(run_bad_reader(throw_value_error), "jx::ValueError, not jx::IOError");
  EXPECT_NONFATAL_FAILURE(run_bad_reader(throw_value_error), "bad reader: an input (3 bytes)");
}

void file_error_without_path() {
  Fuzzer f({.op = "t"});
  f.run_file("file reader", {"an input", "xyz"},
             [](const std::string&) { throw jx::IOError("[t] 'elsewhere' is bad"); });
}

TEST(FuzzHarness, FileReadersMustNameTheFile) {
  EXPECT_NONFATAL_FAILURE(file_error_without_path(), "does not name the file");
  Fuzzer f({.op = "t"});
  auto names = [](const std::string& path) {
    throw jx::IOError(jx::str("[t] '", path, "' is bad"));
  };
  EXPECT_EQ(f.run_file("ok", {"an input", "xyz"}, names), jx::testing::Outcome::TypedError);
  EXPECT_EQ(f.report().typed_errors, 1u);
}

void hang_under_a_watchdog() {
  Fuzzer f({.op = "t", .require_path = false, .watchdog_seconds = 1});
  f.run_bytes("hang", {"sleeps forever", ""}, [](std::string_view) {
    for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
}
void crash_in_a_reader() {
  Fuzzer f({.op = "t", .require_path = false});
  f.run_bytes("crash", {"raises SIGSEGV", ""}, [](std::string_view) { ::raise(SIGSEGV); });
}

TEST(FuzzHarness, AHangOrACrashNamesTheInput) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(hang_under_a_watchdog(),
               "no result after 1 s .*it was reading: hang: sleeps forever");
  EXPECT_DEATH(crash_in_a_reader(), "fatal signal SIGSEGV while reading: crash: raises SIGSEGV");
}

}  // namespace
