// Helpers for writing batching (vmap) rules in the family files. A rule receives each
// operand with its batch dim (kNotMapped when the operand is not batched) and returns the
// outputs with theirs. Rules are written with jx::lax, so they run under whatever trace
// is current (eager, or staged under jit). Move batch dims only where a rule needs it.
#pragma once
#include <span>
#include <utility>
#include <vector>

#include "jx/lax.h"
#include "ops/primitive.h"

namespace jx::ops::batching {

inline constexpr int kNotMapped = -1;
using BatchResult = std::pair<Arrays, std::vector<int>>;

// The batch size: the size of the first mapped operand's batch dim.
int64_t axis_size(std::span<const Array> in, std::span<const int> dims);
// x with its batch dim moved from `from` to `to` (no-op when equal).
Array move_bdim(const Array& x, int from, int to);
// x with its batch dim at the front; an unmapped x gets a new leading dim of `size`
// (materialized by broadcast_in_dim).
Array bdim_to_front(const Array& x, int bdim, int64_t size);
// x with its batch dim at `to`; an unmapped x is broadcast to have one of `size` there.
Array materialize_at(const Array& x, int bdim, int64_t size, int to);

// The rule of every n-ary elementwise primitive (operands of equal rank whose dims are
// equal or 1): mapped operands get their batch dim at the front, unmapped ones a leading
// dim of size 1, which the primitive broadcasts without materializing. Every output is
// batched at dim 0.
template <Prim P>
BatchResult elementwise(std::span<const Array> in, std::span<const int> dims, const Params& params);
BatchResult elementwise_rule(Prim p, std::span<const Array> in, std::span<const int> dims,
                             const Params& params);

template <Prim P>
BatchResult elementwise(std::span<const Array> in, std::span<const int> dims, const Params& params) {
  return elementwise_rule(P, in, dims, params);
}

}  // namespace jx::ops::batching
