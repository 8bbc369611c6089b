#include "jx/lax.h"
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

}  // namespace jx::lax
