// Family: collectives over a named axis (ops/collective.h), JAX's lax/parallel.py.
// Params: axis_name (string) everywhere; axis_size (the axis' size, known at trace time)
// where the output shape needs it; all_gather: all_gather_dimension, tiled;
// reduce_scatter: scatter_dimension, tiled; all_to_all: split_axis, concat_axis, tiled;
// ppermute: perm (flattened (source, destination) pairs).
// Semantics per replica i of n, with x_j replica j's operand:
//   psum / pmax / pmin: the sum / max / min of every x_j (the same on every replica);
//   all_gather: the x_j stacked along all_gather_dimension (tiled: concatenated);
//   reduce_scatter: the sum of the x_j, then its i-th slice along scatter_dimension (whose
//     size is n; tiled: its i-th block of size/n);
//   all_to_all: x_j's i-th slice along split_axis from every j, stacked along concat_axis
//     (in the output's dims); tiled: blocks, concatenated;
//   ppermute: x_s where (s, i) is a pair of perm, zeros when no pair sends to i;
//   axis_index: i, as int32.
// Rules: psum, all_gather, reduce_scatter, all_to_all and ppermute are linear; transposes
// psum -> psum, all_gather <-> reduce_scatter, all_to_all -> all_to_all with the axes
// swapped, ppermute -> the inverse permutation (classic JAX, where the transpose of psum
// is psum). pmax/pmin have a jvp (JAX has none): the tangent of the replicas that hold the
// maximum, averaged over ties, as reduce_max's.
#include "ops/collective.h"

#include <algorithm>
#include <cstring>

#include "ops/batching.h"
#include "ops/common.h"
#include "transforms/bind.h"

