// safetensors files: jnp::save_safetensors / jnp::load_safetensors. The header is parsed by
// support/json.h's strict JSON parser; every field is validated before any tensor byte is
// touched, so a corrupt file throws IOError and never reads out of bounds.
#include "jx/numpy/safetensors.h"

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
#include "numpy/safetensors_format.h"
#include "support/json.h"
#include "support/str.h"

namespace jx {
namespace detail {

static_assert(std::endian::native == std::endian::little,
              "jx's safetensors I/O assumes a little-endian host");

namespace {

constexpr uint64_t kMaxHeader = 100000000;  // the reference implementation's limit
constexpr int kMaxDepth = 64;

const char* st_name(DType t, bool complex128 = false) {
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
    case DType::Complex64: return "C64";
    case DType::Complex128: return complex128 ? "C128" : nullptr;  // a jx extension
  }
  return nullptr;
}

bool st_dtype(const std::string& s, DType* out, bool complex128) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (const char* name = st_name(DType(i), complex128); name && s == name) {
      *out = DType(i);
      return true;
    }
  return false;
}

}  // namespace

SafetensorsLayout parse_safetensors(const char* p, size_t size, const std::string& path,
                                    const char* op, bool complex128) {
  auto fail = [&](const std::string& msg) { io_fail(op, path, msg); };
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
  Json root;
  try {
    root = parse_json(p + 8, size_t(n), kMaxDepth);
  } catch (const JsonSyntaxError& e) {
    fail(str("has a malformed JSON header: ", e.what(), " at byte ", 8 + e.offset));
  }
  if (root.kind != Json::Obj) fail("has a header that is not a JSON object");

  uint64_t buffer = size - 8 - n;
  SafetensorsLayout out;
  out.data_start = 8 + n;
  std::vector<SafetensorsEntry>& entries = out.entries;
  std::map<std::string, std::string>& meta = out.metadata;
  for (auto& [name, v] : root.obj) {
    if (name == "__metadata__") {
      if (v.kind != Json::Obj)
        fail(str("has a \"__metadata__\" that is ", json_kind_name(v.kind), ", not an object"));
      for (auto& [k, mv] : v.obj) {
        if (mv.kind != Json::Str)
          fail(str("has a \"__metadata__\" value for \"", k, "\" that is ", json_kind_name(mv.kind),
                   ", not a string"));
        meta[k] = mv.s;
      }
      continue;
    }
    std::string where = str("tensor \"", name, "\"");
    if (v.kind != Json::Obj) fail(str(where, " is described by ", json_kind_name(v.kind), ", not an object"));
    const Json *dt = nullptr, *sh = nullptr, *off = nullptr;
    for (auto& [k, fv] : v.obj) {
      if (k == "dtype") dt = &fv;
      else if (k == "shape") sh = &fv;
      else if (k == "data_offsets") off = &fv;
      else fail(str(where, " has an unexpected key \"", k, "\""));
    }
    if (!dt || !sh || !off)
      fail(str(where, " lacks one of the keys \"dtype\", \"shape\", \"data_offsets\""));
    auto to_uint = [&](const Json& x, const char* what) -> uint64_t {
      if (x.kind != Json::Num || x.s.empty() || x.s[0] == '-' ||
          x.s.find_first_not_of("0123456789") != std::string::npos)
        fail(str(where, " has a ", what, " that is not a non-negative integer"));
      uint64_t r = 0;
      for (char c : x.s) {
        if (r > (UINT64_MAX - 9) / 10) fail(str(where, " has a ", what, " that is too large"));
        r = r * 10 + uint64_t(c - '0');
      }
      return r;
    };
    SafetensorsEntry e;
    e.name = name;
    if (dt->kind != Json::Str) fail(str(where, " has a dtype that is not a string"));
    if (!st_dtype(dt->s, &e.dtype, complex128))
      fail(str(where, " has an unknown dtype \"", dt->s,
               "\" (expected BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, "
               "F64, C64)"));
    if (sh->kind != Json::Arr) fail(str(where, " has a shape that is not an array"));
    // The product of the nonzero dimensions must fit even when one is 0: a zero-sized array's
    // element count and strides are still computed from the others.
    uint64_t count = 1;
    bool overflow = false, zero = false;
    for (const Json& d : sh->arr) {
      uint64_t dim = to_uint(d, "shape dimension");
      if (dim > uint64_t(INT64_MAX)) fail(str(where, " has a shape dimension that is too large"));
      e.shape.push_back(int64_t(dim));
      if (dim == 0) zero = true;
      else if (__builtin_mul_overflow(count, dim, &count)) overflow = true;
    }
    if (off->kind != Json::Arr || off->arr.size() != 2)
      fail(str(where, " has data_offsets that are not an array [begin, end]"));
    e.begin = to_uint(off->arr[0], "data offset");
    e.end = to_uint(off->arr[1], "data offset");
    if (e.end < e.begin)
      fail(str(where, " has data_offsets [", e.begin, ", ", e.end, "] that end before they begin"));
    uint64_t bytes;
    if (overflow || __builtin_mul_overflow(count, uint64_t(itemsize(e.dtype)), &bytes) ||
        bytes > uint64_t(INT64_MAX))
      fail(str(where, " has shape ", list_str(e.shape), " of ", dt->s,
               ", which does not fit in 2^63 bytes (data_offsets [", e.begin, ", ", e.end, "])"));
    if (zero) bytes = 0;
    if (bytes != e.end - e.begin)
      fail(str(where, " has shape ", list_str(e.shape), " of ", dt->s, ", which does not fit its ",
               e.end - e.begin, " bytes (data_offsets [", e.begin, ", ", e.end, "])"));
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  for (const SafetensorsEntry& e : entries) {
    if (e.begin != expected)
      fail(str("tensor \"", e.name, "\" has data_offsets [", e.begin, ", ", e.end,
               "]: tensors must be contiguous, the previous one ends at ", expected));
    expected = e.end;
  }
  if (expected > buffer)
    fail(str("is truncated: the tensors need ", expected, " data bytes, the file has ", buffer));
  if (expected != buffer)
    fail(str("has ", buffer - expected, " bytes after the last tensor's data"));

  const char* base = p + out.data_start;
  for (const SafetensorsEntry& e : entries)
    if (e.dtype == DType::Bool)
      for (uint64_t i = e.begin; i < e.end; ++i)
        if (static_cast<unsigned char>(base[i]) > 1)
          fail(str("tensor \"", e.name, "\" has a BOOL byte ",
                   int(static_cast<unsigned char>(base[i])), " that is neither 0 nor 1"));
  return out;
}

std::string safetensors_header(const std::vector<std::pair<std::string, const Array*>>& tensors,
                               const std::map<std::string, std::string>& metadata,
                               const char* op, bool complex128) {
  std::string h = "{";
  if (!metadata.empty()) {
    h += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      if (!first) h.push_back(',');
      first = false;
      json_quote(h, k);
      h.push_back(':');
      json_quote(h, v);
    }
    h.push_back('}');
  }
  uint64_t offset = 0;
  for (const auto& [name, a] : tensors) {
    if (name == "__metadata__")
      throw ValueError(str("[", op, "] a tensor cannot be named \"__metadata__\""));
    require_savable(*a, op);
    if (!st_name(a->dtype(), complex128))
      throw DTypeError(str("[", op, "] tensor \"", name, "\" is ", dtype_name(a->dtype()),
                           ", which safetensors cannot store (its only complex dtype is C64, "
                           "complex64); cast it with x.astype(jx::complex64), or save it with "
                           "jnp::savez, whose .npy members keep complex128"));
    if (h.size() > 1) h.push_back(',');
    json_quote(h, name);
    h += str(":{\"dtype\":\"", st_name(a->dtype(), complex128), "\",\"shape\":[");
    for (size_t i = 0; i < a->shape().size(); ++i) h += str(i ? "," : "", a->shape()[i]);
    uint64_t end = offset + uint64_t(a->nbytes());
    h += str("],\"data_offsets\":[", offset, ",", end, "]}");
    offset = end;
  }
  h.push_back('}');
  h.append((8 - h.size() % 8) % 8, ' ');
  uint64_t n = h.size();
  char len[8];
  std::memcpy(len, &n, 8);
  return std::string(len, 8) + h;
}

namespace {

std::map<std::string, Array> read_safetensors(const std::string& path,
                                              std::map<std::string, std::string>* metadata) {
  const char* op = "load_safetensors";
  MappedFile f(path, op);
  SafetensorsLayout layout = parse_safetensors(f.data(), f.size(), path, op);
  std::map<std::string, Array> out;
  for (const SafetensorsEntry& e : layout.entries) {
    Array a = empty_array(Shape(e.shape), e.dtype, false);
    if (e.end > e.begin)
      std::memcpy(raw_data(a), f.data() + layout.data_start + e.begin, size_t(e.end - e.begin));
    out.emplace(e.name, std::move(a));
  }
  if (metadata) *metadata = std::move(layout.metadata);
  return out;
}

}  // namespace
}  // namespace detail

namespace numpy {

void save_safetensors(const std::string& path, const std::map<std::string, Array>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  const char* op = "save_safetensors";
  std::vector<std::pair<std::string, const Array*>> list;
  for (const auto& [name, a] : tensors) list.emplace_back(name, &a);
  std::string header = detail::safetensors_header(list, metadata, op);
  detail::AtomicFile f(path, op);
  f.write(header.data(), header.size());
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
