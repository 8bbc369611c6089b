// LayerNorm, GroupNorm and RMSNorm, and the helpers they share with BatchNorm, as
// flax/linen/normalization.py computes them (same formulas, same order of parameter
// creation: scale, then bias).
#include "jx/nn/normalization.h"

#include <algorithm>
#include <set>

#include "jx/lax.h"
#include "jx/numpy.h"
#include "jx/parallel.h"
#include "nn/dtypes.h"
#include "nn/norm_common.h"
#include "support/str.h"

namespace jx::nn {

namespace jnp = jx::numpy;

namespace detail {

std::vector<int64_t> canonicalize_axes(const char* layer, int64_t rank, const std::vector<int64_t>& axes) {
  std::set<int64_t> out;
  for (int64_t a : axes) {
    const int64_t c = a < 0 ? a + rank : a;
    if (c < 0 || c >= rank)
      throw IndexError(str("[nn.", layer, "] axis ", a, " is out of range for inputs of rank ", rank,
                           "; axes count from 0 (or from -1 at the end)"));
    out.insert(c);
  }
  return {out.begin(), out.end()};
}

Stats compute_stats(const char* layer, const Array& x_in, const std::vector<int64_t>& axes_in,
                    std::optional<DType> dtype, bool use_mean, bool use_fast_variance,
                    const std::string& axis_name) {
  // At least float32, so that half-precision inputs keep precise statistics.
  const DType t = promote_types(dtype ? *dtype : x_in.dtype(), DType::Float32);
  const Array x = x_in.astype(t);
  const std::vector<int64_t> axes = canonicalize_axes(layer, x.ndim(), axes_in);
  const Axes reduce(axes);
  // A mean over `axes`, and over the devices of axis_name when there is one.
  auto mean = [&](const Array& v) {
    Array m = jnp::mean(v, reduce);
    return axis_name.empty() ? m : lax::pmean(m, axis_name);
  };
  Stats s;
  if (!use_mean) {
    s.var = mean(jnp::square(x));
    s.mean = jnp::zeros_like(s.var);
  } else if (use_fast_variance) {
    s.mean = mean(x);
    // E[x^2] - E[x]^2 can round below zero; the clip avoids NaNs downstream.
    s.var = jnp::maximum(0.0, mean(jnp::square(x)) - jnp::square(s.mean));
  } else {
    s.mean = mean(x);
    s.var = mean(jnp::square(x - jnp::expand_dims(s.mean, axes)));
  }
  return s;
}

Array normalize(const char* layer, const Array& x, const Array& mean_in, const Array& var_in,
                const std::vector<int64_t>& reduction_axes_in, const std::vector<int64_t>& feature_axes_in,
                const NormalizeOptions& o) {
  const std::vector<int64_t> reduction_axes = canonicalize_axes(layer, x.ndim(), reduction_axes_in);
  const std::vector<int64_t> feature_axes = canonicalize_axes(layer, x.ndim(), feature_axes_in);
  Shape feature_shape(size_t(x.ndim()), 1), reduced_feature_shape;
  for (int64_t a : feature_axes) {
    feature_shape[size_t(a)] = x.shape()[size_t(a)];
    reduced_feature_shape.push_back(x.shape()[size_t(a)]);
  }
  const Array mean = jnp::expand_dims(mean_in, reduction_axes);
  const Array var = jnp::expand_dims(var_in, reduction_axes);
  Array y = x - mean;
  Array mul = lax::rsqrt(var + o.epsilon);
  std::vector<Array> args{x};
  if (o.use_scale) {
    Array scale = param("scale", o.scale_init, reduced_feature_shape, o.param_dtype).reshape(feature_shape);
    mul = mul * scale;
    args.push_back(scale);
  }
  y = y * mul;
  if (o.use_bias) {
    Array bias = param("bias", o.bias_init, reduced_feature_shape, o.param_dtype).reshape(feature_shape);
    y = y + bias;
    args.push_back(bias);
  }
  return y.astype(canonicalize_dtype(args, o.dtype));
}

}  // namespace detail

// ---- LayerNorm ----
Array LayerNorm::call(const Array& x) const {
  const detail::Stats s = detail::compute_stats("LayerNorm", x, reduction_axes, dtype, true, use_fast_variance);
  return detail::normalize("LayerNorm", x, s.mean, s.var, reduction_axes, feature_axes,
                           {dtype, param_dtype, epsilon, use_bias, use_scale, bias_init, scale_init});
}

// ---- RMSNorm ----
Array RMSNorm::call(const Array& x) const {
  const detail::Stats s =
      detail::compute_stats("RMSNorm", x, reduction_axes, dtype, /*use_mean=*/false, use_fast_variance);
  return detail::normalize("RMSNorm", x, s.mean, s.var, reduction_axes, feature_axes,
                           {dtype, param_dtype, epsilon, /*use_bias=*/false, use_scale,
                            initializers::zeros_init(), scale_init});
}

// ---- GroupNorm ----
Array GroupNorm::call(const Array& x) const {
  if (x.ndim() < 1)
    throw ShapeError(str("[nn.GroupNorm] ", module_path(), ": inputs need a channel axis (the last), got ",
                         type_str(x.dtype(), x.shape())));
  std::vector<int64_t> axes_given;
  if (reduction_axes) {
    axes_given = *reduction_axes;
  } else {
    for (int64_t i = 1; i < x.ndim() - 1; ++i) axes_given.push_back(i);
    axes_given.push_back(-1);
  }
  const std::vector<int64_t> axes = detail::canonicalize_axes("GroupNorm", x.ndim(), axes_given);
  if (axes.empty() || axes.back() != x.ndim() - 1)
    throw ValueError(str("[nn.GroupNorm] ", module_path(), ": reduction_axes ", list_str(axes_given),
                         " for inputs ", type_str(x.dtype(), x.shape()),
                         " must include the last axis, which holds the channels; add -1"));
  if (num_groups.has_value() == group_size.has_value())
    throw ValueError(str("[nn.GroupNorm] ", module_path(), ": give either num_groups or group_size, not ",
                         num_groups ? "both" : "neither",
                         "; for group_size, set num_groups = std::nullopt (its default is 32)"));
  const int64_t channels = x.shape().back();
  int64_t groups;
  if (group_size) {
    if (*group_size <= 0 || channels % *group_size != 0)
      throw ValueError(str("[nn.GroupNorm] ", module_path(), ": the number of channels (", channels,
                           ") of inputs ", type_str(x.dtype(), x.shape()),
                           " is not a multiple of the group size (", *group_size,
                           "); choose a group_size that divides it"));
    groups = channels / *group_size;
  } else {
    groups = *num_groups;
  }
  if (groups <= 0 || channels % groups != 0)
    throw ValueError(str("[nn.GroupNorm] ", module_path(), ": the number of groups (", groups,
                         ") does not divide the number of channels (", channels, ") of inputs ",
                         type_str(x.dtype(), x.shape()), "; choose num_groups that divides it (the "
                         "default is 32)"));
  const int64_t per_group = channels / groups;
  // (..., channels) -> (..., groups, per_group): statistics over the reduction axes but the
  // channels, and over each group's channels (the new last axis).
  Shape group_shape(x.shape().begin(), x.shape().end() - 1);
  group_shape.push_back(groups);
  group_shape.push_back(per_group);
  std::vector<int64_t> stat_axes(axes.begin(), axes.end() - 1);
  stat_axes.push_back(-1);
  detail::Stats s = detail::compute_stats("GroupNorm", x.reshape(group_shape), stat_axes, dtype, true,
                                          use_fast_variance);
  const Array mean = jnp::repeat(s.mean, per_group, -1);
  const Array var = jnp::repeat(s.var, per_group, -1);
  return detail::normalize("GroupNorm", x, mean, var, std::vector<int64_t>(axes.begin(), axes.end() - 1), {-1},
                           {dtype, param_dtype, epsilon, use_bias, use_scale, bias_init, scale_init});
}

}  // namespace jx::nn
