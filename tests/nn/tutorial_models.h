// The tutorial's models (steps 4 and the full example), as Flax modules and as the same
// computation written with jnp on the same parameter tree, for the tests (same program
// under jit, per-example gradients) and bench/bench_nn.cpp (the module system's cost).
#pragma once
#include "jx/jx.h"

namespace tutorial {

namespace jnp = jx::numpy;
namespace nn = jx::nn;
using jx::Array;
using jx::Tree;

struct MLP : nn::Module<MLP> {
  Array call(Array x) const {
    x = x.reshape({x.shape(0), -1});
    x = nn::relu(nn::Dense{.features = 512}(x));
    x = nn::relu(nn::Dense{.features = 512}(x));
    return nn::Dense{.features = 10}(x);
  }
};

struct CNN : nn::Module<CNN> {
  int64_t num_classes = 10;
  Array call(Array x, bool deterministic) const {
    x = nn::Conv{.features = 32, .kernel_size = {3, 3}}(x);
    x = nn::relu(x);
    x = nn::max_pool(x, {2, 2}, {.strides = {2, 2}});
    x = nn::Conv{.features = 64, .kernel_size = {3, 3}}(x);
    x = nn::relu(x);
    x = x.reshape({x.shape(0), -1});
    x = nn::Dense{.features = 256}(x);
    x = nn::Dropout{.rate = 0.1}(x, deterministic);
    return nn::Dense{.features = num_classes}(nn::relu(x));
  }
};

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
