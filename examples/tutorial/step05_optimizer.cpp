// Step 5 of "Migrating from PyTorch to JAX": the optimizer. torch.optim holds references
// to the parameters and updates them in place (optimizer.step()); Optax is two pure
// functions: tx.init(params) gives the optimizer's state, tx.update(grads, state, params)
// gives the updates and the new state, and optax.apply_updates adds the updates. Parameters
// and states are pytrees, so they can be jitted, vmapped and checkpointed.
//
//   build/examples/tutorial_step05_optimizer
#include <cstdio>
#include <iostream>

#include "jx/jx.h"
#include "models.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace optim = jx::optim;
using jx::Array;
using jx::Tree;

void print_values(const char* name, const Array& a) {
  std::printf("%s = [", name);
  std::vector<float> v = a.to_vector<float>();
  // "+ 0.0f" prints a zero update as 0.000000, not -0.000000.
  for (size_t i = 0; i < v.size(); ++i) std::printf("%s%.6f", i ? ", " : "", v[i] + 0.0f);
  std::printf("]\n");
}

int main() {
  std::cout << "== init / update / apply_updates on a small tree ==\n";
  Tree params{{"w", jnp::array({1.0f, 2.0f, 3.0f})}, {"b", jnp::array({0.5f})}};
  Tree grads{{"w", jnp::array({0.5f, -2.0f, 0.0f})}, {"b", jnp::array({4.0f})}};

  // PyTorch: opt = torch.optim.Adam(model.parameters(), lr=1e-3)
  // JAX:     tx = optax.adam(1e-3); opt_state = tx.init(params)
  optim::GradientTransformation tx = optim::adam(1e-3);
  Tree opt_state = tx.init(params);
  // Optax's state: Adam's count and moments (mu, nu, shaped like params), then the empty
  // state of the learning-rate scaling.
  std::cout << "opt_state = " << opt_state.str() << "\n";

  // PyTorch: opt.zero_grad(); loss.backward(); opt.step()
  // JAX:     updates, opt_state = tx.update(grads, opt_state, params)
  //          params = optax.apply_updates(params, updates)
  auto [updates, new_state] = tx.update(grads, opt_state, params);
  Tree new_params = optim::apply_updates(params, updates);
  // Adam's first step moves each parameter by -lr * g / (|g| + eps): -lr * sign(g), or 0.
  print_values("adam updates['w']", updates["w"].array());
  print_values("new params['w']", new_params["w"].array());
  print_values("new params['b']", new_params["b"].array());
  std::cout << "count after one update = " << new_state[0]["count"].array().repr() << "\n";
  // The old params and state are untouched: nothing was updated in place.
  print_values("old params['w'] (unchanged)", params["w"].array());

  std::cout << "\n== SGD with momentum, as torch.optim.SGD(lr=0.1, momentum=0.9) ==\n";
  // JAX: tx = optax.sgd(0.1, momentum=0.9)
  auto sgd = optim::sgd(0.1, {.momentum = 0.9});
  Tree p = params, s = sgd.init(params);
  for (int i = 0; i < 2; ++i) {
    auto [u, s2] = sgd.update(grads, s, p);
    p = optim::apply_updates(p, u);
    s = s2;
  }
  // Two steps with the same gradient: w - 0.1 g - 0.1 (g + 0.9 g) = w - 0.29 g.
  print_values("sgd momentum, 2 steps: params['w']", p["w"].array());

  std::cout << "\n== Optimizers compose: chain, schedules ==\n";
  // JAX: tx = optax.chain(optax.clip_by_global_norm(1.0),
  //                       optax.adamw(optax.cosine_decay_schedule(1e-3, 1000), weight_decay=1e-4))
  auto schedule = optim::cosine_decay_schedule(1e-3, 1000);
  auto tx2 = optim::chain(optim::clip_by_global_norm(1.0),
                          optim::adamw(schedule, {.weight_decay = 1e-4}));
  std::cout << "chain(clip, adamw) state = " << tx2.init(params).str() << "\n";
  std::printf("cosine schedule: lr(0) = %.6f, lr(500) = %.6f, lr(1000) = %.6f\n",
              schedule(Array(0)).item<float>(), schedule(Array(500)).item<float>(),
              schedule(Array(1000)).item<float>());

  std::cout << "\n== On the tutorial's MLP ==\n";
  tutorial::MLP model;
  const Tree mlp_params = model.init(jr::PRNGKey(0), jnp::ones({1, 28, 28, 1}))["params"];
  Tree mlp_state = tx.init(mlp_params);
  int64_t state_numbers = 0;
  for (const Array& leaf : jx::tree::leaves(mlp_state)) state_numbers += leaf.size();
  std::cout << "Adam state leaves: " << jx::tree::leaves(mlp_state).size()
            << ", numbers: " << state_numbers << " (2 x 669706 moments + the count)\n";
  return 0;
}
