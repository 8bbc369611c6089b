// jnp selection and searching, as jax/_src/numpy/{indexing,lax_numpy,setops}.py.
#include <algorithm>

#include "core/array_impl.h"
#include "jx/numpy.h"
#include "numpy/indexing.h"
#include "numpy/promote.h"
#include "support/str.h"

namespace jx::numpy {

namespace {

Array const_of(double v, DType t, int rank) {
  return lax::reshape(scalar(v, t), Shape(size_t(rank), 1));
}

Array ravel_(const Array& a) { return lax::reshape(a, Shape{a.size()}); }

int64_t axis_of(const char* op, int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    throw IndexError(str("[", op, "] axis ", axis, " is out of bounds for an array of rank ", ndim));
  return axis < 0 ? axis + ndim : axis;
}

void require_int_indices(const char* op, const Array& idx) {
  if (!is_integer(idx.dtype()))
    throw DTypeError(str("[", op, "] indices must have an integer dtype, got ",
                         type_str(idx.dtype(), idx.shape()), "; convert them with astype(jx::int32)"));
}

// i + n where i < 0 (signed dtypes only): jnp's _normalize_index.
Array normalize(const Array& i, int64_t n) {
  if (!is_signed_integer(i.dtype())) return i;
  Array neg = lax::convert_element_type(lax::lt(i, const_of(0, i.dtype(), i.ndim())), i.dtype(), false);
  return lax::add(i, lax::mul(neg, const_of(double(n), i.dtype(), i.ndim())));
}

// Python's i % n (non-negative for n > 0).
Array py_mod(const Array& i, int64_t n) {
  Array nn = const_of(double(n), i.dtype(), i.ndim());
  return lax::rem(lax::add(lax::rem(i, nn), nn), nn);
}

Array as_bool(const Array& c) {
  if (c.dtype() == DType::Bool) return c;
  return lax::ne(c, const_of(0, c.dtype(), c.ndim()));
}

Array not_(const Array& b) { return lax::eq(b, const_of(0, DType::Bool, b.ndim())); }
Array isnan_(const Array& x) { return lax::ne(x, x); }

// Positions of the true elements of a concrete mask, row-major.
std::vector<std::vector<int32_t>> true_positions(const char* op, const Array& mask) {
  if (!mask.is_concrete())
    throw ConcretizationError(str("[", op, "] needs a concrete array: its result's shape depends "
                                  "on the values; pass size= for a fixed-size result"));
  const Shape& s = mask.shape();
  const bool* m = jx::detail::data<bool>(mask);
  std::vector<std::vector<int32_t>> pos(s.size());
  for (int64_t i = 0; i < s.numel(); ++i) {
    if (!m[i]) continue;
    int64_t rem = i;
    for (size_t d = s.size(); d-- > 0;) {
      pos[d].push_back(int32_t(rem % s[d]));
      rem /= s[d];
    }
  }
  return pos;
}

Array zeros_weak_like(const Shape& s, const Array& like) {
  return lax::convert_element_type(zeros(s, like.dtype()), like.dtype(), like.weak_type());
}

Array iota_array(int64_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = int32_t(i);
  return array(v);
}

}  // namespace

Array where(const Array& condition, const Array& x, const Array& y) {
  Array c = as_bool(condition);
  auto xy = detail::promote({x, y});
  Shape s = detail::broadcast_shapes("where", {c.shape(), xy[0].shape(), xy[1].shape()});
  Array xb = detail::broadcast_to("where", xy[0], s);
  if (s.numel() == 0) return xb;
  return lax::select(detail::broadcast_to("where", c, s), xb,
                     detail::broadcast_to("where", xy[1], s));
}

std::vector<Array> where(const Array& condition, std::optional<int64_t> size,
                         std::optional<double> fill_value) {
  return nonzero(condition, size, fill_value);
}

std::vector<Array> nonzero(const Array& a, std::optional<int64_t> size,
                           std::optional<double> fill_value) {
  if (a.ndim() == 0)
    throw ValueError("[nonzero] calling nonzero on a 0-d array is not allowed; use "
                     "atleast_1d(a) first");
  if (size && *size < 0) throw ValueError(str("[nonzero] size must be >= 0, got ", *size));
  auto pos = true_positions("nonzero", as_bool(a));
  std::vector<Array> out;
  for (auto& p : pos) {
    if (size) p.resize(size_t(*size), int32_t(fill_value.value_or(0)));
    out.push_back(array(p));
  }
  return out;
}

Array argwhere(const Array& a, std::optional<int64_t> size, std::optional<double> fill_value) {
  if (a.ndim() == 0) {
    int64_t n = size.value_or(bool(as_bool(a)) ? 1 : 0);
    return zeros({n, 0}, DType::Int32);
  }
  auto cols = nonzero(a, size, fill_value);
  const int64_t n = cols[0].size(), d = int64_t(cols.size());
  std::vector<int32_t> rows(size_t(n * d));
  for (int64_t j = 0; j < d; ++j) {
    auto v = cols[size_t(j)].to_vector<int32_t>();
    for (int64_t i = 0; i < n; ++i) rows[size_t(i * d + j)] = v[size_t(i)];
  }
  return array(rows, Shape{n, d});
}

Array flatnonzero(const Array& a, std::optional<int64_t> size, std::optional<double> fill_value) {
  return nonzero(ravel_(a), size, fill_value)[0];
}

Array take(const Array& a, const Array& indices, std::optional<int64_t> axis,
           std::optional<TakeMode> mode, std::optional<double> fill_value, bool unique_indices,
           bool indices_are_sorted) {
  require_int_indices("take", indices);
  Array arr = axis ? a : ravel_(a);
  const int64_t ax = axis ? axis_of("take", *axis, a.ndim()) : 0;
  const int64_t n = arr.shape()[size_t(ax)];
  Array idx = indices;
  lax::GatherScatterMode gm = lax::GatherScatterMode::fill_or_drop;
  switch (mode.value_or(TakeMode::fill)) {
    case TakeMode::fill: idx = normalize(idx, n); break;
    case TakeMode::wrap:
      if (n > 0) idx = py_mod(idx, n);
      gm = lax::GatherScatterMode::promise_in_bounds;
      break;
    case TakeMode::clip: gm = lax::GatherScatterMode::clip; break;
    case TakeMode::promise_in_bounds: gm = lax::GatherScatterMode::promise_in_bounds; break;
  }
  std::vector<int64_t> slice_sizes = arr.shape().vec();
  if (n == 0) {
    if (indices.size() != 0)
      throw IndexError("[take] cannot do a non-empty take from an empty axis");
    return arr;
  }
  if (indices.size() == 0) {
    Shape s;
    for (int64_t d = 0; d < ax; ++d) s.push_back(arr.shape()[size_t(d)]);
    for (auto d : indices.shape()) s.push_back(d);
    for (int64_t d = ax + 1; d < arr.ndim(); ++d) s.push_back(arr.shape()[size_t(d)]);
    return zeros_weak_like(s, arr);
  }
  slice_sizes[size_t(ax)] = 1;
  const int64_t index_dims = indices.ndim();
  lax::GatherDimensionNumbers dn;
  for (int64_t d = 0; d < ax; ++d) dn.offset_dims.push_back(d);
  for (int64_t d = ax + index_dims; d < arr.ndim() + index_dims - 1; ++d) dn.offset_dims.push_back(d);
  dn.collapsed_slice_dims = {ax};
  dn.start_index_map = {ax};
  return lax::gather(arr, lax::expand_dims(idx, {idx.ndim()}), dn, slice_sizes, gm, fill_value,
                     indices_are_sorted, unique_indices);
}

Array take_along_axis(const Array& a, const Array& indices, std::optional<int64_t> axis,
                      std::optional<TakeMode> mode, std::optional<double> fill_value) {
  require_int_indices("take_along_axis", indices);
  Array arr = a;
  if (!axis) {
    if (indices.ndim() != 1)
      throw ValueError(str("[take_along_axis] indices must be 1-d when axis is none, got shape ",
                           shape_str(indices.shape())));
    arr = ravel_(a);
    axis = 0;
  }
  const int64_t rank = arr.ndim();
  if (rank != indices.ndim())
    throw ValueError(str("[take_along_axis] indices and arr must have the same number of "
                         "dimensions; ", indices.ndim(), " vs. ", rank));
  const int64_t ax = axis_of("take_along_axis", *axis, rank);
  Array idx = lax::convert_element_type(indices, DType::Int32, false);
  const Shape idx_shape = indices.shape();
  const int64_t axis_size = arr.shape()[size_t(ax)];
  Shape arr_shape = arr.shape();
  arr_shape[size_t(ax)] = 1;
  Shape out_shape = detail::broadcast_shapes("take_along_axis", {idx_shape, arr_shape});
  if (axis_size == 0) return zeros(out_shape, arr.dtype());
  const TakeMode m = mode.value_or(TakeMode::fill);
  if (m == TakeMode::wrap) idx = py_mod(idx, axis_size);
  else if (m != TakeMode::promise_in_bounds) idx = normalize(idx, axis_size);

  Shape gather_index_shape;
  for (int64_t i = 0; i < rank; ++i)
    if (i == ax || idx_shape[size_t(i)] != 1) gather_index_shape.push_back(out_shape[size_t(i)]);
  gather_index_shape.push_back(1);
  lax::GatherDimensionNumbers dn;
  std::vector<int64_t> slice_sizes, squeeze;
  Array gidx;
  int64_t new_i = 0, j = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (i == ax) {
      gidx = lax::reshape(idx, gather_index_shape);
      slice_sizes.push_back(1);
      dn.start_index_map.push_back(new_i);
      dn.collapsed_slice_dims.push_back(new_i);
      ++new_i;
      ++j;
    } else if (idx_shape[size_t(i)] == 1) {
      dn.offset_dims.push_back(i);
      slice_sizes.push_back(arr_shape[size_t(i)]);
      ++new_i;
    } else if (arr_shape[size_t(i)] == 1) {
      squeeze.push_back(i);
      ++j;
    } else {
      slice_sizes.push_back(arr_shape[size_t(i)] == 0 ? 0 : 1);
      dn.operand_batching_dims.push_back(new_i);
      dn.start_indices_batching_dims.push_back(j);
      ++new_i;
      ++j;
    }
  }
  if (!squeeze.empty()) arr = lax::squeeze(arr, squeeze);
  lax::GatherScatterMode gm = m == TakeMode::clip ? lax::GatherScatterMode::clip
                              : (m == TakeMode::fill) ? lax::GatherScatterMode::fill_or_drop
                                                      : lax::GatherScatterMode::promise_in_bounds;
  return lax::gather(arr, gidx, dn, slice_sizes, gm, fill_value);
}

