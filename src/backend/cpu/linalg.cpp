#include "backend/cpu/linalg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace jx::cpu::linalg {
namespace {

using Vec = std::vector<double>;
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Vec copy_of(const double* a, int64_t n) { return Vec(a, a + n); }

// Completes the orthonormal rows [0, have) of q (rows x len) to `want` rows by
// Gram-Schmidt against the unit vectors (twice, for stability).
void complete_rows(double* q, int64_t have, int64_t want, int64_t len) {
  int64_t row = have;
  for (int64_t e = 0; e < len && row < want; ++e) {
    double* v = q + row * len;
    std::fill(v, v + len, 0.0);
    v[e] = 1;
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t r = 0; r < row; ++r) {
        const double* u = q + r * len;
        double d = 0;
        for (int64_t i = 0; i < len; ++i) d += u[i] * v[i];
        for (int64_t i = 0; i < len; ++i) v[i] -= d * u[i];
      }
    double nv = 0;
    for (int64_t i = 0; i < len; ++i) nv += v[i] * v[i];
    nv = std::sqrt(nv);
    if (nv < 1e-8) continue;  // e is in the span already
    for (int64_t i = 0; i < len; ++i) v[i] /= nv;
    ++row;
  }
}

}  // namespace

int lu(double* a, int64_t n, int64_t* perm) {
  int parity = 0;
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::abs(a[i * n + k]) > std::abs(a[p * n + k])) p = i;
    if (p != k) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
      std::swap(perm[k], perm[p]);
      parity ^= 1;
    }
    const double piv = a[k * n + k];
    if (piv == 0) continue;  // singular: leave the column, as LAPACK's getrf
    for (int64_t i = k + 1; i < n; ++i) {
      double f = a[i * n + k] /= piv;
      double* ri = a + i * n;
      const double* rk = a + k * n;
#pragma omp simd
      for (int64_t j = k + 1; j < n; ++j) ri[j] -= f * rk[j];
    }
  }
  return parity;
}

double det(const double* a, int64_t n) {
  Vec lu_ = copy_of(a, n * n);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  double d = lu(lu_.data(), n, perm.data()) ? -1.0 : 1.0;
  for (int64_t i = 0; i < n; ++i) d *= lu_[size_t(i * n + i)];
  return d;
}

void slogdet(const double* a, int64_t n, double* sign, double* logabsdet) {
  Vec lu_ = copy_of(a, n * n);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  double s = lu(lu_.data(), n, perm.data()) ? -1.0 : 1.0, l = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = lu_[size_t(i * n + i)];
    if (d == 0) {
      *sign = 0;
      *logabsdet = -std::numeric_limits<double>::infinity();
      return;
    }
    if (d < 0) s = -s;
    l += std::log(std::abs(d));
  }
  *sign = s;
  *logabsdet = l;
}

void solve(const double* a, const double* b, int64_t n, int64_t k, double* x) {
  Vec f = copy_of(a, n * n);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  lu(f.data(), n, perm.data());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < k; ++c) x[i * k + c] = b[perm[i] * k + c];
  for (int64_t i = 0; i < n; ++i)  // L y = P b (unit diagonal)
    for (int64_t j = 0; j < i; ++j) {
      const double f_ij = f[size_t(i * n + j)];
      for (int64_t c = 0; c < k; ++c) x[i * k + c] -= f_ij * x[j * k + c];
    }
  for (int64_t i = n - 1; i >= 0; --i) {  // U x = y
    for (int64_t j = i + 1; j < n; ++j) {
      const double f_ij = f[size_t(i * n + j)];
      for (int64_t c = 0; c < k; ++c) x[i * k + c] -= f_ij * x[j * k + c];
    }
    const double d = f[size_t(i * n + i)];
    for (int64_t c = 0; c < k; ++c) x[i * k + c] /= d;
  }
}

bool cholesky(const double* a, int64_t n, double* l) {
  std::fill(l, l + n * n, 0.0);
  for (int64_t j = 0; j < n; ++j) {
    double s = a[j * n + j];
    for (int64_t k = 0; k < j; ++k) s -= l[j * n + k] * l[j * n + k];
    if (!(s > 0)) {
      std::fill(l, l + n * n, kNaN);
      return false;
    }
    const double d = std::sqrt(s);
    l[j * n + j] = d;
    for (int64_t i = j + 1; i < n; ++i) {
      double t = a[i * n + j];
      for (int64_t k = 0; k < j; ++k) t -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = t / d;
    }
  }
  return true;
}

