// TreeDef: a pytree's structure as two flat buffers (pre-order nodes + a string pool), so
// that building, hashing and comparing one touches contiguous memory and allocates twice.
#include <cxxabi.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ostream>

#include "jx/tree.h"
#include "support/check.h"
#include "support/str.h"

namespace jx::tree {

namespace {

inline size_t mix(size_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

size_t str_hash(std::string_view s) { return std::hash<std::string_view>{}(s); }

// Python's repr of a str: single quotes, with quotes and backslashes escaped.
std::string quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  out += '\'';
  return out;
}

// Shortest round-trip spelling, with ".0" on integral values as Python prints floats.
std::string float_repr(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), f);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

bool same_struct(const detail::StructInfo* a, const detail::StructInfo* b) {
  if (a == b) return true;
  if (std::strcmp(a->name, b->name) != 0 || a->fields.size() != b->fields.size()) return false;
  for (size_t i = 0; i < a->fields.size(); ++i)
    if (std::strcmp(a->fields[i], b->fields[i]) != 0) return false;
  return true;
}

bool same_enum(const void* a, const void* b) {
  return a == b || static_cast<const detail::EnumInfo*>(a)->name ==
                       static_cast<const detail::EnumInfo*>(b)->name;
}

StaticValue static_of(const TreeDef& d, const detail::Node& n) {
  using K = detail::StaticKind;
  switch (n.skind) {
    case K::Bool: return StaticValue::boolean(n.v.i != 0);
    case K::Int: return StaticValue::integer(n.v.i);
    case K::UInt: return StaticValue::uinteger(n.v.u);
    case K::Float: return StaticValue::floating(n.v.f);
    case K::String: return StaticValue::string(std::string(d.node_string(n)));
    case K::Enum:
      return StaticValue::enumeration(n.v.i, static_cast<const detail::EnumInfo*>(n.info));
  }
  JX_CHECK(false, "bad static kind");
}

// Prints the subtree at i; returns the index just past it.
size_t print_node(std::string& out, const TreeDef& d, size_t i) {
  const detail::Node& n = d.nodes()[i];
  size_t j = i + 1;
  auto children = [&](const char* open, const char* close, auto&& label) {
    out += open;
    for (uint32_t k = 0; k < n.arity; ++k) {
      if (k) out += ", ";
      label(k);
      j = print_node(out, d, j);
    }
    if (n.kind == NodeKind::Tuple && n.arity == 1) out += ",";
    out += close;
  };
  switch (n.kind) {
    case NodeKind::Leaf: out += "*"; break;
    case NodeKind::None: out += "None"; break;
    case NodeKind::Tuple: children("(", ")", [](uint32_t) {}); break;
    case NodeKind::List: children("[", "]", [](uint32_t) {}); break;
    case NodeKind::Dict: {
      uint32_t cursor = 0;
      children("{", "}", [&](uint32_t) {
        out += quote(d.next_key(n, cursor));
        out += ": ";
      });
      break;
    }
    case NodeKind::Struct: {
      auto* info = static_cast<const detail::StructInfo*>(n.info);
      out += info->name;
      children("(", ")", [&](uint32_t k) {
        out += info->fields[k];
        out += "=";
      });
      break;
    }
    case NodeKind::Static: out += static_of(d, n).repr(); break;
  }
  return j;
}

KeyEntry child_key(const TreeDef& d, const detail::Node& n, uint32_t k, uint32_t& cursor) {
  KeyEntry e;
  switch (n.kind) {
    case NodeKind::Dict:
      e.kind = KeyEntry::Kind::Dict;
      e.name = std::string(d.next_key(n, cursor));
      break;
    case NodeKind::Struct:
      e.kind = KeyEntry::Kind::Field;
      e.name = static_cast<const detail::StructInfo*>(n.info)->fields[k];
      break;
    default:
      e.kind = KeyEntry::Kind::Index;
      e.index = k;
      break;
  }
  return e;
}

void collect_paths(const TreeDef& d, size_t i, std::vector<KeyEntry>& stack,
                   std::vector<KeyPath>& out) {
  const detail::Node& n = d.nodes()[i];
  if (n.kind == NodeKind::Leaf) {
    out.emplace_back(stack);
    return;
  }
  size_t j = i + 1;
  uint32_t cursor = 0;
  for (uint32_t k = 0; k < n.arity; ++k) {
    KeyEntry e = child_key(d, n, k, cursor);
    if (d.nodes()[j].num_leaves) {
      stack.push_back(std::move(e));
      collect_paths(d, j, stack, out);
      stack.pop_back();
    }
    j += d.nodes()[j].num_nodes;
  }
}

}  // namespace

// ---- descriptors ----

detail::StructInfo::StructInfo(const char* name_, std::initializer_list<const char*> fields_)
    : name(name_), fields(fields_) {
  hash = str_hash(name);
  for (const char* f : fields) hash = mix(hash, str_hash(f));
}