namespace jx::ops {
namespace collective {

// ---- the axis environment ----

namespace {
thread_local std::vector<NamedAxis> t_axes;
thread_local RuleAxis t_rule_axis;
}  // namespace

namespace {

Array reduce_all(Prim p, const std::vector<Array>& all) {
  Array acc = all[0];
  for (size_t j = 1; j < all.size(); ++j)
    acc = p == Prim::Psum ? lax::add(acc, all[j]) : p == Prim::Pmax ? lax::max(acc, all[j]) : lax::min(acc, all[j]);
  return acc;
}

// Every process' values of `local` (each process' replicas, same type each), in process
// order: the local values laid end to end and all-gathered as bytes.
// The staging buffers come from jx's caching allocator: fresh memory from malloc costs
// page faults of several ms per MB on every call.
std::vector<Array> gather_processes(support::ProcessGroup& world, const std::vector<Array>& local, const char* op) {
  const Array& first = local[0];
  const int64_t bytes = int64_t(first.nbytes()), n = int64_t(local.size());
  Array mine = local[0];
  if (n > 1) {
    mine = detail::empty_array({n * bytes}, DType::UInt8);
    for (int64_t j = 0; j < n; ++j) {
      if (local[size_t(j)].shape() != first.shape() || local[size_t(j)].dtype() != first.dtype())
        throw ValueError(str("[", op, "] replica ", j, " passes ", type_str(local[size_t(j)].dtype(), local[size_t(j)].shape()),
                             " but replica 0 passes ", type_str(first.dtype(), first.shape()),
                             "; every replica must pass the same type"));
      if (bytes) std::memcpy(detail::data<char>(mine) + j * bytes, detail::raw_data(local[size_t(j)]), size_t(bytes));
    }
  }
  const Array all = detail::empty_array({n * bytes * world.size()}, DType::UInt8);
  if (bytes) world.all_gather(detail::raw_data(mine), detail::raw_data(all), n * bytes, op);
  std::vector<Array> out;
  for (int64_t j = 0; j < n * world.size(); ++j) {
    Array a = detail::empty_array(first.shape(), first.dtype(), first.weak_type());
    if (bytes) std::memcpy(detail::raw_data(a), detail::data<char>(all) + j * bytes, size_t(bytes));
    out.push_back(std::move(a));
  }
  return out;
}

support::ProcessGroup::Reduce reduce_op(Prim p) {
  using R = support::ProcessGroup::Reduce;
  return p == Prim::Psum ? R::Sum : p == Prim::Pmax ? R::Max : R::Min;
}

}  // namespace

Rendezvous::Rendezvous(int64_t local, std::shared_ptr<support::ProcessGroup> world)
    : n_(local), world_(std::move(world)), slots_(size_t(local)) {}

Rendezvous::Rendezvous(int64_t local, std::shared_ptr<support::ProcessGroup> world,
                       std::vector<std::vector<int64_t>> groups)
    : n_(local), world_(std::move(world)), groups_(std::move(groups)), group_of_(size_t(local), -1),
      slots_(size_t(local)) {
  for (size_t g = 0; g < groups_.size(); ++g)
    for (int64_t slot : groups_[g]) group_of_[size_t(slot)] = int64_t(g);
}

std::vector<Array> Rendezvous::meet(int64_t slot, const Array& x, const char* op, const Combine& combine) {
  std::unique_lock<std::mutex> lock(mu_);
  // A failed exchange fails every replica with its error; a replica that failed elsewhere
  // has its own error, which the pmap call raises.
  auto fail = [&] {
    if (failure_) std::rethrow_exception(failure_);
    throw ValueError(str("[", op, "] another pmap replica failed before reaching this collective; "
                         "its error is the one the pmap call raises"));
  };
  if (aborted_) fail();
  slots_[size_t(slot)] = device_get(x);  // replicas compute on different devices
  if (++arrived_ == n_) {
    // The last to arrive combines for all; the others wait for the round to end.
    try {
      last_ = combine(slots_);
    } catch (...) {
      aborted_ = true;
      failure_ = std::current_exception();
      cv_.notify_all();
      throw;
    }
    arrived_ = 0;
    ++round_;
    for (Array& a : slots_) a = Array();
    cv_.notify_all();
  } else {
    const uint64_t round = round_;
    cv_.wait(lock, [&] { return round_ != round || aborted_; });
    if (round_ == round) fail();
  }
  return last_;
}

std::vector<Array> Rendezvous::gather(int64_t slot, const Array& x, const char* op) {
  std::vector<Array> all = meet(slot, x, op, [&](const std::vector<Array>& local) {
    return world_ ? gather_processes(*world_, local, op) : local;
  });
  if (groups_.empty()) return all;
  // Process q's replicas are all[q * n_ ...]; the group's are at the same slots in each.
  std::vector<Array> members;
  for (int64_t q = 0, processes = world_ ? world_->size() : 1; q < processes; ++q)
    for (int64_t s : groups_[size_t(group_of_[size_t(slot)])]) members.push_back(all[size_t(q * n_ + s)]);
  return members;
}

Array Rendezvous::reduce(int64_t slot, const Array& x, Prim prim, const char* op, bool x_is_free) {
  // Grouped: every member reduces its group's values in axis order, so all get the same bits.
  if (!groups_.empty()) return reduce_all(prim, gather(slot, x, op));
  return meet(slot, x, op, [&](const std::vector<Array>& local) {
    // This process' replicas first, then one transfer of the partial result.
    const Array part = reduce_all(prim, local);
    if (!world_) return std::vector<Array>{part};
    // No native reduction for this dtype: every process' partial result, reduced here.
    if (!world_->can_reduce(part.dtype())) return std::vector<Array>{reduce_all(prim, gather_processes(*world_, {part}, op))};
    // In place when the partial result is ours to overwrite (a sum of several replicas is
    // new): MPI's in-place all-reduce moves a third less memory than one into a new buffer.
    if ((n_ > 1 || x_is_free) && part.size()) {
      world_->all_reduce(detail::raw_data(part), detail::raw_data(part), part.size(), part.dtype(),
                         reduce_op(prim), op);
      return std::vector<Array>{part};
    }
    Array out = detail::empty_array(part.shape(), part.dtype(), part.weak_type());
    if (part.size())
      world_->all_reduce(detail::raw_data(part), detail::raw_data(out), part.size(), part.dtype(), reduce_op(prim), op);
    return std::vector<Array>{out};
  })[0];
}

Array Rendezvous::gather_outermost(int64_t slot, const Array& x, const Shape& shape, const char* op) {
  if (!world_ || n_ != 1 || !groups_.empty()) return Array();
  return meet(slot, x, op, [&](const std::vector<Array>& local) {
    const Array& mine = local[0];
    Array out = detail::empty_array(shape, mine.dtype(), mine.weak_type());
    const size_t bytes = mine.nbytes();
    char* at = detail::data<char>(out) + size_t(world_->rank()) * bytes;
    if (bytes) std::memcpy(at, detail::raw_data(mine), bytes);
    world_->all_gather(at, detail::raw_data(out), int64_t(bytes), op);  // in place
    return std::vector<Array>{out};
  })[0];
}

Array Rendezvous::reduce_scatter(int64_t slot, const Array& x, const char* op) {
  const int64_t processes = world_ ? world_->size() : 1;
  if (processes == 1 || !groups_.empty() || !world_->can_reduce(x.dtype()) || x.ndim() == 0 ||
      x.shape()[0] % processes != 0)
    return Array();
  return meet(slot, x, op, [&](const std::vector<Array>& local) {
    const Array part = reduce_all(Prim::Psum, local);
    Shape shape = part.shape();
    shape[0] /= processes;
    Array out = detail::empty_array(shape, part.dtype(), part.weak_type());
    if (part.size()) world_->reduce_scatter(detail::raw_data(part), detail::raw_data(out), part.size(), part.dtype(), op);
    return std::vector<Array>{out};
  })[0];
}

void Rendezvous::abort() {
  std::lock_guard<std::mutex> lock(mu_);
  aborted_ = true;
  cv_.notify_all();
}

AxisScope::AxisScope(NamedAxis axis) { t_axes.push_back(std::move(axis)); }
AxisScope::~AxisScope() { t_axes.pop_back(); }

const NamedAxis* find_axis(const std::string& name) {
  for (auto it = t_axes.rbegin(); it != t_axes.rend(); ++it)
    if (it->name == name) return &*it;
  return nullptr;
}

std::string bound_axes_text() {
  if (t_axes.empty()) return "none";
  std::string s;
  for (size_t i = 0; i < t_axes.size(); ++i)
    s += str(i ? ", " : "", "'", t_axes[i].name, "' (size ", t_axes[i].size, ")");
  return s;
}

const RuleAxis& rule_axis() { return t_rule_axis; }
RuleAxisScope::RuleAxisScope(const std::string& name, int64_t size) : saved_(t_rule_axis) {
  t_rule_axis = RuleAxis{name, size};
}
RuleAxisScope::~RuleAxisScope() { t_rule_axis = saved_; }

// ---- binding ----

Array psum(const Array& x, const std::string& axis) { return bind1(Prim::Psum, {x}, {{"axis_name", axis}}); }
Array pmax(const Array& x, const std::string& axis) { return bind1(Prim::Pmax, {x}, {{"axis_name", axis}}); }
Array pmin(const Array& x, const std::string& axis) { return bind1(Prim::Pmin, {x}, {{"axis_name", axis}}); }
Array all_gather(const Array& x, const std::string& axis, int64_t size, int64_t dim, bool tiled) {
  return bind1(Prim::AllGather, {x},
               {{"axis_name", axis}, {"axis_size", size}, {"all_gather_dimension", dim}, {"tiled", tiled}});
}
Array reduce_scatter(const Array& x, const std::string& axis, int64_t size, int64_t dim, bool tiled) {
  return bind1(Prim::ReduceScatter, {x},
               {{"axis_name", axis}, {"axis_size", size}, {"scatter_dimension", dim}, {"tiled", tiled}});
}
Array all_to_all(const Array& x, const std::string& axis, int64_t size, int64_t split_axis,
                 int64_t concat_axis, bool tiled) {
  return bind1(Prim::AllToAll, {x},
               {{"axis_name", axis},
                {"axis_size", size},
                {"split_axis", split_axis},
                {"concat_axis", concat_axis},
                {"tiled", tiled}});
}
Array ppermute(const Array& x, const std::string& axis, const std::vector<int64_t>& perm) {
  return bind1(Prim::Ppermute, {x}, {{"axis_name", axis}, {"perm", perm}});
}
Array axis_index(const std::string& axis) {
  return bind1(Prim::AxisIndex, std::span<const Array>(), {{"axis_name", axis}});
}

}  // namespace collective

namespace {

namespace cl = collective;
using batching::BatchResult;
using batching::kNotMapped;

const std::string& axis_of(const Params& p) { return p.s("axis_name"); }

// ---- shapes ----

void check_dim(const char* op, const char* what, int64_t d, int64_t rank, const Aval& x) {
  if (d < 0 || d >= rank)
    throw IndexError(str("[", op, "] ", what, " ", d, " is out of range for ", aval_str(x), " (valid: 0..",
                         rank - 1, ")"));
}

void check_divides(const char* op, const char* what, int64_t d, const Aval& x, int64_t n, bool tiled) {
  const int64_t len = x.shape[size_t(d)];
  if (tiled ? len % n != 0 : len != n)
    throw ShapeError(str("[", op, "] ", what, " ", d, " of ", aval_str(x), " has size ", len, ", which must ",
                         tiled ? "be a multiple of" : "equal", " the axis size ", n,
                         tiled ? "" : " (or pass tiled = true to split it into blocks)"));
}

Avals same_aval(std::span<const Aval> in, const Params&) { return {in[0]}; }

Avals all_gather_aval(std::span<const Aval> in, const Params& p) {
  Aval out = in[0];
  const int64_t d = p.i("all_gather_dimension"), n = p.i("axis_size");
  const bool tiled = p.b("tiled");
  const int64_t rank = int64_t(out.shape.size());
  if (tiled) {
    check_dim("all_gather", "axis", d, rank, in[0]);
    out.shape[size_t(d)] *= n;
  } else {
    check_dim("all_gather", "axis", d, rank + 1, in[0]);
    out.shape.insert(size_t(d), n);
  }
  return {out};
}

Avals reduce_scatter_aval(std::span<const Aval> in, const Params& p) {
  Aval out = in[0];
  const int64_t d = p.i("scatter_dimension"), n = p.i("axis_size");
  const bool tiled = p.b("tiled");
  check_dim("psum_scatter", "scatter_dimension", d, int64_t(out.shape.size()), in[0]);
  check_divides("psum_scatter", "scatter_dimension", d, in[0], n, tiled);
  if (tiled)
    out.shape[size_t(d)] /= n;
  else
    out.shape.erase(size_t(d));
  return {out};
}

Avals all_to_all_aval(std::span<const Aval> in, const Params& p) {
  Aval out = in[0];
  const int64_t s = p.i("split_axis"), c = p.i("concat_axis"), n = p.i("axis_size");
  const bool tiled = p.b("tiled");
  const int64_t rank = int64_t(out.shape.size());
  check_dim("all_to_all", "split_axis", s, rank, in[0]);
  check_dim("all_to_all", "concat_axis", c, rank, in[0]);
  check_divides("all_to_all", "split_axis", s, in[0], n, tiled);
  if (tiled) {
    out.shape[size_t(s)] /= n;
    out.shape[size_t(c)] *= n;
  } else {
    out.shape.erase(size_t(s));
    out.shape.insert(size_t(c), n);
  }
  return {out};
}

Avals ppermute_aval(std::span<const Aval> in, const Params& p) {
  const auto& perm = p.ints("perm");
  if (perm.size() % 2 != 0)
    throw ValueError("[ppermute] perm must hold (source, destination) pairs");
  std::vector<int64_t> src, dst;
  for (size_t k = 0; k < perm.size(); k += 2) {
    if (std::count(src.begin(), src.end(), perm[k]) || std::count(dst.begin(), dst.end(), perm[k + 1]))
      throw ValueError(str("[ppermute] perm ", list_str(perm),
                           " sends from or to a replica twice; each source and each destination may "
                           "appear once"));
    src.push_back(perm[k]);
    dst.push_back(perm[k + 1]);
  }
  return {in[0]};
}

Avals axis_index_aval(std::span<const Aval>, const Params&) { return {Aval{Shape{}, DType::Int32, false}}; }

Avals numeric_aval(std::span<const Aval> in, const Params& p, const char* op) {
  if (in[0].dtype == DType::Bool)
    throw DTypeError(str("[", op, "] does not take bool ", aval_str(in[0]),
                         "; convert to an integer type first (lax::psum does)"));
  return same_aval(in, p);
}

// ---- eager impls: the replicas meet in their pmap's rendezvous ----

// The axis bound to pmap replicas on this thread (or a clear error).
const cl::NamedAxis& replica_axis(const char* op, const Params& p) {
  const std::string& name = axis_of(p);
  const cl::NamedAxis* axis = cl::find_axis(name);
  if (!axis || !axis->rendezvous)
    throw ValueError(str("[", op, "] axis name '", name, "' is not bound to pmap replicas on this thread (bound: ",
                         cl::bound_axes_text(), "); call collectives inside jx::pmap(f, {.axis_name = \"",
                         name, "\"}) or jx::vmap(f, {.axis_name = \"", name, "\"})"));
  return *axis;
}

// Every replica's operand, in global replica order, and this replica's global index.
std::pair<std::vector<Array>, int64_t> exchange(const char* op, const Params& p, const Array& x) {
  const cl::NamedAxis& axis = replica_axis(op, p);
  return {axis.rendezvous->gather(axis.slot, x, op), axis.index};
}

template <Prim P>
void reduce_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const cl::NamedAxis& axis = replica_axis(name(P), p);
  // A compiled program hands over operands that die here (executable.cpp): then this
  // handle is the buffer's only owner.
  const bool free = in[0].impl().use_count() == 1 && in[0].impl()->buffer.use_count() == 1;
  out[0] = axis.rendezvous->reduce(axis.slot, in[0], P, name(P), free);
}

void all_gather_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const int64_t d = p.i("all_gather_dimension");
  // Along the outermost dim (untiled, or tiled over dim 0) the result is the replicas' x
  // end to end: one in-place transfer straight into it.
  if (d == 0) {
    const cl::NamedAxis& axis = replica_axis("all_gather", p);
    Shape shape = in[0].shape();
    if (p.b("tiled")) shape[0] *= axis.size;
    else shape.insert(0, axis.size);
    Array gathered = axis.rendezvous->gather_outermost(axis.slot, in[0], shape, "all_gather");
    if (gathered.valid()) {
      out[0] = gathered;
      return;
    }
  }
  auto [all, i] = exchange("all_gather", p, in[0]);
  if (!p.b("tiled"))
    for (Array& a : all) a = lax::expand_dims(a, {d});
  out[0] = lax::concatenate(all, d);
}

