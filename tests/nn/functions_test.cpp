// jx::nn functions: values against PyTorch / NumPy float64 goldens
// (tests/golden/gen_nn_functions.py), derivatives by check_grads (order 2, float64) away
// from kinks, JAX's custom derivatives at the kinks (hand-derived from
// jax/_src/nn/functions.py), stability, vmap and jit against eager, dtypes, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "jx/nn/functions.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"
#include "testing/golden.h"

namespace {

namespace jnp = jx::numpy;
namespace nn = jx::nn;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::check_grads;

const std::vector<jx::testing::NamedGolden> kGoldens = {
#include "golden/nn_functions_golden.inc"
};

// float64 against PyTorch's float64: libmvec's transcendentals are within a few ulps.
constexpr double kF64 = 1e-12;
// float32 against float64 goldens: a few float32 ulps of the value (or of 1 near 0).
constexpr double kF32 = 2e-6;

Array golden_input(const std::string& name) {
  for (const auto& g : kGoldens)
    if (name == g.name) return jnp::array<double>(g.values, Shape(g.shape));
  ADD_FAILURE() << "no golden named " << name;
  return Array();
}

void expect_golden(const std::string& name, const Array& x, double tol) {
  jx::testing::expect_named_golden(kGoldens, name, x, tol);
}

using Unary = std::function<Array(const Array&)>;

struct ElementwiseCase {
  const char* golden;
  Unary fn;
};

const std::vector<ElementwiseCase>& elementwise_cases() {
  static const std::vector<ElementwiseCase> cases = {
      {"relu", nn::relu},
      {"relu6", nn::relu6},
      {"sigmoid", nn::sigmoid},
      {"log_sigmoid", nn::log_sigmoid},
      {"softplus", nn::softplus},
      {"soft_sign", nn::soft_sign},
      {"silu", nn::silu},
      {"silu", nn::swish},
      {"mish", nn::mish},
      {"squareplus", [](const Array& x) { return nn::squareplus(x); }},
      {"squareplus_b1", [](const Array& x) { return nn::squareplus(x, 1.0); }},
      {"sparse_plus", nn::sparse_plus},
      {"sparse_sigmoid", nn::sparse_sigmoid},
      {"gelu_tanh", [](const Array& x) { return nn::gelu(x); }},
      {"gelu_exact", [](const Array& x) { return nn::gelu(x, false); }},
      {"elu", [](const Array& x) { return nn::elu(x); }},
      {"elu_alpha0p7", [](const Array& x) { return nn::elu(x, 0.7); }},
      {"celu", [](const Array& x) { return nn::celu(x); }},
      {"celu_alpha0p5", [](const Array& x) { return nn::celu(x, 0.5); }},
      {"selu", nn::selu},
      {"leaky_relu", [](const Array& x) { return nn::leaky_relu(x); }},
      {"leaky_relu_0p2", [](const Array& x) { return nn::leaky_relu(x, 0.2); }},
      {"hard_tanh", nn::hard_tanh},
      {"hard_sigmoid", nn::hard_sigmoid},
      {"hard_silu", nn::hard_silu},
      {"hard_silu", nn::hard_swish},
  };
  return cases;
}

TEST(NnFunctions, ElementwiseValuesMatchTorchAndNumpy) {
  const Array x64 = golden_input("input");
  for (const auto& c : elementwise_cases()) {
    SCOPED_TRACE(c.golden);
    Array y64 = c.fn(x64);
    EXPECT_EQ(y64.dtype(), DType::Float64);
    expect_golden(c.golden, y64, kF64);
    Array y32 = c.fn(x64.astype(DType::Float32));
    EXPECT_EQ(y32.dtype(), DType::Float32);
    expect_golden(c.golden, y32, kF32);
  }
}

struct MatrixCase {
  const char* golden;
  const char* input;
  Unary fn;
};

TEST(NnFunctions, ReductionValuesMatchTorchAndNumpy) {
  const std::vector<MatrixCase> cases = {
      {"softmax_axis_m1", "matrix", [](const Array& x) { return nn::softmax(x); }},
      {"softmax_axis_0", "matrix", [](const Array& x) { return nn::softmax(x, 0); }},
      {"softmax_all", "matrix", [](const Array& x) { return nn::softmax(x, jx::none); }},
      {"softmax_all", "matrix", [](const Array& x) { return nn::softmax(x, {1, 0}); }},
      {"log_softmax_axis_m1", "matrix", [](const Array& x) { return nn::log_softmax(x); }},
      {"log_softmax_axis_0", "matrix", [](const Array& x) { return nn::log_softmax(x, -2); }},
      {"log_softmax_all", "matrix", [](const Array& x) { return nn::log_softmax(x, {0, 1}); }},
      {"logsumexp_all", "matrix", [](const Array& x) { return nn::logsumexp(x); }},
      {"logsumexp_axis_1", "matrix", [](const Array& x) { return nn::logsumexp(x, 1); }},
      {"logsumexp_axis_0_keepdims", "matrix",
       [](const Array& x) { return nn::logsumexp(x, 0, true); }},
      {"logsumexp_b_axis_1", "matrix",
       [](const Array& x) {
         // b broadcasts from one row; its 0 drops the column from the sum.
         Array b = jnp::array<double>({1.0, 0.5, 2.0, 0.0, 1.0}).astype(x.dtype());
         return nn::logsumexp(x, -1, false, b);
       }},
      {"glu_axis_m1", "glu_matrix", [](const Array& x) { return nn::glu(x); }},
      {"glu_axis_0", "glu_matrix", [](const Array& x) { return nn::glu(x.T(), 0); }},
      {"standardize_axis_m1", "matrix", [](const Array& x) { return nn::standardize(x); }},
      {"standardize_axis_0", "matrix", [](const Array& x) { return nn::standardize(x, 0); }},
      {"standardize_given", "matrix",
       [](const Array& x) {
         // Given as arrays of x's dtype: two weak C++ scalars would add in float32, as in JAX.
         return nn::standardize(x, -1, jnp::full({}, 1.0, x.dtype()), jnp::full({}, 4.0, x.dtype()),
                                0.1);
       }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.golden);
    const Array x = golden_input(c.input);
    expect_golden(c.golden, c.fn(x), kF64);
    Array y32 = c.fn(x.astype(DType::Float32));
    EXPECT_EQ(y32.dtype(), DType::Float32);
    expect_golden(c.golden, y32, kF32);
  }
}

TEST(NnFunctions, OneHotGivesZeroRowsOutsideTheClasses) {
  // Indices -1 and 5 are outside [0, 4): their rows are all zero, as in JAX.
  const Array idx = jnp::array<int32_t>({{0, 3, -1}, {2, 5, 1}});
  expect_golden("one_hot_axis_m1", nn::one_hot(idx, 4), 0);
  expect_golden("one_hot_axis_0", nn::one_hot(idx, 4, DType::Float32, 0), 0);
  expect_golden("one_hot_axis_1", nn::one_hot(idx, 4, DType::Float32, -2), 0);
  EXPECT_EQ(nn::one_hot(idx, 4).dtype(), DType::Float32);
  EXPECT_EQ(nn::one_hot(idx, 4, DType::Int32).dtype(), DType::Int32);
  EXPECT_EQ(nn::one_hot(idx.astype(DType::UInt8), 4, DType::Bool).dtype(), DType::Bool);
  EXPECT_EQ(nn::one_hot(Array(2), 3).to_vector<float>(), (std::vector<float>{0, 0, 1}));
  EXPECT_EQ(nn::one_hot(idx, 0).shape(), (Shape{2, 3, 0}));
}

// ---- derivatives ----

// Points at least 0.1 away from every kink (0, +-1, +-3, 6) of the piecewise functions.
Array smooth_points() {
  return jnp::array<double>({-4.3, -2.6, -1.7, -0.55, -0.35, 0.4, 0.7, 1.3, 2.2, 4.1, 5.3, 7.2});
}

void expect_grads(const std::string& what, const Unary& f, const Array& x) {
  auto fn = [f](const std::vector<Array>& a) { return std::vector<Array>{f(a[0])}; };
  try {
    check_grads(fn, {x}, {.order = 2});
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
  }
}

TEST(NnFunctions, ElementwiseGradientsAwayFromKinks) {
  for (const auto& c : elementwise_cases()) expect_grads(c.golden, c.fn, smooth_points());
}

TEST(NnFunctions, ReductionGradients) {
  const Array m = jx::testing::rand_f64({3, 4}, 7, -2.0, 2.0);
  const Array b = jx::testing::rand_f64({3, 4}, 8, 0.5, 2.0);
  const std::vector<std::pair<std::string, Unary>> cases = {
      {"softmax", [](const Array& x) { return nn::softmax(x); }},
      {"softmax_axis0", [](const Array& x) { return nn::softmax(x, 0); }},
      {"softmax_all", [](const Array& x) { return nn::softmax(x, jx::none); }},
      {"log_softmax", [](const Array& x) { return nn::log_softmax(x); }},
      {"log_softmax_all", [](const Array& x) { return nn::log_softmax(x, {0, 1}); }},
      {"logsumexp", [](const Array& x) { return nn::logsumexp(x); }},
      {"logsumexp_axis1_keepdims", [](const Array& x) { return nn::logsumexp(x, 1, true); }},
      {"logsumexp_b", [b](const Array& x) { return nn::logsumexp(x, 0, false, b); }},
      {"glu", [](const Array& x) { return nn::glu(x); }},
      {"glu_axis0", [](const Array& x) { return nn::glu(x.T(), 0); }},
      {"standardize", [](const Array& x) { return nn::standardize(x); }},
      {"standardize_axis0", [](const Array& x) { return nn::standardize(x, 0); }},
  };
  for (const auto& [name, f] : cases) expect_grads(name, f, m);
  // logsumexp's rule also differentiates the weights b.
  auto in_b = [m](const std::vector<Array>& a) {
    return std::vector<Array>{nn::logsumexp(m, 1, false, a[0])};
  };
  check_grads(in_b, {b}, {.order = 2});
}

Array f32(float v) { return jnp::array<float>({v}).reshape({}); }

TEST(NnFunctions, ReluDerivativeIsZeroAtZero) {
  // JAX: relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, 0)); jnp.maximum alone gives 0.5.
  EXPECT_EQ(jx::grad(nn::relu)(f32(0.0f)).item<float>(), 0.0f);
  EXPECT_EQ(jx::grad(nn::relu)(f32(-0.0f)).item<float>(), 0.0f);
  EXPECT_EQ(jx::grad(nn::relu)(f32(2.0f)).item<float>(), 1.0f);
  EXPECT_EQ(jx::grad(nn::relu)(f32(-2.0f)).item<float>(), 0.0f);
  const Array xs = jnp::array<float>({-1, 0, 1e-30f, 1, 6, 7});
  EXPECT_EQ(jx::vmap(jx::grad(nn::relu))(xs).to_vector<float>(),
            (std::vector<float>{0, 0, 1, 1, 1, 1}));
  // relu6: 0 at both kinks, 0 and 6.
  EXPECT_EQ(jx::vmap(jx::grad(nn::relu6))(xs).to_vector<float>(),
            (std::vector<float>{0, 0, 1, 1, 0, 0}));
  // The rule also holds in forward mode and under jit.
  auto [y, t] = jx::jvp(nn::relu6, std::make_tuple(f32(6.0f)), std::make_tuple(f32(1.0f)));
  EXPECT_EQ(y.item<float>(), 6.0f);
  EXPECT_EQ(t.item<float>(), 0.0f);
  EXPECT_EQ(jx::jit(jx::grad(nn::relu))(f32(0.0f)).item<float>(), 0.0f);
  // hard_sigmoid = relu6(x + 3) / 6 inherits the kinks at -3 and 3.
  EXPECT_EQ(jx::grad(nn::hard_sigmoid)(f32(-3.0f)).item<float>(), 0.0f);
  EXPECT_EQ(jx::grad(nn::hard_sigmoid)(f32(3.0f)).item<float>(), 0.0f);
  EXPECT_FLOAT_EQ(jx::grad(nn::hard_sigmoid)(f32(1.0f)).item<float>(), 1.0f / 6);
  // Second derivative of relu away from 0 is 0 (the rule's select is linear in g).
  EXPECT_EQ(jx::grad(jx::grad(nn::relu))(f32(3.0f)).item<float>(), 0.0f);
}

TEST(NnFunctions, SoftmaxIsStableForLargeInputs) {
  const Array x = jnp::array<float>({1000.0f, 1001.0f});
  const double e = std::exp(1.0);
  auto y = nn::softmax(x).to_vector<float>();
  EXPECT_NEAR(y[0], 1 / (1 + e), 1e-7);
  EXPECT_NEAR(y[1], e / (1 + e), 1e-7);
  auto ly = nn::log_softmax(x).to_vector<float>();
  EXPECT_NEAR(ly[0], -std::log1p(e), 1e-6);
  EXPECT_NEAR(ly[1], -std::log1p(1 / e), 1e-6);
  EXPECT_NEAR(nn::logsumexp(x).item<float>(), 1001 + std::log1p(1 / e), 1e-4);
  // The gradient of <w, softmax(x)> is y * (w - <y, w>), finite at these magnitudes.
  const Array w = jnp::array<float>({1.0f, -2.0f});
  auto loss = [w](const Array& v) { return jnp::sum(nn::softmax(v) * w); };
  auto g = jx::grad(loss)(x).to_vector<float>();
  const double yw = y[0] * 1.0 - y[1] * 2.0;
  EXPECT_NEAR(g[0], y[0] * (1.0 - yw), 1e-6);
  EXPECT_NEAR(g[1], y[1] * (-2.0 - yw), 1e-6);
  auto lg = jx::grad([](const Array& v) { return nn::log_softmax(v)(0); })(x).to_vector<float>();
  EXPECT_NEAR(lg[0], 1 - y[0], 1e-6);
  EXPECT_NEAR(lg[1], -y[1], 1e-6);
  // -inf logits get probability 0 (and log-probability -inf).
  const Array masked = jnp::array<float>({-INFINITY, 0.0f, 0.0f});
  EXPECT_EQ(nn::softmax(masked).to_vector<float>(), (std::vector<float>{0, 0.5f, 0.5f}));
  EXPECT_EQ(nn::log_softmax(masked).to_vector<float>()[0], -INFINITY);
  EXPECT_EQ(nn::logsumexp(jnp::array<float>({-INFINITY, -INFINITY})).item<float>(), -INFINITY);
}

TEST(NnFunctions, SoftmaxRuleIsJaxs) {
  // The custom_jvp's tangent y * (t - sum(y * t)), in forward mode, for a 2-axis softmax.
  const Array x = jx::testing::rand_f64({2, 3}, 3);
  const Array t = jx::testing::rand_f64({2, 3}, 4);
  auto f = [](const Array& v) { return nn::softmax(v, {0, 1}); };
  auto [y, y_dot] = jx::jvp(f, std::make_tuple(x), std::make_tuple(t));
  Array want = y * (t - jnp::sum(y * t));
  jx::testing::expect_close(y_dot, want, 1e-15, 1e-13, "softmax tangent");
}

// ---- transformations ----

TEST(NnFunctions, VmapEqualsALoop) {
  const Array xs = jx::testing::rand_f64({4, 5}, 11, -3.0, 3.0);
  const std::vector<std::pair<std::string, Unary>> cases = {
      {"softmax", [](const Array& x) { return nn::softmax(x); }},
      {"log_softmax", [](const Array& x) { return nn::log_softmax(x); }},
      {"logsumexp", [](const Array& x) { return nn::logsumexp(x); }},
      {"standardize", [](const Array& x) { return nn::standardize(x); }},
      {"gelu", [](const Array& x) { return nn::gelu(x); }},
      {"relu6", nn::relu6},
      {"one_hot", [](const Array& x) { return nn::one_hot(jnp::floor(x).astype(DType::Int32), 3); }},
  };
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    std::vector<Array> rows;
    for (int64_t i = 0; i < 4; ++i) rows.push_back(f(xs(i)));
    jx::testing::expect_close(jx::vmap(f)(xs), jnp::stack(rows), 1e-15, 1e-14, name);
    // Batch size 0.
    EXPECT_EQ(jx::vmap(f)(jnp::zeros({0, 5}, DType::Float64)).shape()[0], 0);
  }
}

