// Pytrees: nested containers whose leaves are Arrays (JAX's jax.tree_util).
//
// A pytree is an Array (a leaf), a container of pytrees (std::tuple, std::pair, std::vector,
// std::array, std::map<std::string, T>, std::optional, jx::None, the dynamic jx::Tree), or a
// struct registered with JX_PYTREE. Every other value in it (bool, integers, floating
// scalars, enums, std::string) is STATIC: not a leaf but part of the structure, so it lives
// in the TreeDef and takes part in its equality and hash. This is how jit tells traced
// arguments from static ones by C++ type alone.
//
//   auto [leaves, def] = jx::tree::flatten(params);        // leaves in a fixed order
//   auto same = jx::tree::unflatten<Params>(def, leaves);  // back to the C++ type
//   auto zero = jx::tree::map([](const Array& x) { return jnp::zeros_like(x); }, params);
//
// Dict children (std::map and jx::Tree dicts) are flattened in sorted key order, as JAX does,
// so that equal dicts built in different orders flatten alike.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.h"

namespace jx {
class Tree;
class TreeSlot;
}

namespace jx::tree {

// What a TreeDef node is. Tuple: std::tuple/std::pair. List: std::vector/std::array/Tree
// list. Dict: std::map<std::string,T>/Tree dict. Struct: JX_PYTREE. Static: a non-Array value.
enum class NodeKind : uint8_t { Leaf, None, Tuple, List, Dict, Struct, Static };

namespace detail {

// Describes a JX_PYTREE struct; one per type (a function-local static, so unique program-wide).
struct StructInfo {
  StructInfo(const char* name, std::initializer_list<const char*> fields);
  const char* name;
  std::vector<const char*> fields;
  size_t hash;
};

// Describes an enum type used as a static value.
struct EnumInfo {
  EnumInfo(std::string name, std::string (*to_string)(int64_t), bool handle = false);
  std::string name;
  std::string (*to_string)(int64_t);  // null: print as Name(value)
  // The value is an id standing for an object of this process (a function held by a
  // struct), not data: a checkpoint does not store it, a restore takes it from the target.
  bool handle = false;
  size_t hash;
};

enum class StaticKind : uint8_t { Bool, Int, UInt, Float, String, Enum };

// One node of a TreeDef, in pre-order. Plain data so that a TreeDef is two flat buffers.
struct Node {
  NodeKind kind = NodeKind::Leaf;
  StaticKind skind = StaticKind::Int;  // Static nodes only
  uint32_t arity = 0;
  uint32_t num_nodes = 1;  // size of the subtree rooted here, this node included
  uint32_t num_leaves = 0;
  // Dict: its keys, each a uint32 length then the bytes; Static string: the bytes.
  uint32_t str_off = 0, str_len = 0;
  union {
    int64_t i;
    uint64_t u;
    double f;
  } v{0};
  const void* info = nullptr;  // Struct: StructInfo*; Static enum: EnumInfo*
};

class Builder;
class Reader;

}  // namespace detail

// A static (non-Array) value as it is stored in a TreeDef or a jx::Tree.
class StaticValue {
 public:
  using Kind = detail::StaticKind;
  StaticValue() = default;  // the integer 0
  static StaticValue boolean(bool b);
  static StaticValue integer(int64_t i);
  static StaticValue uinteger(uint64_t u);
  static StaticValue floating(double f);
  static StaticValue string(std::string s);
  static StaticValue enumeration(int64_t value, const detail::EnumInfo* info);

  Kind kind() const { return kind_; }
  bool as_bool() const;
  int64_t as_int() const;    // Int, UInt (when it fits), Bool and Enum values
  uint64_t as_uint() const;
  double as_float() const;
  const std::string& as_string() const;
  const detail::EnumInfo* enum_info() const { return info_; }

  size_t hash() const;
  // Floats compare by bit pattern: a cache key must tell 0.0 from -0.0, and NaN equals itself.
  bool operator==(const StaticValue& o) const;
  bool operator!=(const StaticValue& o) const { return !(*this == o); }
  // C++ spelling: true, 3, 0.5, 'relu', Mode(2) (or the enum's own name, e.g. float32).
  std::string repr() const;

