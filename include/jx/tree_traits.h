// Template machinery behind jx/tree.h: how each C++ type flattens into a TreeDef and is
// rebuilt from one. Include jx/tree.h, not this file.
//
// Extending: specialize jx::tree::PytreeTraits<T> with `static constexpr bool defined = true`,
// `static void flatten(const T&, detail::Builder&)` and `static T unflatten(detail::Reader&)`,
// or (for plain structs) use JX_PYTREE(Type, field1, field2, ...) in Type's namespace.
#pragma once
#include <array>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "jx/array.h"

namespace jx::tree {

template <class T, class Enable = void>
struct PytreeTraits {
  static constexpr bool defined = false;
};

namespace detail {

std::string demangle(const char* mangled);
std::string dtype_enum_name(int64_t v);

template <class E>
const EnumInfo* enum_info() {
  static const EnumInfo info(demangle(typeid(E).name()),
                             std::is_same_v<E, DType> ? &dtype_enum_name : nullptr);
  return &info;
}

// Appends nodes (pre-order) and leaves while a tree is walked. Nodes go to a reused
// thread-local buffer, so flattening allocates only the final TreeDef and leaf vector.
class Builder {
 public:
  Builder(std::vector<Node>& nodes, std::string& pool, std::vector<Array>* leaves)
      : nodes_(nodes), pool_(pool), leaves_(leaves) {}

  size_t open(NodeKind k) {
    size_t i = nodes_.size();
    Node& n = nodes_.emplace_back();
    n.kind = k;
    n.num_leaves = leaf_count_;  // the count at entry; close() turns it into a difference
    return i;
  }
  void close(size_t i, size_t arity) {
    Node& n = nodes_[i];
    n.arity = uint32_t(arity);
    n.num_nodes = uint32_t(nodes_.size() - i);
    n.num_leaves = leaf_count_ - n.num_leaves;
  }
  // A dict's keys must all be added, in flattening order, before its children.
  size_t open_dict() {
    size_t i = open(NodeKind::Dict);
    nodes_[i].str_off = uint32_t(pool_.size());
    return i;
  }
  void dict_key(size_t i, std::string_view key) {
    uint32_t len = uint32_t(key.size());
    pool_.append(reinterpret_cast<const char*>(&len), sizeof(len));
    pool_.append(key.data(), key.size());
    nodes_[i].str_len += uint32_t(sizeof(len) + key.size());
  }
  size_t open_struct(const StructInfo* info) {
    size_t i = open(NodeKind::Struct);
    nodes_[i].info = info;
    return i;
  }
  void leaf(const Array& a) {
    Node& n = nodes_.emplace_back();
    n.kind = NodeKind::Leaf;
    n.num_leaves = 1;
    ++leaf_count_;
    if (leaves_) leaves_->push_back(a);
  }
  void none() { nodes_.emplace_back().kind = NodeKind::None; }
  Node& static_node(StaticKind k) {
    Node& n = nodes_.emplace_back();
    n.kind = NodeKind::Static;
    n.skind = k;
    return n;
  }
  void static_string(std::string_view s) {
    uint32_t off = uint32_t(pool_.size());
    pool_.append(s.data(), s.size());
    Node& n = static_node(StaticKind::String);
    n.str_off = off;
    n.str_len = uint32_t(s.size());
  }
  void static_value(const StaticValue& v);
  void subtree(const TreeDef& def);  // copies a whole TreeDef in (TreeDef::tuple)
  // A TreeDef holding a copy of the built nodes and the pool, with its hash computed.
  static TreeDef finish(const std::vector<Node>& nodes, std::string&& pool);

