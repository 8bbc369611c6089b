// Batching (vmap) rules of the indexing family: slice, dynamic_slice, dynamic_update_slice,
// gather and the scatters. The reference is jax/_src/lax/slicing.py; where JAX moves a
// batch dim to the front only for convenience, these rules keep a batched operand where it
// is and renumber the dimension numbers instead, because moving it is a full copy.
#include <algorithm>
#include <memory>

#include "ops/batching.h"
#include "ops/common.h"
#include "ops/indexing.h"
#include "transforms/bind.h"

namespace jx::ops {
namespace {

using batching::BatchResult;
using batching::kNotMapped;

// Unbatched dim numbers renumbered for an operand that gained a batch dim at `bdim`.
std::vector<int64_t> bump(const std::vector<int64_t>& dims, int64_t bdim) {
  std::vector<int64_t> r;
  for (int64_t d : dims) r.push_back(d >= bdim ? d + 1 : d);
  return r;
}
std::vector<int64_t> iota(size_t n) {
  std::vector<int64_t> r(n);
  for (size_t i = 0; i < n; ++i) r[i] = int64_t(i);
  return r;
}
bool contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// How many operand dims before `b` are window dims (neither collapsed/inserted nor
// batching dims): the position of a new window dim at operand dim b among the window dims.
size_t window_dims_before(int64_t b, const std::vector<int64_t>& dropped,
                          const std::vector<int64_t>& batching_dims) {
  size_t k = 0;
  for (int64_t d = 0; d < b; ++d)
    if (!contains(dropped, d) && !contains(batching_dims, d)) ++k;
  return k;
}

// Window dims of the output (gather's offset_dims, scatter's update_window_dims) follow the
// operand's window dims in order. Inserts the k-th one right after the (k-1)-th, shifting
// the later ones; returns the new dim's position.
int64_t insert_window_dim(std::vector<int64_t>& window, size_t k) {
  const int64_t q = k == 0 ? 0 : window[k - 1] + 1;
  for (int64_t& w : window)
    if (w >= q) ++w;
  window.insert(window.begin() + std::ptrdiff_t(k), q);
  return q;
}

// Pairs operand dim b with indices dim 0 as a new batching dim: operand_batching_dims stays
// sorted and the indices' list keeps the pairing.
void add_batching_pair(std::vector<int64_t>& operand_dims, std::vector<int64_t>& indices_dims,
                       int64_t b) {
  operand_dims = bump(operand_dims, b);
  for (int64_t& d : indices_dims) ++d;
  size_t pos = 0;
  while (pos < operand_dims.size() && operand_dims[pos] < b) ++pos;
  operand_dims.insert(operand_dims.begin() + std::ptrdiff_t(pos), b);
  indices_dims.insert(indices_dims.begin() + std::ptrdiff_t(pos), 0);
}

// ---- slice: the batch dim is sliced whole ----
BatchResult slice_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  const int b = dims[0];
  std::vector<int64_t> start = p.ints("start_indices"), limit = p.ints("limit_indices");
  start.insert(start.begin() + b, 0);
  limit.insert(limit.begin() + b, in[0].shape()[size_t(b)]);
  std::vector<int64_t> strides;
  for (const auto& kv : p.items())
    if (kv.first == "strides")
      if (auto* v = std::get_if<std::vector<int64_t>>(&kv.second)) strides = *v;
  if (!strides.empty()) strides.insert(strides.begin() + b, 1);
  return {{lax::slice(in[0], start, limit, strides)}, {b}};
}

// ---- gather (jax's _gather_batching_rule) ----
struct GatherPlan {
  Array operand, indices;
  lax::GatherDimensionNumbers dn;
  std::vector<int64_t> slice_sizes;
  bool indices_shared = false;  // all batch members index one operand
  int out_bdim = 0;
};

GatherPlan plan_gather(const Array& operand, int obd, const Array& indices, int ibd,
                       const lax::GatherDimensionNumbers& dn, const std::vector<int64_t>& ss) {
  GatherPlan g{operand, indices, dn, ss};
  if (ibd == kNotMapped) {
    // Only the operand: its batch dim is one more window dim, taken whole.
    const int64_t b = obd;
    g.dn.collapsed_slice_dims = bump(dn.collapsed_slice_dims, b);
    g.dn.operand_batching_dims = bump(dn.operand_batching_dims, b);
    g.dn.start_index_map = bump(dn.start_index_map, b);
    g.slice_sizes.insert(g.slice_sizes.begin() + b, operand.shape()[size_t(b)]);
    const size_t k = window_dims_before(b, dn.collapsed_slice_dims, dn.operand_batching_dims);
    g.out_bdim = int(insert_window_dim(g.dn.offset_dims, k));
    return g;
  }
  // The indices' batch dim goes in front (the index vector must stay last), so it is the
  // first of the output's batch dims: output dim 0, before every offset dim.
  g.indices = batching::move_bdim(indices, ibd, 0);
  for (int64_t& d : g.dn.offset_dims) ++d;
  if (obd == kNotMapped) {
    for (int64_t& d : g.dn.start_indices_batching_dims) ++d;
    g.indices_shared = true;
    return g;
  }
  // Both: member i of the batch reads only member i of the operand, an operand batching
  // dim (slice size 1, or 0 for an empty batch).
  const int64_t b = obd;
  g.dn.collapsed_slice_dims = bump(dn.collapsed_slice_dims, b);
  g.dn.start_index_map = bump(dn.start_index_map, b);
  add_batching_pair(g.dn.operand_batching_dims, g.dn.start_indices_batching_dims, b);
  g.slice_sizes.insert(g.slice_sizes.begin() + b, operand.shape()[size_t(b)] == 0 ? 0 : 1);
  return g;
}

BatchResult gather_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  GatherPlan g = plan_gather(in[0], dims[0], in[1], dims[1],
                             p.obj<GatherDnumsParam>("dimension_numbers").d, p.ints("slice_sizes"));
  Params q = p;
  q.set("dimension_numbers", std::make_shared<const GatherDnumsParam>(g.dn));
  q.set("slice_sizes", g.slice_sizes);
  if (g.indices_shared) {  // as jax: sorted/unique held per member, not across the batch
    q.set("indices_are_sorted", false);
    q.set("unique_indices", false);
  }
  return {{bind1(Prim::Gather, {g.operand, g.indices}, q)}, {g.out_bdim}};
}

