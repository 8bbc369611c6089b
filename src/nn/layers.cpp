// Dense, Conv, Dropout, BatchNorm and pooling, as flax/linen's linear.py, stochastic.py,
// normalization.py and pooling.py compute them, in the same order of parameter creation
// (which decides each parameter's key).
#include "jx/nn/layers.h"

#include <algorithm>
#include <numeric>

#include "jx/numpy.h"
#include "jx/random.h"
#include "nn/dtypes.h"
#include "nn/norm_common.h"
#include "support/str.h"

namespace jx::nn {

namespace jnp = jx::numpy;

namespace {

// One entry per spatial dim from a field given as {}, {v} or {v0, v1, ...}.
std::vector<int64_t> per_dim(const char* layer, const char* field, const std::vector<int64_t>& v,
                             size_t n) {
  if (v.empty()) return std::vector<int64_t>(n, 1);
  if (v.size() == 1) return std::vector<int64_t>(n, v[0]);
  if (v.size() != n)
    throw ValueError(str("[nn.", layer, "] ", field, " ", list_str(v), " has ", v.size(),
                         " entries for a kernel of ", n, " spatial dims; give one, or one per dim"));
  return v;
}

}  // namespace

// ---- Dense ----
Array Dense::call(const Array& inputs) const {
  if (inputs.ndim() < 1)
    throw ShapeError(str("[nn.Dense] inputs need a feature axis, got ", type_str(inputs.dtype(), inputs.shape())));
  Array kernel = param("kernel", kernel_init, {inputs.shape().back(), features}, param_dtype);
  Array bias = use_bias ? param("bias", bias_init, {features}, param_dtype) : Array();
  auto p = detail::promote_dtype({inputs, kernel, bias}, dtype);
  Array y = lax::dot_general(p[0], p[1], {{p[0].ndim() - 1}, {0}, {}, {}});
  if (use_bias) {
    Shape bs(size_t(y.ndim()), 1);
    bs.back() = features;
    y = y + p[2].reshape(bs);
  }
  return y;
}

// ---- Conv ----
Array Conv::call(const Array& inputs) const {
  const size_t ns = kernel_size.size();
  if (ns == 0)
    throw ValueError("[nn.Conv] kernel_size is empty; give one size per spatial dim, e.g. {3, 3}");
  if (size_t(inputs.ndim()) < ns + 1)
    throw ShapeError(str("[nn.Conv] inputs ", type_str(inputs.dtype(), inputs.shape()), " have fewer than the ",
                         ns + 1, " dims a ", ns, "-D kernel needs (spatial..., features)"));
  // (batch..., spatial..., features) -> one batch dim for the convolution.
  const size_t nb = size_t(inputs.ndim()) - ns - 1;
  Array x = inputs;
  Shape batch_shape(inputs.shape().begin(), inputs.shape().begin() + std::ptrdiff_t(nb));
  if (nb != 1) {
    Shape s{nb == 0 ? 1 : std::accumulate(batch_shape.begin(), batch_shape.end(), int64_t(1), std::multiplies<>())};
    for (size_t i = nb; i < size_t(inputs.ndim()); ++i) s.push_back(inputs.shape()[i]);
    x = x.reshape(s);
  }
  const int64_t in_features = x.shape().back();
  if (in_features % feature_group_count)
    throw ShapeError(str("[nn.Conv] feature_group_count ", feature_group_count, " must divide the ",
                         in_features, " input features"));
  const std::vector<int64_t> st = per_dim("Conv", "strides", strides, ns);
  const std::vector<int64_t> in_dil = per_dim("Conv", "input_dilation", input_dilation, ns);
  const std::vector<int64_t> k_dil = per_dim("Conv", "kernel_dilation", kernel_dilation, ns);
  lax::Padding pad = padding;
  if (padding.is_named() && (padding.name() == "CIRCULAR" || padding.name() == "CAUSAL")) {
    // Pad the input explicitly, then run VALID (flax: CIRCULAR wraps, CAUSAL pads the front).
    std::vector<std::pair<int64_t, int64_t>> pads;
    for (size_t i = 0; i < ns; ++i) {
      const int64_t k = (kernel_size[i] - 1) * k_dil[i] + 1;
      if (padding.name() == "CAUSAL") {
        if (ns != 1) throw ValueError("[nn.Conv] CAUSAL padding is only defined for 1-D convolutions");
        pads.emplace_back(k - 1, 0);
      } else {
        pads.emplace_back((k - 1) / 2, k / 2);
      }
    }
    std::vector<std::pair<int64_t, int64_t>> full{{0, 0}};
    full.insert(full.end(), pads.begin(), pads.end());
    full.emplace_back(0, 0);
    x = jnp::pad(x, full, padding.name() == "CIRCULAR" ? "wrap" : "constant");
    pad = "VALID";
  }
  Shape kshape(kernel_size.begin(), kernel_size.end());
  kshape.push_back(in_features / feature_group_count);
  kshape.push_back(features);
  Array kernel = param("kernel", kernel_init, kshape, param_dtype);
  Array bias = use_bias ? param("bias", bias_init, {features}, param_dtype) : Array();
  auto p = detail::promote_dtype({x, kernel, bias}, dtype);
  // Flax's _conv_dimension_numbers: (batch, spatial..., features) and (spatial..., in, out).
  const int64_t nd = x.ndim();
  std::vector<int64_t> lhs{0, nd - 1}, rhs{nd - 1, nd - 2};
  for (int64_t i = 1; i < nd - 1; ++i) lhs.push_back(i);
  for (int64_t i = 0; i < nd - 2; ++i) rhs.push_back(i);
  Array y = lax::conv_general_dilated(p[0], p[1], st, pad, in_dil, k_dil,
                                      lax::ConvDimensionNumbers{lhs, rhs, lhs}, feature_group_count);
  if (use_bias) {
    Shape bs(size_t(y.ndim()), 1);
    bs.back() = features;
    y = y + p[2].reshape(bs);
  }
  if (nb != 1) {
    Shape s = batch_shape;
    for (size_t i = 1; i < size_t(y.ndim()); ++i) s.push_back(y.shape()[i]);
    y = y.reshape(s);
  }
  return y;
}

// ---- Dropout ----
Array Dropout::call(const Array& inputs, std::optional<bool> deterministic_arg, std::optional<Array> rng) const {
  if (!deterministic_arg && !deterministic)
    throw ValueError(str("[nn.Dropout] ", module_path(), ": deterministic is given neither as a field "
                         "nor in the call; pass it, e.g. nn::Dropout{.rate = 0.1}(x, !train)"));
  if (deterministic_arg && deterministic && *deterministic_arg != *deterministic)
    throw ValueError(str("[nn.Dropout] ", module_path(), ": deterministic is given both as a field (",
                         *deterministic, ") and in the call (", *deterministic_arg, "); give it once"));
  const bool det = deterministic_arg ? *deterministic_arg : *deterministic;
  if (rate < 0.0 || rate > 1.0)
    throw ValueError(str("[nn.Dropout] rate ", rate, " must be in [0, 1]"));
  if (rate == 0.0 || det) return inputs;
  if (rate == 1.0) return jnp::zeros_like(inputs);
  const double keep = 1.0 - rate;
  Array key = rng ? *rng : make_rng(rng_collection);
  Shape mask_shape = inputs.shape();
  for (int64_t d : broadcast_dims) {
    const int64_t a = d < 0 ? d + inputs.ndim() : d;
    if (a < 0 || a >= inputs.ndim())
      throw IndexError(str("[nn.Dropout] broadcast dim ", d, " is out of range for inputs ",
                           type_str(inputs.dtype(), inputs.shape())));
    mask_shape[size_t(a)] = 1;
  }
  Array mask = jnp::broadcast_to(random::bernoulli(key, keep, mask_shape), inputs.shape());
  return lax::select(mask, inputs / keep, jnp::zeros_like(inputs));
}

// ---- BatchNorm ----
Array BatchNorm::call(const Array& x, std::optional<bool> use_running_average_arg) const {
  if (!use_running_average_arg && !use_running_average)
    throw ValueError(str("[nn.BatchNorm] ", module_path(), ": use_running_average is given neither as a "
                         "field nor in the call; pass it, e.g. nn::BatchNorm{}(x, !train)"));
  if (use_running_average_arg && use_running_average && *use_running_average_arg != *use_running_average)
    throw ValueError(str("[nn.BatchNorm] ", module_path(), ": use_running_average is given both as a "
                         "field and in the call; give it once"));
  const bool running = use_running_average_arg ? *use_running_average_arg : *use_running_average;
  std::vector<int64_t> feature_axes;
  for (int64_t a : axis) {
    const int64_t c = a < 0 ? a + x.ndim() : a;
    if (c < 0 || c >= x.ndim())
      throw IndexError(str("[nn.BatchNorm] axis ", a, " is out of range for inputs ", type_str(x.dtype(), x.shape())));
    feature_axes.push_back(c);
  }
  std::sort(feature_axes.begin(), feature_axes.end());
  std::vector<int64_t> reduction_axes;
  Shape feature_shape;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    if (std::count(feature_axes.begin(), feature_axes.end(), i))
      feature_shape.push_back(x.shape()[size_t(i)]);
    else
      reduction_axes.push_back(i);
  }
  Variable ra_mean = variable("batch_stats", "mean", [&] { return jnp::zeros(feature_shape, DType::Float32); });
  Variable ra_var = variable("batch_stats", "var", [&] { return jnp::ones(feature_shape, DType::Float32); });
  Array mean, var;
  if (running) {
    mean = ra_mean.value();
    var = ra_var.value();
  } else {
    const detail::Stats s = detail::compute_stats("BatchNorm", x, reduction_axes, dtype, true, use_fast_variance,
                                                  axis_name.value_or(std::string()));
    mean = s.mean;
    var = s.var;
    if (!is_initializing()) {
      ra_mean.set(momentum * ra_mean.value() + (1.0 - momentum) * mean);
      ra_var.set(momentum * ra_var.value() + (1.0 - momentum) * var);
    }
  }
  return detail::normalize("BatchNorm", x, mean, var, reduction_axes, feature_axes,
                           {dtype, param_dtype, epsilon, use_bias, use_scale, bias_init, scale_init});
}

