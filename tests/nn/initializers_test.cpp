// jx::nn::initializers against two independent sources:
//  - tests/golden/gen_nn_initializers.py, which re-derives JAX's initializers from their
//    published algorithms (threefry2x32, jax.random's bit constructions, each
//    initializer's formula) in NumPy, without jx. Its erfinv is PyTorch's float64 one,
//    where JAX (and jx) evaluate XLA's float32 polynomial, so values may differ in the last
//    bits: the comparison allows a few ulps of the dtype.
//  - the values printed in JAX's own docstrings (jax/_src/nn/initializers.py) for
//    PRNGKey(42), which JAX computed in its legacy PRNG mode (threefry_partitionable=False).
// Plus fans of conv kernels, orthogonality, constant initializers' dtypes, jit, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "jx/config.h"
#include "jx/jx.h"
#include "jx/nn/initializers.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"
#include "testing/golden.h"

namespace {

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace init = jx::nn::initializers;
using init::Initializer;
using jx::Array;
using jx::DType;
using jx::Shape;

const std::vector<jx::testing::NamedGolden> kGoldens = {
#include "golden/nn_initializers_golden.inc"
};

const jx::testing::NamedGolden& golden(const std::string& name) {
  for (const auto& g : kGoldens)
    if (name == g.name) return g;
  throw std::runtime_error("no golden named " + name);
}

// The generator's initializers, by the names its rows use.
const std::map<std::string, Initializer>& initializers_by_name() {
  static const std::map<std::string, Initializer> m = {
      {"uniform", init::uniform()},
      {"uniform_10", init::uniform(10.0)},
      {"normal", init::normal()},
      {"normal_5", init::normal(5.0)},
      {"truncated_normal", init::truncated_normal()},
      {"truncated_normal_5_m1_3", init::truncated_normal(5.0, DType::Float32, -1.0, 3.0)},
      {"glorot_uniform", init::glorot_uniform()},
      {"glorot_normal", init::glorot_normal()},
      {"lecun_uniform", init::lecun_uniform()},
      {"lecun_normal", init::lecun_normal()},
      {"he_uniform", init::he_uniform()},
      {"he_normal", init::he_normal()},
      {"vs_fan_out_normal", init::variance_scaling(0.5, "fan_out", "normal")},
      {"vs_batch_axis", init::variance_scaling(1.0, "fan_in", "uniform", -2, -1, {0})},
      {"vs_multi_axes", init::variance_scaling(3.0, "fan_avg", "normal", {0, 1}, -1)},
      {"orthogonal", init::orthogonal()},
      {"orthogonal_2_axis0", init::orthogonal(2.0, 0)},
      {"delta_orthogonal", init::delta_orthogonal()},
  };
  return m;
}

struct Case {
  const char* init;
  uint32_t seed;
  Shape shape;
  DType dtype;
};

// The generator's CASES, in the same order.
const std::vector<Case> kCases = {
    {"uniform", 0, {3, 4}, DType::Float32},
    {"uniform", 1701, {5}, DType::Float64},
    {"uniform_10", 42, {2, 3}, DType::Float32},
    {"normal", 0, {3, 4}, DType::Float32},
    {"normal", 1701, {2, 5}, DType::Float64},
    {"normal_5", 42, {2, 3}, DType::Float32},
    {"truncated_normal", 0, {4, 3}, DType::Float32},
    {"truncated_normal", 7, {6}, DType::Float64},
    {"truncated_normal_5_m1_3", 42, {2, 3}, DType::Float32},
    {"glorot_uniform", 42, {2, 3}, DType::Float32},
    {"glorot_uniform", 3, {3, 3, 2, 4}, DType::Float32},
    {"glorot_normal", 42, {2, 3}, DType::Float32},
    {"glorot_normal", 5, {4, 6}, DType::Float64},
    {"lecun_uniform", 42, {2, 3}, DType::Float32},
    {"lecun_normal", 42, {2, 3}, DType::Float32},
    {"lecun_normal", 11, {3, 3, 1, 8}, DType::Float32},
    {"he_uniform", 42, {2, 3}, DType::Float32},
    {"he_uniform", 2, {5, 7}, DType::Float64},
    {"he_normal", 42, {2, 3}, DType::Float32},
    {"he_normal", 9, {2, 2, 3, 4}, DType::Float32},
    {"vs_fan_out_normal", 4, {6, 2}, DType::Float32},
    {"vs_batch_axis", 8, {2, 3, 4}, DType::Float32},
    {"vs_multi_axes", 6, {2, 3, 5}, DType::Float32},
    {"orthogonal", 42, {2, 3}, DType::Float32},
    {"orthogonal", 1, {5, 3}, DType::Float32},
    {"orthogonal", 2, {4, 4}, DType::Float64},
    {"orthogonal", 3, {2, 3, 4}, DType::Float32},
    {"orthogonal_2_axis0", 4, {3, 5}, DType::Float32},
    {"delta_orthogonal", 42, {3, 3, 3}, DType::Float32},
    {"delta_orthogonal", 5, {3, 3, 2, 4}, DType::Float32},
};

// "3x3x1x32", as the generator joins dims.
std::string dims_str(const Shape& shape) {
  std::ostringstream os;
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? "x" : "") << shape[i];
  return os.str();
}

