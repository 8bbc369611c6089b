// Ahead-of-time lowering and compilation (jx/aot.h): lower().compile() agrees with jit and
// shares its cache entry, rejects other argument types, and its cost and memory analyses
// equal hand counts (FLOPs of a matmul and of convolutions with and without padding,
// bytes of arguments, outputs, intermediates and donated buffers).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "jx/jx.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;

class Aot : public ::testing::Test {
 protected:
  void SetUp() override {
    jx::clear_jit_cache();
    jx::reset_jit_stats();
  }
};

Array iota_f32(std::initializer_list<int64_t> shape, float scale) {
  jx::Shape s(shape);
  return jnp::reshape(jnp::arange(s.numel()).astype(jx::float32) * scale, s);
}

Array sin_mul_add(const Array& x, const Array& y) { return jnp::sin(x) * y + 1.0f; }

TEST_F(Aot, CompiledAgreesWithJitAndSharesItsProgram) {
  auto f = jx::jit(sin_mul_add, {.name = "sin_mul_add"});
  Array x = iota_f32({3}, 0.5f), y = iota_f32({3}, 2.0f);
  auto lowered = f.lower(x, y);
  EXPECT_EQ(jx::jit_stats().traces, 1);
  EXPECT_EQ(jx::jit_stats().compiles, 0);
  auto compiled = lowered.compile();
  EXPECT_EQ(jx::jit_stats().compiles, 1);

  Array out = compiled(x, y);
  auto v = out.to_vector<float>();
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(v[size_t(i)], std::sin(0.5f * float(i)) * (2.0f * float(i)) + 1.0f);
  // The jitted function finds the program lower() traced and compile() built.
  Array again = f(x, y);
  EXPECT_EQ(jx::jit_stats().traces, 1);
  EXPECT_EQ(jx::jit_stats().compiles, 1);
  EXPECT_EQ(again.to_vector<float>(), v);
}

TEST_F(Aot, TextShowsTheJaxprTheOptimizedProgramAndTheSource) {
  auto f = jx::jit(sin_mul_add);
  Array x = iota_f32({4}, 1.0f);
  auto lowered = f.lower(x, x);
  std::string traced = lowered.as_text();
  EXPECT_NE(traced.find("sin"), std::string::npos) << traced;
  EXPECT_NE(traced.find("f32[4]"), std::string::npos) << traced;
  std::ostringstream expected;
  expected << jx::make_jaxpr(sin_mul_add)(x, x);
  EXPECT_EQ(traced, expected.str());

  auto compiled = lowered.compile();
  std::string text = compiled.as_text();
  EXPECT_NE(text.find("optimized jaxpr:"), std::string::npos) << text;
  EXPECT_NE(text.find("kernel k0 f32[4]: broadcast_in_dim sin mul add"), std::string::npos) << text;
  std::string src = compiled.source();
  EXPECT_NE(src.find("jx_kernel_0"), std::string::npos) << src.substr(0, 400);
}

