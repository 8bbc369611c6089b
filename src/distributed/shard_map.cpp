// shard_map (include/jx/shard_map.h). Both ways of running it go through one layout, the
// "mesh-major" form of an array: for its spec, each split dim d (axes a1..ak) is reshaped
// into (n_a1, ..., n_ak, block_d), and the mesh-axis dims are moved to the front in mesh
// order, so the array reads [n_u1, n_u2, ..., block dims...] for the used axes u1 < u2 < ...
//   - a device at mesh index c gets mesh_major[c_u1, c_u2, ...];
//   - nested vmaps over the mesh axes, in order, map dim 0 of the arguments that use each
//     axis (none for the others);
// and the way back (per-device results stacked over the used axes, or what the nested
// vmaps return with out_axes 0 / none) reverses the same layout.
#include <algorithm>
#include <map>

#include "distributed/replicas.h"
#include "jx/lax.h"
#include "jx/shard_map.h"
#include "ops/collective.h"
#include "support/process_group.h"
#include "support/str.h"
#include "transforms/batching.h"

namespace jx {

int64_t Mesh::size() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

std::string Mesh::str() const {
  std::string s = "Mesh(";
  for (size_t i = 0; i < shape.size(); ++i) s = jx::str(s, i ? ", " : "", "'", axis_names[i], "': ", shape[i]);
  return jx::str(s, ")");
}

Mesh make_mesh(std::vector<int64_t> shape, std::vector<std::string> axis_names) {
  Mesh m{std::move(shape), std::move(axis_names)};
  if (m.shape.size() != m.axis_names.size() || m.shape.empty())
    throw ValueError(str("[make_mesh] ", m.shape.size(), " axis sizes but ", m.axis_names.size(),
                         " axis names; give one name per axis (at least one axis)"));
  for (size_t i = 0; i < m.shape.size(); ++i) {
    if (m.shape[i] < 1) throw ValueError(str("[make_mesh] axis '", m.axis_names[i], "' has size ", m.shape[i]));
    for (size_t j = 0; j < i; ++j)
      if (m.axis_names[i] == m.axis_names[j])
        throw ValueError(str("[make_mesh] the axis name '", m.axis_names[i], "' appears twice"));
  }
  // A mesh over this process' devices, or (in a multi-process run) over every process' devices.
  if (m.size() > local_device_count() && m.size() != device_count())
    throw ValueError(str("[make_mesh] ", m.str(), " needs ", m.size(), " devices but this process has ",
                         local_device_count(), support::process_count() > 1 ? str(" and the run ", device_count()) : "",
                         "; set JX_NUM_CPU_DEVICES or jx::set_cpu_device_count",
                         support::process_count() > 1 ? ", or make a mesh of every process' devices" : ""));
  return m;
}

std::string P::str() const {
  std::string s = "P(";
  for (size_t i = 0; i < dims_.size(); ++i) {
    const auto& a = dims_[i].axes;
    std::string e = a.empty() ? "None" : a.size() == 1 ? jx::str("'", a[0], "'") : "(";
    if (a.size() > 1) {
      for (size_t k = 0; k < a.size(); ++k) e = jx::str(e, k ? ", " : "", "'", a[k], "'");
      e = jx::str(e, ")");
    }
    s = jx::str(s, i ? ", " : "", e);
  }
  return jx::str(s, ")");
}

namespace shard_map_detail {
namespace {

namespace cl = ops::collective;

std::string op_name(const ShardMapOptions& o) { return o.name.empty() ? "shard_map" : o.name; }

int64_t axis_position(const ShardMapOptions& o, const std::string& name, const P& spec) {
  for (size_t m = 0; m < o.mesh.axis_names.size(); ++m)
    if (o.mesh.axis_names[m] == name) return int64_t(m);
  throw ValueError(str("[", op_name(o), "] the spec ", spec.str(), " names '", name, "', which is not an axis of ",
                       o.mesh.str()));
}

// The mesh axes a spec uses, in mesh order, and per array dim its axes (spec order).
struct Layout {
  std::vector<int64_t> used;                 // mesh axis indices, ascending
  std::vector<std::vector<int64_t>> by_dim;  // per array dim
};

Layout layout_of(const ShardMapOptions& o, const P& spec, int64_t rank, const char* what) {
  if (int64_t(spec.dims().size()) > rank)
    throw ValueError(str("[", op_name(o), "] the ", what, " spec ", spec.str(), " has ", spec.dims().size(),
                         " entries for an array of rank ", rank));
  Layout l;
  l.by_dim.resize(size_t(rank));
  for (size_t d = 0; d < spec.dims().size(); ++d)
    for (const std::string& a : spec.dims()[d].axes) {
      const int64_t m = axis_position(o, a, spec);
      if (std::count(l.used.begin(), l.used.end(), m))
        throw ValueError(str("[", op_name(o), "] the spec ", spec.str(), " uses mesh axis '", a, "' twice"));
      l.used.push_back(m);
      l.by_dim[d].push_back(m);
    }
  std::sort(l.used.begin(), l.used.end());
  return l;
}

// x (global) in mesh-major form.
Array to_mesh_major(const ShardMapOptions& o, const Array& x, const P& spec) {
  const Layout l = layout_of(o, spec, x.ndim(), "input");
  Shape split;
  std::map<int64_t, int64_t> mesh_dim;  // mesh axis -> its dim in `split`
  std::vector<int64_t> block_dims;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    int64_t parts = 1;
    for (int64_t m : l.by_dim[size_t(d)]) {
      mesh_dim[m] = int64_t(split.size());
      split.push_back(o.mesh.shape[size_t(m)]);
      parts *= o.mesh.shape[size_t(m)];
    }
    const int64_t len = x.shape()[size_t(d)];
    if (len % parts != 0)
      throw ShapeError(str("[", op_name(o), "] dim ", d, " of ", type_str(x.dtype(), x.shape()), " (spec ", spec.str(),
                           ") has size ", len, ", which does not split into ", parts, " equal blocks"));
    block_dims.push_back(int64_t(split.size()));
    split.push_back(len / parts);
  }
  std::vector<int64_t> perm;
  for (int64_t m : l.used) perm.push_back(mesh_dim[m]);
  perm.insert(perm.end(), block_dims.begin(), block_dims.end());
  return lax::transpose(lax::reshape(x, split), perm);
}

// The global array from its mesh-major form (the used axes of `spec` in front).
Array from_mesh_major(const ShardMapOptions& o, const Array& y, const P& spec) {
  const int64_t nu = [&] {
    int64_t n = 0;
    for (const auto& e : spec.dims()) n += int64_t(e.axes.size());
    return n;
  }();
  const int64_t rank = y.ndim() - nu;
  const Layout l = layout_of(o, spec, rank, "output");
  std::map<int64_t, int64_t> front;  // mesh axis -> its dim in y
  for (size_t k = 0; k < l.used.size(); ++k) front[l.used[k]] = int64_t(k);
  std::vector<int64_t> perm;
  Shape merged;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t len = y.shape()[size_t(nu + d)];
    for (int64_t m : l.by_dim[size_t(d)]) {
      perm.push_back(front[m]);
      len *= o.mesh.shape[size_t(m)];
    }
    perm.push_back(nu + d);
    merged.push_back(len);
  }
  return lax::reshape(lax::transpose(y, perm), merged);
}

// Device index -> its index along each mesh axis (row-major over the mesh).
std::vector<int64_t> coords_of(const Mesh& mesh, int64_t device) {
  std::vector<int64_t> c(mesh.shape.size());
  for (size_t m = mesh.shape.size(); m-- > 0;) {
    c[m] = device % mesh.shape[m];
    device /= mesh.shape[m];
  }
  return c;
}

int64_t device_of(const Mesh& mesh, const std::vector<int64_t>& c) {
  int64_t d = 0;
  for (size_t m = 0; m < mesh.shape.size(); ++m) d = d * mesh.shape[m] + c[m];
  return d;
}

// The out spec of result leaf k.
const P& out_spec(const ShardMapOptions& o, size_t k, size_t num_outs) {
  if (o.out_specs.size() == 1) return o.out_specs[0];
  if (o.out_specs.size() != num_outs)
    throw ValueError(str("[", op_name(o), "] f returns ", num_outs, " array leaves but out_specs has ",
                         o.out_specs.size(), " specs; give one per result leaf, or one for all"));
  return o.out_specs[k];
}

// A mesh of every process' devices (each process holds a block of it), not one process'.
bool spans_processes(const Mesh& mesh) {
  return support::process_count() > 1 && mesh.size() == device_count() && mesh.size() > local_device_count();
}

// The block of the mesh this process' devices fill: per axis, coordinates [lo, lo + len).
// Process p holds devices p * L .. p * L + L - 1, row-major over the mesh; in the block,
// local device i sits at row-major index i (a contiguous run of a row-major order that
// fills a block is that block's own row-major order).
struct Box {
  std::vector<int64_t> lo, len;
};

Box local_box(const ShardMapOptions& o) {
  const Mesh& mesh = o.mesh;
  if (!spans_processes(mesh)) return Box{std::vector<int64_t>(mesh.shape.size(), 0), mesh.shape};
  const int64_t L = local_device_count(), first = int64_t(support::process_index()) * L;
  std::vector<int64_t> lo = coords_of(mesh, first), hi = lo;
  for (int64_t d = first; d < first + L; ++d) {
    const std::vector<int64_t> c = coords_of(mesh, d);
    for (size_t m = 0; m < c.size(); ++m) lo[m] = std::min(lo[m], c[m]), hi[m] = std::max(hi[m], c[m]);
  }
  Box b{lo, {}};
  int64_t count = 1;
  for (size_t m = 0; m < lo.size(); ++m) count *= b.len.emplace_back(hi[m] - lo[m] + 1);
  if (count != L)
    throw ValueError(str("[", op_name(o), "] in ", mesh.str(), " the devices of process ", support::process_index(),
                         " (", first, " to ", first + L - 1, ") do not fill a block of the mesh; order the axes so "
                         "that they do (the axis across processes first, e.g. make_mesh({process_count(), "
                         "local_device_count()}, ...))"));
  return b;
}

// Across processes each passes (and gets back) the part of a global array its devices hold,
// which must be one block of it: along each dim, the blocks of the axes splitting it
// (first axis major) must be contiguous on this process.
void check_local_part(const ShardMapOptions& o, const Box& box, const P& spec, const char* what) {
  for (size_t d = 0; d < spec.dims().size(); ++d) {
    // Block index = c1 * (n2 * ... * nk) + ... + ck over the dim's axes: the process' indices
    // are contiguous when every axis after the first one it holds several of is whole.
    bool spread = false;
    for (const std::string& a : spec.dims()[d].axes) {
      const size_t m = size_t(axis_position(o, a, spec));
      if (spread && box.len[m] != o.mesh.shape[m])
        throw ValueError(str("[", op_name(o), "] the ", what, " spec ", spec.str(), " splits dim ", d,
                             " so that process ", support::process_index(), "'s blocks of it are not contiguous in ",
                             o.mesh.str(), "; put the axis across processes first in that dim"));
      spread = spread || box.len[m] > 1;
    }
  }
}

// The processes along mesh axis m from this one (their blocks differ only in axis m), as
// a process group ranked by position along m; cached per mesh and axis, since splitting
// is collective (every process makes the same shard_map calls, so the same splits).
std::shared_ptr<support::ProcessGroup> axis_group(const Mesh& mesh, size_t m, const Box& box) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<support::ProcessGroup>> cache;
  const std::string key = str(mesh.str(), " axis ", m);
  std::lock_guard<std::mutex> g(mu);
  auto& group = cache[key];
  if (!group) {
    std::vector<int64_t> c = box.lo;
    c[m] = 0;
    group = support::world()->split(int(device_of(mesh, c)), int(box.lo[m]), "shard_map");
  }
  return group;
}

