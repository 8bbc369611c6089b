// A checkpoint item: the tree description (tree.json) and the leaves (arrays.safetensors).
// The description is written from the TreeDef alone and read back strictly: every node is
// validated, so a corrupt or hand-edited file is an IOError naming the file and the node.
#include "checkpoint/item.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "checkpoint/files.h"
#include "core/allocator.h"
#include "core/array_impl.h"
#include "jx/error.h"
#include "numpy/io_npy.h"
#include "numpy/safetensors_format.h"
#include "support/json.h"
#include "support/str.h"

namespace jx::ckpt::detail {

using jx::detail::Json;
using tree::KeyEntry;
using tree::NodeKind;
using tree::StaticValue;
using tree::TreeDef;

namespace {

// ---- writing the description ----

std::string float_text(double f) {
  if (std::isnan(f)) return "\"nan\"";
  if (std::isinf(f)) return f > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof buf, f);  // shortest text that reads back exactly
  return std::string(buf, r.ptr);
}

void describe_static(std::string& out, const StaticValue& v) {
  using K = StaticValue::Kind;
  switch (v.kind()) {
    case K::Bool: out += str("{\"static\":\"bool\",\"value\":", v.as_bool() ? "true" : "false", "}"); break;
    case K::Int: out += str("{\"static\":\"int\",\"value\":", v.as_int(), "}"); break;
    case K::UInt: out += str("{\"static\":\"uint\",\"value\":", v.as_uint(), "}"); break;
    case K::Float: out += str("{\"static\":\"float\",\"value\":", float_text(v.as_float()), "}"); break;
    case K::String:
      out += "{\"static\":\"string\",\"value\":";
      jx::detail::json_quote(out, v.as_string());
      out += "}";
      break;
    case K::Enum:
      if (v.enum_info() && v.enum_info()->handle) {  // an id with no meaning in another process
        out += "{\"static\":\"handle\",\"type\":";
        jx::detail::json_quote(out, v.enum_info()->name);
        out += "}";
        break;
      }
      out += "{\"static\":\"enum\",\"type\":";
      jx::detail::json_quote(out, v.enum_info() ? v.enum_info()->name : "");
      out += str(",\"value\":", v.as_int(), "}");
      break;
  }
}

struct Describer {
  const std::vector<Array>& leaves;
  const std::vector<std::string>& names;
  size_t leaf = 0;
  std::string out = {};

  void node(const TreeDef& d) {
    switch (d.kind()) {
      case NodeKind::Leaf: {
        const Array& a = leaves[leaf];
        out += "{\"array\":";
        jx::detail::json_quote(out, names[leaf++]);
        out += str(",\"dtype\":\"", dtype_name(a.dtype()), "\",\"shape\":[");
        for (size_t i = 0; i < a.shape().size(); ++i) out += str(i ? "," : "", a.shape()[i]);
        out += "]";
        if (a.weak_type()) out += ",\"weak_type\":true";
        out += "}";
        return;
      }
      case NodeKind::None: out += "{\"none\":null}"; return;
      case NodeKind::Static: describe_static(out, d.static_value()); return;
      case NodeKind::Tuple:
      case NodeKind::List: {
        out += d.kind() == NodeKind::Tuple ? "{\"tuple\":[" : "{\"list\":[";
        bool first = true;
        for (const TreeDef& c : d.children()) {
          if (!first) out += ",";
          first = false;
          node(c);
        }
        out += "]}";
        return;
      }
      case NodeKind::Dict:
      case NodeKind::Struct: {
        if (d.kind() == NodeKind::Struct) {
          out += "{\"struct\":";
          jx::detail::json_quote(out, d.type_name());
          out += ",\"fields\":{";
        } else {
          out += "{\"dict\":{";
        }
        std::vector<std::string> keys = d.keys();
        std::vector<TreeDef> children = d.children();
        for (size_t i = 0; i < keys.size(); ++i) {
          if (i) out += ",";
          jx::detail::json_quote(out, keys[i]);
          out += ":";
          node(children[i]);
        }
        out += "}}";
        return;
      }
    }
  }
};

// Tensor names: the leaves' key paths joined by '/' ("params/Dense_0/kernel"), made unique.
std::vector<std::string> leaf_names(const TreeDef& def) {
  std::vector<std::string> names;
  std::set<std::string> used;
  for (const tree::KeyPath& p : def.leaf_paths()) {
    std::string n = p.size() ? p.str("/") : "leaf";
    if (n == "__metadata__") n = "__metadata__~";
    for (size_t k = 1; used.count(n); ++k) n = str(p.str("/"), "~", k);
    used.insert(n);
    names.push_back(std::move(n));
  }
  return names;
}

// ---- reading the description ----

struct Stored {
  NodeKind kind = NodeKind::None;
  std::vector<std::string> keys;  // Dict, Struct
  std::vector<Stored> children;
  std::string struct_name;
  StaticValue value;
  std::string handle_type;  // a static handle (EnumInfo::handle): its type, no value
  // Leaf:
  std::string name;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  bool weak = false;
};

class DescriptionReader {
 public:
  DescriptionReader(std::string file, const char* op) : file_(std::move(file)), op_(op) {}

