// safetensors files: jnp::save_safetensors / jnp::load_safetensors. The header is parsed by a
// small strict JSON parser (RFC 8259 grammar, depth-limited); every field is validated before
// any tensor byte is touched, so a corrupt file throws IOError and never reads out of bounds.
#include "jx/numpy/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "core/array_impl.h"
#include "jx/error.h"
#include "numpy/io_npy.h"
#include "support/str.h"

namespace jx {
namespace detail {

static_assert(std::endian::native == std::endian::little,
              "jx's safetensors I/O assumes a little-endian host");

namespace {

constexpr uint64_t kMaxHeader = 100000000;  // the reference implementation's limit
constexpr int kMaxDepth = 64;

const char* st_name(DType t) {
  switch (t) {
    case DType::Bool: return "BOOL";
    case DType::Int8: return "I8";
    case DType::Int16: return "I16";
    case DType::Int32: return "I32";
    case DType::Int64: return "I64";
    case DType::UInt8: return "U8";
    case DType::UInt16: return "U16";
    case DType::UInt32: return "U32";
    case DType::UInt64: return "U64";
    case DType::Float16: return "F16";
    case DType::BFloat16: return "BF16";
    case DType::Float32: return "F32";
    case DType::Float64: return "F64";
  }
  return "";
}

bool st_dtype(const std::string& s, DType* out) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (s == st_name(DType(i))) {
      *out = DType(i);
      return true;
    }
  return false;
}

struct JVal {
  enum Kind { Null, Bool, Num, Str, Arr, Obj } kind = Null;
  std::string s;  // string value, number text, or "true"/"false"
  std::vector<JVal> arr;
  std::vector<std::pair<std::string, JVal>> obj;
};

const char* kind_name(JVal::Kind k) {
  switch (k) {
    case JVal::Null: return "null";
    case JVal::Bool: return "a boolean";
    case JVal::Num: return "a number";
    case JVal::Str: return "a string";
    case JVal::Arr: return "an array";
    case JVal::Obj: return "an object";
  }
  return "";
}

class JsonParser {
 public:
  JsonParser(const char* p, size_t n, const std::string& path, const char* op)
      : p_(p), n_(n), path_(path), op_(op) {}

  JVal parse_document() {
    skip_ws();
    JVal v = value(0);
    skip_ws();
    if (i_ != n_) fail("unexpected data after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) {
    io_fail(op_, path_, str("has a malformed JSON header: ", msg, " at byte ", 8 + i_));
  }
  char peek() const { return i_ < n_ ? p_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < n_ && (p_[i_] == ' ' || p_[i_] == '\t' || p_[i_] == '\n' || p_[i_] == '\r')) ++i_;
  }
  void expect(char c) {
    if (i_ >= n_) fail(str("expected '", c, "', the header ends"));
    if (p_[i_] != c) fail(str("expected '", c, "'"));
    ++i_;
  }
  void literal(const char* w) {
    size_t k = std::strlen(w);
    if (n_ - i_ < k || std::memcmp(p_ + i_, w, k) != 0) fail("invalid literal");
    i_ += k;
  }

