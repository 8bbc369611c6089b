// A struct of parameters without JX_PYTREE: the first error is jx's, naming the fix.
// expect: jx::tree: this type is not a pytree
// expect: JX_PYTREE
#include <jx/jx.h>

struct Params {
  jx::Array w, b;
};

int main() {
  auto loss = [](const Params& p, const jx::Array& x) { return jx::numpy::sum(p.w * x + p.b); };
  Params p{jx::numpy::ones({3}), jx::numpy::zeros({3})};
  auto g = jx::grad(loss)(p, jx::numpy::ones({3}));
  (void)g;
}
