// Family: indexing — slice, dynamic_slice, dynamic_update_slice, gather, scatter,
// scatter_add, scatter_mul, scatter_min, scatter_max. Shape rules follow XLA/JAX
// (jax/_src/lax/slicing.py); the index vector of gather/scatter is the last indices dim.
#include "ops/indexing.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <omp.h>

#include "backend/cpu/gather.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "ops/ad_rules.h"
#include "ops/common.h"
#include "support/dtype_switch.h"

namespace jx::ops {

// ---- params ----
namespace {
size_t hash_dims(size_t h, const std::vector<int64_t>& v) {
  for (auto x : v) h = h * 1000003u ^ std::hash<int64_t>()(x);
  return h * 31u + v.size();
}
std::string tuple_str(const std::vector<int64_t>& v) { return list_str(v); }
}  // namespace

std::string GatherDnumsParam::str() const {
  return jx::str("GatherDimensionNumbers(offset_dims=", tuple_str(d.offset_dims),
                 ", collapsed_slice_dims=", tuple_str(d.collapsed_slice_dims),
                 ", start_index_map=", tuple_str(d.start_index_map),
                 ", operand_batching_dims=", tuple_str(d.operand_batching_dims),
                 ", start_indices_batching_dims=", tuple_str(d.start_indices_batching_dims), ")");
}
bool GatherDnumsParam::equals(const ParamObject& other) const {
  auto* o = dynamic_cast<const GatherDnumsParam*>(&other);
  return o && o->d.offset_dims == d.offset_dims &&
         o->d.collapsed_slice_dims == d.collapsed_slice_dims &&
         o->d.start_index_map == d.start_index_map &&
         o->d.operand_batching_dims == d.operand_batching_dims &&
         o->d.start_indices_batching_dims == d.start_indices_batching_dims;
}
size_t GatherDnumsParam::hash() const {
  size_t h = 17;
  for (auto* v : {&d.offset_dims, &d.collapsed_slice_dims, &d.start_index_map,
                  &d.operand_batching_dims, &d.start_indices_batching_dims})
    h = hash_dims(h, *v);
  return h;
}

std::string ScatterDnumsParam::str() const {
  return jx::str("ScatterDimensionNumbers(update_window_dims=", tuple_str(d.update_window_dims),
                 ", inserted_window_dims=", tuple_str(d.inserted_window_dims),
                 ", scatter_dims_to_operand_dims=", tuple_str(d.scatter_dims_to_operand_dims),
                 ", operand_batching_dims=", tuple_str(d.operand_batching_dims),
                 ", scatter_indices_batching_dims=", tuple_str(d.scatter_indices_batching_dims),
                 ")");
}
bool ScatterDnumsParam::equals(const ParamObject& other) const {
  auto* o = dynamic_cast<const ScatterDnumsParam*>(&other);
  return o && o->d.update_window_dims == d.update_window_dims &&
         o->d.inserted_window_dims == d.inserted_window_dims &&
         o->d.scatter_dims_to_operand_dims == d.scatter_dims_to_operand_dims &&
         o->d.operand_batching_dims == d.operand_batching_dims &&
         o->d.scatter_indices_batching_dims == d.scatter_indices_batching_dims;
}
size_t ScatterDnumsParam::hash() const {
  size_t h = 19;
  for (auto* v : {&d.update_window_dims, &d.inserted_window_dims, &d.scatter_dims_to_operand_dims,
                  &d.operand_batching_dims, &d.scatter_indices_batching_dims})
    h = hash_dims(h, *v);
  return h;
}

std::string mode_param(lax::GatherScatterMode m) {
  switch (m) {
    case lax::GatherScatterMode::clip: return "GatherScatterMode.CLIP";
    case lax::GatherScatterMode::fill_or_drop: return "GatherScatterMode.FILL_OR_DROP";
    case lax::GatherScatterMode::promise_in_bounds: return "GatherScatterMode.PROMISE_IN_BOUNDS";
  }
  return "";
}
lax::GatherScatterMode mode_from_param(const std::string& s) {
  if (s == "GatherScatterMode.CLIP") return lax::GatherScatterMode::clip;
  if (s == "GatherScatterMode.FILL_OR_DROP") return lax::GatherScatterMode::fill_or_drop;
  JX_CHECK(s == "GatherScatterMode.PROMISE_IN_BOUNDS", "bad mode ", s);
  return lax::GatherScatterMode::promise_in_bounds;
}

namespace {
template <class T>
constexpr bool is_complex_v = false;
template <class R>
constexpr bool is_complex_v<std::complex<R>> = true;

template <class T>
void default_fill_typed(void* out) {
  T v;
  if constexpr (std::is_same_v<T, bool>) v = true;
  else if constexpr (is_complex_v<T>) v = T(std::numeric_limits<typename T::value_type>::quiet_NaN(), 0);
  else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bhalf>) v = T(NAN);
  else if constexpr (std::is_floating_point_v<T>) v = std::numeric_limits<T>::quiet_NaN();
  else if constexpr (std::is_signed_v<T>) v = std::numeric_limits<T>::min();
  else v = std::numeric_limits<T>::max();
  std::memcpy(out, &v, sizeof(T));
}

template <class T>
void fill_typed(double f, void* out) {
  T v;
  if constexpr (std::is_same_v<T, bool>) v = f != 0;
  else if constexpr (is_complex_v<T>) v = T(typename T::value_type(f), 0);
  else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bhalf>) v = T(float(f));
  else if constexpr (std::is_floating_point_v<T>) v = T(f);
  else {
    if (std::isnan(f)) v = 0;
    else if (f <= double(std::numeric_limits<T>::min())) v = std::numeric_limits<T>::min();
    else if (f >= double(std::numeric_limits<T>::max())) v = std::numeric_limits<T>::max();
    else v = T(f);
  }
  std::memcpy(out, &v, sizeof(T));
}
}  // namespace