// ---- Sequential ----
Array Sequential::run(const Array& x, bool as_root) const {
  if (layers_.empty()) throw ValueError("[nn.Sequential] has no layers; give at least one");
  Array y = x;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const std::string name = str("layers_", i);
    y = layers_[i](y, as_root ? &name : nullptr);
  }
  return y;
}

// ---- pooling ----
namespace {

// Flax's pool: the window over the spatial dims, 1 over batch and features; inputs
// without a batch dim get one for the call.
struct Window {
  Array x;
  std::vector<int64_t> dims, strides;
  lax::Padding padding = "VALID";
  bool added_batch = false;
};

Window window_of(const char* op, const Array& inputs, const std::vector<int64_t>& window_shape,
                 const PoolOptions& options) {
  const size_t nw = window_shape.size();
  if (nw == 0 || size_t(inputs.ndim()) < nw + 1)
    throw ShapeError(str("[nn.", op, "] inputs ", type_str(inputs.dtype(), inputs.shape()), " need (batch..., ",
                         nw, " spatial dims, features) for the window ", list_str(window_shape)));
  const std::vector<int64_t> strides =
      options.strides.empty() ? std::vector<int64_t>(nw, 1) : options.strides;
  if (strides.size() != nw)
    throw ShapeError(str("[nn.", op, "] strides ", list_str(strides), " and window ", list_str(window_shape),
                         " differ in length"));
  Window w;
  w.added_batch = size_t(inputs.ndim()) == nw + 1;
  w.x = w.added_batch ? jnp::expand_dims(inputs, 0) : inputs;
  const size_t lead = size_t(w.x.ndim()) - nw - 1;
  w.dims.assign(lead, 1);
  w.strides.assign(lead, 1);
  w.dims.insert(w.dims.end(), window_shape.begin(), window_shape.end());
  w.strides.insert(w.strides.end(), strides.begin(), strides.end());
  w.dims.push_back(1);
  w.strides.push_back(1);
  w.padding = options.padding;
  if (!options.padding.is_named()) {
    if (options.padding.pairs().size() != nw)
      throw ShapeError(str("[nn.", op, "] padding has ", options.padding.pairs().size(),
                           " (lo, hi) pairs for a window of ", nw, " dims"));
    lax::Padding::Pairs p(lead, {0, 0});
    p.insert(p.end(), options.padding.pairs().begin(), options.padding.pairs().end());
    p.emplace_back(0, 0);
    w.padding = lax::Padding(p);
  }
  return w;
}

Array finish(const Window& w, const Array& y) { return w.added_batch ? jnp::squeeze(y, 0) : y; }

}  // namespace