std::string golden_name(const Case& c) {
  std::ostringstream os;
  os << c.init << "_" << c.seed << "_" << dims_str(c.shape) << "_" << jx::dtype_name(c.dtype);
  return os.str();
}

// |got - want| <= ulps * eps(dtype) * (|want| + max|row|): a few ulps of each value, and
// of the row's scale for values that land near 0 (u * (b - a) + a cancels there, and an
// FMA-contracted u moves them by an ulp of the scale).
void expect_within_ulps(const Array& got, const jx::testing::NamedGolden& want, double ulps,
                        const std::string& what) {
  ASSERT_EQ(got.shape(), Shape(want.shape)) << what;
  const double eps = jx::finfo(got.dtype()).eps;
  double scale = 0;
  for (double v : want.values) scale = std::max(scale, std::abs(v));
  const auto v = got.to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i)
    ASSERT_NEAR(v[i], want.values[i], ulps * eps * (std::abs(want.values[i]) + scale))
        << what << " [" << i << "]";
}

TEST(NnInitializers, SameValuesAsJaxForTheSameKey) {
  for (const Case& c : kCases) {
    const std::string name = golden_name(c);
    SCOPED_TRACE(name);
    const Array out = initializers_by_name().at(c.init)(jr::PRNGKey(c.seed), c.shape, c.dtype);
    EXPECT_EQ(out.dtype(), c.dtype);
    // QR in a different LAPACK order (and float32 vs float64) moves orthogonal's values
    // by more than the samplers' ulps.
    const bool qr = std::string(c.init).find("orthogonal") != std::string::npos;
    expect_within_ulps(out, golden(name), qr ? 64 : 4, name);
  }
}

