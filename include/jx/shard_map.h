// shard_map over a device mesh (jax.shard_map, jax.make_mesh, jax.sharding.PartitionSpec).
//
//   auto mesh = jx::make_mesh({2}, {"batch"});
//   auto step = jx::shard_map(
//       [](const Tree& params, const Array& x, const Array& y) {   // per device: its block
//         return jx::lax::pmean(jx::grad(loss)(params, x, y), "batch");
//       },
//       {.mesh = mesh, .in_specs = {jx::P(), jx::P("batch"), jx::P("batch")}, .out_specs = {jx::P()}});
//   Tree grads = step(params, x, y);   // x: [global batch, ...], split in 2 blocks of rows
//
// Unlike pmap, shard_map splits an axis into blocks instead of mapping over it: a dim
// whose spec names mesh axes is cut into as many equal blocks as those axes have devices
// (block i on the device at mesh index i), and f sees blocks of the global arrays. A dim
// with jx::none (or past the spec's end) is whole on every device; P() replicates the
// argument. Inside f every mesh axis name is bound: collectives over one axis run among
// the devices that share their index on the other axes. out_specs say how the per-device
// results form the global result: concatenated along the dims that name mesh axes, and
// taken from one device along the mesh axes they do not name (those results must be the
// same on every device, e.g. after psum). As pmap, each device runs f jitted on its own
// thread, and under a transformation shard_map runs as nested vmaps with the mesh axis
// names (the same values as one batched program), so grad and jit compose with it.
//
// In a multi-process run a mesh of every process' devices (make_mesh({process_count(),
// local_device_count()}, ...) or {device_count()}) spans the processes: each process passes
// and gets back the part of the global arrays its devices hold (docs/distributed.md).
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/parallel.h"

namespace jx {

struct Mesh {
  std::vector<int64_t> shape;           // devices along each axis
  std::vector<std::string> axis_names;  // one per axis, distinct
  int64_t size() const;                 // the number of devices
  std::string str() const;              // "Mesh('x': 2, 'y': 3)"
};
// A mesh over the first prod(shape) local devices, or over every process' devices when
// prod(shape) is device_count() (ValueError when there are fewer, or when names and shape
// disagree).
Mesh make_mesh(std::vector<int64_t> shape, std::vector<std::string> axis_names);

// A partition spec: per dim, the mesh axes that split it (none: not split).
class P {
 public:
  struct Entry {
    Entry(None) {}                                               // NOLINT: implicit on purpose
    Entry(const char* axis) : axes{axis} {}                      // NOLINT
    Entry(std::string axis) : axes{std::move(axis)} {}           // NOLINT
    // One dim split over several axes (the first one major): P(P::Entry{"x", "y"}).
    Entry(std::initializer_list<std::string> several) : axes(several) {}
    std::vector<std::string> axes;
  };
  P() = default;
  template <class... E>
    requires(sizeof...(E) >= 1 && (std::is_convertible_v<E, Entry> && ...))
  explicit P(E... dims) : dims_{Entry(dims)...} {}
  const std::vector<Entry>& dims() const { return dims_; }
  std::string str() const;  // "P('batch', None)"

 private:
  std::vector<Entry> dims_;
};

struct ShardMapOptions {
  Mesh mesh = {};
  std::vector<P> in_specs = {};   // one per argument (for every leaf of it)
  std::vector<P> out_specs = {};  // one per result leaf, or one for all of them
  std::string name = {};
};

namespace shard_map_detail {

using FlatFn = std::function<std::vector<Array>(const std::vector<Array>&)>;
using DeviceFn = std::function<std::vector<Array>(const std::vector<Array>& block_leaves)>;

// Each leaf's spec (the argument's spec for each of its leaves), checked against the mesh.
std::vector<P> leaf_specs(const ShardMapOptions& opts, const tree::TreeDef& def, const std::vector<Array>& leaves);
// "mesh and specs" as a static cache key for the per-device jit.
std::string signature(const ShardMapOptions& opts);
// The per-device blocks run by one thread per device; results assembled per out_specs.
std::vector<Array> run(const ShardMapOptions& opts, const std::vector<Array>& leaves, const std::vector<P>& specs,
                       const DeviceFn& device);
// The same values as nested vmaps over the mesh axes (under transformations).
std::vector<Array> emulate(const ShardMapOptions& opts, const std::vector<Array>& leaves, const std::vector<P>& specs,
                           const FlatFn& f);

}  // namespace shard_map_detail

template <class F>
class ShardMapped {
 public:
  ShardMapped(F f, ShardMapOptions opts)
      : f_(std::move(f)),
        opts_(std::move(opts)),
        key_(shard_map_detail::signature(opts_)),
        core_(jit_detail::make_core(JitOptions{.name = opts_.name.empty() ? "shard_map" : opts_.name})) {}

  template <class... Args>
  auto operator()(const Args&... args) const {
    using In = std::tuple<std::decay_t<Args>...>;
    using R = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
    auto [leaves, def] = tree::flatten(In(args...));
    std::vector<P> specs = shard_map_detail::leaf_specs(opts_, def, leaves);
    tree::TreeDef out_def;
    std::mutex mu;
    std::vector<Array> outs;
    if (pmap_detail::under_transformation(leaves)) {
      outs = shard_map_detail::emulate(opts_, leaves, specs, [&](const std::vector<Array>& xs) {
        auto flat = tree::flatten(R(std::apply(f_, tree::unflatten<In>(def, xs))));
        out_def = std::move(flat.second);
        return std::move(flat.first);
      });
    } else {
      outs = shard_map_detail::run(opts_, leaves, specs, [&](const std::vector<Array>& xs) {
        std::shared_ptr<const tree::TreeDef> od;
        std::vector<Array> result = jit_detail::call_replica<R>(*core_, key_, f_, tree::unflatten<In>(def, xs), &od);
        std::lock_guard<std::mutex> g(mu);
        out_def = *od;
        return result;
      });
    }
    return tree::unflatten<R>(out_def, std::move(outs));
  }

 private:
  F f_;
  ShardMapOptions opts_;
  std::string key_;
  std::shared_ptr<jit_detail::JitCore> core_;
};

template <class F>
ShardMapped<std::decay_t<F>> shard_map(F&& f, ShardMapOptions opts) {
  return ShardMapped<std::decay_t<F>>(std::forward<F>(f), std::move(opts));
}

}  // namespace jx
