// ckpt::save / restore (Orbax's StandardCheckpointer): round trips of nested trees with
// every dtype and static leaves, with and without a target; a TrainState with Adam's state;
// every mismatch with the target names its key path; existing paths; corrupt checkpoints.
#include <fstream>

#include "checkpoint_testing.h"

namespace {

namespace ocp = jx::ckpt;
namespace jnp = jx::numpy;
namespace optim = jx::optim;
using ckpt_testing::bytes_of;
using ckpt_testing::expect_error;
using ckpt_testing::expect_identical;
using ckpt_testing::pattern;
using ckpt_testing::TempDir;
using jx::Array;
using jx::DType;
using jx::Tree;

enum class Phase { Warmup = 1, Main = 2 };

struct Record {
  Tree params;
  std::vector<Array> history;
  std::tuple<Array, int> pair;
  std::optional<Array> maybe;
  int64_t epoch = 0;
  std::string note;
  bool finished = false;
  double lr = 0;
  Phase phase = Phase::Warmup;
};
JX_PYTREE(Record, params, history, pair, maybe, epoch, note, finished, lr, phase)

// Every dtype, at several shapes (scalar, size 0, odd sizes), in a nested dict.
Tree every_dtype_tree() {
  Tree t;
  const std::vector<jx::Shape> shapes = {{}, {0}, {3}, {2, 5}, {2, 0, 3}};
  for (int d = 0; d < jx::kNumDTypes; ++d)
    for (size_t s = 0; s < shapes.size(); ++s)
      t[jx::dtype_name(DType(d))][std::to_string(s)] = pattern(DType(d), shapes[s], d + int64_t(s));
  return t;
}

Record make_record() {
  Record r;
  r.params = every_dtype_tree();
  r.history = {pattern(DType::Float32, {4}, 1), pattern(DType::BFloat16, {2, 2}, 2)};
  r.pair = {pattern(DType::Int64, {3}, 3), 42};
  r.maybe = pattern(DType::Float16, {1, 3}, 4);
  r.epoch = 7;
  r.note = "resumed \"run\" \u00e9/\n";
  r.finished = true;
  r.lr = -0.0;
  r.phase = Phase::Main;
  return r;
}

void expect_same_trees(const Tree& a, const Tree& b, const std::string& path = "") {
  ASSERT_EQ(int(a.kind()), int(b.kind())) << path;
  switch (a.kind()) {
    case Tree::Kind::Leaf: expect_identical(a.array(), b.array(), path); break;
    case Tree::Kind::Static: EXPECT_EQ(a.static_value(), b.static_value()) << path; break;
    case Tree::Kind::List:
      ASSERT_EQ(a.size(), b.size()) << path;
      for (size_t i = 0; i < a.size(); ++i) expect_same_trees(a[i], b[i], path + "/" + std::to_string(i));
      break;
    case Tree::Kind::Dict: {
      // Restored dicts come in flattening (sorted) order.
      auto ka = a.keys(), kb = b.keys();
      std::sort(ka.begin(), ka.end());
      std::sort(kb.begin(), kb.end());
      ASSERT_EQ(ka, kb) << path;
      for (const std::string& k : ka) expect_same_trees(a[k], b[k], path + "/" + k);
      break;
    }
    case Tree::Kind::None: break;
  }
}

TEST(Checkpoint, RoundTripEveryDtypeWithoutTarget) {
  TempDir dir;
  Tree t = every_dtype_tree();
  t["weak"] = Tree(2.5);  // a weakly typed scalar stays weak
  t["list"] = Tree::list({Tree(pattern(DType::UInt8, {2})), Tree(), Tree::static_value(jx::tree::StaticValue::string("x"))});
  ocp::save(dir / "ckpt", t);
  Tree back = ocp::restore(dir / "ckpt");
  expect_same_trees(back, t);
  EXPECT_TRUE(back["weak"].array().weak_type());
}

TEST(Checkpoint, RoundTripStructIntoTargetRestoresStaticValues) {
  TempDir dir;
  Record saved = make_record();
  ocp::save(dir / "ckpt", saved);
  Record target = make_record();  // same structure; static values differ below
  target.epoch = 0;
  target.note = "";
  target.finished = false;
  target.lr = 1.0;
  target.phase = Phase::Warmup;
  std::get<1>(target.pair) = 0;
  Record back = ocp::restore(dir / "ckpt", target);
  EXPECT_EQ(back.epoch, 7);
  EXPECT_EQ(back.note, saved.note);
  EXPECT_TRUE(back.finished);
  EXPECT_TRUE(std::signbit(back.lr));  // -0.0 kept bit for bit
  EXPECT_EQ(back.phase, Phase::Main);
  EXPECT_EQ(std::get<1>(back.pair), 42);
  expect_same_trees(back.params, saved.params);
  expect_identical(back.history[1], saved.history[1]);
  expect_identical(std::get<0>(back.pair), std::get<0>(saved.pair));
  ASSERT_TRUE(back.maybe.has_value());
  expect_identical(*back.maybe, *saved.maybe);
}

TEST(Checkpoint, RestoreWithoutTargetRebuildsStructsAsDicts) {
  TempDir dir;
  ocp::save(dir / "ckpt", make_record());
  Tree back = ocp::restore(dir / "ckpt");
  ASSERT_TRUE(back.is_dict());
  EXPECT_EQ(back.keys(), (std::vector<std::string>{"params", "history", "pair", "maybe", "epoch",
                                                    "note", "finished", "lr", "phase"}));
  EXPECT_EQ(back["epoch"].static_value().as_int(), 7);
  EXPECT_EQ(back["phase"].static_value().as_int(), 2);  // enums come back as their integers
  EXPECT_EQ(back["pair"][1].static_value().as_int(), 42);
  EXPECT_TRUE(back["pair"].is_list());  // tuples come back as lists, as TreeDef::unflatten does
}

TEST(Checkpoint, FilesAreSafetensorsNamedByKeyPathAndJson) {
  TempDir dir;
  Tree t{{"params", {{"Dense_0", {{"kernel", pattern(DType::Float32, {2, 3})}}}}},
         {"epoch", Tree::static_value(jx::tree::StaticValue::integer(3))}};
  ocp::save(dir / "ckpt", t);
  auto arrays = jnp::load_safetensors(dir / "ckpt/arrays.safetensors");
  ASSERT_EQ(arrays.size(), 1u);
  expect_identical(arrays.at("params/Dense_0/kernel"), pattern(DType::Float32, {2, 3}));
  std::ifstream in(dir / "ckpt/tree.json");
  std::string json((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(json,
            "{\"format\":\"jx.checkpoint\",\"version\":1,\"tree\":{\"dict\":{\"epoch\":{\"static\":"
            "\"int\",\"value\":3},\"params\":{\"dict\":{\"Dense_0\":{\"dict\":{\"kernel\":{"
            "\"array\":\"params/Dense_0/kernel\",\"dtype\":\"float32\",\"shape\":[2,3]}}}}}}}}\n");
}

TEST(Checkpoint, MismatchedTargetsNameTheKeyPath) {
  TempDir dir;
  Tree saved{{"params", {{"Dense_0", {{"kernel", jnp::zeros({784, 512})}, {"bias", jnp::zeros({512})}}}}},
             {"step", Tree::static_value(jx::tree::StaticValue::integer(1))}};
  ocp::save(dir / "ckpt", saved);
  auto with = [&](const char* key, Tree value) {
    Tree t = saved;
    t["params"]["Dense_0"][key] = std::move(value);
    return t;
  };
  expect_error<jx::ValueError>([&] { ocp::restore(dir / "ckpt", with("kernel", jnp::zeros({784, 256}))); },
                               {"['params']['Dense_0']['kernel']", "the checkpoint holds f32[784,512]",
                                "the target expects f32[784,256]"});
  expect_error<jx::ValueError>(
      [&] { ocp::restore(dir / "ckpt", with("bias", jnp::zeros({512}, DType::Float16))); },
      {"['params']['Dense_0']['bias']", "f32[512]", "f16[512]"});
  expect_error<jx::ValueError>([&] { ocp::restore(dir / "ckpt", with("scale", jnp::ones({512}))); },
                               {"['params']['Dense_0']", "lacks the keys (scale,)"});
  Tree fewer{{"params", {{"Dense_0", {{"kernel", jnp::zeros({784, 512})}}}}},
             {"step", Tree::static_value(jx::tree::StaticValue::integer(1))}};
  expect_error<jx::ValueError>([&] { ocp::restore(dir / "ckpt", fewer); },
                               {"['params']['Dense_0']", "has keys the target lacks (bias,)"});
  Tree kind{{"params", {{"Dense_0", Tree::list({jnp::zeros({1}), jnp::zeros({1})})}}},
            {"step", Tree::static_value(jx::tree::StaticValue::integer(1))}};
  expect_error<jx::ValueError>([&] { ocp::restore(dir / "ckpt", kind); },
                               {"['params']['Dense_0']", "holds a dict, the target a list"});
  Tree statics = saved;
  statics["step"] = Tree::static_value(jx::tree::StaticValue::string("one"));
  expect_error<jx::ValueError>([&] { ocp::restore(dir / "ckpt", statics); },
                               {"['step']", "static value 1"});
}

// The tutorial's checkpoint: {'params', 'opt_state', 'epoch'} after real Adam steps, restored
// into a fresh TrainState whose functions (apply_fn, tx) come from the target.
TEST(Checkpoint, TrainStateWithAdamRoundTrip) {
  TempDir dir;
  Tree params{{"w", jnp::array({1.0f, -2.0f, 3.0f})}, {"b", jnp::array(0.5f)}};
  auto apply = [](const Tree& v, const Array& x) {
    return x * v["params"]["w"].array() + v["params"]["b"].array();
  };
  auto state = optim::TrainState::create(apply, params, optim::adam(0.1));
  for (int i = 0; i < 3; ++i) {
    auto grads = jx::grad([&](const Tree& p) {
      return jnp::sum(jnp::square(state.apply_fn(Tree{{"params", p}}, jnp::ones({3})) - 1.0f));
    })(state.params);
    state = state.apply_gradients(grads);
  }
  ocp::save(dir / "state", state);
  auto fresh = optim::TrainState::create(apply, params, optim::adam(0.1));
  auto back = ocp::restore(dir / "state", fresh);
  expect_identical(back.step, state.step);
  expect_same_trees(back.params, state.params);
  auto [l1, d1] = jx::tree::flatten(back.opt_state);
  auto [l0, d0] = jx::tree::flatten(state.opt_state);
  EXPECT_EQ(d1, d0);
  ASSERT_EQ(l1.size(), l0.size());
  for (size_t i = 0; i < l0.size(); ++i) expect_identical(l1[i], l0[i]);
  // The restored state trains on exactly as the original does.
  auto g = jx::tree::map([](const Array& x) { return jnp::ones_like(x); }, state.params);
  expect_same_trees(back.apply_gradients(g).params, state.apply_gradients(g).params);
  // Without a target, the functions cannot be rebuilt: they come back as None.
  Tree plain = ocp::restore(dir / "state");
  EXPECT_TRUE(plain["apply_fn"].is_none());
  EXPECT_EQ(plain["step"].array().item<int32_t>(), 3);
}

TEST(Checkpoint, ExistingPathNeedsForceAndForceReplacesWhole) {
  TempDir dir;
  ocp::save(dir / "ckpt", Tree{{"a", jnp::array({1.0f})}});
  expect_error<jx::ValueError>([&] { ocp::save(dir / "ckpt", Tree{{"a", jnp::array({2.0f})}}); },
                               {"already exists", ".force = true"});
  ocp::save(dir / "ckpt", Tree{{"b", jnp::array({3, 4})}}, {.force = true});
  Tree back = ocp::restore(dir / "ckpt");
  EXPECT_EQ(back.keys(), std::vector<std::string>{"b"});
  EXPECT_EQ(back["b"].array()(0).item<int32_t>(), 3);
  // Nothing but the checkpoint is left in the directory.
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"ckpt"});
  expect_error<jx::IOError>([&] { ocp::save(dir / "missing/ckpt", Tree{{"a", jnp::array({1.0f})}}); },
                            {"parent directory", "does not exist"});
}

TEST(Checkpoint, CorruptCheckpointsAreIOErrors) {
  TempDir dir;
  expect_error<jx::IOError>([&] { ocp::restore(dir / "none"); }, {"is not a checkpoint", "does not exist"});
  ocp::save(dir / "ckpt", Tree{{"a", pattern(DType::Float32, {4})}, {"b", pattern(DType::Int8, {2})}});
  auto rewrite = [&](const std::string& file, const std::string& text) {
    std::ofstream(dir / ("ckpt/" + file), std::ios::trunc) << text;
  };
  std::string good;
  {
    std::ifstream in(dir / "ckpt/tree.json");
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  rewrite("tree.json", "{\"format\":");
  expect_error<jx::IOError>([&] { ocp::restore(dir / "ckpt"); }, {"tree.json", "is not valid JSON"});
  rewrite("tree.json", replaced("\"version\":1", "\"version\":2"));
  expect_error<jx::IOError>([&] { ocp::restore(dir / "ckpt"); }, {"format version 2"});
  rewrite("tree.json", replaced("\"dtype\":\"float32\"", "\"dtype\":\"float33\""));
  expect_error<jx::IOError>([&] { ocp::restore(dir / "ckpt"); }, {"unknown dtype \"float33\"", "['a']"});
  rewrite("tree.json", replaced("\"shape\":[4]", "\"shape\":[5]"));
  expect_error<jx::IOError>([&] { ocp::restore(dir / "ckpt"); }, {"holds \"a\" as f32[4]", "says f32[5]"});
  rewrite("tree.json", replaced("\"array\":\"a\"", "\"array\":\"c\""));
  expect_error<jx::IOError>([&] { ocp::restore(dir / "ckpt"); }, {"lacks the array \"c\""});
  rewrite("tree.json", replaced("{\"dict\":", "{\"set\":"));
  expect_error<jx::IOError>([&] { ocp::restore(dir / "ckpt"); }, {"unknown kind \"set\""});
  rewrite("tree.json", good);
  EXPECT_NO_THROW(ocp::restore(dir / "ckpt"));
  std::filesystem::resize_file(dir / "ckpt/arrays.safetensors", 20);
  expect_error<jx::IOError>([&] { ocp::restore(dir / "ckpt"); }, {"arrays.safetensors", "truncated"});
}

TEST(Checkpoint, TracersAndDeletedArraysAreRefused) {
  TempDir dir;
  EXPECT_THROW(jx::grad([&](const Array& x) {
                 ocp::save(dir / "c", Tree{{"x", x}});
                 return jnp::sum(x);
               })(jnp::ones({2})),
               jx::Error);
  EXPECT_FALSE(std::filesystem::exists(dir / "c"));
}

}  // namespace
