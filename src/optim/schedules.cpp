// Optax's schedules (optax/schedules/_schedule.py and _join.py), formula for formula. Each
// is a closure over its (C++, static) hyper-parameters that applies jnp ops to the count, so
// it traces under jit; the order of operations and the float32 rounding points follow
// Optax's so that float32 values agree to the last ulp or two.
#include "jx/optim/schedules.h"

#include <cmath>
#include <numbers>
#include <utility>

#include "jx/error.h"
#include "jx/numpy.h"
#include "support/str.h"

namespace jx::optim {

namespace jnp = jx::numpy;

namespace {

constexpr double kPi = std::numbers::pi;

// Optax returns the Python scalar itself; an array of the count's shape serves the same
// uses and keeps every schedule elementwise in the count.
Array constant_value(const Array& count, double value) {
  return jnp::full(count.shape(), Array(value), DType::Float32);
}

void require_non_negative_scales(const char* fn, const std::map<int64_t, double>& scales) {
  for (const auto& [boundary, scale] : scales)
    if (!(scale >= 0.0))
      throw ValueError(str("[optim.", fn, "] expects non-negative scale factors, got ", scale,
                           " at boundary ", boundary,
                           "; a scale multiplies the value from its boundary on, so use a "
                           "factor >= 0 (e.g. 0.1 to divide by 10)"));
}

}  // namespace

Schedule constant_schedule(double value) {
  return [value](const Array& count) { return constant_value(count, value); };
}

Schedule polynomial_schedule(double init_value, double end_value, double power,
                             int64_t transition_steps, int64_t transition_begin) {
  // Optax logs and falls back in both cases rather than raising; so do we.
  if (transition_steps <= 0) return constant_schedule(init_value);
  if (transition_begin < 0) transition_begin = 0;
  return [=](const Array& count) {
    Array t = jnp::clip(count - transition_begin, Array(0), Array(transition_steps));
    Array frac = 1 - t / transition_steps;  // int / int: true division to float32
    // init - end is rounded to float32 first, as jnp.asarray(init) - jnp.asarray(end) is.
    return (Array(init_value) - Array(end_value)) * jnp::power(frac, Array(power)) + end_value;
  };
}

Schedule linear_schedule(double init_value, double end_value, int64_t transition_steps,
                         int64_t transition_begin) {
  return polynomial_schedule(init_value, end_value, 1.0, transition_steps, transition_begin);
}

Schedule piecewise_constant_schedule(double init_value,
                                     const std::map<int64_t, double>& boundaries_and_scales) {
  require_non_negative_scales("piecewise_constant_schedule", boundaries_and_scales);
  if (boundaries_and_scales.empty()) return constant_schedule(init_value);
  return [init_value, boundaries_and_scales](const Array& count) {
    Array v(init_value);
    // std::map iterates in boundary order, as Optax's sorted(dict.items()).
    for (const auto& [threshold, scale] : boundaries_and_scales) {
      // 1 before the boundary, 0 from it on (sign is 0 at the boundary itself).
      Array indicator = jnp::maximum(Array(0.0), jnp::sign(threshold - count));
      v = v * indicator + (1 - indicator) * scale * v;
    }
    return v;
  };
}

Schedule piecewise_interpolate_schedule(const std::string& interpolate_type, double init_value,
                                        const std::map<int64_t, double>& boundaries_and_scales) {
  const bool cosine = interpolate_type == "cosine";
  if (!cosine && interpolate_type != "linear")
    throw ValueError(str("[optim.piecewise_interpolate_schedule] interpolate_type must be "
                         "\"linear\" or \"cosine\", got \"",
                         interpolate_type, "\""));
  require_non_negative_scales("piecewise_interpolate_schedule", boundaries_and_scales);
  // Optax's bounds = (0, b_1, ...) and values = cumprod((init, s_1, ...)) in float32.
  std::vector<int64_t> bounds{0};
  std::vector<float> values{float(init_value)};
  for (const auto& [boundary, scale] : boundaries_and_scales) {
    bounds.push_back(boundary);
    values.push_back(values.back() * float(scale));
  }
  return [cosine, bounds, values](const Array& count) {
    // From the last boundary on: the last value (0 before it, and so 0 for count < 0 too).
    Array out = jnp::where(bounds.back() <= count, Array(values.back()), Array(0.0f));
    for (size_t i = 0; i + 1 < bounds.size(); ++i) {
      const int64_t size = std::max<int64_t>(bounds[i + 1] - bounds[i], 1);
      Array pct = (count - bounds[i]) / size;
      const float start = values[i], end = values[i + 1];
      Array interpolated =
          cosine ? end + Array((start - end) / 2.0f) * (jnp::cos(kPi * pct) + 1)
                 : Array(end - start) * pct + start;
      Array inside = (bounds[i] <= count) & (count < bounds[i + 1]);
      // Optax sums indicator * value (a dot); at most one interval holds count.
      out = out + jnp::where(inside, interpolated, Array(0.0f));
    }
    return out;
  };
}

Schedule exponential_decay(double init_value, int64_t transition_steps, double decay_rate,
                           int64_t transition_begin, bool staircase,
                           std::optional<double> end_value) {
  if (transition_steps <= 0 || decay_rate == 0.0) return constant_schedule(init_value);
  if (transition_begin < 0) transition_begin = 0;
  return [=](const Array& count) {
    Array decreased = count - transition_begin;
    Array p = decreased / transition_steps;
    if (staircase) p = jnp::floor(p);
    Array decayed = jnp::where(decreased <= 0, Array(init_value),
                               init_value * jnp::power(Array(decay_rate), p));
    if (end_value)  // a floor when decaying, a ceiling when growing
      decayed = decay_rate < 1.0 ? jnp::maximum(decayed, *end_value)
                                 : jnp::minimum(decayed, *end_value);
    return decayed;
  };
}

Schedule cosine_decay_schedule(double init_value, int64_t decay_steps, double alpha,
                               double exponent) {
  if (decay_steps <= 0)
    throw ValueError(str("[optim.cosine_decay_schedule] decay_steps must be positive, got ",
                         decay_steps, "; it is the number of steps over which the value decays"));
  return [=](const Array& count) {
    // Optax turns decay_steps into a Python float, so the min is in float32.
    Array t = jnp::minimum(count, Array(double(decay_steps)));
    Array cosine_decay = 0.5 * (1 + jnp::cos(kPi * t / double(decay_steps)));
    Array decayed = (1 - alpha) * jnp::power(cosine_decay, Array(exponent)) + alpha;
    return init_value * decayed;
  };
}

Schedule warmup_constant_schedule(double init_value, double peak_value, int64_t warmup_steps) {
  return linear_schedule(init_value, peak_value, warmup_steps);
}

Schedule warmup_cosine_decay_schedule(double init_value, double peak_value, int64_t warmup_steps,
                                      int64_t decay_steps, double end_value, double exponent) {
  if (decay_steps - warmup_steps <= 0)
    throw ValueError(str("[optim.warmup_cosine_decay_schedule] decay_steps (", decay_steps,
                         ") must be greater than warmup_steps (", warmup_steps,
                         "): decay_steps is the total length, warmup included, so the cosine "
                         "phase lasts decay_steps - warmup_steps steps"));
  const double alpha = peak_value == 0.0 ? 0.0 : end_value / peak_value;
  return join_schedules({linear_schedule(init_value, peak_value, warmup_steps),
                         cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha,
                                               exponent)},
                        {warmup_steps});
}

