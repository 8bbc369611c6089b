#include "support/json.h"

#include <cstring>
#include <unordered_set>

#include "support/str.h"

namespace jx::detail {

namespace {

constexpr size_t kLinearKeys = 16;

class JsonParser {
 public:
  JsonParser(const char* p, size_t n, int max_depth, size_t max_values)
      : p_(p), n_(n), max_depth_(max_depth), max_values_(max_values) {}

  Json parse_document() {
    skip_ws();
    Json v = value(0);
    skip_ws();
    if (i_ != n_) fail("unexpected data after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) {
    throw JsonSyntaxError(msg, i_);
  }
  char peek() const { return i_ < n_ ? p_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < n_ && (p_[i_] == ' ' || p_[i_] == '\t' || p_[i_] == '\n' || p_[i_] == '\r')) ++i_;
  }
  void expect(char c) {
    if (i_ >= n_) fail(str("expected '", c, "', the text ends"));
    if (p_[i_] != c) fail(str("expected '", c, "'"));
    ++i_;
  }
  void literal(const char* w) {
    size_t k = std::strlen(w);
    if (n_ - i_ < k || std::memcmp(p_ + i_, w, k) != 0) fail("invalid literal");
    i_ += k;
  }

  Json value(int depth) {
    if (depth > max_depth_) fail("nesting is too deep");
    // Each value costs ~90 bytes in memory: a cap keeps a hostile 100 MB header of
    // "[0,0,0,...]" from asking for gigabytes.
    if (++values_ > max_values_) fail(str("more than ", max_values_, " values"));
    skip_ws();
    if (i_ >= n_) fail("expected a value, the text ends");
    Json v;
    char c = p_[i_];
    if (c == '{') {
      v.kind = Json::Obj;
      ++i_;
      skip_ws();
      if (peek() == '}') {
        ++i_;
        return v;
      }
      // Duplicate keys: a linear scan for small objects, a hash set beyond, so that an object
      // of n keys costs O(n), not O(n^2) (a 2 MB header of 200k keys took over a minute).
      std::unordered_set<std::string> seen;
      for (;;) {
        skip_ws();
        if (peek() != '"') fail("expected a string key");
        std::string key = string();
        bool duplicate = false;
        if (v.obj.size() < kLinearKeys) {
          for (const auto& kv : v.obj) duplicate = duplicate || kv.first == key;
        } else {
          if (seen.empty())
            for (const auto& kv : v.obj) seen.insert(kv.first);
          duplicate = !seen.insert(key).second;
        }
        if (duplicate) fail(str("duplicate key \"", key, "\""));
        skip_ws();
        expect(':');
        Json item = value(depth + 1);
        v.obj.emplace_back(std::move(key), std::move(item));
        skip_ws();
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.kind = Json::Arr;
      ++i_;
      skip_ws();
      if (peek() == ']') {
        ++i_;
        return v;
      }
      for (;;) {
        v.arr.push_back(value(depth + 1));
        skip_ws();
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = Json::Str;
      v.s = string();
      return v;
    }
    if (c == 't') {
      literal("true");
      v.kind = Json::Bool;
      v.s = "true";
      return v;
    }
    if (c == 'f') {
      literal("false");
      v.kind = Json::Bool;
      v.s = "false";
      return v;
    }
    if (c == 'n') {
      literal("null");
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Json::Num;
      v.s = number();
      return v;
    }
    fail(str("unexpected character '", c, "'"));
  }

  bool digit() const { return i_ < n_ && p_[i_] >= '0' && p_[i_] <= '9'; }

  std::string number() {
    size_t start = i_;
    if (peek() == '-') ++i_;
    if (!digit()) fail("invalid number");
    if (p_[i_] == '0') {
      ++i_;
    } else {
      while (digit()) ++i_;
    }
    if (peek() == '.') {
      ++i_;
      if (!digit()) fail("invalid number");
      while (digit()) ++i_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++i_;
      if (peek() == '+' || peek() == '-') ++i_;
      if (!digit()) fail("invalid number");
      while (digit()) ++i_;
    }
    return std::string(p_ + start, i_ - start);
  }

  unsigned hex4() {
    if (n_ - i_ < 4) fail("truncated \\u escape");
    unsigned u = 0;
    for (int k = 0; k < 4; ++k) {
      char c = p_[i_++];
      u <<= 4;
      if (c >= '0' && c <= '9') u |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f') u |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') u |= unsigned(c - 'A' + 10);
      else fail("invalid \\u escape");
    }
    return u;
  }

  static void put_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(char(cp));
    } else if (cp < 0x800) {
      out.push_back(char(0xC0 | (cp >> 6)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(char(0xE0 | (cp >> 12)));
      out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(char(0xF0 | (cp >> 18)));
      out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    }
  }

  // One UTF-8 sequence starting at i_ (a lead byte >= 0x80), validated and copied.
  void utf8(std::string& out) {
    unsigned char c = static_cast<unsigned char>(p_[i_]);
    int len;
    uint32_t cp, min;
    if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07, min = 0x10000;
    else fail("invalid UTF-8 in a string");
    if (n_ - i_ < size_t(len)) fail("invalid UTF-8 in a string");
    for (int k = 1; k < len; ++k) {
      unsigned char d = static_cast<unsigned char>(p_[i_ + size_t(k)]);
      if ((d & 0xC0) != 0x80) fail("invalid UTF-8 in a string");
      cp = (cp << 6) | (d & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      fail("invalid UTF-8 in a string");
    out.append(p_ + i_, size_t(len));
    i_ += size_t(len);
  }

  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (i_ >= n_) fail("unterminated string");
      char c = p_[i_];
      if (c == '"') {
        ++i_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (static_cast<unsigned char>(c) >= 0x80) {
        utf8(out);
        continue;
      }
      ++i_;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (i_ >= n_) fail("unterminated string");
      char e = p_[i_++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          uint32_t u = hex4();
          if (u >= 0xD800 && u <= 0xDBFF) {
            if (n_ - i_ < 2 || p_[i_] != '\\' || p_[i_ + 1] != 'u') fail("unpaired surrogate");
            i_ += 2;
            uint32_t lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("unpaired surrogate");
            u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
          } else if (u >= 0xDC00 && u <= 0xDFFF) {
            fail("unpaired surrogate");
          }
          put_utf8(out, u);
          break;
        }
        default:
          fail(str("invalid escape '\\", e, "'"));
      }
    }
  }

  const char* p_;
  size_t n_;
  size_t i_ = 0;
  int max_depth_;
  size_t max_values_;
  size_t values_ = 0;
};

}  // namespace

const Json* Json::find(std::string_view key) const {
  for (const auto& kv : obj)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

const char* json_kind_name(Json::Kind k) {
  switch (k) {
    case Json::Null: return "null";
    case Json::Bool: return "a boolean";
    case Json::Num: return "a number";
    case Json::Str: return "a string";
    case Json::Arr: return "an array";
    case Json::Obj: return "an object";
  }
  return "";
}

Json parse_json(const char* p, size_t n, int max_depth, size_t max_values) {
  return JsonParser(p, n, max_depth, max_values).parse_document();
}

void json_quote(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out.push_back('"');
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out.push_back(hex[(c >> 4) & 0xF]);
          out.push_back(hex[c & 0xF]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

bool json_uint(const Json& v, uint64_t* out) {
  if (v.kind != Json::Num || v.s.empty() || v.s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  uint64_t r = 0;
  for (char c : v.s) {
    if (r > (UINT64_MAX - uint64_t(c - '0')) / 10) return false;
    r = r * 10 + uint64_t(c - '0');
  }
  *out = r;
  return true;
}

bool json_int(const Json& v, int64_t* out) {
  if (v.kind != Json::Num || v.s.empty()) return false;
  bool neg = v.s[0] == '-';
  Json mag;
  mag.kind = Json::Num;
  mag.s = neg ? v.s.substr(1) : v.s;
  uint64_t u;
  if (!json_uint(mag, &u)) return false;
  if (neg ? u > uint64_t(INT64_MAX) + 1 : u > uint64_t(INT64_MAX)) return false;
  *out = neg ? int64_t(0 - u) : int64_t(u);
  return true;
}

}  // namespace jx::detail
