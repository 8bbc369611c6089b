// NumPy indexing on Array: x(i, jx::slice(...), jx::newaxis, jx::ellipsis, idx) and
// x.at(...).get/set/add/... — lowered as jax/_src/numpy/indexing.py does: static ints and
// unit-step slices become slice/dynamic_slice (+ rev, reshape), everything else one gather
// (or scatter for .at updates) built by index_to_gather, with NumPy's placement rules for
// advanced indices. Out-of-bounds reads clamp; out-of-bounds updates are dropped.
#include <algorithm>
#include <cstring>

#include "core/array_impl.h"
#include "jx/numpy.h"
#include "numpy/indexing.h"
#include "numpy/promote.h"
#include "support/str.h"

namespace jx {

IndexArg::IndexArg(const Array& a) : v_(std::make_shared<Array>(a)) {
  if (!a.valid())
    throw ValueError("[index] an index is an empty jx::Array (default-constructed); give it a value");
}
IndexArg::IndexArg(const std::vector<int64_t>& idx) {
  // As jnp.asarray of a list of Python ints: int32 unless a value needs 64 bits.
  bool fits = std::all_of(idx.begin(), idx.end(),
                          [](int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; });
  if (fits) {
    std::vector<int32_t> v(idx.begin(), idx.end());
    v_ = std::make_shared<Array>(numpy::array(v));
  } else {
    v_ = std::make_shared<Array>(numpy::array(idx));
  }
}
IndexArg::IndexArg(const IndexArg&) = default;
IndexArg::IndexArg(IndexArg&&) noexcept = default;
IndexArg& IndexArg::operator=(const IndexArg&) = default;
IndexArg::~IndexArg() = default;

namespace numpy::detail {

namespace {

constexpr DType kIndexDType = DType::Int32;

Array int_const(int64_t v, DType t = kIndexDType) { return scalar(double(v), t); }

// Python's slice.indices(n): (start, stop, step) and the slice's length.
struct PySlice {
  int64_t start, stop, step, size;
};
PySlice py_slice(const Slice& s, int64_t n) {
  int64_t step = s.step.value_or(1);
  if (step == 0) throw ValueError("[index] slice step cannot be zero");
  int64_t start, stop;
  auto norm = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v += n;
    return std::clamp(v, lo, hi);
  };
  if (step > 0) {
    start = s.start ? norm(*s.start, 0, n) : 0;
    stop = s.stop ? norm(*s.stop, 0, n) : n;
  } else {
    start = s.start ? norm(*s.start, -1, n - 1) : n - 1;
    stop = s.stop ? norm(*s.stop, -1, n - 1) : -1;
  }
  int64_t size = step > 0 ? (stop - start + step - 1) / step : (start - stop - step - 1) / (-step);
  return {start, stop, step, std::max<int64_t>(size, 0)};
}

bool is_bool_array(const Idx& e) { return e.kind == Idx::Arr && e.a.dtype() == DType::Bool; }

// NumPy's nonzero of a concrete mask: one int32 index array per mask dim.
std::vector<Array> mask_positions(const Array& mask) {
  if (!mask.is_concrete())
    throw ConcretizationError(
        str("[index] a boolean mask index needs a concrete array, got a traced ",
            type_str(mask.dtype(), mask.shape()),
            ": the result's shape would depend on the mask's values. Use "
            "jnp::where(mask, x, y) or jnp::nonzero(mask, size) instead"));
  const Shape& s = mask.shape();
  const bool* m = jx::detail::data<bool>(mask);
  const int64_t n = s.numel();
  std::vector<std::vector<int32_t>> pos(s.size());
  for (int64_t i = 0; i < n; ++i) {
    if (!m[i]) continue;
    int64_t rem = i;
    for (size_t d = s.size(); d-- > 0;) {
      pos[d].push_back(int32_t(rem % s[d]));
      rem /= s[d];
    }
  }
  std::vector<Array> out;
  for (auto& p : pos) out.push_back(array(p));
  return out;
}

}  // namespace

std::vector<Idx> to_idx(const std::vector<IndexArg>& args) {
  std::vector<Idx> out;
  for (const auto& a : args) {
    Idx e;
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, int64_t>) {
            e.kind = Idx::Int;
            e.i = v;
          } else if constexpr (std::is_same_v<V, Slice>) {
            e.kind = Idx::Sl;
            e.s = v;
          } else if constexpr (std::is_same_v<V, NewAxis>) {
            e.kind = Idx::None;
          } else if constexpr (std::is_same_v<V, Ellipsis>) {
            e.kind = Idx::Ell;
          } else {
            e.kind = Idx::Arr;
            e.a = *v;
          }
        },
        a.value());
    out.push_back(e);
  }
  return out;
}