detail::EnumInfo::EnumInfo(std::string name_, std::string (*to_string_)(int64_t), bool handle_)
    : name(std::move(name_)), to_string(to_string_), handle(handle_), hash(str_hash(name)) {}

std::string detail::demangle(const char* mangled) {
  int status = 0;
  char* s = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (!s) return mangled;
  std::string out(s);
  std::free(s);
  return out;
}

std::string detail::dtype_enum_name(int64_t v) { return dtype_name(DType(v)); }

detail::Scratch& detail::scratch() {
  thread_local Scratch s;
  return s;
}

// ---- StaticValue ----

StaticValue StaticValue::boolean(bool b) {
  StaticValue s;
  s.kind_ = Kind::Bool;
  s.v_.i = b;
  return s;
}
StaticValue StaticValue::integer(int64_t i) {
  StaticValue s;
  s.kind_ = Kind::Int;
  s.v_.i = i;
  return s;
}
StaticValue StaticValue::uinteger(uint64_t u) {
  StaticValue s;
  s.kind_ = Kind::UInt;
  s.v_.u = u;
  return s;
}
StaticValue StaticValue::floating(double f) {
  StaticValue s;
  s.kind_ = Kind::Float;
  s.v_.f = f;
  return s;
}
StaticValue StaticValue::string(std::string str) {
  StaticValue s;
  s.kind_ = Kind::String;
  s.s_ = std::move(str);
  return s;
}
StaticValue StaticValue::enumeration(int64_t value, const detail::EnumInfo* info) {
  StaticValue s;
  s.kind_ = Kind::Enum;
  s.v_.i = value;
  s.info_ = info;
  return s;
}

namespace {
[[noreturn]] void bad_static(const char* want, const StaticValue& v) {
  throw ValueError(jx::str("[tree.StaticValue] expected ", want, ", the value is ", v.repr()));
}
}  // namespace

bool StaticValue::as_bool() const {
  if (kind_ != Kind::Bool) bad_static("a bool", *this);
  return v_.i != 0;
}
int64_t StaticValue::as_int() const {
  if (kind_ == Kind::UInt && v_.u > uint64_t(INT64_MAX)) bad_static("an int64", *this);
  if (kind_ == Kind::Float || kind_ == Kind::String) bad_static("an integer", *this);
  return v_.i;
}
uint64_t StaticValue::as_uint() const {
  if (kind_ == Kind::UInt) return v_.u;
  if (kind_ == Kind::Float || kind_ == Kind::String || v_.i < 0)
    bad_static("a non-negative integer", *this);
  return uint64_t(v_.i);
}
double StaticValue::as_float() const {
  if (kind_ == Kind::Float) return v_.f;
  if (kind_ == Kind::UInt) return double(v_.u);
  if (kind_ == Kind::String) bad_static("a number", *this);
  return double(v_.i);
}
const std::string& StaticValue::as_string() const {
  if (kind_ != Kind::String) bad_static("a string", *this);
  return s_;
}

size_t StaticValue::hash() const {
  size_t h = mix(0, uint64_t(kind_));
  switch (kind_) {
    case Kind::String: return mix(h, str_hash(s_));
    case Kind::Enum: return mix(mix(h, info_->hash), v_.u);
    default: return mix(h, v_.u);
  }
}

bool StaticValue::operator==(const StaticValue& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::String: return s_ == o.s_;
    case Kind::Enum: return v_.i == o.v_.i && same_enum(info_, o.info_);
    default: return v_.u == o.v_.u;
  }
}

std::string StaticValue::repr() const {
  switch (kind_) {
    case Kind::Bool: return v_.i ? "true" : "false";
    case Kind::Int: return std::to_string(v_.i);
    case Kind::UInt: return std::to_string(v_.u);
    case Kind::Float: return float_repr(v_.f);
    case Kind::String: return quote(s_);
    case Kind::Enum:
      if (info_->to_string) return info_->to_string(v_.i);
      return str(info_->name, "(", v_.i, ")");
  }
  return "?";
}

// ---- KeyPath ----

std::string KeyEntry::str() const { return kind == Kind::Index ? std::to_string(index) : name; }

std::string KeyEntry::keystr() const {
  switch (kind) {
    case Kind::Dict: return jx::str("[", quote(name), "]");
    case Kind::Index: return jx::str("[", index, "]");
    case Kind::Field: return jx::str(".", name);
  }
  return "";
}

std::string KeyPath::str(std::string_view separator) const {
  std::string out;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (i) out += separator;
    out += entries_[i].str();
  }
  return out;
}

std::string KeyPath::keystr() const {
  std::string out;
  for (const KeyEntry& e : entries_) out += e.keystr();
  return out;
}