// Printed by JAX's docstrings for initializer(jax.random.PRNGKey(42), shape, jnp.float32),
// computed by JAX in its legacy PRNG mode (the generator reproduces them in that mode).
TEST(NnInitializers, ReproduceJaxDocstringsInTheLegacyPrngMode) {
  jx::config::Scoped legacy(jx::config::threefry_partitionable, false);
  const Array key = jr::PRNGKey(42);
  struct Doc {
    const char* what;
    Initializer fn;
    std::vector<double> values;
  };
  const std::vector<Doc> docs = {
      {"uniform(10.0)", init::uniform(10.0),
       {7.298188, 8.691938, 8.7230015, 2.0818567, 1.8662417, 5.5022564}},
      {"normal(5.0)", init::normal(5.0),
       {3.0613258, 5.6129413, 5.6866574, -4.063663, -4.4520254, 0.63115686}},
      {"truncated_normal(5.0)", init::truncated_normal(5.0),
       {2.9047365, 5.2338114, 5.29852, -3.836303, -4.192359, 0.6022964}},
      {"glorot_uniform()", init::glorot_uniform(),
       {0.50350785, 0.8088631, 0.81566876, -0.6393332, -0.6865721, 0.11003882}},
      {"glorot_normal()", init::glorot_normal(),
       {0.41770416, 0.75262755, 0.7619329, -0.5516644, -0.6028657, 0.08661086}},
      {"lecun_uniform()", init::lecun_uniform(),
       {0.56293887, 0.90433645, 0.9119454, -0.71479625, -0.7676109, 0.12302713}},
      {"lecun_normal()", init::lecun_normal(),
       {0.46700746, 0.8414632, 0.8518669, -0.61677957, -0.67402434, 0.09683388}},
      {"he_uniform()", init::he_uniform(),
       {0.79611576, 1.2789248, 1.2896855, -1.0108745, -1.0855657, 0.17398663}},
      {"he_normal()", init::he_normal(),
       {0.6604483, 1.1900088, 1.2047218, -0.87225807, -0.95321447, 0.1369438}},
      {"orthogonal()", init::orthogonal(),
       {3.9026976e-01, 7.2495741e-01, -5.6756169e-01, 8.8047469e-01, -4.7409311e-01,
        -1.3157725e-04}},
  };
  for (const Doc& d : docs) {
    SCOPED_TRACE(d.what);
    const auto v = d.fn(key, {2, 3}).to_vector<double>();
    ASSERT_EQ(v.size(), d.values.size());
    // Docstrings print 8 significant digits; orthogonal's QR adds its own rounding.
    for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], d.values[i], 1e-6 + 2e-7 * std::abs(d.values[i]));
  }
  // delta_orthogonal()(key, (3, 3, 3)): zero except the center slice.
  const Array w = init::delta_orthogonal()(key, {3, 3, 3});
  const std::vector<double> center = {0.27858758,  -0.7949833, -0.53887904, 0.9120717, 0.04322892,
                                      0.40774566, -0.30085585, -0.6050892, 0.73712474};
  const auto c = w(1).to_vector<double>();
  for (size_t i = 0; i < c.size(); ++i) EXPECT_NEAR(c[i], center[i], 1e-6);
  EXPECT_EQ(jnp::sum(jnp::abs(w(0))).item<float>(), 0.0f);
  EXPECT_EQ(jnp::sum(jnp::abs(w(2))).item<float>(), 0.0f);
}

TEST(NnInitializers, FansOfDenseAndConvKernels) {
  // HWIO conv kernel: the receptive field 3 * 3 multiplies both fans.
  EXPECT_EQ(init::compute_fans({3, 3, 1, 32}), std::make_pair(9.0, 288.0));
  EXPECT_EQ(init::compute_fans({784, 128}), std::make_pair(784.0, 128.0));
  // OIHW (PyTorch's layout): in_axis 1, out_axis 0.
  EXPECT_EQ(init::compute_fans({64, 16, 5, 5}, 1, 0), std::make_pair(400.0, 1600.0));
  for (const auto& [shape, in, out, batch] :
       std::vector<std::tuple<Shape, jx::Axes, jx::Axes, jx::Axes>>{
           {{3, 3, 1, 32}, -2, -1, {}},
           {{5, 7}, -2, -1, {}},
           {{2, 3, 4}, -2, -1, {0}},
           {{2, 3, 5}, {0, 1}, -1, {}},
           {{4, 3, 3, 3, 8}, -2, -1, {}}}) {
    const std::string name = "fans_" + dims_str(shape);
    auto [fan_in, fan_out] = init::compute_fans(shape, in, out, batch);
    jx::testing::expect_named_golden(kGoldens, name, jnp::array<double>({fan_in, fan_out}), 0);
  }
  // The fans set the scale: he_normal's truncated samples have variance 2 / fan_in.
  const Array w = init::he_normal()(jr::PRNGKey(0), {3, 3, 16, 64});
  EXPECT_NEAR(jnp::var(w).item<float>(), 2.0 / (3 * 3 * 16), 0.05 * 2.0 / (3 * 3 * 16));
  const Array u = init::lecun_uniform()(jr::PRNGKey(1), {400, 300});
  EXPECT_LE(jnp::max(jnp::abs(u)).item<float>(), std::sqrt(3.0 / 400));
}