TEST_F(Aot, RejectsOtherArgumentTypesAndStaticValues) {
  auto f = jx::jit([](const Array& x, int power) { return lax::integer_pow(x, power); });
  auto compiled = f.lower(iota_f32({3}, 1.0f), 2).compile();
  EXPECT_EQ(compiled(iota_f32({3}, 1.0f), 2).to_vector<float>(), (std::vector<float>{0, 1, 4}));
  try {
    compiled(iota_f32({4}, 1.0f), 2);
    FAIL() << "no error for another shape";
  } catch (const jx::TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("f32[3] -> f32[4]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("compiled for other argument types"), std::string::npos) << e.what();
  }
  try {
    compiled(iota_f32({3}, 1.0f), 3);
    FAIL() << "no error for another static value";
  } catch (const jx::TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("static argument"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2 -> 3"), std::string::npos) << e.what();
  }
}

TEST_F(Aot, LowerRunsOutsideTransformationsOnly) {
  auto f = jx::jit([](const Array& x) { return x * x; }, {.name = "square"});
  auto g = jx::grad([&](const Array& x) {
    f.lower(x);
    return x.sum();
  });
  try {
    g(iota_f32({2}, 1.0f));
    FAIL() << "lower() under grad did not throw";
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("lower() of 'square' runs outside transformations"), std::string::npos)
        << e.what();
  }
}

TEST_F(Aot, ScalarArgumentsAreTracedAsInJit) {
  auto f = jx::jit([](const Array& x, const Array& lr) { return x - lr * x; });
  auto compiled = f.lower(iota_f32({2}, 1.0f), 0.5).compile();
  // A double converts to the weakly typed scalar the program was traced with.
  EXPECT_EQ(compiled(iota_f32({2}, 1.0f), 0.25).to_vector<float>(), (std::vector<float>{0, 0.75f}));
}

TEST_F(Aot, DonatedArgumentsAreConsumedAndAliased) {
  auto f = jx::jit([](const Array& x) { return x * 2.0f; }, {.donate_argnums = {0}});
  Array x = iota_f32({256}, 1.0f);
  auto compiled = f.lower(x).compile();
  jx::MemoryAnalysis m = compiled.memory_analysis();
  EXPECT_EQ(m.argument_bytes, 1024);
  EXPECT_EQ(m.output_bytes, 1024);
  EXPECT_EQ(m.alias_bytes, 1024);
  Array y = compiled(x);
  EXPECT_FLOAT_EQ(y.to_vector<float>()[255], 510.0f);
  EXPECT_THROW(x.to_vector<float>(), jx::Error);
}

TEST_F(Aot, CostOfAMatmulIsTwoFlopsPerMultiplyAdd) {
  auto f = jx::jit([](const Array& a, const Array& b) { return jnp::matmul(a, b); });
  auto c = f.lower(iota_f32({64, 32}, 1.0f), iota_f32({32, 16}, 1.0f)).compile().cost_analysis();
  EXPECT_EQ(c.flops, 2.0 * 64 * 32 * 16);
  EXPECT_EQ(c.transcendentals, 0.0);
  EXPECT_EQ(c.bytes_accessed, 4.0 * (64 * 32 + 32 * 16 + 64 * 16));
  ASSERT_EQ(c.steps.size(), 1u);
  EXPECT_NE(c.steps[0].step.find("dot_general"), std::string::npos) << c.steps[0].step;
}

Array conv_nhwc(const Array& x, const Array& w, const std::string& padding) {
  return lax::conv_general_dilated(x, w, {1, 1}, padding, {}, {}, {"NHWC", "HWIO", "NHWC"});
}

TEST_F(Aot, CostOfAConvolutionCountsTapsOnTheInput) {
  Array x = iota_f32({2, 8, 8, 3}, 0.01f), w = iota_f32({3, 3, 3, 4}, 0.01f);
  auto valid = jx::jit([](const Array& x, const Array& w) { return conv_nhwc(x, w, "VALID"); });
  // [2, 6, 6, 4] outputs, each 3 x 3 taps of 3 input features.
  EXPECT_EQ(valid.lower(x, w).compile().cost_analysis().flops, 2.0 * (2 * 6 * 6 * 4) * (3 * 3 * 3));
  auto same = jx::jit([](const Array& x, const Array& w) { return conv_nhwc(x, w, "SAME"); });
  // Per spatial dim, 8 outputs x 3 taps, less the first output's left tap and the last
  // output's right tap (they fall on padding): 22. Then 2 images x 4 features x 3 inputs.
  EXPECT_EQ(same.lower(x, w).compile().cost_analysis().flops, 2.0 * (2 * 4) * 3 * (22 * 22));
}

TEST_F(Aot, CostOfElementwiseCodeAndOfALoop) {
  auto f = jx::jit([](const Array& x) { return jnp::exp(x) * 2.0f + x; });
  jx::CostAnalysis c = f.lower(iota_f32({100}, 0.01f)).compile().cost_analysis();
  EXPECT_EQ(c.flops, 200.0);  // a mul and an add per element
  EXPECT_EQ(c.transcendentals, 100.0);
  EXPECT_EQ(c.bytes_accessed, 800.0);  // one fused kernel: reads x, writes the result

  auto loop = jx::jit([](const Array& x) {
    return lax::fori_loop(0, 10, [](const Array&, const Array& v) { return jnp::tanh(v) * v; }, x);
  });
  jx::CostAnalysis l = loop.lower(iota_f32({50}, 0.01f)).compile().cost_analysis();
  EXPECT_EQ(l.transcendentals, 10.0 * 50);
  EXPECT_GE(l.flops, 10.0 * 50);  // the mul, plus the loop counter's add per iteration
  EXPECT_LE(l.flops, 10.0 * 50 + 10.0 * 4);
}

TEST_F(Aot, MemoryAnalysisReplaysTheBufferPlan) {
  Array offset = iota_f32({5}, 1.0f);  // captured: a constant of the program
  auto f = jx::jit([&](const Array& x, const Array& w1, const Array& w2) {
    Array y = jnp::matmul(x, w1);              // [8, 32], an intermediate
    Array z = jnp::tanh(y);                    // [8, 32], written by a kernel while y lives
    return std::make_pair(jnp::matmul(z, w2), offset * 2.0f);  // [8, 4] and [5]
  });
  auto compiled = f.lower(iota_f32({8, 16}, 0.01f), iota_f32({16, 32}, 0.01f), iota_f32({32, 4}, 0.01f)).compile();
  jx::MemoryAnalysis m = compiled.memory_analysis();
  EXPECT_EQ(m.argument_bytes, 4 * (8 * 16 + 16 * 32 + 32 * 4));
  EXPECT_EQ(m.output_bytes, 4 * (8 * 4 + 5));
  EXPECT_EQ(m.constant_bytes, 4 * 5);
  EXPECT_EQ(m.temp_bytes, 4 * (8 * 32 + 8 * 32));
  EXPECT_EQ(m.alias_bytes, 0);
  EXPECT_GT(m.generated_code_bytes, 0);
}

}  // namespace