  Stored document(const Json& root) {
    if (root.kind != Json::Obj) fail("is not a JSON object", {});
    const Json* format = root.find("format");
    const Json* version = root.find("version");
    const Json* tree = root.find("tree");
    if (!format || format->kind != Json::Str || format->s != "jx.checkpoint")
      fail("is not a jx checkpoint description (\"format\" is not \"jx.checkpoint\")", {});
    int64_t v;
    if (!version || !jx::detail::json_int(*version, &v))
      fail("has no integer \"version\"", {});
    if (v != kFormatVersion)
      fail(str("has format version ", v, "; this jx reads version ", kFormatVersion), {});
    if (!tree) fail("has no \"tree\"", {});
    std::vector<KeyEntry> path;
    return node(*tree, path);
  }

 private:
  [[noreturn]] void fail(const std::string& msg, const std::vector<KeyEntry>& path) {
    std::string where = path.empty() ? "" : str(" at ", tree::KeyPath(path).keystr());
    throw IOError(str("[", op_, "] '", file_, "' ", msg, where));
  }

  Stored node(const Json& j, std::vector<KeyEntry>& path) {
    if (j.kind != Json::Obj || j.obj.empty()) fail("has a node that is not a non-empty object", path);
    const std::string& tag = j.obj[0].first;
    const Json& body = j.obj[0].second;
    auto only = [&](std::initializer_list<const char*> allowed) {
      for (const auto& [k, v] : j.obj) {
        bool ok = false;
        for (const char* a : allowed) ok |= k == a;
        if (!ok) fail(str("has an unexpected key \"", k, "\" in a \"", tag, "\" node"), path);
      }
    };
    Stored s;
    if (tag == "array") {
      only({"array", "dtype", "shape", "weak_type"});
      s.kind = NodeKind::Leaf;
      const Json* dt = j.find("dtype");
      const Json* sh = j.find("shape");
      const Json* weak = j.find("weak_type");
      if (body.kind != Json::Str) fail("has an array name that is not a string", path);
      s.name = body.s;
      if (!dt || dt->kind != Json::Str) fail("has an array without a string \"dtype\"", path);
      try {
        s.dtype = dtype_from_name(dt->s);
      } catch (const DTypeError&) {
        fail(str("has an unknown dtype \"", dt->s, "\""), path);
      }
      if (!sh || sh->kind != Json::Arr) fail("has an array without a \"shape\" list", path);
      for (const Json& d : sh->arr) {
        int64_t n;
        if (!jx::detail::json_int(d, &n) || n < 0)
          fail("has a shape dimension that is not a non-negative integer", path);
        s.shape.push_back(n);
      }
      if (weak) {
        if (weak->kind != Json::Bool) fail("has a \"weak_type\" that is not a boolean", path);
        s.weak = weak->s == "true";
      }
      return s;
    }
    if (tag == "none") {
      only({"none"});
      s.kind = NodeKind::None;
      return s;
    }
    if (tag == "list" || tag == "tuple") {
      only({tag == "list" ? "list" : "tuple"});
      s.kind = tag == "list" ? NodeKind::List : NodeKind::Tuple;
      if (body.kind != Json::Arr) fail(str("has a \"", tag, "\" that is not a JSON array"), path);
      for (size_t i = 0; i < body.arr.size(); ++i) {
        path.push_back(KeyEntry{KeyEntry::Kind::Index, "", int64_t(i)});
        s.children.push_back(node(body.arr[i], path));
        path.pop_back();
      }
      return s;
    }
    if (tag == "dict" || tag == "struct") {
      const Json* fields = &body;
      if (tag == "struct") {
        only({"struct", "fields"});
        s.kind = NodeKind::Struct;
        if (body.kind != Json::Str) fail("has a struct name that is not a string", path);
        s.struct_name = body.s;
        fields = j.find("fields");
        if (!fields) fail("has a struct without \"fields\"", path);
      } else {
        only({"dict"});
        s.kind = NodeKind::Dict;
      }
      if (fields->kind != Json::Obj) fail(str("has a \"", tag, "\" whose keys are not an object"), path);
      for (const auto& [k, v] : fields->obj) {
        path.push_back(KeyEntry{tag == "dict" ? KeyEntry::Kind::Dict : KeyEntry::Kind::Field, k, 0});
        s.keys.push_back(k);
        s.children.push_back(node(v, path));
        path.pop_back();
      }
      return s;
    }
    if (tag == "static") {
      only({"static", "value", "type"});
      s.kind = NodeKind::Static;
      if (body.kind == Json::Str && body.s == "handle") {
        const Json* type = j.find("type");
        if (!type || type->kind != Json::Str || type->s.empty() || j.find("value"))
          fail("has a static handle without a type name, or with a value", path);
        s.handle_type = type->s;
        return s;
      }
      s.value = static_value(j, body, path);
      return s;
    }
    fail(str("has a node of unknown kind \"", tag, "\""), path);
  }