  JVal value(int depth) {
    if (depth > kMaxDepth) fail("nesting is too deep");
    skip_ws();
    if (i_ >= n_) fail("expected a value, the header ends");
    JVal v;
    char c = p_[i_];
    if (c == '{') {
      v.kind = JVal::Obj;
      ++i_;
      skip_ws();
      if (peek() == '}') {
        ++i_;
        return v;
      }
      for (;;) {
        skip_ws();
        if (peek() != '"') fail("expected a string key");
        std::string key = string();
        for (const auto& kv : v.obj)
          if (kv.first == key) fail(str("duplicate key \"", key, "\""));
        skip_ws();
        expect(':');
        JVal item = value(depth + 1);
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
      v.kind = JVal::Arr;
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
      v.kind = JVal::Str;
      v.s = string();
      return v;
    }
    if (c == 't') {
      literal("true");
      v.kind = JVal::Bool;
      v.s = "true";
      return v;
    }
    if (c == 'f') {
      literal("false");
      v.kind = JVal::Bool;
      v.s = "false";
      return v;
    }
    if (c == 'n') {
      literal("null");
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = JVal::Num;
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
  const std::string& path_;
  const char* op_;
};

void json_string(std::string& out, const std::string& s) {
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

// A read-only mapping of a whole file, unmapped on destruction.
class MappedFile {
 public:
  MappedFile(const std::string& path, const char* op) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) io_fail(op, path, str("cannot be opened: ", std::strerror(errno)));
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int e = errno;
      ::close(fd);
      io_fail(op, path, str("cannot be opened: ", std::strerror(e)));
    }
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      io_fail(op, path, "is a directory, not a file");
    }
    size_ = size_t(st.st_size);
    if (size_ > 0) {
      void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (m == MAP_FAILED) {
        int e = errno;
        ::close(fd);
        io_fail(op, path, str("cannot be mapped: ", std::strerror(e)));
      }
      data_ = static_cast<const char*>(m);
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

struct Entry {
  std::string name;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

std::map<std::string, Array> read_safetensors(const std::string& path,
                                              std::map<std::string, std::string>* metadata) {
  const char* op = "load_safetensors";
  auto fail = [&](const std::string& msg) { io_fail(op, path, msg); };
  MappedFile f(path, op);
  const char* p = f.data();
  size_t size = f.size();
  if (size < 8)
    fail(str("is truncated: the 8-byte header length is missing (the file has ", size,
             " bytes)"));
  uint64_t n;
  std::memcpy(&n, p, 8);
  if (n > kMaxHeader) fail(str("has a header length of ", n, " bytes, over the limit of ", kMaxHeader));
  if (n > size - 8)
    fail(str("is truncated: the header length is ", n, " bytes, the file has ", size - 8,
             " after it"));
  if (n < 2 || p[8] != '{') fail("has a header that is not a JSON object");
  JVal root = JsonParser(p + 8, size_t(n), path, op).parse_document();
  if (root.kind != JVal::Obj) fail("has a header that is not a JSON object");

  uint64_t buffer = size - 8 - n;
  std::vector<Entry> entries;
  std::map<std::string, std::string> meta;
  for (auto& [name, v] : root.obj) {
    if (name == "__metadata__") {
      if (v.kind != JVal::Obj)
        fail(str("has a \"__metadata__\" that is ", kind_name(v.kind), ", not an object"));
      for (auto& [k, mv] : v.obj) {
        if (mv.kind != JVal::Str)
          fail(str("has a \"__metadata__\" value for \"", k, "\" that is ", kind_name(mv.kind),
                   ", not a string"));
        meta[k] = mv.s;
      }
      continue;
    }
    std::string where = str("tensor \"", name, "\"");
    if (v.kind != JVal::Obj) fail(str(where, " is described by ", kind_name(v.kind), ", not an object"));
    const JVal *dt = nullptr, *sh = nullptr, *off = nullptr;
    for (auto& [k, fv] : v.obj) {
      if (k == "dtype") dt = &fv;
      else if (k == "shape") sh = &fv;
      else if (k == "data_offsets") off = &fv;
      else fail(str(where, " has an unexpected key \"", k, "\""));
    }
    if (!dt || !sh || !off)
      fail(str(where, " lacks one of the keys \"dtype\", \"shape\", \"data_offsets\""));
    auto to_uint = [&](const JVal& x, const char* what) -> uint64_t {
      if (x.kind != JVal::Num || x.s.empty() || x.s[0] == '-' ||
          x.s.find_first_not_of("0123456789") != std::string::npos)
        fail(str(where, " has a ", what, " that is not a non-negative integer"));
      uint64_t r = 0;
      for (char c : x.s) {
        if (r > (UINT64_MAX - 9) / 10) fail(str(where, " has a ", what, " that is too large"));
        r = r * 10 + uint64_t(c - '0');
      }
      return r;
    };
    Entry e;
    e.name = name;
    if (dt->kind != JVal::Str) fail(str(where, " has a dtype that is not a string"));
    if (!st_dtype(dt->s, &e.dtype))
      fail(str(where, " has an unknown dtype \"", dt->s,
               "\" (expected BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64)"));
    if (sh->kind != JVal::Arr) fail(str(where, " has a shape that is not an array"));
    uint64_t count = 1;
    bool overflow = false;
    for (const JVal& d : sh->arr) {
      uint64_t dim = to_uint(d, "shape dimension");
      if (dim > uint64_t(INT64_MAX)) fail(str(where, " has a shape dimension that is too large"));
      e.shape.push_back(int64_t(dim));
      if (__builtin_mul_overflow(count, dim, &count)) overflow = true;
    }
    if (off->kind != JVal::Arr || off->arr.size() != 2)
      fail(str(where, " has data_offsets that are not an array [begin, end]"));
    e.begin = to_uint(off->arr[0], "data offset");
    e.end = to_uint(off->arr[1], "data offset");
    if (e.end < e.begin)
      fail(str(where, " has data_offsets [", e.begin, ", ", e.end, "] that end before they begin"));
    uint64_t bytes;
    if (overflow || __builtin_mul_overflow(count, uint64_t(itemsize(e.dtype)), &bytes) ||
        bytes != e.end - e.begin)
      fail(str(where, " has shape ", list_str(e.shape), " of ", dt->s, ", which does not fit its ",
               e.end - e.begin, " bytes (data_offsets [", e.begin, ", ", e.end, "])"));
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  for (const Entry& e : entries) {
    if (e.begin != expected)
      fail(str("tensor \"", e.name, "\" has data_offsets [", e.begin, ", ", e.end,
               "]: tensors must be contiguous, the previous one ends at ", expected));
    expected = e.end;
  }
  if (expected > buffer)
    fail(str("is truncated: the tensors need ", expected, " data bytes, the file has ", buffer));
  if (expected != buffer)
    fail(str("has ", buffer - expected, " bytes after the last tensor's data"));

  const char* base = p + 8 + n;
  std::map<std::string, Array> out;
  for (const Entry& e : entries) {
    const char* src = base + e.begin;
    size_t nbytes = size_t(e.end - e.begin);
    if (e.dtype == DType::Bool)
      for (size_t i = 0; i < nbytes; ++i)
        if (static_cast<unsigned char>(src[i]) > 1)
          fail(str("tensor \"", e.name, "\" has a BOOL byte ",
                   int(static_cast<unsigned char>(src[i])), " that is neither 0 nor 1"));
    Array a = empty_array(Shape(e.shape), e.dtype, false);
    if (nbytes) std::memcpy(raw_data(a), src, nbytes);
    out.emplace(e.name, std::move(a));
  }
  if (metadata) *metadata = std::move(meta);
  return out;
}

}  // namespace
}  // namespace detail

namespace numpy {

void save_safetensors(const std::string& path, const std::map<std::string, Array>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  const char* op = "save_safetensors";
  std::string h = "{";
  if (!metadata.empty()) {
    h += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      if (!first) h.push_back(',');
      first = false;
      detail::json_string(h, k);
      h.push_back(':');
      detail::json_string(h, v);
    }
    h.push_back('}');
  }
  uint64_t offset = 0;
  for (const auto& [name, a] : tensors) {
    if (name == "__metadata__")
      throw ValueError(str("[", op, "] a tensor cannot be named \"__metadata__\""));
    detail::require_savable(a, op);
    if (h.size() > 1) h.push_back(',');
    detail::json_string(h, name);
    h += str(":{\"dtype\":\"", detail::st_name(a.dtype()), "\",\"shape\":[");
    for (size_t i = 0; i < a.shape().size(); ++i) h += str(i ? "," : "", a.shape()[i]);
    uint64_t end = offset + uint64_t(a.nbytes());
    h += str("],\"data_offsets\":[", offset, ",", end, "]}");
    offset = end;
  }
  h.push_back('}');
  h.append((8 - h.size() % 8) % 8, ' ');
  uint64_t n = h.size();
  char len[8];
  std::memcpy(len, &n, 8);
  detail::AtomicFile f(path, op);
  f.write(len, 8);
  f.write(h.data(), h.size());
  for (const auto& [name, a] : tensors) f.write(detail::raw_data(a), a.nbytes());
  f.commit();
}

std::map<std::string, Array> load_safetensors(const std::string& path) {
  return detail::read_safetensors(path, nullptr);
}

std::map<std::string, Array> load_safetensors(const std::string& path,
                                              std::map<std::string, std::string>& metadata) {
  return detail::read_safetensors(path, &metadata);
}

}  // namespace numpy
}  // namespace jx