 private:
  std::vector<Node>& nodes_;
  std::string& pool_;
  std::vector<Array>* leaves_;
  uint32_t leaf_count_ = 0;
};

// Walks a TreeDef in pre-order while a typed value is rebuilt, handing out the leaves.
class Reader {
 public:
  Reader(const TreeDef& def, const Array* leaves, size_t n, bool move);
  const Node& peek() const { return def_.nodes()[pos_]; }
  size_t pos() const { return pos_; }
  const TreeDef& def() const { return def_; }
  // Consumes the next node, which must be of kind `k` (else a ValueError naming `cpp_type`).
  const Node& expect(NodeKind k, const char* cpp_type) {
    const Node& n = peek();
    if (n.kind != k) mismatch(cpp_type);
    ++pos_;
    return n;
  }
  const Node& expect_arity(NodeKind k, size_t arity, const char* cpp_type) {
    const Node& n = peek();
    if (n.kind != k || n.arity != arity) mismatch(cpp_type);
    ++pos_;
    return n;
  }
  Array leaf() {
    expect(NodeKind::Leaf, "Array");
    const Array& a = leaves_[leaf_++];
    return move_ ? std::move(const_cast<Array&>(a)) : a;
  }
  const Node& expect_static(StaticKind k, const char* cpp_type) {
    const Node& n = peek();
    bool ok = n.kind == NodeKind::Static &&
              (n.skind == k || ((k == StaticKind::Int || k == StaticKind::UInt) &&
                                (n.skind == StaticKind::Int || n.skind == StaticKind::UInt)));
    if (!ok) mismatch(cpp_type);
    ++pos_;
    return n;
  }
  [[noreturn]] void mismatch(const char* cpp_type) const;
  void finish() const;

 private:
  const TreeDef& def_;
  const Array* leaves_;
  size_t num_leaves_;
  bool move_;
  size_t pos_ = 0;
  size_t leaf_ = 0;
};

template <class T>
constexpr bool is_pytree() {
  return PytreeTraits<T>::defined;
}

template <class T>
inline constexpr bool always_false_v = false;

#define JX_TREESLOT_NOT_A_PYTREE_                                                         \
  "jx::tree: params[\"k\"] on a non-const jx::Tree is a TreeSlot (a place that may not " \
  "exist yet), not a pytree; pass the subtree as a Tree: jx::Tree(params[\"k\"]) or "    \
  "std::as_const(params)[\"k\"]"

// (The static_asserts come before any use of the traits, so that jx's message is the first
// error: a call to the undefined traits would add its own first.)
template <class T>
void flatten_node(const T& x, Builder& b) {
  static_assert(!std::is_same_v<T, TreeSlot>, JX_TREESLOT_NOT_A_PYTREE_);
  if constexpr (PytreeTraits<T>::defined)
    PytreeTraits<T>::flatten(x, b);
  else
    static_assert(always_false_v<T>,
                  "jx::tree: this type is not a pytree. Leaves are jx::Array; containers are "
                  "std::tuple/pair/vector/array/optional, std::map<std::string, T> and jx::Tree; "
                  "static values are bool, integers, floating scalars, enums and std::string. "
                  "Register a struct with JX_PYTREE(Type, fields...) in its namespace.");
}

template <class T>
T unflatten_node(Reader& r) {
  static_assert(!std::is_same_v<T, TreeSlot>, JX_TREESLOT_NOT_A_PYTREE_);
  if constexpr (PytreeTraits<T>::defined)
    return PytreeTraits<T>::unflatten(r);
  else
    static_assert(always_false_v<T>,
                  "jx::tree: this type is not a pytree (register a struct with "
                  "JX_PYTREE(Type, fields...) in its namespace)");
}
#undef JX_TREESLOT_NOT_A_PYTREE_

// Per-thread buffers reused across flattens; `busy` guards against a nested flatten (from a
// user's PytreeTraits) reusing them while they are live.
struct Scratch {
  std::vector<Node> nodes;
  std::vector<Array> leaves;
  bool busy = false;
};
Scratch& scratch();

template <class T>
TreeDef flatten_into(const T& x, std::vector<Array>* leaves) {
  Scratch& s = scratch();
  if (s.busy) {
    std::vector<Node> nodes;
    std::string pool;
    Builder b(nodes, pool, leaves);
    flatten_node(x, b);
    return Builder::finish(nodes, std::move(pool));
  }
  struct Release {
    Scratch& s;
    ~Release() {
      s.nodes.clear();
      s.leaves.clear();
      s.busy = false;
    }
  } release{s};
  s.busy = true;
  std::string pool;
  Builder b(s.nodes, pool, leaves ? &s.leaves : nullptr);
  flatten_node(x, b);
  if (leaves) {
    leaves->clear();
    leaves->reserve(s.leaves.size());
    for (Array& a : s.leaves) leaves->push_back(std::move(a));
  }
  return Builder::finish(s.nodes, std::move(pool));
}

[[noreturn]] void throw_structure_mismatch(const char* op, size_t index, const TreeDef& expected,
                                           const TreeDef& got);

// The leaves of `x`, which must have structure `def` (tree number `index` of an n-ary op).
template <class T>
std::vector<Array> flatten_matching(const char* op, const TreeDef& def, const T& x, size_t index) {
  std::vector<Array> lv;
  TreeDef d = flatten_into(x, &lv);
  if (d != def) throw_structure_mismatch(op, index, def, d);
  return lv;
}

void flatten_tree(const Tree& t, Builder& b);
StaticValue static_value_of(const TreeDef& d, const Node& n);
Tree read_tree(Reader& r);

template <class T>
using struct_info_t = decltype(jx_pytree_info(static_cast<const T*>(nullptr)));

template <class T, class = void>
struct has_struct_info : std::false_type {};
template <class T>
struct has_struct_info<T, std::void_t<struct_info_t<T>>> : std::true_type {};

void check_struct(Reader& r, const Node& n, const StructInfo* info);

template <class T>
inline constexpr bool is_static_v =
    std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_same_v<T, std::string>;

template <class T>
const char* static_type_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_integral_v<T>) return "an integer";
  else if constexpr (std::is_floating_point_v<T>) return "a floating scalar";
  else if constexpr (std::is_same_v<T, std::string>) return "std::string";
  else return "an enum";
}

}  // namespace detail