Array put_along_axis(const Array& a, const Array& indices, const Array& values,
                     std::optional<int64_t> axis, bool inplace, std::optional<IndexMode> mode) {
  if (inplace)
    throw ValueError("[put_along_axis] cannot modify arrays in place, because jx arrays are "
                     "immutable; pass inplace=false to get an updated copy");
  require_int_indices("put_along_axis", indices);
  Array arr = axis ? a : ravel_(a);
  const int64_t ax = axis ? axis_of("put_along_axis", *axis, a.ndim()) : 0;
  if (arr.ndim() != indices.ndim())
    throw ValueError(str("[put_along_axis] arr and indices must have the same ndim, got ",
                         arr.ndim(), " and ", indices.ndim()));
  Array v = detail::broadcast_to("put_along_axis", values, indices.shape());
  std::vector<IndexArg> idx;
  for (int64_t d = 0; d < arr.ndim(); ++d) {
    if (d == ax) {
      idx.emplace_back(indices);
    } else {
      Shape s(size_t(arr.ndim()), 1);
      s[size_t(d)] = arr.shape()[size_t(d)];
      idx.emplace_back(lax::reshape(iota_array(arr.shape()[size_t(d)]), s));
    }
  }
  AtOptions o;
  o.mode = mode;
  Array r = detail::scatter_update(arr, idx, v, detail::ScatterKind::Set, o);
  return axis ? r : lax::reshape(r, a.shape());
}

