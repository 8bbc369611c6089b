// jnp creation from ranges and masks: arange, linspace, logspace, geomspace, eye, identity,
// tri, tril, triu, diag, diagonal, meshgrid, copy. Built from lax primitives as
// jax/_src/numpy/lax_numpy.py builds them, so they trace like any other jnp function.
#include <algorithm>
#include <cmath>

#include "jx/lax.h"
#include "jx/numpy.h"
#include "numpy/manipulation_detail.h"
#include "numpy/promote.h"
#include "ops/common.h"
#include "support/str.h"

namespace jx::numpy {

namespace {

std::string type_of(const Array& a) { return type_str(a.dtype(), a.shape()); }

// dtypes.to_inexact_dtype: floats stay, everything else becomes the default float.
DType to_inexact(DType t) { return is_inexact(t) ? t : DType::Float32; }

Array constant(double v, DType t) { return scalar(v, t); }

void check_dim(const char* op, const char* what, int64_t n) {
  if (n < 0)
    throw ValueError(str("[", op, "] negative dimensions are not allowed, got ", what, "=", n));
}

// 1 where row + k >= col, as lax._tri (bool).
Array tri_mask(int64_t n, int64_t m, int64_t k) {
  Shape s{n, m};
  Array rows = lax::broadcasted_iota(DType::Int32, s, 0);
  Array cols = lax::broadcasted_iota(DType::Int32, s, 1);
  Array kk = lax::broadcast_in_dim(constant(double(k), DType::Int32), s, {});
  return lax::ge(lax::add(rows, kk), cols);
}

}  // namespace

// ---- ranges ----

Array arange(Number stop_n, std::optional<DType> dtype) {
  const double stop = stop_n.value;
  const DType t = dtype.value_or(stop_n.is_int ? DType::Int32 : DType::Float32);
  if (std::isnan(stop)) throw ValueError("[arange] stop must not be NaN");
  const int64_t size = std::max<int64_t>(0, int64_t(std::ceil(stop)));
  return lax::iota(t, size);
}

Array arange(Number start_n, Number stop_n, Number step_n, std::optional<DType> dtype) {
  const double start = start_n.value, stop = stop_n.value, step = step_n.value;
  if (step == 0) throw ValueError("[arange] step must not be zero");
  if (std::isnan(start) || std::isnan(stop) || std::isnan(step))
    throw ValueError("[arange] start, stop and step must not be NaN");
  const DType t = dtype.value_or(start_n.is_int && stop_n.is_int && step_n.is_int
                                     ? DType::Int32
                                     : DType::Float32);
  if (step == 1) {  // arange(N, M): no multiply, as jnp
    const int64_t size = std::max<int64_t>(0, int64_t(std::ceil(stop - start)));
    if (start == 0) return lax::iota(t, size);
    return lax::add(lax::broadcast_in_dim(constant(start, t), Shape{size}, {}), lax::iota(t, size));
  }
  const int64_t size = std::max<int64_t>(0, int64_t(std::ceil((stop - start) / step)));
  // Half-precision floats accumulate in float32, as jnp.
  const DType work = (t == DType::Float16 || t == DType::BFloat16) ? DType::Float32 : t;
  Shape s{size};
  Array r = lax::add(lax::broadcast_in_dim(constant(start, work), s, {}),
                     lax::mul(lax::broadcast_in_dim(constant(step, work), s, {}),
                              lax::iota(work, size)));
  return lax::convert_element_type(r, t, false);
}

Array linspace(double start, double stop, int64_t num, bool endpoint, std::optional<DType> dtype) {
  if (num < 0)
    throw ValueError(str("[linspace] number of samples, ", num, ", must be non-negative"));
  const DType t = dtype.value_or(DType::Float32);
  const DType ct = to_inexact(t);
  Array lo = constant(start, ct), hi = constant(stop, ct);
  Array out;
  if (num > 1) {
    const int64_t div = endpoint ? num - 1 : num;
    Shape s{div};
    // start * (1 - step) + stop * step recovers both endpoints exactly, as jnp.
    Array step = lax::div(lax::iota(ct, div),
                          lax::broadcast_in_dim(constant(double(div), ct), s, {}));
    Array one = lax::broadcast_in_dim(constant(1, ct), s, {});
    out = lax::add(lax::mul(lax::broadcast_in_dim(lo, s, {}), lax::sub(one, step)),
                   lax::mul(lax::broadcast_in_dim(hi, s, {}), step));
    if (endpoint) out = lax::concatenate({out, lax::reshape(hi, Shape{1})}, 0);
  } else if (num == 1) {
    out = lax::reshape(lo, Shape{1});
  } else {
    return zeros(Shape{0}, t);
  }
  if (!is_floating(t)) out = lax::floor(out);
  return lax::convert_element_type(out, t, false);
}

Array logspace(double start, double stop, int64_t num, bool endpoint, double base,
               std::optional<DType> dtype) {
  const DType t = dtype.value_or(DType::Float32);
  const DType ct = to_inexact(t);
  Array lin = linspace(start, stop, num, endpoint, ct);
  Array b = lax::broadcast_in_dim(constant(base, ct), lin.shape(), {});
  return lax::convert_element_type(lax::pow(b, lin), t, false);
}

Array geomspace(double start, double stop, int64_t num, bool endpoint,
                std::optional<DType> dtype) {
  if (start == 0 || stop == 0)
    throw ValueError(str("[geomspace] a geometric sequence cannot include zero, got start=",
                         start, " stop=", stop));
  const DType t = dtype.value_or(DType::Float32);
  const DType ct = to_inexact(t);
  // The endpoints are static: their sign and log10 are taken on the host in double.
  const double sign = start < 0 ? -1.0 : 1.0;
  Array res = logspace(std::log10(start / sign), std::log10(stop / sign), num, endpoint, 10.0, ct);
  if (sign < 0) res = lax::neg(res);
  return lax::convert_element_type(res, t, false);
}

// ---- matrices and masks ----

Array eye(int64_t n, std::optional<int64_t> m, int64_t k, DType dtype) {
  const int64_t cols = m.value_or(n);
  check_dim("eye", "N", n);
  check_dim("eye", "M", cols);
  Shape s{n, cols};
  Array i = lax::add(lax::broadcasted_iota(DType::Int32, s, 0),
                     lax::broadcast_in_dim(constant(double(k), DType::Int32), s, {}));
  Array j = lax::broadcasted_iota(DType::Int32, s, 1);
  return lax::convert_element_type(lax::eq(i, j), dtype, false);
}

Array identity(int64_t n, DType dtype) { return eye(n, std::nullopt, 0, dtype); }

Array tri(int64_t n, std::optional<int64_t> m, int64_t k, DType dtype) {
  const int64_t cols = m.value_or(n);
  check_dim("tri", "N", n);
  check_dim("tri", "M", cols);
  return lax::convert_element_type(tri_mask(n, cols, k), dtype, false);
}

namespace {

Array tri_select(const char* op, const Array& x, int64_t k, bool lower) {
  if (x.ndim() < 2)
    throw ValueError(str("[", op, "] needs an array with at least 2 dimensions, got ", type_of(x)));
  const Shape& s = x.shape();
  const int64_t n = s[s.size() - 2], m = s[s.size() - 1];
  Array mask = tri_mask(n, m, lower ? k : k - 1);
  Shape lead(s.begin(), s.end() - 2);
  mask = lax::broadcast(mask, lead);
  Array zero = zeros_like(x);
  return lower ? lax::select(mask, x, zero) : lax::select(mask, zero, x);
}

}  // namespace

Array tril(const Array& x, int64_t k) { return tri_select("tril", x, k, true); }
Array triu(const Array& x, int64_t k) { return tri_select("triu", x, k, false); }

Array diagonal(const Array& x, int64_t offset, int64_t axis1, int64_t axis2) {
  if (x.ndim() < 2)
    throw ValueError(str("[diagonal] needs an array with at least 2 dimensions, got ",
                         type_of(x)));
  const int64_t a1 = ops::canonical_axis("diagonal", axis1, x.ndim());
  const int64_t a2 = ops::canonical_axis("diagonal", axis2, x.ndim());
  if (a1 == a2)
    throw ValueError(str("[diagonal] axis1 and axis2 must be different, got ", axis1, " and ",
                         axis2));
  Array a = moveaxis(x, {a1, a2}, {-2, -1});
  const int64_t r = a.ndim();
  const int64_t n = a.shape()[size_t(r - 2)], m = a.shape()[size_t(r - 1)];
  const int64_t d =
      std::max<int64_t>(0, std::min(n + std::min<int64_t>(offset, 0), m - std::max<int64_t>(offset, 0)));
  // The d x d block whose main diagonal is the wanted one, flattened: its diagonal is every
  // (d+1)-th element, one strided slice (no gather).
  const int64_t r0 = offset < 0 ? -offset : 0, c0 = offset > 0 ? offset : 0;
  Array sq = detail::slice_axis(detail::slice_axis(a, r - 2, std::min(r0, n), std::min(r0 + d, n)),
                                r - 1, std::min(c0, m), std::min(c0 + d, m));
  Shape flat(a.shape().begin(), a.shape().end() - 2);
  Shape out = flat;
  out.push_back(d);
  flat.push_back(d * d);
  Array f = lax::reshape(sq, flat);
  if (d <= 1) return lax::reshape(f, out);
  std::vector<int64_t> start(flat.size(), 0), limit = flat.vec(), strides(flat.size(), 1);
  strides.back() = d + 1;
  return lax::slice(f, start, limit, strides);
}

Array diag(const Array& x, int64_t k) {
  if (x.ndim() == 2) return diagonal(x, k);
  if (x.ndim() != 1)
    throw ValueError(str("[diag] input must be 1-d (to build a matrix) or 2-d (to extract a "
                         "diagonal), got ", type_of(x)));
  const int64_t n = x.shape()[0] + (k < 0 ? -k : k);
  Array zero = lax::convert_element_type(constant(0, x.dtype()), x.dtype(), x.weak_type());
  Array v = lax::pad(x, zero, {{std::max<int64_t>(0, k), std::max<int64_t>(0, -k), 0}});
  Shape s{n, n};
  Array vb = lax::broadcast_in_dim(v, s, {1});
  Array mask = eye(n, std::nullopt, k, DType::Bool);
  return lax::select(mask, vb, zeros_like(vb));
}

std::vector<Array> meshgrid(const std::vector<Array>& xs, bool sparse, const std::string& indexing) {
  if (indexing != "xy" && indexing != "ij")
    throw ValueError(str("[meshgrid] indexing must be 'xy' or 'ij', got '", indexing, "'"));
  std::vector<Array> args = xs;
  for (const Array& a : args)
    if (a.ndim() != 1)
      throw ValueError(str("[meshgrid] arguments must be 1-d, got ", type_of(a)));
  const bool swap = indexing == "xy" && args.size() >= 2;
  if (swap) std::swap(args[0], args[1]);
  Shape full;
  for (const Array& a : args) full.push_back(sparse ? 1 : a.shape()[0]);
  std::vector<Array> out;
  for (size_t i = 0; i < args.size(); ++i) {
    Shape s = full;
    s[i] = args[i].shape()[0];
    out.push_back(lax::broadcast_in_dim(args[i], s, {int64_t(i)}));
  }
  if (swap) std::swap(out[0], out[1]);
  return out;
}

Array copy(const Array& x) { return lax::copy(x); }

}  // namespace jx::numpy

namespace jx {
Array Array::copy() const { return numpy::copy(*this); }
}  // namespace jx