// ---- scatter family (jax's _scatter_batching_rule) ----
struct ScatterPlan {
  Array operand, indices, updates;
  lax::ScatterDimensionNumbers dn;
  int out_bdim = 0;
};

// The output is the operand, so the operand is always batched: kept at its batch dim, or
// broadcast to a new leading one when only the indices or updates are mapped.
ScatterPlan plan_scatter(const Array& operand, int obd, const Array& indices, int ibd,
                         const Array& updates, int ubd, const lax::ScatterDimensionNumbers& dn,
                         int64_t size) {
  ScatterPlan s{operand, indices, updates, dn};
  const int b = obd == kNotMapped ? 0 : obd;
  s.operand = batching::materialize_at(operand, obd, size, b);
  s.out_bdim = b;
  s.dn.inserted_window_dims = bump(dn.inserted_window_dims, b);
  s.dn.scatter_dims_to_operand_dims = bump(dn.scatter_dims_to_operand_dims, b);
  if (ibd == kNotMapped) {
    // The batch dim is one more window dim: the updates carry it at the matching window
    // position and write it whole.
    s.dn.operand_batching_dims = bump(dn.operand_batching_dims, b);
    const size_t k = window_dims_before(b, dn.inserted_window_dims, dn.operand_batching_dims);
    const int64_t q = insert_window_dim(s.dn.update_window_dims, k);
    s.updates = batching::materialize_at(updates, ubd, size, int(q));
    return s;
  }
  // Batched indices: a batching dim pairing operand dim b with indices dim 0; the updates'
  // first scatter dim follows indices dim 0, so their batch dim goes in front too.
  s.indices = batching::move_bdim(indices, ibd, 0);
  s.updates = batching::materialize_at(updates, ubd, size, 0);
  for (int64_t& d : s.dn.update_window_dims) ++d;
  add_batching_pair(s.dn.operand_batching_dims, s.dn.scatter_indices_batching_dims, b);
  return s;
}

template <Prim P>
BatchResult scatter_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  ScatterPlan s = plan_scatter(in[0], dims[0], in[1], dims[1], in[2], dims[2],
                               p.obj<ScatterDnumsParam>("dimension_numbers").d,
                               batching::axis_size(in, dims));
  Params q = p;
  q.set("dimension_numbers", std::make_shared<const ScatterDnumsParam>(s.dn));
  return {{bind1(P, {s.operand, s.indices, s.updates}, q)}, {s.out_bdim}};
}

// ---- dynamic_slice / dynamic_update_slice ----
bool any_mapped(std::span<const int> dims) {
  return std::any_of(dims.begin(), dims.end(), [](int d) { return d != kNotMapped; });
}