Array compress(const Array& condition, const Array& a, std::optional<int64_t> axis) {
  Array c = as_bool(condition);
  if (c.ndim() != 1)
    throw ValueError(str("[compress] condition must be a 1-d array, got ",
                         type_str(condition.dtype(), condition.shape()),
                         "; ravel it, or use jnp::extract for an elementwise mask"));
  Array arr = axis ? a : ravel_(a);
  const int64_t ax = axis ? axis_of("compress", *axis, a.ndim()) : 0;
  const int64_t n = arr.shape()[size_t(ax)];
  auto pos = true_positions("compress", c)[0];
  if (!pos.empty() && pos.back() >= n)
    throw ValueError(str("[compress] condition contains true entries beyond the ", n,
                         " entries of the axis"));
  return take(arr, array(pos), ax, TakeMode::clip);
}

Array extract(const Array& condition, const Array& arr) {
  return compress(ravel_(condition), ravel_(arr));
}

Array choose(const Array& a, const std::vector<Array>& choices, ChooseMode mode) {
  if (!is_integer(a.dtype()))
    throw DTypeError(str("[choose] a must have an integer dtype, got ", type_str(a.dtype(), a.shape())));
  if (choices.empty()) throw ValueError("[choose] needs at least one choice");
  const int64_t N = int64_t(choices.size());
  Array idx = a;
  if (mode == ChooseMode::raise) {
    if (!a.is_concrete())
      throw ConcretizationError("[choose] mode raise needs a concrete a; use ChooseMode::wrap or clip");
    for (auto v : lax::convert_element_type(a, DType::Int64).to_vector<int64_t>())
      if (v < 0 || v >= N)
        throw ValueError(str("[choose] invalid entry ", v, " in the choice array: need 0 <= a < ", N,
                             "; use ChooseMode::wrap or clip"));
  } else if (mode == ChooseMode::wrap) {
    idx = py_mod(idx, N);
  } else {
    idx = lax::max(lax::min(idx, const_of(double(N - 1), idx.dtype(), idx.ndim())),
                   const_of(0, idx.dtype(), idx.ndim()));
  }
  std::vector<Array> cs = detail::promote(choices);
  std::vector<Shape> shapes{idx.shape()};
  for (auto& c : cs) shapes.push_back(c.shape());
  Shape s = detail::broadcast_shapes("choose", shapes);
  for (auto& c : cs) c = detail::broadcast_to("choose", c, s);
  idx = detail::broadcast_to("choose", lax::convert_element_type(idx, DType::Int32, false), s);
  return lax::select_n(idx, cs);
}