void default_fill_bytes(DType t, void* out) { JX_DTYPE_SWITCH_C(t, T, default_fill_typed<T>(out)); }

namespace {

// A user-given fill value converted to the operand's dtype (ints saturate; NaN -> 0).
void fill_bytes(DType t, double f, void* out) { JX_DTYPE_SWITCH_C(t, T, fill_typed<T>(f, out)); }

std::vector<int64_t> to_int64(const Array& a) {
  const auto& im = detail::impl_of(a);
  std::vector<int64_t> v(static_cast<size_t>(im.shape.numel()));
  if (!v.empty()) cpu::convert(im.dtype, DType::Int64, im.buffer->data(), v.data(), int64_t(v.size()));
  return v;
}

// Copies the operand into the output with both cores for large arrays.
void copy_parallel(void* dst, const void* src, size_t bytes) {
  const int nt = cpu::num_threads_for(int64_t(bytes / 4));
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    const int t = omp_get_thread_num(), T = omp_get_num_threads();
    const size_t b = bytes * size_t(t) / size_t(T), e = bytes * size_t(t + 1) / size_t(T);
    if (e > b) std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b);
  }
}

cpu::Dims dims(const Shape& s) { return s.vec(); }

const ParamValue* raw_param(const Params& p, std::string_view key) {
  for (const auto& kv : p.items())
    if (kv.first == key) return &kv.second;
  return nullptr;
}

bool sorted_unique(const std::vector<int64_t>& v) {
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i] <= v[i - 1]) return false;
  return true;
}
bool contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// ---- slice ----
std::vector<int64_t> slice_strides(const Params& p, size_t rank) {
  if (const ParamValue* pv = raw_param(p, "strides"))
    if (auto* v = std::get_if<std::vector<int64_t>>(pv)) return *v;
  return std::vector<int64_t>(rank, 1);
}

Avals slice_abstract_eval(std::span<const Aval> in, const Params& p) {
  const Aval& x = in[0];
  const auto& start = p.ints("start_indices");
  const auto& limit = p.ints("limit_indices");
  const auto strides = slice_strides(p, x.shape.size());
  const size_t r = x.shape.size();
  if (start.size() != r || limit.size() != r || strides.size() != r)
    throw IndexError(str("[slice] start_indices ", list_str(start), ", limit_indices ",
                         list_str(limit), " and strides ", list_str(strides),
                         " must each have one entry per dimension of ", aval_str(x)));
  Shape out;
  for (size_t d = 0; d < r; ++d) {
    if (start[d] < 0 || limit[d] > x.shape[d] || start[d] > limit[d])
      throw IndexError(str("[slice] slice [", start[d], ":", limit[d], "] of dimension ", d,
                           " is out of bounds for ", aval_str(x),
                           "; need 0 <= start <= limit <= ", x.shape[d]));
    if (strides[d] <= 0)
      throw ValueError(str("[slice] strides must be positive, got ", list_str(strides),
                           "; reverse with lax::rev for negative steps"));
    out.push_back(limit[d] == start[d] ? 0 : (limit[d] - start[d] + strides[d] - 1) / strides[d]);
  }
  return {Aval{out, x.dtype, x.weak}};
}

void slice_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& x = detail::impl_of(in[0]);
  const Shape& os = out[0].shape();
  if (os == x.shape) {  // the whole operand: share its buffer
    out[0] = detail::alias_array(in[0], os, x.weak);
    return;
  }
  cpu::slice(itemsize(x.dtype), x.buffer->data(), dims(x.shape), p.ints("start_indices"),
             slice_strides(p, x.shape.size()), detail::raw_data(out[0]), dims(os));
}

// ---- dynamic_slice / dynamic_update_slice ----
void check_start_indices(const char* op, std::span<const Aval> in, size_t first, size_t rank) {
  if (in.size() - first != rank)
    throw IndexError(str("[", op, "] needs one start index per dimension of ", aval_str(in[0]),
                         ", got ", in.size() - first));
  for (size_t i = first; i < in.size(); ++i) {
    if (!in[i].shape.empty() || !is_integer(in[i].dtype))
      throw DTypeError(str("[", op, "] start indices must be integer scalars, got ",
                           aval_str(in[i]), " at position ", i - first));
    if (in[i].dtype != in[first].dtype)
      throw DTypeError(str("[", op, "] start indices must all have the same dtype, got ",
                           avals_str(in.subspan(first)), "; convert them with astype"));
  }
}

// Start indices clamped so that a box of `size` fits, as XLA does.
std::vector<int64_t> clamped_starts(std::span<const Array> in, size_t first, const Shape& shape,
                                    const Shape& size) {
  std::vector<int64_t> s(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t v = to_int64(in[first + d])[0];
    s[d] = std::clamp<int64_t>(v, 0, shape[d] - size[d]);
  }
  return s;
}

