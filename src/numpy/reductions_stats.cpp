// jnp statistics built on the reductions: NaN-ignoring reductions, quantile/percentile/
// median, average, ptp, count_nonzero (jax/_src/numpy/reductions.py).
#include <algorithm>
#include <cmath>
#include <limits>

#include "numpy/reductions_common.h"
#include "support/str.h"

namespace jx::numpy {

using namespace rdetail;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

ReduceOptions kd(bool keepdims) {
  ReduceOptions o;
  o.keepdims = keepdims;
  return o;
}

// a with NaNs replaced by `fill` (a is floating).
Array fill_nans(const char* op, const Array& a, double fill) {
  return where_fill(op, lax::bitwise_not(nan_mask(a)), a, constant(fill, a.dtype()));
}

// Where every reduced element of `a` was NaN, the result is NaN.
Array nan_if_all_nan(const Array& a, const Axes& axis, bool keepdims, const Array& out) {
  Array allnan = all(nan_mask(a), axis, keepdims);
  const int r = out.ndim();
  return lax::select(to_rank(allnan, r), to_rank(constant(kNaN, out.dtype()), r), out);
}

}  // namespace

// Complex values with a NaN part are skipped too, as JAX's _nan_reduction does for every
// inexact dtype.
Array nansum(const Array& a, Axes axis, const ReduceOptions& o) {
  if (!is_inexact(a.dtype())) return sum(a, axis, o);
  return sum(fill_nans("nansum", a, 0), axis, o);
}
Array nansum(const Array& a, Axes axis, bool keepdims) { return nansum(a, axis, kd(keepdims)); }
Array nanprod(const Array& a, Axes axis, const ReduceOptions& o) {
  if (!is_inexact(a.dtype())) return prod(a, axis, o);
  return prod(fill_nans("nanprod", a, 1), axis, o);
}
Array nanprod(const Array& a, Axes axis, bool keepdims) { return nanprod(a, axis, kd(keepdims)); }

// Complex values with a NaN part are replaced by -inf + 0j (+inf + 0j for nanmin).
Array nanmax(const Array& a, Axes axis, bool keepdims) {
  if (!is_inexact(a.dtype())) return max(a, axis, keepdims);
  return nan_if_all_nan(a, axis, keepdims, max(fill_nans("nanmax", a, -kInf), axis, keepdims));
}
Array nanmin(const Array& a, Axes axis, bool keepdims) {
  if (!is_inexact(a.dtype())) return min(a, axis, keepdims);
  return nan_if_all_nan(a, axis, keepdims, min(fill_nans("nanmin", a, kInf), axis, keepdims));
}

Array nanmean(const Array& a, Axes axis, const ReduceOptions& o) {
  if (!is_inexact(a.dtype())) return mean(a, axis, o);
  ReduceOptions so = o;
  so.dtype = o.dtype.value_or(a.dtype());
  Array count = sum(lax::bitwise_not(nan_mask(a)), axis, so);
  return bin(lax::div, nansum(a, axis, so), count);
}
Array nanmean(const Array& a, Axes axis, bool keepdims) { return nanmean(a, axis, kd(keepdims)); }

