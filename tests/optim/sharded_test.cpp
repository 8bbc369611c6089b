// Weight-update sharding (optim/sharded.h) over 3 in-process devices: the sharded step
// against the replicated one (pmean of the gradients, then tx on every parameter) with a
// clip that triggers, so that a norm taken over one block instead of the whole gradient
// shows; the optimizer state cut into blocks and gathered back; the transformations that
// need whole parameters refused. The same across MPI processes: tests/distributed/mpi.
#include <gtest/gtest.h>

#include "jx/jx.h"
#include "testing/expect_error.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
namespace optim = jx::optim;
using jx::Array;
using jx::Tree;

class Sharded : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { jx::set_cpu_device_count(3); }
};

// Sizes that do not divide by 3 (15, 7, 1): every leaf is padded.
Tree params() {
  return Tree{{"w", jnp::arange(15).astype(jx::float32).reshape({5, 3}) * 0.1f - 0.7f},
              {"b", jnp::arange(7).astype(jx::float32) * -0.2f + 0.3f},
              {"s", jnp::full({}, 0.25f)}};
}

// Replica i's gradient: large enough that clip_by_global_norm(1.0) scales it.
Tree grads_of(const Tree& p, const Array& x) {
  return jx::tree::map([&](const Array& a) { return jnp::sin(a * x + 1.0f) * 3.0f + x; }, p);
}

// [3] per-replica inputs for step t.
Array inputs(int t) { return jnp::cos(jnp::arange(3).astype(jx::float32) * 1.7f + float(t)); }

double max_diff(const Tree& a, const Tree& b) {
  double m = 0;
  const auto la = jx::tree::leaves(a), lb = jx::tree::leaves(b);
  EXPECT_EQ(la.size(), lb.size());
  for (size_t i = 0; i < la.size(); ++i) {
    EXPECT_EQ(la[i].shape(), lb[i].shape()) << "leaf " << i;
    EXPECT_EQ(la[i].dtype(), lb[i].dtype()) << "leaf " << i;
    m = std::max(m, jnp::max(jnp::abs(la[i].astype(jx::float64) - lb[i].astype(jx::float64))).item<double>());
  }
  return m;
}

TEST_F(Sharded, StepsEqualTheReplicatedUpdate) {
  const optim::GradientTransformation tx =
      optim::chain({optim::clip_by_global_norm(1.0), optim::adamw(0.05, {.weight_decay = 0.1})});
  auto replicated = jx::pmap(
      [&](const Tree& p, const Tree& opt, const Array& x) {
        Tree g = lax::pmean(grads_of(p, x), "i");
        auto [updates, next] = tx.update(g, opt, p);
        return std::make_pair(optim::apply_updates(p, updates), next);
      },
      {.axis_name = "i", .in_axes = {jx::none, jx::none, 0}, .out_axes = jx::none});
  auto sharded = jx::pmap(
      [&](const Tree& p, const Tree& block, const Array& x) {
        return optim::sharded_apply_gradients(tx, grads_of(p, x), block, p, "i");
      },
      {.axis_name = "i", .in_axes = {jx::none, 0, 0}, .out_axes = {jx::none, 0}, .donate_argnums = {1}});
  auto gather = jx::pmap([&](const Tree& block, const Tree& p) { return optim::gather_opt_state(tx, block, p, "i"); },
                         {.axis_name = "i", .in_axes = {0, jx::none}, .out_axes = jx::none});

  Tree p = params(), q = params(), opt = tx.init(p);
  Tree blocks = optim::shard_update_state(tx, q, tx.init(q));
  EXPECT_EQ(blocks["params"]["w"].array().shape(), (jx::Shape{3, 5}));  // 15 elements in 3 rows of 5
  EXPECT_EQ(blocks["params"]["b"].array().shape(), (jx::Shape{3, 3}));  // 7, padded to 9
  for (int t = 0; t < 4; ++t) {
    std::tie(p, opt) = replicated(p, opt, inputs(t));
    std::tie(q, blocks) = sharded(q, blocks, inputs(t));
  }
  EXPECT_LT(max_diff(p, q), 2e-6);
  EXPECT_GT(max_diff(p, params()), 0.1);  // it trained
  const Tree gathered = gather(blocks, q);
  EXPECT_LT(max_diff(gathered, opt), 2e-6);
  EXPECT_EQ(jx::tree::leaves(gathered)[0].item<int32_t>(), 4);  // adam's count, kept whole
  // The padding of every block stays zero (b: 7 of 9; AdamW's decay of 0 is 0).
  EXPECT_EQ(blocks["params"]["b"].array()(2).to_vector<float>()[1], 0.0f);
  EXPECT_EQ(blocks["params"]["b"].array()(2).to_vector<float>()[2], 0.0f);
}

