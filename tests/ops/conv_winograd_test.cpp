// The Winograd F(4x4, 3x3) path of float32 convolutions (backend/cpu/conv_winograd.cpp):
// which convolutions take it, its values against the float64 reference loops (the sum in
// exact order of a much finer type) over output sizes that are not multiples of the 4x4
// tile, one-pixel images, symmetric, asymmetric and VALID padding and several tile
// blocks; its gradients; the bias/relu epilogue a compiled program folds into the call;
// and jx::config::conv_winograd switching it off.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <tuple>
#include <string>
#include <vector>

#include "jx/config.h"
#include "jx/jx.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::DType;
using jx::Shape;

Array normal(const Shape& s, uint32_t seed, double scale = 1.0) {
  return jx::random::normal(jx::random::PRNGKey(seed), s, DType::Float32) * float(scale);
}

Array conv_nhwc(const Array& x, const Array& w, const lax::Padding& padding, std::vector<int64_t> strides = {1, 1}) {
  return lax::conv_general_dilated(x, w, strides, padding, {}, {}, lax::ConvDimensions("NHWC", "HWIO", "NHWC"));
}

double max_abs(const Array& a) { return jnp::max(jnp::abs(a.astype(DType::Float64))).item<double>(); }
double max_diff(const Array& a, const Array& b) {
  return max_abs(a.astype(DType::Float64) - b.astype(DType::Float64));
}

Array with_winograd(bool on, const std::function<Array()>& f) {
  jx::config::Scoped s(jx::config::conv_winograd, on);
  return f();
}

struct Case {
  const char* name;
  Shape x, w;
  lax::Padding padding;
};

// Outputs whose size is not a multiple of 4, a 1x1 image, VALID and asymmetric padding.
const std::vector<Case> kCases = {
    {"8x8 SAME 64->64", {2, 8, 8, 64}, {3, 3, 64, 64}, lax::Padding("SAME")},
    {"7x9 SAME 64->80", {1, 7, 9, 64}, {3, 3, 64, 80}, lax::Padding("SAME")},
    {"5x6 VALID 128->64", {3, 5, 6, 128}, {3, 3, 128, 64}, lax::Padding("VALID")},
    {"1x1 SAME 64->64", {1, 1, 1, 64}, {3, 3, 64, 64}, lax::Padding("SAME")},
    {"6x6 pad (2,2),(0,1) 64->96", {2, 6, 6, 64}, {3, 3, 64, 96}, lax::Padding({{2, 2}, {0, 1}})},
    {"10x10 SAME 96->64", {1, 10, 10, 96}, {3, 3, 96, 64}, lax::Padding("SAME")},
};

// Rounding of F(4x4, 3x3) in float32 for unit-scale data, relative to the output's
// largest value: measured 0.6e-5 to 1.5e-5 on these cases; direct oneDNN stays under 1e-6.
constexpr double kWinogradRel = 1e-4, kDirectRel = 2e-6;

TEST(ConvWinograd, ValuesAgainstTheFloat64Reference) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    Array x = normal(c.x, 1), w = normal(c.w, 2, 1.0 / std::sqrt(9.0 * double(c.w[2])));
    Array want = conv_nhwc(x.astype(DType::Float64), w.astype(DType::Float64), c.padding);
    Array fast = with_winograd(true, [&] { return conv_nhwc(x, w, c.padding); });
    Array direct = with_winograd(false, [&] { return conv_nhwc(x, w, c.padding); });
    ASSERT_EQ(fast.shape(), want.shape());
    const double scale = max_abs(want);
    EXPECT_LE(max_diff(fast, want), kWinogradRel * scale);
    EXPECT_LE(max_diff(direct, want), kDirectRel * scale);
    // The switch picks another algorithm: the two float32 results are not the same bits.
    EXPECT_GT(max_diff(fast, direct), 0.0);
  }
}