// Per local device (row-major over the box), the mesh axes bound with their global
// indices and the rendezvous of its group along each axis; `all` collects the rendezvous.
std::vector<std::vector<cl::NamedAxis>> bind_axes(const ShardMapOptions& o, const Box& box,
                                                  std::vector<std::shared_ptr<cl::Rendezvous>>& all) {
  const Mesh& mesh = o.mesh;
  const Mesh local{box.len, mesh.axis_names};
  const int64_t n = local.size();
  std::vector<std::vector<cl::NamedAxis>> bound(static_cast<size_t>(n));
  for (size_t m = 0; m < mesh.shape.size(); ++m) {
    // Local groups along m: the devices that share their other coordinates.
    std::map<std::vector<int64_t>, std::vector<int64_t>> groups;
    for (int64_t d = 0; d < n; ++d) {
      std::vector<int64_t> c = coords_of(local, d);
      c[m] = -1;
      groups[c].push_back(d);  // in order of c[m]
    }
    const bool across = box.len[m] != mesh.shape[m];
    std::shared_ptr<support::ProcessGroup> world = across ? axis_group(mesh, m, box) : nullptr;
    std::shared_ptr<cl::Rendezvous> shared;  // across processes, several groups: one for all
    if (across && groups.size() > 1) {
      std::vector<std::vector<int64_t>> members;
      for (auto& [key, ds] : groups) members.push_back(ds);
      shared = std::make_shared<cl::Rendezvous>(n, world, std::move(members));
      all.push_back(shared);
    }
    for (auto& [key, ds] : groups) {
      std::shared_ptr<cl::Rendezvous> r = shared;
      if (!r) {
        r = std::make_shared<cl::Rendezvous>(int64_t(ds.size()), world);
        all.push_back(r);
      }
      for (size_t j = 0; j < ds.size(); ++j)
        bound[size_t(ds[j])].push_back(cl::NamedAxis{mesh.axis_names[m], mesh.shape[m], box.lo[m] + int64_t(j), r,
                                                     shared ? ds[j] : int64_t(j)});
    }
  }
  return bound;
}

}  // namespace