Array select(const std::vector<Array>& condlist, const std::vector<Array>& choicelist,
             const Array& default_value) {
  if (condlist.size() != choicelist.size())
    throw ValueError(str("[select] condlist and choicelist must have the same length, got ",
                         condlist.size(), " and ", choicelist.size()));
  if (condlist.empty()) throw ValueError("[select] condlist must be non-empty");
  std::vector<Array> all{default_value};
  all.insert(all.end(), choicelist.begin(), choicelist.end());
  all = detail::promote(all);
  // The first true condition wins: apply them from last to first.
  Array r = all[0];
  for (size_t k = condlist.size(); k-- > 0;) r = where(condlist[k], all[k + 1], r);
  return r;
}

namespace {
// x < y in the sort order (NaNs last).
Array lt_total(const Array& x, const Array& y) {
  Array lt = lax::lt(x, y);
  if (!is_floating(x.dtype())) return lt;
  return lax::bitwise_or(lt, lax::bitwise_and(isnan_(y), not_(isnan_(x))));
}
}  // namespace

Array searchsorted(const Array& a, const Array& v, Side side, const std::optional<Array>& sorter) {
  if (a.ndim() != 1)
    throw ValueError(str("[searchsorted] a must be 1-dimensional, got shape ", shape_str(a.shape())));
  Array sa = sorter ? a.index({IndexArg(*sorter)}) : a;
  auto av = detail::promote({sa, v});
  const int64_t n = sa.size();
  if (n == 0) return zeros(v.shape(), DType::Int32);
  Shape as(size_t(v.ndim()), 1), vs = v.shape();
  as.push_back(n);
  vs.push_back(1);
  Array A = lax::reshape(av[0], as), V = lax::reshape(av[1], vs);
  Array cmp = side == Side::left ? lt_total(A, V) : not_(lt_total(V, A));
  return lax::reduce_sum(lax::convert_element_type(cmp, DType::Int32, false), {int64_t(v.ndim())});
}

