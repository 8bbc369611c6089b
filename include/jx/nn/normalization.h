// Flax linen's LayerNorm, GroupNorm and RMSNorm (flax/linen/normalization.py), with Flax's
// fields, defaults, parameter names and formulas. Each is an aggregate whose body is
// `call`; BatchNorm is in nn/layers.h.
//
//   x = nn::LayerNorm{}(x);                               // over the last axis; scale, bias
//   x = nn::GroupNorm{.num_groups = 8}(x);                // NHWC: over H, W and each group
//   x = nn::RMSNorm{}(x);                                 // x / sqrt(mean(x^2) + eps) * scale
//
// Statistics are computed in at least float32 (float64 stays float64); the result has
// `dtype`, or the result type of the inputs and the params.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "jx/nn/initializers.h"
#include "jx/nn/module.h"

namespace jx::nn {

// (x - mean) / sqrt(var + epsilon) * scale + bias, mean and var over reduction_axes of each
// example; params scale (ones) and bias (zeros) of the shape of x's feature_axes.
struct LayerNorm {
  double epsilon = 1e-6;
  std::optional<DType> dtype = {};  // of the result; none: from the inputs and params
  DType param_dtype = DType::Float32;
  bool use_bias = true;
  bool use_scale = true;
  initializers::Initializer bias_init = initializers::zeros_init();
  initializers::Initializer scale_init = initializers::ones_init();
  std::vector<int64_t> reduction_axes = {-1};
  std::vector<int64_t> feature_axes = {-1};
  bool use_fast_variance = true;  // var = E[x^2] - E[x]^2 (clipped at 0), else E[(x - E[x])^2]
  std::optional<std::string> name = {};

  Array call(const Array& x) const;
  JX_NN_MODULE(LayerNorm)
};

// Group normalization of inputs (batch, ..., channels): the channels split into groups
// (num_groups of them, or groups of group_size; give exactly one, so set num_groups to
// std::nullopt with group_size), each normalized over reduction_axes (default: every axis
// but the first, the batch) within the group. params scale and bias (channels,).
struct GroupNorm {
  std::optional<int64_t> num_groups = 32;
  std::optional<int64_t> group_size = {};
  double epsilon = 1e-6;
  std::optional<DType> dtype = {};
  DType param_dtype = DType::Float32;
  bool use_bias = true;
  bool use_scale = true;
  initializers::Initializer bias_init = initializers::zeros_init();
  initializers::Initializer scale_init = initializers::ones_init();
  // Must include the last axis (the channels). None: 1 .. ndim-1.
  std::optional<std::vector<int64_t>> reduction_axes = {};
  bool use_fast_variance = true;
  std::optional<std::string> name = {};

  Array call(const Array& x) const;
  JX_NN_MODULE(GroupNorm)
};

// x * rsqrt(mean(x^2) + epsilon) * scale over reduction_axes, without centering; param
// scale (ones) of the shape of x's feature_axes.
struct RMSNorm {
  double epsilon = 1e-6;
  std::optional<DType> dtype = {};
  DType param_dtype = DType::Float32;
  bool use_scale = true;
  initializers::Initializer scale_init = initializers::ones_init();
  std::vector<int64_t> reduction_axes = {-1};
  std::vector<int64_t> feature_axes = {-1};
  bool use_fast_variance = true;  // unused without centering; kept as Flax has it
  std::optional<std::string> name = {};

  Array call(const Array& x) const;
  JX_NN_MODULE(RMSNorm)
};

}  // namespace jx::nn