  StaticValue static_value(const Json& j, const Json& kind, std::vector<KeyEntry>& path) {
    const Json* v = j.find("value");
    if (kind.kind != Json::Str || !v) fail("has a static value without a kind and a value", path);
    const std::string& k = kind.s;
    if (k == "bool" && v->kind == Json::Bool) return StaticValue::boolean(v->s == "true");
    int64_t i;
    uint64_t u;
    if ((k == "int" || k == "enum") && jx::detail::json_int(*v, &i)) return StaticValue::integer(i);
    if (k == "uint" && jx::detail::json_uint(*v, &u)) return StaticValue::uinteger(u);
    if (k == "string" && v->kind == Json::Str) return StaticValue::string(v->s);
    if (k == "float") {
      if (v->kind == Json::Str) {
        if (v->s == "nan") return StaticValue::floating(std::nan(""));
        if (v->s == "inf") return StaticValue::floating(HUGE_VAL);
        if (v->s == "-inf") return StaticValue::floating(-HUGE_VAL);
      } else if (v->kind == Json::Num) {
        double f;
        auto r = std::from_chars(v->s.data(), v->s.data() + v->s.size(), f);
        if (r.ec == std::errc() && r.ptr == v->s.data() + v->s.size()) return StaticValue::floating(f);
      }
    }
    fail(str("has a static \"", k, "\" value that is malformed"), path);
  }

