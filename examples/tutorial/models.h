// The tutorial's two models as Flax-style modules (step 3 and the full example), shared by
// the example programs, the tests and the benchmarks (through tests/nn/tutorial_models.h).
//
// PyTorch builds layers in __init__ and owns its weights; a jx module (like a Flax linen
// module) is a description: an aggregate of hyper-parameters whose body, `call`, builds its
// layers inline (Flax's @nn.compact __call__). The weights live outside, in the variables
// tree that model.init returns and model.apply takes.
#pragma once
#include "jx/jx.h"

namespace tutorial {

namespace nn = jx::nn;
using jx::Array;

// PyTorch:                                   Flax:
//   class MLP(torch.nn.Module):                class MLP(nn.Module):
//     def __init__(self):                        @nn.compact
//       super().__init__()                       def __call__(self, x):
//       self.fc1 = nn.Linear(784, 512)             x = x.reshape((x.shape[0], -1))
//       self.fc2 = nn.Linear(512, 512)             x = nn.relu(nn.Dense(512)(x))
//       self.fc3 = nn.Linear(512, 10)              x = nn.relu(nn.Dense(512)(x))
//     def forward(self, x):                        return nn.Dense(10)(x)
//       x = x.flatten(1)
//       x = F.relu(self.fc1(x))
//       x = F.relu(self.fc2(x))
//       return self.fc3(x)
struct MLP : nn::Module<MLP> {
  Array call(Array x) const {
    x = x.reshape({x.shape(0), -1});
    x = nn::relu(nn::Dense{.features = 512}(x));
    x = nn::relu(nn::Dense{.features = 512}(x));
    return nn::Dense{.features = 10}(x);
  }
};

// The full example's CNN, on NHWC images [batch, 28, 28, 1] (PyTorch: NCHW). Dropout needs
// a key in training (nn::Rngs{{"dropout", key}}); `deterministic` replaces model.train() /
// model.eval().
struct CNN : nn::Module<CNN> {
  int64_t num_classes = 10;
  Array call(Array x, bool deterministic) const {
    x = nn::Conv{.features = 32, .kernel_size = {3, 3}}(x);
    x = nn::relu(x);
    x = nn::max_pool(x, {2, 2}, {.strides = {2, 2}});
    x = nn::Conv{.features = 64, .kernel_size = {3, 3}}(x);
    x = nn::relu(x);
    x = x.reshape({x.shape(0), -1});
    x = nn::Dense{.features = 256}(x);
    x = nn::Dropout{.rate = 0.1}(x, deterministic);
    return nn::Dense{.features = num_classes}(nn::relu(x));
  }
};

}  // namespace tutorial
