#include "ops/batching.h"

#include "ops/common.h"
#include "transforms/bind.h"

namespace jx::ops::batching {

int64_t axis_size(std::span<const Array> in, std::span<const int> dims) {
  for (size_t i = 0; i < in.size(); ++i)
    if (dims[i] != kNotMapped) return in[i].shape()[size_t(dims[i])];
  JX_CHECK(false, "batching rule called with no mapped operand");
  return 0;
}

Array move_bdim(const Array& x, int from, int to) {
  if (from == to) return x;
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (d != from) perm.push_back(d);
  perm.insert(perm.begin() + to, from);
  return lax::transpose(x, perm);
}

Array materialize_at(const Array& x, int bdim, int64_t size, int to) {
  if (bdim != kNotMapped) return move_bdim(x, bdim, to);
  Shape shape = x.shape();
  shape.insert(size_t(to), size);
  std::vector<int64_t> bdims;
  for (int64_t d = 0; d < x.ndim(); ++d) bdims.push_back(d < to ? d : d + 1);
  return lax::broadcast_in_dim(x, shape, bdims);
}

Array bdim_to_front(const Array& x, int bdim, int64_t size) { return materialize_at(x, bdim, size, 0); }

BatchResult elementwise_rule(Prim p, std::span<const Array> in, std::span<const int> dims,
                             const Params& params) {
  Arrays args;
  args.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (dims[i] != kNotMapped) {
      args.push_back(move_bdim(in[i], dims[i], 0));
    } else {
      Shape s = in[i].shape();
      s.insert(0, 1);
      args.push_back(lax::reshape(in[i], s));
    }
  }
  Arrays outs = bind(p, args, params);
  return {std::move(outs), std::vector<int>(outs.size(), 0)};
}

}  // namespace jx::ops::batching
