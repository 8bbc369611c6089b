// Params shared by the convolution (ops/conv.cpp) and windowed-reduction
// (ops/windowed.cpp) families: explicit (lo, hi) padding pairs, printed as JAX prints
// them, and the size arithmetic of dilated, strided windows.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jx/lax.h"
#include "ops/params.h"

namespace jx::ops {

// padding=((1, 1), (0, 2)) in a jaxpr.
struct PaddingParam final : ParamObject {
  lax::Padding::Pairs pairs;
  explicit PaddingParam(lax::Padding::Pairs p) : pairs(std::move(p)) {}
  std::string str() const override;
  bool equals(const ParamObject& other) const override;
  size_t hash() const override;
};
inline std::shared_ptr<const ParamObject> padding_param(lax::Padding::Pairs p) {
  return std::make_shared<PaddingParam>(std::move(p));
}
inline const lax::Padding::Pairs& padding_of(const Params& p, std::string_view key = "padding") {
  return p.obj<PaddingParam>(key).pairs;
}

// A size-d dim with `dilation - 1` holes between neighbours (jax's core.dilate_dim).
inline int64_t dilate_dim(int64_t d, int64_t dilation) {
  return d == 0 ? 0 : 1 + dilation * (d - 1);
}
// How many windows of size w fit in d at stride s (jax's core.stride_dim).
inline int64_t stride_dim(int64_t d, int64_t w, int64_t s) {
  return d < w ? 0 : (d - w) / s + 1;
}

}  // namespace jx::ops