 private:
  Kind kind_ = Kind::Int;
  union {
    int64_t i;
    uint64_t u;
    double f;
  } v_{0};
  std::string s_;
  const detail::EnumInfo* info_ = nullptr;
};

// One step of a key path: a dict key, a sequence index or a struct field (JAX's DictKey,
// SequenceKey, GetAttrKey).
struct KeyEntry {
  enum class Kind : uint8_t { Dict, Index, Field };
  Kind kind = Kind::Index;
  std::string name;   // Dict, Field
  int64_t index = 0;  // Index
  std::string str() const;     // kernel, 0, field
  std::string keystr() const;  // ['kernel'], [0], .field (JAX's keystr)
  bool operator==(const KeyEntry& o) const {
    return kind == o.kind && name == o.name && index == o.index;
  }
};

// The path from the root of a tree to one leaf.
class KeyPath {
 public:
  KeyPath() = default;
  explicit KeyPath(std::vector<KeyEntry> entries) : entries_(std::move(entries)) {}
  const std::vector<KeyEntry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  const KeyEntry& operator[](size_t i) const { return entries_[i]; }
  // "params/Dense_0/kernel": JAX's keystr(path, simple=True, separator='/').
  std::string str(std::string_view separator = "/") const;
  // "['params']['Dense_0']['kernel']": JAX's keystr(path).
  std::string keystr() const;
  bool operator==(const KeyPath& o) const { return entries_ == o.entries_; }

 private:
  std::vector<KeyEntry> entries_;
};
std::ostream& operator<<(std::ostream& os, const KeyPath& p);

// The structure of a pytree without its leaves: containers, dict keys, struct types and
// static values. Hashable and comparable (jit's cache key), printable as JAX prints it:
// PyTreeDef((*, {'a': *, 'b': [*, *]})). Type-erased: the same shape of containers compares
// equal whatever C++ types produced it (std::map and a jx::Tree dict with the same keys).
class TreeDef {
 public:
  TreeDef();  // the tree with no leaves: PyTreeDef(None)
  static TreeDef leaf();
  static TreeDef none();
  // A tuple node over the given subtrees (JAX's treedef_tuple).
  static TreeDef tuple(const std::vector<TreeDef>& children);

  size_t num_leaves() const { return nodes_[0].num_leaves; }
  // All nodes, leaves and static values included (JAX's num_nodes).
  size_t num_nodes() const { return nodes_.size(); }
  NodeKind kind() const { return nodes_[0].kind; }
  bool is_leaf() const { return kind() == NodeKind::Leaf; }
  // Number of children of the root (0 for leaves, None and static values).
  size_t arity() const { return nodes_[0].arity; }
  std::vector<TreeDef> children() const;
  // Root dict keys in flattening (sorted) order, or a root struct's field names.
  std::vector<std::string> keys() const;
  // A root struct's name as given to JX_PYTREE; empty otherwise.
  std::string type_name() const;
  // The value of a root Static node; throws ValueError otherwise.
  StaticValue static_value() const;

  size_t hash() const { return hash_; }
  bool operator==(const TreeDef& o) const;
  bool operator!=(const TreeDef& o) const { return !(*this == o); }
  std::string str() const;

  // The leaves' key paths, in leaf order.
  std::vector<KeyPath> leaf_paths() const;
  // Rebuilds a dynamic jx::Tree (tuples become lists, structs dicts in field order).
  Tree unflatten(std::span<const Array> leaves) const;

  // ---- for jx internals (traits, transforms) ----
  const std::vector<detail::Node>& nodes() const { return nodes_; }
  const std::string& pool() const { return pool_; }
  std::string_view node_string(const detail::Node& n) const {
    return std::string_view(pool_).substr(n.str_off, n.str_len);
  }
  // Dict key `k` of dict node `n`, from its packed key list; `cursor` walks the keys.
  std::string_view next_key(const detail::Node& n, uint32_t& cursor) const;
  // "params/Dense_0" for the node at pre-order index `idx` (for error messages).
  std::string node_path(size_t idx) const;
  std::string node_str(size_t idx) const;  // the subtree at idx, printed

 private:
  friend class detail::Builder;
  struct Empty {};
  explicit TreeDef(Empty) {}  // no nodes yet; only Builder::finish makes one
  void finish();  // computes hash_
  std::vector<detail::Node> nodes_;
  std::string pool_;
  size_t hash_ = 0;
};
std::ostream& operator<<(std::ostream& os, const TreeDef& d);

}  // namespace jx::tree

namespace jx {

// A dynamic pytree: None, an Array leaf, a list, an ordered string-keyed dict, or a static
// value. Dicts keep insertion order for printing and iteration but flatten in sorted key
// order (as JAX dicts do), so unflattening gives sorted dicts.
//
//   jx::Tree params{{"Dense_0", {{"kernel", w}, {"bias", b}}}};
//   Array k = params["Dense_0"]["kernel"].array();
//   params["Dense_1"]["bias"] = b2;       // non-const [] inserts, as std::map does
//   jx::Tree layers = jx::Tree::list({w1, w2});
class Tree {
 public:
  enum class Kind : uint8_t { None, Leaf, List, Dict, Static };

