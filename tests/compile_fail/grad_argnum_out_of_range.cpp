// grad<1> of a function called with one argument (JAX: argnums out of range).
// expect: an argnum I is not less than the number of arguments
#include <jx/jx.h>

int main() {
  auto f = [](const jx::Array& x) { return jx::numpy::sum(x * x); };
  auto g = jx::grad<1>(f)(jx::numpy::ones({3}));
  (void)g;
}
