// params["Dense_0"] on a non-const Tree is a TreeSlot, a place that may not exist yet; it
// cannot be passed to a transformation as it is.
// expect: is a TreeSlot
// expect: std::as_const(params)
#include <jx/jx.h>

int main() {
  jx::Tree params{{"Dense_0", {{"w", jx::numpy::ones({3})}}}};
  auto f = [](const jx::Tree& p) { return jx::numpy::sum(p["w"].array()); };
  auto g = jx::grad(f)(params["Dense_0"]);
  (void)g;
}
