// The tutorial's resume, end to end: a shuffled, augmented, prefetched pipeline feeds an
// Adam-trained model; mid-epoch, the TrainState and the iterator's state go into one
// CheckpointManager step. A fresh pipeline and manager restored from it see exactly the
// batches the uninterrupted run saw and end with the same parameters, bit for bit.
#include "checkpoint_testing.h"

namespace {

namespace ocp = jx::ckpt;
namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace optim = jx::optim;
using ckpt_testing::bytes_of;
using ckpt_testing::TempDir;
using jx::Array;
using jx::Tree;

jx::data::Dataset pipeline() {
  auto [k_data, k_shuffle, k_crop] = jr::split<3>(jr::PRNGKey(42));
  Array images = jr::uniform(k_data, {50, 6, 6, 1});
  Array labels = jnp::arange(50).astype(jx::DType::Int32) % 3;
  return jx::data::from_arrays(Tree{{"image", images}, {"label", labels}})
      .shuffle(k_shuffle)
      .random_crop(k_crop, {4, 4}, 1)
      .batch(8, /*drop_remainder=*/true)
      .prefetch(2);
}

optim::TrainState fresh_state() {
  Tree params{{"w", jnp::zeros({16, 3})}, {"b", jnp::zeros({3})}};
  auto apply = [](const Tree& v, const Array& x) {
    return jnp::matmul(x.reshape({x.shape(0), -1}), v["params"]["w"].array()) + v["params"]["b"].array();
  };
  return optim::TrainState::create(apply, params, optim::adam(0.05));
}

optim::TrainState train_step(const optim::TrainState& s, const Tree& batch) {
  auto grads = jx::grad([&](const Tree& p) {
    Array logits = s.apply_fn(Tree{{"params", p}}, batch["image"].array());
    return jnp::mean(optim::softmax_cross_entropy_with_integer_labels(logits, batch["label"].array()));
  })(s.params);
  return s.apply_gradients(grads);
}

TEST(CheckpointResume, MidEpochResumeSeesTheSameBatchesAndEndsTheSame) {
  const int epochs = 3, stop_after = 8;  // 6 batches per epoch: stop inside epoch 1
  // The uninterrupted run.
  std::vector<std::string> seen;
  auto state = fresh_state();
  {
    jx::data::Iterator it = pipeline().iterator();
    while (it.epoch() < epochs)
      while (auto batch = it.next()) {
        seen.push_back(bytes_of((*batch)["image"].array()));
        state = train_step(state, *batch);
      }
  }
  // The interrupted run: stop after `stop_after` batches, checkpoint, throw everything away.
  TempDir dir;
  {
    ocp::CheckpointManager mngr(dir.path());
    auto s = fresh_state();
    jx::data::Iterator it = pipeline().iterator();
    for (int n = 0; n < stop_after;) {
      auto batch = it.next();
      if (!batch) continue;
      s = train_step(s, *batch);
      ++n;
    }
    mngr.save_items(stop_after, {{"state", Tree::from(s)}, {"data", Tree::from(it.state())}});
  }
  // The resumed run.
  ocp::CheckpointManager mngr(dir.path());
  ASSERT_EQ(mngr.latest_step(), stop_after);
  auto s = mngr.restore_item(std::nullopt, "state", fresh_state());
  jx::data::Dataset ds = pipeline();
  auto data_state = mngr.restore_item(std::nullopt, "data", ds.iterator().state());
  jx::data::Iterator it = ds.iterator(data_state);
  size_t k = stop_after;
  while (it.epoch() < epochs)
    while (auto batch = it.next()) {
      ASSERT_LT(k, seen.size());
      EXPECT_EQ(bytes_of((*batch)["image"].array()), seen[k]) << "batch " << k;
      s = train_step(s, *batch);
      ++k;
    }
  EXPECT_EQ(k, seen.size());
  EXPECT_EQ(bytes_of(s.params["w"].array()), bytes_of(state.params["w"].array()));
  EXPECT_EQ(bytes_of(s.params["b"].array()), bytes_of(state.params["b"].array()));
  EXPECT_EQ(s.step.item<int32_t>(), state.step.item<int32_t>());
}

}  // namespace