template <>
struct PytreeTraits<Array> {
  static constexpr bool defined = true;
  static void flatten(const Array& x, detail::Builder& b) { b.leaf(x); }
  static Array unflatten(detail::Reader& r) { return r.leaf(); }
};

template <>
struct PytreeTraits<jx::None> {
  static constexpr bool defined = true;
  static void flatten(const jx::None&, detail::Builder& b) { b.none(); }
  static jx::None unflatten(detail::Reader& r) {
    r.expect(NodeKind::None, "jx::None");
    return {};
  }
};

template <>
struct PytreeTraits<Tree> {
  static constexpr bool defined = true;
  static void flatten(const Tree& x, detail::Builder& b) { detail::flatten_tree(x, b); }
  static Tree unflatten(detail::Reader& r) { return detail::read_tree(r); }
};

// Static values: part of the structure, never leaves.
template <class T>
struct PytreeTraits<T, std::enable_if_t<detail::is_static_v<T>>> {
  static constexpr bool defined = true;
  static void flatten(const T& x, detail::Builder& b) {
    using detail::StaticKind;
    if constexpr (std::is_same_v<T, bool>) {
      b.static_node(StaticKind::Bool).v.i = x ? 1 : 0;
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      b.static_node(StaticKind::Int).v.i = int64_t(x);
    } else if constexpr (std::is_integral_v<T>) {
      b.static_node(StaticKind::UInt).v.u = uint64_t(x);
    } else if constexpr (std::is_floating_point_v<T>) {
      b.static_node(StaticKind::Float).v.f = double(x);
    } else if constexpr (std::is_same_v<T, std::string>) {
      b.static_string(x);
    } else {
      detail::Node& n = b.static_node(StaticKind::Enum);
      n.v.i = int64_t(x);
      n.info = detail::enum_info<T>();
    }
  }
  static T unflatten(detail::Reader& r) {
    using detail::StaticKind;
    const char* name = detail::static_type_name<T>();
    if constexpr (std::is_same_v<T, bool>) {
      return r.expect_static(StaticKind::Bool, name).v.i != 0;
    } else if constexpr (std::is_integral_v<T>) {
      const detail::Node& n = r.expect_static(StaticKind::Int, name);
      return n.skind == StaticKind::Int ? T(n.v.i) : T(n.v.u);
    } else if constexpr (std::is_floating_point_v<T>) {
      return T(r.expect_static(StaticKind::Float, name).v.f);
    } else if constexpr (std::is_same_v<T, std::string>) {
      const detail::Node& n = r.expect_static(StaticKind::String, name);
      return std::string(r.def().node_string(n));
    } else {
      const detail::Node& n = r.peek();
      if (n.kind != NodeKind::Static || n.skind != StaticKind::Enum ||
          static_cast<const detail::EnumInfo*>(n.info)->name != detail::enum_info<T>()->name)
        r.mismatch(detail::enum_info<T>()->name.c_str());
      r.expect(NodeKind::Static, name);
      return T(n.v.i);
    }
  }
};

