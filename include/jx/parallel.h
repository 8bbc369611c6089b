// pmap, the collectives over a named axis and multi-process runs (jax.pmap, jax.lax.psum
// and kin, jax.distributed); the devices are jx/device.h. See docs/distributed.md.
//
//   // JX_NUM_CPU_DEVICES=2 (or jx::set_cpu_device_count(2) before the first use)
//   auto step = jx::pmap([](const Tree& params, const Array& x, const Array& y) {
//     Tree grads = jx::grad(loss)(params, x, y);
//     return jx::lax::pmean(grads, "batch");    // the same average on every replica
//   }, {.axis_name = "batch", .in_axes = {jx::none, 0, 0}});
//   Tree g = step(params, xs, ys);   // xs: [2, per-device batch, ...]; g's leaves: [2, ...]
//
// pmap(f) maps f over axis 0 of its (mapped) arguments like vmap, but runs each index as a
// replica on its own CPU device: a thread with its share of the cores, running f jitted
// (traced and compiled once per argument signature for all replicas), the collectives
// exchanging values between the replicas' threads. The axis size may not exceed
// local_device_count(). Under another transformation (grad, jit, vmap of a pmap) pmap is
// the vmap with the same axis name: the same values, computed as one batched program, so
// it composes with everything (grad of a pmapped loss equals the single-device grad).
//
// Collectives name the axis they work over; outside a pmap or vmap that binds that name
// they throw ValueError. As in classic JAX, the transpose of psum is psum: inside a
// replica, grad of psum(loss) counts the loss of every replica (n times the gradient of
// one); average gradients with pmean after grad instead.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.h"
#include "jx/device.h"
#include "jx/jit.h"
#include "jx/tree.h"
#include "jx/vmap.h"

namespace jx {

// Multi-process runs (jax.distributed). Launch the same program K times with MPI
// (`mpirun -np K prog`, a hostfile for several hosts) and call initialize() first thing in
// main: it joins the launch, the global device list spans the processes, and a pmap's
// collectives reduce over every process' replicas (each process maps its own
// local_device_count() slices). Without an MPI launch, initialize() leaves the run a single
// process. A process that dies ends the job through the launcher; one that stops answering
// makes the others' collectives throw DistributedError after timeout_seconds.
namespace distributed {
struct InitializeOptions {
  double timeout_seconds = 0;  // 0: JX_DISTRIBUTED_TIMEOUT, default 300
};
void initialize(const InitializeOptions& options = {});
// Returns once every process has called it (multihost_utils.sync_global_devices).
void barrier(const std::string& name = "distributed::barrier");
// MPI_Finalize (also run at exit). After it, no collective may cross processes.
void shutdown();
bool is_initialized();
}  // namespace distributed
int process_index();  // 0 .. process_count() - 1
int process_count();

// device_put and device_get of a pytree, leaf by leaf.
template <class T>
  requires(!std::is_convertible_v<const T&, const Array&>)
T device_put(const T& x, const Device& device) {
  return tree::map([&](const Array& a) { return device_put(a, device); }, x);
}
template <class T>
  requires(!std::is_convertible_v<const T&, const Array&>)
T device_get(const T& x) {
  return tree::map([](const Array& a) { return device_get(a); }, x);
}

namespace lax {

// Over the named axis of the enclosing pmap or vmap. psum converts bool to int32, as JAX.
Array psum(const Array& x, const std::string& axis_name);
Array pmean(const Array& x, const std::string& axis_name);
Array pmax(const Array& x, const std::string& axis_name);
Array pmin(const Array& x, const std::string& axis_name);
// Every replica's x, stacked along `axis` (tiled: concatenated).
Array all_gather(const Array& x, const std::string& axis_name, int64_t axis = 0, bool tiled = false);
// psum, then this replica's slice along scatter_dimension (whose size is the axis size;
// tiled: a multiple of it, and the replica gets its block).
Array psum_scatter(const Array& x, const std::string& axis_name, int64_t scatter_dimension = 0,
                   bool tiled = false);
// Replica i receives slice i of split_axis from every replica, stacked along concat_axis
// (untiled: split_axis has the axis size and disappears; concat_axis indexes the result).
Array all_to_all(const Array& x, const std::string& axis_name, int64_t split_axis, int64_t concat_axis,
                 bool tiled = false);
// perm: (source, destination) pairs; a replica no pair sends to gets zeros.
Array ppermute(const Array& x, const std::string& axis_name,
               const std::vector<std::pair<int64_t, int64_t>>& perm);
// This replica's index along the axis (int32 scalar).
Array axis_index(const std::string& axis_name);
// The named axis' size (JAX: psum(1, axis_name)).
int64_t axis_size(const std::string& axis_name);

// Pytrees of Arrays (gradients, metrics), leaf by leaf.
template <class T>
  requires(!std::is_convertible_v<const T&, const Array&>)
T psum(const T& x, const std::string& axis_name) {
  return tree::map([&](const Array& a) { return psum(a, axis_name); }, x);
}
template <class T>
  requires(!std::is_convertible_v<const T&, const Array&>)
T pmean(const T& x, const std::string& axis_name) {
  return tree::map([&](const Array& a) { return pmean(a, axis_name); }, x);
}

}  // namespace lax

struct PmapOptions {
  std::string axis_name = {};  // what the collectives in f name; may stay empty without them
  AxisSpec in_axes = 0;        // as vmap's: an int (0), jx::none, or a per-argument list
  AxisSpec out_axes = 0;       // 0, or jx::none for results the same on every replica
  std::string name = {};       // for logs and errors
  // Arguments whose Array leaves are donated, as jit's donate_argnums: the caller's Arrays
  // are deleted by the call, and a replica's program may write its outputs into their
  // buffers (a training step updating its state in place).
  std::vector<int> donate_argnums = {};
  // The devices replica 0, 1, ... run on (as many as the mapped axis' size, distinct, of
  // local_devices(); in a multi-process run, every process' devices: jx::devices()).
  // Empty: the first local devices.
  std::vector<Device> devices = {};
};

namespace pmap_detail {

using ReplicaFn = std::function<std::vector<Array>(int64_t replica, const std::vector<Array>& leaves)>;

// Whether pmap must run as vmap: a trace is current or an argument is traced.
bool under_transformation(const std::vector<Array>& leaves);
// Throws where pmap cannot run as vmap: its axis spans processes, whose slices one trace
// cannot see.
void check_vmappable(const PmapOptions& opts);
// The mapped axis size, checked against the devices.
int64_t axis_size(const PmapOptions& opts, const std::vector<Array>& leaves, const std::vector<int>& in_dims);
// jit's options for the replicas' program: the name, and donate_argnums shifted past the
// axis size that call_replica passes first.
JitOptions replica_jit_options(const PmapOptions& opts);
// Runs replica(i, leaves of replica i) for every i on its own thread with the axis bound,
// then stacks the results along out_dims() (out_axes none: replica 0's result). The leaves
// of donated arguments (per `def`) are deleted once the replicas hold their slices.
std::vector<Array> run(const PmapOptions& opts, int64_t n, const std::vector<Array>& leaves,
                       const tree::TreeDef& def, const std::vector<int>& in_dims, const ReplicaFn& replica,
                       const std::function<std::vector<int>()>& out_dims);

}  // namespace pmap_detail

template <class F>
class Pmapped {
 public:
  Pmapped(F f, PmapOptions opts)
      : f_(std::move(f)),
        opts_(std::move(opts)),
        core_(jit_detail::make_core(pmap_detail::replica_jit_options(opts_))) {}