Array block(const Array& x, int64_t dim, int64_t index, int64_t n, bool tiled) {
  const int64_t k = tiled ? x.shape()[size_t(dim)] / n : 1;
  Array b = lax::slice_in_dim(x, index * k, (index + 1) * k, 1, dim);
  return tiled ? b : lax::squeeze(b, {dim});
}

void reduce_scatter_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const cl::NamedAxis& axis = replica_axis("psum_scatter", p);
  const bool tiled = p.b("tiled");
  // Across processes along dim 0: each process receives only its replicas' blocks.
  if (p.i("scatter_dimension") == 0) {
    const Array mine = axis.rendezvous->reduce_scatter(axis.slot, in[0], "psum_scatter");
    if (mine.valid()) {
      out[0] = block(mine, 0, axis.slot, axis.rendezvous->local_replicas(), tiled);
      return;
    }
  }
  const Array total = axis.rendezvous->reduce(axis.slot, in[0], Prim::Psum, "psum_scatter");
  out[0] = block(total, p.i("scatter_dimension"), axis.index, p.i("axis_size"), tiled);
}

void all_to_all_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  auto [all, i] = exchange("all_to_all", p, in[0]);
  const int64_t s = p.i("split_axis"), c = p.i("concat_axis"), n = p.i("axis_size");
  const bool tiled = p.b("tiled");
  std::vector<Array> pieces;
  for (const Array& a : all) {
    Array b = block(a, s, i, n, tiled);
    pieces.push_back(tiled ? b : lax::expand_dims(b, {c}));
  }
  out[0] = lax::concatenate(pieces, c);
}

