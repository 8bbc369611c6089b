// The parts of flax/linen/normalization.py that its layers share (_canonicalize_axes,
// _compute_stats, _normalize), for LayerNorm, GroupNorm, RMSNorm (normalization.cpp) and
// BatchNorm (layers.cpp). Defined in normalization.cpp.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "jx/array.h"
#include "jx/nn/initializers.h"

namespace jx::nn::detail {

// Flax's _canonicalize_axes: every axis made non-negative, deduplicated and sorted. An axis
// outside [-rank, rank) throws IndexError naming `layer`, the axis and the rank.
std::vector<int64_t> canonicalize_axes(const char* layer, int64_t rank, const std::vector<int64_t>& axes);

struct Stats {
  Array mean, var;
};
// Flax's _compute_stats: mean and variance of x over `axes`, in dtype (x's by default)
// raised to at least float32. use_fast_variance: var = max(0, E[x^2] - E[x]^2); else
// E[(x - E[x])^2]. use_mean false (RMSNorm): var = E[x^2] and mean = 0. With an axis_name
// the means are also averaged over that named axis (pmean), as Flax's BatchNorm(axis_name)
// does across devices.
Stats compute_stats(const char* layer, const Array& x, const std::vector<int64_t>& axes,
                    std::optional<DType> dtype, bool use_mean = true, bool use_fast_variance = true,
                    const std::string& axis_name = {});

struct NormalizeOptions {
  std::optional<DType> dtype;
  DType param_dtype = DType::Float32;
  double epsilon = 1e-6;
  bool use_bias = true;
  bool use_scale = true;
  initializers::Initializer bias_init, scale_init;
};
// Flax's _normalize: (x - mean) * rsqrt(var + epsilon) [* scale] [+ bias], with mean and var
// (x's shape without reduction_axes) expanded back at reduction_axes; the params "scale"
// then "bias" (that order decides their keys) have the shape of x's feature_axes. The
// result has `dtype`, or the result type of x and the params (at least a float).
Array normalize(const char* layer, const Array& x, const Array& mean, const Array& var,
                const std::vector<int64_t>& reduction_axes, const std::vector<int64_t>& feature_axes,
                const NormalizeOptions& options);

}  // namespace jx::nn::detail