std::vector<P> leaf_specs(const ShardMapOptions& o, const tree::TreeDef& def, const std::vector<Array>& leaves) {
  std::vector<tree::TreeDef> args = def.children();
  if (o.in_specs.size() != args.size())
    throw ValueError(str("[", op_name(o), "] called with ", args.size(), " arguments but in_specs has ",
                         o.in_specs.size(), " specs; give one per argument (P() replicates one)"));
  std::vector<P> specs;
  for (size_t a = 0; a < args.size(); ++a)
    for (size_t k = 0; k < args[a].num_leaves(); ++k) specs.push_back(o.in_specs[a]);
  for (size_t i = 0; i < leaves.size(); ++i) layout_of(o, specs[i], leaves[i].ndim(), "input");
  return specs;
}

std::string signature(const ShardMapOptions& o) {
  std::string s = jx::str(o.mesh.str(), " in");
  for (const P& p : o.in_specs) s = jx::str(s, " ", p.str());
  s = jx::str(s, " out");
  for (const P& p : o.out_specs) s = jx::str(s, " ", p.str());
  return s;
}

std::vector<Array> run(const ShardMapOptions& global, const std::vector<Array>& leaves, const std::vector<P>& specs,
                       const DeviceFn& device) {
  if (global.mesh.size() > local_device_count() && !spans_processes(global.mesh))
    throw ValueError(str("[", op_name(global), "] ", global.mesh.str(), " needs ", global.mesh.size(),
                         " devices but this process has ", local_device_count()));
  // Across processes each process passes its part of every global array: the arrays over
  // the block of the mesh it holds, laid out as over a mesh of the block's shape.
  const Box box = local_box(global);
  ShardMapOptions o = global;
  o.mesh.shape = box.len;
  const Mesh& mesh = o.mesh;
  const int64_t n = mesh.size();
  std::vector<Array> major;
  std::vector<Layout> layouts;
  for (size_t i = 0; i < leaves.size(); ++i) {
    check_local_part(global, box, specs[i], "input");
    major.push_back(to_mesh_major(o, leaves[i], specs[i]));
    layouts.push_back(layout_of(o, specs[i], leaves[i].ndim(), "input"));
  }
  std::vector<std::shared_ptr<cl::Rendezvous>> all;
  const std::vector<std::vector<cl::NamedAxis>> bound = bind_axes(global, box, all);
  const std::vector<Device> on = local_devices();
  std::vector<std::vector<Array>> outs = distributed_detail::run_replicas(
      n, all, [&](int64_t d) { return bound[size_t(d)]; },
      [&](int64_t d) {
        const std::vector<int64_t> c = coords_of(mesh, d);
        std::vector<Array> blocks;
        for (size_t i = 0; i < major.size(); ++i) {
          Array b = major[i];
          for (int64_t m : layouts[i].used) b = lax::squeeze(lax::slice_in_dim(b, c[size_t(m)], c[size_t(m)] + 1, 1, 0), {0});
          blocks.push_back(device_put(b, on[size_t(d)]));  // device d computes on its blocks
        }
        return device(blocks);
      });
  // Per result leaf: the devices' blocks stacked over the used axes (index 0 on the others).
  std::vector<Array> result;
  for (size_t k = 0; k < outs[0].size(); ++k) {
    const P& spec = out_spec(o, k, outs[0].size());
    check_local_part(global, box, spec, "output");
    const Layout l = layout_of(o, spec, outs[0][k].ndim(), "output");
    std::vector<Array> stacked;
    int64_t count = 1;
    for (int64_t m : l.used) count *= mesh.shape[size_t(m)];
    for (int64_t flat = 0; flat < count; ++flat) {
      std::vector<int64_t> c(mesh.shape.size(), 0);
      int64_t rest = flat;
      for (size_t u = l.used.size(); u-- > 0;) {
        const int64_t m = l.used[u];
        c[size_t(m)] = rest % mesh.shape[size_t(m)];
        rest /= mesh.shape[size_t(m)];
      }
      stacked.push_back(lax::expand_dims(device_get(outs[size_t(device_of(mesh, c))][k]), {0}));
    }
    Array y = lax::concatenate(stacked, 0);
    Shape s;
    for (int64_t m : l.used) s.push_back(mesh.shape[size_t(m)]);
    for (int64_t dim : outs[0][k].shape()) s.push_back(dim);
    result.push_back(from_mesh_major(o, lax::reshape(y, s), spec));
  }
  return result;
}

