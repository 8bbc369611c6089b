// jx::config::debug_key_reuse, JAX's key-reuse checker (jax.experimental.key_reuse,
// tests/key_reuse_test.py): which functions consume a key (every sampler, bits, split) and
// which do not (fold_in, key_data, PRNGKey), reuse raising jx::KeyReuseError eagerly and
// at trace time under jit / vmap, cond branches counted as alternatives, the jit hooks,
// and the flag being off by default with no effect.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "jx/jit.h"
#include "jx/jx.h"
#include "transforms/key_reuse.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace lax = jx::lax;
using jx::Array;

namespace {

struct KeyReuse : ::testing::Test {
  jx::config::Scoped on{jx::config::debug_key_reuse, true};
};

// The message of the KeyReuseError that f throws ("" when it throws none).
std::string reuse_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const jx::KeyReuseError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(KeyReuseFlag, OffByDefaultAndWithoutEffect) {
  if (!std::getenv("JX_DEBUG_KEY_REUSE")) {
    EXPECT_FALSE(jx::config::debug_key_reuse.value());
  }
  jx::config::Scoped off(jx::config::debug_key_reuse, false);
  const size_t tracked = jr::key_reuse::tracked_keys();
  Array key = jr::PRNGKey(0);
  Array a = jr::normal(key, {3});
  Array b = jr::normal(key, {3});  // a reuse, unchecked: the same numbers again
  jr::split(key);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  EXPECT_EQ(jr::key_reuse::tracked_keys(), tracked);
  EXPECT_FALSE(jr::key_reuse::is_consumed(key));
}

TEST(KeyReuseFlag, ScopedEnablingEndsWithTheScope) {
  jx::config::Scoped off(jx::config::debug_key_reuse, false);
  Array key = jr::PRNGKey(1);
  {
    jx::config::Scoped on(jx::config::debug_key_reuse, true);
    jr::uniform(key);
    EXPECT_THROW(jr::uniform(key), jx::KeyReuseError);
  }
  EXPECT_NO_THROW(jr::uniform(key));
  // A consumption made while off is not remembered.
  Array fresh = jr::PRNGKey(2);
  jr::uniform(fresh);
  jx::config::Scoped on(jx::config::debug_key_reuse, true);
  EXPECT_NO_THROW(jr::uniform(fresh));
  EXPECT_THROW(jr::uniform(fresh), jx::KeyReuseError);
}

TEST_F(KeyReuse, SamplerTwiceRaisesNamingBothCallsAndTheFix) {
  Array key = jr::PRNGKey(42);
  jr::normal(key, {2});
  const std::string m = reuse_message([&] { jr::uniform(key, {2}); });
  EXPECT_TRUE(contains(m, "[uniform] debug_key_reuse: previously-consumed PRNG key [0, 42]")) << m;
  EXPECT_TRUE(contains(m, "(already consumed by normal)")) << m;
  EXPECT_TRUE(contains(m, "auto [key, subkey] = jr::split<2>(key);")) << m;
  EXPECT_FALSE(contains(m, "tracing")) << m;
  // A typed error, catchable as JAX's KeyReuseError (a TypeError) or any jx::Error.
  EXPECT_THROW(jr::normal(key), jx::TypeError);
  EXPECT_THROW(jr::normal(key), jx::Error);
}

TEST_F(KeyReuse, AFailedCallDoesNotConsume) {
  Array key = jr::PRNGKey(23);
  EXPECT_THROW(jr::normal(key, {-1}), jx::ValueError);  // a bad shape: nothing was drawn
  EXPECT_FALSE(jr::key_reuse::is_consumed(key));
  EXPECT_NO_THROW(jr::normal(key, {1}));
  EXPECT_THROW(jr::normal(key, {1}), jx::KeyReuseError);
}

TEST_F(KeyReuse, SplitConsumesItsKey) {
  Array key = jr::PRNGKey(3);
  jr::split(key, 4);
  EXPECT_TRUE(contains(reuse_message([&] { jr::split(key); }), "(already consumed by split)"));
  Array k2 = jr::PRNGKey(4);
  jr::split<2>(k2);
  EXPECT_TRUE(contains(reuse_message([&] { jr::normal(k2); }), "[normal]"));
  Array k3 = jr::PRNGKey(5);
  jr::bernoulli(k3, 0.5, {4});
  EXPECT_TRUE(contains(reuse_message([&] { jr::split(k3); }), "[split]"));
}

TEST_F(KeyReuse, EveryConsumerConsumes) {
  const std::vector<std::pair<const char*, std::function<void(const Array&)>>> consumers = {
      {"bits", [](const Array& k) { jr::bits(k, {2}); }},
      {"uniform", [](const Array& k) { jr::uniform(k, {2}); }},
      {"normal", [](const Array& k) { jr::normal(k, {2}); }},
      {"truncated_normal", [](const Array& k) { jr::truncated_normal(k, -1.0, 1.0, {2}); }},
      {"gumbel", [](const Array& k) { jr::gumbel(k, {2}); }},
      {"exponential", [](const Array& k) { jr::exponential(k, {2}); }},
      {"laplace", [](const Array& k) { jr::laplace(k, {2}); }},
      {"logistic", [](const Array& k) { jr::logistic(k, {2}); }},
      {"cauchy", [](const Array& k) { jr::cauchy(k, {2}); }},
      {"pareto", [](const Array& k) { jr::pareto(k, 2.0, {2}); }},
      {"weibull_min", [](const Array& k) { jr::weibull_min(k, 1.0, 1.5, {2}); }},
      {"maxwell", [](const Array& k) { jr::maxwell(k, {2}); }},
      {"gamma", [](const Array& k) { jr::gamma(k, 2.0, {2}); }},
      {"loggamma", [](const Array& k) { jr::loggamma(k, 2.0, {2}); }},
      {"beta", [](const Array& k) { jr::beta(k, 2.0, 3.0, {2}); }},
      {"dirichlet", [](const Array& k) { jr::dirichlet(k, jnp::array<float>({1, 2})); }},
      {"chisquare", [](const Array& k) { jr::chisquare(k, 3.0, {2}); }},
      {"t", [](const Array& k) { jr::t(k, 3.0, {2}); }},
      {"multivariate_normal",
       [](const Array& k) { jr::multivariate_normal(k, jnp::zeros({2}), jnp::eye(2)); }},
      {"orthogonal", [](const Array& k) { jr::orthogonal(k, 2); }},
      {"bernoulli", [](const Array& k) { jr::bernoulli(k, 0.5, {2}); }},
      {"randint", [](const Array& k) { jr::randint(k, {2}, 0, 10); }},
      {"rademacher", [](const Array& k) { jr::rademacher(k, {2}); }},
      {"poisson", [](const Array& k) { jr::poisson(k, 3.0, {2}); }},
      {"categorical", [](const Array& k) { jr::categorical(k, jnp::zeros({3})); }},
      {"permutation", [](const Array& k) { jr::permutation(k, Array(5)); }},
      {"shuffle", [](const Array& k) { jr::shuffle(k, jnp::arange(5)); }},
      {"choice", [](const Array& k) { jr::choice(k, Array(5), {2}, false); }},
      {"split", [](const Array& k) { jr::split(k, 3); }},
  };
  for (const auto& [name, consume] : consumers) {
    Array key = jr::PRNGKey(7);
    // Composite samplers (dirichlet on loggamma, choice on permutation) consume once.
    EXPECT_NO_THROW(consume(key)) << name;
    const std::string m = reuse_message([&] { jr::bits(key); });
    EXPECT_TRUE(contains(m, std::string("(already consumed by ") + name + ")")) << name << ": " << m;
  }
}

TEST_F(KeyReuse, NonConsumersLeaveTheKeyFresh) {
  // fold_in, key_data and threefry_2x32 read a key without consuming it (JAX: fold_in is a
  // source only, key_data no sink); a consumed key may still be folded.
  Array key = jr::PRNGKey(8);
  jr::fold_in(key, 1);
  jr::key_data(key);
  jr::threefry_2x32(key, jnp::arange(4).astype(jx::uint32));
  EXPECT_FALSE(jr::key_reuse::is_consumed(key));
  EXPECT_NO_THROW(jr::normal(key));
  EXPECT_TRUE(jr::key_reuse::is_consumed(key));
  EXPECT_NO_THROW(jr::normal(jr::fold_in(key, 2)));
}

TEST_F(KeyReuse, FoldInStreamsFromOneRootAreFine) {
  // train_cnn's pattern: a per-step key folded from one root, then split inside the step.
  Array root = jr::PRNGKey(0);
  for (int step = 0; step < 4; ++step) {
    Array step_key = jr::fold_in(root, step);
    auto [init_key, dropout_key] = jr::split<2>(step_key);
    jr::normal(init_key, {2});
    jr::bernoulli(dropout_key, 0.9, {2});
  }
  // Folding the same data twice gives the same key (a new array): each may be consumed.
  EXPECT_NO_THROW(jr::normal(jr::fold_in(root, 0)));
}

TEST_F(KeyReuse, SplitAndUseEachSubkeyOnce) {
  Array key = jr::PRNGKey(9);
  for (int i = 0; i < 3; ++i) {
    Array subkey;
    std::tie(key, subkey) = jr::split<2>(key);
    jr::normal(subkey, {2});
  }
  Array keys = jr::split(key, 4);  // rows are distinct keys, not reuses
  for (int64_t i = 0; i < 4; ++i) EXPECT_NO_THROW(jr::uniform(keys(i)));
  auto [a, b] = jr::split<2>(jr::fold_in(key, 1));  // key itself was split above
  jr::normal(a);
  jr::normal(b);
  EXPECT_THROW(jr::normal(a), jx::KeyReuseError);
}

TEST_F(KeyReuse, AnotherHandleOrReshapeIsTheSameKey) {
  Array key = jr::PRNGKey(10);
  Array same = key;  // handles share the array
  jr::normal(key);
  EXPECT_THROW(jr::normal(same), jx::KeyReuseError);
  Array k2 = jr::PRNGKey(11);
  jr::normal(k2);
  Array view = lax::reshape(lax::reshape(k2, {1, 2}), {2});
  EXPECT_THROW(jr::normal(view), jx::KeyReuseError);
}

TEST_F(KeyReuse, DeadKeysAreForgotten) {
  const size_t before = jr::key_reuse::tracked_keys();
  for (int i = 0; i < 50; ++i) {
    Array key = jr::PRNGKey(i);  // often at the address of the previous, dead key
    EXPECT_NO_THROW(jr::normal(key));
  }
  EXPECT_EQ(jr::key_reuse::tracked_keys(), before);
}

TEST_F(KeyReuse, JitBodyReuseRaisesAtTraceTime) {
  auto bad = jx::jit([](const Array& key) {
    Array a = jr::normal(key, {2});
    return a + jr::uniform(key, {2});
  });
  const std::string m = reuse_message([&] { bad(jr::PRNGKey(0)); });
  EXPECT_TRUE(contains(m, "[uniform] debug_key_reuse: previously-consumed PRNG key (traced u32[2]) "
                          "(already consumed by normal)"))
      << m;
  EXPECT_TRUE(contains(m, "found while tracing: nothing has run")) << m;
  // make_jaxpr finds it too, without running anything.
  EXPECT_THROW(jx::make_jaxpr([](const Array& key) { return jr::bits(key) + jr::bits(key); })(jr::PRNGKey(0)),
               jx::KeyReuseError);

  auto good = jx::jit([](const Array& key) {
    auto [k1, k2] = jr::split<2>(key);
    return jr::normal(k1, {2}) + jr::uniform(k2, {2});
  });
  EXPECT_NO_THROW(good(jr::PRNGKey(1)));
  EXPECT_NO_THROW(good(jr::PRNGKey(2)));
}

TEST_F(KeyReuse, JitClosureKeyCountsAsConsumedAfterTracing) {
  Array key = jr::PRNGKey(12);
  auto f = jx::jit([key](const Array& x) { return x + jr::normal(key, {2}); });
  f(jnp::zeros({2}));
  EXPECT_THROW(jr::normal(key), jx::KeyReuseError);
}

TEST_F(KeyReuse, VmapOverKeys) {
  Array keys = jr::split(jr::PRNGKey(13), 4);
  Array out = jx::vmap([](const Array& k) { return jr::normal(k, {2}); })(keys);
  EXPECT_EQ(out.shape(), (jx::Shape{4, 2}));
  auto bad = jx::vmap([](const Array& k) { return jr::normal(k, {2}) + jr::normal(k, {2}); });
  EXPECT_TRUE(contains(reuse_message([&] { bad(jr::split(jr::PRNGKey(14), 4)); }),
                       "[normal] debug_key_reuse: previously-consumed PRNG key (traced"));
  auto good = jx::vmap([](const Array& k) {
    auto [a, b] = jr::split<2>(k);
    return jr::normal(a, {2}) + jr::normal(b, {2});
  });
  EXPECT_NO_THROW(good(jr::split(jr::PRNGKey(15), 4)));
}

TEST_F(KeyReuse, CondBranchesAreAlternatives) {
  // JAX's rule: a cond consumes what any branch consumes; both branches consuming the
  // same key is fine, a use after the cond is a reuse.
  auto both = jx::jit([](const Array& p, const Array& key) {
    return lax::cond(p > 0, [&] { return jr::uniform(key, {2}); }, [&] { return jr::normal(key, {2}); });
  });
  EXPECT_NO_THROW(both(Array(1.0f), jr::PRNGKey(16)));
  auto after = jx::jit([](const Array& p, const Array& key) {
    Array r = lax::cond(p > 0, [&] { return jr::uniform(key, {2}); }, [&] { return jnp::zeros({2}); });
    return r + jr::normal(key, {2});
  });
  EXPECT_THROW(after(Array(1.0f), jr::PRNGKey(17)), jx::KeyReuseError);
  auto within = jx::jit([](const Array& p, const Array& key) {
    return lax::cond(
        p > 0, [&] { return jr::uniform(key, {2}) + jr::normal(key, {2}); },
        [&] { return jnp::zeros({2}); });
  });
  EXPECT_THROW(within(Array(1.0f), jr::PRNGKey(18)), jx::KeyReuseError);
  // Eagerly, with a concrete key captured by both branches, the same holds.
  Array key = jr::PRNGKey(19);
  lax::cond(Array(true), [&] { return jr::uniform(key); }, [&] { return jr::normal(key); });
  EXPECT_THROW(jr::normal(key), jx::KeyReuseError);
}

TEST_F(KeyReuse, JitArgumentHooks) {
  // What jit's front end does with them: the mask of consumed inputs found while tracing,
  // then, per call, check and mark the caller's arguments (JAX marks a key consumed by a
  // jitted function as consumed).
  std::vector<bool> mask;
  jx::make_jaxpr([&](const Array& k1, const Array& k2, const Array& x) {
    Array y = jr::normal(k1, {2}) + x;
    jr::fold_in(k2, 3);
    mask = jr::key_reuse::consumed_inputs(std::vector<Array>{k1, k2, x});
    return y;
  })(jr::PRNGKey(0), jr::PRNGKey(1), jnp::zeros({2}));
  EXPECT_EQ(mask, (std::vector<bool>{true, false, false}));

  Array a = jr::PRNGKey(20), b = jr::PRNGKey(21);
  std::vector<Array> args{a, b, jnp::zeros({2})};
  jr::key_reuse::consume_arguments("jit 'f'", args, mask);
  EXPECT_THROW(jr::normal(a), jx::KeyReuseError);
  EXPECT_NO_THROW(jr::normal(b));
  const std::string m = reuse_message([&] { jr::key_reuse::consume_arguments("jit 'f'", args, mask); });
  EXPECT_TRUE(contains(m, "[jit 'f', argument 0] debug_key_reuse: previously-consumed PRNG key [0, 20] "
                          "(already consumed by jit 'f')"))
      << m;
  // Arguments are all checked before any is marked (JAX): one key passed for two
  // consumed parameters is consumed once per call.
  Array c = jr::PRNGKey(22);
  EXPECT_NO_THROW(jr::key_reuse::consume_arguments("jit 'g'", std::vector<Array>{c, c},
                                                   std::vector<bool>{true, true}));
}

TEST_F(KeyReuse, JitConsumesItsKeyArguments) {
  // JAX: calling a jitted function that consumes its key argument consumes the caller's key.
  auto sample = jx::jit([](const Array& key, const Array& x) { return x + jr::normal(key, {2}); },
                        {.name = "sample"});
  Array key = jr::PRNGKey(30);
  sample(key, jnp::zeros({2}));
  const std::string m = reuse_message([&] { sample(key, jnp::zeros({2})); });
  EXPECT_TRUE(contains(m, "[jit 'sample', argument 0] debug_key_reuse: previously-consumed PRNG key [0, 30] "
                          "(already consumed by jit 'sample')"))
      << m;
  EXPECT_THROW(jr::uniform(key), jx::KeyReuseError);
  // Fresh keys each call, as a training loop passes them, are fine.
  Array root = jr::PRNGKey(31);
  for (uint32_t step = 0; step < 3; ++step) EXPECT_NO_THROW(sample(jr::fold_in(root, step), jnp::zeros({2})));
  // A key the program only folds (fold_in does not consume) stays usable.
  auto fold = jx::jit([](const Array& key) { return jr::fold_in(key, 1); });
  Array kept = jr::PRNGKey(32);
  fold(kept);
  fold(kept);
  EXPECT_NO_THROW(jr::normal(kept));
  // Under an enclosing trace the same holds for the traced key.
  EXPECT_THROW(jx::make_jaxpr([&](const Array& k) { return sample(k, jnp::zeros({2})) + sample(k, jnp::zeros({2})); })(
                   jr::PRNGKey(33)),
               jx::KeyReuseError);
}

TEST(KeyReuseFlag, TurningItOnRetracesJittedFunctions) {
  // A function compiled with the check off is traced again, and checked, once it is on.
  auto bad = jx::jit([](const Array& key) { return jr::normal(key, {2}) + jr::uniform(key, {2}); });
  {
    jx::config::Scoped off(jx::config::debug_key_reuse, false);
    EXPECT_NO_THROW(bad(jr::PRNGKey(40)));
  }
  jx::config::Scoped on(jx::config::debug_key_reuse, true);
  EXPECT_THROW(bad(jr::PRNGKey(41)), jx::KeyReuseError);
}

}  // namespace
