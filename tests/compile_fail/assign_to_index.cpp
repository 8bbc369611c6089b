// x(0, slice()) = v compiles to nothing in a naive C++ API: the index result is a new,
// temporary array. JAX raises a TypeError pointing to .at[].set(); jx refuses to compile.
// expect: jx::Array is immutable
// expect: .at(...).set(value)
#include <jx/jx.h>

int main() {
  jx::Array x = jx::numpy::zeros({2, 3});
  x(0, jx::slice()) = 5.0;
}