Avals dynamic_slice_abstract_eval(std::span<const Aval> in, const Params& p) {
  const Aval& x = in[0];
  check_start_indices("dynamic_slice", in, 1, x.shape.size());
  const auto& sizes = p.ints("slice_sizes");
  if (sizes.size() != x.shape.size())
    throw IndexError(str("[dynamic_slice] slice_sizes ", list_str(sizes),
                         " must have one entry per dimension of ", aval_str(x)));
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] < 0 || sizes[d] > x.shape[d])
      throw IndexError(str("[dynamic_slice] slice_sizes ", list_str(sizes), " do not fit in ",
                           aval_str(x), ": need 0 <= size <= dim in every dimension"));
  return {Aval{Shape(sizes), x.dtype, x.weak}};
}

void dynamic_slice_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& x = detail::impl_of(in[0]);
  const Shape& os = out[0].shape();
  if (os.numel() == 0) return;
  auto start = clamped_starts(in, 1, x.shape, os);
  cpu::slice(itemsize(x.dtype), x.buffer->data(), dims(x.shape), start,
             std::vector<int64_t>(os.size(), 1), detail::raw_data(out[0]), dims(os));
}

Avals dynamic_update_slice_abstract_eval(std::span<const Aval> in, const Params&) {
  const Aval& x = in[0];
  const Aval& u = in[1];
  if (u.dtype != x.dtype)
    throw DTypeError(str("[dynamic_update_slice] update ", aval_str(u), " must have the dtype of ",
                         "the operand ", aval_str(x), "; convert it with astype"));
  if (u.shape.size() != x.shape.size())
    throw ShapeError(str("[dynamic_update_slice] update ", aval_str(u),
                         " must have the rank of the operand ", aval_str(x)));
  for (size_t d = 0; d < x.shape.size(); ++d)
    if (u.shape[d] > x.shape[d])
      throw ShapeError(str("[dynamic_update_slice] update ", aval_str(u),
                           " is larger than the operand ", aval_str(x), " in dimension ", d));
  check_start_indices("dynamic_update_slice", in, 2, x.shape.size());
  return {Aval{x.shape, x.dtype, x.weak && u.weak}};
}

void dynamic_update_slice_impl(std::span<const Array> in, std::span<Array> out, const Params&) {
  const auto& x = detail::impl_of(in[0]);
  const auto& u = detail::impl_of(in[1]);
  void* o = detail::raw_data(out[0]);
  copy_parallel(o, x.buffer->data(), size_t(x.shape.numel()) * itemsize(x.dtype));
  if (u.shape.numel() == 0) return;
  auto start = clamped_starts(in, 2, x.shape, u.shape);
  cpu::update_slice(itemsize(x.dtype), o, dims(x.shape), start, u.buffer->data(), dims(u.shape));
}

// ---- gather ----
void check_dims(const char* op, const char* what, const std::vector<int64_t>& v, int64_t bound,
                const std::string& ctx) {
  if (!sorted_unique(v))
    throw ValueError(str("[", op, "] ", what, " ", list_str(v),
                         " must be sorted and without repeats (", ctx, ")"));
  for (auto d : v)
    if (d < 0 || d >= bound)
      throw ValueError(str("[", op, "] ", what, " ", list_str(v), " must be in [0, ", bound,
                           ") (", ctx, ")"));
}

void check_batching(const char* op, const Aval& operand, const Aval& indices,
                    const std::vector<int64_t>& obd, const std::vector<int64_t>& ibd,
                    const std::string& ctx) {
  check_dims(op, "operand_batching_dims", obd, int64_t(operand.shape.size()), ctx);
  if (obd.size() != ibd.size())
    throw ValueError(str("[", op, "] operand_batching_dims ", list_str(obd), " and the indices' "
                         "batching dims ", list_str(ibd), " must have the same length (", ctx, ")"));
  const int64_t ib = int64_t(indices.shape.size()) - 1;
  for (size_t i = 0; i < ibd.size(); ++i) {
    if (ibd[i] < 0 || ibd[i] >= ib || std::count(ibd.begin(), ibd.end(), ibd[i]) > 1)
      throw ValueError(str("[", op, "] indices batching dims ", list_str(ibd),
                           " must be distinct dims of the indices other than the last (", ctx, ")"));
    if (operand.shape[size_t(obd[i])] != indices.shape[size_t(ibd[i])])
      throw ShapeError(str("[", op, "] operand batching dim ", obd[i], " and indices batching dim ",
                           ibd[i], " must have equal sizes (", ctx, ")"));
  }
}

void check_index_map(const char* op, const char* what, const std::vector<int64_t>& m,
                     const Aval& operand, const Aval& indices, const std::vector<int64_t>& obd,
                     const std::string& ctx) {
  if (int64_t(m.size()) != indices.shape.back())
    throw ShapeError(str("[", op, "] ", what, " ", list_str(m), " needs one entry per element "
                         "of the index vector (the last dim of the indices, ",
                         indices.shape.back(), ") (", ctx, ")"));
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] < 0 || m[i] >= int64_t(operand.shape.size()) ||
        std::count(m.begin(), m.end(), m[i]) > 1 || contains(obd, m[i]))
      throw ValueError(str("[", op, "] ", what, " ", list_str(m), " must be distinct operand "
                           "dims that are not batching dims (", ctx, ")"));
  }
}