std::vector<Array> emulate(const ShardMapOptions& o, const std::vector<Array>& leaves, const std::vector<P>& specs,
                           const FlatFn& f) {
  if (spans_processes(o.mesh))
    throw ValueError(str("[", op_name(o), "] ", o.mesh.str(), " spans ", support::process_count(),
                         " processes, which a transformation around shard_map (jit, grad, vmap) cannot trace "
                         "into one program: call shard_map outside them, with jit and grad inside f"));
  std::vector<Array> major;
  std::vector<Layout> layouts;
  for (size_t i = 0; i < leaves.size(); ++i) {
    major.push_back(to_mesh_major(o, leaves[i], specs[i]));
    layouts.push_back(layout_of(o, specs[i], leaves[i].ndim(), "input"));
  }
  size_t num_outs = 0;
  // Level m vmaps mesh axis m: dim 0 of the leaves that use it.
  std::function<std::vector<Array>(size_t, const std::vector<Array>&)> level = [&](size_t m, const std::vector<Array>& xs) {
    if (m == o.mesh.shape.size()) {
      std::vector<Array> r = f(xs);
      num_outs = r.size();
      return r;
    }
    std::vector<int> in_dims;
    for (const Layout& l : layouts) in_dims.push_back(std::count(l.used.begin(), l.used.end(), int64_t(m)) ? 0 : -1);
    return tr::vmap_flat(
        [&, m](const std::vector<Array>& inner) { return level(m + 1, inner); }, xs, in_dims,
        [&, m](size_t n) {
          std::vector<int> dims;
          for (size_t k = 0; k < n; ++k) {
            bool uses = false;
            for (const P::Entry& e : out_spec(o, k, n).dims())
              for (const std::string& a : e.axes) uses = uses || a == o.mesh.axis_names[m];
            dims.push_back(uses ? 0 : tr::kOutNone);  // none: the same on every device of axis m
          }
          return dims;
        },
        o.mesh.shape[m], o.mesh.axis_names[m]);
  };
  std::vector<Array> ys = level(0, major);
  std::vector<Array> result;
  for (size_t k = 0; k < ys.size(); ++k) result.push_back(from_mesh_major(o, ys[k], out_spec(o, k, num_outs)));
  return result;
}

}  // namespace shard_map_detail
}  // namespace jx
