// The Error value of jx::checkify, its messages, and user checks (checkify::check).
//
// A user check is staged as a debug_callback equation whose host function throws
// JaxRuntimeError when the predicate is false: that is what check() does eagerly or under
// vmap outside checkify (JAX raises at once too). checkify's interpreter recognizes the
// equation by its description and turns it into an error value instead.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <unordered_map>

#include "core/array_impl.h"
#include "jx/debug.h"
#include "jit/python_format.h"
#include "support/str.h"
#include "jit/checkify_internal.h"
#include "transforms/staging.h"

namespace jx::checkify {
namespace detail {
namespace {

// ---- templates ----

struct Field {
  size_t arg = 0;
  std::string spec;
};
struct Piece {
  std::string text;  // when !is_field
  Field field;
  bool is_field = false;
};

[[noreturn]] void bad_format(const char* op, std::string_view fmt, const std::string& why) {
  throw ValueError(str("[", op, "] format string \"", fmt, "\": ", why));
}

std::vector<Piece> parse(const char* op, std::string_view fmt, size_t num_args) {
  std::vector<Piece> out;
  std::string text;
  enum { Unknown, Auto, Manual } numbering = Unknown;
  size_t next = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
        text += '}';
        ++i;
        continue;
      }
      bad_format(op, fmt, "single '}' (write '}}' for a literal brace)");
    }
    if (c != '{') {
      text += c;
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      text += '{';
      ++i;
      continue;
    }
    size_t close = fmt.find('}', i);
    if (close == std::string_view::npos) bad_format(op, fmt, "'{' without a closing '}'");
    std::string_view body = fmt.substr(i + 1, close - i - 1);
    size_t colon = body.find(':');
    std::string_view index = body.substr(0, colon);
    Field f;
    if (colon != std::string_view::npos) f.spec = std::string(body.substr(colon + 1));
    if (index.empty()) {
      if (numbering == Manual)
        bad_format(op, fmt, "cannot switch from manual field numbering to automatic");
      numbering = Auto;
      f.arg = next++;
    } else {
      if (numbering == Auto)
        bad_format(op, fmt, "cannot switch from automatic field numbering to manual");
      numbering = Manual;
      for (char d : index) {
        if (d < '0' || d > '9')
          bad_format(
              op, fmt,
              str("field '", index, "' is not an argument index (named fields are not supported)"));
        f.arg = f.arg * 10 + size_t(d - '0');
      }
    }
    if (f.arg >= num_args)
      throw IndexError(str("[", op, "] format string \"", fmt, "\" refers to argument ", f.arg,
                           " but ", num_args, num_args == 1 ? " argument was" : " arguments were",
                           " given"));
    if (!text.empty()) out.push_back(Piece{std::move(text), {}, false});
    text.clear();
    out.push_back(Piece{{}, std::move(f), true});
    i = close;
  }
  if (!text.empty()) out.push_back(Piece{std::move(text), {}, false});
  return out;
}

using jit_detail::printf_conversion;

// As NumPy's str of a 0-d array of that dtype: 3, 2.5, 2.0, nan, True.
std::string format_value(DType t, double v, const std::string& spec) {
  char buf[128];
  if (!spec.empty()) {
    std::string conv = printf_conversion(spec);
    if (conv.back() == 'd')
      std::snprintf(buf, sizeof(buf), conv.c_str(), static_cast<long long>(v));
    else
      std::snprintf(buf, sizeof(buf), conv.c_str(), v);
    return buf;
  }
  if (t == DType::Bool) return v != 0 ? "True" : "False";
  if (!is_floating(t)) {
    if (v < 0) return std::to_string(static_cast<long long>(v));
    return std::to_string(static_cast<unsigned long long>(v));
  }
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::to_chars_result r = t == DType::Float64 ? std::to_chars(buf, buf + sizeof(buf), v)
                                               : std::to_chars(buf, buf + sizeof(buf), float(v));
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// ---- the registry of staged user checks ----

struct Registry {
  std::mutex mu;
  std::unordered_map<uint64_t, std::weak_ptr<const CheckInfo>> live;
  uint64_t next = 1;
  static Registry& get() {
    static Registry* r = new Registry();  // never destroyed: checks may die during exit
    return *r;
  }
};

constexpr std::string_view kCheckTag = "checkify.check#";

thread_local int t_tracing = 0;

bool staging_now() {
  for (tr::Trace* t = tr::current_trace(); t; t = t->parent())
    if (dynamic_cast<tr::StagingTrace*>(t)) return true;
  return false;
}

std::string where(const std::source_location& loc) {
  std::string_view file = loc.file_name();
  size_t slash = file.find_last_of('/');
  if (slash != std::string_view::npos) file = file.substr(slash + 1);
  return str(file, ":", loc.line());
}

}  // namespace

std::string escape_braces(std::string_view s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '{' || c == '}') out += c;
  }
  return out;
}

