// multivariate_normal and orthogonal. JAX factors with jnp.linalg (cholesky / qr); jx has
// no linalg primitives yet, so the factorizations here run eagerly on concrete arrays, in
// float64, and the samples themselves are composed from lax as in JAX.
#include <cmath>

#include "core/array_impl.h"
#include "jx/lax.h"
#include "jx/numpy.h"
#include "jx/random.h"
#include "numpy/promote.h"
#include "random/internal.h"
#include "support/str.h"
#include "transforms/key_reuse.h"

namespace jx::random {

using detail::Keys;

namespace {

void require_concrete(const char* fn, const Array& a, const char* what) {
  if (!a.is_concrete())
    throw ConcretizationError(str("[", fn, "] ", what,
                                  " must be concrete: its factorization runs eagerly until jx "
                                  "has linalg primitives"));
}

// Lower Cholesky factors of a batch of n x n matrices (row-major), in place; a failed
// factorization gives NaNs, as LAPACK's potrf does through jnp.linalg.cholesky.
void cholesky_batch(std::vector<double>& a, int64_t batch, int64_t n) {
  for (int64_t b = 0; b < batch; ++b) {
    double* m = a.data() + b * n * n;
    bool ok = true;
    for (int64_t j = 0; j < n && ok; ++j) {
      double s = m[j * n + j];
      for (int64_t k = 0; k < j; ++k) s -= m[j * n + k] * m[j * n + k];
      if (!(s > 0)) {
        ok = false;
        break;
      }
      const double d = std::sqrt(s);
      m[j * n + j] = d;
      for (int64_t i = j + 1; i < n; ++i) {
        double t = m[i * n + j];
        for (int64_t k = 0; k < j; ++k) t -= m[i * n + k] * m[j * n + k];
        m[i * n + j] = t / d;
      }
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (!ok) m[i * n + j] = NAN;
        else if (j > i) m[i * n + j] = 0;
  }
}

// Q of the reduced QR of a batch of p x c matrices (p >= c), scaled so that R's diagonal
// is positive (the Q of the QR with sign(diag R) folded in; unique for full rank).
// Householder reflections, in float64.
void q_positive(std::vector<double>& a, int64_t batch, int64_t p, int64_t c, std::vector<double>& q) {
  q.assign(static_cast<size_t>(batch * p * c), 0.0);
  std::vector<double> v(static_cast<size_t>(p));
  for (int64_t b = 0; b < batch; ++b) {
    double* A = a.data() + b * p * c;
    double* Q = q.data() + b * p * c;
    std::vector<std::vector<double>> vs;
    std::vector<double> rdiag(static_cast<size_t>(c));
    for (int64_t k = 0; k < c; ++k) {
      double norm = 0;
      for (int64_t i = k; i < p; ++i) norm += A[i * c + k] * A[i * c + k];
      norm = std::sqrt(norm);
      const double alpha = A[k * c + k] > 0 ? -norm : norm;
      std::vector<double> u(static_cast<size_t>(p), 0.0);
      for (int64_t i = k; i < p; ++i) u[size_t(i)] = A[i * c + k];
      u[size_t(k)] -= alpha;
      double un = 0;
      for (int64_t i = k; i < p; ++i) un += u[size_t(i)] * u[size_t(i)];
      if (un > 0) {
        for (int64_t j = k; j < c; ++j) {
          double dot = 0;
          for (int64_t i = k; i < p; ++i) dot += u[size_t(i)] * A[i * c + j];
          const double f = 2 * dot / un;
          for (int64_t i = k; i < p; ++i) A[i * c + j] -= f * u[size_t(i)];
        }
      }
      rdiag[size_t(k)] = A[k * c + k];
      vs.push_back(std::move(u));
    }
    // Q = H_0 H_1 ... H_{c-1} applied to the first c columns of the identity.
    for (int64_t j = 0; j < c; ++j) {
      for (int64_t i = 0; i < p; ++i) v[size_t(i)] = i == j ? 1.0 : 0.0;
      for (int64_t k = c - 1; k >= 0; --k) {
        const auto& u = vs[size_t(k)];
        double un = 0, dot = 0;
        for (int64_t i = k; i < p; ++i) {
          un += u[size_t(i)] * u[size_t(i)];
          dot += u[size_t(i)] * v[size_t(i)];
        }
        if (un > 0)
          for (int64_t i = k; i < p; ++i) v[size_t(i)] -= 2 * dot / un * u[size_t(i)];
      }
      const double s = rdiag[size_t(j)] > 0 ? 1.0 : rdiag[size_t(j)] < 0 ? -1.0 : 0.0;
      for (int64_t i = 0; i < p; ++i) Q[i * c + j] = v[size_t(i)] * s;
    }
  }
}

}  // namespace

Array multivariate_normal(const Array& key, const Array& mean_in, const Array& cov_in,
                          OptionalShape shape_opt, std::optional<DType> dtype_opt,
                          const std::string& method) {
  Keys k = detail::unpack("multivariate_normal", key);
  detail::KeyUse use("multivariate_normal", key);
  if (method != "cholesky")
    throw ValueError(str("[multivariate_normal] method \"", method,
                         "\" is not available: jx implements method=\"cholesky\" (JAX's "
                         "default); \"svd\" and \"eigh\" need jnp.linalg"));
  std::vector<Array> mc = numpy::detail::promote_inexact({mean_in, cov_in});
  Array mean = mc[0], cov = mc[1];
  const DType dtype = dtype_opt ? *dtype_opt : mean.dtype();
  detail::require_float("multivariate_normal", dtype);
  if (mean.ndim() < 1)
    throw ShapeError(str("[multivariate_normal] requires mean.ndim >= 1, got mean.ndim == ",
                         mean.ndim()));
  if (cov.ndim() < 2)
    throw ShapeError(str("[multivariate_normal] requires cov.ndim >= 2, got cov.ndim == ", cov.ndim()));
  const int64_t n = mean.shape(-1);
  if (cov.shape(-1) != n || cov.shape(-2) != n)
    throw ShapeError(str("[multivariate_normal] requires cov.shape == (..., n, n) for n=", n,
                         ", but got cov.shape == ", list_str(cov.shape().vec())));
  Shape mb(mean.shape().begin(), mean.shape().end() - 1);
  Shape cb(cov.shape().begin(), cov.shape().end() - 2);
  Shape shape;
  if (shape_opt) {
    shape = *shape_opt;
    detail::check_shape("multivariate_normal", shape);
    detail::check_broadcast("multivariate_normal", shape, mb, cb);
  } else {
    shape = detail::broadcast_all("multivariate_normal", mb, cb);
  }
  require_concrete("multivariate_normal", cov, "cov");
  std::vector<double> f = cov.to_vector<double>();
  cholesky_batch(f, cb.numel(), n);
  Array factor = lax::convert_element_type(numpy::array<double>(f, cov.shape()), dtype);
  Array z = detail::normal_keys(k, detail::concat(shape, Shape{n}), dtype);
  // einsum('...ij,...j->...i', factor, z): rank-align, multiply, sum over j.
  const size_t r = shape.size();
  Array fb = detail::to_rank("multivariate_normal", factor, r + 2);
  Array zb = lax::reshape(z, detail::concat(detail::concat(shape, Shape{1}), Shape{n}));
  Array y = lax::reduce_sum(lax::mul(fb, zb), {int64_t(r + 1)});
  Array m = detail::to_rank("multivariate_normal", lax::convert_element_type(mean, dtype), r + 1);
  return lax::add(m, y);
}

Array orthogonal(const Array& key, int64_t n, const Shape& shape, DType dtype,
                 std::optional<int64_t> m_opt) {
  Keys k = detail::unpack("orthogonal", key);
  detail::KeyUse use("orthogonal", key);
  detail::require_float("orthogonal", dtype);
  detail::check_shape("orthogonal", shape);
  const int64_t m = m_opt ? *m_opt : n;
  if (n < 0 || m < 0)
    throw ValueError(str("[orthogonal] n and m must be >= 0, got n=", n, ", m=", m));
  const int64_t p = std::max(n, m), c = std::min(n, m);
  Array z = detail::normal_keys(k, detail::concat(shape, Shape{p, c}), dtype);
  std::vector<double> a = z.to_vector<double>(), q;
  q_positive(a, shape.numel(), p, c, q);
  Array x = lax::convert_element_type(numpy::array<double>(q, z.shape()), dtype);
  if (n >= m) return x;
  std::vector<int64_t> perm;
  for (size_t d = 0; d < shape.size(); ++d) perm.push_back(int64_t(d));
  perm.push_back(int64_t(shape.size()) + 1);
  perm.push_back(int64_t(shape.size()));
  return lax::transpose(x, perm);
}

}  // namespace jx::random
