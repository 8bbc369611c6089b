// Step 9 of "Migrating from PyTorch to JAX": state that is not a parameter. PyTorch's
// BatchNorm updates its running_mean/running_var buffers in place during forward() in
// train mode. In Flax they are a separate collection, "batch_stats": apply reads them, and
// in training, with mutable=['batch_stats'], also returns their new values, which the
// train step carries forward next to the parameters.
//
//   build/examples/tutorial_step09_batchnorm
#include <cstdio>
#include <iostream>

#include "jx/jx.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace nn = jx::nn;
namespace optim = jx::optim;
using jx::Array;
using jx::Tree;

// Flax:
//   class Net(nn.Module):
//     @nn.compact
//     def __call__(self, x, train: bool):
//       x = nn.Dense(16)(x)
//       x = nn.BatchNorm(use_running_average=not train)(x)
//       return nn.Dense(2)(nn.relu(x))
struct Net : nn::Module<Net> {
  Array call(Array x, bool train) const {
    x = nn::Dense{.features = 16}(x);
    x = nn::BatchNorm{}(x, /*use_running_average=*/!train);
    return nn::Dense{.features = 2}(nn::relu(x));
  }
};

int main() {
  std::cout << "== One BatchNorm, by hand ==\n";
  // PyTorch: bn = nn.BatchNorm1d(2, momentum=0.1)  ==  Flax: nn.BatchNorm(momentum=0.9):
  // Flax's momentum is the weight of the old running value, PyTorch's that of the new batch.
  nn::BatchNorm bn{.momentum = 0.9};
  Array x = jnp::array({{1.0f, 2.0f}, {3.0f, 6.0f}});  // batch mean [2, 4], variance [1, 4]
  const Tree variables = bn.init(jr::PRNGKey(0), x, /*use_running_average=*/false);
  std::cout << "variables = " << variables.str() << "\n";

  // Training: normalize with the batch's statistics and return the updated running ones.
  // PyTorch: bn.train(); y = bn(x)                 (running stats updated in place)
  // Flax:    y, updates = bn.apply(variables, x, use_running_average=False,
  //                                mutable=['batch_stats'])
  auto [y, updates] = bn.apply(variables, x, false, nn::Mutable{"batch_stats"});
  std::cout << "train: y = " << jnp::round(y, 4).repr() << "\n";
  // ra = 0.9 * ra + 0.1 * batch: mean 0.9 * 0 + 0.1 * [2, 4], var 0.9 * 1 + 0.1 * [1, 4]
  // (the batch's biased variance, as Flax; PyTorch's running_var uses the unbiased one).
  std::cout << "updated mean = " << updates["batch_stats"]["mean"].array().repr() << "\n";
  std::cout << "updated var = " << updates["batch_stats"]["var"].array().repr() << "\n";
  // The old variables are untouched; the new ones are {params, updated batch_stats}.
  Tree new_variables{{"params", variables["params"]}, {"batch_stats", updates["batch_stats"]}};

  // Evaluation: normalize with the running statistics; nothing changes.
  // PyTorch: bn.eval(); y = bn(x)     Flax: y = bn.apply(new_variables, x, use_running_average=True)
  Array y_eval = bn.apply(new_variables, x, true);
  std::cout << "eval: y = (x - mean) / sqrt(var + 1e-5) = " << jnp::round(y_eval, 4).repr() << "\n";

  // Training without mutable=['batch_stats'] is an error, as in Flax.
  try {
    bn.apply(variables, x, false);
  } catch (const jx::Error& e) {
    std::cout << "\napply in training without nn::Mutable{\"batch_stats\"}: " << e.what() << "\n";
  }

  std::cout << "\n== Training a model with batch_stats: TrainState plus the collection ==\n";
  Net model;
  auto [kx, ky, kinit] = jr::split<3>(jr::PRNGKey(1));
  Array inputs = jr::normal(kx, {64, 8}) * 3.0 + 1.0;
  Array targets = jnp::stack({jnp::sum(inputs, 1), inputs(jx::slice(), 0) - inputs(jx::slice(), 1)}, 1);
  const Tree init_vars = model.init(kinit, inputs, false);
  std::cout << "collections: params " << jx::tree::leaves(init_vars["params"]).size() << " leaves, batch_stats "
            << init_vars["batch_stats"].str() << "\n";

  // Flax's recipe: class TrainState(train_state.TrainState): batch_stats: Any
  auto apply = [model](const Tree& v, const Array& in, bool train) -> std::pair<Array, Tree> {
    if (!train) return {model.apply(v, in, false), v["batch_stats"]};
    auto [out, mutated] = model.apply(v, in, true, nn::Mutable{"batch_stats"});
    return {out, mutated["batch_stats"]};
  };
  auto state = optim::TrainStateWithBatchStats::create(apply, init_vars["params"], optim::adam(1e-2),
                                                       init_vars["batch_stats"]);

  // JAX:
  //   def train_step(state, x, y):
  //     def loss_fn(params):
  //       out, updates = state.apply_fn({'params': params, 'batch_stats': state.batch_stats},
  //                                     x, train=True, mutable=['batch_stats'])
  //       return ((out - y) ** 2).mean(), updates
  //     (loss, updates), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
  //     state = state.apply_gradients(grads=grads, batch_stats=updates['batch_stats'])
  //     return state, loss
  auto train_step = jx::jit([](const optim::TrainStateWithBatchStats& s, const Array& in, const Array& target) {
    auto loss_fn = [&](const Tree& params) {
      auto [out, stats] = s.apply_fn(Tree{{"params", params}, {"batch_stats", s.batch_stats}}, in, true);
      return std::make_pair(jnp::mean(jnp::square(out - target)), stats);
    };
    auto [loss, stats, grads] = jx::value_and_grad(loss_fn, jx::has_aux)(s.params);
    return std::make_pair(s.apply_gradients(grads, stats), loss);
  });

  float first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    auto [next, loss] = train_step(state, inputs, targets);
    state = next;
    if (step == 0) first = loss.item<float>();
    last = loss.item<float>();
  }
  std::printf("30 steps: first loss %.4f, last loss %.4f: loss %s\n", first, last,
              last < first ? "decreased" : "did NOT decrease");
  // The running mean moved towards the batch mean of the Dense layer's outputs.
  Array ra_mean = state.batch_stats["BatchNorm_0"]["mean"].array();
  std::cout << "running mean changed from its initial zeros: "
            << (jnp::any(ra_mean != 0.0).item<bool>() ? "yes" : "no") << "\n";

  // Evaluation uses the running statistics, so one example alone gets a sensible output
  // (with batch statistics, a batch of one would normalize to zero).
  auto [out_eval, stats_eval] = state.apply_fn(state.variables(), inputs(jx::slice(0, 1)), false);
  std::cout << "eval on one example: output shape " << out_eval.shape() << ", batch_stats unchanged: "
            << (jnp::array_equal(stats_eval["BatchNorm_0"]["mean"].array(), ra_mean).item<bool>() ? "yes" : "no")
            << "\n";
  return 0;
}