  std::string file_;
  const char* op_;
};

Stored read_description(const std::string& dir, const char* op) {
  std::string file = join_path(dir, kTreeFile);
  if (!is_directory(dir))
    throw IOError(str("[", op, "] '", dir, "' is not a checkpoint: ",
                      path_exists(dir) ? "it is not a directory" : "it does not exist"));
  std::string text = read_small_file(file, size_t(1) << 30, op);
  jx::detail::Json root;
  try {
    root = jx::detail::parse_json(text.data(), text.size(), 512);
  } catch (const jx::detail::JsonSyntaxError& e) {
    throw IOError(str("[", op, "] '", file, "' is not valid JSON: ", e.what(), " at byte ", e.offset));
  }
  return DescriptionReader(file, op).document(root);
}

void collect_leaves(const Stored& s, std::vector<const Stored*>& out) {
  if (s.kind == NodeKind::Leaf) out.push_back(&s);
  for (const Stored& c : s.children) collect_leaves(c, out);
}

// The arrays the description names, read from arrays.safetensors and checked against it.
std::vector<Array> read_arrays(const std::string& dir, const std::vector<const Stored*>& leaves,
                               const char* op) {
  std::string file = join_path(dir, kArraysFile);
  jx::detail::MappedFile f(file, op);
  jx::detail::SafetensorsLayout layout = jx::detail::parse_safetensors(f.data(), f.size(), file, op,
                                                                   /*complex128=*/true);
  std::map<std::string, const jx::detail::SafetensorsEntry*> by_name;
  for (const auto& e : layout.entries) by_name[e.name] = &e;
  if (by_name.size() != leaves.size())
    throw IOError(str("[", op, "] '", file, "' holds ", by_name.size(),
                      " arrays; the tree description names ", leaves.size()));
  std::vector<Array> out;
  out.reserve(leaves.size());
  for (const Stored* s : leaves) {
    auto it = by_name.find(s->name);
    if (it == by_name.end())
      throw IOError(str("[", op, "] '", file, "' lacks the array \"", s->name,
                        "\" that the tree description names"));
    const auto& e = *it->second;
    if (e.dtype != s->dtype || e.shape != s->shape)
      throw IOError(str("[", op, "] '", file, "' holds \"", s->name, "\" as ",
                        type_str(e.dtype, Shape(e.shape)), "; the tree description says ",
                        type_str(s->dtype, Shape(s->shape))));
    Array a = jx::detail::empty_array(Shape(s->shape), s->dtype, s->weak);
    if (e.end > e.begin)
      std::memcpy(jx::detail::raw_data(a), f.data() + layout.data_start + e.begin,
                  size_t(e.end - e.begin));
    out.push_back(std::move(a));
  }
  return out;
}

Tree to_tree(const Stored& s, const std::vector<Array>& arrays, size_t& leaf) {
  switch (s.kind) {
    case NodeKind::Leaf: return Tree(arrays[leaf++]);
    case NodeKind::None: return Tree();
    case NodeKind::Static: return s.handle_type.empty() ? Tree::static_value(s.value) : Tree();
    case NodeKind::Tuple:
    case NodeKind::List: {
      std::vector<Tree> items;
      for (const Stored& c : s.children) items.push_back(to_tree(c, arrays, leaf));
      return Tree::list(std::move(items));
    }
    case NodeKind::Dict:
    case NodeKind::Struct: {
      std::vector<std::pair<std::string, Tree>> items;
      for (size_t i = 0; i < s.keys.size(); ++i)
        items.emplace_back(s.keys[i], to_tree(s.children[i], arrays, leaf));
      return Tree::dict(std::move(items));
    }
  }
  return Tree();
}

// ---- matching a target ----

const char* kind_word(NodeKind k) {
  switch (k) {
    case NodeKind::Leaf: return "an array";
    case NodeKind::None: return "None";
    case NodeKind::Tuple: return "a tuple";
    case NodeKind::List: return "a list";
    case NodeKind::Dict: return "a dict";
    case NodeKind::Struct: return "a struct";
    case NodeKind::Static: return "a static value";
  }
  return "";
}

bool is_sequence(NodeKind k) { return k == NodeKind::Tuple || k == NodeKind::List; }
bool is_mapping(NodeKind k) { return k == NodeKind::Dict || k == NodeKind::Struct; }

struct Matcher {
  const std::vector<Array>& target_leaves;
  const std::string& dir;
  const char* op;
  std::vector<tree::detail::Node> nodes = {};
  std::string pool = {};
  tree::detail::Builder builder{nodes, pool, nullptr};
  std::vector<const Stored*> sources = {};  // the stored leaf for each target leaf
  std::vector<KeyEntry> path = {};