std::string serialize(const Table& t) {
  std::string s;
  for (const Entry& e : t) {
    for (char c : e.fmt) s += (c == '\x1e' || c == '\x1f') ? '?' : c;
    s += '\x1f';
    for (size_t i = 0; i < e.slots.size(); ++i) s += str(i ? "," : "", int(e.slots[i]));
    s += '\x1e';
  }
  return s;
}

Table parse_table(const std::string& s) {
  Table t;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find('\x1e', pos), sep = s.find('\x1f', pos);
    if (end == std::string::npos || sep == std::string::npos || sep > end)
      throw ValueError("[checkify] malformed Error: its message table is not one checkify made");
    Entry e;
    e.fmt = s.substr(pos, sep - pos);
    std::string_view slots(s.data() + sep + 1, end - sep - 1);
    while (!slots.empty()) {
      size_t comma = slots.find(',');
      std::string_view num = slots.substr(0, comma);
      int v = 0;
      std::from_chars(num.data(), num.data() + num.size(), v);
      e.slots.push_back(DType(v));
      slots = comma == std::string_view::npos ? std::string_view() : slots.substr(comma + 1);
    }
    t.push_back(std::move(e));
    pos = end + 1;
  }
  return t;
}

void validate_format(const char* op, std::string_view fmt, const std::vector<DType>& slots) {
  for (const Piece& p : parse(op, fmt, slots.size()))
    if (p.is_field && !p.field.spec.empty() && printf_conversion(p.field.spec).empty())
      throw ValueError(str("[", op, "] format spec ':", p.field.spec, "' in \"", fmt,
                           "\" is not supported; use [+][width][.precision] and one of f e g d"));
}

std::string render(const Entry& e, const double* payload) {
  std::string out;
  for (const Piece& p : parse("checkify", e.fmt, e.slots.size())) {
    if (!p.is_field)
      out += p.text;
    else
      out += format_value(e.slots[p.field.arg], payload[p.field.arg], p.field.spec);
  }
  return out;
}

CheckInfo::~CheckInfo() {
  Registry& r = Registry::get();
  std::lock_guard<std::mutex> g(r.mu);
  auto it = r.live.find(id);
  if (it != r.live.end() && it->second.expired()) r.live.erase(it);
}

std::shared_ptr<const CheckInfo> find_check(const ops::Params& p) {
  if (!p.has("callback")) return nullptr;
  const auto& obj = p.get<std::shared_ptr<const ops::ParamObject>>("callback");
  if (!obj) return nullptr;
  std::string s = obj->str();
  if (s.compare(0, kCheckTag.size(), kCheckTag) != 0) return nullptr;
  uint64_t id = 0;
  std::from_chars(s.data() + kCheckTag.size(), s.data() + s.size(), id);
  Registry& r = Registry::get();
  std::lock_guard<std::mutex> g(r.mu);
  auto it = r.live.find(id);
  return it == r.live.end() ? nullptr : it->second.lock();
}

TracingGuard::TracingGuard() { ++t_tracing; }
TracingGuard::~TracingGuard() { --t_tracing; }

void check_flat(const Array& pred, const Message& msg, std::vector<Array> fmt_args) {
  if (!pred.valid() || pred.dtype() != DType::Bool || pred.ndim() != 0)
    throw TypeError(
        str("[checkify.check] takes a scalar bool pred, got ",
            pred.valid() ? type_str(pred.dtype(), pred.shape()) : std::string("an empty Array"),
            "; reduce it first, e.g. jnp::all(x > 0)"));
  if (int64_t(fmt_args.size()) > kPayload)
    throw ValueError(str("[checkify.check] ", fmt_args.size(), " format arguments given; at most ",
                         kPayload, " are supported (an Error carries ", kPayload, " values)"));
  std::vector<DType> slots;
  for (size_t i = 0; i < fmt_args.size(); ++i) {
    const Array& a = fmt_args[i];
    if (!a.valid() || a.ndim() != 0)
      throw ValueError(
          str("[checkify.check] format argument ", i, " is ",
              a.valid() ? type_str(a.dtype(), a.shape()) : std::string("an empty Array"),
              "; only scalars (0-d arrays or C++ numbers) can be shown: pass x(i) or "
              "jnp::max(x)"));
    slots.push_back(a.dtype());
  }
  validate_format("checkify.check", msg.text, slots);
  if (staging_now() && t_tracing == 0)
    throw ValueError(
        "[checkify.check] Cannot abstractly evaluate a checkify.check which was not "
        "functionalized: a check was staged (jit, cond, while_loop, scan, ...) outside "
        "checkify, where nothing could report it. Wrap the function with "
        "jx::checkify::checkify(f) and inspect the returned Error, or call check eagerly");
  auto info = std::make_shared<CheckInfo>();
  info->entry.fmt = str(msg.text, escape_braces(str(" (check failed at ", where(msg.where), ")")));
  info->entry.slots = slots;
  {
    Registry& r = Registry::get();
    std::lock_guard<std::mutex> g(r.mu);
    info->id = r.next++;
    r.live[info->id] = info;
  }
  std::shared_ptr<const CheckInfo> held = info;
  std::vector<Array> leaves{pred};
  leaves.insert(leaves.end(), fmt_args.begin(), fmt_args.end());
  jx::debug::detail::callback_flat(
      [held](std::span<const Array> xs) {
        if (xs[0].item<bool>()) return;
        std::vector<double> vals(size_t(kPayload), 0.0);
        for (size_t i = 1; i < xs.size(); ++i) vals[i - 1] = xs[i].item<double>();
        throw JaxRuntimeError(render(held->entry, vals.data()));
      },
      str(kCheckTag, held->id, " '", msg.text, "'"), std::move(leaves));
}

}  // namespace detail

