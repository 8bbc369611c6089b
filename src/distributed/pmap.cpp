// pmap and the replica runner (include/jx/parallel.h; the devices are core/device.cpp).
// Each replica is a thread with the pmap's axis bound to its index and a Rendezvous shared
// with the other replicas (ops/collective.h); replica 0 runs on the calling thread. A replica that throws aborts
// the rendezvous, so the others leave their collectives instead of waiting forever, and
// the pmap call rethrows the first failure.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <exception>
#include <optional>
#include <thread>

#include "core/array_impl.h"
#include "distributed/replicas.h"
#include "jx/config.h"
#include "jx/lax.h"
#include "jx/parallel.h"
#include "ops/collective.h"
#include "support/process_group.h"
#include "support/str.h"
#include "transforms/trace.h"

namespace jx {
namespace {

// The config flags a replica thread sees as the caller does (scoped overrides are per thread).
struct ConfigSnapshot {
  config::BoolFlag* flags[5] = {&config::threefry_partitionable, &config::disable_jit, &config::debug_nans,
                                &config::log_compiles, &config::debug_key_reuse};
  bool values[5] = {};
  ConfigSnapshot() {
    for (int k = 0; k < 5; ++k) values[k] = flags[k]->value();
  }
};

}  // namespace

namespace pmap_detail {
namespace {

namespace cl = ops::collective;

std::string pmap_name(const PmapOptions& opts) { return opts.name.empty() ? "pmap" : opts.name; }

Array replica_slice(const Array& x, int d, int64_t i) {
  if (d < 0) return x;
  return lax::squeeze(lax::slice_in_dim(x, i, i + 1, 1, d), {d});
}

// The caller's donated leaves give up their buffers, so that the replicas' slices (views
// or aliases of them) are the only owners and each replica's jit may reuse its own. A
// leaf also passed as an argument that is not donated keeps its buffer; one a replica
// received as it is (same device) is deleted by that replica's jit.
void delete_donated(const PmapOptions& opts, const std::vector<Array>& leaves, const tree::TreeDef& def,
                    const std::vector<std::vector<Array>>& ins) {
  if (opts.donate_argnums.empty()) return;
  const std::vector<tree::TreeDef> args = def.children();
  std::vector<bool> donated(leaves.size(), false);
  size_t off = 0;
  for (size_t a = 0; a < args.size(); ++a) {
    const bool d = std::find(opts.donate_argnums.begin(), opts.donate_argnums.end(), int(a)) !=
                   opts.donate_argnums.end();
    for (size_t k = 0; k < args[a].num_leaves(); ++k) donated[off + k] = d;
    off += args[a].num_leaves();
  }
  for (int a : opts.donate_argnums)
    if (size_t(a) >= args.size())
      throw ValueError(str("[pmap] donate_argnums holds ", a, " but '", pmap_name(opts), "' is called with ",
                           args.size(), " arguments; give indices of its arguments"));
  for (size_t k = 0; k < leaves.size(); ++k) {
    if (!donated[k]) continue;
    bool shared = false;
    for (size_t m = 0; m < leaves.size(); ++m)
      if (!donated[m] && leaves[m].impl() == leaves[k].impl()) shared = true;
    for (const std::vector<Array>& replica : ins)
      if (replica[k].impl() == leaves[k].impl()) shared = true;
    if (!shared) leaves[k].impl()->buffer.reset();
  }
}

}  // namespace

bool under_transformation(const std::vector<Array>& leaves) {
  if (tr::current_trace() != nullptr) return true;
  for (const Array& x : leaves)
    if (x.valid() && !x.is_concrete()) return true;
  return false;
}

void check_vmappable(const PmapOptions& opts) {
  if (support::process_count() > 1 && !opts.axis_name.empty())
    throw ValueError(str("[pmap] '", pmap_name(opts), "' maps axis '", opts.axis_name, "' across ",
                         support::process_count(), " processes, but it is called under a transformation (jit, "
                         "grad, vmap), which would run it as a vmap over this process' slices only; call the "
                         "pmap outside them, with jit and grad inside f"));
}

int64_t axis_size(const PmapOptions& opts, const std::vector<Array>& leaves, const std::vector<int>& in_dims) {
  int64_t n = -1;
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (in_dims[i] < 0) continue;
    const int64_t len = leaves[i].shape()[size_t(in_dims[i])];
    if (n >= 0 && len != n)
      throw ValueError(str("[pmap] '", pmap_name(opts), "': argument leaf ", i, " has size ", len, " along its axis ",
                           in_dims[i], " but an earlier mapped argument has ", n,
                           "; every mapped argument needs the same size (one slice per device)"));
    n = len;
  }
  if (n < 0)
    throw ValueError(str("[pmap] '", pmap_name(opts), "' maps no argument (every in_axes is none); map at least "
                         "one argument over the devices"));
  if (support::process_count() > 1 && !opts.axis_name.empty() && n != local_device_count())
    throw ValueError(str("[pmap] '", pmap_name(opts), "' maps an axis of size ", n, " but in a run of ",
                         support::process_count(), " processes a pmap with an axis name maps one slice per "
                         "local device: pass ", local_device_count(), " slices (jx::local_device_count())"));
  if (n < 1 || n > local_device_count())
    throw ValueError(str("[pmap] '", pmap_name(opts), "' maps an axis of size ", n, " but this process has ",
                         local_device_count(), " CPU device(s); set JX_NUM_CPU_DEVICES=", std::max<int64_t>(n, 1),
                         " or call jx::set_cpu_device_count before the first use, or map fewer slices"));
  return n;
}

namespace {

// The device of each of the n local replicas: opts.devices (checked), else the first n.
std::vector<Device> replica_devices(const PmapOptions& opts, int64_t n) {
  const std::vector<Device> local = local_devices();
  if (opts.devices.empty()) return local;
  auto listed = [&] {
    std::string s;
    for (const Device& d : opts.devices) s = str(s, s.empty() ? "" : ", ", d.str());
    return s;
  };
  if (support::process_count() > 1) {
    if (opts.devices != devices())
      throw ValueError(str("[pmap] '", pmap_name(opts), "' was given devices ", listed(), " in a run of ",
                           support::process_count(), " processes, where a pmap maps every process' devices: pass "
                           "jx::devices(), or leave devices empty"));
    return local;
  }
  if (int64_t(opts.devices.size()) != n)
    throw ValueError(str("[pmap] '", pmap_name(opts), "' maps an axis of size ", n, " over ", opts.devices.size(),
                         " devices (", listed(), "); give one device per slice"));
  for (size_t i = 0; i < opts.devices.size(); ++i) {
    if (std::find(local.begin(), local.end(), opts.devices[i]) == local.end())
      throw ValueError(str("[pmap] '", pmap_name(opts), "': ", opts.devices[i].str(), " is not one of this process' ",
                           local.size(), " devices (jx::local_devices())"));
    for (size_t j = 0; j < i; ++j)
      if (opts.devices[j] == opts.devices[i])
        throw ValueError(str("[pmap] '", pmap_name(opts), "': devices lists ", opts.devices[i].str(),
                             " twice; give distinct devices"));
  }
  return opts.devices;
}

}  // namespace

JitOptions replica_jit_options(const PmapOptions& opts) {
  JitOptions j{.name = pmap_name(opts)};
  for (int a : opts.donate_argnums) {
    if (a < 0)
      throw ValueError(str("[pmap] donate_argnums holds ", a, " for '", pmap_name(opts),
                           "'; give non-negative argument indices"));
    j.donate_argnums.push_back(a + 1);
  }
  return j;
}

std::vector<Array> run(const PmapOptions& opts, int64_t n, const std::vector<Array>& leaves,
                       const tree::TreeDef& def, const std::vector<int>& in_dims, const ReplicaFn& replica,
                       const std::function<std::vector<int>()>& out_dims) {
  // Replica i computes on its device (local device i by default): its arguments are put there.
  const std::vector<Device> mine = replica_devices(opts, n);
  std::vector<std::vector<Array>> ins(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    for (size_t k = 0; k < leaves.size(); ++k)
      ins[size_t(i)].push_back(device_put(replica_slice(leaves[k], in_dims[k], i), mine[size_t(i)]));
  delete_donated(opts, leaves, def, ins);
  // The axis spans every process' replicas (process-major), as the global device list.
  auto world = support::world();
  const int64_t processes = opts.axis_name.empty() ? 1 : support::process_count();
  const int64_t first = opts.axis_name.empty() ? 0 : support::process_index() * n;
  auto rendezvous = std::make_shared<cl::Rendezvous>(n, processes > 1 ? world : nullptr);
  std::vector<std::vector<Array>> outs = distributed_detail::run_replicas(
      n, {rendezvous},
      [&](int64_t i) {
        std::vector<cl::NamedAxis> axes;
        if (!opts.axis_name.empty())
          axes.push_back(cl::NamedAxis{.name = opts.axis_name,
                                       .size = n * processes,
                                       .index = first + i,
                                       .rendezvous = rendezvous,
                                       .slot = i});
        return axes;
      },
      [&](int64_t i) { return replica(i, ins[size_t(i)]); });

  const std::vector<int> dims = out_dims();
  std::vector<Array> result;
  for (size_t k = 0; k < outs[0].size(); ++k) {
    const int d = dims[k];
    if (d < -1000) {  // out_axes none: the value of replica 0 (the same on every replica)
      result.push_back(device_get(outs[0][k]));
      continue;
    }
    const int64_t rank = outs[0][k].ndim() + 1;
    const int64_t at = d < 0 ? d + rank : d;
    if (at < 0 || at >= rank)
      throw IndexError(str("[pmap] '", pmap_name(opts), "': out_axes ", d, " is out of range for output leaf ", k,
                           " of rank ", rank - 1));
    std::vector<Array> parts;
    for (int64_t i = 0; i < n; ++i) parts.push_back(lax::expand_dims(device_get(outs[size_t(i)][k]), {at}));
    result.push_back(lax::concatenate(parts, at));
  }
  return result;
}

}  // namespace pmap_detail

namespace distributed_detail {

std::vector<std::vector<Array>> run_replicas(
    int64_t n, const std::vector<std::shared_ptr<ops::collective::Rendezvous>>& rendezvous,
    const std::function<std::vector<ops::collective::NamedAxis>(int64_t)>& axes,
    const std::function<std::vector<Array>(int64_t)>& body) {
  namespace cl = ops::collective;
  const int caller_threads = omp_get_max_threads();
  const int share = std::max(1, caller_threads / int(n));
  const ConfigSnapshot config;
  std::vector<std::vector<Array>> outs(static_cast<size_t>(n));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  std::atomic<int64_t> first_failure{-1};
  auto replica = [&](int64_t i) {
    std::optional<config::Scoped> scoped[5];
    for (int k = 0; k < 5; ++k) scoped[k].emplace(*config.flags[k], config.values[k]);
    omp_set_num_threads(share);
    try {
      std::vector<cl::NamedAxis> bound = axes(i);
      std::vector<std::unique_ptr<cl::AxisScope>> scopes;
      for (cl::NamedAxis& a : bound) scopes.push_back(std::make_unique<cl::AxisScope>(std::move(a)));
      outs[size_t(i)] = body(i);
    } catch (...) {
      errors[size_t(i)] = std::current_exception();
      int64_t none = -1;
      first_failure.compare_exchange_strong(none, i);
      for (const auto& r : rendezvous) r->abort();
    }
  };
  std::vector<std::thread> threads;
  for (int64_t i = 1; i < n; ++i) threads.emplace_back(replica, i);
  replica(0);
  omp_set_num_threads(caller_threads);
  for (std::thread& t : threads) t.join();
  if (first_failure >= 0) std::rethrow_exception(errors[size_t(first_failure.load())]);
  return outs;
}

}  // namespace distributed_detail
}  // namespace jx