  [[noreturn]] void fail(const std::string& msg) {
    throw ValueError(str("[", op, "] '", dir, "' does not match the target at ",
                         path.empty() ? std::string("the root") : tree::KeyPath(path).keystr(), ": ",
                         msg));
  }

  void match(const TreeDef& t, const Stored& s) {
    NodeKind tk = t.kind();
    bool same = tk == s.kind || (is_sequence(tk) && is_sequence(s.kind)) ||
                (is_mapping(tk) && is_mapping(s.kind));
    if (!same) fail(str("the checkpoint holds ", kind_word(s.kind), ", the target ", kind_word(tk)));
    switch (tk) {
      case NodeKind::Leaf: {
        const Array& want = target_leaves[sources.size()];
        if (want.dtype() != s.dtype || want.shape() != Shape(s.shape))
          fail(str("the checkpoint holds ", type_str(s.dtype, Shape(s.shape)),
                   ", the target expects ", type_str(want.dtype(), want.shape())));
        sources.push_back(&s);
        builder.leaf(Array());
        return;
      }
      case NodeKind::None: builder.none(); return;
      case NodeKind::Static: {
        StaticValue want = t.static_value();
        using K = StaticValue::Kind;
        bool want_handle = want.kind() == K::Enum && want.enum_info() && want.enum_info()->handle;
        if (want_handle || !s.handle_type.empty()) {
          if (!want_handle || want.enum_info()->name != s.handle_type)
            fail(str("the checkpoint holds ",
                     s.handle_type.empty() ? s.value.repr() : str("a ", s.handle_type),
                     ", the target ", want_handle ? str("a ", want.enum_info()->name) : want.repr()));
          builder.static_value(want);  // the target's object: handles are not saved
          return;
        }
        K sk = s.value.kind();
        auto integral = [](K k) { return k == K::Int || k == K::UInt || k == K::Enum; };
        if (want.kind() == K::Enum && integral(sk)) {
          builder.static_value(StaticValue::enumeration(s.value.as_int(), want.enum_info()));
        } else if (want.kind() == sk || (integral(want.kind()) && integral(sk))) {
          builder.static_value(s.value);
        } else {
          fail(str("the checkpoint holds the static value ", s.value.repr(),
                   ", the target a static value of another type (", want.repr(), ")"));
        }
        return;
      }
      case NodeKind::Tuple:
      case NodeKind::List: {
        std::vector<TreeDef> children = t.children();
        if (children.size() != s.children.size())
          fail(str("the checkpoint holds ", s.children.size(), " items, the target ",
                   children.size()));
        size_t i = builder.open(tk);
        for (size_t k = 0; k < children.size(); ++k) {
          path.push_back(KeyEntry{KeyEntry::Kind::Index, "", int64_t(k)});
          match(children[k], s.children[k]);
          path.pop_back();
        }
        builder.close(i, children.size());
        return;
      }
      case NodeKind::Dict:
      case NodeKind::Struct: {
        std::vector<std::string> keys = t.keys();
        std::vector<TreeDef> children = t.children();
        std::vector<std::string> missing, extra;
        std::vector<const Stored*> found;
        for (const std::string& k : keys) {
          const Stored* c = nullptr;
          for (size_t j = 0; j < s.keys.size(); ++j)
            if (s.keys[j] == k) c = &s.children[j];
          if (!c) missing.push_back(k);
          found.push_back(c);
        }
        for (const std::string& k : s.keys)
          if (std::find(keys.begin(), keys.end(), k) == keys.end()) extra.push_back(k);
        if (!missing.empty() || !extra.empty()) {
          std::string msg;
          if (!missing.empty()) msg += str("the checkpoint lacks the keys ", list_str(missing));
          if (!extra.empty())
            msg += str(msg.empty() ? "" : "; ", "the checkpoint has keys the target lacks ",
                       list_str(extra));
          fail(msg);
        }
        size_t i;
        if (tk == NodeKind::Struct) {
          i = builder.open_struct(static_cast<const tree::detail::StructInfo*>(t.nodes()[0].info));
        } else {
          i = builder.open_dict();
          for (const std::string& k : keys) builder.dict_key(i, k);
        }
        for (size_t k = 0; k < keys.size(); ++k) {
          path.push_back(KeyEntry{tk == NodeKind::Dict ? KeyEntry::Kind::Dict : KeyEntry::Kind::Field,
                                  keys[k], 0});
          match(children[k], *found[k]);
          path.pop_back();
        }
        builder.close(i, keys.size());
        return;
      }
    }
  }
};

}  // namespace

