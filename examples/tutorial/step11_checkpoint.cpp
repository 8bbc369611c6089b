// Step 11 of "Migrating from PyTorch to JAX": checkpointing. PyTorch saves state_dicts
// with torch.save; Orbax saves any pytree (params, optimizer state, the epoch) and restores
// it into a target with the same structure, checking every shape and dtype. A
// CheckpointManager numbers the saves, keeps the last few, and writes in the background.
// jx::ckpt is Orbax's API in C++ (imported as `ocp` in the tutorial's Python, too).
//
//   build/examples/tutorial_step11_checkpoint
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "models.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace optim = jx::optim;
namespace ocp = jx::ckpt;
namespace fs = std::filesystem;
using jx::Array;
using jx::Tree;

// What to save: a struct registered as a pytree. The Arrays are leaves; `epoch` is a
// static value, saved by value (Python: a dict {'params': ..., 'opt_state': ..., 'epoch': 3}).
struct Checkpoint {
  Tree params;
  Tree opt_state;
  int64_t epoch = 0;
};
JX_PYTREE(Checkpoint, params, opt_state, epoch)

bool trees_equal(const Tree& a, const Tree& b) {
  auto la = jx::tree::leaves(a), lb = jx::tree::leaves(b);
  if (la.size() != lb.size() || jx::tree::structure(a) != jx::tree::structure(b)) return false;
  for (size_t i = 0; i < la.size(); ++i)
    if (!jnp::array_equal(la[i], lb[i]).item<bool>()) return false;
  return true;
}

int main() {
  // A fresh directory for this run, removed at the end.
  const fs::path dir = fs::temp_directory_path() / ("jx_tutorial_step11_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);

  // Some state worth saving: the MLP after one Adam step.
  tutorial::MLP model;
  auto tx = optim::adam(1e-3);
  Tree params = model.init(jr::PRNGKey(0), jnp::ones({1, 28, 28, 1}))["params"];
  Tree opt_state = tx.init(params);
  Tree grads = jx::tree::map([](const Array& p) { return jnp::ones_like(p); }, params);
  auto [updates, new_opt_state] = tx.update(grads, opt_state, params);
  params = optim::apply_updates(params, updates);
  opt_state = new_opt_state;

  std::cout << "== Save and restore one checkpoint ==\n";
  // PyTorch: torch.save({'model': model.state_dict(), 'optimizer': opt.state_dict(),
  //                      'epoch': 3}, path)
  // Orbax:   ocp.StandardCheckpointer().save(path, {'params': params,
  //                                                 'opt_state': opt_state, 'epoch': 3})
  const std::string path = (dir / "epoch_3").string();
  ocp::save(path, Checkpoint{params, opt_state, 3});
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path)) files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  std::cout << "saved " << fs::path(path).filename().string() << "/:";
  for (const std::string& f : files) std::cout << " " << f;
  std::cout << "\n";

  // PyTorch: ckpt = torch.load(path); model.load_state_dict(ckpt['model']); ...
  // Orbax:   restored = ocp.StandardCheckpointer().restore(path, target)
  // The target gives the structure, shapes and dtypes (a freshly initialized state will
  // do; its values are not read).
  Tree fresh_params = model.init(jr::PRNGKey(1), jnp::ones({1, 28, 28, 1}))["params"];
  Checkpoint target{fresh_params, tx.init(fresh_params), 0};
  Checkpoint restored = ocp::restore(path, target);
  std::cout << "restored epoch = " << restored.epoch << "\n";
  std::cout << "restored params equal the saved ones: " << (trees_equal(restored.params, params) ? "yes" : "no")
            << "\n";
  std::cout << "restored opt_state equals the saved one: "
            << (trees_equal(restored.opt_state, opt_state) ? "yes" : "no") << "\n";
  // Without a target: a jx::Tree of dicts, as Orbax's restore(path) without one.
  Tree any = ocp::restore(path);
  std::cout << "restored without a target: epoch " << any["epoch"].static_value().repr() << ", "
            << jx::tree::leaves(any).size() << " arrays\n";

  // A target that does not match (here: a first layer of 256 units instead of 512) is an
  // error naming the key path, never a silent partial load.
  try {
    Tree wrong = params;
    wrong["Dense_0"]["kernel"] = jnp::zeros({784, 256});
    ocp::restore(path, Checkpoint{wrong, opt_state, 0});
  } catch (const jx::Error& e) {
    std::cout << "restore into a mismatched target: " << e.what() << "\n";
  }

  std::cout << "\n== A CheckpointManager: numbered steps, the last two kept ==\n";
  // Orbax: mngr = ocp.CheckpointManager(dir, options=ocp.CheckpointManagerOptions(max_to_keep=2))
  //        for epoch in range(1, 4): mngr.save(epoch, args=ocp.args.StandardSave(state))
  auto state = optim::TrainState::create([model](const Tree& v, const Array& in) { return model.apply(v, in); },
                                         params, tx);
  {
    ocp::CheckpointManager mngr((dir / "run").string(), {.max_to_keep = 2});
    for (int64_t epoch = 1; epoch <= 3; ++epoch) {
      state = state.apply_gradients(grads);      // stands for an epoch of training
      mngr.save(epoch, state, ocp::Metrics{{"loss", 1.0 / double(epoch)}});  // returns at once
    }
    mngr.wait_until_finished();  // the saves run in the background
    std::cout << "all_steps = [";
    for (int64_t s : mngr.all_steps()) std::cout << (s == mngr.all_steps().front() ? "" : ", ") << s;
    std::cout << "], latest_step = " << *mngr.latest_step() << "\n";

    // Resume: restore the latest step into a fresh TrainState (its functions, apply_fn and
    // tx, come from the target; they are not data).
    auto fresh = optim::TrainState::create([model](const Tree& v, const Array& in) { return model.apply(v, in); },
                                           fresh_params, tx);
    optim::TrainState resumed = mngr.restore(mngr.latest_step(), fresh);
    std::cout << "resumed TrainState: step " << resumed.step.item<int32_t>() << ", params equal: "
              << (trees_equal(resumed.params, state.params) ? "yes" : "no") << "\n";
  }

  fs::remove_all(dir);
  return 0;
}
