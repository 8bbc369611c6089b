// Pytrees: flatten/unflatten round trips, TreeDef equality/hash/printing, static values,
// JX_PYTREE structs, key paths, map over several trees, jx::Tree, error messages.
// Expected strings are hand-derived from JAX's printing rules (PyTreeDef((*, {'a': *}))).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "jx/numpy.h"
#include "jx/tree.h"

namespace jnp = jx::numpy;
using jx::Array;
using jx::Tree;
using jx::tree::TreeDef;

namespace jxtest {

enum class Mode { Train, Eval };

struct Dense {
  Array kernel, bias;
  bool use_bias = true;
  int features = 3;
};
JX_PYTREE(Dense, kernel, bias, use_bias, features)

struct Model {
  std::vector<Dense> layers;
  std::optional<Array> scale;
  std::string activation = "relu";
  Mode mode = Mode::Train;
};
JX_PYTREE(Model, layers, scale, activation, mode)

struct Point {
  Array x, y;
};
JX_PYTREE(Point, x, y)

}  // namespace jxtest

namespace jxtest {
// A hand-written node type through the PytreeTraits extension point; its flatten runs a
// nested flatten, which must not disturb the outer one's thread-local buffers.
struct Wrapped {
  Array v;
};
}  // namespace jxtest

template <>
struct jx::tree::PytreeTraits<jxtest::Wrapped> {
  static constexpr bool defined = true;
  static void flatten(const jxtest::Wrapped& w, detail::Builder& b) {
    EXPECT_EQ(jx::tree::structure(std::make_tuple(w.v, w.v)).str(), "PyTreeDef((*, *))");
    detail::flatten_node(w.v, b);
  }
  static jxtest::Wrapped unflatten(detail::Reader& r) { return {detail::unflatten_node<Array>(r)}; }
};

using jxtest::Dense;
using jxtest::Mode;
using jxtest::Model;
using jxtest::Point;