std::vector<Idx> expand_bool_indices(const std::vector<Idx>& idx, const Shape& shape) {
  size_t total_dims = shape.size();
  const auto num_ellipsis = std::count_if(idx.begin(), idx.end(),
                                          [](const Idx& e) { return e.kind == Idx::Ell; });
  if (num_ellipsis > 1) throw IndexError("[index] an index can only have a single ellipsis");
  if (num_ellipsis == 1) {
    total_dims = 0;
    for (const auto& e : idx) {
      if (e.kind == Idx::None || e.kind == Idx::Ell) continue;
      total_dims += is_bool_array(e) ? size_t(e.a.ndim()) : 1;
    }
  }
  std::vector<Idx> out;
  int64_t ellipsis_offset = 0, newaxis_offset = 0;
  for (size_t pos = 0; pos < idx.size(); ++pos) {
    const Idx& e = idx[pos];
    if (is_bool_array(e)) {
      if (e.a.ndim() == 0) {
        if (!e.a.is_concrete())
          throw ConcretizationError("[index] a boolean scalar index needs a concrete value");
        Idx b;
        b.kind = Idx::Bool;
        b.b = e.a.item<bool>();
        out.push_back(b);
      } else {
        const Shape& ms = e.a.shape();
        const int64_t start = int64_t(out.size()) + ellipsis_offset - newaxis_offset;
        const int64_t end = std::min<int64_t>(start + int64_t(ms.size()), int64_t(shape.size()));
        Shape expected;
        for (int64_t d = std::max<int64_t>(start, 0); d < end; ++d) expected.push_back(shape[size_t(d)]);
        if (expected.size() != ms.size())
          throw IndexError(str("[index] too many boolean indices at index ", pos,
                               ": got a mask of shape ", shape_str(ms), ", but only ",
                               expected.size(), " dimensions remain"));
        for (size_t d = 0; d < ms.size(); ++d)
          if (ms[d] != 0 && ms[d] != expected[d])
            throw IndexError(str("[index] boolean index did not match the shape of the indexed "
                                 "array in index ", pos, ": got ", shape_str(ms), ", expected ",
                                 shape_str(expected), "; a mask must have the shape of the dims "
                                 "it indexes"));
        for (auto& p : mask_positions(e.a)) {
          Idx a;
          a.kind = Idx::Arr;
          a.a = p;
          out.push_back(a);
        }
      }
    } else {
      out.push_back(e);
    }
    if (e.kind == Idx::Ell) ellipsis_offset = int64_t(shape.size()) - int64_t(total_dims) - 1;
    if (e.kind == Idx::None) ++newaxis_offset;
  }
  return out;
}

void check_index_dtypes(const std::vector<Idx>& idx) {
  for (size_t pos = 0; pos < idx.size(); ++pos) {
    const Idx& e = idx[pos];
    if (e.kind == Idx::Arr && !is_integer(e.a.dtype()) && e.a.dtype() != DType::Bool)
      throw DTypeError(str("[index] indexer at position ", pos, " has type ",
                           type_str(e.a.dtype(), e.a.shape()),
                           "; index arrays must have an integer or bool dtype: convert it with "
                           "astype(jx::int32)"));
  }
}

