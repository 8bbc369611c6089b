// The tutorial's models (step 3's MLP, the full example's CNN): the Flax-style modules of
// the example programs (examples/tutorial/models.h) and the same computation written with jnp
// on the same parameter tree, for the tests (same program under jit, per-example gradients)
// and the benchmarks (bench_nn: the module system's cost; bench_models: the train steps).
#pragma once
#include "../../examples/tutorial/models.h"
#include "jx/jx.h"

namespace tutorial {

namespace jnp = jx::numpy;
namespace nn = jx::nn;
using jx::Array;
using jx::Tree;

inline Array dense_by_hand(const Tree& p, const char* name, const Array& h) {
  return jnp::matmul(h, p[name]["kernel"].array()) + p[name]["bias"].array();
}

inline Array mlp_by_hand(const Tree& v, Array x) {
  const Tree& p = v["params"];
  x = x.reshape({x.shape(0), -1});
  x = nn::relu(dense_by_hand(p, "Dense_0", x));
  x = nn::relu(dense_by_hand(p, "Dense_1", x));
  return dense_by_hand(p, "Dense_2", x);
}

// The CNN in evaluation (deterministic: dropout is the identity).
inline Array cnn_by_hand(const Tree& v, Array x) {
  const Tree& p = v["params"];
  auto conv = [&](const char* n, const Array& h) {
    return jx::lax::conv_general_dilated(h, p[n]["kernel"].array(), {1, 1}, "SAME", {}, {},
                                         {"NHWC", "HWIO", "NHWC"}) + p[n]["bias"].array();
  };
  x = nn::relu(conv("Conv_0", x));
  x = jx::lax::reduce_window_max(x, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  x = nn::relu(conv("Conv_1", x));
  x = x.reshape({x.shape(0), -1});
  x = nn::relu(dense_by_hand(p, "Dense_0", x));
  return dense_by_hand(p, "Dense_1", x);
}

}  // namespace tutorial