TEST_F(Sharded, StateCutIntoBlocksGathersBack) {
  const optim::GradientTransformation tx = optim::adam(0.1);
  Tree p = params();
  // A state with distinct values: the replicated update of one step.
  auto [u, opt] = tx.update(grads_of(p, jnp::full({}, 0.5f)), tx.init(p), p);
  const Tree blocks = optim::shard_update_state(tx, p, opt);
  // Row d of a block is elements [d * 5, d * 5 + 5) of the flattened leaf.
  const Array mu_w = opt[0]["mu"]["w"].array().reshape({15});  // Optax's ScaleByAdamState(count, mu, nu)
  EXPECT_EQ(blocks["opt"][0]["mu"]["w"].array()(1).to_vector<float>(), lax::slice(mu_w, {5}, {10}).to_vector<float>());
  EXPECT_EQ(blocks["opt"][0]["count"].array().shape(), (jx::Shape{3}));
  auto gather = jx::pmap([&](const Tree& block, const Tree& q) { return optim::gather_opt_state(tx, block, q, "i"); },
                         {.axis_name = "i", .in_axes = {0, jx::none}, .out_axes = jx::none});
  EXPECT_EQ(max_diff(gather(blocks, p), opt), 0.0);
  // One block of two parts, taken by hand.
  const Tree half = optim::shard_update_state(tx, p, opt, 2, 1);
  std::vector<float> b47 = lax::slice(p["b"].array(), {4}, {7}).to_vector<float>();
  b47.push_back(0.0f);  // b[4:7] and one zero of padding
  EXPECT_EQ(half["params"]["b"].array().to_vector<float>(), b47);
}

TEST_F(Sharded, WholeParameterTransformationsAreRefused) {
  Tree p = params();
  auto run = [&](const optim::GradientTransformation& tx) {
    Tree blocks = optim::shard_update_state(tx, p, tx.init(p));
    return jx::pmap(
        [&](const Tree& q, const Tree& block, const Array& x) {
          return optim::sharded_apply_gradients(tx, grads_of(q, x), block, q, "i");
        },
        {.axis_name = "i", .in_axes = {jx::none, 0, 0}, .out_axes = {jx::none, 0}})(p, blocks, inputs(0));
  };
  jx::testing::expect_error<jx::ValueError>([&] { run(optim::lamb(0.1)); },
                                            {"scale_by_trust_ratio", "needs whole parameters", "replicated update"});
  jx::testing::expect_error<jx::ValueError>([&] { run(optim::novograd(0.1)); }, {"scale_by_novograd"});
  jx::testing::expect_error<jx::ValueError>([&] { run(optim::centralize()); }, {"centralize"});
  // adafactor's factored moments have neither a parameter's shape nor a scalar's.
  jx::testing::expect_error<jx::ValueError>([&] { run(optim::adafactor()); },
                                            {"shard_update_state", "cannot be cut", "replicated update"});
  jx::testing::expect_error<jx::ValueError>([&] { optim::shard_update_state(optim::adam(0.1), p, Tree::dict()); },
                                            {"shard_update_state", "structure"});
  jx::testing::expect_error<jx::ValueError>(
      [&] { optim::shard_update_state(optim::adam(0.1), p, optim::adam(0.1).init(p), 2, 2); }, {"block 2 of 2"});
  // Blocks cut for 2 parts, run over 3 replicas.
  jx::testing::expect_error<jx::ValueError>(
      [&] {
        const optim::GradientTransformation tx = optim::sgd(0.1);
        Tree half = optim::shard_update_state(tx, p, tx.init(p), 2, 0);
        Tree three = jx::tree::map([](const Array& a) { return jnp::stack({a, a, a}); }, half);
        jx::pmap([&](const Tree& q, const Tree& block, const Array& x) {
          return optim::sharded_apply_gradients(tx, grads_of(q, x), block, q, "i");
        }, {.axis_name = "i", .in_axes = {jx::none, 0, 0}, .out_axes = {jx::none, 0}})(p, three, inputs(0));
      },
      {"has 3 replicas", "shard_update_state for 3 parts"});
}

}  // namespace
