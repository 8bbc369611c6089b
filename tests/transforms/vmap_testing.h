// vmap against a loop, for the vmap_{shape,indexing,dot} tests (JAX's _CheckBatching): f
// applied to each slice of the mapped arguments (cut with lax::slice + reshape, eagerly,
// with no batching rule involved), the results stacked with concatenate at out_axes, must
// equal vmap(f) exactly (or within `tol` for floating dtypes). Every combination of in_axes
// (none, 0, 1, -1 per argument), batch sizes 0, 1, 3 and out_axes 0, 1, -1 is run.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "jx/vmap.h"

namespace vmap_testing {

using jx::Array;
using jx::DType;
using jx::Shape;
using Arrays = std::vector<Array>;
using Fn = std::function<Arrays(const Arrays&)>;
namespace lax = jx::lax;
namespace jnp = jx::numpy;

inline constexpr int kNone = INT_MIN;  // an unmapped argument

// How to make an argument: floating values are multiples of 1/4 in [-4, 4) (so sums and
// small products are exact); with hi > lo, integers in [lo, hi); `distinct` makes the
// values of each batch member distinct (unique scatter indices; needs hi - lo >= size).
struct Arg {
  Shape shape;
  DType dtype = DType::Float32;
  int64_t lo = 0, hi = 0;
  bool distinct = false;
};

inline Arg idx(Shape shape, int64_t lo, int64_t hi, DType t = DType::Int32) {
  return {std::move(shape), t, lo, hi, false};
}
inline Arg unique_idx(Shape shape, int64_t lo, int64_t hi, DType t = DType::Int32) {
  return {std::move(shape), t, lo, hi, true};
}

// One batch member's (unbatched) values.
inline std::vector<double> member_values(const Arg& a, std::mt19937_64& rng) {
  const auto n = size_t(a.shape.numel());
  std::vector<double> v(n);
  if (a.distinct) {
    std::vector<double> pool(size_t(a.hi - a.lo));
    std::iota(pool.begin(), pool.end(), double(a.lo));
    std::shuffle(pool.begin(), pool.end(), rng);
    std::copy(pool.begin(), pool.begin() + std::ptrdiff_t(n), v.begin());
  } else if (a.hi > a.lo) {
    std::uniform_int_distribution<int64_t> d(a.lo, a.hi - 1);
    for (double& x : v) x = double(d(rng));
  } else if (a.dtype == DType::Bool) {
    std::uniform_int_distribution<int> d(0, 1);
    for (double& x : v) x = d(rng);
  } else {
    std::uniform_int_distribution<int> d(-16, 15);
    for (double& x : v) x = jx::is_floating(a.dtype) ? d(rng) / 4.0 : double(d(rng));
  }
  return v;
}

// The argument with `size` batch members at `axis` (kNone: unbatched).
inline Array make_arg(const Arg& a, int axis, int64_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  if (axis == kNone)
    return lax::convert_element_type(jnp::array(member_values(a, rng), a.shape), a.dtype);
  std::vector<double> all;
  for (int64_t i = 0; i < size; ++i) {
    auto v = member_values(a, rng);
    all.insert(all.end(), v.begin(), v.end());
  }
  Shape front = a.shape;
  front.insert(0, size);
  Array x = lax::convert_element_type(jnp::array(all, front), a.dtype);
  std::vector<int64_t> perm;
  for (int64_t d = 1; d < int64_t(front.size()); ++d) perm.push_back(d);
  perm.insert(perm.begin() + axis, 0);
  return lax::transpose(x, perm);
}

inline int normalize(int axis, int rank) { return axis < 0 && axis != kNone ? axis + rank : axis; }

// Member i of x along `axis`.
inline Array member(const Array& x, int axis, int64_t i) {
  std::vector<int64_t> start(size_t(x.ndim()), 0), limit = x.shape().vec();
  start[size_t(axis)] = i;
  limit[size_t(axis)] = i + 1;
  Shape s = x.shape();
  s.erase(size_t(axis));
  return lax::reshape(lax::slice(x, start, limit), s);
}

// f over the members of the mapped args, results stacked at out_axis (negative: from the
// end). For size 0, f runs on zeros to learn the output types.
inline Arrays loop_and_stack(const Fn& f, const Arrays& args, const std::vector<int>& in_axes,
                             int64_t size, int out_axis) {
  std::vector<Arrays> outs;
  for (int64_t i = 0; i < std::max<int64_t>(size, 1); ++i) {
    Arrays sub;
    for (size_t k = 0; k < args.size(); ++k) {
      if (in_axes[k] == kNone) {
        sub.push_back(args[k]);
      } else if (size == 0) {
        Shape s = args[k].shape();
        s.erase(size_t(normalize(in_axes[k], args[k].ndim())));
        sub.push_back(jnp::zeros(s, args[k].dtype()));
      } else {
        sub.push_back(member(args[k], normalize(in_axes[k], args[k].ndim()), i));
      }
    }
    outs.push_back(f(sub));
  }
  Arrays result;
  for (size_t j = 0; j < outs[0].size(); ++j) {
    const int rank = outs[0][j].ndim() + 1;
    const int at = normalize(out_axis, rank);
    Shape s = outs[0][j].shape();
    s.insert(size_t(at), 1);
    if (size == 0) {
      s[size_t(at)] = 0;
      result.push_back(jnp::zeros(s, outs[0][j].dtype()));
      continue;
    }
    Arrays parts;
    for (const Arrays& o : outs) parts.push_back(lax::reshape(o[j], s));
    result.push_back(lax::concatenate(parts, at));
  }
  return result;
}

inline jx::AxisSpec axis_spec(int a) { return a == kNone ? jx::AxisSpec(jx::none) : jx::AxisSpec(a); }

// jx::vmap of f, taking and returning a list of arrays.
inline Arrays vmapped(const Fn& f, const Arrays& args, const std::vector<int>& in_axes,
                      int out_axis) {
  std::vector<jx::AxisSpec> items;
  for (int a : in_axes) items.push_back(axis_spec(a));
  jx::VmapOptions o{jx::AxisSpec::list({jx::AxisSpec::list(items)}), out_axis};
  return jx::vmap([&](const Arrays& xs) { return f(xs); }, o)(args);
}

inline std::vector<double> values(const Array& x) {
  return lax::convert_element_type(x, DType::Float64).to_vector<double>();
}

inline void expect_same(const Array& got, const Array& want, double tol, const std::string& ctx) {
  ASSERT_EQ(got.shape(), want.shape()) << ctx;
  ASSERT_EQ(got.dtype(), want.dtype()) << ctx;
  EXPECT_EQ(got.weak_type(), want.weak_type()) << ctx;
  auto g = values(got), w = values(want);
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << ctx << " at flat index " << i;
      continue;
    }
    EXPECT_LE(std::abs(g[i] - w[i]), tol * (1 + std::abs(w[i])))
        << ctx << " at flat index " << i << ": " << g[i] << " vs " << w[i];
  }
}

