// JAX's x[0] is x(0) in jx; x[0] says so.
// expect: jx::Array has no operator[]
// expect: x(0)
#include <jx/jx.h>

int main() {
  jx::Array x = jx::numpy::zeros({2, 3});
  jx::Array row = x[0];
  (void)row;
}
