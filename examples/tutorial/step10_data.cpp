// Step 10 of "Migrating from PyTorch to JAX": data loading. PyTorch's DataLoader shuffles
// with the global generator; in JAX the order comes from a PRNG key, like every other
// random choice, so it is reproducible and resumable: the same key gives the same batches.
// jx::data has both levels: batches(x, y, size, key) for one epoch over arrays, and a
// Grain-style pipeline (from_arrays(...).shuffle(key).batch(n)) with iterator states that
// a checkpoint can save.
//
//   build/examples/tutorial_step10_data
#include <filesystem>
#include <iostream>
#include <string>

#include "jx/jx.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace jd = jx::data;
using jx::Array;
using jx::Tree;

int main() {
  // Ten examples: x row i is [i, i], y[i] = i, so each batch's y shows which rows it holds.
  Array y = jnp::arange(10);
  Array x = jnp::stack({y, y}, 1).astype(jx::DType::Float32);

  std::cout << "== batches: one epoch, shuffled by a key ==\n";
  // PyTorch: loader = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True, drop_last=True)
  //          for xb, yb in loader: ...
  // JAX (hand-written): perm = jax.random.permutation(epoch_key, len(x))
  //                     for i in range(len(x) // 4): idx = perm[i*4:(i+1)*4]; xb, yb = x[idx], y[idx]
  Array key = jr::PRNGKey(0);
  for (int epoch = 0; epoch < 2; ++epoch) {
    // A new key per epoch gives a new order (PyTorch reshuffles from its global generator).
    Array epoch_key;
    std::tie(key, epoch_key) = jr::split<2>(key);
    std::cout << "epoch " << epoch << ": permutation(epoch_key, 10) = "
              << jr::permutation(epoch_key, Array(10)).repr() << "\n";
    for (auto [xb, yb] : jd::batches(x, y, 4, epoch_key, {.drop_last = true}))
      std::cout << "  batch y = " << yb.repr() << ", x.shape = " << xb.shape() << "\n";
  }
  // Without drop_last the last batch is smaller (and a jitted step would compile again).
  jd::Batches all = jd::batches(x, y, 4, jr::PRNGKey(7));
  std::cout << "without drop_last: " << all.size() << " batches, the last of " << all[all.size() - 1].second.shape(0)
            << " rows\n";
  // Evaluation: in order, no key.
  std::cout << "in order: first batch y = " << jd::batches(x, y, 4)[0].second.repr() << "\n";
  // The same key, the same order: a run can be reproduced exactly.
  bool same = jnp::array_equal(jd::batches(x, y, 4, jr::PRNGKey(7))[0].second, all[0].second).item<bool>();
  std::cout << "same key, same batches: " << (same ? "yes" : "no") << "\n";

  std::cout << "\n== A pipeline: from_arrays(...).shuffle(key).batch(4) ==\n";
  // Grain: grain.MapDataset.source(data).shuffle(seed=1).batch(4, drop_remainder=True)
  jd::Dataset ds = jd::from_arrays(Tree{{"x", x}, {"y", y}}).shuffle(jr::PRNGKey(1)).batch(4, true);
  std::cout << "pipeline: " << ds.str() << ", " << *ds.size() << " batches per epoch\n";
  jd::Iterator it = ds.iterator();
  while (it.epoch() < 2) {
    const int64_t epoch = it.epoch();
    // next() returns the epoch's batches, then std::nullopt once; the next epoch is reshuffled
    // (epoch e's order is permutation(fold_in(key, e), 10)).
    while (std::optional<Tree> batch = it.next())
      std::cout << "  epoch " << epoch << " batch y = " << (*batch)["y"].array().repr() << "\n";
  }
  // The iterator's position is a small pytree: save it with the model to resume mid-epoch
  // with the same batches (step 11).
  jd::Iterator resumable = ds.iterator();
  resumable.next();
  jd::IteratorState state = resumable.state();
  std::cout << "after one batch: iterator state epoch " << state.epoch.item<int64_t>() << ", position "
            << state.position.item<int64_t>() << "\n";
  jd::Iterator resumed = ds.iterator(state);
  std::cout << "resumed iterator's next batch y = " << (*resumed.next())["y"].array().repr()
            << ", the interrupted one's = " << (*resumable.next())["y"].array().repr() << "\n";

  std::cout << "\n== Fashion-MNIST, when it is installed ==\n";
  const std::string dir = jd::kFashionMnistDir;
  if (std::filesystem::exists(dir + "t10k-images-idx3-ubyte.gz")) {
    // The test split only (10000 images): enough to show the pipeline; the full example
    // trains on the training split.
    jd::Dataset fmnist = jd::from_idx(dir + "t10k-images-idx3-ubyte.gz", dir + "t10k-labels-idx1-ubyte.gz")
                             .shuffle(jr::PRNGKey(0))
                             .batch(128, true);
    Tree first = *fmnist.iterator().next();
    std::cout << "read " << dir << ": " << *fmnist.size() << " batches; image batch "
              << first["image"].array().dtype() << " " << first["image"].array().shape() << ", label batch "
              << first["label"].array().dtype() << " " << first["label"].array().shape() << "\n";
  } else {
    std::cout << "not installed in " << dir << " (Debian package dataset-fashion-mnist); skipped\n";
  }
  return 0;
}
