// Built against an installed jx by scripts/check-consumer; exits non-zero on a wrong value.
#include <iostream>

#include <jx/jx.h>

int main() {
  namespace jnp = jx::numpy;
  jx::Array x = jnp::array({1.0f, 2.0f, 3.0f});
  jx::Array y = x * 2.0 + 1;  // weak scalars keep float32
  std::vector<float> v = y.to_vector<float>();
  bool ok = y.dtype() == jx::float32 && v == std::vector<float>{3.0f, 5.0f, 7.0f};
  std::cout << "consumer: " << (ok ? "ok" : "WRONG") << "\n";
  return ok ? 0 : 1;
}