// Convolutions outside its conditions run the direct kernels whatever the switch says:
// the same bits with it on and off.
TEST(ConvWinograd, OtherConvolutionsAreUntouched) {
  struct Other {
    const char* name;
    std::function<Array(const Array&, const Array&)> f;
    Shape x, w;
  };
  const std::vector<Other> others = {
      {"NCHW / OIHW", [](const Array& x, const Array& w) { return lax::conv(x, w, {1, 1}, lax::Padding("SAME")); },
       {2, 64, 8, 8}, {64, 64, 3, 3}},
      {"stride 2", [](const Array& x, const Array& w) { return conv_nhwc(x, w, lax::Padding("SAME"), {2, 2}); },
       {2, 8, 8, 64}, {3, 3, 64, 64}},
      {"32 features", [](const Array& x, const Array& w) { return conv_nhwc(x, w, lax::Padding("SAME")); },
       {2, 8, 8, 32}, {3, 3, 32, 64}},
      {"5x5 window", [](const Array& x, const Array& w) { return conv_nhwc(x, w, lax::Padding("SAME")); },
       {2, 8, 8, 64}, {5, 5, 64, 64}},
      {"72 features", [](const Array& x, const Array& w) { return conv_nhwc(x, w, lax::Padding("SAME")); },
       {2, 8, 8, 72}, {3, 3, 72, 64}},
  };
  for (const Other& o : others) {
    SCOPED_TRACE(o.name);
    Array x = normal(o.x, 3), w = normal(o.w, 4, 0.05);
    Array on = with_winograd(true, [&] { return o.f(x, w); });
    Array off = with_winograd(false, [&] { return o.f(x, w); });
    EXPECT_EQ(max_diff(on, off), 0.0);
  }
}

// More tiles than one block holds (32 images of 16x16 at 128 -> 128 features: 512 tiles,
// blocks of 454), against the direct float32 convolution.
TEST(ConvWinograd, SeveralTileBlocks) {
  Array x = normal({32, 16, 16, 128}, 5), w = normal({3, 3, 128, 128}, 6, 1.0 / std::sqrt(9.0 * 128));
  Array fast = with_winograd(true, [&] { return conv_nhwc(x, w, lax::Padding("SAME")); });
  Array direct = with_winograd(false, [&] { return conv_nhwc(x, w, lax::Padding("SAME")); });
  EXPECT_LE(max_diff(fast, direct), kWinogradRel * max_abs(direct));
}

// Both gradients of sum(conv(x, w) * ct): the input gradient is itself a 3x3 stride-1
// convolution (flipped kernel, features swapped), so it runs by Winograd too.
TEST(ConvWinograd, GradientsAgainstTheFloat64Reference) {
  Array x = normal({2, 8, 8, 64}, 7), w = normal({3, 3, 64, 128}, 8, 1.0 / 24), ct = normal({2, 8, 8, 128}, 9);
  auto loss = [&](const Array& a, const Array& b) {
    return jnp::sum(conv_nhwc(a, b, lax::Padding("SAME")) * ct.astype(a.dtype()));
  };
  auto [want_x, want_w] = jx::grad<0, 1>(loss)(x.astype(DType::Float64), w.astype(DType::Float64));
  Array got_x, got_w;
  {
    jx::config::Scoped s(jx::config::conv_winograd, true);
    std::tie(got_x, got_w) = jx::grad<0, 1>(loss)(x, w);
  }
  EXPECT_LE(max_diff(got_x, want_x), kWinogradRel * max_abs(want_x));
  EXPECT_LE(max_diff(got_w, want_w), kWinogradRel * max_abs(want_w));
}

// Under jit the bias add and relu after the convolution fold into its call (the epilogue
// pass) and are applied in the output transform: the same values as eager, where they run
// as separate ops after the Winograd convolution.
TEST(ConvWinograd, FoldedBiasAndReluEqualEager) {
  Array x = normal({2, 8, 8, 64}, 10), w = normal({3, 3, 64, 64}, 11, 1.0 / 24), b = normal({64}, 12);
  auto f = [](const Array& x, const Array& w, const Array& b) {
    return jnp::maximum(conv_nhwc(x, w, lax::Padding("SAME")) + b, 0.0f);  // nn::relu is a custom_jvp
  };
  jx::config::Scoped s(jx::config::conv_winograd, true);
  Array eager = f(x, w, b);
  Array jitted = jx::jit(f)(x, w, b);
  EXPECT_EQ(max_diff(jitted, eager), 0.0);
  EXPECT_GT(jnp::sum((eager == 0.0f).astype(DType::Float32)).item<float>(), 0.0f);  // the relu did clip
}

}  // namespace