// The source that sends to `dst`, or -1.
int64_t source_of(const std::vector<int64_t>& perm, int64_t dst) {
  for (size_t k = 0; k < perm.size(); k += 2)
    if (perm[k + 1] == dst) return perm[k];
  return -1;
}

Array zeros_like(const Array& x) {
  return lax::broadcast_in_dim(lax::convert_element_type(Array(0), x.dtype()), x.shape(), {});
}

void ppermute_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  auto [all, i] = exchange("ppermute", p, in[0]);
  const int64_t src = source_of(p.ints("perm"), i);
  out[0] = src >= 0 && src < int64_t(all.size()) ? all[size_t(src)] : zeros_like(in[0]);
}

void axis_index_impl(std::span<const Array>, std::span<Array> out, const Params& p) {
  const std::string& name = axis_of(p);
  const cl::NamedAxis* axis = cl::find_axis(name);
  if (!axis || axis->index < 0)
    throw ValueError(str("[axis_index] axis name '", name, "' is not bound to pmap replicas on this thread (bound: ",
                         cl::bound_axes_text(), "); call it inside jx::pmap or jx::vmap with that axis_name"));
  out[0] = lax::convert_element_type(Array(int32_t(axis->index)), DType::Int32);
}

// ---- autodiff ----

// v in x's dtype and shape.
Array full_like(double v, const Array& x) {
  return lax::broadcast_in_dim(lax::convert_element_type(Array(v), x.dtype()), x.shape(), {});
}