void check_indices(const char* op, const Aval& indices, const std::string& ctx) {
  if (!is_integer(indices.dtype))
    throw DTypeError(str("[", op, "] indices must have an integer dtype, got ", aval_str(indices),
                         "; convert them with astype(jx::int32)"));
  if (indices.shape.empty())
    throw ShapeError(str("[", op, "] indices must have rank >= 1: the last dim is the index "
                         "vector; add a trailing dim of size 1 (", ctx, ")"));
}

Avals gather_abstract_eval(std::span<const Aval> in, const Params& p) {
  const char* op = "gather";
  const Aval& x = in[0];
  const Aval& idx = in[1];
  const auto& dn = p.obj<GatherDnumsParam>("dimension_numbers").d;
  const auto& ss = p.ints("slice_sizes");
  const std::string ctx = str("operand ", aval_str(x), ", indices ", aval_str(idx));
  check_indices(op, idx, ctx);
  const int64_t R = int64_t(x.shape.size());
  const size_t nbatch = idx.shape.size() - 1;
  const int64_t out_rank = int64_t(dn.offset_dims.size() + nbatch);
  check_dims(op, "offset_dims", dn.offset_dims, out_rank, ctx);
  check_dims(op, "collapsed_slice_dims", dn.collapsed_slice_dims, R, ctx);
  check_batching(op, x, idx, dn.operand_batching_dims, dn.start_indices_batching_dims, ctx);
  check_index_map(op, "start_index_map", dn.start_index_map, x, idx, dn.operand_batching_dims, ctx);
  if (int64_t(ss.size()) != R)
    throw ShapeError(str("[gather] slice_sizes ", list_str(ss), " must have one entry per "
                         "operand dim (", ctx, ")"));
  for (int64_t d = 0; d < R; ++d)
    if (ss[size_t(d)] < 0 || ss[size_t(d)] > x.shape[size_t(d)])
      throw ShapeError(str("[gather] slice_sizes ", list_str(ss), " must satisfy 0 <= size <= "
                           "operand dim in every dim (", ctx, ")"));
  for (auto* v : {&dn.collapsed_slice_dims, &dn.operand_batching_dims})
    for (auto d : *v)
      if (ss[size_t(d)] > 1)
        throw ShapeError(str("[gather] collapsed and batching dims must have slice size 0 or 1, "
                             "but slice_sizes[", d, "] = ", ss[size_t(d)], " (", ctx, ")"));
  for (auto d : dn.collapsed_slice_dims)
    if (contains(dn.operand_batching_dims, d))
      throw ValueError(str("[gather] dim ", d, " is both collapsed and a batching dim (", ctx, ")"));
  if (int64_t(dn.offset_dims.size() + dn.collapsed_slice_dims.size() +
              dn.operand_batching_dims.size()) != R)
    throw ShapeError(str("[gather] offset_dims ", list_str(dn.offset_dims),
                         ", collapsed_slice_dims ", list_str(dn.collapsed_slice_dims),
                         " and operand_batching_dims ", list_str(dn.operand_batching_dims),
                         " must together account for every operand dim (", ctx, ")"));
  Shape out(size_t(out_rank), 0);
  std::vector<int64_t> window;
  for (int64_t d = 0; d < R; ++d)
    if (!contains(dn.collapsed_slice_dims, d) && !contains(dn.operand_batching_dims, d))
      window.push_back(ss[size_t(d)]);
  size_t k = 0, b = 0;
  for (int64_t j = 0; j < out_rank; ++j)
    out[size_t(j)] = contains(dn.offset_dims, j) ? window[k++] : idx.shape[b++];
  return {Aval{out, x.dtype, x.weak}};
}

void gather_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& x = detail::impl_of(in[0]);
  const auto& idx = detail::impl_of(in[1]);
  const Shape& os = out[0].shape();
  if (os.numel() == 0) return;
  const auto& dn = p.obj<GatherDnumsParam>("dimension_numbers").d;
  const bool fill = mode_from_param(p.s("mode")) == lax::GatherScatterMode::fill_or_drop;
  alignas(16) unsigned char fv[16] = {};  // one element of any dtype, complex128 included
  if (fill) {
    const ParamValue* pv = raw_param(p, "fill_value");
    if (auto* f = pv ? std::get_if<double>(pv) : nullptr) fill_bytes(x.dtype, *f, fv);
    else default_fill_bytes(x.dtype, fv);
  }
  auto ind = to_int64(in[1]);
  cpu::GatherDims g{dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map,
                    dn.operand_batching_dims, dn.start_indices_batching_dims};
  cpu::gather(itemsize(x.dtype), x.buffer->data(), dims(x.shape), ind.data(), dims(idx.shape), g,
              p.ints("slice_sizes"), fill, fv, detail::raw_data(out[0]), dims(os));
}