template <class... Ts>
struct PytreeTraits<std::tuple<Ts...>> {
  static constexpr bool defined = true;
  static void flatten(const std::tuple<Ts...>& x, detail::Builder& b) {
    size_t i = b.open(NodeKind::Tuple);
    std::apply([&](const auto&... e) { (detail::flatten_node(e, b), ...); }, x);
    b.close(i, sizeof...(Ts));
  }
  static std::tuple<Ts...> unflatten(detail::Reader& r) {
    r.expect_arity(NodeKind::Tuple, sizeof...(Ts), "std::tuple");
    // Braced initialization evaluates left to right, matching the leaf order.
    return std::tuple<Ts...>{detail::unflatten_node<Ts>(r)...};
  }
};

template <class A, class B>
struct PytreeTraits<std::pair<A, B>> {
  static constexpr bool defined = true;
  static void flatten(const std::pair<A, B>& x, detail::Builder& b) {
    size_t i = b.open(NodeKind::Tuple);
    detail::flatten_node(x.first, b);
    detail::flatten_node(x.second, b);
    b.close(i, 2);
  }
  static std::pair<A, B> unflatten(detail::Reader& r) {
    r.expect_arity(NodeKind::Tuple, 2, "std::pair");
    return std::pair<A, B>{detail::unflatten_node<A>(r), detail::unflatten_node<B>(r)};
  }
};

template <class T, class Alloc>
struct PytreeTraits<std::vector<T, Alloc>> {
  static constexpr bool defined = true;
  static void flatten(const std::vector<T, Alloc>& x, detail::Builder& b) {
    size_t i = b.open(NodeKind::List);
    for (const auto& e : x) detail::flatten_node(static_cast<const T&>(e), b);
    b.close(i, x.size());
  }
  static std::vector<T, Alloc> unflatten(detail::Reader& r) {
    const detail::Node& n = r.expect(NodeKind::List, "std::vector");
    std::vector<T, Alloc> out;
    out.reserve(n.arity);
    for (uint32_t k = 0; k < n.arity; ++k) out.push_back(detail::unflatten_node<T>(r));
    return out;
  }
};

template <class T, size_t N>
struct PytreeTraits<std::array<T, N>> {
  static constexpr bool defined = true;
  static void flatten(const std::array<T, N>& x, detail::Builder& b) {
    size_t i = b.open(NodeKind::List);
    for (const auto& e : x) detail::flatten_node(e, b);
    b.close(i, N);
  }
  static std::array<T, N> unflatten(detail::Reader& r) {
    r.expect_arity(NodeKind::List, N, "std::array");
    std::array<T, N> out{};
    for (size_t k = 0; k < N; ++k) out[k] = detail::unflatten_node<T>(r);
    return out;
  }
};