  template <class... Args>
  auto operator()(const Args&... args) const {
    using In = std::tuple<std::decay_t<Args>...>;
    using R = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
    auto [leaves, def] = tree::flatten(In(args...));
    ad::check_in_axes_count(opts_.in_axes, sizeof...(Args));
    std::vector<int> in_dims = ad::axes_for_leaves("in_axes", opts_.in_axes, def, leaves, 0);
    if (pmap_detail::under_transformation(leaves)) {
      pmap_detail::check_vmappable(opts_);
      return vmap(f_, {.in_axes = opts_.in_axes, .out_axes = opts_.out_axes, .axis_name = opts_.axis_name})(args...);
    }
    const int64_t n = pmap_detail::axis_size(opts_, leaves, in_dims);
    std::shared_ptr<const tree::TreeDef> out_def;
    std::mutex mu;
    // One replica: its arguments rebuilt from its leaves, then f jitted (the axis size is a
    // static argument, so the program of one axis size serves only that size).
    pmap_detail::ReplicaFn replica = [&](int64_t, const std::vector<Array>& xs) {
      std::shared_ptr<const tree::TreeDef> od;
      std::vector<Array> outs = jit_detail::call_replica<R>(*core_, n, f_, tree::unflatten<In>(def, xs), &od);
      std::lock_guard<std::mutex> g(mu);
      if (!out_def) out_def = od;
      return outs;
    };
    std::vector<Array> outs = pmap_detail::run(opts_, n, leaves, def, in_dims, replica, [&] {
      return ad::out_axes_for_leaves(opts_.out_axes, *out_def);
    });
    return tree::unflatten<R>(*out_def, std::move(outs));
  }

 private:
  F f_;
  PmapOptions opts_;
  std::shared_ptr<jit_detail::JitCore> core_;
};

template <class F>
Pmapped<std::decay_t<F>> pmap(F&& f, PmapOptions opts = {}) {
  return Pmapped<std::decay_t<F>>(std::forward<F>(f), std::move(opts));
}

}  // namespace jx