// The same collective applied to a tangent or cotangent (invalid = zero stays zero).
Array rebind(Prim prim, const Array& t, const Params& p) {
  if (!t.valid()) return Array();
  return bind1(prim, {t}, p);
}

template <Prim P>
Arrays linear_jvp(std::span<const Array>, std::span<const Array>, std::span<const Array> tangents,
                  const Params& p) {
  return {rebind(P, tangents[0], p)};
}

Arrays extreme_jvp(std::span<const Array> primals, std::span<const Array> outs, std::span<const Array> tangents,
                   const Params& p) {
  if (!tangents[0].valid()) return {Array()};
  const std::string& axis = axis_of(p);
  Array at = lax::eq(primals[0], outs[0]);
  Array ties = cl::psum(lax::convert_element_type(at, primals[0].dtype()), axis);
  Array picked = lax::select(at, tangents[0], zeros_like(tangents[0]));
  return {lax::div(cl::psum(picked, axis), ties)};
}

Arrays psum_transpose(std::span<const Array> cts, std::span<const Array>, std::span<const Aval>,
                      std::span<const bool>, const Params& p) {
  return {rebind(Prim::Psum, cts[0], p)};
}

Params with_axis(const Params& p, std::initializer_list<std::pair<std::string_view, ParamValue>> items) {
  Params q{{"axis_name", axis_of(p)}, {"axis_size", p.i("axis_size")}};
  for (const auto& [k, v] : items) q.set(k, v);
  q.set("tiled", p.b("tiled"));
  return q;
}

