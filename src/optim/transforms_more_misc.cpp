// Optax's factored RMS (optax/_src/factorized.py), parameter-block scalings, add_noise and
// ema (optax/transforms/_adding.py, _accumulation.py), clipping (_clipping.py), centralize
// and the constraints (_constraining.py). docs/optim_optimizers.md.
#include <algorithm>
#include <numeric>

#include "jx/lax.h"
#include "jx/optim/sharded.h"
#include "jx/optim/transforms_more.h"
#include "jx/random.h"
#include "transforms_more_common.h"

namespace jx::optim {

namespace jnp = jx::numpy;
using detail::field;
using more::field_like;

// ---- Adafactor's factored second moment ----

namespace {

// The two axes Adafactor factors over (second largest, largest), or none when the leaf is
// not factored. Ties keep axis order, as NumPy's argsort does on short shapes.
std::optional<std::pair<int64_t, int64_t>> factored_dims(const Shape& shape,
                                                         const FactoredRmsOptions& o) {
  if (!o.factored || shape.size() < 2) return std::nullopt;
  std::vector<int64_t> order(shape.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return shape[a] < shape[b]; });
  const int64_t d1 = order[order.size() - 2], d0 = order.back();
  if (shape[d1] < o.min_dim_size_to_factor) return std::nullopt;
  return std::make_pair(d1, d0);
}

Shape without_axis(const Shape& shape, int64_t axis) {
  Shape out;
  for (size_t i = 0; i < shape.size(); ++i)
    if (int64_t(i) != axis) out.push_back(shape[i]);
  return out;
}

// Optax's _decay_rate_pow, in float32 as Optax computes it: 1 - (step + 1)^-exponent. The
// float32 power is the correctly rounded one (through float64), not libm's vector powf, whose
// last bit differs now and then; a one-ulp change of the decay moves a float64 trajectory by
// about 1e-9.
Array decay_rate_pow(const Array& step, double exponent) {
  const Array t = step.astype(DType::Float32) + 1.0;
  const Array p =
      jnp::power(t.astype(DType::Float64), double(float(-exponent))).astype(DType::Float32);
  return 1.0 - p;
}

}  // namespace

GradientTransformation scale_by_factored_rms(const FactoredRmsOptions& o) {
  // Optax allocates these with JAX's default float dtype; jx uses each parameter's dtype,
  // which is the same for float32 parameters (and float64 ones under jax_enable_x64).
  auto placeholder = [](const Array& p) { return jnp::zeros({1}, p.dtype()); };
  return {
      [o, placeholder](const Tree& params) {
        Tree v_row = detail::map(
            [&](const Array& p) {
              auto dims = factored_dims(p.shape(), o);
              return dims ? jnp::zeros(without_axis(p.shape(), dims->second), p.dtype())
                          : placeholder(p);
            },
            params);
        Tree v_col = detail::map(
            [&](const Array& p) {
              auto dims = factored_dims(p.shape(), o);
              return dims ? jnp::zeros(without_axis(p.shape(), dims->first), p.dtype())
                          : placeholder(p);
            },
            params);
        Tree v = detail::map(
            [&](const Array& p) {
              return factored_dims(p.shape(), o) ? placeholder(p) : jnp::zeros_like(p);
            },
            params);
        return Tree{{"count", detail::zero_count()}, {"v_row", v_row}, {"v_col", v_col}, {"v", v}};
      },
      [o, placeholder](const Tree& grads, const Tree& state, const Tree& params) {
        detail::require_whole_parameters("scale_by_factored_rms");
        const char* name = "scale_by_factored_rms";
        more::need_params(params, name);
        const Array& count = field(state, "count", name).array();
        const Array step = count - int32_t(o.step_offset);
        const Array decay32 = o.decay_rate_fn ? o.decay_rate_fn(step, o.decay_rate)
                                              : decay_rate_pow(step, o.decay_rate);
        // 1 - decay in the decay's own dtype, then both promoted, as JAX evaluates
        // `decay_rate_t * v + (1. - decay_rate_t) * mean(g^2)`.
        const Array one_minus32 = 1.0 - decay32;
        auto [gl, def] = jx::tree::flatten(grads);
        std::vector<Array> rows = jx::tree::leaves(field(state, "v_row", name));
        std::vector<Array> cols = jx::tree::leaves(field(state, "v_col", name));
        std::vector<Array> vs = jx::tree::leaves(field(state, "v", name));
        std::vector<Array> ps = jx::tree::leaves(params);
        if (rows.size() != gl.size() || cols.size() != gl.size() || vs.size() != gl.size() ||
            ps.size() != gl.size())
          throw ValueError(str("[optim.", name, "] the state ", state.str(),
                               " does not match the gradients ", grads.str(),
                               "; pass the state that init returned for these params"));
        std::vector<Array> updates(gl.size()), new_rows(gl.size()), new_cols(gl.size()),
            new_vs(gl.size());
        for (size_t i = 0; i < gl.size(); ++i) {
          const Array& g = gl[i];
          const Array decay = decay32.astype(g.dtype()), one_minus = one_minus32.astype(g.dtype());
          const Array g2 = jnp::square(g) + o.epsilon;
          new_rows[i] = new_cols[i] = new_vs[i] = placeholder(g);
          if (auto dims = factored_dims(ps[i].shape(), o)) {
            const auto [d1, d0] = *dims;
            new_rows[i] = decay * rows[i] + one_minus * jnp::mean(g2, d0);
            new_cols[i] = decay * cols[i] + one_minus * jnp::mean(g2, d1);
            const int64_t reduced_d1 = d1 > d0 ? d1 - 1 : d1;
            const Array row_col_mean = jnp::mean(new_rows[i], reduced_d1, /*keepdims=*/true);
            const Array row_factor = jnp::power(new_rows[i] / row_col_mean, -0.5);
            const Array col_factor = jnp::power(new_cols[i], -0.5);
            updates[i] = g * jnp::expand_dims(row_factor, d0) * jnp::expand_dims(col_factor, d1);
          } else {
            new_vs[i] = decay * vs[i] + one_minus * g2;
            updates[i] = g * jnp::power(new_vs[i], -0.5);
          }
        }
        return std::make_pair(def.unflatten(updates), Tree{{"count", detail::safe_increment(count)},
                                                           {"v_row", def.unflatten(new_rows)},
                                                           {"v_col", def.unflatten(new_cols)},
                                                           {"v", def.unflatten(new_vs)}});
      }};
}