namespace {

Array f32(float v) { return jnp::array<float>({v}); }
float val(const Array& a) { return a.item<float>(); }
bool same(const Array& a, const Array& b) { return a.impl() == b.impl(); }

template <class E, class F>
std::string error_text(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "<no exception>";
}

// ---- containers ----

TEST(Tree, LeafFlattenUnflatten) {
  Array a = f32(1);
  auto [lv, def] = jx::tree::flatten(a);
  ASSERT_EQ(lv.size(), 1u);
  EXPECT_TRUE(same(lv[0], a));
  EXPECT_EQ(def.str(), "PyTreeDef(*)");
  EXPECT_TRUE(def.is_leaf());
  EXPECT_EQ(def, TreeDef::leaf());
  EXPECT_TRUE(same(jx::tree::unflatten<Array>(def, lv), a));
}

TEST(Tree, TupleOfArrayAndVector) {
  Array a = f32(1), b = f32(2), c = f32(3);
  std::tuple<Array, std::vector<Array>> t{a, {b, c}};
  auto [lv, def] = jx::tree::flatten(t);
  ASSERT_EQ(lv.size(), 3u);
  EXPECT_TRUE(same(lv[0], a) && same(lv[1], b) && same(lv[2], c));
  EXPECT_EQ(def.str(), "PyTreeDef((*, [*, *]))");
  EXPECT_EQ(def.num_leaves(), 3u);
  EXPECT_EQ(def.num_nodes(), 5u);  // tuple, leaf, list, leaf, leaf (as JAX counts)
  auto back = jx::tree::unflatten<std::tuple<Array, std::vector<Array>>>(def, lv);
  EXPECT_TRUE(same(std::get<0>(back), a));
  ASSERT_EQ(std::get<1>(back).size(), 2u);
  EXPECT_TRUE(same(std::get<1>(back)[1], c));
}

TEST(Tree, TupleSpellings) {
  Array a = f32(1);
  EXPECT_EQ(jx::tree::structure(std::make_tuple(a)).str(), "PyTreeDef((*,))");
  EXPECT_EQ(jx::tree::structure(std::tuple<>{}).str(), "PyTreeDef(())");
  EXPECT_EQ(jx::tree::structure(std::make_pair(a, a)).str(), "PyTreeDef((*, *))");
  EXPECT_EQ(jx::tree::structure(std::vector<Array>{}).str(), "PyTreeDef([])");
  EXPECT_EQ(jx::tree::structure(std::map<std::string, Array>{}).str(), "PyTreeDef({})");
  EXPECT_EQ(jx::tree::structure(std::array<Array, 3>{a, a, a}).str(), "PyTreeDef([*, *, *])");
  EXPECT_EQ(jx::tree::structure(jx::none).str(), "PyTreeDef(None)");
  EXPECT_EQ(TreeDef().str(), "PyTreeDef(None)");
}

TEST(Tree, PairAndArrayRoundTrip) {
  Array a = f32(1), b = f32(2);
  auto p = jx::tree::unflatten<std::pair<Array, Array>>(jx::tree::structure(std::make_pair(a, b)),
                                                        std::vector<Array>{b, a});
  EXPECT_TRUE(same(p.first, b) && same(p.second, a));
  std::array<Array, 2> arr{a, b};
  auto [lv, def] = jx::tree::flatten(arr);
  auto back = jx::tree::unflatten<std::array<Array, 2>>(def, lv);
  EXPECT_TRUE(same(back[0], a) && same(back[1], b));
}

TEST(Tree, MapFlattensInSortedKeyOrder) {
  Array a = f32(1), b = f32(2), c = f32(3);
  std::map<std::string, Array> m{{"b", b}, {"a", a}, {"Z", c}};
  auto [lv, def] = jx::tree::flatten(m);
  EXPECT_EQ(def.str(), "PyTreeDef({'Z': *, 'a': *, 'b': *})");  // byte order, as Python sorts str
  EXPECT_TRUE(same(lv[0], c) && same(lv[1], a) && same(lv[2], b));
  EXPECT_EQ(def.keys(), (std::vector<std::string>{"Z", "a", "b"}));
  auto back = jx::tree::unflatten<std::map<std::string, Array>>(def, lv);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_TRUE(same(back.at("a"), a) && same(back.at("Z"), c));
}

TEST(Tree, OptionalIsNoneOrTransparent) {
  Array a = f32(1);
  std::optional<Array> none, some = a;
  EXPECT_EQ(jx::tree::structure(none).str(), "PyTreeDef(None)");
  EXPECT_EQ(jx::tree::structure(some), TreeDef::leaf());
  auto [lv, def] = jx::tree::flatten(std::make_tuple(none, some));
  EXPECT_EQ(def.str(), "PyTreeDef((None, *))");
  ASSERT_EQ(lv.size(), 1u);
  auto back = jx::tree::unflatten<std::tuple<std::optional<Array>, std::optional<Array>>>(def, lv);
  EXPECT_FALSE(std::get<0>(back).has_value());
  ASSERT_TRUE(std::get<1>(back).has_value());
  EXPECT_TRUE(same(*std::get<1>(back), a));
}

TEST(Tree, NestedContainers) {
  Array x = f32(0), a = f32(1), b0 = f32(2), b1 = f32(3);
  using Inner = std::map<std::string, std::vector<Array>>;
  std::tuple<Array, Inner> t{x, Inner{{"b", {b0, b1}}, {"a", {a}}}};
  auto [lv, def] = jx::tree::flatten(t);
  EXPECT_EQ(def.str(), "PyTreeDef((*, {'a': [*], 'b': [*, *]}))");
  std::vector<float> vals;
  for (const Array& l : lv) vals.push_back(val(l));
  EXPECT_EQ(vals, (std::vector<float>{0, 1, 2, 3}));
  auto back = jx::tree::unflatten<std::tuple<Array, Inner>>(def, lv);
  EXPECT_TRUE(same(std::get<1>(back).at("b")[1], b1));
}

TEST(Tree, TupleOfReferencesFlattensLikeValues) {
  // jit flattens its arguments as std::forward_as_tuple(args...).
  Array a = f32(1);
  Tree t{{"w", f32(2)}};
  const int depth = 4;
  auto [lv, def] = jx::tree::flatten(std::forward_as_tuple(a, t, depth));
  EXPECT_EQ(def.str(), "PyTreeDef((*, {'w': *}, 4))");
  EXPECT_EQ(def, jx::tree::structure(std::make_tuple(a, t, 4)));
  EXPECT_TRUE(same(lv[0], a));
}

TEST(Tree, UnflattenMovesLeavesFromRvalue) {
  Array a = f32(1);
  std::vector<Array> lv{a};
  auto impl = a.impl();
  Array back = jx::tree::unflatten<Array>(TreeDef::leaf(), std::move(lv));
  EXPECT_EQ(back.impl(), impl);
}

TEST(Tree, CustomTraitsWithNestedFlatten) {
  Array a = f32(1), b = f32(2);
  auto [lv, def] = jx::tree::flatten(std::make_tuple(a, jxtest::Wrapped{b}, a));
  EXPECT_EQ(def.str(), "PyTreeDef((*, *, *))");
  ASSERT_EQ(lv.size(), 3u);
  EXPECT_TRUE(same(lv[0], a) && same(lv[1], b) && same(lv[2], a));
  auto back = jx::tree::unflatten<std::tuple<Array, jxtest::Wrapped, Array>>(def, lv);
  EXPECT_TRUE(same(std::get<1>(back).v, b));
}

// ---- static values ----

TEST(Tree, StaticValuesAreStructureNotLeaves) {
  Array a = f32(1);
  auto t = std::make_tuple(a, 3, true, 0.5, std::string("relu"), Mode::Eval, 2.0f);
  auto [lv, def] = jx::tree::flatten(t);
  EXPECT_EQ(lv.size(), 1u);
  EXPECT_EQ(def.str(), "PyTreeDef((*, 3, true, 0.5, 'relu', jxtest::Mode(1), 2.0))");
  auto back = jx::tree::unflatten<decltype(t)>(def, lv);
  EXPECT_EQ(std::get<1>(back), 3);
  EXPECT_EQ(std::get<2>(back), true);
  EXPECT_EQ(std::get<3>(back), 0.5);
  EXPECT_EQ(std::get<4>(back), "relu");
  EXPECT_EQ(std::get<5>(back), Mode::Eval);
  EXPECT_EQ(std::get<6>(back), 2.0f);
}

TEST(Tree, StaticValuesInEqualityAndHash) {
  Array a = f32(1), b = f32(2);
  auto d3 = jx::tree::structure(std::make_tuple(a, 3));
  auto d3b = jx::tree::structure(std::make_tuple(b, 3));
  auto d4 = jx::tree::structure(std::make_tuple(a, 4));
  EXPECT_EQ(d3, d3b);  // leaves do not matter
  EXPECT_EQ(d3.hash(), d3b.hash());
  EXPECT_NE(d3, d4);
  EXPECT_NE(d3.hash(), d4.hash());
  // Different static kinds, strings, bools and float bit patterns all count.
  EXPECT_NE(jx::tree::structure(std::make_tuple(a, 3)), jx::tree::structure(std::make_tuple(a, 3u)));
  EXPECT_NE(jx::tree::structure(std::make_tuple(a, 3)), jx::tree::structure(std::make_tuple(a, 3.0)));
  EXPECT_EQ(jx::tree::structure(std::make_tuple(a, 3)), jx::tree::structure(std::make_tuple(a, 3L)));
  EXPECT_NE(jx::tree::structure(std::string("relu")), jx::tree::structure(std::string("gelu")));
  EXPECT_NE(jx::tree::structure(true), jx::tree::structure(false));
  EXPECT_NE(jx::tree::structure(0.0), jx::tree::structure(-0.0));
  EXPECT_EQ(jx::tree::structure(std::nan("")), jx::tree::structure(std::nan("")));
  EXPECT_NE(jx::tree::structure(Mode::Train), jx::tree::structure(Mode::Eval));
  EXPECT_EQ(jx::tree::structure(jx::float32).str(), "PyTreeDef(float32)");

  std::unordered_set<TreeDef> set{d3, d3b, d4};
  EXPECT_EQ(set.size(), 2u);
  EXPECT_EQ(std::hash<TreeDef>{}(d3), d3.hash());
}

TEST(Tree, StaticValueAccessors) {
  auto d = jx::tree::structure(std::string("it's"));
  EXPECT_EQ(d.kind(), jx::tree::NodeKind::Static);
  EXPECT_EQ(d.static_value().as_string(), "it's");
  EXPECT_EQ(d.str(), "PyTreeDef('it\\'s')");
  EXPECT_EQ(jx::tree::structure(7).static_value().as_int(), 7);
  EXPECT_EQ(jx::tree::structure(1e300).str(), "PyTreeDef(1e+300)");
  EXPECT_THROW(jx::tree::structure(7).static_value().as_string(), jx::ValueError);
  EXPECT_THROW(TreeDef::leaf().static_value(), jx::ValueError);
}

// ---- JX_PYTREE ----

TEST(Tree, StructFieldsAndStatics) {
  Dense d{f32(1), f32(2), false, 7};
  auto [lv, def] = jx::tree::flatten(d);
  EXPECT_EQ(def.str(), "PyTreeDef(Dense(kernel=*, bias=*, use_bias=false, features=7))");
  ASSERT_EQ(lv.size(), 2u);
  EXPECT_TRUE(same(lv[0], d.kernel) && same(lv[1], d.bias));
  EXPECT_EQ(def.type_name(), "Dense");
  EXPECT_EQ(def.keys(), (std::vector<std::string>{"kernel", "bias", "use_bias", "features"}));
  Dense back = jx::tree::unflatten<Dense>(def, lv);
  EXPECT_TRUE(same(back.kernel, d.kernel) && same(back.bias, d.bias));
  EXPECT_FALSE(back.use_bias);  // statics come back from the TreeDef
  EXPECT_EQ(back.features, 7);

  Dense d2{f32(1), f32(2), false, 8};
  EXPECT_NE(jx::tree::structure(d), jx::tree::structure(d2));
}

TEST(Tree, NestedStructs) {
  Model m{{Dense{f32(1), f32(2)}, Dense{f32(3), f32(4), false, 5}}, std::nullopt, "gelu", Mode::Eval};
  auto [lv, def] = jx::tree::flatten(m);
  EXPECT_EQ(def.str(),
            "PyTreeDef(Model(layers=[Dense(kernel=*, bias=*, use_bias=true, features=3), "
            "Dense(kernel=*, bias=*, use_bias=false, features=5)], scale=None, "
            "activation='gelu', mode=jxtest::Mode(1)))");
  EXPECT_EQ(lv.size(), 4u);
  Model back = jx::tree::unflatten<Model>(def, lv);
  ASSERT_EQ(back.layers.size(), 2u);
  EXPECT_EQ(val(back.layers[1].kernel), 3.0f);
  EXPECT_EQ(back.layers[1].features, 5);
  EXPECT_FALSE(back.scale.has_value());
  EXPECT_EQ(back.activation, "gelu");
  EXPECT_EQ(back.mode, Mode::Eval);
  m.scale = f32(9);
  EXPECT_EQ(jx::tree::leaves(m).size(), 5u);
}

// ---- key paths ----

TEST(Tree, KeyPathsForDynamicTree) {
  Array k = f32(1), b = f32(2), s = f32(3);
  Tree params{{"params", {{"Dense_0", {{"kernel", k}, {"bias", b}}}, {"scale", s}}}};
  auto [pl, def] = jx::tree::flatten_with_path(params);
  ASSERT_EQ(pl.size(), 3u);
  EXPECT_EQ(pl[0].first.str(), "params/Dense_0/bias");
  EXPECT_EQ(pl[1].first.str(), "params/Dense_0/kernel");
  EXPECT_EQ(pl[2].first.str(), "params/scale");
  EXPECT_EQ(pl[1].first.keystr(), "['params']['Dense_0']['kernel']");
  EXPECT_TRUE(same(pl[1].second, k));
  EXPECT_EQ(pl[0].first[2].kind, jx::tree::KeyEntry::Kind::Dict);
}

TEST(Tree, KeyPathsForTypedTree) {
  std::tuple<Dense, std::vector<Array>> t{Dense{f32(1), f32(2)}, {f32(3)}};
  auto paths = jx::tree::structure(t).leaf_paths();
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_EQ(paths[0].str(), "0/kernel");
  EXPECT_EQ(paths[0].keystr(), "[0].kernel");
  EXPECT_EQ(paths[2].str(), "1/0");
  EXPECT_EQ(paths[2].keystr(), "[1][0]");
  EXPECT_EQ(paths[2].str("."), "1.0");
  std::ostringstream os;
  os << paths[1];
  EXPECT_EQ(os.str(), "0/bias");
}

TEST(Tree, MapWithPath) {
  std::map<std::string, Array> m{{"w", f32(1)}, {"b", f32(2)}};
  std::vector<std::string> seen;
  auto out = jx::tree::map_with_path(
      [&](const jx::tree::KeyPath& p, const Array& x) {
        seen.push_back(p.str());
        return f32(val(x) * 10);
      },
      m);
  EXPECT_EQ(seen, (std::vector<std::string>{"b", "w"}));
  EXPECT_EQ(val(out.at("w")), 10.0f);
  EXPECT_EQ(val(out.at("b")), 20.0f);
}

// ---- map / reduce / structure helpers ----

TEST(Tree, MapSingleTreeKeepsTypeAndStatics) {
  Dense d{f32(1), f32(2), false, 4};
  Dense out = jx::tree::map([](const Array& x) { return f32(val(x) + 1); }, d);
  EXPECT_EQ(val(out.kernel), 2.0f);
  EXPECT_EQ(val(out.bias), 3.0f);
  EXPECT_FALSE(out.use_bias);
  EXPECT_EQ(out.features, 4);
}

TEST(Tree, MapSeveralTrees) {
  using M = std::map<std::string, std::vector<Array>>;
  M a{{"x", {f32(1), f32(2)}}, {"y", {f32(3)}}};
  M b{{"x", {f32(10), f32(20)}}, {"y", {f32(30)}}};
  M c{{"x", {f32(100), f32(200)}}, {"y", {f32(300)}}};
  M out = jx::tree::map(
      [](const Array& p, const Array& q, const Array& r) { return f32(val(p) + val(q) + val(r)); },
      a, b, c);
  EXPECT_EQ(val(out.at("x")[0]), 111.0f);
  EXPECT_EQ(val(out.at("x")[1]), 222.0f);
  EXPECT_EQ(val(out.at("y")[0]), 333.0f);
}

TEST(Tree, MapMixesTypedAndDynamicTrees) {
  std::map<std::string, Array> typed{{"a", f32(1)}, {"b", f32(2)}};
  Tree dyn{{"b", f32(20)}, {"a", f32(10)}};
  EXPECT_EQ(jx::tree::structure(typed), jx::tree::structure(dyn));
  auto out = jx::tree::map([](const Array& p, const Array& q) { return f32(val(p) + val(q)); },
                           typed, dyn);
  EXPECT_EQ(val(out.at("a")), 11.0f);
  EXPECT_EQ(val(out.at("b")), 22.0f);
}

TEST(Tree, MapStructureMismatchThrows) {
  std::vector<Array> a{f32(1), f32(2)}, b{f32(1)};
  std::string msg = error_text<jx::ValueError>([&] {
    jx::tree::map([](const Array& p, const Array& q) { return p; }, a, b);
  });
  EXPECT_NE(msg.find("[tree.map] tree 1 has structure PyTreeDef([*])"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tree 0 has structure PyTreeDef([*, *])"), std::string::npos) << msg;

  // A different static value is a different structure too.
  auto s3 = std::make_tuple(f32(1), 3), s4 = std::make_tuple(f32(1), 4);
  msg = error_text<jx::ValueError>(
      [&] { jx::tree::map([](const Array& p, const Array&) { return p; }, s3, s4); });
  EXPECT_NE(msg.find("PyTreeDef((*, 4))"), std::string::npos) << msg;
}

TEST(Tree, ReduceAllEqualStructureLeaves) {
  std::tuple<Array, std::vector<Array>> t{f32(1), {f32(2), f32(3)}};
  float sum = jx::tree::reduce([](float acc, const Array& x) { return acc + val(x); }, t, 0.0f);
  EXPECT_EQ(sum, 6.0f);
  std::tuple<Array, std::vector<Array>> u{f32(5), {f32(6), f32(7)}};
  std::tuple<Array, std::vector<Array>> v{f32(5), {f32(6)}};
  EXPECT_TRUE(jx::tree::all_equal_structure(t, u));
  EXPECT_TRUE(jx::tree::all_equal_structure(t, u, t));
  EXPECT_FALSE(jx::tree::all_equal_structure(t, u, v));
  EXPECT_EQ(jx::tree::leaves(t).size(), 3u);
}

// ---- TreeDef API ----

TEST(Tree, TreeDefChildrenAndTuple) {
  std::tuple<Array, std::map<std::string, Array>, int> t{f32(1), {{"k", f32(2)}}, 5};
  TreeDef def = jx::tree::structure(t);
  auto ch = def.children();
  ASSERT_EQ(ch.size(), 3u);
  EXPECT_EQ(ch[0].str(), "PyTreeDef(*)");
  EXPECT_EQ(ch[1].str(), "PyTreeDef({'k': *})");
  EXPECT_EQ(ch[2].str(), "PyTreeDef(5)");
  EXPECT_EQ(ch[1], jx::tree::structure(std::map<std::string, Array>{{"k", f32(0)}}));
  EXPECT_EQ(def.arity(), 3u);
  EXPECT_EQ(TreeDef::tuple(ch), def);
  EXPECT_EQ(TreeDef::tuple(ch).hash(), def.hash());
  EXPECT_EQ(TreeDef::tuple({}).str(), "PyTreeDef(())");
  // An empty dict after a dict with keys (an optimizer's empty state after the params):
  // its child keeps no string bytes.
  std::tuple<std::map<std::string, Array>, std::map<std::string, Array>> e{{{"w", f32(1)}}, {}};
  auto ech = jx::tree::structure(e).children();
  EXPECT_EQ(ech[1].str(), "PyTreeDef({})");
  EXPECT_EQ(TreeDef::tuple(ech), jx::tree::structure(e));
}

TEST(Tree, UnflattenErrors) {
  TreeDef def = jx::tree::structure(std::make_tuple(f32(1), f32(2)));
  std::string msg = error_text<jx::ValueError>(
      [&] { jx::tree::unflatten<std::tuple<Array, Array>>(def, std::vector<Array>{f32(1)}); });
  EXPECT_EQ(msg, "[tree.unflatten] PyTreeDef((*, *)) has 2 leaves but 1 were given");

  msg = error_text<jx::ValueError>(
      [&] { jx::tree::unflatten<std::vector<Array>>(def, std::vector<Array>{f32(1), f32(2)}); });
  EXPECT_NE(msg.find("at the root the type expects std::vector but the TreeDef has (*, *)"),
            std::string::npos)
      << msg;

  TreeDef mdef = jx::tree::structure(Tree{{"a", f32(1)}, {"b", Tree::list({f32(2)})}});
  msg = error_text<jx::ValueError>([&] {
    jx::tree::unflatten<std::map<std::string, Array>>(mdef, std::vector<Array>{f32(1), f32(2)});
  });
  EXPECT_NE(msg.find("at 'b' the type expects Array but the TreeDef has [*]"), std::string::npos)
      << msg;

  // A struct with different statics unflattens (statics come from the TreeDef), but another
  // struct type does not.
  TreeDef pdef = jx::tree::structure(Point{f32(1), f32(2)});
  msg = error_text<jx::ValueError>(
      [&] { jx::tree::unflatten<Dense>(pdef, std::vector<Array>{f32(1), f32(2)}); });
  EXPECT_NE(msg.find("the type expects Dense but the TreeDef has Point(x=*, y=*)"), std::string::npos)
      << msg;
  msg = error_text<jx::ValueError>(
      [&] { jx::tree::unflatten<std::tuple<Array, int>>(jx::tree::structure(std::make_tuple(f32(1), 2.5)),
                                                        std::vector<Array>{f32(1)}); });
  EXPECT_NE(msg.find("at '1' the type expects an integer but the TreeDef has 2.5"), std::string::npos)
      << msg;
}

// ---- jx::Tree ----

TEST(DynamicTree, BuildIndexPrint) {
  Array k = jnp::zeros({2, 3}), b = jnp::zeros({3});
  Tree params{{"params", {{"Dense_0", {{"kernel", k}, {"bias", b}}}}}};
  EXPECT_TRUE(params.is_dict());
  EXPECT_TRUE(same(params["params"]["Dense_0"]["kernel"].array(), k));
  Array got = params["params"]["Dense_0"]["bias"].array();
  EXPECT_TRUE(same(got, b));
  // Printing keeps insertion order; the TreeDef is sorted.
  EXPECT_EQ(params.str(), "{'params': {'Dense_0': {'kernel': f32[2,3], 'bias': f32[3]}}}");
  EXPECT_EQ(jx::tree::structure(params).str(),
            "PyTreeDef({'params': {'Dense_0': {'bias': *, 'kernel': *}}})");
  auto lv = jx::tree::leaves(params);
  EXPECT_TRUE(same(lv[0], b) && same(lv[1], k));
  EXPECT_EQ(params["params"]["Dense_0"].keys(), (std::vector<std::string>{"kernel", "bias"}));
}

TEST(DynamicTree, MutationAndLists) {
  Tree t;
  EXPECT_TRUE(t.is_none());
  t["a"]["b"] = f32(1);  // None becomes a dict, missing keys are inserted
  t["a"]["c"] = Tree::list({f32(2), jx::none, f32(3)});
  t["a"]["c"].push_back(f32(4));
  t["a"]["b"] = f32(5);  // replaces in place
  EXPECT_EQ(t.str(), "{'a': {'b': f32[1], 'c': [f32[1], None, f32[1], f32[1]]}}");
  EXPECT_EQ(val(t["a"]["c"][-1].array()), 4.0f);
  EXPECT_EQ(val(t["a"]["b"].array()), 5.0f);
  EXPECT_TRUE(t.contains("a"));
  EXPECT_FALSE(t.contains("zz"));
  EXPECT_EQ(t["a"].size(), 2u);
  Tree l;
  l.push_back(f32(1));
  EXPECT_TRUE(l.is_list());
  Tree scalar = 2.5;  // a weak float32 leaf
  EXPECT_TRUE(scalar.is_leaf());
  EXPECT_TRUE(scalar.array().weak_type());
}

TEST(DynamicTree, UnflattenGivesSortedDicts) {
  Tree t{{"b", f32(2)}, {"a", f32(1)}};
  auto [lv, def] = jx::tree::flatten(t);
  Tree back = jx::tree::unflatten<Tree>(def, lv);
  EXPECT_EQ(back.keys(), (std::vector<std::string>{"a", "b"}));
  Tree mapped = jx::tree::map([](const Array& x) { return f32(val(x) * 2); }, t);
  EXPECT_EQ(mapped.keys(), (std::vector<std::string>{"a", "b"}));  // as jax.tree.map on a dict
  EXPECT_EQ(val(mapped["b"].array()), 4.0f);
  EXPECT_EQ(def.unflatten(lv).str(), back.str());
}

TEST(DynamicTree, StaticEntries) {
  Tree t{{"w", f32(1)}, {"depth", Tree::static_value(jx::tree::StaticValue::integer(3))}};
  auto [lv, def] = jx::tree::flatten(t);
  EXPECT_EQ(lv.size(), 1u);
  EXPECT_EQ(def.str(), "PyTreeDef({'depth': 3, 'w': *})");
  EXPECT_EQ(t.str(), "{'w': f32[1], 'depth': 3}");
  Tree back = def.unflatten(lv);
  EXPECT_EQ(back["depth"].static_value().as_int(), 3);
}

TEST(DynamicTree, FromTypedAndInsideTuple) {
  Dense d{f32(1), f32(2), true, 3};
  Tree t = Tree::from(d);  // a struct becomes a dict in field order
  EXPECT_EQ(t.str(), "{'kernel': f32[1], 'bias': f32[1], 'use_bias': true, 'features': 3}");
  // ... and flattens as the struct does (field order, JAX's dataclass order), so the two
  // forms pair the same leaves.
  EXPECT_EQ(jx::tree::structure(t), jx::tree::structure(d));
  auto tl = jx::tree::leaves(t), dl = jx::tree::leaves(d);
  ASSERT_EQ(tl.size(), 2u);
  EXPECT_TRUE(same(tl[0], d.kernel) && same(tl[1], d.bias));
  Dense back_d = jx::tree::unflatten<Dense>(jx::tree::structure(t), tl);
  EXPECT_TRUE(same(back_d.kernel, d.kernel));
  Tree mapped = jx::tree::map([](const Array& x) { return x * 2.0f; }, t);
  EXPECT_EQ(jx::tree::structure(mapped), jx::tree::structure(d));
  // A new key makes it a plain dict, flattened by sorted key.
  t.insert("extra", f32(9));
  EXPECT_EQ(jx::tree::structure(t).str(),
            "PyTreeDef({'bias': *, 'extra': *, 'features': 3, 'kernel': *, 'use_bias': true})");

  std::tuple<Tree, Array> mixed{Tree{{"x", f32(1)}}, f32(2)};
  auto [lv, def] = jx::tree::flatten(mixed);
  EXPECT_EQ(def.str(), "PyTreeDef(({'x': *}, *))");
  auto back = jx::tree::unflatten<std::tuple<Tree, Array>>(def, lv);
  EXPECT_TRUE(same(std::get<0>(back)["x"].array(), lv[0]));

  // A typed map and a dynamic dict with the same keys share a TreeDef.
  std::map<std::string, Array> m = jx::tree::unflatten<std::map<std::string, Array>>(
      jx::tree::structure(Tree{{"q", f32(1)}}), std::vector<Array>{f32(7)});
  EXPECT_EQ(val(m.at("q")), 7.0f);
}

TEST(DynamicTree, ReadingAMissingKeyThrowsAndNeverInserts) {
  Tree params{{"Dense_0", {{"kernel", f32(1)}, {"bias", f32(2)}}}};
  const std::string before = params.str();
  // "Dense_O" with the letter O: the same message through const and non-const access.
  EXPECT_EQ(error_text<jx::IndexError>([&] { (void)params["Dense_O"]["kernel"].array(); }),
            "[Tree] key 'Dense_O' not found; the keys are ['Dense_0'] (to add it, assign to it or "
            "use insert)");
  EXPECT_EQ(error_text<jx::IndexError>([&] { (void)params["Dense_0"]["kernal"].array(); }),
            "[Tree] key 'kernal' not found in ['Dense_0']; the keys are ['kernel', 'bias'] (to add "
            "it, assign to it or use insert)");
  EXPECT_THROW((void)params["nope"].size(), jx::IndexError);
  EXPECT_EQ(params.str(), before);  // nothing was inserted
  // Explicit creation: assignment (with missing dicts on the way) or insert.
  params["Dense_1"]["bias"] = f32(3);
  params["Dense_1"].insert("kernel", f32(4));
  EXPECT_EQ(params.str(),
            "{'Dense_0': {'kernel': f32[1], 'bias': f32[1]}, 'Dense_1': {'bias': f32[1], 'kernel': f32[1]}}");
  // a = b copies b's value.
  params["Dense_2"] = params["Dense_0"];
  EXPECT_EQ(val(std::as_const(params)["Dense_2"]["bias"].array()), 2.0f);
  // A slot converts to the Tree it names.
  jx::Tree& layer = params["Dense_0"];
  EXPECT_EQ(layer.keys(), (std::vector<std::string>{"kernel", "bias"}));
}

TEST(DynamicTree, MapToOtherValuesAndPrintLeaves) {
  Tree params{{"Dense_0", {{"kernel", jnp::zeros({784, 256})}, {"bias", jnp::zeros({256})}}}};
  Tree shapes = jx::tree::map(jnp::shape, params);
  // Sorted keys, as map of a dict gives in JAX (see UnflattenGivesSortedDicts).
  EXPECT_EQ(shapes.str(), "{'Dense_0': {'bias': [256], 'kernel': [784, 256]}}");
  std::ostringstream leaf;
  Tree small{{"k", jnp::array<float>({1.0f, 2.0f})}};
  leaf << small["k"];  // a leaf prints its values, as print(params['k']) in JAX
  EXPECT_EQ(leaf.str(), "[1. 2.]");
}

TEST(DynamicTree, Errors) {
  Tree t{{"a", f32(1)}, {"b", f32(2)}};
  EXPECT_EQ(error_text<jx::IndexError>([&] { (void)std::as_const(t)["c"]; }),
            "[Tree] key 'c' not found; the keys are ['a', 'b']");
  EXPECT_EQ(error_text<jx::ValueError>([&] { (void)t.array(); }),
            "[Tree] expected an Array leaf but this tree is a dict: {'a': f32[1], 'b': f32[1]}");
  EXPECT_THROW((void)std::as_const(t)[5], jx::IndexError);
  Tree leaf = f32(1);
  EXPECT_THROW((void)leaf["x"].size(), jx::ValueError);  // reading through a slot
  EXPECT_THROW(leaf["x"] = f32(1), jx::ValueError);       // creating a key in a leaf
  EXPECT_THROW(leaf.push_back(f32(1)), jx::ValueError);
  EXPECT_THROW((void)leaf.static_value(), jx::ValueError);
}

}  // namespace
