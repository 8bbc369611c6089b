// jx::Tree, the dynamic pytree, and how it flattens (dict children by sorted key, as JAX).
#include <algorithm>
#include <ostream>
#include <utility>

#include "jx/tree.h"

#include "support/check.h"
#include "support/str.h"

namespace jx {

namespace {

const char* kind_name(Tree::Kind k) {
  switch (k) {
    case Tree::Kind::None: return "None";
    case Tree::Kind::Leaf: return "an Array leaf";
    case Tree::Kind::List: return "a list";
    case Tree::Kind::Dict: return "a dict";
    case Tree::Kind::Static: return "a static value";
  }
  return "?";
}

std::string quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  out += '\'';
  return out;
}

void print_tree(std::string& out, const Tree& t) {
  switch (t.kind()) {
    case Tree::Kind::None: out += "None"; break;
    case Tree::Kind::Leaf: {
      const Array& a = t.array();
      out += a.valid() ? type_str(a.dtype(), a.shape()) : std::string("<invalid Array>");
      break;
    }
    case Tree::Kind::Static: out += t.static_value().repr(); break;
    case Tree::Kind::List:
      out += "[";
      for (size_t i = 0; i < t.size(); ++i) {
        if (i) out += ", ";
        print_tree(out, t.children()[i]);
      }
      out += "]";
      break;
    case Tree::Kind::Dict:
      out += "{";
      for (size_t i = 0; i < t.size(); ++i) {
        if (i) out += ", ";
        out += quote(t.keys()[i]);
        out += ": ";
        print_tree(out, t.children()[i]);
      }
      out += "}";
      break;
  }
}

std::string keys_str(const std::vector<std::string>& keys) {
  std::string out = "[";
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i) out += ", ";
    out += quote(keys[i]);
  }
  out += "]";
  return out;
}

}  // namespace

Tree::Tree(Array a) : kind_(Kind::Leaf), leaf_(std::move(a)) {}

Tree::Tree(std::initializer_list<std::pair<std::string, Tree>> items) : kind_(Kind::Dict) {
  for (const auto& kv : items) insert(kv.first, kv.second);
}

Tree Tree::list(std::vector<Tree> items) {
  Tree t;
  t.kind_ = Kind::List;
  t.items_ = std::move(items);
  return t;
}

Tree Tree::dict(std::vector<std::pair<std::string, Tree>> items) {
  Tree t;
  t.kind_ = Kind::Dict;
  for (auto& kv : items) t.insert(std::move(kv.first), std::move(kv.second));
  return t;
}

Tree Tree::static_value(tree::StaticValue v) {
  Tree t;
  t.kind_ = Kind::Static;
  t.static_ = std::move(v);
  return t;
}

const Array& Tree::array() const {
  if (kind_ != Kind::Leaf)
    throw ValueError(jx::str("[Tree] expected an Array leaf but this tree is ", kind_name(kind_), ": ",
                         this->str()));
  return leaf_;
}

const tree::StaticValue& Tree::static_value() const {
  if (kind_ != Kind::Static)
    throw ValueError(jx::str("[Tree] expected a static value but this tree is ", kind_name(kind_)));
  return static_;
}

const Tree* Tree::find(std::string_view key) const {
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), key,
                             [&](uint32_t i, std::string_view k) { return keys_[i] < k; });
  if (it != sorted_.end() && keys_[*it] == key) return &items_[*it];
  return nullptr;
}

const Tree& Tree::at(std::string_view key) const {
  if (kind_ != Kind::Dict)
    throw ValueError(jx::str("[Tree] cannot look up key ", quote(key), " in ", kind_name(kind_),
                         "; only dicts have keys"));
  const Tree* t = find(key);
  if (!t)
    throw IndexError(jx::str("[Tree] key ", quote(key), " not found; the keys are ", keys_str(keys_)));
  return *t;
}

bool Tree::contains(std::string_view key) const { return kind_ == Kind::Dict && find(key); }

