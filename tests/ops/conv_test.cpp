// conv_general_dilated (ops/conv.cpp) against PyTorch float64 (tests/golden/gen_conv.py):
// values and both gradients over strides, SAME/SAME_LOWER/VALID and explicit, asymmetric
// and negative padding, lhs and rhs dilation, feature groups (depthwise), batch groups,
// 1-D/2-D/3-D and permuted dimension numbers; float32 (oneDNN) and float64 (reference
// loops); integer convolutions; the lax wrappers and jnp.convolve/correlate; errors;
// jit against eager; make_jaxpr against JAX's text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jx/jx.h"
#include "testing/check_grads.h"
#include "testing/golden.h"
#include "testing/jaxpr_text.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::NamedGolden;

struct ConvCase {
  const char* name;
  std::vector<int64_t> strides;
  lax::Padding padding;
  std::vector<int64_t> lhs_dilation, rhs_dilation;
  std::vector<std::string> dims;
  int64_t feature_groups, batch_groups;
};

#include "golden/conv_golden.inc"

const NamedGolden& golden(const std::string& name) {
  for (const auto& g : kConvGolden)
    if (name == g.name) return g;
  throw std::runtime_error("no golden " + name);
}
Array load(const std::string& name, DType t = DType::Float64) {
  const NamedGolden& g = golden(name);
  return jnp::array(g.values, Shape(g.shape)).astype(t);
}

Array conv(const ConvCase& c, const Array& lhs, const Array& rhs) {
  return lax::conv_general_dilated(lhs, rhs, c.strides, c.padding, c.lhs_dilation, c.rhs_dilation,
                                   lax::ConvDimensions(c.dims[0], c.dims[1], c.dims[2]),
                                   c.feature_groups, c.batch_groups);
}

void expect_golden(const std::string& name, const Array& x, double tol) {
  jx::testing::expect_named_golden(kConvGolden, name, x, tol);
}

TEST(Conv, ValuesMatchPyTorch) {
  for (const ConvCase& c : kConvCases) {
    SCOPED_TRACE(c.name);
    const std::string n = c.name;
    expect_golden(n + "_out", conv(c, load(n + "_lhs"), load(n + "_rhs")), 1e-12);
    // float32 runs on oneDNN where it can: the same values at float32 accuracy.
    Array y = conv(c, load(n + "_lhs", DType::Float32), load(n + "_rhs", DType::Float32));
    EXPECT_EQ(y.dtype(), DType::Float32);
    expect_golden(n + "_out", y, 2e-5);
  }
}

TEST(Conv, GradientsMatchPyTorch) {
  for (DType t : {DType::Float64, DType::Float32}) {
    for (const ConvCase& c : kConvCases) {
      SCOPED_TRACE(std::string(c.name) + " " + jx::dtype_name(t));
      const std::string n = c.name;
      auto f = [&](const Array& l, const Array& r) { return conv(c, l, r); };
      auto [y, f_vjp] = jx::vjp(f, load(n + "_lhs", t), load(n + "_rhs", t));
      auto [dl, dr] = f_vjp(load(n + "_ct", t));
      const double tol = t == DType::Float64 ? 1e-12 : 3e-5;
      expect_golden(n + "_dlhs", dl, tol);
      expect_golden(n + "_drhs", dr, tol);
    }
  }
}

TEST(Conv, IntegerConvolutionIsExact) {
  // Small integers: every product and sum is exact in float64, so the float64 convolution
  // of the same values is the expected integer result.
  for (const ConvCase& c : kConvCases) {
    SCOPED_TRACE(c.name);
    const std::string n = c.name;
    Array l = jnp::round(load(n + "_lhs") * 8.0), r = jnp::round(load(n + "_rhs") * 8.0);
    Array want = conv(c, l, r);
    for (DType t : {DType::Int32, DType::Int64, DType::Int16}) {
      Array got = conv(c, l.astype(t), r.astype(t));
      EXPECT_EQ(got.dtype(), t);
      EXPECT_TRUE(bool(jnp::array_equal(got.astype(DType::Float64), want)));
    }
  }
}