  Tree() = default;  // None
  Tree(jx::None) {}
  Tree(Array a);
  // A C++ scalar becomes a weakly typed 0-d Array leaf, as in jx::Array (and as a Python
  // scalar in a JAX dict is a leaf). Use Tree::static_value for a static entry.
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Tree(T v) : Tree(Array(v)) {}
  Tree(std::initializer_list<std::pair<std::string, Tree>> items);  // a dict
  static Tree list(std::vector<Tree> items = {});
  static Tree dict(std::vector<std::pair<std::string, Tree>> items = {});
  static Tree static_value(tree::StaticValue v);
  // Converts any typed pytree (std::map<std::string, Array>, a JX_PYTREE struct, ...).
  template <class T>
  static Tree from(const T& typed);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_leaf() const { return kind_ == Kind::Leaf; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  bool is_static() const { return kind_ == Kind::Static; }
  // Children of a list or dict; 0 otherwise.
  size_t size() const { return items_.size(); }

  const Array& array() const;  // throws ValueError unless a leaf
  // Explicit, so that a Tree cannot pass where an Array is meant (jacrev(f)(params) with f
  // taking an Array would compile and fail at run time): write t["k"].array().
  explicit operator const Array&() const { return array(); }
  const tree::StaticValue& static_value() const;

  // Dict access. Reading a missing key throws IndexError naming the key and the keys that
  // exist; it never inserts. On a non-const tree, [] gives a TreeSlot, through which
  // assignment creates the key (and missing dicts on the way): params["Dense_1"]["bias"] = b.
  const Tree& operator[](std::string_view key) const { return at(key); }
  TreeSlot operator[](std::string_view key);
  const Tree& operator[](const char* key) const { return at(key); }
  TreeSlot operator[](const char* key);
  const Tree& at(std::string_view key) const;
  bool contains(std::string_view key) const;
  void insert(std::string key, Tree value);  // replaces an existing key in place
  const std::vector<std::string>& keys() const { return keys_; }  // insertion order

  // List access (also dict values by insertion position).
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  const Tree& operator[](I i) const {
    return at_index(int64_t(i));
  }
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  Tree& operator[](I i) {
    return const_cast<Tree&>(at_index(int64_t(i)));
  }
  void push_back(Tree value);  // a None tree becomes a list
  const std::vector<Tree>& children() const { return items_; }

  // Python-like, in insertion order, leaves as their types:
  // {'Dense_0': {'kernel': f32[2,3], 'bias': f32[3]}}
  std::string str() const;

  // ---- for jx internals ----
  // Dict children's indices in sorted key order (the flattening order).
  const std::vector<uint32_t>& sorted_order() const { return sorted_; }
  // A dict made from a JX_PYTREE struct (Tree::from, TreeDef::unflatten) remembers the
  // struct, so that it flattens as the struct does: fields in declaration order, under the
  // same TreeDef. Adding a key makes it a plain dict (sorted keys).
  const tree::detail::StructInfo* struct_info() const { return struct_info_; }
  void set_struct_info(const tree::detail::StructInfo* info) { struct_info_ = info; }

 private:
  const Tree& at_index(int64_t i) const;
  const Tree* find(std::string_view key) const;
  Kind kind_ = Kind::None;
  Array leaf_;
  std::vector<Tree> items_;        // list elements, or dict values in insertion order
  std::vector<std::string> keys_;  // dict keys, insertion order
  std::vector<uint32_t> sorted_;   // dict: indices into keys_ by sorted key
  tree::StaticValue static_;
  const tree::detail::StructInfo* struct_info_ = nullptr;
};
std::ostream& operator<<(std::ostream& os, const Tree& t);

// A place in a non-const Tree named by a path of dict keys, which need not exist yet (what
// Tree::operator[] returns). Reading it -- as a Tree&, or through the forwarding members --
// finds it or throws IndexError naming the first missing key and the keys beside it.
// Assigning to it creates it. It refers into the tree: keep it no longer than the tree.
// A slot is not a pytree; to pass a subtree to a transformation, pass a Tree:
// `jx::Tree(params["Dense_0"])` or `std::as_const(params)["Dense_0"]`.
class TreeSlot {
 public:
  Tree& get() const;
  operator Tree&() const { return get(); }

