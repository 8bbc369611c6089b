// A small strict JSON reader and writer for jx's file formats (safetensors headers, checkpoint
// descriptions). The reader follows RFC 8259's grammar exactly, rejects duplicate keys and
// invalid UTF-8, limits nesting depth, and keeps object members in file order and numbers as
// their text, so that callers decide how to read them (and overflow is theirs to check).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jx::detail {

struct Json {
  enum Kind { Null, Bool, Num, Str, Arr, Obj } kind = Null;
  std::string s;  // string value, number text, or "true"/"false"
  std::vector<Json> arr;
  std::vector<std::pair<std::string, Json>> obj;

  const Json* find(std::string_view key) const;  // an object member, or null
};

// "null", "a boolean", "a number", "a string", "an array", "an object": for messages.
const char* json_kind_name(Json::Kind k);

// A syntax error at byte `offset` of the parsed text. Callers turn it into their own typed
// error naming the file.
class JsonSyntaxError : public std::runtime_error {
 public:
  JsonSyntaxError(const std::string& msg, size_t offset)
      : std::runtime_error(msg), offset(offset) {}
  size_t offset;
};

// Parses exactly one JSON value (surrounded by optional whitespace) from p[0, n). Each value
// costs ~90 bytes parsed, so max_values bounds the memory whatever the text (the default,
// ~360 MB, stops a hostile 100 MB safetensors header of "[0,0,...]" from asking for 4 GB).
Json parse_json(const char* p, size_t n, int max_depth = 64, size_t max_values = 4'000'000);

// Appends s as a JSON string literal (quotes and escapes included).
void json_quote(std::string& out, std::string_view s);

// The value of a Num holding a non-negative / any integer that fits; false otherwise.
bool json_uint(const Json& v, uint64_t* out);
bool json_int(const Json& v, int64_t* out);

}  // namespace jx::detail
