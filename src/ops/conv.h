// The convolution family's params (ops/conv.cpp): what conv_general_dilated binds with,
// so that jx::lax and the rules build the same params.
#pragma once
#include <optional>

#include "jx/lax.h"
#include "ops/params.h"

namespace jx::ops {

// All of conv_general_dilated's params, resolved: explicit padding pairs, dilations of
// one entry per spatial dim, dimension numbers as permutations.
struct ConvArgs {
  std::vector<int64_t> window_strides;
  lax::Padding::Pairs padding;
  std::vector<int64_t> lhs_dilation, rhs_dilation;
  lax::ConvDimensionNumbers dimension_numbers;
  int64_t feature_group_count = 1, batch_group_count = 1;
  std::optional<DType> preferred_element_type;
};

// dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), ...) in a jaxpr.
struct ConvDnumsParam final : ParamObject {
  lax::ConvDimensionNumbers d;
  explicit ConvDnumsParam(lax::ConvDimensionNumbers dn) : d(std::move(dn)) {}
  std::string str() const override;
  bool equals(const ParamObject& other) const override;
  size_t hash() const override;
};

Params conv_params(const ConvArgs& a);
ConvArgs conv_args(const Params& p);
Array conv_bind(const Array& lhs, const Array& rhs, const ConvArgs& a);

}  // namespace jx::ops