TEST(NnFunctions, JitEqualsEager) {
  const Array x = jx::testing::rand_f64({3, 4}, 12, -4.0, 4.0).astype(DType::Float32);
  const std::vector<std::pair<std::string, Unary>> cases = {
      {"softmax", [](const Array& v) { return nn::softmax(v, 0); }},
      {"log_softmax", [](const Array& v) { return nn::log_softmax(v); }},
      {"gelu_tanh", [](const Array& v) { return nn::gelu(v); }},
      {"gelu_exact", [](const Array& v) { return nn::gelu(v, false); }},
      {"elu", [](const Array& v) { return nn::elu(v, 0.5); }},
      {"standardize", [](const Array& v) { return nn::standardize(v); }},
      {"hard_silu", nn::hard_silu},
      {"relu", nn::relu},
  };
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    // The compiled kernels may contract multiply-adds: a few float32 ulps.
    jx::testing::expect_close(jx::jit(f)(x), f(x), 1e-6, 1e-6, name);
  }
}

// ---- dtypes ----

TEST(NnFunctions, DtypesFollowJax) {
  const Array i = jnp::array<int32_t>({-2, 0, 3, 7});
  // Integers stay integers where the formula is max / where only (as JAX).
  EXPECT_EQ(nn::relu(i).dtype(), DType::Int32);
  EXPECT_EQ(nn::relu(i).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 3, 7}));
  EXPECT_EQ(nn::hard_tanh(i).dtype(), DType::Int32);
  EXPECT_EQ(nn::hard_tanh(i).to_vector<int32_t>(), (std::vector<int32_t>{-1, 0, 1, 1}));
  // ... and become float32 where a float constant or an inexact op enters.
  for (const auto& f : std::vector<Unary>{
           nn::relu6, nn::softplus, nn::log_sigmoid, nn::soft_sign, nn::mish, nn::selu,
           nn::hard_sigmoid, nn::hard_silu, nn::sparse_plus,
           [](const Array& x) { return nn::gelu(x); }, [](const Array& x) { return nn::elu(x); },
           [](const Array& x) { return nn::celu(x); },
           [](const Array& x) { return nn::leaky_relu(x); },
           [](const Array& x) { return nn::softmax(x); },
           [](const Array& x) { return nn::log_softmax(x); },
           [](const Array& x) { return nn::logsumexp(x); },
           [](const Array& x) { return nn::standardize(x); }})
    EXPECT_EQ(f(i).dtype(), DType::Float32);
  EXPECT_EQ(nn::relu6(i).to_vector<float>(), (std::vector<float>{0, 0, 3, 6}));
  // Weak C++ scalars keep the array's dtype, float32 and float64 alike.
  const Array x32 = jnp::array<float>({-1.5f, 2.0f});
  EXPECT_EQ(nn::elu(x32, 2.0).dtype(), DType::Float32);
  EXPECT_EQ(nn::leaky_relu(x32, 0.3).dtype(), DType::Float32);
  EXPECT_EQ(nn::standardize(x32, -1, std::nullopt, std::nullopt, 1e-3).dtype(), DType::Float32);
  EXPECT_EQ(nn::celu(x32.astype(DType::Float64), 0.1).dtype(), DType::Float64);
  EXPECT_EQ(nn::gelu(x32.astype(DType::Float64), false).dtype(), DType::Float64);
  // A strong float64 alpha promotes, as a float64 array would in JAX.
  EXPECT_EQ(nn::elu(x32, jnp::array(1.0, DType::Float64)).dtype(), DType::Float64);
  // bfloat16 stays bfloat16.
  EXPECT_EQ(nn::gelu(x32.astype(DType::BFloat16)).dtype(), DType::BFloat16);
  EXPECT_EQ(nn::softmax(x32.astype(DType::BFloat16)).dtype(), DType::BFloat16);
}

