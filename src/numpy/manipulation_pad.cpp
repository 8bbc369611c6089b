// jnp.pad and its modes, as jax/_src/numpy/lax_numpy.py builds them from lax.pad, slices,
// rev, concatenate and reductions.
#include <algorithm>
#include <array>

#include "jx/lax.h"
#include "jx/numpy.h"
#include "numpy/manipulation_detail.h"
#include "numpy/promote.h"
#include "ops/common.h"
#include "support/str.h"

namespace jx::numpy {

namespace jd = numpy::detail;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

PadWidth::PadWidth(std::initializer_list<int64_t> v) {
  if (v.size() == 1) {
    pairs = {{*v.begin(), *v.begin()}};
  } else if (v.size() == 2) {
    pairs = {{*v.begin(), *(v.begin() + 1)}};
  } else {
    throw ValueError(str("[pad] pad_width given as a flat list must be {n} or {before, after}, "
                         "got ", v.size(), " values; use {{before, after}, ...} per axis"));
  }
}

namespace {

std::string type_of(const Array& a) { return type_str(a.dtype(), a.shape()); }

Pairs to_pairs(const char* name, const PadWidth& w, int64_t nd) {
  if (w.pairs.size() == 1) return Pairs(size_t(nd), w.pairs[0]);
  if (int64_t(w.pairs.size()) == nd) return w.pairs;
  throw ValueError(str("[pad] ", name, " has ", w.pairs.size(), " (before, after) pairs but the "
                       "array has ", nd, " dimensions; give one pair, or one per dimension"));
}

DType to_inexact(DType t) { return is_inexact(t) ? t : DType::Float32; }

Array zero_scalar_like(const Array& x) {
  return lax::convert_element_type(scalar(0, x.dtype()), x.dtype(), x.weak_type());
}

// `values` (a scalar, (2,), (1, 2), (nd, 1) or (nd, 2) array) as nd x 2 scalars of dtype t.
std::vector<std::array<Array, 2>> value_pairs(const char* name, const Array& values, int64_t nd,
                                              DType t, bool weak) {
  Array v = lax::convert_element_type(values, t, weak);
  if (v.ndim() > 2 || (v.ndim() >= 1 && v.shape()[size_t(v.ndim() - 1)] > 2))
    throw ShapeError(str("[pad] ", name, " has unsupported shape ", shape_str(v.shape()),
                         "; give a scalar, (before, after), or one pair per dimension (", nd,
                         ", 2)"));
  v = broadcast_to(v, Shape{nd, 2});
  std::vector<std::array<Array, 2>> out;
  for (int64_t i = 0; i < nd; ++i) {
    std::array<Array, 2> p;
    for (int64_t j = 0; j < 2; ++j)
      p[size_t(j)] = lax::reshape(lax::slice(v, {i, j}, {i + 1, j + 1}), Shape{});
    out.push_back(p);
  }
  return out;
}

void check_no_padding(std::pair<int64_t, int64_t> w, const std::string& mode) {
  if (w.first > 0 || w.second > 0)
    throw ValueError(str("[pad] cannot apply '", mode, "' padding to an empty axis"));
}

Array pad_constant(const Array& x, const Pairs& w, const Array& constant_values) {
  const int64_t nd = x.ndim();
  Array cv = lax::convert_element_type(constant_values, x.dtype(), x.weak_type());
  if (cv.ndim() == 0 || (cv.ndim() == 1 && cv.shape()[0] == 1)) {
    std::vector<lax::PadConfig> cfg;
    for (auto [lo, hi] : w) cfg.push_back({lo, hi, 0});
    return lax::pad(x, lax::reshape(cv, Shape{}), cfg);
  }
  auto vals = value_pairs("constant_values", cv, nd, x.dtype(), x.weak_type());
  Array a = x;
  for (int64_t i = 0; i < nd; ++i) {
    for (int side = 0; side < 2; ++side) {
      const int64_t n = side == 0 ? w[size_t(i)].first : w[size_t(i)].second;
      if (n == 0) continue;
      std::vector<lax::PadConfig> cfg(static_cast<size_t>(nd));
      if (side == 0) cfg[size_t(i)].lo = n;
      else cfg[size_t(i)].hi = n;
      a = lax::pad(a, vals[size_t(i)][size_t(side)], cfg);
    }
  }
  return a;
}

Array pad_wrap(const Array& x, const Pairs& w) {
  Array a = x;
  for (int64_t i = 0; i < a.ndim(); ++i) {
    const int64_t n = a.shape()[size_t(i)];
    if (n == 0) {
      check_no_padding(w[size_t(i)], "wrap");
      continue;
    }
    auto [before, after] = w[size_t(i)];
    const int64_t reps = before / n + after / n + 1, lr = before % n, rr = after % n;
    std::vector<Array> parts;
    if (lr) parts.push_back(jd::slice_axis(a, i, n - lr, n));
    for (int64_t r = 0; r < reps; ++r) parts.push_back(a);
    if (rr) parts.push_back(jd::slice_axis(a, i, 0, rr));
    a = lax::concatenate(parts, i);
  }
  return a;
}

Array pad_symmetric_or_reflect(const Array& x, const Pairs& w, const std::string& mode,
                               const std::string& reflect_type) {
  if (reflect_type != "even" && reflect_type != "odd")
    throw ValueError(str("[pad] reflect_type must be 'even' or 'odd', got '", reflect_type, "'"));
  const bool odd = reflect_type == "odd";
  Array a = x;
  for (int64_t i = 0; i < a.ndim(); ++i) {
    const int64_t n = x.shape()[size_t(i)];
    if (n == 0) {
      check_no_padding(w[size_t(i)], mode);
      continue;
    }
    const int64_t offset = (mode == "reflect" && n > 1) ? 1 : 0;
    // Grows `a` one reflected block at a time, as jnp, so a pad wider than the axis
    // reflects the already-padded array.
    auto build = [&](Array arr, int64_t padding, bool before) {
      auto size = [&] { return arr.shape()[size_t(i)]; };
      Array edge = before ? jd::slice_axis(arr, i, 0, 1) : jd::slice_axis(arr, i, size() - 1, size());
      while (padding > 0) {
        const int64_t cur = std::min(padding, n - offset);
        padding -= cur;
        const int64_t m = size();
        Array piece = before ? jd::slice_axis(arr, i, offset, offset + cur)
                             : jd::slice_axis(arr, i, m - cur - offset,
                                              (mode == "symmetric" || n == 1) ? m : m - 1);
        piece = lax::rev(piece, {i});
        if (odd) {
          piece = jd::binary("pad", lax::sub, jd::binary("pad", lax::mul, Array(2), edge), piece);
          if (n > 1) {
            const int64_t pm = piece.shape()[size_t(i)];
            edge = before ? jd::slice_axis(piece, i, 0, 1) : jd::slice_axis(piece, i, pm - 1, pm);
          }
        }
        arr = before ? lax::concatenate({piece, arr}, i) : lax::concatenate({arr, piece}, i);
      }
      return arr;
    };
    a = build(a, w[size_t(i)].first, true);
    a = build(a, w[size_t(i)].second, false);
  }
  return a;
}

Array pad_edge(const Array& x, const Pairs& w) {
  Array a = x;
  for (int64_t i = 0; i < a.ndim(); ++i) {
    const int64_t n = a.shape()[size_t(i)];
    if (n == 0) {
      check_no_padding(w[size_t(i)], "edge");
      continue;
    }
    Array before = repeat(jd::slice_axis(a, i, 0, 1), w[size_t(i)].first, i);
    Array after = repeat(jd::slice_axis(a, i, n - 1, n), w[size_t(i)].second, i);
    a = lax::concatenate({before, a, after}, i);
  }
  return a;
}

// linspace(start, edge, num, endpoint=False) along `axis`, in x's dtype (as jnp's ramps).
Array ramp(const Array& start, const Array& edge, int64_t num, int64_t axis, const Array& x) {
  const DType t = x.dtype(), ct = to_inexact(t);
  Shape s = edge.shape();
  s[size_t(axis)] = num;
  Array out;
  if (num == 0) {
    out = zeros(s, t);
  } else {
    Array lo = broadcast_to(lax::convert_element_type(start, ct, false), s);
    Array hi = broadcast_to(lax::convert_element_type(edge, ct, false), s);
    if (num == 1) {
      out = lo;
    } else {
      Array step = lax::div(lax::broadcasted_iota(ct, s, axis),
                            broadcast_to(scalar(double(num), ct), s));
      out = lax::add(lax::mul(lo, lax::sub(broadcast_to(scalar(1, ct), s), step)),
                     lax::mul(hi, step));
    }
    if (!is_floating(t)) out = lax::floor(out);
  }
  return lax::convert_element_type(out, t, x.weak_type());
}

Array pad_linear_ramp(const Array& x, const Pairs& w, const Array& end_values) {
  auto ends = value_pairs("end_values", end_values, x.ndim(), to_inexact(x.dtype()), false);
  Array a = x;
  for (int64_t i = 0; i < a.ndim(); ++i) {
    const int64_t n = a.shape()[size_t(i)];
    if (n == 0) {
      check_no_padding(w[size_t(i)], "linear_ramp");
      continue;
    }
    Array before = ramp(ends[size_t(i)][0], jd::slice_axis(a, i, 0, 1), w[size_t(i)].first, i, a);
    Array after = ramp(ends[size_t(i)][1], jd::slice_axis(a, i, n - 1, n), w[size_t(i)].second, i, a);
    a = lax::concatenate({before, a, lax::rev(after, {i})}, i);
  }
  return a;
}

// The statistic of `s` along `axis`, kept as a size-1 dim.
Array stat(const std::string& mode, const Array& s, int64_t axis) {
  Shape keep = s.shape();
  keep[size_t(axis)] = 1;
  if (mode == "maximum") return lax::reshape(lax::reduce_max(s, {axis}), keep);
  if (mode == "minimum") return lax::reshape(lax::reduce_min(s, {axis}), keep);
  const DType rt = to_inexact(s.dtype());
  // half types accumulate in float32, as jnp.mean
  const DType ct = (rt == DType::Float16 || rt == DType::BFloat16) ? DType::Float32 : rt;
  const int64_t n = s.shape()[size_t(axis)];
  Array f = lax::convert_element_type(s, ct, false);
  if (mode == "mean") {
    Array sum = lax::reshape(lax::reduce_sum(f, {axis}), keep);
    return lax::convert_element_type(lax::div(sum, broadcast_to(scalar(double(n), ct), keep)), rt);
  }
  // median: the midpoint of the two middle elements of the sorted axis
  Array sorted = lax::sort(f, axis);
  Array lo = jd::slice_axis(sorted, axis, (n - 1) / 2, (n - 1) / 2 + 1);
  Array hi = jd::slice_axis(sorted, axis, n / 2, n / 2 + 1);
  Array mid = lax::mul(lax::add(lo, hi), broadcast_to(scalar(0.5, ct), keep));
  return lax::convert_element_type(mid, rt);
}

Array pad_stats(const Array& x, const Pairs& w, const std::optional<Pairs>& stat_length,
                const std::string& mode) {
  Array a = x;
  for (int64_t i = 0; i < a.ndim(); ++i) {
    const int64_t n = a.shape()[size_t(i)];
    if (n == 0) {
      check_no_padding(w[size_t(i)], mode);
      continue;
    }
    Array sb, sa;
    if (!stat_length) {
      sb = sa = stat(mode, a, i);
    } else {
      auto [lb, la] = (*stat_length)[size_t(i)];
      if (lb <= 0 || la <= 0)
        throw ValueError(str("[pad] stat_length must be positive, got (", lb, ", ", la,
                             ") for axis ", i));
      lb = std::min(lb, n);
      la = std::min(la, n);
      sb = stat(mode, jd::slice_axis(a, i, 0, lb), i);
      sa = stat(mode, jd::slice_axis(a, i, n - la, n), i);
    }
    if (!is_floating(a.dtype()) && (mode == "mean" || mode == "median")) {
      sb = lax::round(sb, lax::RoundingMethod::to_nearest_even);
      sa = lax::round(sa, lax::RoundingMethod::to_nearest_even);
    }
    sb = lax::convert_element_type(sb, a.dtype(), a.weak_type());
    sa = lax::convert_element_type(sa, a.dtype(), a.weak_type());
    a = lax::concatenate({repeat(sb, w[size_t(i)].first, i), a, repeat(sa, w[size_t(i)].second, i)},
                         i);
  }
  return a;
}

Array pad_empty(const Array& x, const Pairs& w) {
  Array a = x;
  for (int64_t i = 0; i < a.ndim(); ++i) {
    Shape before = a.shape(), after = a.shape();
    before[size_t(i)] = w[size_t(i)].first;
    after[size_t(i)] = w[size_t(i)].second;
    Array zero = zero_scalar_like(a);
    a = lax::concatenate({broadcast_to(zero, before), a, broadcast_to(zero, after)}, i);
  }
  return a;
}

}  // namespace

Array pad(const Array& a, const PadWidth& pad_width, const std::string& mode,
          const PadOptions& options) {
  static const char* const kModes[] = {"constant", "edge",    "reflect", "symmetric",
                                       "wrap",     "linear_ramp", "maximum", "minimum",
                                       "mean",     "median",  "empty"};
  if (std::find_if(std::begin(kModes), std::end(kModes),
                   [&](const char* m) { return mode == m; }) == std::end(kModes))
    throw ValueError(str("[pad] unknown mode '", mode, "'; use one of constant, edge, reflect, "
                         "symmetric, wrap, linear_ramp, maximum, minimum, mean, median, empty"));
  const int64_t nd = a.ndim();
  if (nd == 0) return a;
  Pairs w = to_pairs("pad_width", pad_width, nd);
  for (auto [lo, hi] : w)
    if (lo < 0 || hi < 0)
      throw ValueError(str("[pad] pad_width can't contain negative values, got (", lo, ", ", hi,
                           ") for ", type_of(a)));
  if (mode == "constant") return pad_constant(a, w, options.constant_values);
  if (mode == "wrap") return pad_wrap(a, w);
  if (mode == "reflect" || mode == "symmetric")
    return pad_symmetric_or_reflect(a, w, mode, options.reflect_type);
  if (mode == "edge") return pad_edge(a, w);
  if (mode == "linear_ramp") return pad_linear_ramp(a, w, options.end_values);
  if (mode == "empty") return pad_empty(a, w);
  std::optional<Pairs> sl;
  if (options.stat_length) sl = to_pairs("stat_length", *options.stat_length, nd);
  return pad_stats(a, w, sl, mode);
}

Array pad(const Array& a, const PadWidth& pad_width, const Array& constant_values) {
  PadOptions o;
  o.constant_values = constant_values;
  return pad(a, pad_width, "constant", o);
}

}  // namespace jx::numpy
