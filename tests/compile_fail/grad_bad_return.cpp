// A loss returning three values: neither a scalar nor (value, aux).
// expect: f must return a scalar Array, or (value, aux)
#include <jx/jx.h>

#include <tuple>

int main() {
  auto f = [](const jx::Array& x) {
    jx::Array l = jx::numpy::sum(x * x);
    return std::make_tuple(l, x, x);
  };
  auto g = jx::grad(f)(jx::numpy::ones({3}));
  (void)g;
}