Arrays all_gather_transpose(std::span<const Array> cts, std::span<const Array>, std::span<const Aval>,
                            std::span<const bool>, const Params& p) {
  return {rebind(Prim::ReduceScatter, cts[0], with_axis(p, {{"scatter_dimension", p.i("all_gather_dimension")}}))};
}

Arrays reduce_scatter_transpose(std::span<const Array> cts, std::span<const Array>, std::span<const Aval>,
                                std::span<const bool>, const Params& p) {
  return {rebind(Prim::AllGather, cts[0], with_axis(p, {{"all_gather_dimension", p.i("scatter_dimension")}}))};
}

Arrays all_to_all_transpose(std::span<const Array> cts, std::span<const Array>, std::span<const Aval>,
                            std::span<const bool>, const Params& p) {
  return {rebind(Prim::AllToAll, cts[0],
                 with_axis(p, {{"split_axis", p.i("concat_axis")}, {"concat_axis", p.i("split_axis")}}))};
}

Arrays ppermute_transpose(std::span<const Array> cts, std::span<const Array>, std::span<const Aval>,
                          std::span<const bool>, const Params& p) {
  std::vector<int64_t> inverse = p.ints("perm");
  for (size_t k = 0; k < inverse.size(); k += 2) std::swap(inverse[k], inverse[k + 1]);
  return {rebind(Prim::Ppermute, cts[0], Params{{"axis_name", axis_of(p)}, {"perm", inverse}})};
}

// ---- batching ----

// Whether the BatchTrace calling the rule maps this collective's axis.
bool maps_axis(const Params& p) {
  const cl::RuleAxis& r = cl::rule_axis();
  return !r.name.empty() && r.name == axis_of(p);
}