  // Creates or replaces the value (a = b copies b's value, it does not rebind a).
  TreeSlot& operator=(Tree value);
  TreeSlot& operator=(const TreeSlot& other) { return *this = Tree(other.get()); }
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  TreeSlot& operator=(T v) {
    return *this = Tree(v);
  }
  TreeSlot& operator=(std::initializer_list<std::pair<std::string, Tree>> items) {
    return *this = Tree(items);
  }

  TreeSlot operator[](std::string_view key) const;
  TreeSlot operator[](const char* key) const { return (*this)[std::string_view(key)]; }
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  Tree& operator[](I i) const {
    return get()[i];
  }

  // Reads, as Tree's.
  const Array& array() const { return get().array(); }
  explicit operator const Array&() const { return get().array(); }
  Tree::Kind kind() const { return get().kind(); }
  bool is_none() const { return get().is_none(); }
  bool is_leaf() const { return get().is_leaf(); }
  bool is_list() const { return get().is_list(); }
  bool is_dict() const { return get().is_dict(); }
  bool is_static() const { return get().is_static(); }
  size_t size() const { return get().size(); }
  const tree::StaticValue& static_value() const { return get().static_value(); }
  const std::vector<std::string>& keys() const { return get().keys(); }
  const std::vector<Tree>& children() const { return get().children(); }
  bool contains(std::string_view key) const { return get().contains(key); }
  std::string str() const { return get().str(); }
  // Writes that create the slot first (as an empty dict or list) when it is missing.
  void insert(std::string key, Tree value) const;
  void push_back(Tree value) const;

