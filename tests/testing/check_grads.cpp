#include "testing/check_grads.h"

#include <cmath>
#include <complex>
#include <random>
#include <sstream>
#include <stdexcept>

#include "jx/jx.h"
#include "jx/transforms.h"

namespace jx::testing {
namespace jnp = jx::numpy;

Array rand_f64(const Shape& shape, unsigned seed, double lo, double hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (auto& x : v) x = u(gen);
  return jnp::array(v, shape);
}

void expect_close(const Array& a, const Array& b, double atol, double rtol, const std::string& what) {
  if (a.shape() != b.shape()) {
    throw std::runtime_error(what + ": shapes differ: " + shape_str(a.shape()) + " vs " +
                             shape_str(b.shape()));
  }
  if (is_complex(a.dtype()) || is_complex(b.dtype())) {  // each part on its own
    expect_close(jnp::real(a), jnp::real(b), atol, rtol, what + " (real part)");
    expect_close(jnp::imag(a), jnp::imag(b), atol, rtol, what + " (imaginary part)");
    return;
  }
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) && std::isnan(y[i])) continue;
    if (!(std::abs(x[i] - y[i]) <= atol + rtol * std::abs(y[i]))) {
      std::ostringstream os;
      os.precision(17);
      os << what << ": element " << i << " is " << x[i] << " but expected " << y[i];
      throw std::runtime_error(os.str());
    }
  }
}

namespace {

Array random_like(const Array& x, unsigned seed) {
  if (is_complex(x.dtype()))
    return lax::complex(rand_f64(x.shape(), seed), rand_f64(x.shape(), seed + 1000))
        .astype(x.dtype());
  return rand_f64(x.shape(), seed).astype(x.dtype());
}

// JAX's inner_prod: re(sum(conj(a) b)), the real inner product of C^n as R^2n.
double vdot(const std::vector<Array>& a, const std::vector<Array>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    auto x = a[i].to_vector<std::complex<double>>(), y = b[i].to_vector<std::complex<double>>();
    for (size_t k = 0; k < x.size(); ++k) s += (std::conj(x[k]) * y[k]).real();
  }
  return s;
}

std::vector<Array> conj_all(std::vector<Array> xs) {
  for (Array& x : xs) x = jnp::conj(x);
  return xs;
}

std::vector<Array> axpy(const std::vector<Array>& x, double a, const std::vector<Array>& v) {
  std::vector<Array> r;
  for (size_t i = 0; i < x.size(); ++i) r.push_back(x[i] + v[i] * a);
  return r;
}

void check_jvp(const Fn& f, const std::vector<Array>& args, const GradCheckOptions& o, unsigned seed) {
  std::vector<Array> v;
  for (size_t i = 0; i < args.size(); ++i) v.push_back(random_like(args[i], seed + unsigned(i)));
  auto [out, tan] = ad::jvp_flat(f, args, v);
  std::vector<Array> fp = f(axpy(args, o.eps, v)), fm = f(axpy(args, -o.eps, v));
  for (size_t k = 0; k < out.size(); ++k) {
    Array num = (fp[k] - fm[k]) * (0.5 / o.eps);
    expect_close(tan[k], num, o.atol, o.rtol, "jvp vs finite differences, output " + std::to_string(k));
  }
}

void check_vjp(const Fn& f, const std::vector<Array>& args, const GradCheckOptions& o, unsigned seed) {
  std::vector<Array> v;
  for (size_t i = 0; i < args.size(); ++i) v.push_back(random_like(args[i], seed + unsigned(i)));
  auto [out, tan] = ad::jvp_flat(f, args, v);
  ad::LinearFn lin = ad::linearize_flat(f, args);
  std::vector<Array> u;
  for (size_t k = 0; k < out.size(); ++k) u.push_back(random_like(out[k], seed + 100 + unsigned(k)));
  // JAX's transpose does not conjugate: J^T u. conj(J^T conj(u)) = J^H u is the adjoint
  // for the real inner product, as in JAX's check_vjp.
  std::vector<Array> ct = conj_all(lin.transpose(conj_all(u)));
  double lhs = vdot(u, tan), rhs = vdot(ct, v);
  double tol = o.atol + o.rtol * std::abs(rhs);
  if (!(std::abs(lhs - rhs) <= std::max(tol, 1e-9 * (std::abs(lhs) + 1)))) {
    std::ostringstream os;
    os.precision(17);
    os << "vjp inner-product identity: <u, J v> = " << lhs << " but <J^T u, v> = " << rhs;
    throw std::runtime_error(os.str());
  }
}

}  // namespace

void check_grads(const Fn& f, const std::vector<Array>& args, const GradCheckOptions& opts) {
  if (opts.fwd) check_jvp(f, args, opts, opts.seed + 1);
  if (opts.rev) check_vjp(f, args, opts, opts.seed + 2);
  if (opts.order > 1) {
    // The derivative along a fixed direction is itself a function of the primals.
    std::vector<Array> v;
    for (size_t i = 0; i < args.size(); ++i) v.push_back(random_like(args[i], opts.seed + 7 + unsigned(i)));
    Fn f_jvp = [f, v](const std::vector<Array>& xs) { return ad::jvp_flat(f, xs, v).second; };
    GradCheckOptions next = opts;
    next.order -= 1;
    next.seed += 31;
    next.atol *= 10;
    next.rtol *= 10;
    check_grads(f_jvp, args, next);
  }
}

}  // namespace jx::testing
