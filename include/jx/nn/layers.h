// Flax linen's core layers, with Flax's defaults (flax/linen/linear.py, normalization.py,
// stochastic.py, pooling.py). Each layer is an aggregate of its fields whose body is
// `call`; calling it (operator()) inside a module's call runs it as a submodule (Dense_0,
// Conv_1, ...), and init/apply on it make it the root module:
//
//   x = nn::Conv{.features = 32, .kernel_size = {3, 3}}(x);         // NHWC in, HWIO kernel
//   x = nn::max_pool(x, {2, 2}, {.strides = {2, 2}});
//   x = nn::Dense{.features = 10}(x.reshape({x.shape(0), -1}));
//   x = nn::Dropout{.rate = 0.1}(x, deterministic);                 // the "dropout" stream
//   x = nn::BatchNorm{}(x, /*use_running_average=*/!train);         // "batch_stats"
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "jx/lax.h"
#include "jx/nn/initializers.h"
#include "jx/nn/module.h"

namespace jx::nn {

// y = x @ kernel + bias over the last axis. kernel (in, features), bias (features,).
struct Dense {
  int64_t features = 0;
  bool use_bias = true;
  std::optional<DType> dtype{};  // the computation dtype; none: promoted from inputs and params
  DType param_dtype = DType::Float32;
  initializers::Initializer kernel_init = initializers::lecun_normal();
  initializers::Initializer bias_init = initializers::zeros_init();
  std::optional<std::string> name{};

  Array call(const Array& inputs) const;
  JX_NN_MODULE(Dense)
};

// A convolution over inputs (batch..., spatial..., features) with a kernel
// (kernel_size..., in_features / feature_group_count, features). Strides, dilations: one
// value for every spatial dim, or one each; empty means 1. padding: "SAME" (default),
// "VALID", "CIRCULAR", "CAUSAL" (1-D), or (lo, hi) pairs. Inputs without a batch dim
// (rank = spatial dims + 1) get one for the call; several batch dims are flattened.
struct Conv {
  int64_t features = 0;
  std::vector<int64_t> kernel_size{};
  std::vector<int64_t> strides{};
  lax::Padding padding = "SAME";
  std::vector<int64_t> input_dilation{};
  std::vector<int64_t> kernel_dilation{};
  int64_t feature_group_count = 1;
  bool use_bias = true;
  std::optional<DType> dtype{};
  DType param_dtype = DType::Float32;
  initializers::Initializer kernel_init = initializers::lecun_normal();
  initializers::Initializer bias_init = initializers::zeros_init();
  std::optional<std::string> name{};

  Array call(const Array& inputs) const;
  JX_NN_MODULE(Conv)
};

// Zeroes each element with probability `rate` and scales the rest by 1 / (1 - rate); the
// mask is bernoulli(make_rng(rng_collection), 1 - rate, shape) with size-1 broadcast_dims.
// The identity when deterministic or rate == 0.
struct Dropout {
  double rate = 0.0;
  std::vector<int64_t> broadcast_dims{};
  std::optional<bool> deterministic{};
  std::string rng_collection = "dropout";
  std::optional<std::string> name{};

  // deterministic: the call's value, else the field's (one of the two must be given).
  Array call(const Array& inputs, std::optional<bool> deterministic = std::nullopt,
             std::optional<Array> rng = std::nullopt) const;
  JX_NN_MODULE(Dropout)
};

// Batch normalization over every axis but `axis` (the features). Training
// (use_running_average false): normalizes with the batch mean and the biased batch
// variance (E[x^2] - E[x]^2) and, unless initializing, updates
// batch_stats {mean, var} <- momentum * old + (1 - momentum) * batch. Evaluation: uses
// the running statistics. params {scale, bias}.
struct BatchNorm {
  std::optional<bool> use_running_average{};
  std::vector<int64_t> axis = {-1};
  double momentum = 0.99;
  double epsilon = 1e-5;
  std::optional<DType> dtype{};
  DType param_dtype = DType::Float32;
  bool use_bias = true;
  bool use_scale = true;
  initializers::Initializer bias_init = initializers::zeros_init();
  initializers::Initializer scale_init = initializers::ones_init();
  // Flax's axis_name: the batch statistics are averaged over this named axis (the devices
  // of a pmap or shard_map, a vmap's batch), so data-parallel training normalizes with the
  // global batch's statistics.
  std::optional<std::string> axis_name{};
  bool use_fast_variance = true;
  std::optional<std::string> name{};

  Array call(const Array& x, std::optional<bool> use_running_average = std::nullopt) const;
  JX_NN_MODULE(BatchNorm)
};

// Layers applied in order (Flax's Sequential): modules and plain functions (nn::relu,
// a lambda). Inside another module's call its modules are that module's submodules,
// named as if called there (Dense_0, Dense_1), as Flax names modules built in a compact
// method; as the root of init/apply they are named layers_<index> (Flax's adoption of
// the list field), which needs a layer type with a `name` field (every built-in layer
// has one).
class Sequential {
 public:
  template <class... L>
  Sequential(L... layers) {
    (layers_.push_back(wrap(std::move(layers))), ...);
  }
  Array operator()(const Array& x) const { return run(x, false); }
  Array call(const Array& x) const { return run(x, true); }
  template <class... A>
  Tree init(const Rngs& rngs, A&&... args) const {
    return detail::init_with_output(*this, rngs, std::forward<A>(args)...).second;
  }
  template <class... A>
  auto init_with_output(const Rngs& rngs, A&&... args) const {
    return detail::init_with_output(*this, rngs, std::forward<A>(args)...);
  }
  template <class... A>
  auto apply(const Tree& variables, A&&... args) const {
    return detail::apply(*this, variables, std::forward<A>(args)...);
  }
  size_t size() const { return layers_.size(); }

 private:
  // A layer called with the name it gets as the root's child (null: as it names itself).
  using Layer = std::function<Array(const Array& x, const std::string* root_name)>;
  template <class L>
  static Layer wrap(L layer) {
    return [layer = std::move(layer)](const Array& x, const std::string* root_name) -> Array {
      if constexpr (requires(L l) { l.name = std::string(); }) {
        if (root_name) {
          L named = layer;
          named.name = *root_name;
          return named(x);
        }
      }
      return layer(x);
    };
  }
  Array run(const Array& x, bool as_root) const;
  std::vector<Layer> layers_;
};

// ---- pooling (functions, as flax.linen.pooling): inputs (batch..., spatial..., features) ----
struct PoolOptions {
  std::vector<int64_t> strides;  // empty: 1 in every spatial dim
  lax::Padding padding = "VALID";
  bool count_include_pad = true;  // avg_pool only
};
Array max_pool(const Array& inputs, const std::vector<int64_t>& window_shape, const PoolOptions& options = {});
Array min_pool(const Array& inputs, const std::vector<int64_t>& window_shape, const PoolOptions& options = {});
// With count_include_pad, the window sum over the window size; without, over the number
// of non-padding elements in each window.
Array avg_pool(const Array& inputs, const std::vector<int64_t>& window_shape, const PoolOptions& options = {});
// lax.reduce_window over the spatial dims with init and a reduction (Flax's pool).
Array pool(const Array& inputs, const Array& init, const lax::WindowComputation& reduce_fn,
           const std::vector<int64_t>& window_shape, const PoolOptions& options = {});

}  // namespace jx::nn
