// The small ResNet of the benchmarks (../shared/peers/torch_bench.py's ResNet): a 7x7/2 conv
// with BatchNorm, ReLU and a 3x3/2 max pool, two residual blocks (64 then 128 channels, a
// 1x1 projection where the width changes), global average pooling and a Dense(10). Every
// BatchNorm keeps running statistics in the "batch_stats" collection: call with train =
// true normalizes with the batch's statistics and, under apply(..., nn::Mutable{"batch_stats"}),
// returns the updated running averages; train = false normalizes with the running averages.
//
// Flax:
//   class ResBlock(nn.Module):
//     features: int
//     @nn.compact
//     def __call__(self, x, train):
//       norm = partial(nn.BatchNorm, use_running_average=not train, momentum=0.9)
//       r = x if x.shape[-1] == self.features else nn.Conv(self.features, (1, 1), use_bias=False)(x)
//       y = nn.relu(norm()(nn.Conv(self.features, (3, 3), use_bias=False)(x)))
//       y = norm()(nn.Conv(self.features, (3, 3), use_bias=False)(y))
//       return nn.relu(y + r)
//
// Used by examples/train_resnet/main.cpp and bench/bench_models.cpp. The modules are plain
// aggregates with JX_NN_MODULE (no base class), so designated initializers such as
// ResBlock{.features = 128} compile without -Wno-missing-field-initializers (docs/nn.md).
#pragma once
#include <cstdint>
#include <vector>

#include "jx/jx.h"

namespace resnet {

namespace nn = jx::nn;
using jx::Array;

// PyTorch's BatchNorm2d(momentum=0.1) in Flax's convention (the weight of the old average).
inline constexpr double kBatchNormMomentum = 0.9;

struct ResBlock {
  int64_t features = 64;

  Array call(Array x, bool train) const {
    Array r = x;
    if (x.shape(3) != features)
      r = nn::Conv{.features = features, .kernel_size = {1, 1}, .use_bias = false}(x);
    Array y = nn::Conv{.features = features, .kernel_size = {3, 3}, .use_bias = false}(x);
    y = nn::relu(nn::BatchNorm{.use_running_average = !train, .momentum = kBatchNormMomentum}(y));
    y = nn::Conv{.features = features, .kernel_size = {3, 3}, .use_bias = false}(y);
    y = nn::BatchNorm{.use_running_average = !train, .momentum = kBatchNormMomentum}(y);
    return nn::relu(y + r);
  }
  JX_NN_MODULE(ResBlock)
};

// Inputs NHWC float32 (Fashion-MNIST: [N, 28, 28, 1] in [0, 1]); outputs logits [N, num_classes].
// Variables: params {Conv_0, BatchNorm_0, ResBlock_0, ResBlock_1, Dense_0} and batch_stats
// {BatchNorm_0, ResBlock_0/BatchNorm_{0,1}, ResBlock_1/BatchNorm_{0,1}}, each {mean, var}.
struct ResNet {
  int64_t num_classes = 10;

  Array call(Array x, bool train) const {
    x = nn::Conv{.features = 64, .kernel_size = {7, 7}, .strides = {2, 2}, .use_bias = false}(x);
    x = nn::relu(nn::BatchNorm{.use_running_average = !train, .momentum = kBatchNormMomentum}(x));
    x = nn::max_pool(x, {3, 3}, {.strides = {2, 2}, .padding = "SAME"});
    x = ResBlock{.features = 64}(x, train);
    x = ResBlock{.features = 128}(x, train);
    x = jx::numpy::mean(x, std::vector<int64_t>{1, 2});
    return nn::Dense{.features = num_classes}(x);
  }
  JX_NN_MODULE(ResNet)
};

}  // namespace resnet
