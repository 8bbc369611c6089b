// Step 1 of "Migrating from PyTorch to JAX": arrays instead of tensors. Creation, default
// dtypes, broadcasting, indexing, and the big difference: arrays are immutable, so updates
// go through .at[...] and return a new array.
//
// Each block shows the PyTorch line, the JAX line, then the jx line that replaces them.
//
//   build/examples/tutorial_step01_arrays
#include <iostream>

#include "jx/jx.h"

namespace jnp = jx::numpy;
using jx::Array;

int main() {
  std::cout << "== Arrays are like torch tensors ==\n";
  // PyTorch: a = torch.tensor([[1., 2.], [3., 4.]])
  // JAX:     a = jnp.array([[1., 2.], [3., 4.]])
  Array a = jnp::array({{1.0f, 2.0f}, {3.0f, 4.0f}});
  std::cout << "a = " << a.repr() << "\n";
  std::cout << "a.shape = " << a.shape() << ", a.dtype = " << a.dtype() << "\n";

  // Default dtypes are 32-bit, as in JAX (PyTorch: torch.arange(6) is int64).
  // JAX: jnp.arange(6).reshape(2, 3), jnp.linspace(0, 1, 5)
  Array r = jnp::arange(6).reshape({2, 3});
  std::cout << "jnp.arange(6).reshape(2, 3) = " << r.repr() << "\n";
  Array l = jnp::linspace(0.0, 1.0, 5);
  std::cout << "jnp.linspace(0, 1, 5) = " << l.repr() << "\n";

  // C++ scalars are weakly typed, like Python scalars: a * 2.0 stays float32.
  std::cout << "a * 2.0 -> " << (a * 2.0).repr() << "\n";
  std::cout << "jnp.int8 array + 1 stays int8: "
            << (jnp::array<int8_t>({1, 2, 3}) + 1).repr() << "\n";

  std::cout << "\n== Broadcasting and math, as NumPy and PyTorch ==\n";
  Array col = jnp::arange(3.0).reshape({3, 1});
  Array row = jnp::arange(4.0);
  std::cout << "col + row = " << (col + row).repr() << "\n";
  // PyTorch: a @ a.T   JAX: a @ a.T   jx: jnp::matmul(a, a.T())  (C++ has no @)
  std::cout << "a @ a.T = " << jnp::matmul(a, a.T()).repr() << "\n";
  // PyTorch: a.sum(dim=0), a.mean()   JAX: a.sum(axis=0), a.mean()
  std::cout << "sum over axis 0 = " << jnp::sum(a, 0).repr() << ", mean = "
            << jnp::mean(a).repr() << "\n";

  std::cout << "\n== No in-place updates: .at[] returns a new array ==\n";
  // PyTorch: x = torch.zeros(3, 4); x[0, 0] = 5          (mutates x)
  // JAX:     x = jnp.zeros((3, 4)); y = x.at[0, 0].set(5) (x is unchanged)
  // jx:      x(0, 0) = 5 does not compile ("jx::Array is immutable ..."); write:
  Array x = jnp::zeros({3, 4});
  Array y = x.at(0, 0).set(5);
  std::cout << "x = " << x.repr() << "\n";
  std::cout << "y = x.at[0, 0].set(5) = " << y.repr() << "\n";
  // PyTorch: y[1:3] += 1    JAX: y = y.at[1:3].add(1)
  y = y.at(jx::slice(1, 3)).add(1.0);
  std::cout << "y.at[1:3].add(1) = " << y.repr() << "\n";
  // .at also has multiply, divide, power, min, max and get.
  std::cout << "y.at[:, 0].multiply(10)[:, 0] = "
            << y.at(jx::slice(), 0).multiply(10.0)(jx::slice(), 0).repr() << "\n";
  // PyTorch: x += 1 changes x for every name that refers to it; in jx (and JAX) += only
  // rebinds the name: `alias` still sees the old array.
  Array alias = x;
  x += 1.0;
  std::cout << "after x += 1: x[0, 0] = " << x(0, 0).item<float>()
            << ", alias[0, 0] = " << alias(0, 0).item<float>() << "\n";

  // Updates at repeated indices accumulate (PyTorch: index_put_ with accumulate=True).
  Array idx = jnp::array<int32_t>({0, 0, 2});
  std::cout << "duplicate indices accumulate: jnp.zeros(4).at[[0, 0, 2]].add(1) = "
            << jnp::zeros({4}).at(idx).add(1).repr() << "\n";

  std::cout << "\n== Out-of-bounds indices do not raise ==\n";
  // PyTorch raises IndexError; JAX (and jx) clamp reads and drop writes.
  std::cout << "out-of-bounds reads clamp: jnp.arange(5.)[10] = " << jnp::arange(5.0)(10).repr()
            << "\n";
  std::cout << "out-of-bounds writes are dropped: jnp.arange(5.).at[10].set(-1) = "
            << jnp::arange(5.0).at(10).set(-1.0).repr() << "\n";
  std::cout << "jnp.arange(5.).at[20].get(mode='fill', fill_value=-1) = "
            << jnp::arange(5.0).at(20).get({.mode = jx::IndexMode::fill, .fill_value = -1}).repr()
            << "\n";

  std::cout << "\n== Indexing, as NumPy ==\n";
  // JAX: m[1, :, ::2], m[..., -1], m[None, 0]
  Array m = jnp::arange(24).reshape({2, 3, 4});
  std::cout << "m[1, :, ::2] = " << m(1, jx::slice(), jx::slice(jx::none, jx::none, 2)).repr()
            << "\n";
  std::cout << "m[..., -1] = " << m(jx::ellipsis, -1).repr() << "\n";
  std::cout << "m[None, 0].shape = " << m(jx::newaxis, 0).shape() << "\n";

  std::cout << "\n== Errors are typed and say how to fix them ==\n";
  try {
    Array bad = jnp::ones({2, 3}) + jnp::ones({4});
    std::cout << bad << "\n";
  } catch (const jx::ShapeError& e) {
    std::cout << "jx::ShapeError: " << e.what() << "\n";
  }
  return 0;
}