// ---- scatter family ----
template <Prim P>
Avals scatter_abstract_eval(std::span<const Aval> in, const Params& p) {
  const char* op = name(P);
  const Aval& x = in[0];
  const Aval& idx = in[1];
  const Aval& u = in[2];
  const auto& dn = p.obj<ScatterDnumsParam>("dimension_numbers").d;
  const std::string ctx =
      str("operand ", aval_str(x), ", indices ", aval_str(idx), ", updates ", aval_str(u));
  check_indices(op, idx, ctx);
  if (u.dtype != x.dtype)
    throw DTypeError(str("[", op, "] updates must have the operand's dtype (", ctx,
                         "); convert them with astype"));
  const int64_t R = int64_t(x.shape.size());
  const size_t nbatch = idx.shape.size() - 1;
  check_dims(op, "update_window_dims", dn.update_window_dims, int64_t(u.shape.size()), ctx);
  check_dims(op, "inserted_window_dims", dn.inserted_window_dims, R, ctx);
  check_batching(op, x, idx, dn.operand_batching_dims, dn.scatter_indices_batching_dims, ctx);
  check_index_map(op, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims, x, idx,
                  dn.operand_batching_dims, ctx);
  if (int64_t(dn.update_window_dims.size() + dn.inserted_window_dims.size() +
              dn.operand_batching_dims.size()) != R)
    throw ShapeError(str("[", op, "] update_window_dims ", list_str(dn.update_window_dims),
                         ", inserted_window_dims ", list_str(dn.inserted_window_dims),
                         " and operand_batching_dims ", list_str(dn.operand_batching_dims),
                         " must together account for every operand dim (", ctx, ")"));
  if (u.shape.size() != dn.update_window_dims.size() + nbatch)
    throw ShapeError(str("[", op, "] updates must have rank len(update_window_dims) + "
                         "indices rank - 1 = ", dn.update_window_dims.size() + nbatch, " (", ctx, ")"));
  size_t b = 0, k = 0;
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < R; ++d)
    if (!contains(dn.inserted_window_dims, d) && !contains(dn.operand_batching_dims, d))
      window_operand_dims.push_back(d);
  for (size_t j = 0; j < u.shape.size(); ++j) {
    if (contains(dn.update_window_dims, int64_t(j))) {
      int64_t od = window_operand_dims[k++];
      if (u.shape[j] > x.shape[size_t(od)])
        throw ShapeError(str("[", op, "] update window dim ", j, " (", u.shape[j],
                             ") is larger than operand dim ", od, " (", ctx, ")"));
    } else if (u.shape[j] != idx.shape[b++]) {
      throw ShapeError(str("[", op, "] update scatter dim ", j, " (", u.shape[j], ") must equal "
                           "the matching indices dim ", b - 1, " (", idx.shape[b - 1], ") (", ctx, ")"));
    }
  }
  return {Aval{x.shape, x.dtype, x.weak}};
}

template <Prim P, cpu::ScatterOp Op>
void scatter_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& x = detail::impl_of(in[0]);
  const auto& idx = detail::impl_of(in[1]);
  const auto& u = detail::impl_of(in[2]);
  void* o = detail::raw_data(out[0]);
  copy_parallel(o, x.buffer->data(), size_t(x.shape.numel()) * itemsize(x.dtype));
  if (u.shape.numel() == 0 || x.shape.numel() == 0) return;
  const auto& dn = p.obj<ScatterDnumsParam>("dimension_numbers").d;
  const bool clip = mode_from_param(p.s("mode")) == lax::GatherScatterMode::clip;
  auto ind = to_int64(in[1]);
  cpu::ScatterDims s{dn.update_window_dims, dn.inserted_window_dims,
                     dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
                     dn.scatter_indices_batching_dims};
  cpu::scatter(Op, x.dtype, o, dims(x.shape), ind.data(), dims(idx.shape), u.buffer->data(),
               dims(u.shape), s, clip);
}


// ---- autodiff (jax/_src/lax/slicing.py). Index operands are never differentiated. ----
using ad_rules::instantiate;
using ad_rules::is_zero;

Array scalar_zero(DType t) { return lax::convert_element_type(Array(0), t); }

std::vector<int64_t> param_strides(const Params& p) {
  const ParamValue* pv = raw_param(p, "strides");
  if (auto* v = pv ? std::get_if<std::vector<int64_t>>(pv) : nullptr) return *v;
  return {};
}

Arrays slice_jvp(std::span<const Array>, std::span<const Array>, std::span<const Array> t,
                 const Params& p) {
  if (is_zero(t[0])) return {Array()};
  return {lax::slice(t[0], p.ints("start_indices"), p.ints("limit_indices"), param_strides(p))};
}
// Pads the cotangent back to the operand's shape with zeros; strides become interior padding.
Arrays slice_transpose(std::span<const Array> ct, std::span<const Array>,
                       std::span<const Aval> in, std::span<const bool>, const Params& p) {
  if (is_zero(ct[0])) return {Array()};
  const Shape& xs = in[0].shape;
  const Shape& ts = ct[0].shape();
  const auto& start = p.ints("start_indices");
  const auto strides = slice_strides(p, xs.size());
  std::vector<lax::PadConfig> cfg;
  for (size_t d = 0; d < xs.size(); ++d) {
    const int64_t real_limit = start[d] + (ts[d] == 0 ? 0 : 1 + (ts[d] - 1) * strides[d]);
    cfg.push_back({start[d], xs[d] - real_limit, strides[d] - 1});
  }
  return {lax::pad(ct[0], scalar_zero(ct[0].dtype()), cfg)};
}

std::vector<Array> tail(std::span<const Array> a, size_t first) {
  return std::vector<Array>(a.begin() + std::ptrdiff_t(first), a.end());
}