void expect_orthonormal(const Array& m, double scale, const std::string& what) {
  const int64_t n = m.shape(1);
  jx::testing::expect_close(jnp::matmul(m.T(), m), jnp::eye(n, std::nullopt, 0, m.dtype()) * (scale * scale),
                            1e-5, 0, what);
}

TEST(NnInitializers, OrthogonalColumnsAreOrthonormal) {
  const Array key = jr::PRNGKey(3);
  expect_orthonormal(init::orthogonal()(key, {5, 3}), 1, "tall");
  expect_orthonormal(init::orthogonal()(key, {4, 4}, DType::Float64), 1, "square f64");
  expect_orthonormal(init::orthogonal()(key, {2, 5}).T(), 1, "wide: orthonormal rows");
  expect_orthonormal(init::orthogonal(2.0)(key, {6, 3}), 2, "scaled");
  // column_axis 0 of [3, 2, 4]: the other dims flatten into 8 rows of 3 columns.
  const Array q = init::orthogonal(1.0, 0)(key, {3, 2, 4});
  EXPECT_EQ(q.shape(), (Shape{3, 2, 4}));
  expect_orthonormal(jnp::moveaxis(q, 0, -1).reshape({8, 3}), 1, "column_axis 0");
  // delta_orthogonal: the center tap of a 3x3 kernel is orthogonal, the rest zero.
  const Array w = init::delta_orthogonal()(key, {3, 3, 4, 6});
  expect_orthonormal(w(1, 1).T(), 1, "delta center");
  EXPECT_EQ(jnp::sum(jnp::abs(w)).item<float>(), jnp::sum(jnp::abs(w(1, 1))).item<float>());
}