template <class T, class Alloc>
struct PytreeTraits<std::map<std::string, T, std::less<std::string>, Alloc>> {
  using M = std::map<std::string, T, std::less<std::string>, Alloc>;
  static constexpr bool defined = true;
  static void flatten(const M& x, detail::Builder& b) {
    size_t i = b.open_dict();
    for (const auto& kv : x) b.dict_key(i, kv.first);
    for (const auto& kv : x) detail::flatten_node(kv.second, b);
    b.close(i, x.size());
  }
  static M unflatten(detail::Reader& r) {
    const detail::Node& n = r.expect(NodeKind::Dict, "std::map<std::string, T>");
    M out;
    uint32_t cursor = 0;
    for (uint32_t k = 0; k < n.arity; ++k) {
      std::string key(r.def().next_key(n, cursor));
      out.emplace_hint(out.end(), std::move(key), detail::unflatten_node<T>(r));
    }
    return out;
  }
};

// std::optional is None when empty and transparent otherwise, as Optional[T] is in JAX.
template <class T>
struct PytreeTraits<std::optional<T>> {
  static constexpr bool defined = true;
  static void flatten(const std::optional<T>& x, detail::Builder& b) {
    if (x) detail::flatten_node(*x, b);
    else b.none();
  }
  static std::optional<T> unflatten(detail::Reader& r) {
    if (r.peek().kind == NodeKind::None) {
      r.expect(NodeKind::None, "std::optional");
      return std::nullopt;
    }
    return detail::unflatten_node<T>(r);
  }
};

// Structs registered with JX_PYTREE: fields in declaration order, named for key paths.
template <class T>
struct PytreeTraits<T, std::enable_if_t<detail::has_struct_info<T>::value>> {
  static constexpr bool defined = true;
  static void flatten(const T& x, detail::Builder& b) {
    const detail::StructInfo* info = jx_pytree_info(&x);
    size_t i = b.open_struct(info);
    jx_pytree_fields(x, [&](const auto& f) { detail::flatten_node(f, b); });
    b.close(i, info->fields.size());
  }
  static T unflatten(detail::Reader& r) {
    const detail::StructInfo* info = jx_pytree_info(static_cast<const T*>(nullptr));
    detail::check_struct(r, r.peek(), info);
    r.expect(NodeKind::Struct, info->name);
    T out{};
    jx_pytree_fields(out, [&](auto& f) { f = detail::unflatten_node<std::decay_t<decltype(f)>>(r); });
    return out;
  }
};

}  // namespace jx::tree