Schedule warmup_exponential_decay_schedule(double init_value, double peak_value,
                                           int64_t warmup_steps, int64_t transition_steps,
                                           double decay_rate, int64_t transition_begin,
                                           bool staircase, std::optional<double> end_value) {
  return join_schedules({linear_schedule(init_value, peak_value, warmup_steps),
                         exponential_decay(peak_value, transition_steps, decay_rate,
                                           transition_begin, staircase, end_value)},
                        {warmup_steps});
}

Schedule sgdr_schedule(const std::vector<CosineCycle>& cosine_kwargs) {
  if (cosine_kwargs.empty())
    throw ValueError("[optim.sgdr_schedule] needs at least one cycle, got none; pass e.g. "
                     "{{.init_value = 0, .peak_value = 0.1, .warmup_steps = 10, "
                     ".decay_steps = 1000}}");
  std::vector<Schedule> schedules;
  std::vector<int64_t> boundaries;
  int64_t step = 0;
  for (const CosineCycle& c : cosine_kwargs) {
    schedules.push_back(warmup_cosine_decay_schedule(c.init_value, c.peak_value, c.warmup_steps,
                                                     c.decay_steps, c.end_value, c.exponent));
    step += c.decay_steps;
    boundaries.push_back(step);
  }
  boundaries.pop_back();  // the last cycle has no end boundary
  return join_schedules(std::move(schedules), std::move(boundaries));
}

Schedule linear_onecycle_schedule(int64_t transition_steps, double peak_value, double pct_start,
                                  double pct_final, double div_factor, double final_div_factor) {
  if (transition_steps <= 0)
    throw ValueError(str("[optim.linear_onecycle_schedule] transition_steps must be positive, "
                         "got ",
                         transition_steps, "; it is the length of the whole cycle"));
  // Built as Optax's dict literal: a later key that collides with an earlier one (a short
  // cycle) replaces it.
  std::map<int64_t, double> scales;
  scales[int64_t(pct_start * double(transition_steps))] = div_factor;
  scales[int64_t(pct_final * double(transition_steps))] = 1.0 / div_factor;
  scales[transition_steps] = 1.0 / final_div_factor;
  return piecewise_interpolate_schedule("linear", peak_value / div_factor, scales);
}

Schedule cosine_onecycle_schedule(int64_t transition_steps, double peak_value, double pct_start,
                                  double div_factor, double final_div_factor) {
  if (transition_steps <= 0)
    throw ValueError(str("[optim.cosine_onecycle_schedule] transition_steps must be positive, "
                         "got ",
                         transition_steps, "; it is the length of the whole cycle"));
  std::map<int64_t, double> scales;
  scales[int64_t(pct_start * double(transition_steps))] = div_factor;
  scales[transition_steps] = 1.0 / (div_factor * final_div_factor);
  return piecewise_interpolate_schedule("cosine", peak_value / div_factor, scales);
}

Schedule join_schedules(std::vector<Schedule> schedules, std::vector<int64_t> boundaries) {
  // Optax zips the two lists and silently drops the extras; a mismatch is always a mistake.
  if (schedules.empty() || boundaries.size() + 1 != schedules.size())
    throw ValueError(str("[optim.join_schedules] needs one boundary fewer than schedules, got ",
                         schedules.size(), " schedules and ", boundaries.size(),
                         " boundaries; boundaries[i] is where schedules[i + 1] starts"));
  for (size_t i = 0; i < schedules.size(); ++i)
    if (!schedules[i])
      throw ValueError(str("[optim.join_schedules] schedules[", i, "] is empty"));
  return [schedules = std::move(schedules), boundaries = std::move(boundaries)](const Array& step) {
    Array output = schedules[0](step);
    for (size_t i = 0; i < boundaries.size(); ++i)
      output = jnp::where(step < boundaries[i], output, schedules[i + 1](step - boundaries[i]));
    return output;
  };
}

}  // namespace jx::optim