std::optional<std::string> Error::get() const {
  if (!code_.valid()) return std::nullopt;
  if (!code_.is_concrete() || !payload_.is_concrete())
    throw ConcretizationError(
        "[checkify] Error::get() needs a concrete Error, but this one is traced (inside jit, vmap "
        "or grad): return the Error from the transformed function and call get() on the result");
  Shape want = code_.shape();
  want.insert(want.size(), detail::kPayload);
  if (payload_.shape() != want || code_.dtype() != DType::Int32)
    throw ValueError(str("[checkify] malformed Error: code ",
                         type_str(code_.dtype(), code_.shape()), " and payload ",
                         type_str(payload_.dtype(), payload_.shape()),
                         " do not match (the payload must be the code's "
                         "shape + [",
                         detail::kPayload, "]); map Errors with out_axes 0 under vmap"));
  const std::vector<int64_t> codes = code_.to_vector<int64_t>();
  const std::vector<double> pay = payload_.to_vector<double>();
  const detail::Table table = detail::parse_table(table_);
  auto message = [&](size_t i) {
    int64_t c = codes[i];
    if (c < 1 || c > int64_t(table.size()))
      throw ValueError(str("[checkify] error code ", c, " is not in this Error's message table (",
                           table.size(),
                           " entries): the Error's leaves and structure were mixed up"));
    return detail::render(table[size_t(c - 1)], pay.data() + i * size_t(detail::kPayload));
  };
  if (code_.ndim() == 0) {
    if (codes[0] == 0) return std::nullopt;
    return message(0);
  }
  // Batched (JAX's BatchedError): one line per failing element, in row-major order.
  std::string out;
  const Shape& s = code_.shape();
  for (size_t i = 0; i < codes.size(); ++i) {
    if (codes[i] == 0) continue;
    std::vector<int64_t> idx(size_t(s.size()));
    int64_t rest = int64_t(i);
    for (size_t d = s.size(); d-- > 0;) {
      idx[d] = rest % s[d];
      rest /= s[d];
    }
    std::string at;
    for (size_t d = 0; d < idx.size(); ++d) at += str(d ? ", " : "", idx[d]);
    out += str(out.empty() ? "" : "\n", "at mapped index ", at, ": ", message(i));
  }
  if (out.empty()) return std::nullopt;
  return out;
}

void Error::throw_if_error() const {
  if (std::optional<std::string> m = get()) throw JaxRuntimeError(*m);
}

}  // namespace jx::checkify

namespace jx::tree {

namespace {
const detail::StructInfo* error_info() {
  static const detail::StructInfo info("jx::checkify::Error", {"code", "payload", "messages"});
  return &info;
}
}  // namespace

void PytreeTraits<checkify::Error>::flatten(const checkify::Error& e, detail::Builder& b) {
  size_t i = b.open_struct(error_info());
  if (e.code_.valid()) {
    b.leaf(e.code_);
    b.leaf(e.payload_);
  } else {  // a default Error: no error
    Array code = jx::detail::empty_array(Shape{}, DType::Int32);
    *jx::detail::data<int32_t>(code) = 0;
    Array payload = jx::detail::empty_array(Shape{checkify::detail::kPayload}, DType::Float64);
    std::fill_n(jx::detail::data<double>(payload), checkify::detail::kPayload, 0.0);
    b.leaf(code);
    b.leaf(payload);
  }
  b.static_string(e.table_);
  b.close(i, 3);
}

checkify::Error PytreeTraits<checkify::Error>::unflatten(detail::Reader& r) {
  detail::check_struct(r, r.peek(), error_info());
  r.expect(NodeKind::Struct, error_info()->name);
  checkify::Error e;
  e.code_ = r.leaf();
  e.payload_ = r.leaf();
  const detail::Node& n = r.expect_static(detail::StaticKind::String, "std::string");
  e.table_ = std::string(r.def().node_string(n));
  return e;
}

}  // namespace jx::tree
