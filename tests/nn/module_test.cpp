// jx::nn's module system (nn/module.h, nn/scope.cpp): Flax's naming, RNG stream
// derivation (against tests/golden/gen_nn_module.py), collections and mutability, the
// errors by their text, and apply under jit, grad and vmap.
#include <gtest/gtest.h>

#include <string>

#include "jx/jx.h"
#include "jx/nn/module.h"
#include "testing/check_grads.h"
#include "testing/golden.h"

namespace {

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace nn = jx::nn;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::Tree;

#include "golden/nn_module_golden.inc"

// ---- modules of the tests ----

Array normal_init(const Array& key, const Shape& shape, DType dtype) { return jr::normal(key, shape, dtype); }
Array zeros_init(const Array&, const Shape& shape, DType dtype) { return jnp::zeros(shape, dtype); }

struct TinyDense : nn::Module<TinyDense> {
  int64_t features = 1;
  std::optional<std::string> name;
  Array call(const Array& x) const {
    Array k = nn::param("kernel", normal_init, {x.shape().back(), features});
    Array b = nn::param("bias", zeros_init, {features});
    return jnp::matmul(x, k) + b;
  }
};

struct KeyProbe : nn::Module<KeyProbe> {
  Array call() const {
    return jnp::stack({nn::make_rng("params"), nn::make_rng("params"), nn::make_rng("dropout")});
  }
};
struct Inner : nn::Module<Inner> {
  Array call() const { return KeyProbe{}(); }
};
struct Outer : nn::Module<Outer> {
  Array call() const {
    return jnp::concatenate({KeyProbe{}(), KeyProbe{}(), Inner{}(), jnp::expand_dims(nn::make_rng(), 0)});
  }
};

struct Mlp : nn::Module<Mlp> {
  int64_t hidden = 4;
  Array call(Array x) const {
    x = jnp::tanh(TinyDense{.features = hidden}(x));
    x = jnp::tanh(TinyDense{.features = hidden}(x));
    return TinyDense{.features = 2}(x);
  }
};

// A running mean in "batch_stats", updated when that collection is mutable.
struct Counter : nn::Module<Counter> {
  Array call(const Array& x) const {
    nn::Variable count = nn::variable("batch_stats", "count", [] { return jnp::zeros({}, DType::Int32); });
    nn::Variable mean = nn::variable("batch_stats", "mean", [&] { return jnp::zeros({x.shape().back()}); });
    if (!nn::is_initializing() && count.is_mutable()) {
      count.set(count.value() + 1);
      mean.set(mean.value() * 0.9 + jnp::mean(x, std::vector<int64_t>{0}) * 0.1);
    }
    return x - mean.value();
  }
};

void expect_keys(const std::string& golden, const Array& keys) {
  jx::testing::expect_named_golden(kModuleGolden, golden, keys.astype(DType::Float64));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const jx::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// ---- naming and the variable tree ----

TEST(NnModule, AutoNamesPerClassPerParent) {
  Mlp model;
  Tree v = model.init(jr::PRNGKey(0), jnp::ones({3, 5}));
  EXPECT_EQ(v.str(),
            "{'params': {'TinyDense_0': {'kernel': f32[5,4], 'bias': f32[4]}, 'TinyDense_1': "
            "{'kernel': f32[4,4], 'bias': f32[4]}, 'TinyDense_2': {'kernel': f32[4,2], 'bias': f32[2]}}}");
  // A module at the root has its variables at the root of each collection.
  Tree d = TinyDense{.features = 3}.init(jr::PRNGKey(0), jnp::ones({2}));
  EXPECT_EQ(d.str(), "{'params': {'kernel': f32[2,3], 'bias': f32[3]}}");
}

TEST(NnModule, ExplicitNamesAndSharing) {
  struct Shared : nn::Module<Shared> {
    Array call(Array x) const {
      TinyDense d{.features = 3, .name = "shared"};
      x = d(x);  // params/shared
      x = d(x);  // the same parameters again
      return TinyDense{.features = 3}(x);  // TinyDense_0: auto names skip no index
    }
  };
  Tree v = Shared{}.init(jr::PRNGKey(0), jnp::ones({3}));
  EXPECT_EQ(v.str(), "{'params': {'shared': {'kernel': f32[3,3], 'bias': f32[3]}, 'TinyDense_0': "
                     "{'kernel': f32[3,3], 'bias': f32[3]}}}");
}

// ---- RNG streams, bit for bit with Flax's derivation ----

TEST(NnModule, MakeRngAsFlax) {
  Outer model;
  auto [keys, vars] = model.init_with_output(jr::PRNGKey(0));
  expect_keys("init_key0", keys);
  // A "dropout" stream of its own counts separately from "params".
  Array k2 = model.apply(vars, nn::Rngs{{"params", jr::PRNGKey(0)}, {"dropout", jr::PRNGKey(7)}});
  expect_keys("apply_dropout7", k2);
  // Each call of apply starts the counters again: the same keys.
  EXPECT_TRUE(bool(jnp::array_equal(model.apply(vars, nn::Rngs{{"params", jr::PRNGKey(0)}, {"dropout", jr::PRNGKey(7)}}), k2)));
}

TEST(NnModule, CounterBytesAndUtf8Names) {
  struct Many : nn::Module<Many> {
    std::string name;
    Array call() const {
      for (int i = 0; i < 254; ++i) nn::make_rng();
      return jnp::stack({nn::make_rng(), nn::make_rng()});  // counters 255 and 256
    }
  };
  struct Wrap : nn::Module<Wrap> {
    Array call() const { return Many{.name = "Dense_0"}(); }
  };
  expect_keys("counter_256", Wrap{}.init_with_output(jr::PRNGKey(0)).first);
  struct One : nn::Module<One> {
    std::string name;
    Array call() const { return jnp::expand_dims(nn::make_rng(), 0); }
  };
  struct Utf8 : nn::Module<Utf8> {
    Array call() const { return One{.name = "Schicht_\xc3\xa4"}(); }
  };
  expect_keys("utf8_name", Utf8{}.init_with_output(jr::PRNGKey(0)).first);
}

TEST(NnModule, ParamsDrawFromTheirModulesStream) {
  // A parameter's initializer gets the next key of its module's "params" stream: the
  // root TinyDense's kernel is normal(first key at "/"), its bias the second draw.
  struct RootKey : nn::Module<RootKey> {
    Array call() const { return nn::make_rng(); }
  };
  Array k = jr::PRNGKey(3);
  Array first = RootKey{}.init_with_output(k).first;
  Tree v = TinyDense{.features = 4}.init(k, jnp::ones({1, 5}));
  EXPECT_TRUE(bool(jnp::array_equal(v["params"]["kernel"].array(), jr::normal(first, {5, 4}))));
  EXPECT_TRUE(bool(jnp::array_equal(v["params"]["bias"].array(), jnp::zeros({4}))));
  // Same key, same parameters.
  Mlp model;
  Tree a = model.init(k, jnp::ones({1, 5})), b = model.init(k, jnp::ones({1, 5}));
  EXPECT_TRUE(bool(jnp::array_equal(a["params"]["TinyDense_1"]["kernel"].array(),
                                    b["params"]["TinyDense_1"]["kernel"].array())));
}

// ---- collections and mutability ----

TEST(NnModule, MutableCollections) {
  Counter model;
  Array x = jnp::array<float>({{1, 2}, {3, 4}});
  Tree v = model.init(jr::PRNGKey(0), x);
  EXPECT_EQ(v.str(), "{'batch_stats': {'count': i32[], 'mean': f32[2]}}");
  // Immutable: the statistics are read, not written.
  Array y = model.apply(v, x);
  EXPECT_TRUE(bool(jnp::array_equal(y, x)));
  // Mutable: apply returns the updated collection.
  auto [y2, updates] = model.apply(v, x, nn::Mutable{"batch_stats"});
  EXPECT_EQ(updates.str(), "{'batch_stats': {'count': i32[], 'mean': f32[2]}}");
  EXPECT_EQ(updates["batch_stats"]["count"].array().item<int32_t>(), 1);
  jx::testing::expect_close(updates["batch_stats"]["mean"].array(), jnp::array<float>({0.2f, 0.3f}), 1e-6, 1e-6, "mean");
  // Writing without the collection being mutable names the variable, path and fix.
  struct Writer : nn::Module<Writer> {
    Array call(const Array& x) const {
      nn::variable("batch_stats", "count", [] { return jnp::zeros({}, DType::Int32); }).set(jnp::ones({}, DType::Int32));
      return x;
    }
  };
  Tree w = Writer{}.init(jr::PRNGKey(0), x);
  EXPECT_EQ(error_of([&] { Writer{}.apply(w, x); }),
            "[nn] cannot update variable \"count\" in \"/\" because collection \"batch_stats\" is "
            "immutable: pass nn::Mutable{\"batch_stats\"} to apply (it then returns (y, updated "
            "collections))");
  EXPECT_THROW(Writer{}.apply(w, x), nn::ModifyScopeVariableError);
}

TEST(NnModule, SowAndPerturb) {
  struct Sower : nn::Module<Sower> {
    Array call(const Array& x) const {
      Array h = TinyDense{.features = 2}(x);
      nn::sow("intermediates", "h", h);
      nn::sow("intermediates", "h", h * 2.0);
      return nn::perturb("h", h);
    }
  };
  Sower m;
  Array x = jnp::ones({1, 3});
  Tree v = m.init(jr::PRNGKey(0), x);
  // init keeps "intermediates" out; "perturbations" is created.
  EXPECT_EQ(v.str(), "{'params': {'TinyDense_0': {'kernel': f32[3,2], 'bias': f32[2]}}, 'perturbations': {'h': f32[1,2]}}");
  auto [y, inter] = m.apply(v, x, nn::Mutable{"intermediates"});
  EXPECT_EQ(inter.str(), "{'intermediates': {'h': [f32[1,2], f32[1,2]]}}");
  // The gradient with respect to the perturbation is the gradient at h.
  Tree params = Tree{{"params", v["params"]}};
  auto loss = [&](const Tree& perturbations) {
    Tree all = params;
    all.insert("perturbations", perturbations);
    return jnp::sum(jnp::square(m.apply(all, x)));
  };
  Tree g = jx::grad(loss)(Tree(v["perturbations"]));
  Array h = m.apply(v, x);
  jx::testing::expect_close(g["h"].array(), h * 2.0, 1e-6, 1e-6, "d loss / d h");
  // Without a perturbations collection, perturb is the identity.
  EXPECT_TRUE(bool(jnp::array_equal(m.apply(params, x), h)));
}

// ---- errors ----

TEST(NnModule, ErrorsAsFlax) {
  Mlp model;
  Array x = jnp::ones({2, 5});
  Tree v = model.init(jr::PRNGKey(0), x);
  // Another input width than at init.
  EXPECT_THROW(model.apply(v, jnp::ones({2, 6})), nn::ScopeParamShapeError);
  EXPECT_EQ(error_of([&] { model.apply(v, jnp::ones({2, 6})); }),
            "[nn] initializer expected to generate shape (6, 4) but got shape (5, 4) instead for "
            "parameter \"kernel\" in \"/TinyDense_0\": the stored parameter does not fit the "
            "module's configuration or inputs now (e.g. another input width than at init); re-run "
            "init or fix the inputs");
  // No params at all.
  EXPECT_THROW(model.apply(Tree::dict(), x), nn::ScopeCollectionNotFound);
  // A params tree of another model.
  Tree other = Tree{{"params", Tree{{"Dense_0", v["params"]["TinyDense_0"]}}}};
  EXPECT_EQ(error_of([&] { model.apply(other, x); }),
            "[nn] could not find parameter named \"kernel\" in scope \"/TinyDense_0\": the variables "
            "come from another model, or the module's names changed since init");
  // {"params": {"params": ...}}.
  EXPECT_THROW(model.apply(Tree{{"params", v}}, x), nn::ApplyScopeInvalidVariablesStructureError);
  // A stream nobody passed.
  struct NeedsDropout : nn::Module<NeedsDropout> {
    Array call() const { return nn::make_rng("dropout"); }
  };
  EXPECT_EQ(error_of([&] { NeedsDropout{}.apply(Tree::dict()); }),
            "[nn] / needs PRNG for \"dropout\": pass a key for it, e.g. "
            "model.apply(variables, x, nn::Rngs{{\"dropout\", key}})");
  EXPECT_THROW(NeedsDropout{}.apply(Tree::dict()), nn::InvalidRngError);
  // Two params of one name.
  struct Twice : nn::Module<Twice> {
    Array call() const {
      nn::param("w", zeros_init, {2});
      return nn::param("w", zeros_init, {2});
    }
  };
  EXPECT_EQ(error_of([&] { Twice{}.init(jr::PRNGKey(0)); }),
            "[nn] the name \"w\" is used twice in / by variables of collection \"params\"; give "
            "each variable and submodule of a module its own name");
  // A module called outside init/apply.
  EXPECT_THROW(TinyDense{.features = 2}(x), nn::CallCompactUnboundModuleError);
  // A key that is not a key.
  EXPECT_THROW(model.init(jnp::ones({2}), x), jx::ValueError);
}

// ---- transformations ----

TEST(NnModule, ApplyUnderJitGradVmap) {
  Mlp model;
  Array x = jr::normal(jr::PRNGKey(1), {6, 5});
  Array t = jr::normal(jr::PRNGKey(2), {6, 2});
  Tree v = model.init(jr::PRNGKey(0), x);
  auto loss = [&](const Tree& params, const Array& xs, const Array& ts) {
    return jnp::mean(jnp::square(model.apply(params, xs) - ts));
  };
  // jit equals eager.
  Array y = model.apply(v, x);
  Array yj = jx::jit([&](const Tree& p, const Array& xs) { return model.apply(p, xs); })(v, x);
  jx::testing::expect_close(yj, y, 1e-6, 1e-6, "jit");
  // grad has the params' structure and matches finite differences (float64).
  Tree v64 = jx::tree::map([](const Array& a) { return a.astype(DType::Float64); }, v);
  Array x64 = x.astype(DType::Float64), t64 = t.astype(DType::Float64);
  Tree g = jx::grad(loss)(v64, x64, t64);
  EXPECT_EQ(jx::tree::structure(g), jx::tree::structure(v64));
  const Array& k = v64["params"]["TinyDense_1"]["kernel"].array();
  const double eps = 1e-6;
  Tree vp = v64;
  vp["params"]["TinyDense_1"]["kernel"] = k.at(0, 0).add(eps);
  Tree vm = v64;
  vm["params"]["TinyDense_1"]["kernel"] = k.at(0, 0).add(-eps);
  const double fd = (loss(vp, x64, t64).item<double>() - loss(vm, x64, t64).item<double>()) / (2 * eps);
  EXPECT_NEAR(g["params"]["TinyDense_1"]["kernel"].array()(0, 0).item<double>(), fd, 1e-7);
  // Under checkpoint (remat) the gradient is the same.
  auto remat_loss = jx::checkpoint([&](const Tree& params, const Array& xs, const Array& ts) {
    return jnp::mean(jnp::square(model.apply(params, xs) - ts));
  });
  Tree gr = jx::grad(remat_loss)(v64, x64, t64);
  jx::testing::expect_close(gr["params"]["TinyDense_0"]["kernel"].array(),
                            g["params"]["TinyDense_0"]["kernel"].array(), 1e-12, 1e-12, "checkpoint");
  // Per-example gradients: vmap(grad) equals a loop.
  auto per_example = jx::vmap(jx::grad(loss), {.in_axes = {jx::none, 0, 0}})(v64, x64, t64);
  for (int64_t i = 0; i < 6; ++i) {
    Tree gi = jx::grad(loss)(v64, x64(jx::slice(i, i + 1)), t64(jx::slice(i, i + 1)));
    jx::testing::expect_close(per_example["params"]["TinyDense_0"]["kernel"].array()(i),
                              gi["params"]["TinyDense_0"]["kernel"].array(), 1e-12, 1e-12, "example " + std::to_string(i));
  }
}

TEST(NnModule, BindAndMethods) {
  struct TwoWays : nn::Module<TwoWays> {
    Array call(const Array& x) const { return TinyDense{.features = 2, .name = "proj"}(x); }
    Array twice(const Array& x) const { return call(x) * 2.0; }
  };
  TwoWays m;
  Array x = jnp::ones({1, 3});
  Tree v = m.init(jr::PRNGKey(0), x);
  auto bound = m.bind(v);
  EXPECT_TRUE(bool(jnp::array_equal(bound(x), m.apply(v, x))));
  EXPECT_TRUE(bool(jnp::array_equal(m.apply(v, &TwoWays::twice, x), m.apply(v, x) * 2.0)));
}

}  // namespace