std::vector<Idx> canonicalize_tuple_index(size_t ndim, const std::vector<Idx>& idx) {
  size_t consumed = 0;
  for (const auto& e : idx)
    if (e.kind != Idx::None && e.kind != Idx::Ell && e.kind != Idx::Bool) ++consumed;
  if (consumed > ndim)
    throw IndexError(str("[index] too many indices: a ", ndim, "-dimensional array indexed with ",
                         consumed, " regular ", consumed == 1 ? "index" : "indices",
                         "; use at most ", ndim, " (jx::newaxis and jx::ellipsis do not count)"));
  std::vector<Idx> out;
  Idx colon;
  colon.kind = Idx::Sl;
  bool had_ellipsis = false;
  for (const auto& e : idx) {
    if (e.kind == Idx::Ell) {
      if (had_ellipsis) throw IndexError("[index] an index can only have a single ellipsis");
      had_ellipsis = true;
      for (size_t k = consumed; k < ndim; ++k) out.push_back(colon);
    } else {
      out.push_back(e);
    }
  }
  if (!had_ellipsis)
    for (size_t k = consumed; k < ndim; ++k) out.push_back(colon);
  return out;
}

namespace {

// i + n where i < 0, in i's (signed) dtype: jnp's _normalize_index.
Array normalize_index(const Array& i, int64_t n) {
  if (!is_signed_integer(i.dtype())) return i;
  Shape ones(size_t(i.ndim()), 1);
  Array zero = lax::reshape(int_const(0, i.dtype()), ones);
  Array size = lax::reshape(int_const(n, i.dtype()), ones);
  Array neg = lax::convert_element_type(lax::lt(i, zero), i.dtype(), false);
  return lax::add(i, lax::mul(neg, size));
}

}  // namespace

