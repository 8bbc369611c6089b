// jx::debug::print / callback and the debug_callback primitive (JAX's debug_callback_p).
// The primitive has operands (the values to show) and no outputs; its params hold the
// host function (`callback`) and `effect=Debug`, the marker that keeps it alive through
// dead-code elimination although nothing uses its (absent) outputs.
#include "jx/debug.h"

#include <cstdio>
#include <mutex>
#include <sstream>
#include <variant>

#include "jit/python_format.h"
#include "jx/lax.h"
#include "ops/batching.h"
#include "ops/common.h"
#include "transforms/bind.h"
#include "transforms/trace.h"

namespace jx::debug::detail {

namespace {

class CallbackParam : public ops::ParamObject {
 public:
  CallbackParam(std::function<void(std::span<const Array>)> f, std::string d)
      : fn(std::move(f)), describe(std::move(d)) {}
  std::string str() const override { return describe; }
  // Identity: two calls of print are two effects, even with equal text.
  bool equals(const ops::ParamObject& other) const override { return this == &other; }
  size_t hash() const override { return std::hash<const void*>()(this); }
  std::function<void(std::span<const Array>)> fn;
  std::string describe;
};

// ---- the format string ----

struct Field {
  size_t arg = 0;
  std::string spec;  // after ':', empty for none
};
using Piece = std::variant<std::string, Field>;

[[noreturn]] void bad_format(std::string_view fmt, const std::string& why) {
  throw ValueError(str("[debug.print] format string \"", fmt, "\": ", why));
}

std::vector<Piece> parse_format(std::string_view fmt, size_t num_args) {
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
      bad_format(fmt, "single '}' (write '}}' for a literal brace)");
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
    if (close == std::string_view::npos) bad_format(fmt, "'{' without a closing '}'");
    std::string_view body = fmt.substr(i + 1, close - i - 1);
    size_t colon = body.find(':');
    std::string_view index = body.substr(0, colon);
    Field f;
    if (colon != std::string_view::npos) f.spec = std::string(body.substr(colon + 1));
    if (index.empty()) {
      if (numbering == Manual) bad_format(fmt, "cannot switch from manual field numbering to automatic");
      numbering = Auto;
      f.arg = next++;
    } else {
      if (numbering == Auto) bad_format(fmt, "cannot switch from automatic field numbering to manual");
      numbering = Manual;
      f.arg = 0;
      for (char d : index) {
        if (d < '0' || d > '9') bad_format(fmt, str("field '", index, "' is not an argument index"));
        f.arg = f.arg * 10 + size_t(d - '0');
      }
    }
    if (f.arg >= num_args)
      throw IndexError(str("[debug.print] format string \"", fmt, "\" refers to argument ", f.arg,
                           " but ", num_args, " argument", num_args == 1 ? " was" : "s were",
                           " given"));
    if (!text.empty()) out.emplace_back(std::move(text));
    text.clear();
    out.emplace_back(std::move(f));
    i = close;
  }
  if (!text.empty()) out.emplace_back(std::move(text));
  return out;
}

using jit_detail::printf_conversion;

std::string format_number(double v, const std::string& conv) {
  char buf[128];
  if (conv.back() == 'd') std::snprintf(buf, sizeof(buf), conv.c_str(), static_cast<long long>(v));
  else std::snprintf(buf, sizeof(buf), conv.c_str(), v);
  return buf;
}

void format_tree(std::ostringstream& os, const Tree& t, bool top) {
  switch (t.kind()) {
    case Tree::Kind::None: os << "None"; break;
    case Tree::Kind::Leaf: os << t.array(); break;
    case Tree::Kind::Static: {
      const tree::StaticValue& v = t.static_value();
      if (top && v.kind() == tree::StaticValue::Kind::String) os << v.as_string();
      else os << v.repr();
      break;
    }
    case Tree::Kind::List:
      os << "[";
      for (size_t i = 0; i < t.size(); ++i) {
        os << (i ? ", " : "");
        format_tree(os, t.children()[i], false);
      }
      os << "]";
      break;
    case Tree::Kind::Dict:
      os << "{";
      for (size_t i = 0; i < t.size(); ++i) {
        os << (i ? ", '" : "'") << t.keys()[i] << "': ";
        format_tree(os, t.children()[i], false);
      }
      os << "}";
      break;
  }
}

// The value of a 0-d leaf or numeric static, for a format spec.
bool scalar_value(const tree::TreeDef& def, std::span<const Array> leaves, double* v, bool* integral) {
  if (def.is_leaf()) {
    if (leaves[0].ndim() != 0) return false;
    *integral = !is_floating(leaves[0].dtype());
    if (leaves[0].is_concrete()) *v = leaves[0].item<double>();
    return true;
  }
  if (def.kind() != tree::NodeKind::Static) return false;
  tree::StaticValue s = def.static_value();
  using K = tree::StaticValue::Kind;
  if (s.kind() == K::Float) {
    *v = s.as_float();
    *integral = false;
    return true;
  }
  if (s.kind() == K::Int || s.kind() == K::UInt || s.kind() == K::Bool) {
    *v = double(s.as_int());
    *integral = true;
    return true;
  }
  return false;
}

struct Printer {
  std::string fmt;
  std::vector<Piece> pieces;
  std::vector<tree::TreeDef> defs;
  std::vector<size_t> offsets;  // first leaf of each argument