std::ostream& operator<<(std::ostream& os, const KeyPath& p) { return os << p.str(); }

// ---- Builder ----

void detail::Builder::static_value(const StaticValue& v) {
  using K = StaticKind;
  switch (v.kind()) {
    case K::Bool: static_node(K::Bool).v.i = v.as_bool(); break;
    case K::Int: static_node(K::Int).v.i = v.as_int(); break;
    case K::UInt: static_node(K::UInt).v.u = v.as_uint(); break;
    case K::Float: static_node(K::Float).v.f = v.as_float(); break;
    case K::String: static_string(v.as_string()); break;
    case K::Enum: {
      Node& n = static_node(K::Enum);
      n.v.i = v.as_int();
      n.info = v.enum_info();
      break;
    }
  }
}

void detail::Builder::subtree(const TreeDef& def) {
  uint32_t shift = uint32_t(pool_.size());
  pool_ += def.pool();
  for (Node n : def.nodes()) {
    n.str_off += shift;
    nodes_.push_back(n);
  }
  leaf_count_ += uint32_t(def.num_leaves());
}

TreeDef detail::Builder::finish(const std::vector<Node>& nodes, std::string&& pool) {
  TreeDef def(TreeDef::Empty{});
  def.nodes_.assign(nodes.begin(), nodes.end());
  def.pool_ = std::move(pool);
  def.finish();
  return def;
}

// ---- Reader ----

detail::Reader::Reader(const TreeDef& def, const Array* leaves, size_t n, bool move)
    : def_(def), leaves_(leaves), num_leaves_(n), move_(move) {
  if (n != def.num_leaves())
    throw ValueError(jx::str("[tree.unflatten] ", def, " has ", def.num_leaves(),
                         " leaves but ", n, " were given"));
}

void detail::Reader::mismatch(const char* cpp_type) const {
  std::string path = def_.node_path(pos_);
  throw ValueError(jx::str("[tree.unflatten] the TreeDef does not match the C++ type: at ",
                       path.empty() ? std::string("the root") : quote(path), " the type expects ",
                       cpp_type, " but the TreeDef has ", def_.node_str(pos_), " (in ", def_,
                       "); unflatten with the type that was flattened, or with jx::Tree"));
}

void detail::Reader::finish() const {
  JX_CHECK(pos_ == def_.num_nodes() && leaf_ == num_leaves_, "unflatten did not consume the tree");
}

void detail::throw_structure_mismatch(const char* op, size_t index, const TreeDef& expected,
                                      const TreeDef& got) {
  throw ValueError(jx::str("[", op, "] tree ", index, " has structure ", got,
                       " but tree 0 has structure ", expected,
                       "; all trees must have the same containers, keys and static values"));
}

void detail::check_struct(Reader& r, const Node& n, const StructInfo* info) {
  if (n.kind != NodeKind::Struct || !same_struct(static_cast<const StructInfo*>(n.info), info))
    r.mismatch(info->name);
}

// ---- TreeDef ----

TreeDef::TreeDef() {
  nodes_.emplace_back().kind = NodeKind::None;
  finish();
}

TreeDef TreeDef::leaf() {
  TreeDef d;
  d.nodes_[0].kind = NodeKind::Leaf;
  d.nodes_[0].num_leaves = 1;
  d.finish();
  return d;
}

TreeDef TreeDef::none() { return TreeDef(); }

TreeDef TreeDef::tuple(const std::vector<TreeDef>& children) {
  std::vector<detail::Node> nodes;
  std::string pool;
  detail::Builder b(nodes, pool, nullptr);
  size_t i = b.open(NodeKind::Tuple);
  for (const TreeDef& c : children) b.subtree(c);
  b.close(i, children.size());
  return detail::Builder::finish(nodes, std::move(pool));
}

void TreeDef::finish() {
  size_t h = nodes_.size();
  for (const detail::Node& n : nodes_) {
    h = mix(h, uint64_t(n.kind) | uint64_t(n.skind) << 8 | uint64_t(n.arity) << 16);
    switch (n.kind) {
      case NodeKind::Dict: h = mix(h, str_hash(node_string(n))); break;
      case NodeKind::Struct: h = mix(h, static_cast<const detail::StructInfo*>(n.info)->hash); break;
      case NodeKind::Static:
        if (n.skind == detail::StaticKind::String) h = mix(h, str_hash(node_string(n)));
        else if (n.skind == detail::StaticKind::Enum)
          h = mix(mix(h, static_cast<const detail::EnumInfo*>(n.info)->hash), n.v.u);
        else h = mix(h, n.v.u);
        break;
      default: break;
    }
  }
  hash_ = h;
}

