// The rest of Optax's gradient transformations (optax/_src/transform.py, factorized.py,
// optax/transforms/_clipping.py, _adding.py, _accumulation.py, _constraining.py), with
// Optax's defaults, formulas and state field names, so that a checkpointed state reads as
// Optax's. Each option struct mirrors the Python keyword arguments:
//
//   optim::scale_by_rms({.decay = 0.99, .eps_in_sqrt = false})   // optax.scale_by_rms(0.99,
//   eps_in_sqrt=False) optim::chain(optim::clip(1.0), optim::scale_by_belief(),
//   optim::scale(-1e-3))
//
// Per-leaf scalars derived from the step count (bias corrections, RAdam's rectification,
// add_noise's standard deviation) are computed in each leaf's dtype, which is what JAX
// computes for float32 leaves, and for float64 leaves with jax_enable_x64. docs/optim_optimizers.md
// gives every formula.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "jx/optim/transform.h"

namespace jx::optim {

// ---- rescaling by moment estimates ----

struct AdamaxOptions {
  double b1 = 0.9, b2 = 0.999, eps = 1e-8;
};
// mu = b1 mu + (1-b1) g;  nu = max(|g| + eps, b2 nu);  update = mu / (1 - b1^t) / nu.
// State {count, mu, nu}.
GradientTransformation scale_by_adamax(const AdamaxOptions& options = {});

struct AmsgradOptions {
  double b1 = 0.9, b2 = 0.999, eps = 1e-8, eps_root = 0.0;
  std::optional<DType> mu_dtype{};
  bool bias_correction_mu = true;  // false: the paper's (and no bias correction of mu)
  bool bias_correction_nu = true;  // false: the maximum is taken over the raw nu
};
// Adam whose denominator uses the running maximum of (bias-corrected) nu.
// State {count, mu, nu, nu_max}.
GradientTransformation scale_by_amsgrad(const AmsgradOptions& options = {});

struct RmsOptions {
  double decay = 0.9, eps = 1e-8;
  double initial_scale = 0.0;    // nu's starting value (PyTorch 0, TF1 1)
  bool eps_in_sqrt = true;       // 1/sqrt(nu + eps); false: 1/(sqrt(nu) + eps), PyTorch's
  bool bias_correction = false;  // divide nu (and mu) by 1 - decay^t; adds `count`
};
// updates / sqrt(nu), nu the EMA of g^2. State {nu}, or {count, nu} with bias_correction.
GradientTransformation scale_by_rms(const RmsOptions& options = {});
// updates / sqrt(nu - mu^2) (centred RMSProp). State {mu, nu}, or {count, mu, nu}.
GradientTransformation scale_by_stddev(const RmsOptions& options = {});

// Adagrad's: updates / sqrt(sum of g^2 + eps), 0 where the sum is 0. State {sum_of_squares}.
GradientTransformation scale_by_rss(double initial_accumulator_value = 0.1, double eps = 1e-7);

enum class LionMode { hard, smooth, refined };
struct LionOptions {
  double b1 = 0.9, b2 = 0.99;
  std::optional<DType> mu_dtype{};
  LionMode mode = LionMode::hard;  // sign; tanh(smooth_beta x); x where |x| < 1 else sign
  double smooth_beta = 1.0;
};
// sign(b1 mu + (1-b1) g), then mu = b2 mu + (1-b2) g. State {count, mu}.
GradientTransformation scale_by_lion(const LionOptions& options = {});

struct TrustRatioOptions {
  double min_norm = 0.0, trust_coefficient = 1.0, eps = 0.0;
};
// Per leaf: updates * trust_coefficient * |param| / (|update| + eps), norms floored at
// min_norm; ratio 1 where either norm is 0. Needs params. Empty state.
GradientTransformation scale_by_trust_ratio(const TrustRatioOptions& options = {});

struct BeliefOptions {
  double b1 = 0.9, b2 = 0.999, eps = 1e-16, eps_root = 1e-16;
  bool nesterov = false;
};
// AdaBelief: nu tracks (g - mu)^2 (+ eps_root every step). State {count, mu, nu}.
GradientTransformation scale_by_belief(const BeliefOptions& options = {});

struct YogiOptions {
  double b1 = 0.9, b2 = 0.999, eps = 1e-3, eps_root = 0.0;
  double initial_accumulator_value = 1e-6;  // both mu and nu start here
};
// nu = nu - (1-b2) sign(nu - g^2) g^2; otherwise Adam's. State {count, mu, nu}.
GradientTransformation scale_by_yogi(const YogiOptions& options = {});

struct RadamOptions {
  double b1 = 0.9, b2 = 0.999, eps = 1e-8, eps_root = 0.0, threshold = 5.0;
  bool nesterov = false;
};
// Rectified Adam: Adam times r(rho_t) once rho_t >= threshold, else the bias-corrected mu.
// State {count, mu, nu}.
GradientTransformation scale_by_radam(const RadamOptions& options = {});

struct NovogradOptions {
  double b1 = 0.9, b2 = 0.25, eps = 1e-8, eps_root = 0.0, weight_decay = 0.0;
  std::optional<DType> mu_dtype{};
};
// Layer-wise second moment: nu (a 0-d array per leaf) tracks |g|^2; mu = b1 mu +
// g / (sqrt(nu + eps_root) + eps) + weight_decay * param; update = mu. Needs params.
// State {count, mu, nu}.
GradientTransformation scale_by_novograd(const NovogradOptions& options = {});

struct FactoredRmsOptions {
  bool factored = true;
  double decay_rate = 0.8;
  int64_t step_offset = 0;
  int64_t min_dim_size_to_factor = 128;
  double epsilon = 1e-30;
  // The second-moment decay at a step; none: Adafactor's 1 - (step + 1)^-decay_rate,
  // computed in float32 as Optax's _decay_rate_pow.
  std::function<Array(const Array& step, double decay_rate)> decay_rate_fn{};
};
// Adafactor's factored second moment: a leaf whose two largest dimensions are both >=
// min_dim_size_to_factor keeps row and column means of g^2 + epsilon; others keep the
// full EMA. Needs params. State {count, v_row, v_col, v}, with Optax's (1,)-shaped
// placeholders where a leaf does not use a field.
GradientTransformation scale_by_factored_rms(const FactoredRmsOptions& options = {});

// Adadelta: updates * sqrt(e_x + eps) / sqrt(e_g + eps), e_g and e_x the EMAs of g^2 and
// of the update^2. State {e_g, e_x}.
GradientTransformation scale_by_adadelta(double rho = 0.9, double eps = 1e-6);

// updates * max(rms(param), min_scale) per leaf (Adafactor's parameter scaling). Needs params.
GradientTransformation scale_by_param_block_rms(double min_scale = 1e-3);
// updates * max(|param|, min_scale) per leaf. Needs params.
GradientTransformation scale_by_param_block_norm(double min_scale = 1e-3);

// ---- noise and averages ----

// updates + sqrt(eta / t^gamma) * N(0, 1), t the step (1, 2, ...). Each step splits the
// state's key in two (the next key, a sample key) and the sample key in one key per leaf,
// as Optax's tree_random_like, so the noise is JAX's for the same key. State {count, rng_key}.
GradientTransformation add_noise(double eta, double gamma, const Array& key);

// Exponential moving average of the updates: ema = decay ema + (1-decay) g, returned
// divided by 1 - decay^t when debias. The stored ema is cast to accumulator_dtype.
// State {count, ema}.
GradientTransformation ema(double decay, bool debias = true,
                           std::optional<DType> accumulator_dtype = std::nullopt);

// ---- clipping ----

// Each element to [-max_delta, max_delta].
GradientTransformation clip(double max_delta);
// Each leaf divided by max(1, rms(leaf) / threshold).
GradientTransformation clip_by_block_rms(double threshold);
// Unit-wise: a unit's update is scaled down to clipping * max(|param unit|, eps) when its
// norm is larger. Units: the whole leaf for vectors (and shapes that squeeze to one), axis
// 0 for rank 2 and 3, axes 0-2 for rank 4 (HWIO); other ranks need `axis`. Needs params.
GradientTransformation adaptive_grad_clip(double clipping, double eps = 1e-3,
                                          std::optional<std::vector<int64_t>> axis = std::nullopt);

// ---- constraints and centring ----

// Subtracts from a leaf of rank >= 2 its mean over every axis but the first.
GradientTransformation centralize();
// NaNs to 0; the state {found_nan} holds, per leaf, a bool: whether the last update had one.
GradientTransformation zero_nans();
// Where param + update < 0, the update becomes -param (the parameter lands on 0). Needs params.
GradientTransformation keep_params_nonnegative();

}  // namespace jx::optim
