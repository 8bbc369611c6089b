// jx::nn::initializers: jax.nn.initializers (jax/_src/nn/initializers.py). Each one draws
// exactly what JAX's does for the same key, shape and dtype (same jax.random calls, same
// order, same dtype arithmetic), so a parameter initialized here equals JAX's.
//
//   namespace init = jx::nn::initializers;
//   init::Initializer w_init = init::lecun_normal();
//   Array w = w_init(key, {784, 128});                  // float32, the initializer's default
//   Array b = init::zeros(key, {128});                  // zeros and ones are initializers
//   Array k = init::he_uniform()(key, {3, 3, 1, 32}, jx::float64);   // HWIO: fan_in = 9
//
// An initializer takes (key, shape, dtype). As in JAX, every factory takes the dtype used
// when a call gives none (float32 by default). Random initializers need a floating dtype.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "jx/array.h"

namespace jx::nn::initializers {

using jx::Array;
using jx::Axes;
using jx::DType;
using jx::Shape;

class Initializer {
 public:
  using Fn = std::function<Array(const Array& key, const Shape& shape, DType dtype)>;

  Initializer() = default;
  // Any callable (key, shape, dtype) -> Array, e.g. initializers::zeros or a lambda.
  template <class F, std::enable_if_t<std::is_invocable_r_v<Array, const F&, const Array&,
                                                            const Shape&, DType> &&
                                          !std::is_same_v<std::decay_t<F>, Initializer>,
                                      int> = 0>
  Initializer(F fn, DType default_dtype = DType::Float32)
      : fn_(std::move(fn)), default_dtype_(default_dtype) {}

  // dtype: the initializer's default when not given (JAX's `dtype` factory argument).
  Array operator()(const Array& key, const Shape& shape,
                   std::optional<DType> dtype = std::nullopt) const;

  bool valid() const { return bool(fn_); }
  DType default_dtype() const { return default_dtype_; }

 private:
  Fn fn_;
  DType default_dtype_ = DType::Float32;
};

// ---- constants (the key is ignored) ----

// JAX's zeros and ones are initializers themselves, not factories.
Array zeros(const Array& key, const Shape& shape, DType dtype = DType::Float32);
Array ones(const Array& key, const Shape& shape, DType dtype = DType::Float32);
// Flax's spellings of the same: zeros_init() and ones_init() return them.
Initializer zeros_init();
Initializer ones_init();
// An array full of `value` (a scalar, or an array that broadcasts to the shape).
Initializer constant(const Array& value, DType dtype = DType::Float32);

// ---- simple random ----

// uniform(key, shape, dtype) * scale: values in [0, scale).
Initializer uniform(double scale = 1e-2, DType dtype = DType::Float32);
// normal(key, shape, dtype) * stddev.
Initializer normal(double stddev = 1e-2, DType dtype = DType::Float32);
// truncated_normal(key, lower, upper, shape, dtype) * stddev: no variance correction, as
// JAX (variance_scaling applies one). Argument order as JAX's.
Initializer truncated_normal(double stddev = 1e-2, DType dtype = DType::Float32,
                             double lower = -2.0, double upper = 2.0);

// ---- variance scaling ----

// JAX's _compute_fans: (fan_in, fan_out) of a weights shape of rank >= 2. Every dim not in
// in_axis, out_axis or batch_axis belongs to the receptive field (convolution kernel
// dims), whose size multiplies both fans. Axes are an int or a list; jx::none or {} means
// no axes. Computed in double exactly as JAX does in Python floats.
std::pair<double, double> compute_fans(const Shape& shape, Axes in_axis = -2, Axes out_axis = -1,
                                       Axes batch_axis = {});

// Samples with variance scale / n, n = fan_in, fan_out or their mean (mode "fan_in",
// "fan_out", "fan_avg"), from distribution "truncated_normal" (truncated at +-2 and
// corrected by 0.87962566103423978, the stddev of a standard normal truncated there),
// "normal" or "uniform" (on [-sqrt(3 var), sqrt(3 var))). Bad mode or distribution names
// throw ValueError here, when the initializer is built.
Initializer variance_scaling(double scale, const std::string& mode,
                             const std::string& distribution, Axes in_axis = -2,
                             Axes out_axis = -1, Axes batch_axis = {},
                             DType dtype = DType::Float32);

// variance_scaling(1, "fan_avg", "uniform" / "truncated_normal").
Initializer glorot_uniform(Axes in_axis = -2, Axes out_axis = -1, Axes batch_axis = {},
                           DType dtype = DType::Float32);
Initializer glorot_normal(Axes in_axis = -2, Axes out_axis = -1, Axes batch_axis = {},
                          DType dtype = DType::Float32);
// variance_scaling(1, "fan_in", "uniform" / "truncated_normal").
Initializer lecun_uniform(Axes in_axis = -2, Axes out_axis = -1, Axes batch_axis = {},
                          DType dtype = DType::Float32);
Initializer lecun_normal(Axes in_axis = -2, Axes out_axis = -1, Axes batch_axis = {},
                         DType dtype = DType::Float32);
// variance_scaling(2, "fan_in", "uniform" / "truncated_normal").
Initializer he_uniform(Axes in_axis = -2, Axes out_axis = -1, Axes batch_axis = {},
                       DType dtype = DType::Float32);
Initializer he_normal(Axes in_axis = -2, Axes out_axis = -1, Axes batch_axis = {},
                      DType dtype = DType::Float32);

// JAX's aliases.
inline Initializer xavier_uniform(Axes in_axis = -2, Axes out_axis = -1, Axes batch_axis = {},
                                  DType dtype = DType::Float32) {
  return glorot_uniform(std::move(in_axis), std::move(out_axis), std::move(batch_axis), dtype);
}
inline Initializer xavier_normal(Axes in_axis = -2, Axes out_axis = -1, Axes batch_axis = {},
                                 DType dtype = DType::Float32) {
  return glorot_normal(std::move(in_axis), std::move(out_axis), std::move(batch_axis), dtype);
}
inline Initializer kaiming_uniform(Axes in_axis = -2, Axes out_axis = -1, Axes batch_axis = {},
                                   DType dtype = DType::Float32) {
  return he_uniform(std::move(in_axis), std::move(out_axis), std::move(batch_axis), dtype);
}
inline Initializer kaiming_normal(Axes in_axis = -2, Axes out_axis = -1, Axes batch_axis = {},
                                  DType dtype = DType::Float32) {
  return he_normal(std::move(in_axis), std::move(out_axis), std::move(batch_axis), dtype);
}

// ---- orthogonal ----

// scale * a uniformly distributed (semi-)orthogonal matrix: the columns along column_axis
// (the other dims flattened into rows) are orthonormal, or the rows when there are fewer
// of them. JAX's construction: Q of the QR of a normal matrix, signs fixed by diag(R).
// Runs eagerly (jnp::linalg::qr needs concrete arrays), so not under jit.
Initializer orthogonal(double scale = 1.0, int64_t column_axis = -1,
                       DType dtype = DType::Float32);
// For 3-D, 4-D and 5-D convolution kernels with shape[-1] >= shape[-2]: zeros except the
// spatial center, which holds orthogonal(scale, column_axis)(key, shape[-2:]).
Initializer delta_orthogonal(double scale = 1.0, int64_t column_axis = -1,
                             DType dtype = DType::Float32);

}  // namespace jx::nn::initializers