bool TreeDef::operator==(const TreeDef& o) const {
  if (hash_ != o.hash_ || nodes_.size() != o.nodes_.size()) return false;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const detail::Node& a = nodes_[i];
    const detail::Node& b = o.nodes_[i];
    if (a.kind != b.kind || a.arity != b.arity) return false;
    switch (a.kind) {
      case NodeKind::Dict:
        if (node_string(a) != o.node_string(b)) return false;
        break;
      case NodeKind::Struct:
        if (!same_struct(static_cast<const detail::StructInfo*>(a.info),
                         static_cast<const detail::StructInfo*>(b.info)))
          return false;
        break;
      case NodeKind::Static:
        if (a.skind != b.skind) return false;
        if (a.skind == detail::StaticKind::String) {
          if (node_string(a) != o.node_string(b)) return false;
        } else if (a.v.u != b.v.u ||
                   (a.skind == detail::StaticKind::Enum && !same_enum(a.info, b.info))) {
          return false;
        }
        break;
      default: break;
    }
  }
  return true;
}

std::string_view TreeDef::next_key(const detail::Node& n, uint32_t& cursor) const {
  JX_CHECK(cursor + sizeof(uint32_t) <= n.str_len, "dict key out of range");
  uint32_t len;
  std::memcpy(&len, pool_.data() + n.str_off + cursor, sizeof(len));
  std::string_view key(pool_.data() + n.str_off + cursor + sizeof(len), len);
  cursor += uint32_t(sizeof(len) + len);
  return key;
}

std::string TreeDef::node_str(size_t idx) const {
  std::string out;
  print_node(out, *this, idx);
  return out;
}

std::string TreeDef::str() const { return jx::str("PyTreeDef(", node_str(0), ")"); }

std::ostream& operator<<(std::ostream& os, const TreeDef& d) { return os << d.str(); }

std::string TreeDef::node_path(size_t idx) const {
  std::vector<KeyEntry> path;
  size_t i = 0;
  while (i != idx) {
    const detail::Node& n = nodes_[i];
    size_t j = i + 1;
    uint32_t cursor = 0;
    bool found = false;
    for (uint32_t k = 0; k < n.arity; ++k) {
      KeyEntry e = child_key(*this, n, k, cursor);
      size_t end = j + nodes_[j].num_nodes;
      if (idx >= j && idx < end) {
        path.push_back(std::move(e));
        i = j;
        found = true;
        break;
      }
      j = end;
    }
    JX_CHECK(found, "node index outside the tree");
  }
  return KeyPath(std::move(path)).str();
}

std::vector<TreeDef> TreeDef::children() const {
  std::vector<TreeDef> out;
  const detail::Node& root = nodes_[0];
  size_t j = 1;
  for (uint32_t k = 0; k < root.arity; ++k) {
    size_t end = j + nodes_[j].num_nodes;
    TreeDef c;
    c.nodes_.assign(nodes_.begin() + j, nodes_.begin() + end);
    // Re-pack only the strings this subtree uses.
    for (detail::Node& n : c.nodes_) {
      // An empty dict or string keeps no bytes; its offset must not point past this pool.
      if (n.str_len == 0) {
        n.str_off = 0;
        continue;
      }
      uint32_t off = uint32_t(c.pool_.size());
      c.pool_.append(pool_, n.str_off, n.str_len);
      n.str_off = off;
    }
    c.finish();
    out.push_back(std::move(c));
    j = end;
  }
  return out;
}

std::vector<std::string> TreeDef::keys() const {
  std::vector<std::string> out;
  const detail::Node& n = nodes_[0];
  if (n.kind == NodeKind::Dict) {
    uint32_t cursor = 0;
    for (uint32_t k = 0; k < n.arity; ++k) out.emplace_back(next_key(n, cursor));
  } else if (n.kind == NodeKind::Struct) {
    for (const char* f : static_cast<const detail::StructInfo*>(n.info)->fields) out.emplace_back(f);
  }
  return out;
}

std::string TreeDef::type_name() const {
  if (kind() != NodeKind::Struct) return "";
  return static_cast<const detail::StructInfo*>(nodes_[0].info)->name;
}

StaticValue TreeDef::static_value() const {
  if (kind() != NodeKind::Static)
    throw ValueError(jx::str("[TreeDef.static_value] ", *this, " is not a static value"));
  return static_of(*this, nodes_[0]);
}

std::vector<KeyPath> TreeDef::leaf_paths() const {
  std::vector<KeyPath> out;
  out.reserve(num_leaves());
  std::vector<KeyEntry> stack;
  collect_paths(*this, 0, stack, out);
  return out;
}

Tree TreeDef::unflatten(std::span<const Array> leaves) const {
  detail::Reader r(*this, leaves.data(), leaves.size(), false);
  Tree t = detail::read_tree(r);
  r.finish();
  return t;
}

StaticValue detail::static_value_of(const TreeDef& d, const Node& n) { return static_of(d, n); }

}  // namespace jx::tree