// ---- errors ----

using jx::testing::expect_error;

TEST(NnFunctions, ErrorsNameTheFunctionTheShapesAndTheFix) {
  const Array x = jnp::zeros({2, 3});
  expect_error<jx::IndexError>([&] { nn::softmax(x, 2); },
                               "[softmax] axis 2 is out of bounds for f32[2,3] (rank 2); valid "
                               "axes are -2..1");
  expect_error<jx::IndexError>([&] { nn::log_softmax(x, -3); }, "[log_softmax] axis -3");
  expect_error<jx::ValueError>([&] { nn::log_softmax(x, {1, -1}); },
                               "[log_softmax] duplicate value in axis (1, -1)");
  expect_error<jx::IndexError>([&] { nn::logsumexp(x, 5); }, "[logsumexp] axis 5");
  expect_error<jx::ShapeError>(
      [&] { nn::logsumexp(x, 1, false, jnp::ones({4})); }, "[logsumexp] shapes f32[2,3] and f32[4]");
  expect_error<jx::IndexError>([&] { nn::standardize(x, 2); }, "[standardize] axis 2");
  expect_error<jx::IndexError>([&] { nn::softmax(Array(1.0f), 0); },
                               "[softmax] axis 0 is out of bounds: f32[] is 0-d");
  expect_error<jx::ValueError>([&] { nn::glu(x); },
                               "[glu] axis -1 of f32[2,3] has odd size 3; glu splits it into two "
                               "equal halves, so it must be even");
  expect_error<jx::IndexError>([&] { nn::glu(x, 2); }, "[glu] axis 2 is out of bounds");
  expect_error<jx::DTypeError>([&] { nn::sigmoid(jnp::array<int32_t>({1, 2, 3})); },
                               "[sigmoid] needs a floating-point input, got i32[3]");
  expect_error<jx::DTypeError>([&] { nn::silu(jnp::array<int32_t>({1})); },
                               "x.astype(jx::float32)");
  expect_error<jx::DTypeError>([&] { nn::glu(jnp::zeros({2, 4}, DType::Int32)); }, "[glu]");
  expect_error<jx::ValueError>([&] { nn::one_hot(jnp::array<int32_t>({1}), -2); },
                               "[one_hot] num_classes must be >= 0, got -2");
  expect_error<jx::IndexError>([&] { nn::one_hot(jnp::array<int32_t>({1}), 3, DType::Float32, 2); },
                               "[one_hot] axis 2 is out of bounds for the result of rank 2");
  expect_error<jx::DTypeError>([&] { nn::one_hot(jnp::array<bool>({true}), 3); },
                               "[one_hot] indices must be integers, got bool[1]");
}

}  // namespace
