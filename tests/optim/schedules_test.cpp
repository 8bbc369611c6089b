// jx::optim schedules: values at negative steps, 0, every boundary (and either side of it) and
// far past the end, against Optax's formulas re-implemented in NumPy
// (tests/golden/gen_optim_schedules.py); the same under jit and vmap; dtypes; errors.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "jx/jx.h"
#include "jx/optim/schedules.h"
#include "testing/expect_error.h"
#include "testing/golden.h"

namespace {

namespace jnp = jx::numpy;
namespace optim = jx::optim;
using jx::Array;
using jx::DType;
using jx::Shape;

const std::vector<jx::testing::NamedGolden> kGoldens = {
#include "golden/optim_schedules_golden.inc"
};

// float32 values against float64 goldens: a few float32 ulps of (1 + |value|).
constexpr double kF32 = 1e-6;

std::vector<int32_t> golden_steps() {
  for (const auto& g : kGoldens)
    if (std::string(g.name) == "steps") return std::vector<int32_t>(g.values.begin(), g.values.end());
  ADD_FAILURE() << "no steps row";
  return {};
}

// The schedules of gen_optim_schedules.py's CASES, by the same names and arguments.
std::vector<std::pair<std::string, optim::Schedule>> cases() {
  return {
      {"constant", optim::constant_schedule(0.5)},
      {"linear", optim::linear_schedule(1.0, 0.01, 100)},
      {"linear_begin", optim::linear_schedule(0.1, 1.0, 30, 10)},
      {"linear_no_steps", optim::linear_schedule(0.7, 0.1, 0)},
      {"polynomial_p2_begin5", optim::polynomial_schedule(1.0, 0.01, 2.0, 100, 5)},
      {"polynomial_p0p5_negative_begin", optim::polynomial_schedule(2.0, 0.5, 0.5, 50, -10)},
      {"exponential", optim::exponential_decay(1.0, 10, 0.5)},
      {"exponential_staircase_begin", optim::exponential_decay(1.0, 10, 0.5, 5, true)},
      {"exponential_end_floor", optim::exponential_decay(1.0, 10, 0.5, 0, false, 0.2)},
      {"exponential_growth_end_ceiling", optim::exponential_decay(0.5, 20, 2.0, 10, false, 3.0)},
      {"exponential_rate0", optim::exponential_decay(0.3, 10, 0.0)},
      {"cosine", optim::cosine_decay_schedule(1.0, 100)},
      {"cosine_alpha", optim::cosine_decay_schedule(2.0, 50, 0.1)},
      {"cosine_exponent", optim::cosine_decay_schedule(1.0, 100, 0.05, 2.0)},
      {"warmup_cosine", optim::warmup_cosine_decay_schedule(0.0, 1.0, 10, 100, 0.1)},
      {"warmup_cosine_exponent", optim::warmup_cosine_decay_schedule(0.1, 2.0, 20, 85, 0.0, 1.5)},
      {"warmup_constant", optim::warmup_constant_schedule(0.1, 1.0, 20)},
      {"warmup_exponential", optim::warmup_exponential_decay_schedule(0.0, 1.0, 10, 20, 0.5)},
      {"warmup_exponential_full",
       optim::warmup_exponential_decay_schedule(0.0, 1.0, 10, 20, 0.5, 5, true, 0.05)},
      {"piecewise_constant", optim::piecewise_constant_schedule(1.0, {{10, 0.5}, {20, 0.1}, {50, 2.0}})},
      {"piecewise_constant_empty", optim::piecewise_constant_schedule(0.25)},
      {"piecewise_linear",
       optim::piecewise_interpolate_schedule("linear", 1.0, {{10, 0.5}, {30, 0.1}, {100, 0.5}})},
      {"piecewise_cosine",
       optim::piecewise_interpolate_schedule("cosine", 1.0, {{10, 0.5}, {30, 0.1}, {100, 0.5}})},
      {"piecewise_linear_empty", optim::piecewise_interpolate_schedule("linear", 0.3)},
      {"join", optim::join_schedules({optim::constant_schedule(1.0),
                                      optim::linear_schedule(1.0, 0.0, 10),
                                      optim::constant_schedule(0.3)},
                                     {10, 30})},
      {"sgdr", optim::sgdr_schedule({{.init_value = 0.0, .peak_value = 1.0, .warmup_steps = 5,
                                      .decay_steps = 30},
                                     {.init_value = 0.1, .peak_value = 0.5, .warmup_steps = 0,
                                      .decay_steps = 20, .end_value = 0.05},
                                     {.init_value = 0.0, .peak_value = 0.2, .warmup_steps = 10,
                                      .decay_steps = 50, .exponent = 2.0}})},
      {"linear_onecycle", optim::linear_onecycle_schedule(100, 1.0)},
      {"linear_onecycle_args", optim::linear_onecycle_schedule(50, 2.0, 0.2, 0.6, 10.0, 100.0)},
      {"linear_onecycle_short", optim::linear_onecycle_schedule(1, 1.0)},
      {"cosine_onecycle", optim::cosine_onecycle_schedule(100, 1.0)},
      {"cosine_onecycle_args", optim::cosine_onecycle_schedule(30, 0.5, 0.5, 5.0, 50.0)},
  };
}

TEST(OptimSchedules, ValuesMatchOptaxFormulas) {
  const std::vector<int32_t> steps = golden_steps();
  const Array counts = jnp::array<int32_t>(steps);
  for (const auto& [name, schedule] : cases()) {
    SCOPED_TRACE(name);
    // Elementwise over an int32 array of counts ...
    Array all = schedule(counts);
    EXPECT_EQ(all.dtype(), DType::Float32);
    jx::testing::expect_named_golden(kGoldens, name, all, kF32);
    // ... and one 0-d count at a time, as an optimizer calls it.
    std::vector<float> one_by_one;
    for (int32_t s : steps) {
      Array v = schedule(jnp::array<int32_t>({s}).reshape({}));
      EXPECT_EQ(v.shape(), Shape{});
      EXPECT_EQ(v.dtype(), DType::Float32);
      one_by_one.push_back(v.item<float>());
    }
    EXPECT_EQ(one_by_one, all.to_vector<float>());
  }
}

TEST(OptimSchedules, OptaxDocstringExamples) {
  // polynomial_schedule's docstring: counts 0, 5, 6, 104, 105, 110 -> 1, 1, 0.9803, 0.0101, 0.01, 0.01.
  auto p = optim::polynomial_schedule(1.0, 0.01, 2.0, 100, 5);
  const std::vector<std::pair<int, float>> want = {{0, 1.0f},     {5, 1.0f},   {6, 0.9803f},
                                                   {104, 0.0101f}, {105, 0.01f}, {110, 0.01f}};
  for (auto [count, value] : want) EXPECT_NEAR(p(count).item<float>(), value, 5e-5) << count;
  // piecewise_constant_schedule's: {100: 0.1, 200: 0.01} gives 1, 0.1, 0.001.
  auto c = optim::piecewise_constant_schedule(1.0, {{100, 0.1}, {200, 0.01}});
  EXPECT_FLOAT_EQ(c(50).item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(c(150).item<float>(), 0.1f);
  EXPECT_FLOAT_EQ(c(250).item<float>(), 0.001f);
  // piecewise_interpolate_schedule's: linear, {4: 0.1, 8: 0.01}, steps 0, 2, ..., 10.
  auto l = optim::piecewise_interpolate_schedule("linear", 1.0, {{4, 0.1}, {8, 0.01}});
  const std::vector<float> lw = {1.0f, 0.55f, 0.1f, 0.0505f, 0.001f, 0.001f};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(l(2 * i).item<float>(), lw[size_t(i)], 1e-6) << 2 * i;
}

TEST(OptimSchedules, CppIntegersAreCounts) {
  auto s = optim::linear_schedule(1.0, 0.0, 10);
  EXPECT_FLOAT_EQ(s(5).item<float>(), 0.5f);
  EXPECT_FLOAT_EQ(s(jnp::array(5)).item<float>(), 0.5f);
  EXPECT_EQ(s(jnp::array(5)).dtype(), DType::Float32);
  // int64 counts too.
  EXPECT_FLOAT_EQ(s(jnp::array<int64_t>({7}).reshape({})).item<float>(), 0.3f);
}

TEST(OptimSchedules, JitEqualsEager) {
  // All schedules in one jitted function of a traced 0-d int32 count: traced once, then
  // every step hits the cache, and every value equals the eager one.
  const auto all = cases();
  auto evaluate_all = [&all](const Array& count) {
    std::vector<Array> out;
    for (const auto& c : all) out.push_back(c.second(count));
    return out;
  };
  auto jitted = jx::jit(evaluate_all);
  jx::reset_jit_stats();
  for (int32_t s : golden_steps()) {
    const Array count = jnp::array<int32_t>({s}).reshape({});
    std::vector<Array> got = jitted(count);
    std::vector<Array> want = evaluate_all(count);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(all[i].first + " at step " + std::to_string(s));
      EXPECT_EQ(got[i].dtype(), DType::Float32);
      // Compiled code may contract multiply-adds: a float32 ulp or two.
      EXPECT_NEAR(got[i].item<float>(), want[i].item<float>(),
                  2e-7 * (1 + std::abs(want[i].item<float>())));
    }
  }
  EXPECT_EQ(jx::jit_stats().traces, 1);
}

TEST(OptimSchedules, VmapOverCountsEqualsElementwise) {
  const Array counts = jnp::array<int32_t>(golden_steps());
  for (const auto& [name, schedule] : cases()) {
    SCOPED_TRACE(name);
    EXPECT_EQ(jx::vmap(schedule)(counts).to_vector<float>(), schedule(counts).to_vector<float>());
  }
}

using jx::testing::expect_error;

TEST(OptimSchedules, ErrorsNameTheScheduleAndTheFix) {
  expect_error<jx::ValueError>([] { optim::cosine_decay_schedule(1.0, 0); },
                               "[optim.cosine_decay_schedule] decay_steps must be positive, got 0");
  expect_error<jx::ValueError>(
      [] { optim::warmup_cosine_decay_schedule(0.0, 1.0, 100, 100); },
      "[optim.warmup_cosine_decay_schedule] decay_steps (100) must be greater than warmup_steps "
      "(100): decay_steps is the total length, warmup included");
  expect_error<jx::ValueError>(
      [] { optim::piecewise_constant_schedule(1.0, {{10, -0.5}}); },
      "[optim.piecewise_constant_schedule] expects non-negative scale factors, got -0.5 at "
      "boundary 10");
  expect_error<jx::ValueError>(
      [] { optim::piecewise_interpolate_schedule("cubic", 1.0); },
      "[optim.piecewise_interpolate_schedule] interpolate_type must be \"linear\" or \"cosine\", "
      "got \"cubic\"");
  expect_error<jx::ValueError>([] { optim::piecewise_interpolate_schedule("linear", 1.0, {{5, -1}}); },
                               "non-negative scale factors");
  expect_error<jx::ValueError>([] { optim::linear_onecycle_schedule(0, 1.0); },
                               "[optim.linear_onecycle_schedule] transition_steps must be positive");
  expect_error<jx::ValueError>([] { optim::cosine_onecycle_schedule(-3, 1.0); },
                               "[optim.cosine_onecycle_schedule] transition_steps must be positive");
  expect_error<jx::ValueError>(
      [] { optim::join_schedules({optim::constant_schedule(1.0), optim::constant_schedule(2.0)}, {}); },
      "[optim.join_schedules] needs one boundary fewer than schedules, got 2 schedules and 0 "
      "boundaries");
  expect_error<jx::ValueError>([] { optim::sgdr_schedule({}); }, "[optim.sgdr_schedule] needs at least one cycle");
}

}  // namespace
