// Batching rule of conv_general_dilated (ops/conv.cpp): vmap against a loop over the
// batch, for every in_axes combination of the two operands (the vmapped dim folds into the
// batch dim, the output features, or the feature/batch groups).
#include <gtest/gtest.h>

#include "transforms/vmap_testing.h"

namespace {

using namespace vmap_testing;

struct Case {
  std::string name;
  Shape lhs, rhs;
  std::vector<int64_t> strides;
  lax::Padding padding;
  std::vector<std::string> dims;
  int64_t feature_groups = 1, batch_groups = 1;
};

TEST(VmapConv, EqualsLoop) {
  const std::vector<Case> cases = {
      {"nhwc", {2, 5, 4, 3}, {3, 3, 3, 2}, {1, 1}, "SAME", {"NHWC", "HWIO", "NHWC"}},
      {"nchw_strided", {2, 2, 6, 5}, {3, 2, 2, 2}, {2, 1}, {{1, 0}, {0, 1}}, {"NCHW", "OIHW", "NCHW"}},
      {"feature_groups", {1, 4, 4, 4}, {2, 2, 2, 6}, {1, 1}, "VALID", {"NHWC", "HWIO", "NHWC"}, 2},
      {"batch_groups", {4, 2, 4, 3}, {4, 2, 2, 2}, {1, 1}, "VALID", {"NCHW", "OIHW", "NCHW"}, 1, 2},
      {"conv1d_permuted", {5, 2, 3}, {2, 3, 4}, {1}, "SAME", {"WNC", "WIO", "NCW"}},
  };
  for (const Case& c : cases) {
    auto f = [c](const Arrays& a) {
      return Arrays{lax::conv_general_dilated(a[0], a[1], c.strides, c.padding, {}, {},
                                              lax::ConvDimensions(c.dims[0], c.dims[1], c.dims[2]),
                                              c.feature_groups, c.batch_groups)};
    };
    for (DType t : {DType::Float32, DType::Float64})
      check_vmap("conv " + c.name + " " + jx::dtype_name(t), f, {{c.lhs, t}, {c.rhs, t}},
                 t == DType::Float32 ? 1e-5 : 1e-12);
    check_vmap("conv " + c.name + " int32", f, {{c.lhs, DType::Int32}, {c.rhs, DType::Int32}});
  }
}

}  // namespace
