// jx::optim schedules: Optax's (optax/schedules/_schedule.py, _join.py) with the same
// signatures, defaults and formulas, including their behaviour before the start (count < 0)
// and past the end. docs/optim_schedules_losses.md gives each formula.
//
//   optim::Schedule lr = optim::warmup_cosine_decay_schedule(0.0, 1e-3, 100, 10000);
//   Array v = lr(jnp::array(250));          // a float32 scalar
//   Array w = lr(5);                        // a C++ int is a (weak) int32 count
//
// A schedule is built from jnp ops only, with no C++ branch on the count's value, so it
// works on a traced count (under jit, grad, vmap) and elementwise on an array of counts.
// Constants (init_value, ...) enter as weak C++ scalars, as Python floats do in Optax, so an
// int32 count gives a float32 value.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jx/array.h"

namespace jx::optim {

using jx::Array;

// A schedule maps the step count (a 0-d int32 array, traced under jit) to a value (a 0-d float32 array).
using Schedule = std::function<Array(const Array& count)>;

// `value` at every step (a float32 array of count's shape).
Schedule constant_schedule(double value);

// init_value before transition_begin, then (init - end) * (1 - t / transition_steps)^power +
// end with t = clip(count - transition_begin, 0, transition_steps), end_value after.
// transition_steps <= 0 gives the constant init_value; a negative transition_begin is 0.
Schedule polynomial_schedule(double init_value, double end_value, double power,
                             int64_t transition_steps, int64_t transition_begin = 0);
// polynomial_schedule with power 1.
Schedule linear_schedule(double init_value, double end_value, int64_t transition_steps,
                         int64_t transition_begin = 0);

// init_value times every scale whose boundary is <= count. Scales must be >= 0.
Schedule piecewise_constant_schedule(double init_value,
                                     const std::map<int64_t, double>& boundaries_and_scales = {});

// Values v_0 = init_value, v_i = v_{i-1} * scale_i at boundaries b_1 < b_2 < ... (b_0 = 0),
// interpolated ("linear" or "cosine") between consecutive boundaries; v_last from the last
// boundary on. As in Optax, a negative count gives 0.
Schedule piecewise_interpolate_schedule(const std::string& interpolate_type, double init_value,
                                        const std::map<int64_t, double>& boundaries_and_scales = {});

// init_value * decay_rate^((count - transition_begin) / transition_steps) once count >
// transition_begin (init_value before), the exponent floored with staircase; end_value
// bounds it (below when decay_rate < 1, above otherwise). transition_steps <= 0 or
// decay_rate == 0 give the constant init_value; a negative transition_begin is 0.
Schedule exponential_decay(double init_value, int64_t transition_steps, double decay_rate,
                           int64_t transition_begin = 0, bool staircase = false,
                           std::optional<double> end_value = std::nullopt);

// init_value * ((1 - alpha) * (0.5 * (1 + cos(pi * t / decay_steps)))^exponent + alpha) with
// t = min(count, decay_steps) (not clipped below: Optax's cosine is even in count).
// decay_steps must be > 0.
Schedule cosine_decay_schedule(double init_value, int64_t decay_steps, double alpha = 0.0,
                               double exponent = 1.0);

// Linear from init_value to peak_value over warmup_steps, then peak_value.
Schedule warmup_constant_schedule(double init_value, double peak_value, int64_t warmup_steps);

// Linear warmup to peak_value, then cosine decay to end_value; decay_steps counts the warmup
// too (the cosine lasts decay_steps - warmup_steps, which must be > 0).
Schedule warmup_cosine_decay_schedule(double init_value, double peak_value, int64_t warmup_steps,
                                      int64_t decay_steps, double end_value = 0.0,
                                      double exponent = 1.0);

// Linear warmup to peak_value, then exponential_decay(peak_value, ...) counted from the end
// of the warmup.
Schedule warmup_exponential_decay_schedule(double init_value, double peak_value,
                                           int64_t warmup_steps, int64_t transition_steps,
                                           double decay_rate, int64_t transition_begin = 0,
                                           bool staircase = false,
                                           std::optional<double> end_value = std::nullopt);

// One cycle of sgdr_schedule: the arguments of warmup_cosine_decay_schedule (Optax passes
// them as a dict of keyword arguments).
struct CosineCycle {
  double init_value = 0.0;
  double peak_value = 0.0;
  int64_t warmup_steps = 0;
  int64_t decay_steps = 0;
  double end_value = 0.0;
  double exponent = 1.0;
};

// SGD with warm restarts: warmup_cosine_decay_schedule cycles one after another, each
// lasting its decay_steps.
Schedule sgdr_schedule(const std::vector<CosineCycle>& cosine_kwargs);

// Three linear phases: peak/div_factor up to peak_value at pct_start * transition_steps,
// back down to peak/div_factor at pct_final * transition_steps, then down to
// peak/(div_factor * final_div_factor) at transition_steps (piecewise_interpolate_schedule).
Schedule linear_onecycle_schedule(int64_t transition_steps, double peak_value,
                                  double pct_start = 0.3, double pct_final = 0.85,
                                  double div_factor = 25.0, double final_div_factor = 1e4);

// Cosine from peak/div_factor up to peak_value at pct_start * transition_steps, then down to
// peak/(div_factor * final_div_factor) at transition_steps.
Schedule cosine_onecycle_schedule(int64_t transition_steps, double peak_value,
                                  double pct_start = 0.3, double div_factor = 25.0,
                                  double final_div_factor = 1e4);

// schedules[0] before boundaries[0], then schedules[i + 1](count - boundaries[i]) from
// boundaries[i] on. Needs boundaries.size() == schedules.size() - 1.
Schedule join_schedules(std::vector<Schedule> schedules, std::vector<int64_t> boundaries);

}  // namespace jx::optim