 private:
  friend class Tree;
  TreeSlot(Tree* root, std::vector<std::string> path) : root_(root), path_(std::move(path)) {}
  Tree& create() const;  // walks the path, adding missing dicts and a None value
  Tree* root_;
  std::vector<std::string> path_;
};
std::ostream& operator<<(std::ostream& os, const TreeSlot& t);

}  // namespace jx

#include "jx/tree_traits.h"

namespace jx::tree {

namespace detail {
template <class F, size_t N, size_t... I>
Array call_leaf(F& f, const Array& x, [[maybe_unused]] const std::array<std::vector<Array>, N>& o,
                [[maybe_unused]] size_t i, std::index_sequence<I...>) {
  return Array(f(x, o[I][i]...));
}
template <class F, size_t N, size_t... I>
Array call_leaf_path(F& f, const KeyPath& p, const Array& x,
                     [[maybe_unused]] const std::array<std::vector<Array>, N>& o,
                     [[maybe_unused]] size_t i, std::index_sequence<I...>) {
  return Array(f(p, x, o[I][i]...));
}
}  // namespace detail

// True when T can be flattened (a leaf, a supported container, a static value or a
// JX_PYTREE struct).
template <class T>
inline constexpr bool is_pytree_v = detail::is_pytree<std::decay_t<T>>();

// (leaves, structure). Leaves come in pre-order: tuple/list/struct children in order, dict
// children by sorted key.
template <class T>
std::pair<std::vector<Array>, TreeDef> flatten(const T& x) {
  std::vector<Array> lv;
  TreeDef def = detail::flatten_into(x, &lv);
  return {std::move(lv), std::move(def)};
}

template <class T>
std::vector<Array> leaves(const T& x) {
  return flatten(x).first;
}

template <class T>
TreeDef structure(const T& x) {
  return detail::flatten_into(x, nullptr);
}

// Rebuilds a T from its structure and leaves. Throws ValueError when `def` does not describe
// a T (naming the node where they differ) or when the leaf count differs. Static values
// (struct fields such as `int depth`) come from `def`.
template <class T>
T unflatten(const TreeDef& def, std::span<const Array> leaves) {
  detail::Reader r(def, leaves.data(), leaves.size(), false);
  T out = detail::unflatten_node<T>(r);
  r.finish();
  return out;
}
template <class T>
T unflatten(const TreeDef& def, std::vector<Array>&& leaves) {
  detail::Reader r(def, leaves.data(), leaves.size(), true);
  T out = detail::unflatten_node<T>(r);
  r.finish();
  return out;
}
template <class T>
T unflatten(const TreeDef& def, const std::vector<Array>& leaves) {
  return unflatten<T>(def, std::span<const Array>(leaves));
}

// (path, leaf) pairs and the structure.
template <class T>
std::pair<std::vector<std::pair<KeyPath, Array>>, TreeDef> flatten_with_path(const T& x) {
  auto [lv, def] = flatten(x);
  std::vector<KeyPath> paths = def.leaf_paths();
  std::vector<std::pair<KeyPath, Array>> out;
  out.reserve(lv.size());
  for (size_t i = 0; i < lv.size(); ++i) out.emplace_back(std::move(paths[i]), std::move(lv[i]));
  return {std::move(out), std::move(def)};
}
template <class T>
std::vector<std::pair<KeyPath, Array>> leaves_with_path(const T& x) {
  return flatten_with_path(x).first;
}

// True when all trees have equal TreeDefs (containers, keys and static values).
template <class T, class... Rest>
bool all_equal_structure(const T& first, const Rest&... rest) {
  TreeDef d = structure(first);
  return ((structure(rest) == d) && ...);
}

namespace detail {
// A map result that is not an Array, as a jx::Tree: a pytree as its Tree, a Shape as a list
// of ints, a string as a static value.
template <class R>
Tree to_tree(const R& r) {
  if constexpr (std::is_same_v<R, Shape>) {
    std::vector<Tree> dims;
    for (int64_t d : r) dims.push_back(Tree::static_value(StaticValue::integer(d)));
    return Tree::list(std::move(dims));
  } else if constexpr (std::is_convertible_v<R, std::string>) {
    return Tree::static_value(StaticValue::string(std::string(r)));
  } else {
    return Tree::from(r);
  }
}
// `t` (the Tree of a TreeDef) with its leaves, in flattening order, replaced by `values`.
Tree replace_leaves(const Tree& t, std::vector<Tree>&& values);
}  // namespace detail

// f applied to each leaf (or to corresponding leaves of several trees of the same structure).
// When f returns an Array the result has the first tree's C++ type and structure; when it
// returns anything else (tree::map(jnp::shape, params)) the result is a jx::Tree of the same
// structure holding f's values (a Shape becomes a list of ints). Mismatched structures
// throw ValueError naming both.
template <class F, class T, class... Rest>
auto map(F&& f, const T& tree, const Rest&... rest) {
  auto [lv, def] = flatten(tree);
  size_t k = 0;
  std::array<std::vector<Array>, sizeof...(Rest)> others{
      detail::flatten_matching("tree.map", def, rest, ++k)...};
  (void)k;
  using R = std::decay_t<
      std::invoke_result_t<F&, const Array&, std::conditional_t<true, const Array&, Rest>...>>;
  if constexpr (std::is_convertible_v<R, Array>) {
    for (size_t i = 0; i < lv.size(); ++i)
      lv[i] = detail::call_leaf(f, lv[i], others, i, std::index_sequence_for<Rest...>{});
    return unflatten<std::decay_t<T>>(def, std::move(lv));
  } else {
    std::vector<Tree> values;
    values.reserve(lv.size());
    for (size_t i = 0; i < lv.size(); ++i)
      values.push_back([&]<size_t... I>(std::index_sequence<I...>) {
        return detail::to_tree(R(f(lv[i], others[I][i]...)));
      }(std::index_sequence_for<Rest...>{}));
    return detail::replace_leaves(def.unflatten(lv), std::move(values));
  }
}

// As map, with f(const KeyPath&, leaf, ...).
template <class F, class T, class... Rest>
std::decay_t<T> map_with_path(F&& f, const T& tree, const Rest&... rest) {
  auto [lv, def] = flatten(tree);
  std::vector<KeyPath> paths = def.leaf_paths();
  size_t k = 0;
  std::array<std::vector<Array>, sizeof...(Rest)> others{
      detail::flatten_matching("tree.map_with_path", def, rest, ++k)...};
  (void)k;
  for (size_t i = 0; i < lv.size(); ++i)
    lv[i] = detail::call_leaf_path(f, paths[i], lv[i], others, i, std::index_sequence_for<Rest...>{});
  return unflatten<std::decay_t<T>>(def, std::move(lv));
}

// Left fold over the leaves: f(f(f(init, l0), l1), l2) ...
template <class F, class T, class A>
A reduce(F&& f, const T& tree, A init) {
  for (const Array& x : flatten(tree).first) init = f(std::move(init), x);
  return init;
}

}  // namespace jx::tree

namespace jx {
template <class T>
Tree Tree::from(const T& typed) {
  auto [lv, def] = tree::flatten(typed);
  return def.unflatten(lv);
}
}  // namespace jx

template <>
struct std::hash<jx::tree::TreeDef> {
  size_t operator()(const jx::tree::TreeDef& d) const noexcept { return d.hash(); }
};