void qr(const double* a_in, int64_t m, int64_t n, double* q, int64_t qcols, double* r) {
  Vec a = copy_of(a_in, m * n);
  const int64_t k = std::min(m, n);
  Vec taus(static_cast<size_t>(k), 0.0);
  std::vector<Vec> vs(static_cast<size_t>(k));
  for (int64_t j = 0; j < k; ++j) {
    // LAPACK dlarfg: H = I - tau v v^T with v[0] = 1 maps x to (beta, 0, ...).
    const double alpha = a[size_t(j * n + j)];
    double xnorm = 0;
    for (int64_t i = j + 1; i < m; ++i) xnorm = std::hypot(xnorm, a[size_t(i * n + j)]);
    Vec v(static_cast<size_t>(m - j), 0.0);
    v[0] = 1;
    if (xnorm == 0) {
      taus[size_t(j)] = 0;
    } else {
      const double beta = -std::copysign(std::hypot(alpha, xnorm), alpha);
      taus[size_t(j)] = (beta - alpha) / beta;
      for (int64_t i = j + 1; i < m; ++i) v[size_t(i - j)] = a[size_t(i * n + j)] / (alpha - beta);
      a[size_t(j * n + j)] = beta;
      for (int64_t i = j + 1; i < m; ++i) a[size_t(i * n + j)] = 0;
      const double tau = taus[size_t(j)];
      for (int64_t c = j + 1; c < n; ++c) {
        double d = 0;
        for (int64_t i = j; i < m; ++i) d += v[size_t(i - j)] * a[size_t(i * n + c)];
        d *= tau;
        for (int64_t i = j; i < m; ++i) a[size_t(i * n + c)] -= d * v[size_t(i - j)];
      }
    }
    vs[size_t(j)] = std::move(v);
  }
  for (int64_t i = 0; i < qcols; ++i)
    for (int64_t c = 0; c < n; ++c) r[i * n + c] = (i < m && c >= i) ? a[size_t(i * n + c)] : 0.0;
  if (!q) return;
  // Q = H_0 H_1 ... H_{k-1} applied to the first qcols columns of the identity.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t c = 0; c < qcols; ++c) q[i * qcols + c] = i == c ? 1.0 : 0.0;
  for (int64_t j = k - 1; j >= 0; --j) {
    const double tau = taus[size_t(j)];
    if (tau == 0) continue;
    const Vec& v = vs[size_t(j)];
    for (int64_t c = 0; c < qcols; ++c) {
      double d = 0;
      for (int64_t i = j; i < m; ++i) d += v[size_t(i - j)] * q[i * qcols + c];
      d *= tau;
      for (int64_t i = j; i < m; ++i) q[i * qcols + c] -= d * v[size_t(i - j)];
    }
  }
}

void eigh(const double* a_in, int64_t n, double* w, double* v_out) {
  Vec a = copy_of(a_in, n * n);
  Vec v(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) v[size_t(i * n + i)] = 1;
  auto at = [&](int64_t i, int64_t j) -> double& { return a[size_t(i * n + j)]; };
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, total = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        total += at(i, j) * at(i, j);
        if (i != j) off += at(i, j) * at(i, j);
      }
    if (off <= kEps * kEps * total || off == 0) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        const double apq = at(p, q);
        if (apq == 0) continue;
        const double theta = (at(q, q) - at(p, p)) / (2 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int64_t k = 0; k < n; ++k) {  // columns p, q
          const double akp = at(k, p), akq = at(k, q);
          at(k, p) = c * akp - s * akq;
          at(k, q) = s * akp + c * akq;
        }
        for (int64_t k = 0; k < n; ++k) {  // rows p, q
          const double apk = at(p, k), aqk = at(q, k);
          at(p, k) = c * apk - s * aqk;
          at(q, k) = s * apk + c * aqk;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double vkp = v[size_t(k * n + p)], vkq = v[size_t(k * n + q)];
          v[size_t(k * n + p)] = c * vkp - s * vkq;
          v[size_t(k * n + q)] = s * vkp + c * vkq;
        }
      }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return at(x, x) < at(y, y); });
  for (int64_t j = 0; j < n; ++j) {
    w[j] = at(order[size_t(j)], order[size_t(j)]);
    if (v_out)
      for (int64_t i = 0; i < n; ++i) v_out[i * n + j] = v[size_t(i * n + order[size_t(j)])];
  }
}

