#include "ops/batching.h"

#include <algorithm>

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

Array insert_unit_dim(const Array& x, int at) {
  Shape s = x.shape();
  s.insert(size_t(at), 1);
  return lax::reshape(x, s);
}

std::pair<Arrays, int> align_elementwise(std::span<const Array> in, std::span<const int> dims) {
  // The batched rank. Operands of lower rank can only be rank-0 operands of select_n or
  // clamp (rank 1 when mapped).
  int64_t rank = 0;
  for (size_t i = 0; i < in.size(); ++i)
    rank = std::max(rank, int64_t(in[i].ndim()) + (dims[i] == kNotMapped ? 1 : 0));
  // The batch dim of the full-rank mapped operands when they agree, else the front.
  int target = kNotMapped;
  bool agree = true;
  for (size_t i = 0; i < in.size(); ++i) {
    if (dims[i] == kNotMapped || in[i].ndim() != rank) continue;
    if (target == kNotMapped) target = dims[i];
    agree = agree && dims[i] == target;
  }
  if (!agree || target == kNotMapped) target = 0;
  Arrays args;
  args.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const Array& x = in[i];
    if (dims[i] != kNotMapped && x.ndim() == rank) {
      args.push_back(move_bdim(x, dims[i], target));
    } else if (dims[i] != kNotMapped) {
      // A mapped rank-0 operand, now [B]: the batch at `target`, size 1 elsewhere.
      JX_CHECK(x.ndim() == 1, "elementwise batching: mapped operand of rank ", x.ndim(),
               " among operands of batched rank ", rank);
      Shape s(size_t(rank), 1);
      s[size_t(target)] = x.shape()[0];
      args.push_back(lax::reshape(x, s));
    } else if (x.ndim() == rank - 1) {
      args.push_back(insert_unit_dim(x, target));
    } else {
      // A rank-0 operand of select_n/clamp broadcasts against any rank as it is.
      JX_CHECK(x.ndim() == 0, "elementwise batching: unmapped operand of rank ", x.ndim(),
               " among operands of batched rank ", rank);
      args.push_back(x);
    }
  }
  return {std::move(args), target};
}

BatchResult elementwise_rule(Prim p, std::span<const Array> in, std::span<const int> dims,
                             const Params& params) {
  auto [args, bdim] = align_elementwise(in, dims);
  Arrays outs = bind(p, args, params);
  return {std::move(outs), std::vector<int>(outs.size(), bdim)};
}

BatchResult reducer_rule(Prim p, std::span<const Array> in, std::span<const int> dims,
                         const Params& params) {
  const int bdim = dims[0];
  std::vector<int64_t> axes = params.ints("axes");
  int out_bdim = bdim;
  for (int64_t& a : axes) {
    if (a < bdim) --out_bdim;
    a = shift_axis(a, bdim);
  }
  Params shifted = params;
  shifted.set("axes", axes);
  Arrays outs = bind(p, in.subspan(0, 1), shifted);
  return {std::move(outs), std::vector<int>(outs.size(), out_bdim)};
}

int64_t shift_axis(int64_t axis, int bdim) { return axis >= bdim ? axis + 1 : axis; }

}  // namespace jx::ops::batching
