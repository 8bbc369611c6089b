// jax.scipy.special (jax/_src/scipy/special.py, jax/_src/ops/special.py) composed from jnp,
// lax and nn: the same formulas, branch points and custom derivatives, so that values,
// dtypes and gradients agree with JAX's.
#include <cmath>
#include <limits>
#include <numbers>
#include <tuple>
#include <utility>
#include <vector>

#include "jx/custom_derivatives.h"
#include "jx/lax.h"
#include "jx/lax/special.h"
#include "jx/nn/functions.h"
#include "jx/numpy.h"
#include "jx/scipy.h"
#include "jx/transforms.h"
#include "numpy/promote.h"
#include "numpy/reductions_common.h"
#include "scipy/common.h"
#include "support/str.h"

namespace jx::scipy::special {

namespace jnp = jx::numpy;
using detail::inexact;
using detail::k;
using detail::kInf;
using detail::kNaN;

namespace {

// ndtr, ndtri and log_ndtr reject everything but float32 and float64, as JAX's do (they
// do not promote integers).
void require_f32_or_f64(const char* fn, const Array& x) {
  if (x.dtype() != DType::Float32 && x.dtype() != DType::Float64)
    throw DTypeError(str("[", fn, "] supports float32 and float64 inputs only, got ",
                         type_str(x.dtype(), x.shape()), " (as JAX's ", fn,
                         "); convert it first, e.g. ", fn, "(x.astype(jx::float32))"));
}

// ---- custom_jvp functions with JAX's rules ----

// JAX: xlogy.defjvp -> x_dot * log(y) + y_dot * x / y.
Array xlogy_value(const Array& x, const Array& y) {
  return jnp::where(x != 0.0, x * jnp::log(y), jnp::zeros_like(x));
}
const auto xlogy_with_rule =
    jx::custom_jvp(xlogy_value)
        .defjvp([](const std::tuple<Array, Array>& p, const std::tuple<Array, Array>& t) {
          const auto& [x, y] = p;
          const auto& [x_dot, y_dot] = t;
          Array out = xlogy_value(x, y);
          return std::pair(out, (x_dot * jnp::log(y) + y_dot * x / y).astype(out.dtype()));
        });

Array xlog1py_value(const Array& x, const Array& y) {
  return jnp::where(x != 0.0, x * jnp::log1p(y), jnp::zeros_like(x));
}
const auto xlog1py_with_rule =
    jx::custom_jvp(xlog1py_value)
        .defjvp([](const std::tuple<Array, Array>& p, const std::tuple<Array, Array>& t) {
          const auto& [x, y] = p;
          const auto& [x_dot, y_dot] = t;
          Array out = xlog1py_value(x, y);
          return std::pair(out,
                           (x_dot * jnp::log1p(y) + y_dot * x / (1.0 + y)).astype(out.dtype()));
        });

// JAX's _xlogx: x log x with the derivative log(x) + 1 (xlogy's rule would give
// log(x) + x / x, NaN at 0).
const auto xlogx_with_rule = jx::custom_jvp([](const Array& x) {
                               return xlogy_value(x, x);
                             }).defjvp([](const std::tuple<Array>& p, const std::tuple<Array>& t) {
  const Array& x = std::get<0>(p);
  return std::pair(xlogy_value(x, x), std::get<0>(t) * (jnp::log(x) + 1.0));
});

Array logit_value(const Array& x) { return jnp::log(x / (1.0 - x)); }
const auto logit_with_rule =
    jx::custom_jvp(logit_value).defjvp([](const std::tuple<Array>& p, const std::tuple<Array>& t) {
      const Array& x = std::get<0>(p);
      return std::pair(logit_value(x), std::get<0>(t) / (x * (1.0 - x)));
    });

// ---- the normal distribution function (Cephes, as JAX ports it) ----

Array ndtr_impl(const Array& x) {
  const double half_sqrt_2 = 0.5 * std::numbers::sqrt2;
  Array w = x * half_sqrt_2;
  Array z = jnp::abs(w);
  Array y = jnp::where(z < half_sqrt_2, 1.0 + lax::erf(w),
                       jnp::where(w > 0.0, 2.0 - lax::erfc(z), lax::erfc(z)));
  return 0.5 * y;
}

// sum_i c[i] var^i with the coefficients given highest power first (Cephes' order).
Array polynomial(const Array& var, const std::vector<double>& highest_first) {
  Array acc = jnp::full_like(var, highest_first.front());
  for (size_t i = 1; i < highest_first.size(); ++i) acc = acc * var + highest_first[i];
  return acc;
}

Array ndtri_impl(const Array& p) {
  // Rational approximations of Cephes' ndtri.c: P0/Q0 for the centre (|p - 1/2| small),
  // P1/Q1 for z = sqrt(-2 log p) < 8 and P2/Q2 beyond, highest power first.
  static const std::vector<double> p0 = {-5.99633501014107895267E1, 9.80010754185999661536E1,
                                         -5.66762857469070293439E1, 1.39312609387279679503E1,
                                         -1.23916583867381258016E0};
  static const std::vector<double> q0 = {1.0,
                                         1.95448858338141759834E0,
                                         4.67627912898881538453E0,
                                         8.63602421390890590575E1,
                                         -2.25462687854119370527E2,
                                         2.00260212380060660359E2,
                                         -8.20372256168333339912E1,
                                         1.59056225126211695515E1,
                                         -1.18331621121330003142E0};
  static const std::vector<double> p1 = {
      4.05544892305962419923E0,   3.15251094599893866154E1,   5.71628192246421288162E1,
      4.40805073893200834700E1,   1.46849561928858024014E1,   2.18663306850790267539E0,
      -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4};
  static const std::vector<double> q1 = {1.0,
                                         1.57799883256466749731E1,
                                         4.53907635128879210584E1,
                                         4.13172038254672030440E1,
                                         1.50425385692907503408E1,
                                         2.50464946208309415979E0,
                                         -1.42182922854787788574E-1,
                                         -3.80806407691578277194E-2,
                                         -9.33259480895457427372E-4};
  static const std::vector<double> p2 = {
      3.23774891776946035970E0,  6.91522889068984211695E0,  3.93881025292474443415E0,
      1.33303460815807542389E0,  2.01485389549179081538E-1, 1.23716634817820021358E-2,
      3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9};
  static const std::vector<double> q2 = {1.0,
                                         6.02427039364742014255E0,
                                         3.67983563856160859403E0,
                                         1.37702099489081330271E0,
                                         2.16236993594496635890E-1,
                                         1.34204006088543189037E-2,
                                         3.28014464682127739104E-4,
                                         2.89247864745380683936E-6,
                                         6.79019408009981274425E-9};

  const double one_minus_exp_m2 = -std::expm1(-2.0);
  Array maybe_complement = jnp::where(p > one_minus_exp_m2, 1.0 - p, p);
  // p == 0 (or 1) would give NaN below; its result is replaced at the end, so any harmless
  // stand-in will do (and keeps the unselected branches' gradients finite).
  Array sanitized = jnp::where(maybe_complement <= 0.0, jnp::full_like(p, 0.5), maybe_complement);

  // p > exp(-2): x / sqrt(2 pi) = w + w^3 P0(w^2) / Q0(w^2).
  Array w = sanitized - 0.5;
  Array ww = jnp::square(w);
  Array x_big_p =
      (w + w * ww * (polynomial(ww, p0) / polynomial(ww, q0))) * -std::sqrt(2.0 * std::numbers::pi);

  // p <= exp(-2): x = z - log(z) / z - P(1/z) / Q(1/z) / z with z = sqrt(-2 log p).
  Array z = jnp::sqrt(-2.0 * jnp::log(sanitized));
  Array first = z - jnp::log(z) / z;
  Array inv_z = 1.0 / z;
  Array x_small_p = first - polynomial(inv_z, p2) / polynomial(inv_z, q2) / z;
  Array x_otherwise = first - polynomial(inv_z, p1) / polynomial(inv_z, q1) / z;

  Array x =
      jnp::where(sanitized > std::exp(-2.0), x_big_p, jnp::where(z >= 8.0, x_small_p, x_otherwise));
  x = jnp::where(p > one_minus_exp_m2, x, -x);
  return jnp::where(p <= 0.0, jnp::full_like(p, -kInf),
                    jnp::where(p >= 1.0, jnp::full_like(p, kInf), x));
}

// log(-x...) asymptotic series of log ndtr(x) for x << -1:
// ndtr(x) = exp(-x^2/2) / (-x sqrt(2 pi)) (1 + sum_n (-1)^n (2n-1)!! / x^(2n)).
Array log_ndtr_lower(const Array& x, int series_order) {
  Array x_2 = jnp::square(x);
  Array log_scale = -0.5 * x_2 - jnp::log(-x) - 0.5 * std::log(2.0 * std::numbers::pi);
  if (series_order <= 0) return log_scale;  // + log(1)
  Array even_sum = jnp::zeros_like(x);
  Array odd_sum = jnp::zeros_like(x);
  Array x_2n = x_2;
  double double_factorial = 1.0;  // (2n - 1)!!
  for (int n = 1; n <= series_order; ++n) {
    Array y = double_factorial / x_2n;
    if (n % 2)
      odd_sum = odd_sum + y;
    else
      even_sum = even_sum + y;
    x_2n = x_2n * x_2;
    double_factorial *= 2.0 * n + 1.0;
  }
  return log_scale + jnp::log(1.0 + even_sum - odd_sum);
}

Array norm_logpdf_standard(const Array& x) {
  return -0.5 * jnp::square(x) - std::log(std::sqrt(2.0 * std::numbers::pi));
}

Array log_ndtr_value(const Array& x, int series_order) {
  const bool f64 = x.dtype() == DType::Float64;
  const double lower = f64 ? -20.0 : -10.0;
  const double upper = f64 ? 8.0 : 5.0;
  // The clamps keep the unselected branches finite (and their gradients NaN-free), as JAX.
  return jnp::where(x > upper, -ndtr_impl(-x),
                    jnp::where(x > lower, jnp::log(ndtr_impl(jnp::maximum(x, lower))),
                               log_ndtr_lower(jnp::minimum(x, lower), series_order)));
}

// cdflib's algdiv: log(Gamma(b) / Gamma(a + b)) for b >= 8, a <= b, as JAX's betaln uses
// it, except for x: cdflib's is 1 / (1 + a/b); JAX's port has a/b / (1 + a/b), which costs
// it about 1e-8 relative error in betaln(10, 20) (docs/scipy.md).
Array algdiv(const Array& a, const Array& b) {
  constexpr double c0 = 0.833333333333333e-01, c1 = -0.277777777760991e-02,
                   c2 = 0.793650666825390e-03, c3 = -0.595202931351870e-03,
                   c4 = 0.837308034031215e-03, c5 = -0.165322962780713e-02;
  Array h = a / b;
  Array c = h / (1.0 + h);
  Array x = 1.0 / (1.0 + h);
  Array d = b + (a - 0.5);
  // s_n = (1 - x^n) / (1 - x)
  Array x2 = x * x;
  Array s3 = 1.0 + (x + x2);
  Array s5 = 1.0 + (x + x2 * s3);
  Array s7 = 1.0 + (x + x2 * s5);
  Array s9 = 1.0 + (x + x2 * s7);
  Array s11 = 1.0 + (x + x2 * s9);
  // w = del(b) - del(a + b), del being lgamma's remainder after Stirling's leading terms.
  Array t = jnp::square(1.0 / b);
  Array w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0;
  w = w * (c / b);
  Array u = d * jnp::log1p(a / b);
  Array v = a * (jnp::log(b) - 1.0);
  return jnp::where(u <= v, (w - v) - u, (w - u) - v);
}

}  // namespace

// ---- logsumexp and softmax ----

Array logsumexp(const Array& a, Axes axis, const std::optional<Array>& b, bool keepdims) {
  return nn::logsumexp(a, std::move(axis), keepdims, b);
}

std::pair<Array, Array> logsumexp_with_sign(const Array& a_in, Axes axis,
                                            const std::optional<Array>& b_in, bool keepdims) {
  if (b_in) jnp::detail::check_broadcast("logsumexp", a_in, *b_in);
  std::vector<Array> ab =
      b_in ? jnp::broadcast_arrays(inexact({a_in, *b_in})) : std::vector<Array>{inexact({a_in})[0]};
  Array a = ab[0];
  if (b_in) a = jnp::where(ab[1] != 0.0, a, -kInf);
  const std::vector<int64_t> dims = jnp::rdetail::reduction_axes("logsumexp", int(a.ndim()), axis);
  jnp::ReduceOptions o;
  o.keepdims = keepdims;
  o.initial = Array(-kInf);  // size-0 axes reduce to -inf, as JAX's initial=-inf
  Array amax = jnp::max(a, dims, o);
  amax = jx::stop_gradient(jnp::where(jnp::isfinite(amax), amax, jnp::zeros_like(amax)));
  Array amax_with_dims = keepdims ? amax : jnp::expand_dims(amax, dims);
  Array exp_a = jnp::exp(a - amax_with_dims.astype(a.dtype()));
  if (b_in) exp_a = exp_a * ab[1];
  Array sumexp = jnp::sum(exp_a, dims, keepdims);
  // Differentiating log|s| directly gives the right sign for negative sums (JAX's custom
  // rule leaves the sign out there: docs/scipy.md).
  Array sign = jx::stop_gradient(jnp::sign(sumexp));
  Array out = jnp::log(jnp::abs(sumexp)) + amax.astype(sumexp.dtype());
  return {out, sign};
}

Array softmax(const Array& x, Axes axis) { return nn::softmax(x, std::move(axis)); }

Array log_softmax(const Array& x, Axes axis) { return nn::log_softmax(x, std::move(axis)); }

// ---- error function and gamma family ----

Array erf(const Array& x) { return lax::erf(inexact({x})[0]); }
Array erfc(const Array& x) { return lax::erfc(inexact({x})[0]); }
Array erfinv(const Array& x) { return lax::erf_inv(inexact({x})[0]); }
Array gammaln(const Array& x) { return lax::lgamma(inexact({x})[0]); }
Array digamma(const Array& x) { return lax::digamma(inexact({x})[0]); }

Array gammasgn(const Array& x_in) {
  const Array x = inexact({x_in})[0];
  Array floor_x = lax::floor(x);
  Array negative = x < 0.0;
  Array is_nan = (negative & (x == floor_x)) | jnp::isnan(x);
  Array is_minus =
      (negative & (jnp::remainder(floor_x, 2.0) != 0.0)) | ((x == 0.0) & jnp::signbit(x));
  return jnp::where(is_nan, k(x, kNaN), jnp::where(is_minus, k(x, -1.0), k(x, 1.0)));
}

Array gamma(const Array& x_in) {
  const Array x = inexact({x_in})[0];
  return gammasgn(x) * jnp::exp(lax::lgamma(x));
}

Array betaln(const Array& a_in, const Array& b_in) {
  std::vector<Array> ab = inexact({a_in, b_in}, "betaln");
  Array a = jnp::minimum(ab[0], ab[1]);
  Array b = jnp::maximum(ab[0], ab[1]);
  Array small_b = lax::lgamma(a) + (lax::lgamma(b) - lax::lgamma(a + b));
  Array large_b = lax::lgamma(a) + algdiv(a, b);
  return jnp::where(b < 8.0, small_b, large_b);
}

Array beta(const Array& a_in, const Array& b_in) {
  std::vector<Array> ab = inexact({a_in, b_in}, "beta");
  Array sign = gammasgn(ab[0]) * gammasgn(ab[1]) * gammasgn(ab[0] + ab[1]);
  return sign * jnp::exp(betaln(ab[0], ab[1]));
}

Array factorial(const Array& n_in) {
  const Array n = inexact({n_in})[0];
  return jnp::where(n < 0.0, k(n, 0.0), jnp::exp(lax::lgamma(n + 1.0)));
}

Array multigammaln(const Array& a_in, int64_t d) {
  if (d < 0) throw ValueError(str("[multigammaln] the dimension d must be >= 0, got ", d));
  const Array a = inexact({a_in})[0];
  const double dd = double(d);
  // The constant is formed in a's dtype, as JAX's lax._const arithmetic.
  Array constant =
      k(a, 0.25) * k(a, dd) * (k(a, dd) - k(a, 1.0)) * jnp::log(k(a, std::numbers::pi));
  Array half_j = jnp::arange(0, d, 1, a.dtype()) / k(a, 2.0);
  std::vector<int64_t> lead(size_t(a.ndim()));
  for (size_t i = 0; i < lead.size(); ++i) lead[i] = int64_t(i);
  Array terms = lax::lgamma(jnp::expand_dims(a, -1) - jnp::expand_dims(half_j, lead));
  return jnp::sum(terms, -1) + constant;
}

// ---- x log y family ----

Array xlogy(const Array& x, const Array& y) {
  std::vector<Array> xy = inexact({x, y}, "xlogy");
  return xlogy_with_rule(xy[0], xy[1]);
}

Array xlog1py(const Array& x, const Array& y) {
  std::vector<Array> xy = inexact({x, y}, "xlog1py");
  return xlog1py_with_rule(xy[0], xy[1]);
}

Array entr(const Array& x_in) {
  const Array x = inexact({x_in})[0];
  return jnp::where(x < 0.0, jnp::full_like(x, -kInf), -xlogx_with_rule(x));
}

Array rel_entr(const Array& p_in, const Array& q_in) {
  std::vector<Array> pq = inexact({p_in, q_in}, "rel_entr");
  const Array& p = pq[0];
  const Array& q = pq[1];
  Array both_positive = (p > 0.0) & (q > 0.0);
  Array p_zero = (p == 0.0) & (q >= 0.0);
  Array safe_p = jnp::where(both_positive, p, 1.0);
  Array safe_q = jnp::where(both_positive, q, 1.0);
  Array log_val = xlogx_with_rule(safe_p) - xlogy_with_rule(safe_p, safe_q);
  return jnp::where(both_positive, log_val, jnp::where(p_zero, k(p, 0.0), k(p, kInf)));
}

Array kl_div(const Array& p_in, const Array& q_in) {
  std::vector<Array> pq = inexact({p_in, q_in}, "kl_div");
  return rel_entr(pq[0], pq[1]) - pq[0] + pq[1];
}

Array logit(const Array& x) { return logit_with_rule(inexact({x})[0]); }

Array expit(const Array& x) { return lax::logistic(inexact({x})[0]); }

// ---- normal distribution ----

Array ndtr(const Array& x) {
  require_f32_or_f64("ndtr", x);
  return ndtr_impl(x);
}

Array ndtri(const Array& p) {
  require_f32_or_f64("ndtri", p);
  return ndtri_impl(p);
}

Array log_ndtr(const Array& x, int series_order) {
  if (series_order < 0 || series_order > 30)
    throw ValueError(str("[log_ndtr] series_order must be in [0, 30], got ", series_order));
  require_f32_or_f64("log_ndtr", x);
  auto primal = [series_order](const Array& x) { return log_ndtr_value(x, series_order); };
  // JAX's _log_ndtr_jvp: t * pdf(x) / cdf(x), formed in log space so it stays finite.
  auto rule = [series_order](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    const Array& x = std::get<0>(p);
    Array ans = log_ndtr(x, series_order);
    return std::pair(ans, std::get<0>(t) * jnp::exp(norm_logpdf_standard(x) - ans));
  };
  return jx::custom_jvp(primal, rule)(x);
}

// ---- incomplete gamma and beta, zeta, polygamma, Bessel: the special primitives ----

namespace {

// promote_args_inexact, then NumPy's rank broadcast: the lax primitives take operands of
// equal rank whose dims are equal or 1.
std::vector<Array> special_args(std::vector<Array> xs, const char* fn) {
  return numpy::detail::equalize_ranks(inexact(std::move(xs), fn));
}

// JAX's _i0: exp(|x|) i0e(|x|), with the custom derivative i1(x) (the composition would
// differentiate |x| at 0).
Array i0_value(const Array& x) {
  Array abs_x = lax::abs(x);
  return lax::mul(lax::exp(abs_x), lax::bessel_i0e(abs_x));
}
const auto i0_with_rule =
    jx::custom_jvp(i0_value).defjvp([](const std::tuple<Array>& p, const std::tuple<Array>& t) {
      const Array& x = std::get<0>(p);
      return std::pair(i0_value(x), std::get<0>(t) * i1(x));
    });

}  // namespace

Array gammainc(const Array& a, const Array& x) {
  std::vector<Array> v = special_args({a, x}, "gammainc");
  return lax::igamma(v[0], v[1]);
}

Array gammaincc(const Array& a, const Array& x) {
  std::vector<Array> v = special_args({a, x}, "gammaincc");
  return lax::igammac(v[0], v[1]);
}

Array betainc(const Array& a, const Array& b, const Array& x) {
  std::vector<Array> v = special_args({a, b, x}, "betainc");
  return lax::betainc(v[0], v[1], v[2]);
}

Array zeta(const Array& x, const Array& q) {
  std::vector<Array> v = special_args({x, q}, "zeta");
  return lax::zeta(v[0], v[1]);
}

Array polygamma(const Array& n, const Array& x) {
  // JAX asserts an integer n (the order is not a float parameter); jx says so by type.
  if (!is_integer(n.dtype()))
    throw DTypeError(str("[polygamma] the order n must have an integer dtype, got ",
                         type_str(n.dtype(), n.shape()), " (as JAX's); pass an int, or ",
                         "convert with n.astype(jx::int32)"));
  std::vector<Array> v = special_args({n, x}, "polygamma");
  return lax::polygamma(v[0], v[1]);
}

Array i0e(const Array& x) { return lax::bessel_i0e(inexact({x})[0]); }
Array i1e(const Array& x) { return lax::bessel_i1e(inexact({x})[0]); }
Array i0(const Array& x) { return i0_with_rule(inexact({x})[0]); }

Array i1(const Array& x_in) {
  const Array x = inexact({x_in})[0];
  return lax::mul(lax::exp(lax::abs(x)), lax::bessel_i1e(x));
}

}  // namespace jx::scipy::special
