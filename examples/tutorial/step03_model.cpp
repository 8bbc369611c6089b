// Step 3 of "Migrating from PyTorch to JAX": the model. A PyTorch nn.Module owns its
// weights; a Flax module (and a jx::nn module) is only a description. model.init(key, x)
// creates the weights as a separate pytree, {"params": {...}}, and model.apply(variables, x)
// runs the model on them: a pure function, which is what grad, jit and vmap need.
//
//   build/examples/tutorial_step03_model
#include <iostream>

#include "jx/jx.h"
#include "models.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace nn = jx::nn;
using jx::Array;
using jx::Tree;

int main() {
  // PyTorch: model = MLP()                  (weights created now, from the global seed)
  // Flax:    model = MLP()                  (no weights yet)
  tutorial::MLP model;

  // Flax: variables = model.init(jax.random.PRNGKey(0), jnp.ones((1, 28, 28, 1)))
  // The example input only fixes the shapes (Dense layers infer their input size).
  Array x = jnp::ones({1, 28, 28, 1});
  const Tree variables = model.init(jr::PRNGKey(0), x);

  // PyTorch: for name, p in model.named_parameters(): print(name, p.shape)
  // JAX:     jax.tree_util.tree_map_with_path(lambda path, p: print(keystr(path), p.shape), params)
  std::cout << "== The parameters: a pytree, not attributes of the model ==\n";
  int64_t count = 0;
  for (const auto& [path, leaf] : jx::tree::leaves_with_path(variables)) {
    std::cout << path.str() << ": " << leaf.shape() << " " << leaf.dtype() << "\n";
    count += leaf.size();
  }
  // PyTorch: sum(p.numel() for p in model.parameters())
  std::cout << "parameter count: " << count << "\n";
  // The shapes are Flax's: a Dense kernel is (in, out), PyTorch's Linear weight (out, in).
  std::cout << "Dense_0 kernel is (in, out): "
            << variables["params"]["Dense_0"]["kernel"].array().shape() << "\n";

  std::cout << "\n== The forward pass: apply(variables, x) ==\n";
  // PyTorch: logits = model(images)
  // Flax:    logits = model.apply(variables, images)
  Array images = jr::uniform(jr::PRNGKey(1), {8, 28, 28, 1});
  Array logits = model.apply(variables, images);
  std::cout << "logits.shape = " << logits.shape() << ", dtype = " << logits.dtype() << "\n";

  // The same key gives the same weights (and the same weights as Flax for that key);
  // another key, other weights.
  Tree again = model.init(jr::PRNGKey(0), x);
  Tree other = model.init(jr::PRNGKey(1), x);
  auto same = [](const Tree& a, const Tree& b) {
    return jnp::array_equal(a["params"]["Dense_0"]["kernel"].array(),
                            b["params"]["Dense_0"]["kernel"].array())
        .item<bool>();
  };
  std::cout << "init with the same key again: " << (same(variables, again) ? "same weights" : "different")
            << "\n";
  std::cout << "init with another key: " << (same(variables, other) ? "same weights" : "different weights")
            << "\n";

  // Flax: print(model.tabulate(jax.random.PRNGKey(0), x))  (PyTorch: print(model), torchinfo)
  std::cout << "\n" << nn::tabulate(model, jr::PRNGKey(0), x);

  // The CNN of the full example, initialized the same way; its `deterministic` flag is
  // PyTorch's model.eval() (dropout off).
  tutorial::CNN cnn;
  const Tree cnn_vars = cnn.init(jr::PRNGKey(0), x, /*deterministic=*/true);
  std::cout << "\nCNN params: " << jx::tree::map([](const Array& a) { return a.shape(); },
                                                 cnn_vars["params"])
            << "\n";
  std::cout << "CNN logits.shape = " << cnn.apply(cnn_vars, images, true).shape() << "\n";

  // A mistake is a typed error naming the module and the fix: here the input has another
  // width than at init.
  try {
    model.apply(variables, jnp::ones({8, 100}));
  } catch (const jx::Error& e) {
    std::cout << "\napply on a wrong input width: " << e.what() << "\n";
  }
  return 0;
}