// The start index of a whole batch dim: 0, in the dtype of the other start indices.
Array zero_start(std::span<const Array> starts) {
  return lax::convert_element_type(Array(0), starts.empty() ? DType::Int32 : starts[0].dtype());
}

// As jax's _batch_dynamic_slice_indices: the scalar starts (some batched) stacked into a
// [size, n] index array whose rows are each member's start vector (batch dim 0).
Array stacked_starts(std::span<const Array> starts, std::span<const int> dims, int64_t size) {
  std::vector<Array> cols;
  for (size_t i = 0; i < starts.size(); ++i) {
    const std::vector<int64_t> bd = dims[i] == kNotMapped ? std::vector<int64_t>{}
                                                          : std::vector<int64_t>{0};
    cols.push_back(lax::broadcast_in_dim(starts[i], {size, 1}, bd));
  }
  return lax::concatenate(cols, 1);
}

// Unbatched starts: one more dynamic_slice dim, taken whole. Batched starts: a gather of
// one window per member (jax), whose promise_in_bounds mode clamps as dynamic_slice does.
BatchResult dynamic_slice_batch(std::span<const Array> in, std::span<const int> dims,
                                const Params& p) {
  std::vector<Array> starts(in.begin() + 1, in.end());
  std::vector<int64_t> sizes = p.ints("slice_sizes");
  if (!any_mapped(dims.subspan(1))) {
    const int b = dims[0];
    starts.insert(starts.begin() + b, zero_start(starts));
    sizes.insert(sizes.begin() + b, in[0].shape()[size_t(b)]);
    return {{lax::dynamic_slice(in[0], starts, sizes, false)}, {b}};
  }
  const Array idx = stacked_starts(starts, dims.subspan(1), batching::axis_size(in, dims));
  const std::vector<int64_t> all = iota(sizes.size());
  GatherPlan g = plan_gather(in[0], dims[0], idx, 0, {all, {}, all, {}, {}}, sizes);
  return {{lax::gather(g.operand, g.indices, g.dn, g.slice_sizes,
                       lax::GatherScatterMode::promise_in_bounds, std::nullopt,
                       !g.indices_shared, !g.indices_shared)},
          {g.out_bdim}};
}

// Unbatched starts: operand and update meet at one batch dim, written whole. Batched
// starts: a scatter of one window per member in clip mode, which clamps the start so the
// window fits, as dynamic_update_slice does.
BatchResult dynamic_update_slice_batch(std::span<const Array> in, std::span<const int> dims,
                                       const Params&) {
  const int64_t size = batching::axis_size(in, dims);
  std::vector<Array> starts(in.begin() + 2, in.end());
  if (!any_mapped(dims.subspan(2))) {
    const int t = dims[0] != kNotMapped ? dims[0] : dims[1];
    Array x = batching::materialize_at(in[0], dims[0], size, t);
    Array u = batching::materialize_at(in[1], dims[1], size, t);
    starts.insert(starts.begin() + t, zero_start(starts));
    return {{lax::dynamic_update_slice(x, u, starts, false)}, {t}};
  }
  const Array idx = stacked_starts(starts, dims.subspan(2), size);
  const std::vector<int64_t> all = iota(starts.size());
  ScatterPlan s = plan_scatter(in[0], dims[0], idx, 0, in[1], dims[1], {all, {}, all, {}, {}}, size);
  return {{lax::scatter(s.operand, s.indices, s.updates, s.dn, lax::GatherScatterMode::clip,
                        true, true)},
          {s.out_bdim}};
}

}  // namespace

void register_indexing_batching() {
  mutable_info(Prim::Slice).batch = slice_batch;
  mutable_info(Prim::DynamicSlice).batch = dynamic_slice_batch;
  mutable_info(Prim::DynamicUpdateSlice).batch = dynamic_update_slice_batch;
  mutable_info(Prim::Gather).batch = gather_batch;
  mutable_info(Prim::Scatter).batch = scatter_batch<Prim::Scatter>;
  mutable_info(Prim::ScatterAdd).batch = scatter_batch<Prim::ScatterAdd>;
  mutable_info(Prim::ScatterMul).batch = scatter_batch<Prim::ScatterMul>;
  mutable_info(Prim::ScatterMin).batch = scatter_batch<Prim::ScatterMin>;
  mutable_info(Prim::ScatterMax).batch = scatter_batch<Prim::ScatterMax>;
}

}  // namespace jx::ops
