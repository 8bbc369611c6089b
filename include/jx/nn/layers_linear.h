// Flax linen's DenseGeneral, ConvTranspose and Embed (flax/linen/linear.py), with Flax's
// fields, defaults, parameter names, shapes and order of creation. Each is an aggregate
// whose body is `call`, as the layers of nn/layers.h:
//
//   Array q = nn::DenseGeneral{.features = {8, 64}}(x);                 // kernel (in, 8, 64)
//   Array y = nn::DenseGeneral{.features = {512}, .axis = {-2, -1}}(q); // kernel (8, 64, 512)
//   Array u = nn::ConvTranspose{.features = 16, .kernel_size = {3, 3}, .strides = {2, 2}}(x);
//   Array e = nn::Embed{.num_embeddings = 1000, .features = 64}(tokens);  // int tokens
//   Array logits = embed.apply(variables, &nn::Embed::attend, h);         // h @ embedding.T
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "jx/lax.h"
#include "jx/nn/initializers.h"
#include "jx/nn/module.h"

namespace jx::nn {

// A linear map that contracts the input axes `axis` with a kernel
// (input sizes at axis..., features...) and adds a bias (features...). batch_dims (leading,
// consecutive from 0) are shared between input and kernel: kernel (batch sizes...,
// axis sizes..., features...), bias (batch sizes..., features...). The initializers see the
// kernel flattened to 2-D, (prod(batch) * prod(axis sizes), prod(features)), and the bias to
// 1-D, as Flax does, so fan-in counts every contracted axis.
struct DenseGeneral {
  std::vector<int64_t> features = {};      // one or several output sizes: {4} or {8, 64}
  std::vector<int64_t> axis = {-1};   // the input axes to contract
  std::vector<int64_t> batch_dims = {};    // none by default
  bool use_bias = true;
  std::optional<DType> dtype = {};  // the computation dtype; none: promoted from inputs and params
  DType param_dtype = DType::Float32;
  initializers::Initializer kernel_init = initializers::lecun_normal();
  initializers::Initializer bias_init = initializers::zeros_init();
  std::optional<std::string> name = {};

  Array call(const Array& inputs) const;
  JX_NN_MODULE(DenseGeneral)
};

// A transposed convolution (lax::conv_transpose) over inputs (batch..., spatial...,
// features); kernel (kernel_size..., in_features, features), or (kernel_size...,
// features, in_features) with transpose_kernel, which flips and transposes it so that the
// layer is the gradient of a Conv with that kernel. strides and kernel_dilation: one value
// for every spatial dim, or one each; empty means 1. padding: "SAME" (default), "VALID",
// "CIRCULAR" or (lo, hi) pairs, which pad the stride-dilated input as they are (jax's
// conv_transpose without use_consistent_padding).
// Several batch dims are flattened for the call, none gets one.
struct ConvTranspose {
  int64_t features = 0;
  std::vector<int64_t> kernel_size = {};
  std::vector<int64_t> strides = {};
  lax::Padding padding = "SAME";
  std::vector<int64_t> kernel_dilation = {};
  bool use_bias = true;
  std::optional<DType> dtype = {};
  DType param_dtype = DType::Float32;
  initializers::Initializer kernel_init = initializers::lecun_normal();
  initializers::Initializer bias_init = initializers::zeros_init();
  bool transpose_kernel = false;
  std::optional<std::string> name = {};

  Array call(const Array& inputs) const;
  JX_NN_MODULE(ConvTranspose)
};

// A table of num_embeddings vectors of size features: param embedding
// (num_embeddings, features), initialized by variance_scaling(1, "fan_in", "normal",
// out_axis = 0) (so stddev 1 / sqrt(features)).
struct Embed {
  int64_t num_embeddings = 0;
  int64_t features = 0;
  std::optional<DType> dtype = {};  // of the vectors; none: the embedding's
  DType param_dtype = DType::Float32;
  initializers::Initializer embedding_init =
      initializers::variance_scaling(1.0, "fan_in", "normal", /*in_axis=*/-2, /*out_axis=*/0);
  std::optional<std::string> name = {};

  // The rows of the embedding at the integer `inputs` (take along axis 0): shape
  // inputs.shape + (features,). Negative indices count from the end; indices out of range
  // give NaN rows (jnp.take's "fill"). Non-integer inputs throw ValueError.
  Array call(const Array& inputs) const;
  // query @ embedding.T: one logit per embedding (weight tying). As the root module:
  // embed.apply(variables, &nn::Embed::attend, query); as a submodule inside another
  // module's call: embed(&nn::Embed::attend, query), which runs it in embed's scope.
  Array attend(const Array& query) const;
  Array call(Array (Embed::*method)(const Array&) const, const Array& query) const { return (this->*method)(query); }
  JX_NN_MODULE(Embed)
};

}  // namespace jx::nn