// ---- parameter-block scalings ----

GradientTransformation scale_by_param_block_rms(double min_scale) {
  return {[](const Tree&) { return Tree::dict(); },
          [min_scale](const Tree& updates, const Tree& state, const Tree& params) {
            detail::require_whole_parameters("scale_by_param_block_rms");
            more::need_params(params, "scale_by_param_block_rms");
            // Optax's safe_root_mean_squares: max(rms, min_scale) with a finite gradient at 0.
            Tree u = detail::map2(
                [&](const Array& g, const Array& p) {
                  const Array small = jnp::sqrt(jnp::mean(jnp::square(p))) <= min_scale;
                  const Array masked =
                      jnp::sqrt(jnp::mean(jnp::square(jnp::where(small, jnp::ones_like(p), p))));
                  return g * jnp::where(small, min_scale, masked);
                },
                updates, params);
            return std::make_pair(u, state);
          }};
}

GradientTransformation scale_by_param_block_norm(double min_scale) {
  return {[](const Tree&) { return Tree::dict(); },
          [min_scale](const Tree& updates, const Tree& state, const Tree& params) {
            detail::require_whole_parameters("scale_by_param_block_norm");
            more::need_params(params, "scale_by_param_block_norm");
            Tree u = detail::map2(
                [&](const Array& g, const Array& p) {
                  const Array small = jnp::sqrt(jnp::sum(jnp::square(p))) <= min_scale;
                  const Array masked =
                      jnp::sqrt(jnp::sum(jnp::square(jnp::where(small, jnp::ones_like(p), p))));
                  return g * jnp::where(small, min_scale, masked);
                },
                updates, params);
            return std::make_pair(u, state);
          }};
}

// ---- noise and averages ----

GradientTransformation add_noise(double eta, double gamma, const Array& key) {
  if (key.shape() != Shape{2} || key.dtype() != DType::UInt32)
    throw ValueError(
        str("[optim.add_noise] the key must be a uint32[2] key from jx::random::PRNGKey, got ",
            type_str(key.dtype(), key.shape())));
  return {[key](const Tree&) {
            return Tree{{"count", detail::zero_count()}, {"rng_key", key}};
          },
          [eta, gamma](const Tree& updates, const Tree& state, const Tree&) {
            const Array count_inc =
                detail::safe_increment(field(state, "count", "add_noise").array());
            auto [next_key, sample_key] =
                jx::random::split<2>(field(state, "rng_key", "add_noise").array());
            auto [leaves, def] = jx::tree::flatten(updates);
            // One key per leaf, in flattening order (Optax's tree_split_key_like).
            const Array keys =
                leaves.empty() ? Array() : jx::random::split(sample_key, int64_t(leaves.size()));
            for (size_t i = 0; i < leaves.size(); ++i) {
              Array& g = leaves[i];
              const Array std_dev = jnp::sqrt(eta / jnp::power(count_inc.astype(g.dtype()), gamma));
              g = g + std_dev * jx::random::normal(keys(int64_t(i)), g.shape(), g.dtype());
            }
            return std::make_pair(def.unflatten(leaves),
                                  Tree{{"count", count_inc}, {"rng_key", next_key}});
          }};
}

GradientTransformation ema(double decay, bool debias, std::optional<DType> accumulator_dtype) {
  return {[accumulator_dtype](const Tree& params) {
            return Tree{{"count", detail::zero_count()},
                        {"ema", more::zeros_like(params, accumulator_dtype)}};
          },
          [decay, debias, accumulator_dtype](const Tree& updates, const Tree& state, const Tree&) {
            Tree new_ema =
                more::update_moment(updates, field_like(state, "ema", "ema", updates), decay, 1);
            const Array count_inc = detail::safe_increment(field(state, "count", "ema").array());
            Tree u = debias ? detail::bias_correction(new_ema, decay, count_inc) : new_ema;
            return std::make_pair(
                u, Tree{{"count", count_inc}, {"ema", more::cast(new_ema, accumulator_dtype)}});
          }};
}