// Another axis: the collective runs per batch element, with the batch dim in front and
// the dimension params shifted past it.
BatchResult other_axis(Prim prim, const Array& x, int d, const Params& p,
                       std::initializer_list<const char*> dim_params) {
  if (d == kNotMapped) return {{bind1(prim, {x}, p)}, {kNotMapped}};
  if (dim_params.size() == 0) return {{bind1(prim, {x}, p)}, {d}};
  Params q = p;
  for (const char* k : dim_params) q.set(k, p.i(k) + 1);
  return {{bind1(prim, {batching::move_bdim(x, d, 0)}, q)}, {0}};
}

int64_t rule_size() { return cl::rule_axis().size; }

// x with its batch dim (the replicas) in front; an unmapped x is the same on every replica.
Array replicas_in_front(const Array& x, int d) { return batching::bdim_to_front(x, d, rule_size()); }

template <Prim P>
BatchResult reduce_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  const Array& x = in[0];
  const int d = dims[0];
  if (!maps_axis(p)) return other_axis(P, x, d, p, {});
  if (d == kNotMapped) return {{P == Prim::Psum ? lax::mul(x, full_like(double(rule_size()), x)) : x}, {kNotMapped}};
  const std::vector<int64_t> axes{d};
  Array r = P == Prim::Psum ? lax::reduce_sum(x, axes) : P == Prim::Pmax ? lax::reduce_max(x, axes) : lax::reduce_min(x, axes);
  return {{r}, {kNotMapped}};
}

// Merges dims a and a + 1 of x (row-major: a is the outer one).
Array merge_dims(const Array& x, int64_t a) {
  Shape s;
  for (int64_t k = 0; k < x.ndim(); ++k) {
    if (k == a + 1) continue;
    s.push_back(k == a ? x.shape()[size_t(a)] * x.shape()[size_t(a) + 1] : x.shape()[size_t(k)]);
  }
  return lax::reshape(x, s);
}

// Splits dim a of x into (n, size / n).
Array split_dim(const Array& x, int64_t a, int64_t n) {
  Shape s;
  for (int64_t k = 0; k < x.ndim(); ++k) {
    if (k == a) {
      s.push_back(n);
      s.push_back(x.shape()[size_t(k)] / n);
    } else {
      s.push_back(x.shape()[size_t(k)]);
    }
  }
  return lax::reshape(x, s);
}

BatchResult all_gather_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  const int64_t a = p.i("all_gather_dimension");
  if (!maps_axis(p)) return other_axis(Prim::AllGather, in[0], dims[0], p, {"all_gather_dimension"});
  // Every replica gets the replicas' values stacked at a: the batch dim moved there.
  Array g = batching::move_bdim(replicas_in_front(in[0], dims[0]), 0, int(a));
  return {{p.b("tiled") ? merge_dims(g, a) : g}, {kNotMapped}};
}

BatchResult reduce_scatter_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  const int64_t s = p.i("scatter_dimension");
  if (!maps_axis(p)) return other_axis(Prim::ReduceScatter, in[0], dims[0], p, {"scatter_dimension"});
  Array total = reduce_batch<Prim::Psum>(in, dims, p).first[0];
  // Replica b keeps slice (or block) b along s: the sum is batched along s.
  if (!p.b("tiled")) return {{total}, {int(s)}};
  return {{split_dim(total, s, rule_size())}, {int(s)}};
}

// Untiled all_to_all over the mapped axis: X holds the replicas in front, each with its
// split axis s; replica b receives every replica's slice b, stacked at c.
Array all_to_all_replicas(const Array& X, int64_t s, int64_t c) {
  const int64_t rank = X.ndim() - 1;  // per replica
  std::vector<int64_t> rest;
  for (int64_t k = 0; k < rank; ++k)
    if (k != s) rest.push_back(k + 1);
  rest.insert(rest.begin() + c, 0);  // the sending replica, at c
  std::vector<int64_t> perm{s + 1};
  perm.insert(perm.end(), rest.begin(), rest.end());
  return lax::transpose(X, perm);
}

