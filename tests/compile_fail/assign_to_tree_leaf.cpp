// Writing through a leaf read out of a tree would change a temporary copy, not the tree.
// expect: jx::Array is immutable
#include <jx/jx.h>

int main() {
  jx::Tree params{{"Dense_0", {{"kernel", jx::numpy::zeros({2, 3})}}}};
  params["Dense_0"]["kernel"].array()(0, jx::slice()) = 0.0;
}