// ---- clipping ----

GradientTransformation clip(double max_delta) {
  return {[](const Tree&) { return Tree::dict(); },
          [max_delta](const Tree& updates, const Tree& state, const Tree&) {
            Tree u = detail::map(
                [&](const Array& g) { return jnp::clip(g, Array(-max_delta), Array(max_delta)); },
                updates);
            return std::make_pair(u, state);
          }};
}

GradientTransformation clip_by_block_rms(double threshold) {
  if (!(threshold > 0))
    throw ValueError(str("[optim.clip_by_block_rms] threshold must be > 0, got ", threshold));
  return {[](const Tree&) { return Tree::dict(); },
          [threshold](const Tree& updates, const Tree& state, const Tree&) {
            detail::require_whole_parameters("clip_by_block_rms");
            Tree u = detail::map(
                [&](const Array& g) {
                  return g / jnp::maximum(1.0, jnp::sqrt(jnp::mean(jnp::square(g))) / threshold);
                },
                updates);
            return std::make_pair(u, state);
          }};
}

namespace {

// Optax's unitwise_norm: the L2 norm of each unit, broadcast back to x's shape.
Array unitwise_norm(const Array& x, const std::optional<std::vector<int64_t>>& axis) {
  Array sq;
  if (axis) {
    sq = jnp::sum(jnp::square(x), *axis, true);
  } else if (x.squeeze().ndim() <= 1) {
    sq = jnp::sum(jnp::square(x), none, true);
  } else if (x.ndim() == 2 || x.ndim() == 3) {
    sq = jnp::sum(jnp::square(x), 0, true);  // Dense kernels (in, out) and multi-head ones
  } else if (x.ndim() == 4) {
    sq = jnp::sum(jnp::square(x), {0, 1, 2}, true);  // HWIO convolution kernels
  } else {
    throw ValueError(
        str("[optim.adaptive_grad_clip] a parameter of shape ", type_str(x.dtype(), x.shape()),
            " has no default units (ranks 1 to 4 do); pass `axis`, the axes a unit spans"));
  }
  return jnp::broadcast_to(jnp::sqrt(sq), x.shape());
}

}  // namespace

GradientTransformation adaptive_grad_clip(double clipping, double eps,
                                          std::optional<std::vector<int64_t>> axis) {
  return {[](const Tree&) { return Tree::dict(); },
          [clipping, eps, axis](const Tree& updates, const Tree& state, const Tree& params) {
            detail::require_whole_parameters("adaptive_grad_clip");
            more::need_params(params, "adaptive_grad_clip");
            Tree u = detail::map2(
                [&](const Array& g, const Array& p) {
                  const Array g_norm = unitwise_norm(g, axis);
                  const Array max_norm = jnp::maximum(unitwise_norm(p, axis), eps) * clipping;
                  // max(., 1e-6) only guards the division; where g_norm < max_norm it is unused.
                  const Array clipped = g * (max_norm / jnp::maximum(g_norm, 1e-6));
                  return jnp::where(g_norm < max_norm, g, clipped);
                },
                updates, params);
            return std::make_pair(u, state);
          }};
}

// ---- constraints and centring ----

GradientTransformation centralize() {
  return {[](const Tree&) { return Tree::dict(); },
          [](const Tree& updates, const Tree& state, const Tree&) {
            detail::require_whole_parameters("centralize");
            Tree u = detail::map(
                [](const Array& g) {
                  if (g.ndim() <= 1) return g;
                  std::vector<int64_t> axes(size_t(g.ndim() - 1));
                  std::iota(axes.begin(), axes.end(), 1);
                  return g - jnp::mean(g, axes, true);
                },
                updates);
            return std::make_pair(u, state);
          }};
}

GradientTransformation zero_nans() {
  return {[](const Tree& params) {
            return Tree{
                {"found_nan",
                 detail::map([](const Array&) { return jnp::zeros({}, DType::Bool); }, params)}};
          },
          [](const Tree& updates, const Tree&, const Tree&) {
            Tree found =
                detail::map([](const Array& g) { return jnp::any(jnp::isnan(g)); }, updates);
            Tree u = detail::map(
                [](const Array& g) { return jnp::where(jnp::isnan(g), jnp::zeros_like(g), g); },
                updates);
            return std::make_pair(u, Tree{{"found_nan", found}});
          }};
}

GradientTransformation keep_params_nonnegative() {
  return {[](const Tree&) { return Tree::dict(); },
          [](const Tree& updates, const Tree& state, const Tree& params) {
            more::need_params(params, "keep_params_nonnegative");
            Tree u = detail::map2(
                [](const Array& g, const Array& p) { return jnp::where((p + g) < 0.0, -p, g); },
                updates, params);
            return std::make_pair(u, state);
          }};
}

}  // namespace jx::optim