Indexer index_to_gather(const Shape& x_shape_in, const std::vector<Idx>& idx_in) {
  Indexer r;
  std::vector<Idx> idx = idx_in;
  // Advanced-index contiguity is judged before the ellipsis is expanded (jax #25109).
  std::vector<int64_t> is_adv;
  for (size_t p = 0; p < idx.size(); ++p)
    if (idx[p].kind == Idx::Int || idx[p].kind == Idx::Arr || idx[p].kind == Idx::Bool)
      is_adv.push_back(int64_t(p));
  bool contiguous = true;
  for (size_t k = 1; k < is_adv.size(); ++k)
    if (is_adv[k] - is_adv[k - 1] != 1) contiguous = false;

  idx = canonicalize_tuple_index(x_shape_in.size(), idx);
  Shape x_shape = x_shape_in;
  for (size_t n = 0; n < idx.size(); ++n) {
    if (idx[n].kind != Idx::Bool) continue;
    r.scalar_bool_dims.push_back(int64_t(n));
    std::vector<int32_t> ar;
    if (idx[n].b) ar.push_back(0);
    idx[n].kind = Idx::Arr;
    idx[n].a = array(ar);
  }
  for (int64_t n : r.scalar_bool_dims) x_shape.insert(size_t(n), 1);

  // Advanced indexing: any index array of rank >= 1 makes ints advanced too.
  const bool advanced = std::any_of(idx.begin(), idx.end(), [](const Idx& e) {
    return e.kind == Idx::Arr && e.a.ndim() > 0;
  });
  std::vector<Array> adv_arrays;
  std::vector<size_t> idx_adv_axes;
  std::vector<int64_t> x_adv_axes;
  if (advanced) {
    size_t j = 0;
    for (size_t p = 0; p < idx.size(); ++p) {
      const Idx& e = idx[p];
      if (e.kind == Idx::None) continue;
      if (e.kind == Idx::Int || e.kind == Idx::Arr) {
        const int64_t n = x_shape[j];
        Array a = e.kind == Idx::Int
                      ? int_const(e.i < 0 ? e.i + n : e.i)
                      : normalize_index(lax::convert_element_type(e.a, kIndexDType, false), n);
        adv_arrays.push_back(a);
        idx_adv_axes.push_back(p);
        x_adv_axes.push_back(int64_t(j));
      }
      ++j;
    }
  }

  int64_t x_axis = 0, y_axis = 0, collapsed_y_axis = 0;
  std::vector<std::pair<Array, int64_t>> gather_indices;
  Shape gather_indices_shape;
  auto& dn = r.dnums;
  for (size_t p = 0; p < idx.size(); ++p) {
    const Idx& e = idx[p];
    if (advanced && ((contiguous && p == idx_adv_axes[0]) || (!contiguous && p == 0))) {
      std::vector<Shape> shapes;
      for (auto& a : adv_arrays) shapes.push_back(a.shape());
      Shape bs = broadcast_shapes("index", shapes);
      const int64_t start_dim = int64_t(gather_indices_shape.size());
      for (auto& a : adv_arrays) gather_indices.push_back({broadcast_to("index", a, bs), start_dim});
      for (auto d : bs) gather_indices_shape.push_back(d);
      dn.start_index_map.insert(dn.start_index_map.end(), x_adv_axes.begin(), x_adv_axes.end());
      dn.collapsed_slice_dims.insert(dn.collapsed_slice_dims.end(), x_adv_axes.begin(),
                                     x_adv_axes.end());
      for (auto d : bs) r.slice_shape.push_back(d);
      y_axis += int64_t(bs.size());
      collapsed_y_axis += int64_t(bs.size());
    }
    if (advanced && std::find(idx_adv_axes.begin(), idx_adv_axes.end(), p) != idx_adv_axes.end()) {
      ++x_axis;
      r.gather_slice_shape.push_back(1);
      continue;
    }
    const int64_t n = x_axis < int64_t(x_shape.size()) ? x_shape[size_t(x_axis)] : 0;
    if (e.kind == Idx::Int || e.kind == Idx::Arr) {  // a basic (scalar) integer index
      if (n == 0)
        throw IndexError(str("[index] index is out of bounds for axis ", x_axis, " with size 0"));
      Array i = e.kind == Idx::Int
                    ? int_const(e.i < 0 ? e.i + n : e.i)
                    : normalize_index(lax::convert_element_type(e.a, kIndexDType, false), n);
      gather_indices.push_back({i, int64_t(gather_indices_shape.size())});
      dn.collapsed_slice_dims.push_back(x_axis);
      r.gather_slice_shape.push_back(1);
      dn.start_index_map.push_back(x_axis);
      ++x_axis;
    } else if (e.kind == Idx::None) {
      r.slice_shape.push_back(1);
      r.newaxis_dims.push_back(y_axis);
      ++y_axis;
    } else if (e.kind == Idx::Sl) {
      PySlice s = py_slice(e.s, n);
      r.slice_shape.push_back(s.size);
      if (s.step == 1) {
        if (s.size != n) {
          gather_indices.push_back({int_const(s.start), int64_t(gather_indices_shape.size())});
          dn.start_index_map.push_back(x_axis);
        }
        r.gather_slice_shape.push_back(s.size);
        dn.offset_dims.push_back(collapsed_y_axis);
      } else {
        // Strided slices gather one element per position. The indices run in the slice's own
        // order, so a negative step needs no reverse afterwards.
        std::vector<int32_t> v(static_cast<size_t>(s.size));
        for (int64_t k = 0; k < s.size; ++k) v[size_t(k)] = int32_t(s.start + k * s.step);
        r.gather_slice_shape.push_back(1);
        gather_indices.push_back({array(v), int64_t(gather_indices_shape.size())});
        dn.start_index_map.push_back(x_axis);
        gather_indices_shape.push_back(s.size);
        dn.collapsed_slice_dims.push_back(x_axis);
      }
      ++collapsed_y_axis;
      ++y_axis;
      ++x_axis;
    } else {
      throw InternalError("jx internal error: unexpected index kind in index_to_gather");
    }
  }

  if (gather_indices.empty()) {
    r.gather_indices = zeros({0}, kIndexDType);
  } else if (gather_indices.size() == 1) {
    Array g = gather_indices[0].first;
    r.gather_indices = lax::expand_dims(g, {g.ndim()});
  } else {
    Shape full = gather_indices_shape;
    full.push_back(1);
    std::vector<Array> parts;
    for (auto& [g, start] : gather_indices) {
      std::vector<int64_t> bd;
      for (int64_t d = 0; d < g.ndim(); ++d) bd.push_back(start + d);
      parts.push_back(lax::broadcast_in_dim(g, full, bd));
    }
    r.gather_indices = lax::concatenate(parts, int64_t(gather_indices_shape.size()));
  }
  std::sort(dn.collapsed_slice_dims.begin(), dn.collapsed_slice_dims.end());
  r.unique_indices = r.indices_are_sorted = !advanced;
  return r;
}

