// Step 8 of "Migrating from PyTorch to JAX": vmap and per-example gradients. Write a
// function for ONE example; jax.vmap maps it over a batch axis, without a Python loop and
// without rewriting it for batches (PyTorch: torch.func.vmap). Composed with grad, it gives
// the gradient of every example separately, which backward() cannot (it sums them).
//
//   build/examples/tutorial_step08_vmap
#include <cstdio>
#include <iostream>

#include "jx/jx.h"
#include "models.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace optim = jx::optim;
using jx::Array;
using jx::Tree;

const tutorial::MLP model;

// The loss of ONE example: x [28, 28, 1], y a scalar label. The model takes batches, so
// the example becomes a batch of one (x[None], as in the Python).
Array example_loss(const Tree& params, const Array& x, const Array& y) {
  Array logits = model.apply(Tree{{"params", params}}, x(jx::newaxis));
  return optim::softmax_cross_entropy_with_integer_labels(logits, y(jx::newaxis)).mean();
}

// The mean loss of a batch, for comparison.
Array batch_loss(const Tree& params, const Array& xs, const Array& ys) {
  Array logits = model.apply(Tree{{"params", params}}, xs);
  return optim::softmax_cross_entropy_with_integer_labels(logits, ys).mean();
}

int main() {
  std::cout << "== vmap: a function of one example, mapped over a batch ==\n";
  // JAX: jax.vmap(jnp.dot, in_axes=(0, None))(m, w)   -- each row of m dotted with w
  Array m = jnp::array({{1.0f, 2.0f}, {3.0f, 4.0f}, {5.0f, 6.0f}});
  Array w = jnp::array({1.0f, 10.0f});
  auto row_dot = jx::vmap([](const Array& row, const Array& v) { return jnp::dot(row, v); },
                          {.in_axes = {0, jx::none}});
  std::cout << "vmap(dot, in_axes=(0, None))(m, w) = " << row_dot(m, w).repr() << "\n";
  // in_axes picks the mapped axis of each argument, out_axes where the batch goes.
  auto col_scale = jx::vmap([](const Array& col, const Array& s) { return col * s; },
                            {.in_axes = {1, 0}, .out_axes = 1});
  std::cout << "vmap(col * s, in_axes=(1, 0), out_axes=1)(m, [1, 100]) = "
            << col_scale(m, jnp::array({1.0f, 100.0f})).repr() << "\n";

  std::cout << "\n== Per-example gradients: vmap(grad(loss)) ==\n";
  const Tree params = model.init(jr::PRNGKey(0), jnp::ones({1, 28, 28, 1}))["params"];
  auto [kx, ky] = jr::split<2>(jr::PRNGKey(1));
  Array xs = jr::normal(kx, {8, 28, 28, 1});
  Array ys = jr::randint(ky, {8}, 0, 10);

  // PyTorch (torch.func): vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)
  // JAX:                  jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(params, xs, ys)
  auto per_example_grads = jx::vmap(jx::grad(example_loss), {.in_axes = {jx::none, 0, 0}});
  Tree grads = per_example_grads(params, xs, ys);
  std::cout << "per-example grads['Dense_0']['kernel'].shape = " << grads["Dense_0"]["kernel"].array().shape()
            << " (8 examples x the kernel's shape)\n";
  std::cout << "per-example grads['Dense_2']['bias'].shape = " << grads["Dense_2"]["bias"].array().shape()
            << "\n";

  // Each example's gradient norm (for example to clip them one by one, as DP-SGD does).
  auto norm = jx::vmap([](const Tree& g) { return optim::global_norm(g); });
  Array norms = norm(grads);
  std::cout << "per-example gradient norms: shape " << norms.shape() << ", all positive: "
            << (jnp::all(norms > 0.0).item<bool>() ? "yes" : "no") << "\n";

  // Their mean is the gradient of the mean loss, which is all backward() gives.
  Tree batch_grads = jx::grad(batch_loss)(params, xs, ys);
  bool agree = true;
  auto mean_leaves = jx::tree::leaves(jx::tree::map([](const Array& g) { return jnp::mean(g, 0); }, grads));
  auto batch_leaves = jx::tree::leaves(batch_grads);
  for (size_t i = 0; i < mean_leaves.size(); ++i)
    agree = agree && jnp::allclose(mean_leaves[i], batch_leaves[i], 1e-4, 1e-6).item<bool>();
  std::cout << "mean of per-example gradients == gradient of the mean loss: " << (agree ? "yes" : "NO") << "\n";

  // The loop a PyTorch user would write gives the same per-example gradient.
  Tree third = jx::grad(example_loss)(params, xs(3), ys(3));
  bool same = jnp::allclose(third["Dense_0"]["kernel"].array(), grads["Dense_0"]["kernel"].array()(3), 1e-5, 1e-7)
                  .item<bool>();
  std::cout << "vmapped gradient of example 3 == grad on example 3 alone: " << (same ? "yes" : "NO") << "\n";

  // vmap composes with jit (and the other way round).
  auto fast = jx::jit(per_example_grads);
  Tree jitted = fast(params, xs, ys);
  bool jit_same = jnp::allclose(jitted["Dense_2"]["kernel"].array(), grads["Dense_2"]["kernel"].array(), 1e-5, 1e-6)
                      .item<bool>();
  std::cout << "jit(vmap(grad(loss))) gives the same: " << (jit_same ? "yes" : "NO") << "\n";

  // Mismatched batch sizes are an error naming the arguments (JAX: ValueError).
  try {
    per_example_grads(params, xs, ys(jx::slice(0, 5)));
  } catch (const jx::Error& e) {
    std::cout << "\nvmap over 8 images but 5 labels: " << e.what() << "\n";
  }
  return 0;
}