Arrays dynamic_slice_jvp(std::span<const Array> primals, std::span<const Array>,
                         std::span<const Array> t, const Params& p) {
  if (is_zero(t[0])) return {Array()};
  return {lax::dynamic_slice(t[0], tail(primals, 1), p.ints("slice_sizes"), false)};
}
Arrays dynamic_slice_transpose(std::span<const Array> ct, std::span<const Array> inputs,
                               std::span<const Aval> in, std::span<const bool>, const Params&) {
  Arrays out(inputs.size());
  if (is_zero(ct[0])) return out;
  out[0] = lax::dynamic_update_slice(ad_rules::zeros(in[0]), ct[0], tail(inputs, 1), false);
  return out;
}

Arrays dynamic_update_slice_jvp(std::span<const Array> primals, std::span<const Array>,
                                std::span<const Array> t, const Params&) {
  if (is_zero(t[0]) && is_zero(t[1])) return {Array()};
  return {lax::dynamic_update_slice(instantiate(t[0], aval_of(primals[0])),
                                    instantiate(t[1], aval_of(primals[1])), tail(primals, 2),
                                    false)};
}
Arrays dynamic_update_slice_transpose(std::span<const Array> ct, std::span<const Array> inputs,
                                      std::span<const Aval> in, std::span<const bool> linear,
                                      const Params&) {
  Arrays out(inputs.size());
  if (is_zero(ct[0])) return out;
  auto starts = tail(inputs, 2);
  if (linear[0])
    out[0] = lax::dynamic_update_slice(ct[0], ad_rules::zeros(Aval{in[1].shape, ct[0].dtype(), false}),
                                       starts, false);
  if (linear[1]) out[1] = lax::dynamic_slice(ct[0], starts, in[1].shape.vec(), false);
  return out;
}

lax::GatherScatterMode mode_of(const Params& p) { return mode_from_param(p.s("mode")); }

lax::ScatterDimensionNumbers scatter_dnums_for(const lax::GatherDimensionNumbers& g) {
  return {g.offset_dims, g.collapsed_slice_dims, g.start_index_map, g.operand_batching_dims,
          g.start_indices_batching_dims};
}
lax::GatherDimensionNumbers gather_dnums_for(const lax::ScatterDimensionNumbers& s) {
  return {s.update_window_dims, s.inserted_window_dims, s.scatter_dims_to_operand_dims,
          s.operand_batching_dims, s.scatter_indices_batching_dims};
}
// The slice sizes of the gather that reads back what a scatter wrote (X.at[I].get()).
std::vector<int64_t> inverse_slice_sizes(const lax::ScatterDimensionNumbers& dn,
                                         size_t operand_rank, const Shape& updates_shape) {
  std::vector<int64_t> ss;
  size_t pos = 0;
  for (size_t i = 0; i < operand_rank; ++i) {
    if (contains(dn.inserted_window_dims, int64_t(i)) || contains(dn.operand_batching_dims, int64_t(i)))
      ss.push_back(1);
    else
      ss.push_back(updates_shape[size_t(dn.update_window_dims[pos++])]);
  }
  return ss;
}

Arrays gather_jvp(std::span<const Array> primals, std::span<const Array>,
                  std::span<const Array> t, const Params& p) {
  if (is_zero(t[0])) return {Array()};
  return {lax::gather(t[0], primals[1], p.obj<GatherDnumsParam>("dimension_numbers").d,
                      p.ints("slice_sizes"), mode_of(p), 0.0, p.b("indices_are_sorted"),
                      p.b("unique_indices"))};
}
Arrays gather_transpose(std::span<const Array> ct, std::span<const Array> inputs,
                        std::span<const Aval> in, std::span<const bool>, const Params& p) {
  if (is_zero(ct[0])) return {Array(), Array()};
  const auto& dn = p.obj<GatherDnumsParam>("dimension_numbers").d;
  Array zeros = ad_rules::zeros(Aval{in[0].shape, ct[0].dtype(), false});
  return {lax::scatter_add(zeros, inputs[1], ct[0], scatter_dnums_for(dn), mode_of(p),
                           p.b("indices_are_sorted"), p.b("unique_indices")),
          Array()};
}

const lax::ScatterDimensionNumbers& sdnums(const Params& p) {
  return p.obj<ScatterDnumsParam>("dimension_numbers").d;
}

// The updates' cotangent of a scatter: gather the output cotangent back (0 where dropped).
Array gather_back(const Array& ct, const Array& indices, const Shape& updates_shape,
                  const Params& p) {
  const auto& dn = sdnums(p);
  return lax::gather(ct, indices, gather_dnums_for(dn),
                     inverse_slice_sizes(dn, size_t(ct.ndim()), updates_shape), mode_of(p), 0.0,
                     p.b("indices_are_sorted"), p.b("unique_indices"));
}

Arrays scatter_add_jvp(std::span<const Array> primals, std::span<const Array>,
                       std::span<const Array> t, const Params& p) {
  if (is_zero(t[0]) && is_zero(t[2])) return {Array()};
  return {lax::scatter_add(instantiate(t[0], aval_of(primals[0])), primals[1],
                           instantiate(t[2], aval_of(primals[2])), sdnums(p), mode_of(p),
                           p.b("indices_are_sorted"), p.b("unique_indices"))};
}
Arrays scatter_add_transpose(std::span<const Array> ct, std::span<const Array> inputs,
                             std::span<const Aval> in, std::span<const bool> linear,
                             const Params& p) {
  Arrays out(3);
  if (is_zero(ct[0])) return out;
  if (linear[0]) out[0] = ct[0];
  if (linear[2]) out[2] = gather_back(ct[0], inputs[1], in[2].shape, p);
  return out;
}

