// Helpers for writing batching (vmap) rules in the family files. A rule receives each
// operand with its batch dim (kNotMapped when the operand is not batched) and returns the
// outputs with theirs. Rules are written with jx::lax (or bind), so they run under whatever
// trace is current (eager, or staged under jit). Move batch dims only where a rule needs
// it: a transpose is a real copy, and make_jaxpr(vmap(f)) should look like JAX's.
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
// x (unmapped) with a new size-1 dim at `at`: a free reshape that the size-1 broadcasting
// of the elementwise primitives then stretches over the batch.
Array insert_unit_dim(const Array& x, int at);

// The rule of every n-ary elementwise primitive (operands of equal rank whose dims are
// equal or 1; select_n and clamp also take rank-0 operands). As JAX's broadcast_batcher,
// but without its moves where they are not needed: when the mapped operands agree on a
// batch dim it stays where it is, else all go to the front; unmapped operands get a
// size-1 dim there (reshape), and rank-0 unmapped operands of select_n/clamp stay rank 0.
// Every output is batched at that dim.
template <Prim P>
BatchResult elementwise(std::span<const Array> in, std::span<const int> dims, const Params& params);
BatchResult elementwise_rule(Prim p, std::span<const Array> in, std::span<const int> dims,
                             const Params& params);
// The operands of elementwise_rule, aligned on a common batch dim (returned second).
std::pair<Arrays, int> align_elementwise(std::span<const Array> in, std::span<const int> dims);

// JAX's defreducer: the operand keeps its batch dim and the `axes` param is shifted past
// it; the output's batch dim is the input's minus the reduced axes before it.
BatchResult reducer_rule(Prim p, std::span<const Array> in, std::span<const int> dims,
                         const Params& params);
template <Prim P>
BatchResult reducer(std::span<const Array> in, std::span<const int> dims, const Params& params) {
  return reducer_rule(P, in, dims, params);
}

// An operand axis of the unbatched primitive (cumsum's `axis`, sort's `dimension`, a
// reduced axis) renumbered for an operand batched at `bdim`.
int64_t shift_axis(int64_t axis, int bdim);

template <Prim P>
BatchResult elementwise(std::span<const Array> in, std::span<const int> dims, const Params& params) {
  return elementwise_rule(P, in, dims, params);
}

}  // namespace jx::ops::batching