  std::span<const Array> leaves_of(size_t arg, std::span<const Array> all) const {
    return all.subspan(offsets[arg], defs[arg].num_leaves());
  }

  // Checks every spec against its argument now (types are known while tracing).
  void validate(std::span<const Array> leaves) const {
    for (const Piece& p : pieces) {
      const Field* f = std::get_if<Field>(&p);
      if (!f || f->spec.empty()) continue;
      double v = 0;
      bool integral = false;
      if (!scalar_value(defs[f->arg], leaves_of(f->arg, leaves), &v, &integral))
        throw ValueError(str("[debug.print] format spec ':", f->spec, "' in \"", fmt,
                             "\" needs a scalar (0-d array or C++ number) for argument ", f->arg,
                             "; drop the spec to print the whole value"));
      if (printf_conversion(f->spec).empty())
        throw ValueError(str("[debug.print] format spec ':", f->spec, "' in \"", fmt,
                             "\" is not supported; use [+][width][.precision] and one of f e g d"));
    }
  }

  std::string render(std::span<const Array> leaves) const {
    std::ostringstream os;
    for (const Piece& p : pieces) {
      if (const std::string* s = std::get_if<std::string>(&p)) {
        os << *s;
        continue;
      }
      const Field& f = std::get<Field>(p);
      std::span<const Array> lv = leaves_of(f.arg, leaves);
      if (!f.spec.empty()) {
        double v = 0;
        bool integral = false;
        scalar_value(defs[f.arg], lv, &v, &integral);
        os << format_number(v, printf_conversion(f.spec));
      } else if (defs[f.arg].is_leaf()) {
        os << lv[0];
      } else {
        format_tree(os, defs[f.arg].unflatten(lv), true);
      }
    }
    return os.str();
  }
};

std::mutex& stdout_mutex() {
  static std::mutex m;
  return m;
}

// ---- the primitive's rules ----

const CallbackParam& callback_of(const ops::Params& p) { return p.obj<CallbackParam>("callback"); }

ops::Avals callback_abstract_eval(std::span<const ops::Aval>, const ops::Params&) { return {}; }

void callback_impl(std::span<const Array> in, std::span<Array>, const ops::Params& p) {
  tr::CurrentTraceGuard g(nullptr);  // the host function sees plain arrays, eagerly
  callback_of(p).fn(in);
}

// The callback already ran on the primals (the jvp machinery binds the primitive on them);
// there is nothing to differentiate.
ops::Arrays callback_jvp(std::span<const Array>, std::span<const Array>, std::span<const Array>,
                         const ops::Params&) {
  return {};
}

// As JAX: unrolled over the batch, one call per element, in order.
ops::batching::BatchResult callback_batch(std::span<const Array> in, std::span<const int> dims,
                                          const ops::Params& p) {
  using ops::batching::kNotMapped;
  int64_t size = ops::batching::axis_size(in, dims);
  for (int64_t i = 0; i < size; ++i) {
    ops::Arrays args;
    for (size_t k = 0; k < in.size(); ++k) {
      if (dims[k] == kNotMapped) {
        args.push_back(in[k]);
        continue;
      }
      Array s = lax::slice_in_dim(in[k], i, i + 1, 1, dims[k]);
      args.push_back(lax::squeeze(s, {int64_t(dims[k])}));
    }
    bind(ops::Prim::DebugCallback, args, p);
  }
  return {};
}

}  // namespace

void callback_flat(std::function<void(std::span<const Array>)> fn, std::string describe,
                   std::vector<Array> leaves) {
  ops::Params p;
  p.set("callback", std::shared_ptr<const ops::ParamObject>(
                        std::make_shared<CallbackParam>(std::move(fn), std::move(describe))));
  p.set("effect", std::string("Debug"));
  bind(ops::Prim::DebugCallback, leaves, p);
}

void print_flat(std::string_view fmt, FlatArgs args) {
  auto pr = std::make_shared<Printer>();
  pr->fmt = std::string(fmt);
  pr->pieces = parse_format(fmt, args.defs.size());
  size_t off = 0;
  for (const tree::TreeDef& d : args.defs) {
    pr->offsets.push_back(off);
    off += d.num_leaves();
  }
  pr->defs = std::move(args.defs);
  pr->validate(args.leaves);
  std::string quoted = "print('";
  quoted += pr->fmt;
  quoted += "')";
  callback_flat(
      [pr](std::span<const Array> xs) {
        std::string line = pr->render(xs) + "\n";
        std::lock_guard<std::mutex> g(stdout_mutex());
        std::fwrite(line.data(), 1, line.size(), stdout);
        std::fflush(stdout);
      },
      std::move(quoted), std::move(args.leaves));
}

}  // namespace jx::debug::detail

namespace jx::ops {

void register_debug_callback() {
  PrimitiveInfo& p = mutable_info(Prim::DebugCallback);
  p.abstract_eval = debug::detail::callback_abstract_eval;
  p.impl = debug::detail::callback_impl;
  p.jvp = debug::detail::callback_jvp;
  p.batch = debug::detail::callback_batch;
  p.not_linear = true;  // never in a linear jaxpr: it only ever sees primals
}

}  // namespace jx::ops
