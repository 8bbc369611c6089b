// A Tree does not convert to an Array implicitly: passing one where an Array is meant (the
// way jacrev(f)(params) used to compile and then fail at run time) is a compile error.
// Write params["k"].array() for a leaf.
// expect: const jx::Array&
// expect: jx::Tree
#include <jx/jx.h>

float first(const jx::Array& x) { return x.item<float>(); }

int main() {
  jx::Tree params{{"k", jx::numpy::ones({1})}};
  return int(first(params));
}