lax::GatherScatterMode gather_mode(std::optional<IndexMode> m) {
  if (!m) return lax::GatherScatterMode::promise_in_bounds;
  switch (*m) {
    case IndexMode::promise_in_bounds: return lax::GatherScatterMode::promise_in_bounds;
    case IndexMode::clip: return lax::GatherScatterMode::clip;
    case IndexMode::drop:
    case IndexMode::fill: return lax::GatherScatterMode::fill_or_drop;
  }
  return lax::GatherScatterMode::promise_in_bounds;
}

lax::GatherScatterMode scatter_mode(std::optional<IndexMode> m) {
  if (!m) return lax::GatherScatterMode::fill_or_drop;
  return gather_mode(m);
}

namespace {

bool is_simple_reverse(const Idx& e) {
  return e.kind == Idx::Sl && !e.s.start && !e.s.stop && e.s.step && *e.s.step == -1;
}
bool is_contiguous_slice(const Idx& e) {
  return e.kind == Idx::Sl && (!e.s.step || *e.s.step == 1);
}

// jnp's _attempt_rewriting_take_via_slice: static ints and unit-step slices become one
// slice (or dynamic_slice for 0-d index arrays) plus a reshape for the int dims.
std::optional<Array> take_via_slice(const Array& x, std::vector<Idx> idx,
                                    std::optional<IndexMode> mode) {
  for (const auto& e : idx)
    if (e.kind == Idx::None || e.kind == Idx::Bool) return std::nullopt;
  idx = canonicalize_tuple_index(size_t(x.ndim()), idx);
  const Shape& shape = x.shape();
  std::vector<int64_t> revs;
  std::vector<size_t> int_dims;
  bool partial = false, dynamic = false;
  for (size_t d = 0; d < idx.size(); ++d) {
    const Idx& e = idx[d];
    const int64_t n = shape[d];
    if (is_simple_reverse(e)) {
      revs.push_back(int64_t(d));
    } else if (e.kind == Idx::Int && n > 0 && e.i >= -n && e.i < n) {
      int_dims.push_back(d);
    } else if (e.kind == Idx::Arr && e.a.ndim() == 0 && is_integer(e.a.dtype()) && n > 0 &&
               !mode) {
      int_dims.push_back(d);
      dynamic = true;
    } else if (is_contiguous_slice(e)) {
      PySlice s = py_slice(e.s, n);
      if (s.start != 0 || s.size != n) partial = true;
    } else {
      return std::nullopt;
    }
  }
  Array y = x;
  if (!revs.empty()) y = lax::rev(y, revs);
  if (int_dims.empty() && !partial) return y;
  std::vector<int64_t> start, sizes;
  for (size_t d = 0; d < idx.size(); ++d) {
    const Idx& e = idx[d];
    if (e.kind == Idx::Sl && !is_simple_reverse(e)) {
      PySlice s = py_slice(e.s, shape[d]);
      start.push_back(s.start);
      sizes.push_back(s.size);
    } else if (e.kind == Idx::Int) {
      start.push_back(e.i < 0 ? e.i + shape[d] : e.i);
      sizes.push_back(1);
    } else {
      start.push_back(0);
      sizes.push_back(e.kind == Idx::Arr ? 1 : shape[d]);
    }
  }
  if (!dynamic) {
    std::vector<int64_t> limit;
    for (size_t d = 0; d < start.size(); ++d) limit.push_back(start[d] + sizes[d]);
    y = lax::slice(y, start, limit);
  } else {
    // dynamic_slice wants one index dtype: promote the dynamic ones, static ones follow.
    std::vector<Array> dyn;
    for (const auto& e : idx)
      if (e.kind == Idx::Arr) dyn.push_back(e.a);
    DType t = promote(dyn)[0].dtype();
    std::vector<Array> starts;
    for (size_t d = 0; d < idx.size(); ++d)
      starts.push_back(idx[d].kind == Idx::Arr ? lax::convert_element_type(idx[d].a, t, false)
                                               : int_const(start[d], t));
    y = lax::dynamic_slice(y, starts, sizes);
  }
  if (!int_dims.empty()) y = lax::squeeze(y, std::vector<int64_t>(int_dims.begin(), int_dims.end()));
  return y;
}

}  // namespace