TEST(NnInitializers, ConstantsAndDtypes) {
  const Array key = jr::PRNGKey(0);
  const Array z = init::zeros(key, {2, 3});
  EXPECT_EQ(z.dtype(), DType::Float32);
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(init::ones(key, {3}, DType::Int32).to_vector<int32_t>(), (std::vector<int32_t>{1, 1, 1}));
  EXPECT_EQ(init::zeros(key, {2}, DType::Float64).dtype(), DType::Float64);
  // zeros and ones are initializers: they convert to Initializer, as Flax's zeros_init().
  const Initializer bias_init = init::zeros;
  EXPECT_EQ(bias_init(key, {4}).to_vector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(bias_init(key, {4}, DType::BFloat16).dtype(), DType::BFloat16);
  EXPECT_EQ(init::ones_init()(key, {2}).to_vector<float>(), std::vector<float>(2, 1.0f));
  const Array c = init::constant(-7)(key, {2, 3});
  EXPECT_EQ(c.dtype(), DType::Float32);
  EXPECT_EQ(c.to_vector<float>(), std::vector<float>(6, -7.0f));
  EXPECT_EQ(init::constant(7, DType::Int32)(key, {2}).dtype(), DType::Int32);
  EXPECT_EQ(init::constant(0.1, DType::Float64)(key, {1}).item<double>(), 0.1);
  EXPECT_EQ(init::constant(jnp::array<float>({1, 2}))(key, {3, 2}).to_vector<float>(),
            (std::vector<float>{1, 2, 1, 2, 1, 2}));
  // The factory's dtype is the default; the call's dtype wins.
  EXPECT_EQ(init::normal(1.0, DType::Float64)(key, {3}).dtype(), DType::Float64);
  EXPECT_EQ(init::normal(1.0, DType::Float64)(key, {3}, DType::Float32).dtype(), DType::Float32);
  EXPECT_EQ(init::lecun_normal(-2, -1, {}, DType::Float64)(key, {3, 4}).dtype(), DType::Float64);
  EXPECT_EQ(init::he_uniform()(key, {3, 4}, DType::BFloat16).dtype(), DType::BFloat16);
  // Any callable (key, shape, dtype) is an initializer.
  const Initializer twos = [](const Array&, const Shape& s, DType d) { return jnp::full(s, 2, d); };
  EXPECT_EQ(twos(key, {2}).to_vector<float>(), (std::vector<float>{2, 2}));
  // Aliases are the same initializers.
  EXPECT_EQ(jnp::array_equal(init::xavier_normal()(key, {3, 4}), init::glorot_normal()(key, {3, 4}))
                .item<bool>(),
            true);
  EXPECT_EQ(jnp::array_equal(init::kaiming_uniform()(key, {3, 4}), init::he_uniform()(key, {3, 4}))
                .item<bool>(),
            true);
}

using jx::testing::expect_error;

TEST(NnInitializers, JitEqualsEager) {
  const Array key = jr::PRNGKey(5);
  for (const auto& [name, fn] : std::vector<std::pair<std::string, Initializer>>{
           {"lecun_normal", init::lecun_normal()},
           {"glorot_uniform", init::glorot_uniform()},
           {"normal", init::normal(0.1)},
           {"orthogonal", init::orthogonal()},
           {"delta_orthogonal", init::delta_orthogonal()}}) {
    SCOPED_TRACE(name);
    const Shape shape = name == "delta_orthogonal" ? Shape{3, 3, 4} : Shape{3, 4};
    auto f = [fn, shape](const Array& k) { return fn(k, shape); };
    jx::testing::expect_close(jx::jit(f)(key), f(key), 0, 4e-7, name);
  }
}

TEST(NnInitializers, ErrorsNameTheInitializerAndTheFix) {
  const Array key = jr::PRNGKey(0);
  expect_error<jx::ValueError>([] { init::variance_scaling(1.0, "fan_sum", "normal"); },
                               "[initializers::variance_scaling] invalid mode \"fan_sum\"; use "
                               "\"fan_in\", \"fan_out\" or \"fan_avg\"");
  expect_error<jx::ValueError>([] { init::variance_scaling(1.0, "fan_in", "cauchy"); },
                               "invalid distribution \"cauchy\"");
  expect_error<jx::ValueError>([&] { init::lecun_normal()(key, {3}); },
                               "[initializers::variance_scaling] can't compute input and output "
                               "sizes of a 1-dimensional weights shape (3,); it must be at least 2-D");
  expect_error<jx::ValueError>([&] { init::compute_fans({0, 4}); }, "zero-size");
  expect_error<jx::IndexError>([&] { init::glorot_uniform(-3)(key, {3, 4}); },
                               "[initializers::variance_scaling] in_axis -3 is out of bounds for "
                               "the weights shape (3, 4)");
  expect_error<jx::DTypeError>([&] { init::normal()(key, {3}, DType::Int32); },
                               "[initializers::normal] dtype int32 is not a floating-point dtype");
  expect_error<jx::DTypeError>([&] { init::he_normal()(key, {3, 3}, DType::Int8); },
                               "[initializers::variance_scaling] dtype int8");
  expect_error<jx::ValueError>([&] { init::orthogonal()(key, {4}); },
                               "[initializers::orthogonal] requires at least a 2-D shape, got (4,)");
  expect_error<jx::IndexError>([&] { init::orthogonal(1.0, 2)(key, {4, 3}); },
                               "[initializers::orthogonal] column_axis 2 is out of bounds");
  expect_error<jx::ValueError>([&] { init::delta_orthogonal()(key, {3, 3}); },
                               "[initializers::delta_orthogonal] requires a 3-D, 4-D or 5-D shape");
  expect_error<jx::ValueError>([&] { init::delta_orthogonal()(key, {3, 3, 8, 4}); },
                               "fan_in (shape[-2] = 8) must be less than or equal to fan_out "
                               "(shape[-1] = 4)");
  expect_error<jx::ValueError>([&] { Initializer()(key, {2}); }, "[Initializer] called an empty");
}

}  // namespace