TreeSlot Tree::operator[](std::string_view key) { return TreeSlot(this, {std::string(key)}); }
TreeSlot Tree::operator[](const char* key) { return (*this)[std::string_view(key)]; }

// ---- TreeSlot ----

Tree& TreeSlot::get() const {
  const Tree* t = root_;
  std::string where;
  for (const std::string& k : path_) {
    if (!t->is_dict())
      throw ValueError(jx::str("[Tree] cannot look up key ", quote(k), where.empty() ? "" : " in ", where,
                               ": it is ", kind_name(t->kind()), ", and only dicts have keys"));
    if (!t->contains(k))
      throw IndexError(jx::str("[Tree] key ", quote(k), " not found", where.empty() ? "" : " in ", where,
                               "; the keys are ", keys_str(t->keys()),
                               " (to add it, assign to it or use insert)"));
    t = &t->at(k);
    where += jx::str("[", quote(k), "]");
  }
  return const_cast<Tree&>(*t);
}

Tree& TreeSlot::create() const {
  Tree* t = root_;
  for (const std::string& k : path_) {
    if (!t->contains(k)) t->insert(k, Tree());  // throws unless a dict or None
    t = &const_cast<Tree&>(std::as_const(*t).at(k));
  }
  return *t;
}

TreeSlot& TreeSlot::operator=(Tree value) {
  create() = std::move(value);
  return *this;
}

TreeSlot TreeSlot::operator[](std::string_view key) const {
  std::vector<std::string> p = path_;
  p.emplace_back(key);
  return TreeSlot(root_, std::move(p));
}

void TreeSlot::insert(std::string key, Tree value) const { create().insert(std::move(key), std::move(value)); }
void TreeSlot::push_back(Tree value) const { create().push_back(std::move(value)); }

std::ostream& operator<<(std::ostream& os, const TreeSlot& t) { return os << t.get(); }

void Tree::insert(std::string key, Tree value) {
  if (kind_ == Kind::None) kind_ = Kind::Dict;
  if (kind_ != Kind::Dict)
    throw ValueError(jx::str("[Tree] cannot insert key ", quote(key), " into ", kind_name(kind_)));
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), key,
                             [&](uint32_t i, const std::string& k) { return keys_[i] < k; });
  if (it != sorted_.end() && keys_[*it] == key) {
    items_[*it] = std::move(value);
    return;
  }
  struct_info_ = nullptr;  // a new key: no longer the struct's fields
  sorted_.insert(it, uint32_t(keys_.size()));
  keys_.push_back(std::move(key));
  items_.push_back(std::move(value));
}

const Tree& Tree::at_index(int64_t i) const {
  if (kind_ != Kind::List && kind_ != Kind::Dict)
    throw ValueError(jx::str("[Tree] cannot index ", kind_name(kind_), " with [", i, "]"));
  int64_t n = int64_t(items_.size());
  int64_t j = i < 0 ? i + n : i;
  if (j < 0 || j >= n)
    throw IndexError(jx::str("[Tree] index ", i, " is out of range for ", kind_name(kind_), " of size ", n));
  return items_[size_t(j)];
}

void Tree::push_back(Tree value) {
  if (kind_ == Kind::None) kind_ = Kind::List;
  if (kind_ != Kind::List)
    throw ValueError(jx::str("[Tree] push_back needs a list (or None) but this tree is ", kind_name(kind_)));
  items_.push_back(std::move(value));
}

std::string Tree::str() const {
  std::string out;
  print_tree(out, *this);
  return out;
}

// A leaf prints its values, as print(params['Dense_0']['kernel']) does in JAX.
std::ostream& operator<<(std::ostream& os, const Tree& t) {
  if (t.is_leaf() && t.array().valid()) return os << t.array();
  return os << t.str();
}

