// jx::has_aux states that f returns (value, aux); this f returns a plain scalar.
// expect: jx::grad(f, jx::has_aux): f must return (value, aux)
#include <jx/jx.h>

int main() {
  auto f = [](const jx::Array& x) { return jx::numpy::sum(x * x); };
  auto g = jx::grad(f, jx::has_aux)(jx::numpy::ones({3}));
  (void)g;
}