void svd(const double* a, int64_t m, int64_t n, bool full, double* u, double* s, double* vt) {
  // One-sided Jacobi on the columns of G (r x c, r >= c), stored transposed: row j of g is
  // column j of G. G = A if m >= n, else A^T.
  const bool tall = m >= n;
  const int64_t r = tall ? m : n, c = tall ? n : m;
  Vec g(static_cast<size_t>(r * c));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      if (tall) g[size_t(j * r + i)] = a[i * n + j];
      else g[size_t(i * r + j)] = a[i * n + j];
    }
  Vec v(static_cast<size_t>(c * c), 0.0);  // row j: column j of V
  for (int64_t j = 0; j < c; ++j) v[size_t(j * c + j)] = 1;
  for (int sweep = 0; sweep < 100; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < c; ++p)
      for (int64_t q = p + 1; q < c; ++q) {
        double* gp = g.data() + p * r;
        double* gq = g.data() + q * r;
        double al = 0, be = 0, ga = 0;
        for (int64_t i = 0; i < r; ++i) {
          al += gp[i] * gp[i];
          be += gq[i] * gq[i];
          ga += gp[i] * gq[i];
        }
        if (ga == 0 || std::abs(ga) <= kEps * std::sqrt(al * be)) continue;
        rotated = true;
        const double zeta = (be - al) / (2 * ga);
        const double t = (zeta >= 0 ? 1.0 : -1.0) / (std::abs(zeta) + std::sqrt(1 + zeta * zeta));
        const double cs = 1 / std::sqrt(1 + t * t), sn = cs * t;
        for (int64_t i = 0; i < r; ++i) {
          const double x = gp[i], y = gq[i];
          gp[i] = cs * x - sn * y;
          gq[i] = sn * x + cs * y;
        }
        double* vp = v.data() + p * c;
        double* vq = v.data() + q * c;
        for (int64_t i = 0; i < c; ++i) {
          const double x = vp[i], y = vq[i];
          vp[i] = cs * x - sn * y;
          vq[i] = sn * x + cs * y;
        }
      }
    if (!rotated) break;
  }
  Vec sig(static_cast<size_t>(c));
  for (int64_t j = 0; j < c; ++j) {
    double nn = 0;
    for (int64_t i = 0; i < r; ++i) nn += g[size_t(j * r + i)] * g[size_t(j * r + i)];
    sig[size_t(j)] = std::sqrt(nn);
  }
  std::vector<int64_t> order(static_cast<size_t>(c));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return sig[size_t(x)] > sig[size_t(y)]; });
  for (int64_t j = 0; j < c; ++j) s[j] = sig[size_t(order[size_t(j)])];
  if (!u && !vt) return;
  // Left vectors of G (rows of ul, r-long) and right vectors (rows of vr, c-long).
  const int64_t ul_rows = full ? r : c;
  Vec ul(static_cast<size_t>(std::max<int64_t>(ul_rows, 1) * r), 0.0), vr(static_cast<size_t>(c * c));
  int64_t have = 0;
  const double cutoff = (c ? s[0] : 0) * kEps * double(r);
  bool deficient = false;
  for (int64_t j = 0; j < c; ++j) {
    const int64_t o = order[size_t(j)];
    for (int64_t i = 0; i < c; ++i) vr[size_t(j * c + i)] = v[size_t(o * c + i)];
    if (sig[size_t(o)] > cutoff && !deficient) {
      for (int64_t i = 0; i < r; ++i) ul[size_t(j * r + i)] = g[size_t(o * r + i)] / sig[size_t(o)];
      have = j + 1;
    } else {
      deficient = true;
    }
  }
  complete_rows(ul.data(), have, ul_rows, r);
  // A = G (tall) or G^T: G = UL^T diag(s) VR, so A = U diag(s) Vt with U = UL^T, Vt = VR
  // (tall) or U = VR^T, Vt = UL (wide).
  if (tall) {
    const int64_t ucols = full ? m : c;
    if (u)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < ucols; ++j) u[i * ucols + j] = ul[size_t(j * r + i)];
    if (vt)
      for (int64_t i = 0; i < c; ++i)
        for (int64_t j = 0; j < n; ++j) vt[i * n + j] = vr[size_t(i * c + j)];
  } else {
    if (u)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < c; ++j) u[i * c + j] = vr[size_t(j * c + i)];
    const int64_t vrows = full ? n : c;
    if (vt)
      for (int64_t i = 0; i < vrows; ++i)
        for (int64_t j = 0; j < n; ++j) vt[i * n + j] = ul[size_t(i * r + j)];
  }
}

}  // namespace jx::cpu::linalg
