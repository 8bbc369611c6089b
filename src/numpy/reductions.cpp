// jnp reductions (sum prod max min all any mean var std argmax argmin cumsum cumprod) and
// the matching Array methods. Mirrors jax/_src/numpy/reductions.py: the dtype rules, the
// `where` mask filled with the identity, `initial` folded in after the reduction.
#include <cmath>
#include <limits>

#include "numpy/reductions_common.h"
#include "support/str.h"

namespace jx::numpy {

namespace rdetail {

std::vector<int64_t> reduction_axes(const char* op, int ndim, const Axes& axis) {
  std::vector<int64_t> out;
  if (!axis.axes) {
    for (int i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  std::vector<bool> seen(static_cast<size_t>(ndim), false);
  for (int64_t a : *axis.axes) {
    if (a < -ndim || a >= ndim)
      throw IndexError(str("[", op, "] axis ", a, " is out of bounds for an array of rank ", ndim,
                           "; valid axes are ", -ndim, "..", ndim - 1));
    int64_t c = a < 0 ? a + ndim : a;
    if (seen[size_t(c)])
      throw ValueError(str("[", op, "] duplicate value in axis ", list_str(*axis.axes),
                           "; list each axis once"));
    seen[size_t(c)] = true;
  }
  for (int i = 0; i < ndim; ++i)
    if (seen[size_t(i)]) out.push_back(i);
  return out;
}

Shape keepdims_shape(const Shape& s, const std::vector<int64_t>& axes) {
  Shape out = s;
  for (int64_t a : axes) out[size_t(a)] = 1;
  return out;
}

int64_t reduced_size(const Shape& s, const std::vector<int64_t>& axes) {
  int64_t n = 1;
  for (int64_t a : axes) n *= s[size_t(a)];
  return n;
}

DType to_inexact(DType t) { return is_inexact(t) ? t : DType::Float32; }

DType promote_integer(DType t) {
  if (t == DType::Bool) return DType::Int32;
  if (is_unsigned_integer(t)) return itemsize(t) < 4 ? DType::UInt32 : t;
  if (is_signed_integer(t)) return itemsize(t) < 4 ? DType::Int32 : t;
  return t;
}

DType upcast_f16(DType t) {
  return (t == DType::Float16 || t == DType::BFloat16) ? DType::Float32 : t;
}

Array constant(double v, DType t) { return numpy::scalar(v, t); }

Array nan_mask(const Array& x) {  // complex: a NaN in either part
  if (!is_inexact(x.dtype())) return numpy::zeros(x.shape(), DType::Bool);
  return lax::ne(x, x);
}

Array where_fill(const char* op, const Array& mask, const Array& x, const Array& fill) {
  Shape target = detail::broadcast_shapes(op, {x.shape(), mask.shape()});
  if (target != x.shape())
    throw ShapeError(str("[", op, "] where mask of shape ", shape_str(mask.shape()),
                         " does not broadcast to the input's shape ", shape_str(x.shape())));
  Array m = mask.dtype() == DType::Bool ? mask : cast(mask, DType::Bool);
  const int r = x.ndim();
  return lax::select(to_rank(m, r), x, to_rank(cast(fill, x.dtype()), r));
}

}  // namespace rdetail

using namespace rdetail;

namespace {

enum class Kind { Sum, Prod, Max, Min, All, Any };

Array identity_of(Kind k, DType t) {
  switch (k) {
    case Kind::Sum: return constant(0, t);
    case Kind::Prod: return constant(1, t);
    case Kind::All: return constant(1, t);
    case Kind::Any: return constant(0, t);
    case Kind::Max:  // complex: -inf + 0j, as JAX's
      if (t == DType::Bool) return constant(0, t);
      if (is_inexact(t)) return constant(-std::numeric_limits<double>::infinity(), t);
      return constant(double(iinfo(t).min), t);
    case Kind::Min:
      if (t == DType::Bool) return constant(1, t);
      if (is_inexact(t)) return constant(std::numeric_limits<double>::infinity(), t);
      return constant(double(iinfo(t).max), t);
  }
  return Array();
}

Array apply_reduce(Kind k, const Array& a, const std::vector<int64_t>& axes) {
  const bool b = a.dtype() == DType::Bool;
  switch (k) {
    case Kind::Sum: return b ? lax::reduce_or(a, axes) : lax::reduce_sum(a, axes);
    case Kind::Prod: return b ? lax::reduce_and(a, axes) : lax::reduce_prod(a, axes);
    case Kind::Max: return lax::reduce_max(a, axes);
    case Kind::Min: return lax::reduce_min(a, axes);
    case Kind::All: return lax::reduce_and(a, axes);
    case Kind::Any: return lax::reduce_or(a, axes);
  }
  return Array();
}

Array apply_binary(Kind k, const Array& x, const Array& y) {
  const bool b = x.dtype() == DType::Bool;
  switch (k) {
    case Kind::Sum: return bin(b ? lax::bitwise_or : lax::add, x, y);
    case Kind::Prod: return bin(b ? lax::bitwise_and : lax::mul, x, y);
    case Kind::Max: return bin(lax::max, x, y);
    case Kind::Min: return bin(lax::min, x, y);
    case Kind::All: return bin(lax::bitwise_and, x, y);
    case Kind::Any: return bin(lax::bitwise_or, x, y);
  }
  return Array();
}

Array reduction(const char* name, Kind k, Array a, const Axes& axis, const ReduceOptions& o) {
  const bool has_identity = k != Kind::Max && k != Kind::Min;
  const bool sum_like = k == Kind::Sum || k == Kind::Prod;
  if (!o.initial && !has_identity && o.where)
    throw ValueError(str("[", name, "] reduction operation ", name, " does not have an identity, "
                         "so to use a where mask one has to specify 'initial'"));
  if (sum_like && a.dtype() == DType::Bool) a = cast(a, DType::Int32);
  if (k == Kind::All || k == Kind::Any) a = cast(a, DType::Bool);
  const std::vector<int64_t> axes = reduction_axes(name, a.ndim(), axis);
  if (!o.initial && !has_identity) {
    for (int64_t d : axes)
      if (a.shape()[size_t(d)] == 0)
        throw ValueError(str("[", name, "] zero-size array to reduction operation ", name,
                             " which has no identity (input ", type_str(a.dtype(), a.shape()),
                             "); pass an initial value"));
  }
  DType result = (sum_like && o.dtype) ? *o.dtype : a.dtype();
  if (sum_like && !o.dtype && o.promote_integers) result = promote_integer(result);
  const DType comp = sum_like && is_floating(result) ? upcast_f16(result) : result;
  a = cast(a, comp);
  if (o.where) a = where_fill(name, *o.where, a, identity_of(k, comp));
  Array r = apply_reduce(k, a, axes);
  if (o.initial) {
    if (o.initial->ndim() != 0)
      throw ValueError(str("[", name, "] initial value must be a scalar, got shape ",
                           shape_str(o.initial->shape())));
    r = apply_binary(k, cast(*o.initial, comp), r);
  }
  if (o.keepdims) r = lax::reshape(r, keepdims_shape(a.shape(), axes));
  return cast(r, result);
}

ReduceOptions kd(bool keepdims) {
  ReduceOptions o;
  o.keepdims = keepdims;
  return o;
}

// The count behind a mean/var: the reduced size, or the number of true mask entries.
Array normalizer(const Array& a, const Axes& axis, const std::vector<int64_t>& axes,
                 const ReduceOptions& o, DType comp) {
  if (!o.where) return constant(double(reduced_size(a.shape(), axes)), comp);
  ReduceOptions so;
  so.dtype = comp;
  so.keepdims = o.keepdims;
  Array m = o.where->dtype() == DType::Bool ? *o.where : cast(*o.where, DType::Bool);
  return sum(detail::broadcast_to("mean", m, a.shape()), axis, so);
}

}  // namespace

Array sum(const Array& a, Axes axis, const ReduceOptions& o) {
  return reduction("sum", Kind::Sum, a, axis, o);
}
Array sum(const Array& a, Axes axis, bool keepdims) { return sum(a, axis, kd(keepdims)); }
Array prod(const Array& a, Axes axis, const ReduceOptions& o) {
  return reduction("prod", Kind::Prod, a, axis, o);
}
Array prod(const Array& a, Axes axis, bool keepdims) { return prod(a, axis, kd(keepdims)); }
Array max(const Array& a, Axes axis, const ReduceOptions& o) {
  return reduction("max", Kind::Max, a, axis, o);
}
Array max(const Array& a, Axes axis, bool keepdims) { return max(a, axis, kd(keepdims)); }
Array min(const Array& a, Axes axis, const ReduceOptions& o) {
  return reduction("min", Kind::Min, a, axis, o);
}
Array min(const Array& a, Axes axis, bool keepdims) { return min(a, axis, kd(keepdims)); }
Array amax(const Array& a, Axes axis, bool keepdims) { return max(a, axis, keepdims); }
Array amin(const Array& a, Axes axis, bool keepdims) { return min(a, axis, keepdims); }
Array all(const Array& a, Axes axis, const ReduceOptions& o) {
  return reduction("all", Kind::All, a, axis, o);
}
Array all(const Array& a, Axes axis, bool keepdims) { return all(a, axis, kd(keepdims)); }
Array any(const Array& a, Axes axis, const ReduceOptions& o) {
  return reduction("any", Kind::Any, a, axis, o);
}
Array any(const Array& a, Axes axis, bool keepdims) { return any(a, axis, kd(keepdims)); }

Array mean(const Array& a, Axes axis, const ReduceOptions& o) {
  const DType result = o.dtype ? *o.dtype : to_inexact(a.dtype());
  const DType comp = is_floating(result) ? upcast_f16(result) : result;
  const auto axes = reduction_axes("mean", a.ndim(), axis);
  ReduceOptions so = o;
  so.dtype = comp;
  so.initial.reset();
  Array s = sum(a, axis, so);
  Array n = normalizer(a, axis, axes, o, comp);
  return cast(bin(lax::div, s, n), result);
}
Array mean(const Array& a, Axes axis, bool keepdims) { return mean(a, axis, kd(keepdims)); }

namespace {
// |x - mean|^2: for complex values re^2 + im^2, a real number (jnp.var's).
Array squared_magnitude(const Array& centered) {
  if (!is_complex(centered.dtype())) return lax::mul(centered, centered);
  Array re = lax::real(centered), im = lax::imag(centered);
  return lax::add(lax::mul(re, re), lax::mul(im, im));
}
}  // namespace

// Complex input: the variance is real (float32 for complex64), as jnp.var's
// _var_promote_types; a complex `dtype` keeps a complex result, a real one is an error.
Array var(const Array& a0, Axes axis, const ReduceOptions& o) {
  DType result, comp;
  if (o.dtype) {
    if (is_complex(a0.dtype()) && !is_complex(*o.dtype))
      throw ValueError(str("[var] a real dtype (", dtype_name(*o.dtype), ") for the variance of complex values (",
                           type_str(a0.dtype(), a0.shape()), ") is not supported, as in JAX; leave dtype unset "
                           "for a real result"));
    result = comp = *o.dtype;
  } else {
    comp = to_inexact(a0.dtype());
    result = is_complex(comp) ? real_dtype(comp) : comp;
  }
  comp = upcast_f16(comp);
  const DType rcomp = is_complex(comp) ? real_dtype(comp) : comp;  // the sums of squares
  const auto axes = reduction_axes("var", a0.ndim(), axis);
  Array a = cast(a0, comp);
  ReduceOptions mo;
  mo.dtype = comp;
  mo.keepdims = true;
  mo.where = o.where;
  Array centered = squared_magnitude(bin(lax::sub, a, mean(a, axis, mo)));
  Array n = normalizer(a, axis, axes, o, rcomp);
  n = bin(lax::sub, n, constant(double(o.ddof), rcomp));
  ReduceOptions so;
  so.dtype = rcomp;
  so.keepdims = o.keepdims;
  so.where = o.where;
  Array r = cast(bin(lax::div, sum(centered, axis, so), n), result);
  // N - ddof <= 0 gives NaN (not inf or a negative variance), as jnp.var.
  if (!o.where) {
    if (reduced_size(a.shape(), axes) - o.ddof > 0) return r;
    return numpy::full(r.shape(), constant(std::numeric_limits<double>::quiet_NaN(), result));
  }
  Array bad = bin(lax::le, n, constant(0, rcomp));
  Array nan = constant(std::numeric_limits<double>::quiet_NaN(), result);
  const int rank = std::max(r.ndim(), bad.ndim());
  Shape shape = detail::broadcast_shapes("var", {r.shape(), bad.shape()});
  return lax::select(detail::broadcast_to("var", to_rank(bad, rank), shape), to_rank(nan, rank),
                     to_rank(r, rank));
}
Array var(const Array& a, Axes axis, int64_t ddof, bool keepdims) {
  ReduceOptions o;
  o.ddof = ddof;
  o.keepdims = keepdims;
  return var(a, axis, o);
}

Array std(const Array& a, Axes axis, const ReduceOptions& o) {
  if (o.dtype && !is_floating(*o.dtype))
    throw DTypeError(str("[std] dtype argument must be inexact, got ", dtype_name(*o.dtype)));
  return lax::sqrt(var(a, axis, o));
}
Array std(const Array& a, Axes axis, int64_t ddof, bool keepdims) {
  ReduceOptions o;
  o.ddof = ddof;
  o.keepdims = keepdims;
  return std(a, axis, o);
}

namespace {
Array arg_reduction(const char* name, bool is_max, const Array& a, std::optional<int64_t> axis,
                    bool keepdims) {
  Array x = a;
  int64_t ax = 0;
  if (!axis) {
    if (a.size() == 0)
      throw ValueError(str("[", name, "] attempt to get ", name, " of an empty sequence (",
                           type_str(a.dtype(), a.shape()), ")"));
    x = lax::reshape(a, Shape{a.size()});
  } else {
    ax = *axis;
    if (ax < -a.ndim() || ax >= a.ndim())
      throw IndexError(str("[", name, "] axis ", ax, " is out of bounds for an array of rank ",
                           a.ndim(), "; valid axes are ", -a.ndim(), "..", a.ndim() - 1));
    if (ax < 0) ax += a.ndim();
  }
  Array r = is_max ? lax::argmax(x, ax, DType::Int32) : lax::argmin(x, ax, DType::Int32);
  if (keepdims) {
    std::vector<int64_t> axes;
    if (axis) axes.push_back(ax);
    else for (int i = 0; i < a.ndim(); ++i) axes.push_back(i);
    r = lax::reshape(r, keepdims_shape(a.shape(), axes));
  }
  return r;
}
}  // namespace

Array argmax(const Array& a, std::optional<int64_t> axis, bool keepdims) {
  return arg_reduction("argmax", true, a, axis, keepdims);
}
Array argmin(const Array& a, std::optional<int64_t> axis, bool keepdims) {
  return arg_reduction("argmin", false, a, axis, keepdims);
}

// ---- cumulative ----
namespace {
using CumFn = Array (*)(const Array&, int64_t, bool);

Array cumulative(const char* name, CumFn f, Array a, std::optional<int64_t> axis,
                 std::optional<DType> dtype, bool fill_nan, double fill_value,
                 bool promote_integers) {
  if (!axis || a.ndim() == 0) a = lax::reshape(a, Shape{a.size()});
  int64_t ax = 0;
  if (axis && a.ndim() > 0) {
    ax = *axis;
    if (ax < -a.ndim() || ax >= a.ndim())
      throw IndexError(str("[", name, "] axis ", ax, " is out of bounds for an array of rank ",
                           a.ndim(), "; valid axes are ", -a.ndim(), "..", a.ndim() - 1));
    if (ax < 0) ax += a.ndim();
  }
  if (fill_nan && is_floating(a.dtype()))
    a = where_fill(name, lax::bitwise_not(nan_mask(a)), a, constant(fill_value, a.dtype()));
  DType rt = dtype.value_or(a.dtype());
  if ((!dtype && promote_integers) || rt == DType::Bool) rt = promote_integer(rt);
  Array r = f(cast(a, rt), ax, false);
  if (dtype && *dtype == DType::Bool) r = cast(r, DType::Bool);
  return r;
}
}  // namespace

Array cumsum(const Array& a, std::optional<int64_t> axis, std::optional<DType> dtype) {
  return cumulative("cumsum", lax::cumsum, a, axis, dtype, false, 0, false);
}
Array cumprod(const Array& a, std::optional<int64_t> axis, std::optional<DType> dtype) {
  return cumulative("cumprod", lax::cumprod, a, axis, dtype, false, 0, false);
}
Array nancumsum(const Array& a, std::optional<int64_t> axis, std::optional<DType> dtype) {
  return cumulative("nancumsum", lax::cumsum, a, axis, dtype, true, 0, false);
}
Array nancumprod(const Array& a, std::optional<int64_t> axis, std::optional<DType> dtype) {
  return cumulative("nancumprod", lax::cumprod, a, axis, dtype, true, 1, false);
}

Array cumulative_sum(const Array& x, std::optional<int64_t> axis, std::optional<DType> dtype,
                     bool include_initial) {
  if (x.ndim() == 0)
    throw ValueError("[cumulative_sum] the input must be non-scalar to take a cumulative sum; "
                     "reshape it to 1-d first");
  if (!axis && x.ndim() > 1)
    throw ValueError(str("[cumulative_sum] the input has rank ", x.ndim(),
                         " but axis was not given; axis may be omitted only for 1-d input"));
  int64_t ax = axis.value_or(0);
  Array out = cumulative("cumulative_sum", lax::cumsum, x, ax, dtype, false, 0, true);
  if (include_initial) {
    if (ax < 0) ax += x.ndim();
    Shape zs = x.shape();
    zs[size_t(ax)] = 1;
    out = lax::concatenate({numpy::zeros(zs, out.dtype()), out}, ax);
  }
  return out;
}

}  // namespace jx::numpy

// ---- Array methods (jnp semantics) ----
namespace jx {
namespace jnp_ = jx::numpy;
Array Array::sum(Axes axes, bool keepdims) const { return jnp_::sum(*this, axes, keepdims); }
Array Array::prod(Axes axes, bool keepdims) const { return jnp_::prod(*this, axes, keepdims); }
Array Array::mean(Axes axes, bool keepdims) const { return jnp_::mean(*this, axes, keepdims); }
Array Array::var(Axes axes, int64_t ddof, bool keepdims) const {
  return jnp_::var(*this, axes, ddof, keepdims);
}
Array Array::std(Axes axes, int64_t ddof, bool keepdims) const {
  return jnp_::std(*this, axes, ddof, keepdims);
}
Array Array::max(Axes axes, bool keepdims) const { return jnp_::max(*this, axes, keepdims); }
Array Array::min(Axes axes, bool keepdims) const { return jnp_::min(*this, axes, keepdims); }
Array Array::all(Axes axes, bool keepdims) const { return jnp_::all(*this, axes, keepdims); }
Array Array::any(Axes axes, bool keepdims) const { return jnp_::any(*this, axes, keepdims); }
Array Array::argmax(std::optional<int64_t> axis, bool keepdims) const {
  return jnp_::argmax(*this, axis, keepdims);
}
Array Array::argmin(std::optional<int64_t> axis, bool keepdims) const {
  return jnp_::argmin(*this, axis, keepdims);
}
Array Array::cumsum(std::optional<int64_t> axis) const { return jnp_::cumsum(*this, axis); }
Array Array::sort(int64_t axis) const { return jnp_::sort(*this, axis); }
Array Array::argsort(int64_t axis) const { return jnp_::argsort(*this, axis); }

}  // namespace jx