TEST(Conv, PreferredElementTypeAndHalfPrecision) {
  const ConvCase& c = kConvCases[1];  // nhwc_same
  const std::string n = c.name;
  auto with = [&](const Array& l, const Array& r, DType pref) {
    return lax::conv_general_dilated(l, r, c.strides, c.padding, {}, {}, {"NHWC", "HWIO", "NHWC"},
                                     1, 1, pref);
  };
  Array l = load(n + "_lhs", DType::Float32), r = load(n + "_rhs", DType::Float32);
  Array wide = with(l, r, DType::Float64);
  EXPECT_EQ(wide.dtype(), DType::Float64);
  // float32 operands widened exactly, then a float64 convolution.
  jx::testing::expect_close(wide, conv(c, l.astype(DType::Float64), r.astype(DType::Float64)), 1e-14,
                            1e-14, "f32 -> f64");
  Array i8 = jnp::round(l * 4.0).astype(DType::Int8), w8 = jnp::round(r * 4.0).astype(DType::Int8);
  Array i32 = with(i8, w8, DType::Int32);
  EXPECT_EQ(i32.dtype(), DType::Int32);
  EXPECT_TRUE(bool(jnp::array_equal(i32, conv(c, i8.astype(DType::Int32), w8.astype(DType::Int32)))));
  Array h = conv(c, l.astype(DType::BFloat16), r.astype(DType::BFloat16));
  EXPECT_EQ(h.dtype(), DType::BFloat16);
  expect_golden(n + "_out", h, 0.1);
  EXPECT_THROW(with(l, r, DType::Int32), jx::DTypeError);
  EXPECT_THROW(with(l.astype(DType::Float64), r.astype(DType::Float64), DType::Float32), jx::DTypeError);
}

TEST(Conv, WrappersAsJax) {
  // lax::conv is NCHW/OIHW; conv_with_general_padding adds dilations.
  const ConvCase& c = kConvCases[0];  // nchw_valid
  const std::string n = c.name;
  Array l = load(n + "_lhs"), r = load(n + "_rhs");
  expect_golden(n + "_out", lax::conv(l, r, {1, 1}, "VALID"), 1e-12);
  const ConvCase& d = kConvCases[9];  // lhs_dilation_strided (NCHW/OIHW)
  const std::string m = d.name;
  expect_golden(m + "_out",
                lax::conv_with_general_padding(load(m + "_lhs"), load(m + "_rhs"), d.strides,
                                               d.padding, d.lhs_dilation, d.rhs_dilation),
                1e-12);
}

TEST(Conv, ConvTransposeWithTransposedKernelIsTheGradient) {
  // JAX's documented identity: conv_transpose(..., transpose_kernel=True) with the forward
  // conv's padding (use_consistent_padding) is the lhs gradient of that conv.
  Array x = jx::testing::rand_f64({2, 7, 7, 3}, 1), w = jx::testing::rand_f64({3, 3, 3, 4}, 2);
  for (int64_t s : {1, 2}) {
    auto f = [&](const Array& a) {
      return lax::conv_general_dilated(a, w, {s, s}, {{1, 1}, {1, 1}}, {}, {}, {"NHWC", "HWIO", "NHWC"});
    };
    auto [y, f_vjp] = jx::vjp(f, x);
    Array g = jx::testing::rand_f64(y.shape(), 3);
    auto [dx] = f_vjp(g);
    Array t = lax::conv_transpose(g, w, {s, s}, {{1, 1}, {1, 1}}, {}, {"NHWC", "HWIO", "NHWC"},
                                  /*transpose_kernel=*/true, std::nullopt,
                                  /*use_consistent_padding=*/true);
    jx::testing::expect_close(t, dx, 1e-12, 1e-12, "stride " + std::to_string(s));
  }
  // Default dimension numbers (NHWC, HWIO) and SAME: out = in * stride, as Keras.
  Array t = lax::conv_transpose(jx::testing::rand_f64({1, 4, 5, 2}, 4),
                                jx::testing::rand_f64({3, 3, 2, 6}, 5), {2, 2}, "SAME");
  EXPECT_EQ(t.shape(), Shape({1, 8, 10, 6}));
  EXPECT_EQ(lax::conv_transpose(jx::testing::rand_f64({1, 4, 2}, 4),
                                jx::testing::rand_f64({3, 2, 5}, 5), {3}, "VALID")
                .shape(),
            Shape({1, 12, 5}));
}