// ---- JX_PYTREE(Type, field1, field2, ...) ----
// Registers a struct as a pytree node, at namespace scope in the namespace of Type (the
// functions it defines are found by argument-dependent lookup). Up to 32 fields; Type must be
// default-constructible and its fields assignable. Fields that are not pytrees of Arrays
// (bool, int, enums, std::string) are static: part of the TreeDef, not leaves.
//
//   struct Dense { jx::Array kernel, bias; bool use_bias = true; };
//   JX_PYTREE(Dense, kernel, bias, use_bias)
#define JX_PYTREE(Type, ...)                                                                 \
  [[maybe_unused]] inline const ::jx::tree::detail::StructInfo* jx_pytree_info(const Type*) { \
    static const ::jx::tree::detail::StructInfo info_(                                       \
        #Type, {JX_PP_FOR_EACH_(JX_PYTREE_NAME_, __VA_ARGS__)});                             \
    return &info_;                                                                           \
  }                                                                                          \
  template <class Self_, class V_,                                                           \
            ::std::enable_if_t<::std::is_same_v<::std::remove_const_t<Self_>, Type>, int> = 0> \
  inline void jx_pytree_fields(Self_& self_, V_&& v_) {                                      \
    JX_PP_FOR_EACH_(JX_PYTREE_FIELD_, __VA_ARGS__)                                           \
  }
#define JX_PYTREE_NAME_(f) #f,
#define JX_PYTREE_FIELD_(f) v_(self_.f);

#define JX_PP_EXPAND_(x) x
#define JX_PP_FE_1_(M, a) M(a)
#define JX_PP_FE_2_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_1_(M, __VA_ARGS__))
#define JX_PP_FE_3_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_2_(M, __VA_ARGS__))
#define JX_PP_FE_4_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_3_(M, __VA_ARGS__))
#define JX_PP_FE_5_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_4_(M, __VA_ARGS__))
#define JX_PP_FE_6_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_5_(M, __VA_ARGS__))
#define JX_PP_FE_7_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_6_(M, __VA_ARGS__))
#define JX_PP_FE_8_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_7_(M, __VA_ARGS__))
#define JX_PP_FE_9_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_8_(M, __VA_ARGS__))
#define JX_PP_FE_10_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_9_(M, __VA_ARGS__))
#define JX_PP_FE_11_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_10_(M, __VA_ARGS__))
#define JX_PP_FE_12_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_11_(M, __VA_ARGS__))
#define JX_PP_FE_13_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_12_(M, __VA_ARGS__))
#define JX_PP_FE_14_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_13_(M, __VA_ARGS__))
#define JX_PP_FE_15_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_14_(M, __VA_ARGS__))
#define JX_PP_FE_16_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_15_(M, __VA_ARGS__))
#define JX_PP_FE_17_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_16_(M, __VA_ARGS__))
#define JX_PP_FE_18_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_17_(M, __VA_ARGS__))
#define JX_PP_FE_19_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_18_(M, __VA_ARGS__))
#define JX_PP_FE_20_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_19_(M, __VA_ARGS__))
#define JX_PP_FE_21_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_20_(M, __VA_ARGS__))
#define JX_PP_FE_22_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_21_(M, __VA_ARGS__))
#define JX_PP_FE_23_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_22_(M, __VA_ARGS__))
#define JX_PP_FE_24_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_23_(M, __VA_ARGS__))
#define JX_PP_FE_25_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_24_(M, __VA_ARGS__))
#define JX_PP_FE_26_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_25_(M, __VA_ARGS__))
#define JX_PP_FE_27_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_26_(M, __VA_ARGS__))
#define JX_PP_FE_28_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_27_(M, __VA_ARGS__))
#define JX_PP_FE_29_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_28_(M, __VA_ARGS__))
#define JX_PP_FE_30_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_29_(M, __VA_ARGS__))
#define JX_PP_FE_31_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_30_(M, __VA_ARGS__))
#define JX_PP_FE_32_(M, a, ...) M(a) JX_PP_EXPAND_(JX_PP_FE_31_(M, __VA_ARGS__))
#define JX_PP_PICK_(_1,_2,_3,_4,_5,_6,_7,_8,_9,_10,_11,_12,_13,_14,_15,_16,_17,_18,_19,_20,_21,_22,_23,_24,_25,_26,_27,_28,_29,_30,_31,_32, NAME, ...) NAME
#define JX_PP_FOR_EACH_(M, ...) \
  JX_PP_EXPAND_(JX_PP_PICK_(__VA_ARGS__, JX_PP_FE_32_, JX_PP_FE_31_, JX_PP_FE_30_, JX_PP_FE_29_, JX_PP_FE_28_, JX_PP_FE_27_, JX_PP_FE_26_, JX_PP_FE_25_, JX_PP_FE_24_, JX_PP_FE_23_, JX_PP_FE_22_, JX_PP_FE_21_, JX_PP_FE_20_, JX_PP_FE_19_, JX_PP_FE_18_, JX_PP_FE_17_, JX_PP_FE_16_, JX_PP_FE_15_, JX_PP_FE_14_, JX_PP_FE_13_, JX_PP_FE_12_, JX_PP_FE_11_, JX_PP_FE_10_, JX_PP_FE_9_, JX_PP_FE_8_, JX_PP_FE_7_, JX_PP_FE_6_, JX_PP_FE_5_, JX_PP_FE_4_, JX_PP_FE_3_, JX_PP_FE_2_, JX_PP_FE_1_)(M, __VA_ARGS__))
