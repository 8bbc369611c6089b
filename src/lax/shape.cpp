#include <algorithm>

#include "jx/lax.h"
#include "ops/common.h"
#include "transforms/bind.h"

namespace jx::lax {

using ops::Prim;

Array reshape(const Array& x, const Shape& new_sizes) {
  if (x.shape() == new_sizes) return x;
  return bind1(Prim::Reshape, {x}, {{"new_sizes", new_sizes.vec()}, {"dimensions", std::vector<int64_t>{}}});
}

Array broadcast_in_dim(const Array& x, const Shape& shape,
                       const std::vector<int64_t>& broadcast_dimensions) {
  return bind1(Prim::BroadcastInDim, {x},
               {{"shape", shape.vec()}, {"broadcast_dimensions", broadcast_dimensions}});
}

Array broadcast(const Array& x, const Shape& leading_sizes) {
  Shape s = leading_sizes;
  std::vector<int64_t> dims;
  for (int i = 0; i < x.ndim(); ++i) {
    dims.push_back(int64_t(s.size()));
    s.push_back(x.shape()[size_t(i)]);
  }
  return broadcast_in_dim(x, s, dims);
}

Array transpose(const Array& x, const std::vector<int64_t>& permutation) {
  bool identity = permutation.size() == size_t(x.ndim());
  for (size_t i = 0; identity && i < permutation.size(); ++i)
    identity = permutation[i] == int64_t(i);
  if (identity) return x;
  return bind1(Prim::Transpose, {x}, {{"permutation", permutation}});
}

Array squeeze(const Array& x, const std::vector<int64_t>& dimensions) {
  if (dimensions.empty()) return x;
  auto dims = ops::canonical_axes("squeeze", dimensions, x.ndim());
  std::sort(dims.begin(), dims.end());
  return bind1(Prim::Squeeze, {x}, {{"dimensions", dims}});
}

// As lax.expand_dims: a broadcast_in_dim that only inserts size-1 dims (aliases eagerly).
Array expand_dims(const Array& x, const std::vector<int64_t>& dimensions) {
  if (dimensions.empty()) return x;
  const int64_t out_ndim = x.ndim() + int64_t(dimensions.size());
  auto dims = ops::canonical_axes("expand_dims", dimensions, out_ndim);
  std::vector<bool> inserted(static_cast<size_t>(out_ndim), false);
  for (int64_t d : dims) inserted[size_t(d)] = true;
  Shape s;
  std::vector<int64_t> bdims;
  size_t k = 0;
  for (int64_t i = 0; i < out_ndim; ++i) {
    if (inserted[size_t(i)]) {
      s.push_back(1);
    } else {
      s.push_back(x.shape()[k++]);
      bdims.push_back(i);
    }
  }
  return broadcast_in_dim(x, s, bdims);
}

Array rev(const Array& x, const std::vector<int64_t>& dimensions) {
  if (dimensions.empty()) return x;
  return bind1(Prim::Rev, {x}, {{"dimensions", ops::canonical_axes("rev", dimensions, x.ndim())}});
}

Array concatenate(const std::vector<Array>& operands, int64_t dimension) {
  if (operands.size() == 1) return operands[0];
  if (!operands.empty() && operands[0].valid() && operands[0].ndim() > 0)
    dimension = ops::canonical_axis("concatenate", dimension, operands[0].ndim());
  return bind1(Prim::Concatenate, std::span<const Array>(operands.data(), operands.size()),
               {{"dimension", dimension}});
}

Array pad(const Array& x, const Array& padding_value, const std::vector<PadConfig>& config) {
  std::vector<int64_t> lo, hi, interior;
  for (const PadConfig& c : config) {
    lo.push_back(c.lo);
    hi.push_back(c.hi);
    interior.push_back(c.interior);
  }
  return bind1(Prim::Pad, {x, padding_value}, {{"lo", lo}, {"hi", hi}, {"interior", interior}});
}

Array iota(DType dtype, int64_t size) { return broadcasted_iota(dtype, Shape{size}, 0); }

Array broadcasted_iota(DType dtype, const Shape& shape, int64_t dimension) {
  if (!shape.empty())
    dimension = ops::canonical_axis("broadcasted_iota", dimension, int64_t(shape.size()));
  return bind1(Prim::Iota, std::span<const Array>(),
               {{"dtype", dtype}, {"shape", shape.vec()}, {"dimension", dimension}});
}

}  // namespace jx::lax