Array pool(const Array& inputs, const Array& init, const lax::WindowComputation& reduce_fn,
           const std::vector<int64_t>& window_shape, const PoolOptions& options) {
  Window w = window_of("pool", inputs, window_shape, options);
  return finish(w, lax::reduce_window(w.x, init, reduce_fn, w.dims, w.strides, w.padding));
}

// Flax's max_pool is pool(-inf, lax.max), which jax binds as reduce_window_max.
Array max_pool(const Array& inputs, const std::vector<int64_t>& window_shape, const PoolOptions& options) {
  Window w = window_of("max_pool", inputs, window_shape, options);
  return finish(w, lax::reduce_window_max(w.x, w.dims, w.strides, w.padding));
}

Array min_pool(const Array& inputs, const std::vector<int64_t>& window_shape, const PoolOptions& options) {
  Window w = window_of("min_pool", inputs, window_shape, options);
  return finish(w, lax::reduce_window_min(w.x, w.dims, w.strides, w.padding));
}

Array avg_pool(const Array& inputs, const std::vector<int64_t>& window_shape, const PoolOptions& options) {
  Window w = window_of("avg_pool", inputs, window_shape, options);
  Array sum = lax::reduce_window_sum(w.x, w.dims, w.strides, w.padding);
  if (options.count_include_pad) {
    const int64_t n = std::accumulate(window_shape.begin(), window_shape.end(), int64_t(1), std::multiplies<>());
    return finish(w, sum / double(n));
  }
  // The number of real (non-padding) elements of each window: the same pool over ones
  // of the input's shape with batch and features of size 1.
  Shape ones_shape(size_t(w.x.ndim()), 1);
  for (size_t i = 0; i < window_shape.size(); ++i) {
    const size_t d = size_t(w.x.ndim()) - window_shape.size() - 1 + i;
    ones_shape[d] = w.x.shape()[d];
  }
  Array count = lax::reduce_window_sum(jnp::ones(ones_shape, sum.dtype()), w.dims, w.strides, w.padding);
  return finish(w, sum / count);
}

}  // namespace jx::nn