Array digitize(const Array& x, const Array& bins, bool right) {
  if (bins.ndim() != 1)
    throw ValueError(str("[digitize] bins must be a 1-dimensional array, got shape ",
                         shape_str(bins.shape())));
  if (bins.size() == 0) return zeros(x.shape(), DType::Int32);
  const Side side = right ? Side::left : Side::right;
  const int64_t n = bins.size();
  Array increasing = lax::ge(bins.index({IndexArg(int64_t(-1))}), bins.index({IndexArg(int64_t(0))}));
  Array fwd = searchsorted(bins, x, side);
  Array bwd = lax::sub(const_of(double(n), DType::Int32, x.ndim()),
                       searchsorted(lax::rev(bins, {0}), x, side));
  return where(increasing, fwd, bwd);
}

UniqueResult unique_all(const Array& a) {
  if (!a.is_concrete())
    throw ConcretizationError(str("[unique] needs a concrete array, got a traced ",
                                  type_str(a.dtype(), a.shape()),
                                  ": its result's shape depends on the values; call it outside "
                                  "jit/grad/vmap"));
  Array flat = ravel_(a);
  const int64_t n = flat.size();
  UniqueResult r;
  if (n == 0) {
    r.values = flat;
    r.indices = zeros({0}, DType::Int32);
    r.inverse = zeros(a.shape(), DType::Int32);
    r.counts = zeros({0}, DType::Int32);
    return r;
  }
  auto sorted = lax::sort({flat, iota_array(n)}, 0, true, 1);
  const Array& sv = sorted[0];
  auto perm = sorted[1].to_vector<int32_t>();
  // mask[i]: sorted[i] starts a new value (NaNs equal each other, as equal_nan=True).
  std::vector<bool> mask(size_t(n), true);
  if (n > 1) {
    Array hi = lax::slice(sv, {1}, {n}), lo = lax::slice(sv, {0}, {n - 1});
    Array diff = lax::ne(hi, lo);
    if (is_floating(sv.dtype()))
      diff = lax::bitwise_and(diff, not_(lax::bitwise_and(isnan_(hi), isnan_(lo))));
    auto d = diff.to_vector<bool>();
    for (int64_t i = 1; i < n; ++i) mask[size_t(i)] = d[size_t(i - 1)];
  }
  std::vector<int32_t> starts, first, counts, inverse(static_cast<size_t>(n));
  int32_t u = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (mask[size_t(i)]) {
      starts.push_back(int32_t(i));
      first.push_back(perm[size_t(i)]);
      counts.push_back(0);
      ++u;
    }
    ++counts.back();
    inverse[size_t(perm[size_t(i)])] = u;
  }
  r.values = take(sv, array(starts), 0, TakeMode::clip);
  r.indices = array(first);
  r.inverse = array(inverse, a.shape());
  r.counts = array(counts);
  return r;
}

Array unique(const Array& a) { return unique_all(a).values; }

}  // namespace jx::numpy
