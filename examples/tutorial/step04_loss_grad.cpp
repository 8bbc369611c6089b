// Step 4 of "Migrating from PyTorch to JAX": the loss and its gradient. PyTorch records
// the forward pass and loss.backward() fills p.grad in place; JAX transforms the loss
// *function*: jax.value_and_grad(loss_fn) is a new function returning the loss and the
// gradients, as a pytree shaped like the parameters. Nothing accumulates, so there is no
// zero_grad().
//
//   build/examples/tutorial_step04_loss_grad
#include <cmath>
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

// PyTorch:
//   logits = model(x)
//   loss = F.cross_entropy(logits, y)
// JAX:
//   def loss_fn(params, x, y):
//     logits = model.apply({'params': params}, x)
//     return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
Array loss_fn(const Tree& params, const Array& x, const Array& y) {
  Array logits = model.apply(Tree{{"params", params}}, x);
  return optim::softmax_cross_entropy_with_integer_labels(logits, y).mean();
}

void print_values(const char* name, const Array& a) {
  std::printf("%s = [", name);
  std::vector<float> v = a.to_vector<float>();
  for (size_t i = 0; i < v.size(); ++i) std::printf("%s%.4f", i ? ", " : "", v[i]);
  std::printf("]\n");
}

int main() {
  std::cout << "== grad of a plain function ==\n";
  // PyTorch: x = torch.tensor([1., 2., 3.], requires_grad=True); (x ** 2).sum().backward(); x.grad
  // JAX:     jax.grad(lambda x: (x ** 2).sum())(jnp.array([1., 2., 3.]))
  auto f = [](const Array& x) { return jnp::sum(x * x); };
  std::cout << "grad(sum(x^2)) at [1, 2, 3] = " << jx::grad(f)(jnp::array({1.0f, 2.0f, 3.0f})).repr() << "\n";
  // Several arguments: JAX's argnums=(0, 1) is grad<0, 1>, returning a tuple.
  auto g = [](const Array& a, const Array& b) { return jnp::sum(a * b); };
  auto [da, db] = jx::grad<0, 1>(g)(jnp::array({1.0f, 2.0f}), jnp::array({3.0f, 4.0f}));
  std::cout << "grad<0, 1>(sum(a * b)) at a = [1, 2], b = [3, 4]: da = " << da.repr()
            << ", db = " << db.repr() << "\n";

  std::cout << "\n== value_and_grad of the model's loss ==\n";
  const Tree params = model.init(jr::PRNGKey(0), jnp::ones({1, 28, 28, 1}))["params"];
  Array x = jr::uniform(jr::PRNGKey(1), {8, 28, 28, 1});
  Array y = jnp::array<int32_t>({0, 1, 2, 3, 0, 1, 2, 3});

  // PyTorch: loss = loss_fn(model(x), y); loss.backward(); grads = [p.grad for p in ...]
  // JAX:     loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
  auto [loss, grads] = jx::value_and_grad(loss_fn)(params, x, y);
  std::printf("loss at init = %.4f (about log(10) = %.4f for 10 classes)\n", loss.item<float>(),
              std::log(10.0));
  std::cout << "grads have the params' structure: "
            << (jx::tree::structure(grads) == jx::tree::structure(params) ? "yes" : "no") << "\n";
  std::cout << "grads['Dense_2']['kernel'].shape = " << grads["Dense_2"]["kernel"].array().shape() << "\n";

  // A value we can check by hand: with every parameter zero the logits are zero, the
  // softmax is 0.1 everywhere, the loss is log(10), and the last bias's gradient is
  // mean(softmax - one_hot(y)) = 0.1 - (fraction of labels equal to the class).
  Tree zeros = jx::tree::map([](const Array& p) { return jnp::zeros_like(p); }, params);
  auto [zero_loss, zero_grads] = jx::value_and_grad(loss_fn)(zeros, x, y);
  std::printf("zero params: loss = %.6f, log(10) = %.6f\n", zero_loss.item<float>(), std::log(10.0));
  print_values("zero params: grad of Dense_2 bias", zero_grads["Dense_2"]["bias"].array());

  // Check one gradient entry against a central difference (PyTorch: torch.autograd.gradcheck).
  const double eps = 1e-2;
  auto loss_at = [&](double delta) {
    Tree p = params;
    p["Dense_2"]["bias"] = p["Dense_2"]["bias"].array().at(0).add(delta);
    return double(loss_fn(p, x, y).item<float>());
  };
  double numeric = (loss_at(eps) - loss_at(-eps)) / (2 * eps);
  double analytic = grads["Dense_2"]["bias"].array()(0).item<float>();
  std::printf("d loss / d bias[0]: grad %.5f, central difference %.5f: %s\n", analytic, numeric,
              std::abs(analytic - numeric) < 1e-3 ? "agree" : "DISAGREE");

  std::cout << "\n== Returning more than the loss: has_aux ==\n";
  // JAX: def loss_fn(params, x, y): ...; return loss, logits
  //      (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, x, y)
  // jx decides from the return type: a pair (value, aux) is differentiated in its first
  // element, and the result is the flat triple (value, aux, grads).
  auto loss_and_logits = [](const Tree& p, const Array& xb, const Array& yb) {
    Array logits = model.apply(Tree{{"params", p}}, xb);
    Array l = optim::softmax_cross_entropy_with_integer_labels(logits, yb).mean();
    return std::make_pair(l, logits);
  };
  auto [loss2, logits, grads2] = jx::value_and_grad(loss_and_logits, jx::has_aux)(params, x, y);
  std::cout << "aux logits.shape = " << logits.shape() << ", same loss: "
            << (loss2.item<float>() == loss.item<float>() ? "yes" : "no") << "\n";

  // Gradients need floating inputs, as in JAX (PyTorch: "only Tensors of floating point
  // dtype can require gradients").
  try {
    jx::grad(f)(jnp::array<int32_t>({1, 2, 3}));
  } catch (const jx::Error& e) {
    std::cout << "\ngrad with an int32 input: " << e.what() << "\n";
  }
  return 0;
}