ItemImage make_item_image(const TreeDef& def, const std::vector<Array>& leaves, bool snapshot,
                          const char* op) {
  ItemImage image;
  std::vector<std::string> names = leaf_names(def);
  Describer d{leaves, names};
  d.out = str("{\"format\":\"jx.checkpoint\",\"version\":", kFormatVersion, ",\"tree\":");
  d.node(def);
  d.out += "}\n";
  image.tree_json = std::move(d.out);

  std::vector<std::pair<std::string, const Array*>> tensors;
  for (size_t i = 0; i < leaves.size(); ++i) tensors.emplace_back(names[i], &leaves[i]);
  image.arrays_header = jx::detail::safetensors_header(
      tensors, {{"format", "jx.checkpoint"}, {"version", std::to_string(kFormatVersion)}}, op,
      /*complex128=*/true);
  if (!snapshot) {
    image.arrays = leaves;
    return image;
  }
  // Copied in 4 MB pieces on every thread: a 100 MB snapshot is bound by page faults and
  // memory bandwidth, not by one core.
  struct Piece {
    const char* src;
    size_t offset, size;
  };
  std::vector<Piece> pieces;
  constexpr size_t kPiece = size_t(4) << 20;
  for (const Array& a : leaves) {
    const char* src = static_cast<const char*>(jx::detail::raw_data(a));
    for (size_t k = 0; k < size_t(a.nbytes()); k += kPiece)
      pieces.push_back({src + k, image.data_size + k, std::min(kPiece, size_t(a.nbytes()) - k)});
    image.data_size += size_t(a.nbytes());
  }
  size_t n = image.data_size;
  image.data.reset(static_cast<char*>(jx::detail::allocate(n)),
                   [n](char* p) { jx::detail::deallocate(p, n); });
  char* dst = image.data.get();
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t i = 0; i < pieces.size(); ++i)
    std::memcpy(dst + pieces[i].offset, pieces[i].src, pieces[i].size);
  return image;
}

void write_item(const std::string& dir, const ItemImage& image, const char* op) {
  make_directory(dir, op);
  std::vector<std::pair<const void*, size_t>> pieces{
      {image.arrays_header.data(), image.arrays_header.size()}};
  if (image.data) {
    pieces.emplace_back(image.data.get(), image.data_size);
  } else {
    for (const Array& a : image.arrays)
      pieces.emplace_back(jx::detail::raw_data(a), size_t(a.nbytes()));
  }
  write_file(join_path(dir, kArraysFile), pieces, op);
  write_file(join_path(dir, kTreeFile), {{image.tree_json.data(), image.tree_json.size()}}, op);
  fsync_directory(dir, op);
}

Tree read_item(const std::string& dir, const char* op) {
  Stored s = read_description(dir, op);
  std::vector<const Stored*> leaves;
  collect_leaves(s, leaves);
  std::vector<Array> arrays = read_arrays(dir, leaves, op);
  size_t leaf = 0;
  return to_tree(s, arrays, leaf);
}

std::pair<TreeDef, std::vector<Array>> read_item_into(const std::string& dir,
                                                      const TreeDef& target_def,
                                                      const std::vector<Array>& target_leaves,
                                                      const char* op) {
  Stored s = read_description(dir, op);
  Matcher m{target_leaves, dir, op};
  m.match(target_def, s);
  TreeDef def = tree::detail::Builder::finish(m.nodes, std::move(m.pool));
  return {std::move(def), read_arrays(dir, m.sources, op)};
}

}  // namespace jx::ckpt::detail