namespace tree::detail {

void flatten_tree(const Tree& t, Builder& b) {
  switch (t.kind()) {
    case Tree::Kind::None: b.none(); break;
    case Tree::Kind::Leaf: b.leaf(t.array()); break;
    case Tree::Kind::Static: b.static_value(t.static_value()); break;
    case Tree::Kind::List: {
      size_t i = b.open(NodeKind::List);
      for (const Tree& c : t.children()) flatten_tree(c, b);
      b.close(i, t.size());
      break;
    }
    case Tree::Kind::Dict: {
      if (const StructInfo* info = t.struct_info()) {  // fields in declaration order
        size_t i = b.open_struct(info);
        for (const Tree& c : t.children()) flatten_tree(c, b);
        b.close(i, t.size());
        break;
      }
      size_t i = b.open_dict();
      for (uint32_t k : t.sorted_order()) b.dict_key(i, t.keys()[k]);
      for (uint32_t k : t.sorted_order()) flatten_tree(t.children()[k], b);
      b.close(i, t.size());
      break;
    }
  }
}

Tree read_tree(Reader& r) {
  const Node& n = r.peek();
  switch (n.kind) {
    case NodeKind::Leaf: return Tree(r.leaf());
    case NodeKind::None: r.expect(NodeKind::None, "jx::Tree"); return Tree();
    case NodeKind::Static:
      r.expect(NodeKind::Static, "jx::Tree");
      return Tree::static_value(static_value_of(r.def(), n));
    case NodeKind::Tuple:
    case NodeKind::List: {
      r.expect(n.kind, "jx::Tree");
      std::vector<Tree> items;
      items.reserve(n.arity);
      for (uint32_t k = 0; k < n.arity; ++k) items.push_back(read_tree(r));
      return Tree::list(std::move(items));
    }
    case NodeKind::Dict: {
      r.expect(NodeKind::Dict, "jx::Tree");
      Tree t = Tree::dict();
      uint32_t cursor = 0;
      for (uint32_t k = 0; k < n.arity; ++k) {
        std::string key(r.def().next_key(n, cursor));
        t.insert(std::move(key), read_tree(r));
      }
      return t;
    }
    case NodeKind::Struct: {
      r.expect(NodeKind::Struct, "jx::Tree");
      auto* info = static_cast<const StructInfo*>(n.info);
      Tree t = Tree::dict();
      for (uint32_t k = 0; k < n.arity; ++k) t.insert(info->fields[k], read_tree(r));
      t.set_struct_info(info);
      return t;
    }
  }
  JX_CHECK(false, "bad node kind");
}

namespace {
Tree replace_in_order(const Tree& t, std::vector<Tree>& values, size_t& next) {
  switch (t.kind()) {
    case Tree::Kind::Leaf: return std::move(values.at(next++));
    case Tree::Kind::None:
    case Tree::Kind::Static: return t;
    case Tree::Kind::List: {
      std::vector<Tree> items;
      for (const Tree& c : t.children()) items.push_back(replace_in_order(c, values, next));
      return Tree::list(std::move(items));
    }
    case Tree::Kind::Dict: {
      // Leaves come in flattening order (sorted keys, or a struct's fields); the result
      // keeps t's insertion order.
      std::vector<Tree> items(t.size());
      if (t.struct_info()) {
        for (size_t k = 0; k < t.size(); ++k) items[k] = replace_in_order(t.children()[k], values, next);
      } else {
        for (uint32_t k : t.sorted_order()) items[k] = replace_in_order(t.children()[k], values, next);
      }
      Tree out = Tree::dict();
      for (size_t k = 0; k < t.size(); ++k) out.insert(t.keys()[k], std::move(items[k]));
      out.set_struct_info(t.struct_info());
      return out;
    }
  }
  JX_CHECK(false, "bad tree kind");
}
}  // namespace

Tree replace_leaves(const Tree& t, std::vector<Tree>&& values) {
  size_t next = 0;
  Tree out = replace_in_order(t, values, next);
  JX_CHECK(next == values.size(), "replace_leaves: ", values.size(), " values for ", next, " leaves");
  return out;
}

}  // namespace tree::detail

}  // namespace jx
