// The non-quadratic function the optimizer trajectories run on (tests/golden/gen_optim_core.py
// and gen_optim_optimizers.py define the same one):
// f(w) = sum(log(cosh(w * s))) + 0.1 * sum(w^4), s = (1, 2, ...) / 3.
#pragma once
#include "jx/jx.h"

namespace optim_testing {

inline jx::Array trajectory_loss(const jx::Tree& params) {
  namespace jnp = jx::numpy;
  const jx::Array& w = params["w"].array();
  jx::Array s = jnp::arange(1.0, double(w.size() + 1)).astype(jx::DType::Float64).reshape(w.shape()) / 3.0;
  return jnp::sum(jnp::log(jnp::cosh(w * s))) + 0.1 * jnp::sum(jnp::power(w, 4.0));
}

}  // namespace optim_testing