// Complex input gives a real variance, |x - mean|^2 summed (JAX's nanvar).
Array nanvar(const Array& a0, Axes axis, int64_t ddof, bool keepdims) {
  const DType inexact = to_inexact(a0.dtype());
  const DType result = is_complex(inexact) ? real_dtype(inexact) : inexact;
  const DType comp = upcast_f16(inexact), rcomp = is_complex(comp) ? real_dtype(comp) : comp;
  Array a = cast(a0, comp);
  ReduceOptions mo;
  mo.dtype = comp;
  mo.keepdims = true;
  Array centered = bin(lax::sub, a, nanmean(a, axis, mo));
  centered = fill_nans("nanvar", centered, 0);
  if (is_complex(comp)) centered = lax::real(lax::mul(centered, lax::conj(centered)));
  else centered = lax::mul(centered, centered);
  Array n = sum(lax::bitwise_not(nan_mask(a)), axis, keepdims);  // int32 counts
  n = bin(lax::sub, n, constant(double(ddof), n.dtype()));
  Array bad = bin(lax::le, n, constant(0, n.dtype()));
  Array divisor = cast(lax::select(bad, numpy::ones_like(n), n), rcomp);
  ReduceOptions so;
  so.dtype = rcomp;
  so.keepdims = keepdims;
  Array r = bin(lax::div, sum(centered, axis, so), divisor);
  const int rank = r.ndim();
  r = lax::select(to_rank(bad, rank), to_rank(constant(kNaN, rcomp), rank), r);
  return cast(r, result);
}
Array nanstd(const Array& a, Axes axis, int64_t ddof, bool keepdims) {
  return lax::sqrt(nanvar(a, axis, ddof, keepdims));
}

Array ptp(const Array& a, Axes axis, bool keepdims) {
  return lax::sub(max(a, axis, keepdims), min(a, axis, keepdims));
}

Array count_nonzero(const Array& a, Axes axis, bool keepdims) {
  ReduceOptions o;
  o.dtype = DType::Int32;
  o.keepdims = keepdims;
  Array nz = a.dtype() == DType::Bool ? a : lax::ne(a, to_rank(constant(0, a.dtype()), a.ndim()));
  return sum(nz, axis, o);
}

// ---- average ----
std::pair<Array, Array> average_returned(const Array& a0, Axes axis,
                                         const std::optional<Array>& weights, bool keepdims) {
  if (!weights) {
    Array a = detail::promote_inexact({a0})[0];
    Array avg = mean(a, axis, keepdims);
    const auto axes = reduction_axes("average", a.ndim(), axis);
    Array ws = numpy::full(avg.shape(), constant(double(reduced_size(a.shape(), axes)), avg.dtype()));
    return {avg, ws};
  }
  auto pr = detail::promote_inexact({a0, *weights});
  Array a = pr[0], w = pr[1];
  if (a.shape() != w.shape()) {
    if (w.ndim() != 1)
      throw ShapeError(str("[average] 1D weights expected when shapes of a and weights differ, "
                           "got ", shape_str(a.shape()), " and ", shape_str(w.shape())));
    if (!axis.axes)
      throw ValueError("[average] axis must be specified when shapes of a and weights differ");
    if (axis.axes->size() != 1)
      throw ValueError("[average] single axis expected when shapes of a and weights differ");
    const int64_t ax = reduction_axes("average", a.ndim(), axis)[0];
    if (w.shape()[0] != a.shape()[size_t(ax)])
      throw ShapeError(str("[average] length of weights (", w.shape()[0],
                           ") not compatible with axis ", ax, " of shape ", shape_str(a.shape())));
    Shape ws(size_t(a.ndim()), 1);
    ws[size_t(ax)] = w.shape()[0];
    w = detail::broadcast_to("average", lax::reshape(w, ws), a.shape());
  }
  Array wsum = sum(w, axis, keepdims);
  Array avg = bin(lax::div, sum(lax::mul(a, w), axis, keepdims), wsum);
  if (avg.shape() != wsum.shape()) wsum = detail::broadcast_to("average", wsum, avg.shape());
  return {avg, wsum};
}

Array average(const Array& a, Axes axis, const std::optional<Array>& weights, bool keepdims) {
  return average_returned(a, axis, weights, keepdims).first;
}