inline std::string axes_str(const std::vector<int>& a) {
  std::string s = "(";
  for (size_t i = 0; i < a.size(); ++i)
    s += (i ? ", " : "") + (a[i] == kNone ? std::string("none") : std::to_string(a[i]));
  return s + ")";
}

// Checks one in_axes configuration at one batch size and out_axes.
inline void check_one(const Fn& f, const std::vector<Arg>& args, const std::vector<int>& in_axes,
                      int64_t size, int out_axis, double tol, const std::string& name) {
  Arrays xs;
  for (size_t k = 0; k < args.size(); ++k) {
    const int rank = int(args[k].shape.size()) + 1;
    xs.push_back(make_arg(args[k], normalize(in_axes[k], rank), size, 1000 * k + uint64_t(size)));
  }
  const std::string ctx = name + " in_axes=" + axes_str(in_axes) + " size=" +
                          std::to_string(size) + " out_axes=" + std::to_string(out_axis);
  Arrays want = loop_and_stack(f, xs, in_axes, size, out_axis);
  Arrays got;
  try {
    got = vmapped(f, xs, in_axes, out_axis);
  } catch (const std::exception& e) {
    ADD_FAILURE() << ctx << ": " << e.what();
    return;
  }
  ASSERT_EQ(got.size(), want.size()) << ctx;
  for (size_t j = 0; j < got.size(); ++j) expect_same(got[j], want[j], tol, ctx);
}