TEST(Conv, NumpyConvolveAndCorrelate) {
  Array a = load("np_a"), v = load("np_v");
  for (std::string mode : {"full", "same", "valid"}) {
    SCOPED_TRACE(mode);
    expect_golden("np_convolve_" + mode + "_av", jnp::convolve(a, v, mode), 1e-12);
    expect_golden("np_convolve_" + mode + "_va", jnp::convolve(v, a, mode), 1e-12);
    expect_golden("np_correlate_" + mode + "_av", jnp::correlate(a, v, mode), 1e-12);
    expect_golden("np_correlate_" + mode + "_va", jnp::correlate(v, a, mode), 1e-12);
  }
  EXPECT_EQ(jnp::convolve(jnp::array<int32_t>({1, 2}), jnp::array<int32_t>({1, 1})).dtype(),
            DType::Float32);
  EXPECT_EQ(jnp::convolve(a, v).shape(), Shape({9}));
  EXPECT_EQ(jnp::correlate(a, v).shape(), Shape({5}));
  EXPECT_THROW(jnp::convolve(a, v, "circular"), jx::ValueError);
  EXPECT_THROW(jnp::convolve(jnp::ones({2, 2}), v), jx::ShapeError);
}

TEST(Conv, SizeZeroDims) {
  const lax::ConvDimensions nhwc("NHWC", "HWIO", "NHWC");
  for (DType t : {DType::Float32, DType::Float64}) {
    // No batch: an empty output. No input features: zeros. No output features: empty.
    Array y = lax::conv_general_dilated(jnp::ones({0, 5, 5, 2}, t), jnp::ones({3, 3, 2, 4}, t), {1, 1}, "SAME", {}, {}, nhwc);
    EXPECT_EQ(y.shape(), Shape({0, 5, 5, 4}));
    y = lax::conv_general_dilated(jnp::ones({2, 5, 5, 0}, t), jnp::ones({3, 3, 0, 4}, t), {1, 1}, "SAME", {}, {}, nhwc);
    EXPECT_EQ(y.shape(), Shape({2, 5, 5, 4}));
    EXPECT_TRUE(bool(jnp::all(y == 0.0)));
    y = lax::conv_general_dilated(jnp::ones({2, 5, 5, 3}, t), jnp::ones({3, 3, 3, 0}, t), {1, 1}, "SAME", {}, {}, nhwc);
    EXPECT_EQ(y.shape(), Shape({2, 5, 5, 0}));
    // Gradients of an empty convolution are zeros of the operands' shapes.
    auto f = [&](const Array& l, const Array& r) { return lax::conv_general_dilated(l, r, {1, 1}, "SAME", {}, {}, nhwc); };
    auto [z, f_vjp] = jx::vjp(f, jnp::ones({0, 4, 4, 2}, t), jnp::ones({3, 3, 2, 3}, t));
    auto [dl, dr] = f_vjp(jnp::ones({0, 4, 4, 3}, t));
    EXPECT_EQ(dl.shape(), Shape({0, 4, 4, 2}));
    EXPECT_EQ(dr.shape(), Shape({3, 3, 2, 3}));
    EXPECT_TRUE(bool(jnp::all(dr == 0.0)));
  }
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const jx::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Conv, ErrorsNameTheOpTheShapesAndTheFix) {
  Array x = jnp::ones({2, 8, 8, 3}), w = jnp::ones({3, 3, 4, 5});
  const lax::ConvDimensions nhwc("NHWC", "HWIO", "NHWC");
  EXPECT_THROW(lax::conv_general_dilated(x, w, {1, 1}, "SAME", {}, {}, nhwc), jx::ShapeError);
  EXPECT_EQ(error_of([&] { lax::conv_general_dilated(x, w, {1, 1}, "SAME", {}, {}, nhwc); }),
            "[conv_general_dilated] feature counts differ: f32[2,8,8,3] * f32[3,3,4,5]; the lhs "
            "has 3 features but the rhs takes 4 input features (its 'I' dim); check the "
            "dimension numbers");
  Array w3 = jnp::ones({3, 3, 3, 5});
  EXPECT_EQ(error_of([&] { lax::conv_general_dilated(x, w3, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWX"}); }),
            "[conv_general_dilated] dimension_numbers[2] \"NHWX\" must contain 'N' and 'C' "
            "exactly once: (\"NHWC\", \"HWIO\", \"NHWX\")");
  EXPECT_EQ(error_of([&] { lax::conv_general_dilated(x, w3, {1, 1}, "SAME", {}, {}, {"NHWC", "HWI", "NHWC"}); }),
            "[conv_general_dilated] dimension_numbers[1] \"HWI\" has 3 letters for operands of "
            "rank 4: (\"NHWC\", \"HWI\", \"NHWC\")");
  EXPECT_EQ(error_of([&] { lax::conv_general_dilated(x, w3, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHDC"}); }),
            "[conv_general_dilated] dimension_numbers must name the same spatial letters in lhs, "
            "rhs and out: (\"NHWC\", \"HWIO\", \"NHDC\")");
  Array big = jnp::ones({9, 9, 3, 5});
  EXPECT_THROW(lax::conv_general_dilated(x, big, {1, 1}, "VALID", {}, {}, nhwc), jx::ShapeError);
  EXPECT_EQ(error_of([&] { lax::conv_general_dilated(x, big, {1, 1}, "VALID", {}, {}, nhwc); }),
            "[conv_general_dilated] the window (9 along spatial dim 0, after rhs dilation) is "
            "larger than the padded input (8): f32[2,8,8,3] * f32[9,9,3,5] with padding ((0, 0), "
            "(0, 0)); pad the input (e.g. padding \"SAME\") or use a smaller kernel");
  EXPECT_EQ(error_of([&] { lax::conv_general_dilated(x, w3, {1}, "SAME", {}, {}, nhwc); }),
            "[conv_general_dilated] window_strides (1,) has 1 entries for 2 spatial dims: lhs "
            "f32[2,8,8,3], rhs f32[3,3,3,5]");
  EXPECT_THROW(lax::conv_general_dilated(x, w3, {1, 1}, "SAMEISH", {}, {}, nhwc), jx::ValueError);
  EXPECT_THROW(lax::conv_general_dilated(x, w3, {1, 1}, "SAME", {2, 2}, {}, nhwc), jx::ValueError);
  EXPECT_THROW(lax::conv_general_dilated(x, w3, {0, 1}, "VALID", {}, {}, nhwc), jx::ValueError);
  EXPECT_THROW(lax::conv_general_dilated(x, jnp::ones({3, 3, 1, 5}), {1, 1}, "SAME", {}, {}, nhwc, 2),
               jx::ShapeError);
  EXPECT_THROW(lax::conv_general_dilated(x, w3.astype(DType::Float64), {1, 1}, "SAME", {}, {}, nhwc),
               jx::DTypeError);
  EXPECT_THROW(lax::conv_general_dilated(x, jnp::ones({3, 3, 5}), {1, 1}, "SAME"), jx::ShapeError);
}

TEST(Conv, JitEqualsEager) {
  for (const ConvCase& c : kConvCases) {
    SCOPED_TRACE(c.name);
    const std::string n = c.name;
    auto f = [&](const Array& l, const Array& r) { return conv(c, l, r); };
    for (DType t : {DType::Float32, DType::Float64}) {
      Array l = load(n + "_lhs", t), r = load(n + "_rhs", t);
      EXPECT_TRUE(bool(jnp::array_equal(jx::jit(f)(l, r), f(l, r))));
    }
  }
}

TEST(Conv, JaxprPrintsAsJax) {
  // jax.make_jaxpr(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), 'SAME',
  //     dimension_numbers=('NHWC', 'HWIO', 'NHWC')))(zeros((1, 5, 5, 1)), zeros((3, 3, 1, 2)))
  auto f = [](const Array& x, const Array& w) {
    return lax::conv_general_dilated(x, w, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"});
  };
  EXPECT_EQ(jx::make_jaxpr(f)(jnp::zeros({1, 5, 5, 1}), jnp::zeros({3, 3, 1, 2})).str(),
            "{ lambda ; a:f32[1,5,5,1] b:f32[3,3,1,2]. let\n"
            "    c:f32[1,5,5,2] = conv_general_dilated[\n"
            "      batch_group_count=1\n"
            "      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))\n"
            "      feature_group_count=1\n"
            "      lhs_dilation=(1, 1)\n"
            "      padding=((1, 1), (1, 1))\n"
            "      precision=None\n"
            "      preferred_element_type=None\n"
            "      rhs_dilation=(1, 1)\n"
            "      window_strides=(1, 1)\n"
            "    ] a b\n"
            "  in (c,) }");
  // Its gradient: the kernel's cotangent is a convolution of the input with the output
  // cotangent (batch and feature swapped), the input's one of the cotangent with the
  // flipped kernel (I and O swapped), as JAX's transpose rules bind them.
  auto loss = [&](const Array& x, const Array& w) { return jnp::sum(f(x, w)); };
  EXPECT_EQ(jx::make_jaxpr(jx::grad<0, 1>(loss))(jnp::zeros({1, 5, 5, 1}), jnp::zeros({3, 3, 1, 2})).str(),
            "{ lambda ; a:f32[1,5,5,1] b:f32[3,3,1,2]. let\n"
            "    c:f32[1,5,5,2] = conv_general_dilated[\n"
            "      batch_group_count=1\n"
            "      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))\n"
            "      feature_group_count=1\n"
            "      lhs_dilation=(1, 1)\n"
            "      padding=((1, 1), (1, 1))\n"
            "      precision=None\n"
            "      preferred_element_type=None\n"
            "      rhs_dilation=(1, 1)\n"
            "      window_strides=(1, 1)\n"
            "    ] a b\n"
            "    _:f32[] = reduce_sum[axes=(0, 1, 2, 3)] c\n"
            "    d:f32[] = broadcast_in_dim[broadcast_dimensions=() shape=()] 1.0:f32[]\n"
            "    e:f32[1,5,5,2] = broadcast_in_dim[\n"
            "      broadcast_dimensions=()\n"
            "      shape=(1, 5, 5, 2)\n"
            "    ] d\n"
            "    f:f32[3,3,1,2] = conv_general_dilated[\n"
            "      batch_group_count=1\n"
            "      dimension_numbers=ConvDimensionNumbers(lhs_spec=(3, 0, 1, 2), rhs_spec=(3, 0, 1, 2), out_spec=(2, 3, 0, 1))\n"
            "      feature_group_count=1\n"
            "      lhs_dilation=(1, 1)\n"
            "      padding=((1, 1), (1, 1))\n"
            "      precision=None\n"
            "      preferred_element_type=None\n"
            "      rhs_dilation=(1, 1)\n"
            "      window_strides=(1, 1)\n"
            "    ] a e\n"
            "    g:f32[3,3,1,2] = rev[dimensions=(0, 1)] b\n"
            "    h:f32[1,5,5,1] = conv_general_dilated[\n"
            "      batch_group_count=1\n"
            "      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(2, 3, 0, 1), out_spec=(0, 3, 1, 2))\n"
            "      feature_group_count=1\n"
            "      lhs_dilation=(1, 1)\n"
            "      padding=((1, 1), (1, 1))\n"
            "      precision=None\n"
            "      preferred_element_type=None\n"
            "      rhs_dilation=(1, 1)\n"
            "      window_strides=(1, 1)\n"
            "    ] e g\n"
            "  in (h, f) }");
}

}  // namespace