// jax's _scatter_jvp. With overlapping indices it is unspecified which update wins, so
// each update gets an id, the ids are scattered, read back, and only the tangents whose id
// survived (and the operand tangents nothing overwrote) are scatter-added.
Arrays scatter_jvp(std::span<const Array> primals, std::span<const Array>,
                   std::span<const Array> t, const Params& p) {
  if (is_zero(t[0]) && is_zero(t[2])) return {Array()};
  const Array& operand = primals[0];
  const Array& indices = primals[1];
  const Array& updates = primals[2];
  const auto& dn = sdnums(p);
  const auto mode = mode_of(p);
  const bool sorted = p.b("indices_are_sorted"), unique = p.b("unique_indices");
  Array g_operand = instantiate(t[0], aval_of(operand));
  Array g_updates = instantiate(t[2], aval_of(updates));
  if (unique)
    return {lax::scatter(g_operand, indices, g_updates, dn, mode, sorted, true)};
  Shape ids_shape = updates.shape();
  for (int64_t d : dn.update_window_dims) ids_shape[size_t(d)] = 1;
  const int64_t num_ids = ids_shape.numel();
  const DType id_dtype = num_ids < (int64_t(1) << 32) ? DType::UInt32 : DType::UInt64;
  Array ones = ad_rules::zeros(Aval{updates.shape(), id_dtype, false});
  ones = lax::add(ones, lax::reshape(lax::convert_element_type(Array(1), id_dtype),
                                     Shape(size_t(updates.ndim()), 1)));
  Array update_ids = lax::add(lax::reshape(lax::iota(id_dtype, num_ids), ids_shape), ones);
  Array id_zeros = ad_rules::zeros(Aval{operand.shape(), id_dtype, false});
  Array scattered_ids = lax::scatter(id_zeros, indices, update_ids, dn, mode, sorted, unique);
  Array gathered_ids = lax::gather(scattered_ids, indices, gather_dnums_for(dn),
                                   inverse_slice_sizes(dn, size_t(operand.ndim()), updates.shape()));
  Array masked_g_operand = lax::select(lax::eq(scattered_ids, id_zeros), g_operand,
                                       ad_rules::zeros_like(g_operand));
  Array masked_g_updates = lax::select(lax::eq(update_ids, gathered_ids), g_updates,
                                       ad_rules::zeros_like(g_updates));
  return {lax::scatter_add(masked_g_operand, indices, masked_g_updates, dn, mode, sorted, unique)};
}
// Linear only with unique indices (as jax): the operand keeps what no update overwrote.
Arrays scatter_transpose(std::span<const Array> ct, std::span<const Array> inputs,
                         std::span<const Aval> in, std::span<const bool> linear,
                         const Params& p) {
  if (!p.b("unique_indices"))
    throw ValueError("[scatter] transpose is only implemented where unique_indices=true; "
                     "differentiate a scatter with possibly repeated indices in forward mode "
                     "or promise unique indices");
  Arrays out(3);
  if (is_zero(ct[0])) return out;
  if (linear[0])
    out[0] = lax::scatter(ct[0], inputs[1], ad_rules::zeros(Aval{in[2].shape, ct[0].dtype(), false}),
                          sdnums(p), mode_of(p), p.b("indices_are_sorted"), true);
  if (linear[2]) out[2] = gather_back(ct[0], inputs[1], in[2].shape, p);
  return out;
}

// jax: d/doperand is scatter_mul(g, i, y); d/dupdates is x * scatter_add(0, i, g), only
// with unique indices.
Arrays scatter_mul_jvp(std::span<const Array> primals, std::span<const Array>,
                       std::span<const Array> t, const Params& p) {
  const auto& dn = sdnums(p);
  const auto mode = mode_of(p);
  const bool sorted = p.b("indices_are_sorted"), unique = p.b("unique_indices");
  Array out;
  if (!is_zero(t[0]))
    out = lax::scatter_mul(t[0], primals[1], primals[2], dn, mode, sorted, unique);
  if (!is_zero(t[2])) {
    if (!unique)
      throw ValueError("[scatter_mul] gradients with respect to the updates are only "
                       "implemented with unique_indices=true");
    Array s = lax::scatter_add(ad_rules::zeros_like(primals[0]), primals[1], t[2], dn, mode,
                               sorted, unique);
    out = ad_rules::add_tangents(out, lax::mul(primals[0], s));
  }
  return {out};
}
// Linear in the operand only (the updates are constants here): a diagonal scaling.
Arrays scatter_mul_transpose(std::span<const Array> ct, std::span<const Array> inputs,
                             std::span<const Aval>, std::span<const bool> linear,
                             const Params& p) {
  Arrays out(3);
  if (linear[2])
    throw ValueError("[scatter_mul] is not linear in its updates; it cannot be transposed "
                     "with respect to them");
  if (is_zero(ct[0])) return out;
  if (linear[0])
    out[0] = lax::scatter_mul(ct[0], inputs[1], inputs[2], sdnums(p), mode_of(p),
                              p.b("indices_are_sorted"), p.b("unique_indices"));
  return out;
}

