// Collectives over a named axis (JAX's lax/parallel.py): psum, pmax, pmin, all_gather,
// reduce_scatter (psum_scatter), all_to_all, ppermute, axis_index. A named axis is bound
// on a thread in one of two ways:
//   - pmap runs one replica per thread; each replica's thread binds the axis with its index
//     and a Rendezvous shared by the replicas, and the primitives' eager impls exchange
//     values through it (so they also run inside compiled programs, as library steps);
//   - vmap(f, {.axis_name = "i"}) binds the axis while f is traced, and the batching rules
//     compute each collective over the batch dim instead (rule_axis() says which axis the
//     BatchTrace calling a rule maps).
// Axis sizes are known at trace time (all_gather's output shape depends on it).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jx/array.h"
#include "ops/primitive.h"
#include "support/process_group.h"

namespace jx::ops::collective {

// The replicas of one pmap call meet here at each collective. Each process runs its local
// replicas as threads; the last one to arrive combines their values for all (and, in a
// multi-process run, exchanges them with the other processes through the process group,
// support/process_group.h). If a replica fails, abort() wakes the others, whose collectives
// then throw instead of waiting forever.
class Rendezvous {
 public:
  // `local` replicas in this process; `world` the process group (null: this process only;
  // pmap passes it only when the run has several processes).
  explicit Rendezvous(int64_t local, std::shared_ptr<support::ProcessGroup> world = nullptr);
  // Grouped (shard_map over a mesh that spans processes): the `local` replicas belong to
  // several groups of one mesh axis, groups[g] holding its replicas' slots in axis order,
  // each group spanning the same processes of `world` (rank order is axis order). One
  // transfer per collective serves every group: the replicas' values are gathered, and
  // each replica combines its own group's.
  Rendezvous(int64_t local, std::shared_ptr<support::ProcessGroup> world, std::vector<std::vector<int64_t>> groups);
  // Every replica's x, of every process, in global replica order (grouped: the values of
  // this replica's group, in axis order).
  std::vector<Array> gather(int64_t slot, const Array& x, const char* op);
  // Every process' x (one replica per process) laid end to end in one new array of
  // `shape` (x's bytes times the process count): all_gather along the outermost dim in
  // a single transfer, without staging copies. Null where it does not apply (several
  // local replicas, no processes to cross, a dtype the process group cannot move).
  Array gather_outermost(int64_t slot, const Array& x, const Shape& shape, const char* op);
  // The sum, max or min (prim Psum, Pmax, Pmin) of every replica's x. `x_is_free`: no one
  // else holds x's buffer, so a process-wide reduction may run in place in it.
  Array reduce(int64_t slot, const Array& x, Prim prim, const char* op, bool x_is_free = false);
  // The sum of every replica's x (leading dim a multiple of the process count), of which
  // this process keeps its block along dim 0 (rows [p, p + 1) * dim / processes): what
  // psum_scatter over dim 0 needs, at half an all-reduce's traffic. Null without processes
  // to cross or for a dtype the process group cannot reduce.
  Array reduce_scatter(int64_t slot, const Array& x, const char* op);
  int64_t local_replicas() const { return n_; }
  void abort();

 private:
  using Combine = std::function<std::vector<Array>(const std::vector<Array>& local)>;
  std::vector<Array> meet(int64_t slot, const Array& x, const char* op, const Combine& combine);

  const int64_t n_;
  const std::shared_ptr<support::ProcessGroup> world_;
  const std::vector<std::vector<int64_t>> groups_;  // empty unless grouped
  std::vector<int64_t> group_of_;                   // per slot, grouped only
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t arrived_ = 0;
  uint64_t round_ = 0;
  bool aborted_ = false;
  std::exception_ptr failure_;  // the error of a failed exchange, for the replicas it woke
  std::vector<Array> slots_, last_;
};

struct NamedAxis {
  std::string name;
  int64_t size = 0;
  int64_t index = -1;                       // the replica's index (pmap), else -1 (vmap)
  std::shared_ptr<Rendezvous> rendezvous;   // pmap only
  int64_t slot = -1;                        // pmap: the replica's index in this process
};

// Binds a named axis on this thread for the scope's lifetime (innermost wins).
class AxisScope {
 public:
  explicit AxisScope(NamedAxis axis);
  ~AxisScope();
  AxisScope(const AxisScope&) = delete;
  AxisScope& operator=(const AxisScope&) = delete;
};
// The innermost axis bound with this name on this thread, or null.
const NamedAxis* find_axis(const std::string& name);
// "'i' (size 2), 'j' (size 3)", or "none", for errors.
std::string bound_axes_text();

// The axis (name, size) of the BatchTrace whose batching rule is running, set by vmap
// around rule calls; the name is empty for a vmap without axis_name. Higher-order rules
// that batch a sub-jaxpr over the same axis read it to name their inner BatchTrace.
struct RuleAxis {
  std::string name;
  int64_t size = -1;
};
const RuleAxis& rule_axis();
class RuleAxisScope {
 public:
  RuleAxisScope(const std::string& name, int64_t size);
  ~RuleAxisScope();
  RuleAxisScope(const RuleAxisScope&) = delete;
  RuleAxisScope& operator=(const RuleAxisScope&) = delete;

 private:
  RuleAxis saved_;
};

// Binding the primitives (the lax API and the rules use these). `size` is the axis size.
Array psum(const Array& x, const std::string& axis);
Array pmax(const Array& x, const std::string& axis);
Array pmin(const Array& x, const std::string& axis);
Array all_gather(const Array& x, const std::string& axis, int64_t size, int64_t dim, bool tiled);
Array reduce_scatter(const Array& x, const std::string& axis, int64_t size, int64_t dim, bool tiled);
Array all_to_all(const Array& x, const std::string& axis, int64_t size, int64_t split_axis,
                 int64_t concat_axis, bool tiled);
// perm: flattened (source, destination) pairs.
Array ppermute(const Array& x, const std::string& axis, const std::vector<int64_t>& perm);
Array axis_index(const std::string& axis);

}  // namespace jx::ops::collective
