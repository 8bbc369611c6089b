// Step 2 of "Migrating from PyTorch to JAX": random numbers. PyTorch has a hidden global
// generator (torch.manual_seed); JAX has explicit keys that you split and pass around. A
// key is an ordinary uint32[2] array; the same key always gives the same numbers, and jx
// gives the same numbers as JAX, bit for bit (jax_threefry_partitionable=True, JAX's
// default since 0.5).
//
//   build/examples/tutorial_step02_prng
#include <iostream>

#include "jx/jx.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
using jx::Array;

int main() {
  std::cout << "== A key instead of a global seed ==\n";
  // PyTorch: torch.manual_seed(0)
  // JAX:     key = jax.random.PRNGKey(0)
  Array key = jr::PRNGKey(0);
  std::cout << "PRNGKey(0) = " << key.repr() << "\n";
  std::cout << "PRNGKey(42) = " << jr::PRNGKey(42).repr() << "\n";

  // The same key gives the same numbers, every time: sampling does not advance any state.
  // JAX: jax.random.uniform(key)
  std::cout << "uniform(PRNGKey(0)) = " << jr::uniform(key).repr() << "\n";
  std::cout << "uniform(PRNGKey(0)) again = " << jr::uniform(key).repr() << "\n";

  std::cout << "\n== split: new, independent keys ==\n";
  // PyTorch: x = torch.randn(3); y = torch.randn(3)     (the generator advances)
  // JAX:     key, subkey = jax.random.split(key)
  //          x = jax.random.normal(subkey, (3,))
  // Both C++ spellings work: structured bindings, or std::tie onto existing names.
  auto [key1, subkey1] = jr::split<2>(key);
  std::cout << "key, subkey = split(PRNGKey(0)):\n  key = " << key1.repr()
            << "\n  subkey = " << subkey1.repr() << "\n";
  Array subkey;
  std::tie(key, subkey) = jr::split<2>(key);  // rebinding, as Python's key, subkey = ...
  Array x = jr::normal(subkey, {3});
  std::cout << "x = normal(subkey, (3,)) = " << x.repr() << "\n";
  std::tie(key, subkey) = jr::split<2>(key);
  Array y = jr::normal(subkey, {3});
  std::cout << "y = normal(next subkey, (3,)) = " << y.repr() << "\n";

  // Many keys at once: an array of keys, one per row. JAX: jax.random.split(key, 4)
  Array keys = jr::split(jr::PRNGKey(0), 4);
  std::cout << "split(PRNGKey(0), 4).shape = " << keys.shape() << "\n";
  // fold_in derives a key from data (a step or worker index): JAX: jax.random.fold_in(key, 4)
  std::cout << "fold_in(PRNGKey(0), 4) = " << jr::fold_in(jr::PRNGKey(0), 4).repr() << "\n";
  std::cout << "split(PRNGKey(0), 5)[4] = " << jr::split(jr::PRNGKey(0), 5)(4).repr()
            << " (the same: split(k, n)[i] == fold_in(k, i))\n";

  std::cout << "\n== Samplers take a key, a shape and a dtype (float32 / int32 by default) ==\n";
  // PyTorch: torch.randint(0, 10, (5,))   JAX: jax.random.randint(key, (5,), 0, 10)
  auto [k1, k2, k3, k4] = jr::split<4>(jr::PRNGKey(42));
  std::cout << "randint(k1, (5,), 0, 10) = " << jr::randint(k1, {5}, 0, 10).repr() << "\n";
  // PyTorch: torch.rand(2, 3)   JAX: jax.random.uniform(k2, (2, 3))
  std::cout << "uniform(k2, (2, 3)).dtype = " << jr::uniform(k2, {2, 3}).dtype() << "\n";
  // PyTorch: torch.randperm(10)   JAX: jax.random.permutation(k3, 10)
  std::cout << "permutation(k3, 10) = " << jr::permutation(k3, Array(10)).repr() << "\n";
  // PyTorch: torch.bernoulli(torch.full((8,), 0.5))   JAX: jax.random.bernoulli(k4, 0.5, (8,))
  std::cout << "bernoulli(k4, 0.5, (8,)).dtype = " << jr::bernoulli(k4, 0.5, {8}).dtype() << "\n";

  // Reusing a key is the classic mistake: the "two" samples are the same numbers.
  Array a = jr::normal(k1, {3}), b = jr::normal(k1, {3});
  std::cout << "\nnormal(k1) == normal(k1) (key reused): "
            << (jnp::array_equal(a, b).item<bool>() ? "identical" : "different") << "\n";
  std::cout << "normal(k1) vs normal(k2): "
            << (jnp::array_equal(a, jr::normal(k2, {3})).item<bool>() ? "identical" : "different")
            << "\n";
  return 0;
}