Array full_like(const Array& x, double v) {
  return lax::broadcast_in_dim(lax::convert_element_type(Array(v), x.dtype()), x.shape(), {});
}

// jax's _scatter_extremal_jvp: where several updates tie for the winning value (or tie
// with the retained operand value), the tangent is the average of the tied tangents.
Arrays scatter_extremal_jvp(std::span<const Array> primals, std::span<const Array> primal_outs,
                            std::span<const Array> t, const Params& p) {
  if (is_zero(t[0]) && is_zero(t[2])) return {Array()};
  const Array& operand = primals[0];
  const Array& indices = primals[1];
  const Array& updates = primals[2];
  const Array& val_out = primal_outs[0];
  const auto& dn = sdnums(p);
  Array g_operand = instantiate(t[0], aval_of(operand));
  Array g_updates = instantiate(t[2], aval_of(updates));
  const auto gdn = gather_dnums_for(dn);
  const auto ss = inverse_slice_sizes(dn, size_t(operand.ndim()), updates.shape());
  Array initial_vals = lax::gather(operand, indices, gdn, ss);
  Array target_vals = lax::gather(val_out, indices, gdn, ss);
  Array successful = lax::eq(updates, target_vals);
  Array retained = lax::eq(initial_vals, target_vals);
  Array zeros_u = full_like(updates, 0), ones_u = full_like(updates, 1);
  Array zeros_x = full_like(operand, 0);
  Array num_updates = lax::gather(
      lax::scatter_add(zeros_x, indices, lax::select(successful, ones_u, zeros_u), dn), indices,
      gdn, ss);
  Array num_refs = lax::gather(lax::scatter_add(zeros_x, indices, ones_u, dn), indices, gdn, ss);
  Array one = ad_rules::constant(1.0, num_updates);
  Array inv_plus = lax::div(one, lax::add(num_updates, one));
  Array updates_normalizer = lax::select(retained, inv_plus, lax::div(one, num_updates));
  Array updates_coef = lax::select(successful, updates_normalizer, zeros_u);
  Array operand_normalizer = lax::select(retained, inv_plus, full_like(num_updates, 0));
  Array operand_coef = lax::div(lax::add(ad_rules::constant(-1.0, num_updates), operand_normalizer),
                                num_refs);
  Array target_tangents = lax::gather(g_operand, indices, gdn, ss);
  Array tangent_updates =
      lax::add(lax::mul(target_tangents, operand_coef), lax::mul(g_updates, updates_coef));
  return {lax::scatter_add(g_operand, indices, tangent_updates, dn, mode_of(p),
                           p.b("indices_are_sorted"), p.b("unique_indices"))};
}

template <Prim P, cpu::ScatterOp Op>
void reg_scatter() {
  auto& s = mutable_info(P);
  s.abstract_eval = scatter_abstract_eval<P>;
  s.impl = scatter_impl<P, Op>;
}

}  // namespace

void register_indexing() {
  auto& sl = mutable_info(Prim::Slice);
  sl.abstract_eval = slice_abstract_eval;
  sl.impl = slice_impl;
  sl.jvp = slice_jvp;
  sl.transpose = slice_transpose;
  auto& ds = mutable_info(Prim::DynamicSlice);
  ds.abstract_eval = dynamic_slice_abstract_eval;
  ds.impl = dynamic_slice_impl;
  ds.jvp = dynamic_slice_jvp;
  ds.transpose = dynamic_slice_transpose;
  auto& dus = mutable_info(Prim::DynamicUpdateSlice);
  dus.abstract_eval = dynamic_update_slice_abstract_eval;
  dus.impl = dynamic_update_slice_impl;
  dus.jvp = dynamic_update_slice_jvp;
  dus.transpose = dynamic_update_slice_transpose;
  auto& g = mutable_info(Prim::Gather);
  g.abstract_eval = gather_abstract_eval;
  g.impl = gather_impl;
  g.jvp = gather_jvp;
  g.transpose = gather_transpose;
  reg_scatter<Prim::Scatter, cpu::ScatterOp::Set>();
  reg_scatter<Prim::ScatterAdd, cpu::ScatterOp::Add>();
  reg_scatter<Prim::ScatterMul, cpu::ScatterOp::Mul>();
  reg_scatter<Prim::ScatterMin, cpu::ScatterOp::Min>();
  reg_scatter<Prim::ScatterMax, cpu::ScatterOp::Max>();
  auto& sc = mutable_info(Prim::Scatter);
  sc.jvp = scatter_jvp;
  sc.transpose = scatter_transpose;
  auto& sa = mutable_info(Prim::ScatterAdd);
  sa.jvp = scatter_add_jvp;
  sa.transpose = scatter_add_transpose;
  auto& sm = mutable_info(Prim::ScatterMul);
  sm.jvp = scatter_mul_jvp;
  sm.transpose = scatter_mul_transpose;
  for (Prim m : {Prim::ScatterMin, Prim::ScatterMax}) {
    mutable_info(m).jvp = scatter_extremal_jvp;
    mutable_info(m).not_linear = true;
  }
  register_indexing_batching();
}

}  // namespace jx::ops
