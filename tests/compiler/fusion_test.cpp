// Fusion: the step structure (describe()) of compiled programs, and their results against
// the interpreter (ir::eval_jaxpr) or hand-derived values.
#include "compiler/fusion.h"

#include "compiler/jit_testing.h"
#include "jx/lax.h"
#include "jx/transforms.h"

namespace {

using namespace jx;
using namespace jx::testing;
namespace jnp = jx::numpy;
using ops::Arrays;

struct Result {
  std::string steps;
  Arrays got, want;
};

Result compile_and_run(const tr::FlatFn& f, const std::vector<ops::Aval>& in, const Arrays& args) {
  ir::Jaxpr j = trace_closed(f, in);
  auto exe = compiler::compile(j, {.name = "fusion_test", .donate = {}});
  return {exe->describe(), exe->run(args), ir::eval_jaxpr(j, args)};
}

TEST(Fusion, ElementwiseChainIsOneKernel) {
  Array x = input(DType::Float32, {1001}, 1, true);
  Result r = compile_and_run(
      [](const Arrays& a) -> Arrays { return {jnp::tanh(a[0] * 1.5 + 0.5) * lax::logistic(a[0])}; },
      {aval(DType::Float32, {1001})}, {x});
  EXPECT_EQ(count_steps(r.steps, "kernel"), 1) << r.steps;
  EXPECT_EQ(count_steps(r.steps, "library"), 0) << r.steps;
  EXPECT_TRUE(close_values(r.got, r.want, 4));
}

TEST(Fusion, MatmulBiasReluIsLibraryCallPlusOneKernel) {
  Array x = input(DType::Float32, {8, 16}, 2), w = input(DType::Float32, {16, 32}, 3);
  Array b = input(DType::Float32, {32}, 4);
  Result r = compile_and_run(
      [](const Arrays& a) -> Arrays {
        Array y = lax::dot(a[0], a[1]);
        Array zero = lax::broadcast_in_dim(Array(0.0f), {8, 32}, {});
        return {lax::max(lax::add(y, lax::broadcast_in_dim(a[2], {8, 32}, {1})), zero)};
      },
      {aval(DType::Float32, {8, 16}), aval(DType::Float32, {16, 32}), aval(DType::Float32, {32})},
      {x, w, b});
  EXPECT_EQ(count_steps(r.steps, "library dot_general"), 1) << r.steps;
  EXPECT_EQ(count_steps(r.steps, "kernel"), 1) << r.steps;
  EXPECT_TRUE(close_values(r.got, r.want, 0));  // add and max are exact
}

// softmax over the last axis, written with lax ops as jax.nn.softmax lowers it.
Arrays softmax(const Arrays& a) {
  const Array& x = a[0];
  const Shape& s = x.shape();
  Array m = lax::broadcast_in_dim(lax::reduce_max(x, {1}), s, {0});
  Array e = lax::exp(lax::sub(x, m));
  Array z = lax::broadcast_in_dim(lax::reduce_sum(e, {1}), s, {0});
  return {lax::div(e, z)};
}

TEST(Fusion, SoftmaxIsOneRowKernel) {
  Array x = input(DType::Float32, {7, 33}, 5);
  Result r = compile_and_run(softmax, {aval(DType::Float32, {7, 33})}, {x});
  EXPECT_EQ(count_steps(r.steps, "kernel"), 1) << r.steps;
  EXPECT_NE(r.steps.find("reducing (1,)"), std::string::npos) << r.steps;
  EXPECT_TRUE(close_values(r.got, r.want, 0, 1e-6));
  // Independent check: every row sums to 1.
  std::vector<float> p = r.got[0].to_vector<float>();
  for (int i = 0; i < 7; ++i) {
    double sum = 0;
    for (int k = 0; k < 33; ++k) sum += p[size_t(i * 33 + k)];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST(Fusion, LogSoftmaxWithKeepdimsReshapes) {
  // log_softmax via reshapes to [n, 1] and size-1 broadcasting, as jnp lowers keepdims.
  auto f = [](const Arrays& a) -> Arrays {
    const Array& x = a[0];
    Array m = lax::reshape(lax::reduce_max(x, {1}), {5, 1});
    Array d = lax::sub(x, m);
    Array lse = lax::reshape(lax::log(lax::reduce_sum(lax::exp(d), {1})), {5, 1});
    return {lax::sub(d, lse), lax::reduce_max(x, {1})};
  };
  Array x = input(DType::Float64, {5, 129}, 6, true);
  Result r = compile_and_run(f, {aval(DType::Float64, {5, 129})}, {x});
  EXPECT_EQ(count_steps(r.steps, "kernel"), 1) << r.steps;
  EXPECT_TRUE(close_values(r.got, r.want, 0, 1e-13));
}

TEST(Fusion, BroadcastingOperandsAreIndexedNotMaterialized) {
  // [3,1] + [1,4] -> [3,4]: hand-derived integers.
  Array a = jnp::array<int32_t>({1, 2, 3}, {3, 1}), b = jnp::array<int32_t>({10, 20, 30, 40}, {1, 4});
  Result r = compile_and_run(
      [](const Arrays& in) -> Arrays {
        return {lax::mul(lax::add(in[0], in[1]), lax::broadcast_in_dim(Array(int32_t(2)), {3, 4}, {}))};
      },
      {aval(DType::Int32, {3, 1}), aval(DType::Int32, {1, 4})}, {a, b});
  EXPECT_EQ(count_steps(r.steps, "kernel"), 1) << r.steps;
  EXPECT_EQ(r.got[0].to_vector<int32_t>(),
            (std::vector<int32_t>{22, 42, 62, 82, 24, 44, 64, 84, 26, 46, 66, 86}));
}

TEST(Fusion, ColumnReductionWithEpilogue) {
  // sum over axis 0 (the reduced dim is not innermost), then sqrt of the result.
  Array x = input(DType::Float32, {17, 6}, 7);
  Result r = compile_and_run(
      [](const Arrays& a) -> Arrays { return {lax::sqrt(lax::reduce_sum(lax::mul(a[0], a[0]), {0}))}; },
      {aval(DType::Float32, {17, 6})}, {x});
  EXPECT_EQ(count_steps(r.steps, "kernel"), 1) << r.steps;
  EXPECT_TRUE(close_values(r.got, r.want, 0, 1e-6));
}

TEST(Fusion, ReshapeThatMovesElementsSplitsKernels) {
  // exp over [4,6], reshape to [3,8] (not a size-1 change), add: the reshape's operand
  // is materialized and read contiguously by the second kernel.
  Array x = input(DType::Float32, {4, 6}, 8), y = input(DType::Float32, {3, 8}, 9);
  Result r = compile_and_run(
      [](const Arrays& a) -> Arrays { return {lax::add(lax::reshape(lax::exp(a[0]), {3, 8}), a[1])}; },
      {aval(DType::Float32, {4, 6}), aval(DType::Float32, {3, 8})}, {x, y});
  EXPECT_EQ(count_steps(r.steps, "kernel"), 2) << r.steps;
  EXPECT_TRUE(close_values(r.got, r.want, 4));
}

TEST(Fusion, LayerNormIsOneKernelWithTwoPhases) {
  auto f = [](const Arrays& a) -> Arrays {
    const Array& x = a[0];
    const Array n = jnp::array(std::vector<double>{40.0}, Shape{});
    const Array eps = jnp::array(std::vector<double>{1e-5}, Shape{});
    Array mean = lax::div(lax::reduce_sum(x, {1}), lax::broadcast_in_dim(n, {6}, {}));
    Array c = lax::sub(x, lax::broadcast_in_dim(mean, {6, 40}, {0}));
    Array var = lax::div(lax::reduce_sum(lax::mul(c, c), {1}), lax::broadcast_in_dim(n, {6}, {}));
    Array inv = lax::rsqrt(lax::add(var, lax::broadcast_in_dim(eps, {6}, {})));
    return {lax::mul(c, lax::broadcast_in_dim(inv, {6, 40}, {0}))};
  };
  Array x = input(DType::Float64, {6, 40}, 10);
  Result r = compile_and_run(f, {aval(DType::Float64, {6, 40})}, {x});
  EXPECT_EQ(count_steps(r.steps, "kernel"), 1) << r.steps;
  EXPECT_TRUE(close_values(r.got, r.want, 0, 1e-12));
}

TEST(Fusion, SizeZeroAndScalarDomains) {
  Array z = input(DType::Float32, {0, 3}, 11), s = input(DType::Float32, {}, 12);
  Result r = compile_and_run(
      [](const Arrays& a) -> Arrays {
        return {lax::exp(a[0]), lax::reduce_sum(a[0], {0}), lax::add(a[1], lax::mul(a[1], a[1]))};
      },
      {aval(DType::Float32, {0, 3}), aval(DType::Float32, {})}, {z, s});
  EXPECT_TRUE(close_values(r.got, r.want, 0));
  EXPECT_EQ(r.got[1].to_vector<float>(), (std::vector<float>{0, 0, 0}));  // empty sum
}

TEST(Fusion, ValueReadByALibraryCallIsWritten) {
  // y lives in the kernel and is also sorted by a library call: the kernel writes it.
  Array x = input(DType::Float32, {4, 9}, 13);
  Result r = compile_and_run(
      [](const Arrays& a) -> Arrays {
        Array y = lax::exp(a[0]);
        return {lax::sort(y, 1), lax::add(y, lax::neg(a[0]))};
      },
      {aval(DType::Float32, {4, 9})}, {x});
  EXPECT_EQ(count_steps(r.steps, "library sort"), 1) << r.steps;
  EXPECT_EQ(count_steps(r.steps, "kernel"), 1) << r.steps;
  EXPECT_TRUE(close_values(r.got, r.want, 4));
}

TEST(Fusion, DonatedArgumentBufferBecomesTheOutput) {
  ir::Jaxpr j = trace_closed(
      [](const Arrays& a) -> Arrays { return {lax::add(a[0], lax::mul(a[1], a[1]))}; },
      {aval(DType::Float32, {64}), aval(DType::Float32, {64})});
  auto exe = compiler::compile(j, {.name = "donate", .donate = {true, false}});
  EXPECT_NE(exe->describe().find("donated argument 0 -> f32[64]"), std::string::npos) << exe->describe();
  Array p = input(DType::Float32, {64}, 14), g = input(DType::Float32, {64}, 15);
  Arrays want = ir::eval_jaxpr(j, std::vector<Array>{p, g});
  const void* p_data = detail::raw_data(p);
  Arrays got = exe->run(std::vector<Array>{p, g});
  EXPECT_EQ(detail::raw_data(got[0]), p_data);  // written in place
  EXPECT_TRUE(close_values(got, want, 0));
}

TEST(Fusion, InterpreterPlanHasOneLibraryStepPerEquation) {
  ir::Jaxpr j = trace_closed([](const Arrays& a) -> Arrays { return {lax::exp(lax::neg(a[0]))}; },
                             {aval(DType::Float32, {4})});
  compiler::FusionPlan p = compiler::fuse(j, {.kernels = false});
  EXPECT_EQ(compiler::describe(j, p), "library neg -> f32[4]\nlibrary exp -> f32[4]\n");
}

// Flax's BatchNorm in training over NHWC (statistics over N, H, W; fast variance).
Array batch_norm(const Array& x, const Array& scale, const Array& bias) {
  const std::vector<int64_t> axes = {0, 1, 2};
  Array mean = jnp::mean(x, axes, true);
  Array var = jnp::maximum(jnp::mean(jnp::square(x), axes, true) - jnp::square(mean), 0.0);
  return (x - mean) * lax::rsqrt(var + 1e-5) * scale + bias;
}

TEST(Fusion, BatchNormStatisticsAndNormalizationAreOneColumnKernel) {
  // Large enough for threads: the rows of the one block of 32 columns are split.
  const Shape s = {16, 12, 12, 32};
  Array x = input(DType::Float32, s, 30), sc = input(DType::Float32, {32}, 31), b = input(DType::Float32, {32}, 32);
  Result r = compile_and_run([](const Arrays& a) -> Arrays { return {batch_norm(a[0], a[1], a[2])}; },
                             {aval(DType::Float32, s), aval(DType::Float32, {32}), aval(DType::Float32, {32})},
                             {x, sc, b});
  EXPECT_EQ(count_steps(r.steps, "kernel"), 1) << r.steps;
  EXPECT_EQ(count_steps(r.steps, "library"), 0) << r.steps;
  EXPECT_NE(r.steps.find("reducing (0, 1, 2)"), std::string::npos) << r.steps;
  EXPECT_TRUE(close_values(r.got, r.want, 0, 1e-5));
  // Independent check: with scale 1 and bias 0 every channel has mean 0 and variance 1
  // (up to epsilon).
  Arrays unit = compile_and_run([](const Arrays& a) -> Arrays {
                                  return {batch_norm(a[0], jnp::ones({32}), jnp::zeros({32}))};
                                },
                                {aval(DType::Float32, s)}, {x}).got;
  std::vector<float> y = unit[0].to_vector<float>();
  const int64_t n = 16 * 12 * 12;
  for (int64_t c = 0; c < 32; ++c) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < n; ++i) m += y[size_t(i * 32 + c)];
    m /= double(n);
    for (int64_t i = 0; i < n; ++i) v += (y[size_t(i * 32 + c)] - m) * (y[size_t(i * 32 + c)] - m);
    EXPECT_NEAR(m, 0.0, 1e-5) << c;
    EXPECT_NEAR(v / double(n), 1.0, 1e-3) << c;
  }
}

TEST(Fusion, BatchNormGradientColumnReductionsMatchTheInterpreter) {
  for (const Shape& s : {Shape{4, 3, 5, 24}, Shape{16, 10, 10, 48}}) {
    const Shape c = {s[3]};
    Array x = input(DType::Float32, s, 33), sc = input(DType::Float32, c, 34), b = input(DType::Float32, c, 35);
    Array dy = input(DType::Float32, s, 36);
    Result r = compile_and_run(
        [](const Arrays& a) -> Arrays {
          auto loss = [](const Array& x, const Array& sc, const Array& b, const Array& dy) {
            return jnp::sum(batch_norm(x, sc, b) * dy);
          };
          auto [gx, gs, gb] = jx::grad<0, 1, 2>(loss)(a[0], a[1], a[2], a[3]);
          return {gx, gs, gb};
        },
        {aval(DType::Float32, s), aval(DType::Float32, c), aval(DType::Float32, c), aval(DType::Float32, s)},
        {x, sc, b, dy});
    // Every reduction is compiled (a reshape of the scale parameter may stay a library
    // alias).
    EXPECT_EQ(count_steps(r.steps, "library reduce"), 0) << r.steps;
    EXPECT_LE(count_steps(r.steps, "kernel"), 3) << r.steps;
    EXPECT_TRUE(close_values(r.got, r.want, 0, 2e-4)) << r.steps;
    // The bias gradient is the column sum of dy.
    std::vector<float> gb = r.got[2].to_vector<float>(), d = dy.to_vector<float>();
    const int64_t rows = s[0] * s[1] * s[2];
    for (int64_t k = 0; k < s[3]; ++k) {
      double want = 0;
      for (int64_t i = 0; i < rows; ++i) want += d[size_t(i * s[3] + k)];
      EXPECT_NEAR(gb[size_t(k)], want, 2e-4) << k;
    }
  }
}

// conv -> BatchNorm -> relu -> conv under value_and_grad, over few channels and many rows:
// the column kernel splits the rows across threads, and every thread needs the per-column
// statistics in its final pass -- computed, until a fix, by thread 0 alone (the others read
// uninitialized stack memory: NaN or garbage in a ResNet's loss).
TEST(Fusion, ConvBatchNormReluConvGradientWithRowsSplitAcrossThreads) {
  const Shape s{8, 16, 16, 16}, c{32};
  Array x = input(DType::Float32, s, 41), sc = input(DType::Float32, c, 42), b = input(DType::Float32, c, 43);
  Array w1 = input(DType::Float32, {3, 3, 16, 32}, 44), w2 = input(DType::Float32, {3, 3, 32, 32}, 45);
  Result r = compile_and_run(
      [](const Arrays& a) -> Arrays {
        auto conv = [](const Array& x, const Array& w) {
          return lax::conv_general_dilated(x, w, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"});
        };
        auto loss = [&](const Array& w1, const Array& sc, const Array& b, const Array& w2, const Array& x) {
          Array h = jnp::maximum(batch_norm(conv(x, w1), sc, b), 0.0);
          return jnp::sum(jnp::tanh(conv(h, w2)));
        };
        auto [l, g] = jx::value_and_grad<0, 1, 2, 3>(loss)(a[0], a[1], a[2], a[3], a[4]);
        auto [g1, gs, gb, g2] = g;
        return {l, g1, gs, gb, g2};
      },
      {aval(DType::Float32, {3, 3, 16, 32}), aval(DType::Float32, c), aval(DType::Float32, c),
       aval(DType::Float32, {3, 3, 32, 32}), aval(DType::Float32, s)},
      {w1, sc, b, w2, x});
  EXPECT_TRUE(close_values(r.got, r.want, 0, 2e-3)) << r.steps;
}

}  // namespace
