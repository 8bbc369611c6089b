// "Migrating from PyTorch to JAX", steps 2-3, in C++: arrays instead of tensors,
// broadcasting, immutability and functional .at[] updates, printing.
// (Later steps -- grad, vmap, jit, training -- arrive with the issues that build them.)
#include <iostream>

#include "jx/jx.h"

namespace jnp = jx::numpy;
using jx::Array;

int main() {
  std::cout << "== Step 2: arrays are like torch tensors, but immutable ==\n";
  // torch.tensor([[1., 2.], [3., 4.]])  ->  jnp.array([[1., 2.], [3., 4.]])
  Array a = jnp::array({{1.0f, 2.0f}, {3.0f, 4.0f}});
  std::cout << "a = " << a.repr() << "\n";
  std::cout << "a.shape = " << a.shape() << ", a.dtype = " << a.dtype() << "\n";

  // Default dtypes are 32-bit, as in JAX: jnp.arange(6) is int32, jnp.linspace float32.
  Array r = jnp::arange(6).reshape({2, 3});
  std::cout << "jnp.arange(6).reshape(2, 3) = " << r.repr() << "\n";
  Array l = jnp::linspace(0.0, 1.0, 5);
  std::cout << "jnp.linspace(0, 1, 5) = " << l.repr() << "\n";

  // C++ scalars are weakly typed, like Python scalars: x * 2.0 keeps float32.
  std::cout << "a * 2.0 -> " << (a * 2.0).repr() << "\n";
  std::cout << "jnp.int8 array + 1 stays int8: "
            << (jnp::array<int8_t>({1, 2, 3}) + 1).repr() << "\n";

  std::cout << "\n== Broadcasting, as NumPy and PyTorch ==\n";
  Array col = jnp::arange(3.0).reshape({3, 1});
  Array row = jnp::arange(4.0);
  std::cout << "col + row = " << (col + row).repr() << "\n";
  std::cout << "a @ a.T = " << jnp::matmul(a, a.T()).repr() << "\n";
  std::cout << "sum over axis 0 = " << jnp::sum(a, 0).repr() << ", mean = "
            << jnp::mean(a).repr() << "\n";

  std::cout << "\n== Step 3: no in-place updates; .at[] returns a new array ==\n";
  // PyTorch: x[0, 0] = 5 mutates x.  JAX: y = x.at[0, 0].set(5) leaves x unchanged.
  Array x = jnp::zeros({3, 4});
  Array y = x.at(0, 0).set(5);
  std::cout << "x = " << x.repr() << "\n";
  std::cout << "y = x.at[0, 0].set(5) = " << y.repr() << "\n";
  y = y.at(jx::slice(1, 3)).add(1.0);
  std::cout << "y.at[1:3].add(1) = " << y.repr() << "\n";
  Array idx = jnp::array<int32_t>({0, 0, 2});
  std::cout << "duplicate indices accumulate: jnp.zeros(4).at[[0, 0, 2]].add(1) = "
            << jnp::zeros({4}).at(idx).add(1).repr() << "\n";
  std::cout << "out-of-bounds reads clamp: jnp.arange(5.)[10] = " << jnp::arange(5.0)(10).repr()
            << "\n";
  std::cout << "jnp.arange(5.).at[20].get(mode='fill', fill_value=-1) = "
            << jnp::arange(5.0).at(20).get({.mode = jx::IndexMode::fill, .fill_value = -1}).repr()
            << "\n";

  std::cout << "\n== Indexing, as NumPy ==\n";
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