Array rewriting_take(const Array& x, const std::vector<IndexArg>& args, const AtOptions& opts) {
  std::vector<Idx> idx = to_idx(args);
  check_index_dtypes(idx);
  if (!std::any_of(idx.begin(), idx.end(), is_bool_array))
    if (auto y = take_via_slice(x, idx, opts.mode)) return *y;
  idx = expand_bool_indices(idx, x.shape());
  check_index_dtypes(idx);
  Indexer ix = index_to_gather(x.shape(), idx);
  Array y = x;
  if (!ix.scalar_bool_dims.empty()) {
    Shape s = x.shape();
    for (int64_t n : ix.scalar_bool_dims) s.insert(size_t(n), 1);
    y = lax::reshape(y, s);
  }
  if (ix.slice_shape.numel() == 0) {
    return lax::convert_element_type(zeros(ix.slice_shape, x.dtype()), x.dtype(), x.weak_type());
  }
  if (ix.gather_indices.size() != 0) {
    y = lax::gather(y, ix.gather_indices, ix.dnums, ix.gather_slice_shape, gather_mode(opts.mode),
                    opts.fill_value, opts.indices_are_sorted || ix.indices_are_sorted,
                    opts.unique_indices || ix.unique_indices);
  }
  return lax::reshape(y, ix.slice_shape);  // adds the newaxis dims
}

