// Optax's moment-based rescalings (optax/_src/transform.py): adamax, amsgrad, rms, stddev,
// rss, lion, trust_ratio, belief, yogi, radam, novograd, adadelta. Formulas, defaults and
// state fields as Optax's; docs/optim_optimizers.md.
#include "jx/optim/transforms_more.h"

#include "jx/lax.h"
#include "jx/optim/sharded.h"
#include "transforms_more_common.h"

namespace jx::optim {

namespace jnp = jx::numpy;
using detail::field;
using more::field_like;
using more::update_moment;

GradientTransformation scale_by_adamax(const AdamaxOptions& o) {
  return {[](const Tree& params) {
            return Tree{{"count", detail::zero_count()},
                        {"mu", more::zeros_like(params)},
                        {"nu", more::zeros_like(params)}};
          },
          [o](const Tree& updates, const Tree& state, const Tree&) {
            const Array& count = field(state, "count", "scale_by_adamax").array();
            const Array count_inc = detail::safe_increment(count);
            Tree mu = update_moment(updates, field_like(state, "mu", "scale_by_adamax", updates),
                                    o.b1, 1);
            // The exponentially weighted infinity norm (optax.tree.update_infinity_moment).
            Tree nu = detail::map2(
                [&](const Array& g, const Array& v) {
                  return jnp::maximum(jnp::abs(g) + o.eps, v * o.b2);
                },
                updates, field_like(state, "nu", "scale_by_adamax", updates));
            Tree u = detail::map2([](const Array& m, const Array& v) { return m / v; },
                                  detail::bias_correction(mu, o.b1, count_inc), nu);
            return std::make_pair(u, Tree{{"count", count_inc}, {"mu", mu}, {"nu", nu}});
          }};
}

GradientTransformation scale_by_amsgrad(const AmsgradOptions& o) {
  return {
      [o](const Tree& params) {
        return Tree{{"count", detail::zero_count()},
                    {"mu", more::zeros_like(params, o.mu_dtype)},
                    {"nu", more::zeros_like(params)},
                    {"nu_max", more::zeros_like(params)}};
      },
      [o](const Tree& updates, const Tree& state, const Tree&) {
        const char* name = "scale_by_amsgrad";
        const Array& count = field(state, "count", name).array();
        Tree mu = update_moment(updates, field_like(state, "mu", name, updates), o.b1, 1);
        Tree nu = update_moment(updates, field_like(state, "nu", name, updates), o.b2, 2);
        const Array count_inc = detail::safe_increment(count);
        Tree mu_hat = o.bias_correction_mu ? detail::bias_correction(mu, o.b1, count_inc) : mu;
        Tree nu_eff = o.bias_correction_nu ? detail::bias_correction(nu, o.b2, count_inc) : nu;
        Tree nu_max =
            detail::map2([](const Array& a, const Array& b) { return jnp::maximum(a, b); },
                         field_like(state, "nu_max", name, updates), nu_eff);
        Tree u = detail::map2(
            [&](const Array& m, const Array& v) { return m / (jnp::sqrt(v + o.eps_root) + o.eps); },
            mu_hat, nu_max);
        return std::make_pair(u, Tree{{"count", count_inc},
                                      {"mu", more::cast(mu, o.mu_dtype)},
                                      {"nu", nu},
                                      {"nu_max", nu_max}});
      }};
}

namespace {

// 1/sqrt(nu + eps) (Optax's default, TF1's) or 1/(sqrt(nu) + eps) (PyTorch's).
Array rms_scaling(const Array& nu, const RmsOptions& o) {
  return o.eps_in_sqrt ? jx::lax::rsqrt(nu + o.eps) : 1.0 / (jnp::sqrt(nu) + o.eps);
}

}  // namespace

GradientTransformation scale_by_rms(const RmsOptions& o) {
  return {[o](const Tree& params) {
            Tree nu = more::full_like(params, o.initial_scale);
            if (o.bias_correction) return Tree{{"count", detail::zero_count()}, {"nu", nu}};
            return Tree{{"nu", nu}};
          },
          [o](const Tree& updates, const Tree& state, const Tree&) {
            Tree nu = update_moment(updates, field_like(state, "nu", "scale_by_rms", updates),
                                    o.decay, 2);
            Tree nu_hat = nu;
            Tree new_state;
            if (o.bias_correction) {
              const Array count_inc =
                  detail::safe_increment(field(state, "count", "scale_by_rms").array());
              nu_hat = detail::bias_correction(nu, o.decay, count_inc);
              new_state = Tree{{"count", count_inc}, {"nu", nu}};
            } else {
              new_state = Tree{{"nu", nu}};
            }
            Tree u =
                detail::map2([&](const Array& n, const Array& g) { return rms_scaling(n, o) * g; },
                             nu_hat, updates);
            return std::make_pair(u, new_state);
          }};
}

GradientTransformation scale_by_stddev(const RmsOptions& o) {
  return {[o](const Tree& params) {
            Tree mu = more::zeros_like(params);
            Tree nu = more::full_like(params, o.initial_scale);
            if (o.bias_correction)
              return Tree{{"count", detail::zero_count()}, {"mu", mu}, {"nu", nu}};
            return Tree{{"mu", mu}, {"nu", nu}};
          },
          [o](const Tree& updates, const Tree& state, const Tree&) {
            const char* name = "scale_by_stddev";
            Tree mu = update_moment(updates, field_like(state, "mu", name, updates), o.decay, 1);
            Tree nu = update_moment(updates, field_like(state, "nu", name, updates), o.decay, 2);
            Tree mu_hat = mu, nu_hat = nu;
            Tree new_state;
            if (o.bias_correction) {
              const Array count_inc = detail::safe_increment(field(state, "count", name).array());
              mu_hat = detail::bias_correction(mu, o.decay, count_inc);
              nu_hat = detail::bias_correction(nu, o.decay, count_inc);
              new_state = Tree{{"count", count_inc}, {"mu", mu}, {"nu", nu}};
            } else {
              new_state = Tree{{"mu", mu}, {"nu", nu}};
            }
            Tree u =
                more::map3([&](const Array& m, const Array& n,
                               const Array& g) { return rms_scaling(n - jnp::square(m), o) * g; },
                           mu_hat, nu_hat, updates);
            return std::make_pair(u, new_state);
          }};
}

GradientTransformation scale_by_rss(double initial_accumulator_value, double eps) {
  if (initial_accumulator_value < 0)
    throw ValueError(str("[optim.scale_by_rss] initial_accumulator_value must be >= 0, got ",
                         initial_accumulator_value));
  return {[initial_accumulator_value](const Tree& params) {
            return Tree{{"sum_of_squares", more::full_like(params, initial_accumulator_value)}};
          },
          [eps](const Tree& updates, const Tree& state, const Tree&) {
            Tree sos =
                detail::map2([](const Array& g, const Array& t) { return jnp::square(g) + t; },
                             updates, field_like(state, "sum_of_squares", "scale_by_rss", updates));
            // A zero sum (zero gradients so far, zero initial value) gives a zero update, not NaN.
            Tree u = detail::map2(
                [&](const Array& t, const Array& g) {
                  return jnp::where(t > 0.0, jx::lax::rsqrt(t + eps), 0.0) * g;
                },
                sos, updates);
            return std::make_pair(u, Tree{{"sum_of_squares", sos}});
          }};
}

GradientTransformation scale_by_lion(const LionOptions& o) {
  return {
      [o](const Tree& params) {
        return Tree{{"count", detail::zero_count()}, {"mu", more::zeros_like(params, o.mu_dtype)}};
      },
      [o](const Tree& updates, const Tree& state, const Tree&) {
        const Tree& mu0 = field_like(state, "mu", "scale_by_lion", updates);
        Tree u = detail::map2(
            [&](const Array& g, const Array& m) {
              Array x = g * (1.0 - o.b1) + m * o.b1;
              switch (o.mode) {
                case LionMode::smooth:
                  return jnp::tanh(x * o.smooth_beta);
                case LionMode::refined:
                  return jnp::where(jnp::abs(x) < 1.0, x, jnp::sign(x));
                case LionMode::hard:
                  break;
              }
              return jnp::sign(x);
            },
            updates, mu0);
        Tree mu = more::cast(update_moment(updates, mu0, o.b2, 1), o.mu_dtype);
        const Array count_inc =
            detail::safe_increment(field(state, "count", "scale_by_lion").array());
        return std::make_pair(u, Tree{{"count", count_inc}, {"mu", mu}});
      }};
}

namespace {

// Optax's numerics.safe_norm(x, min_norm): max(|x|, min_norm) with a finite gradient at 0.
Array safe_norm(const Array& x, double min_norm) {
  const Array norm = jnp::sqrt(jnp::sum(jnp::square(x)));
  const Array small = norm <= min_norm;
  const Array masked = jnp::sqrt(jnp::sum(jnp::square(jnp::where(small, jnp::ones_like(x), x))));
  return jnp::where(small, min_norm, masked);
}

}  // namespace

GradientTransformation scale_by_trust_ratio(const TrustRatioOptions& o) {
  return {[](const Tree&) { return Tree::dict(); },
          [o](const Tree& updates, const Tree& state, const Tree& params) {
            detail::require_whole_parameters("scale_by_trust_ratio");
            more::need_params(params, "scale_by_trust_ratio");
            Tree u = detail::map2(
                [&](const Array& g, const Array& p) {
                  const Array param_norm = safe_norm(p, o.min_norm);
                  const Array update_norm = safe_norm(g, o.min_norm);
                  const Array ratio = param_norm * o.trust_coefficient / (update_norm + o.eps);
                  // A zero parameter or update norm would freeze the parameter: ratio 1 there.
                  const Array zero = jnp::logical_or(param_norm == 0.0, update_norm == 0.0);
                  return g * jnp::where(zero, 1.0, ratio);
                },
                updates, params);
            return std::make_pair(u, state);
          }};
}

GradientTransformation scale_by_belief(const BeliefOptions& o) {
  return {[](const Tree& params) {
            return Tree{{"count", detail::zero_count()},
                        {"mu", more::zeros_like(params)},
                        {"nu", more::zeros_like(params)}};
          },
          [o](const Tree& updates, const Tree& state, const Tree&) {
            const char* name = "scale_by_belief";
            Tree mu = update_moment(updates, field_like(state, "mu", name, updates), o.b1, 1);
            Tree prediction_error =
                detail::map2([](const Array& g, const Array& m) { return g - m; }, updates, mu);
            Tree nu =
                update_moment(prediction_error, field_like(state, "nu", name, updates), o.b2, 2);
            nu = detail::map([&](const Array& v) { return v + o.eps_root; }, nu);
            const Array count_inc = detail::safe_increment(field(state, "count", name).array());
            Tree u = detail::map2(
                [&](const Array& m, const Array& v) { return m / (jnp::sqrt(v) + o.eps); },
                more::mu_hat(mu, updates, o.b1, count_inc, o.nesterov),
                detail::bias_correction(nu, o.b2, count_inc));
            return std::make_pair(u, Tree{{"count", count_inc}, {"mu", mu}, {"nu", nu}});
          }};
}

GradientTransformation scale_by_yogi(const YogiOptions& o) {
  return {
      [o](const Tree& params) {
        return Tree{{"count", detail::zero_count()},
                    {"mu", more::full_like(params, o.initial_accumulator_value)},
                    {"nu", more::full_like(params, o.initial_accumulator_value)}};
      },
      [o](const Tree& updates, const Tree& state, const Tree&) {
        const char* name = "scale_by_yogi";
        Tree mu = update_moment(updates, field_like(state, "mu", name, updates), o.b1, 1);
        // Yogi's additive update: nu moves towards g^2 by at most (1 - b2) g^2.
        Tree nu = detail::map2(
            [&](const Array& g, const Array& v) {
              const Array g2 = jnp::square(g);
              return v - jnp::sign(v - g2) * (1.0 - o.b2) * g2;
            },
            updates, field_like(state, "nu", name, updates));
        const Array count_inc = detail::safe_increment(field(state, "count", name).array());
        Tree u = detail::map2(
            [&](const Array& m, const Array& v) { return m / (jnp::sqrt(v + o.eps_root) + o.eps); },
            detail::bias_correction(mu, o.b1, count_inc),
            detail::bias_correction(nu, o.b2, count_inc));
        return std::make_pair(u, Tree{{"count", count_inc}, {"mu", mu}, {"nu", nu}});
      }};
}

GradientTransformation scale_by_radam(const RadamOptions& o) {
  return {[](const Tree& params) {
            return Tree{{"count", detail::zero_count()},
                        {"mu", more::zeros_like(params)},
                        {"nu", more::zeros_like(params)}};
          },
          [o](const Tree& updates, const Tree& state, const Tree&) {
            const char* name = "scale_by_radam";
            Tree mu = update_moment(updates, field_like(state, "mu", name, updates), o.b1, 1);
            Tree nu = update_moment(updates, field_like(state, "nu", name, updates), o.b2, 2);
            const Array count_inc = detail::safe_increment(field(state, "count", name).array());
            // The length of the approximated SMA, rho_t, and its limit rho_inf (Liu et al.).
            const double ro_inf = 2.0 / (1.0 - o.b2) - 1.0;
            const double ro_inf_factor = (ro_inf - 4.0) * (ro_inf - 2.0);
            Tree u = detail::map2(
                [&](const Array& m, const Array& v) {
                  const Array t = count_inc.astype(m.dtype());
                  const Array b2t = jnp::power(o.b2, t);
                  const Array ro = ro_inf - t * 2.0 * b2t / (1.0 - b2t);
                  // NaN for rho_t < 4, but then the where below takes the other branch.
                  const Array r =
                      jnp::sqrt((ro - 4.0) * (ro - 2.0) * ro_inf / (ro * ro_inf_factor));
                  const Array rectified = r * m / (jnp::sqrt(v + o.eps_root) + o.eps);
                  return jnp::where(ro >= o.threshold, rectified, m);
                },
                more::mu_hat(mu, updates, o.b1, count_inc, o.nesterov),
                detail::bias_correction(nu, o.b2, count_inc));
            return std::make_pair(u, Tree{{"count", count_inc}, {"mu", mu}, {"nu", nu}});
          }};
}

GradientTransformation scale_by_novograd(const NovogradOptions& o) {
  return {
      [o](const Tree& params) {
        return Tree{
            {"count", detail::zero_count()},
            {"mu", more::zeros_like(params, o.mu_dtype)},
            // One second moment per leaf (layer-wise), a 0-d array.
            {"nu", detail::map([](const Array& p) { return jnp::zeros({}, p.dtype()); }, params)}};
      },
      [o](const Tree& updates, const Tree& state, const Tree& params) {
        detail::require_whole_parameters("scale_by_novograd");
        const char* name = "scale_by_novograd";
        more::need_params(params, name);
        const Array count_inc = detail::safe_increment(field(state, "count", name).array());
        // The first step initializes the moments with the step's values instead of
        // decaying from zero (Optax's lax.cond on count == 1; here a select).
        const Array first = count_inc == 1;
        Tree nu = detail::map2(
            [&](const Array& g, const Array& n) {
              const Array norm2 = jnp::square(jnp::sqrt(jnp::sum(jnp::square(g))));
              return jnp::where(first, norm2.astype(n.dtype()), norm2 * (1.0 - o.b2) + n * o.b2);
            },
            updates, detail::field(state, "nu", name));
        Tree mu = more::map3(
            [&](const Array& g, const Array& p, const Array& n) {
              return g / (jnp::sqrt(n + o.eps_root) + o.eps) + p * o.weight_decay;
            },
            updates, params, nu);
        mu = detail::map2(
            [&](const Array& m0, const Array& a) { return jnp::where(first, a, m0 * o.b1 + a); },
            field_like(state, "mu", name, updates), mu);
        mu = more::cast(mu, o.mu_dtype);
        return std::make_pair(mu, Tree{{"count", count_inc}, {"mu", mu}, {"nu", nu}});
      }};
}

GradientTransformation scale_by_adadelta(double rho, double eps) {
  return {[](const Tree& params) {
            return Tree{{"e_g", more::zeros_like(params)}, {"e_x", more::zeros_like(params)}};
          },
          [rho, eps](const Tree& updates, const Tree& state, const Tree&) {
            const Tree& e_x0 = field_like(state, "e_x", "scale_by_adadelta", updates);
            Tree e_g = update_moment(
                updates, field_like(state, "e_g", "scale_by_adadelta", updates), rho, 2);
            Tree u = more::map3(
                [&](const Array& g, const Array& cur_e_g, const Array& prev_e_x) {
                  return (jnp::sqrt(prev_e_x + eps) / jnp::sqrt(cur_e_g + eps)) * g;
                },
                updates, e_g, e_x0);
            Tree e_x = update_moment(u, e_x0, rho, 2);
            return std::make_pair(u, Tree{{"e_g", e_g}, {"e_x", e_x}});
          }};
}

}  // namespace jx::optim