// Every in_axes combination (none, 0, 1, -1 per argument, distinct after normalizing, at
// least one mapped) at batch sizes 0, 1, 3 and out_axes 0, 1 (when the outputs have rank
// >= 1) and -1.
inline void check_vmap(const std::string& name, const Fn& f, const std::vector<Arg>& args,
                       double tol = 0) {
  std::vector<std::vector<int>> options;
  for (const Arg& a : args) {
    const int rank = int(a.shape.size()) + 1;
    std::vector<int> opts{kNone, 0};
    if (rank > 1) opts.push_back(1);
    if (rank - 1 > 1) opts.push_back(-1);
    options.push_back(opts);
  }
  Arrays probe;
  for (size_t k = 0; k < args.size(); ++k) probe.push_back(make_arg(args[k], kNone, 0, k));
  int min_rank = INT_MAX;
  for (const Array& o : f(probe)) min_rank = std::min(min_rank, o.ndim());
  std::vector<size_t> pick(args.size(), 0);
  while (true) {
    std::vector<int> in_axes;
    bool any = false;
    for (size_t k = 0; k < args.size(); ++k) {
      in_axes.push_back(options[k][pick[k]]);
      any = any || in_axes.back() != kNone;
    }
    if (any) {
      for (int64_t size : {0, 1, 3}) {
        for (int out : {0, 1, -1}) {
          if (out == 1 && min_rank < 1) continue;
          check_one(f, args, in_axes, size, out, tol, name);
        }
      }
    }
    size_t k = 0;
    while (k < args.size() && ++pick[k] == options[k].size()) pick[k++] = 0;
    if (k == args.size()) break;
  }
}

// vmap(vmap(f, inner), outer) against two nested loops. The arguments carry the inner
// batch dim (size 2) at inner[k] and then the outer one (size 3) at outer[k].
inline void check_nested(const std::string& name, const Fn& f, const std::vector<Arg>& args,
                         const std::vector<int>& inner, const std::vector<int>& outer,
                         double tol = 0) {
  Arrays xs;
  for (size_t k = 0; k < args.size(); ++k) {
    if (outer[k] == kNone) {
      xs.push_back(make_arg(args[k], inner[k], 2, 77 + k));
      continue;
    }
    Arrays members;
    for (uint64_t m = 0; m < 3; ++m) {
      Array x = make_arg(args[k], inner[k], 2, 77 + k + 100 * m);
      Shape s = x.shape();
      s.insert(size_t(outer[k]), 1);
      members.push_back(lax::reshape(x, s));
    }
    xs.push_back(lax::concatenate(members, outer[k]));
  }
  const Fn inner_f = [&](const Arrays& a) {
    std::vector<int> in = inner;
    return vmapped(f, a, in, 0);
  };
  Arrays got = vmapped(inner_f, xs, outer, 0);
  Arrays want = loop_and_stack(
      [&](const Arrays& a) { return loop_and_stack(f, a, inner, 2, 0); }, xs, outer, 3, 0);
  ASSERT_EQ(got.size(), want.size());
  for (size_t j = 0; j < got.size(); ++j)
    expect_same(got[j], want[j], tol, name + " nested inner=" + axes_str(inner) +
                                          " outer=" + axes_str(outer));
}

}  // namespace vmap_testing
