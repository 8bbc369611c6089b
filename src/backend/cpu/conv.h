// Convolution kernels (XLA's Conv, as conv_general_dilated defines it) and their naive
// reference. Pointers + a geometry in canonical order in, results out; any dimension
// order is described by element strides, so no operand is transposed to call a kernel.
#pragma once
#include <cstdint>

#include "jx/dtype.h"

namespace jx::cpu {

constexpr int kMaxConvSpatial = 3;

// Canonical order: lhs and out (batch, feature, spatial...), rhs (out feature, in feature,
// spatial...). Unused spatial slots (beyond `spatial`) hold size 1, stride/dilation 1, no
// padding and stride 0.
struct ConvGeometry {
  int spatial = 0;
  int64_t batch = 0;           // lhs batch
  int64_t in_features = 0;     // lhs feature
  int64_t out_features = 0;    // rhs out feature = out feature
  int64_t feature_groups = 1;  // rhs in feature = in_features / feature_groups
  int64_t batch_groups = 1;    // out batch = batch / batch_groups
  int64_t in[kMaxConvSpatial] = {1, 1, 1}, window[kMaxConvSpatial] = {1, 1, 1},
          out[kMaxConvSpatial] = {1, 1, 1};
  int64_t stride[kMaxConvSpatial] = {1, 1, 1}, pad_lo[kMaxConvSpatial] = {},
          pad_hi[kMaxConvSpatial] = {}, lhs_dilation[kMaxConvSpatial] = {1, 1, 1},
          rhs_dilation[kMaxConvSpatial] = {1, 1, 1};
  // Element strides of each operand in canonical order.
  int64_t lhs_strides[kMaxConvSpatial + 2] = {}, rhs_strides[kMaxConvSpatial + 2] = {},
          out_strides[kMaxConvSpatial + 2] = {};
};

// What a compiled program may fold into the call (compiler/pass_conv_epilogue.cpp):
// out = act(conv + bias), the bias one value per output feature, of the result's dtype.
struct ConvEpilogue {
  const void* bias = nullptr;
  bool relu = false;
  bool empty() const { return !bias && !relu; }
};

// result = conv(lhs, rhs) with operands of dtype `in`, a result of dtype `out` (operands
// are converted to `out` first, as for a preferred element type). float32 runs by
// Winograd where winograd_applies (below), else on oneDNN where oneDNN has the convolution (as a forward, backward-data or backward-weights
// problem); everything else, and float64 and integers, on the reference loops. Integer
// sums wrap; float16/bfloat16 compute in float32.
void conv_general(DType in, DType out, const void* lhs, const void* rhs, void* result,
                  const ConvGeometry& g, const ConvEpilogue& epilogue = {});
void conv_general_reference(DType in, DType out, const void* lhs, const void* rhs,
                            void* result, const ConvGeometry& g, const ConvEpilogue& epilogue = {});

// Runs a float32 convolution on oneDNN; false when oneDNN cannot (the caller falls back).
// A forward problem takes the epilogue as oneDNN's bias and post-op; `epilogue_done`
// says whether it did.
bool conv_f32_onednn(const float* lhs, const float* rhs, float* result, const ConvGeometry& g,
                     const ConvEpilogue& epilogue, bool& epilogue_done);

// conv_winograd.cpp: a 3x3 stride-1 convolution with NHWC lhs and out by Winograd's
// F(4x4, 3x3) when winograd_applies(g) (jx::config::conv_winograd and the geometry); false
// when it does not apply (the caller runs the direct kernels).
bool winograd_applies(const ConvGeometry& g);
bool conv_f32_winograd(const float* lhs, const float* rhs, float* result, const ConvGeometry& g,
                       const ConvEpilogue& epilogue);

}  // namespace jx::cpu