BatchResult all_to_all_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  const int64_t s = p.i("split_axis"), c = p.i("concat_axis"), n = rule_size();
  if (!maps_axis(p)) return other_axis(Prim::AllToAll, in[0], dims[0], p, {"split_axis", "concat_axis"});
  Array X = replicas_in_front(in[0], dims[0]);
  if (!p.b("tiled")) return {{all_to_all_replicas(X, s, c)}, {0}};
  // Tiled: split s into (n, block), exchange untiled, then merge the stacked replicas into c.
  Array R = all_to_all_replicas(split_dim(X, s + 1, n), s, c);
  return {{merge_dims(R, c + 1)}, {0}};
}

BatchResult ppermute_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  if (!maps_axis(p)) return other_axis(Prim::Ppermute, in[0], dims[0], p, {});
  const Array X = replicas_in_front(in[0], dims[0]);
  const auto& perm = p.ints("perm");
  std::vector<Array> rows;
  for (int64_t b = 0; b < rule_size(); ++b) {
    const int64_t src = source_of(perm, b);
    Array row = lax::slice_in_dim(X, std::max<int64_t>(src, 0), std::max<int64_t>(src, 0) + 1, 1, 0);
    rows.push_back(src >= 0 ? row : zeros_like(row));
  }
  return {{lax::concatenate(rows, 0)}, {0}};
}

BatchResult axis_index_batch(std::span<const Array>, std::span<const int>, const Params& p) {
  if (!maps_axis(p)) return {{cl::axis_index(axis_of(p))}, {kNotMapped}};
  return {{lax::iota(DType::Int32, rule_size())}, {0}};
}

void set(Prim prim, AbstractEvalRule eval, ImplRule impl, BatchRule batch) {
  auto& s = mutable_info(prim);
  s.abstract_eval = eval;
  s.impl = impl;
  s.batch = batch;
  s.collective = true;
}

}  // namespace

void register_collective() {
  set(Prim::Psum, [](std::span<const Aval> in, const Params& p) { return numeric_aval(in, p, "psum"); },
      reduce_impl<Prim::Psum>, reduce_batch<Prim::Psum>);
  mutable_info(Prim::Psum).jvp = linear_jvp<Prim::Psum>;
  mutable_info(Prim::Psum).transpose = psum_transpose;

  for (Prim prim : {Prim::Pmax, Prim::Pmin}) {
    set(prim,
        prim == Prim::Pmax ? AbstractEvalRule([](std::span<const Aval> in, const Params& p) { return numeric_aval(in, p, "pmax"); })
                           : AbstractEvalRule([](std::span<const Aval> in, const Params& p) { return numeric_aval(in, p, "pmin"); }),
        prim == Prim::Pmax ? reduce_impl<Prim::Pmax> : reduce_impl<Prim::Pmin>,
        prim == Prim::Pmax ? reduce_batch<Prim::Pmax> : reduce_batch<Prim::Pmin>);
    mutable_info(prim).jvp = extreme_jvp;
    mutable_info(prim).not_linear = true;
  }

  set(Prim::AllGather, all_gather_aval, all_gather_impl, all_gather_batch);
  mutable_info(Prim::AllGather).jvp = linear_jvp<Prim::AllGather>;
  mutable_info(Prim::AllGather).transpose = all_gather_transpose;

  set(Prim::ReduceScatter, reduce_scatter_aval, reduce_scatter_impl, reduce_scatter_batch);
  mutable_info(Prim::ReduceScatter).jvp = linear_jvp<Prim::ReduceScatter>;
  mutable_info(Prim::ReduceScatter).transpose = reduce_scatter_transpose;

  set(Prim::AllToAll, all_to_all_aval, all_to_all_impl, all_to_all_batch);
  mutable_info(Prim::AllToAll).jvp = linear_jvp<Prim::AllToAll>;
  mutable_info(Prim::AllToAll).transpose = all_to_all_transpose;

  set(Prim::Ppermute, ppermute_aval, ppermute_impl, ppermute_batch);
  mutable_info(Prim::Ppermute).jvp = linear_jvp<Prim::Ppermute>;
  mutable_info(Prim::Ppermute).transpose = ppermute_transpose;

  set(Prim::AxisIndex, axis_index_aval, axis_index_impl, axis_index_batch);
  mutable_info(Prim::AxisIndex).zero_tangent = true;
  mutable_info(Prim::AxisIndex).not_linear = true;
}

}  // namespace jx::ops