// ---- quantiles ----
namespace {

enum class QMethod { Linear, Midpoint };

Array quantile_impl(const char* op, const Array& a0, const std::vector<double>& qs, bool scalar_q,
                    const Axes& axis, bool keepdims, QMethod method) {
  for (double q : qs)
    if (!(q >= 0 && q <= 1))
      throw ValueError(str("[", op, "] quantiles must be in the range [0, 1] (percentiles in "
                           "[0, 100]), got ", q));
  Array a = detail::promote_inexact({a0})[0];
  a = cast(a, a.dtype());  // strong
  const DType dt = a.dtype();
  const auto axes = reduction_axes(op, a.ndim(), axis);
  // Move the reduced axes last and merge them into one.
  std::vector<int64_t> perm;
  Shape kept;
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (!std::count(axes.begin(), axes.end(), d)) {
      perm.push_back(d);
      kept.push_back(a.shape()[size_t(d)]);
    }
  for (int64_t d : axes) perm.push_back(d);
  const int64_t n = reduced_size(a.shape(), axes);
  Shape merged = kept;
  merged.push_back(n);
  Array x = lax::reshape(lax::transpose(a, perm), merged);
  const int64_t ax = int64_t(kept.size());
  Shape out_shape = keepdims ? keepdims_shape(a.shape(), axes) : kept;
  std::vector<Array> results;
  if (n == 0) {
    for (size_t i = 0; i < qs.size(); ++i)
      results.push_back(numpy::full(out_shape, constant(kNaN, dt)));
  } else {
    // Any NaN in a slice makes its quantiles NaN; sorting puts the NaNs last.
    Array has_nan = any(nan_mask(x), Axes(ax), true);
    x = lax::select(has_nan, to_rank(constant(kNaN, dt), x.ndim()), x);
    Array sorted = lax::sort(x, ax, true);
    for (double q : qs) {
      // JAX computes the position in the array's float type.
      double pos = dt == DType::Float64 ? q * double(n - 1) : double(float(q) * float(n - 1));
      double lo = std::floor(pos), hi = std::ceil(pos);
      double hw = dt == DType::Float64 ? pos - lo : double(float(pos) - float(lo));
      double lw = dt == DType::Float64 ? 1 - hw : double(1.0f - float(hw));
      lo = std::min(std::max(lo, 0.0), double(n - 1));
      hi = std::min(std::max(hi, 0.0), double(n - 1));
      Array lv = lax::slice_in_dim(sorted, int64_t(lo), int64_t(lo) + 1, 1, ax);
      Array hv = lax::slice_in_dim(sorted, int64_t(hi), int64_t(hi) + 1, 1, ax);
      Array r;
      if (method == QMethod::Midpoint) {
        r = bin(lax::mul, lax::add(lv, hv), constant(0.5, dt));
      } else {
        r = lax::add(bin(lax::mul, lv, constant(lw, dt)), bin(lax::mul, hv, constant(hw, dt)));
      }
      results.push_back(lax::reshape(r, out_shape));
    }
  }
  if (scalar_q) return results[0];
  Shape one = out_shape;
  one.insert(0, 1);
  for (auto& r : results) r = lax::reshape(r, one);
  if (results.empty()) {
    Shape s = out_shape;
    s.insert(0, 0);
    return numpy::zeros(s, dt);
  }
  return results.size() == 1 ? results[0] : lax::concatenate(results, 0);
}

std::vector<double> scaled(const std::vector<double>& q, double f) {
  std::vector<double> out;
  for (double v : q) out.push_back(v / f);
  return out;
}

}  // namespace

Array quantile(const Array& a, double q, Axes axis, bool keepdims) {
  return quantile_impl("quantile", a, {q}, true, axis, keepdims, QMethod::Linear);
}
Array quantile(const Array& a, const std::vector<double>& q, Axes axis, bool keepdims) {
  return quantile_impl("quantile", a, q, false, axis, keepdims, QMethod::Linear);
}
Array percentile(const Array& a, double q, Axes axis, bool keepdims) {
  return quantile_impl("percentile", a, {q / 100}, true, axis, keepdims, QMethod::Linear);
}
Array percentile(const Array& a, const std::vector<double>& q, Axes axis, bool keepdims) {
  return quantile_impl("percentile", a, scaled(q, 100), false, axis, keepdims, QMethod::Linear);
}
Array median(const Array& a, Axes axis, bool keepdims) {
  return quantile_impl("median", a, {0.5}, true, axis, keepdims, QMethod::Midpoint);
}

}  // namespace jx::numpy