Array scatter_update(const Array& x, const std::vector<IndexArg>& args, const Array& values,
                     ScatterKind kind, const AtOptions& opts) {
  std::vector<Idx> idx = to_idx(args);
  check_index_dtypes(idx);
  idx = expand_bool_indices(idx, x.shape());
  check_index_dtypes(idx);
  Indexer ix = index_to_gather(x.shape(), idx);
  if (ix.slice_shape.numel() == 0) return x;
  auto xy = promote({x, values});
  Array xs = xy[0], y = xy[1];
  if (!ix.scalar_bool_dims.empty()) {
    Shape s = x.shape();
    for (int64_t n : ix.scalar_bool_dims) s.insert(size_t(n), 1);
    xs = lax::reshape(xs, s);
  }
  y = broadcast_to("at", y, ix.slice_shape);
  Shape ys;  // drop the newaxis dims
  for (size_t d = 0; d < ix.slice_shape.size(); ++d)
    if (std::find(ix.newaxis_dims.begin(), ix.newaxis_dims.end(), int64_t(d)) ==
        ix.newaxis_dims.end())
      ys.push_back(ix.slice_shape[d]);
  y = lax::reshape(y, ys);
  lax::ScatterDimensionNumbers dn{ix.dnums.offset_dims, ix.dnums.collapsed_slice_dims,
                                  ix.dnums.start_index_map, ix.dnums.operand_batching_dims,
                                  ix.dnums.start_indices_batching_dims};
  const auto mode = scatter_mode(opts.mode);
  const bool sorted = opts.indices_are_sorted || ix.indices_are_sorted;
  const bool unique = opts.unique_indices || ix.unique_indices;
  Array out;
  switch (kind) {
    case ScatterKind::Set: out = lax::scatter(xs, ix.gather_indices, y, dn, mode, sorted, unique); break;
    case ScatterKind::Add: out = lax::scatter_add(xs, ix.gather_indices, y, dn, mode, sorted, unique); break;
    case ScatterKind::Mul: out = lax::scatter_mul(xs, ix.gather_indices, y, dn, mode, sorted, unique); break;
    case ScatterKind::Min: out = lax::scatter_min(xs, ix.gather_indices, y, dn, mode, sorted, unique); break;
    case ScatterKind::Max: out = lax::scatter_max(xs, ix.gather_indices, y, dn, mode, sorted, unique); break;
  }
  if (!ix.scalar_bool_dims.empty()) out = lax::reshape(out, x.shape());
  return lax::convert_element_type(out, x.dtype(), x.weak_type());
}

}  // namespace numpy::detail

namespace nd = numpy::detail;

Array Array::index(const std::vector<IndexArg>& idx) const {
  return nd::rewriting_take(*this, idx, {});
}

AtRef::AtRef(const Array& base, std::vector<IndexArg> idx)
    : base_(std::make_unique<Array>(base)), idx_(std::move(idx)) {}
AtRef::~AtRef() = default;

Array AtRef::get(const AtOptions& o) const { return nd::rewriting_take(*base_, idx_, o); }
Array AtRef::set(const Array& v, const AtOptions& o) const {
  return nd::scatter_update(*base_, idx_, v, nd::ScatterKind::Set, o);
}
Array AtRef::add(const Array& v, const AtOptions& o) const {
  return nd::scatter_update(*base_, idx_, v, nd::ScatterKind::Add, o);
}
Array AtRef::subtract(const Array& v, const AtOptions& o) const {
  // jax uses scatter_sub; adding the negated values is the same in every dtype (wrapping
  // for unsigned ints).
  Array t = nd::promote({*base_, v})[1];
  Array zero = lax::reshape(numpy::scalar(0, t.dtype()), Shape(size_t(t.ndim()), 1));
  return nd::scatter_update(*base_, idx_, lax::sub(zero, t), nd::ScatterKind::Add, o);
}
Array AtRef::multiply(const Array& v, const AtOptions& o) const {
  return nd::scatter_update(*base_, idx_, v, nd::ScatterKind::Mul, o);
}
Array AtRef::divide(const Array& v, const AtOptions& o) const {
  // As jax: x / (ones at idx scaled by the values); the result is inexact.
  Array f = nd::scatter_update(numpy::ones_like(*base_), idx_, v, nd::ScatterKind::Mul, o);
  return numpy::true_divide(*base_, f);
}
Array AtRef::power(const Array& v, const AtOptions& o) const {
  Array f = nd::scatter_update(numpy::ones_like(*base_), idx_, v, nd::ScatterKind::Mul, o);
  return numpy::power(*base_, f);
}
Array AtRef::min(const Array& v, const AtOptions& o) const {
  return nd::scatter_update(*base_, idx_, v, nd::ScatterKind::Min, o);
}
Array AtRef::max(const Array& v, const AtOptions& o) const {
  return nd::scatter_update(*base_, idx_, v, nd::ScatterKind::Max, o);
}

}  // namespace jx
