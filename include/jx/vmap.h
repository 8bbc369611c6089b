// vmap: f mapped over a batch axis of its arguments, as jax.vmap.
//
//   auto per_example = jx::vmap(jx::grad(loss), {.in_axes = {jx::none, 0, 0}});
//   auto g = per_example(params, xs, ys);  // every leaf of g gains a leading batch dim
//
// in_axes: one AxisSpec for all arguments (an int or jx::none), or a list with one entry
// per argument. An AxisSpec is an int (negative counts from the end), jx::none (the value
// is not mapped), or a pytree prefix of the argument: a list matching a tuple/vector/array,
// or AxisSpec::dict({{"w", 0}, {"b", jx::none}}) matching a dict or JX_PYTREE struct by key.
// out_axes: likewise, a prefix of f's result.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "jx/array.h"
#include "jx/tree.h"

namespace jx {

class AxisSpec {
 public:
  AxisSpec(int axis) : kind_(Kind::Axis), axis_(axis) {}  // NOLINT: implicit on purpose
  AxisSpec(None) : kind_(Kind::None) {}                   // NOLINT
  AxisSpec(std::initializer_list<AxisSpec> items) : kind_(Kind::List), items_(items) {}
  static AxisSpec list(std::vector<AxisSpec> items);
  static AxisSpec dict(std::vector<std::pair<std::string, AxisSpec>> items);

  enum class Kind { Axis, None, List, Dict };
  Kind kind() const { return kind_; }
  int axis() const { return axis_; }
  const std::vector<AxisSpec>& items() const { return items_; }
  const std::vector<std::string>& keys() const { return keys_; }
  std::string str() const;

 private:
  AxisSpec() = default;
  Kind kind_ = Kind::None;
  int axis_ = 0;
  std::vector<AxisSpec> items_;
  std::vector<std::string> keys_;  // Dict: key of items_[i]
};

struct VmapOptions {
  AxisSpec in_axes = 0;
  AxisSpec out_axes = 0;
  int64_t axis_size = -1;  // needed when every in_axes is none
  // Names the mapped axis for the collectives in f (jx/parallel.h): lax::psum(x, name)
  // sums over the batch, lax::axis_index(name) is the batch index, as in jax.vmap.
  std::string axis_name = {};
};

namespace ad {
using FlatFn = std::function<std::vector<Array>(const std::vector<Array>&)>;
// The per-leaf batch dims of `spec` applied to a tree of type `def` (-1: not mapped;
// negative axes normalized against each leaf's rank + `extra_rank`). `what` names the
// option in errors ("in_axes"), `per_child` treats spec's list as one entry per child of
// the root (the arguments).
std::vector<int> axes_for_leaves(const char* what, const AxisSpec& spec, const tree::TreeDef& def,
                                 const std::vector<Array>& leaves, int extra_rank);
void check_in_axes_count(const AxisSpec& in_axes, size_t num_args);
std::vector<int> out_axes_for_leaves(const AxisSpec& spec, const tree::TreeDef& def);
std::vector<Array> vmap_flat(const FlatFn& f, const std::vector<Array>& args,
                             const std::vector<int>& in_dims,
                             const std::function<std::vector<int>(size_t)>& out_dims,
                             int64_t axis_size, const std::string& axis_name = {});
}  // namespace ad

template <class F>
auto vmap(F f, VmapOptions opts = {}) {
  return [f, opts](const auto&... args) {
    using In = std::tuple<std::decay_t<decltype(args)>...>;
    using R = std::decay_t<decltype(f(args...))>;
    In in(args...);
    auto [leaves, def] = tree::flatten(in);
    // An int or none applies to every argument; a list has one entry per argument.
    AxisSpec spec = opts.in_axes;
    ad::check_in_axes_count(spec, sizeof...(args));
    std::vector<int> in_dims = ad::axes_for_leaves("in_axes", spec, def, leaves, 0);
    tree::TreeDef out_def;
    ad::FlatFn flat = [&](const std::vector<Array>& xs) {
      auto [ol, od] = tree::flatten(R(std::apply(f, tree::unflatten<In>(def, xs))));
      out_def = od;
      return ol;
    };
    auto outs = ad::vmap_flat(
        flat, leaves, in_dims,
        [&](size_t) { return ad::out_axes_for_leaves(opts.out_axes, out_def); }, opts.axis_size,
        opts.axis_name);
    return tree::unflatten<R>(out_def, outs);
  };
}

}  // namespace jx
