#include "backend/cpu/linalg.h"

#include <algorithm>
#include <complex>
#include <cstddef>
#include <limits>
#include <numeric>
#include <vector>

#include "backend/cpu/lapack_util.h"

// LAPACK and BLAS through their Fortran ABI (what liblapacke's own lapack.h declares):
// every argument by pointer, and the length of each CHARACTER argument as a trailing
// hidden size_t, as gfortran passes it.
extern "C" {
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void strsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const float* alpha, const float* a, const int* lda, float* b,
            const int* ldb, size_t, size_t, size_t, size_t);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const double* alpha, const double* a, const int* lda, double* b,
            const int* ldb, size_t, size_t, size_t, size_t);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau,
             float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau,
             double* work, const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t,
             size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t,
             size_t);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork,
             int* iwork, int* info, size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work,
             const int* lwork, int* iwork, int* info, size_t);
// The complex routines; std::complex<float|double> has the layout of Fortran's COMPLEX and
// COMPLEX*16 (two reals, real part first).
using c64 = std::complex<float>;
using c128 = std::complex<double>;
void cpotrf_(const char* uplo, const int* n, c64* a, const int* lda, int* info, size_t);
void zpotrf_(const char* uplo, const int* n, c128* a, const int* lda, int* info, size_t);
void ctrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const c64* alpha, const c64* a, const int* lda, c64* b, const int* ldb,
            size_t, size_t, size_t, size_t);
void ztrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const c128* alpha, const c128* a, const int* lda, c128* b,
            const int* ldb, size_t, size_t, size_t, size_t);
void cgetrf_(const int* m, const int* n, c64* a, const int* lda, int* ipiv, int* info);
void zgetrf_(const int* m, const int* n, c128* a, const int* lda, int* ipiv, int* info);
void cgeqrf_(const int* m, const int* n, c64* a, const int* lda, c64* tau, c64* work,
             const int* lwork, int* info);
void zgeqrf_(const int* m, const int* n, c128* a, const int* lda, c128* tau, c128* work,
             const int* lwork, int* info);
void cungqr_(const int* m, const int* n, const int* k, c64* a, const int* lda, const c64* tau,
             c64* work, const int* lwork, int* info);
void zungqr_(const int* m, const int* n, const int* k, c128* a, const int* lda, const c128* tau,
             c128* work, const int* lwork, int* info);
void cheevd_(const char* jobz, const char* uplo, const int* n, c64* a, const int* lda, float* w,
             c64* work, const int* lwork, float* rwork, const int* lrwork, int* iwork,
             const int* liwork, int* info, size_t, size_t);
void zheevd_(const char* jobz, const char* uplo, const int* n, c128* a, const int* lda, double* w,
             c128* work, const int* lwork, double* rwork, const int* lrwork, int* iwork,
             const int* liwork, int* info, size_t, size_t);
void cgesdd_(const char* jobz, const int* m, const int* n, c64* a, const int* lda, float* s,
             c64* u, const int* ldu, c64* vt, const int* ldvt, c64* work, const int* lwork,
             float* rwork, int* iwork, int* info, size_t);
void zgesdd_(const char* jobz, const int* m, const int* n, c128* a, const int* lda, double* s,
             c128* u, const int* ldu, c128* vt, const int* ldvt, c128* work, const int* lwork,
             double* rwork, int* iwork, int* info, size_t);
void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr,
            float* wi, float* vl, const int* ldvl, float* vr, const int* ldvr, float* work,
            const int* lwork, int* info, size_t, size_t);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda,
            double* wr, double* wi, double* vl, const int* ldvl, double* vr, const int* ldvr,
            double* work, const int* lwork, int* info, size_t, size_t);
void cgeev_(const char* jobvl, const char* jobvr, const int* n, c64* a, const int* lda, c64* w, c64* vl,
            const int* ldvl, c64* vr, const int* ldvr, c64* work, const int* lwork, float* rwork,
            int* info, size_t, size_t);
void zgeev_(const char* jobvl, const char* jobvr, const int* n, c128* a, const int* lda, c128* w,
            c128* vl, const int* ldvl, c128* vr, const int* ldvr, c128* work, const int* lwork,
            double* rwork, int* info, size_t, size_t);
}

namespace jx::cpu::linalg {
namespace {

// One overload set per routine, so the algorithms below are written once for all four
// types. The complex eigen- and singular-value routines take a real workspace (rwork) too;
// their overloads own it, so the algorithms see one signature.
void potrf(const char* uplo, int n, float* a, int lda, int* info) { spotrf_(uplo, &n, a, &lda, info, 1); }
void potrf(const char* uplo, int n, double* a, int lda, int* info) { dpotrf_(uplo, &n, a, &lda, info, 1); }
void potrf(const char* uplo, int n, c64* a, int lda, int* info) { cpotrf_(uplo, &n, a, &lda, info, 1); }
void potrf(const char* uplo, int n, c128* a, int lda, int* info) { zpotrf_(uplo, &n, a, &lda, info, 1); }
template <class T>
void trsm(char side, char uplo, char trans, char diag, int m, int n, const T* a, int lda, T* b, int ldb) {
  const T one = 1;
  if constexpr (std::is_same_v<T, float>)
    strsm_(&side, &uplo, &trans, &diag, &m, &n, &one, a, &lda, b, &ldb, 1, 1, 1, 1);
  else if constexpr (std::is_same_v<T, double>)
    dtrsm_(&side, &uplo, &trans, &diag, &m, &n, &one, a, &lda, b, &ldb, 1, 1, 1, 1);
  else if constexpr (std::is_same_v<T, c64>)
    ctrsm_(&side, &uplo, &trans, &diag, &m, &n, &one, a, &lda, b, &ldb, 1, 1, 1, 1);
  else
    ztrsm_(&side, &uplo, &trans, &diag, &m, &n, &one, a, &lda, b, &ldb, 1, 1, 1, 1);
}
void getrf(int m, int n, float* a, int* ipiv, int* info) { sgetrf_(&m, &n, a, &m, ipiv, info); }
void getrf(int m, int n, double* a, int* ipiv, int* info) { dgetrf_(&m, &n, a, &m, ipiv, info); }
void getrf(int m, int n, c64* a, int* ipiv, int* info) { cgetrf_(&m, &n, a, &m, ipiv, info); }
void getrf(int m, int n, c128* a, int* ipiv, int* info) { zgetrf_(&m, &n, a, &m, ipiv, info); }
void geqrf(int m, int n, float* a, float* tau, float* w, int lw, int* info) { sgeqrf_(&m, &n, a, &m, tau, w, &lw, info); }
void geqrf(int m, int n, double* a, double* tau, double* w, int lw, int* info) { dgeqrf_(&m, &n, a, &m, tau, w, &lw, info); }
void geqrf(int m, int n, c64* a, c64* tau, c64* w, int lw, int* info) { cgeqrf_(&m, &n, a, &m, tau, w, &lw, info); }
void geqrf(int m, int n, c128* a, c128* tau, c128* w, int lw, int* info) { zgeqrf_(&m, &n, a, &m, tau, w, &lw, info); }
// Q from the reflectors: orgqr, or ungqr for complex.
void orgqr(int m, int n, int k, float* a, const float* tau, float* w, int lw, int* info) { sorgqr_(&m, &n, &k, a, &m, tau, w, &lw, info); }
void orgqr(int m, int n, int k, double* a, const double* tau, double* w, int lw, int* info) { dorgqr_(&m, &n, &k, a, &m, tau, w, &lw, info); }
void orgqr(int m, int n, int k, c64* a, const c64* tau, c64* w, int lw, int* info) { cungqr_(&m, &n, &k, a, &m, tau, w, &lw, info); }
void orgqr(int m, int n, int k, c128* a, const c128* tau, c128* w, int lw, int* info) { zungqr_(&m, &n, &k, a, &m, tau, w, &lw, info); }

template <class T>
T conj_of(T x) {
  if constexpr (kComplex<T>) return std::conj(x);
  else return x;
}

// syevd, or heevd with its real workspace for complex. Sized by a query (lw = -1) first.
template <class T>
struct Syevd {
  std::vector<T> work;
  std::vector<Real<T>> rwork;
  std::vector<int> iwork;
  char uplo;
  int n;
  int call(T* a, Real<T>* w, int lw, int lrw, int liw) {
    int info = 0;
    const char jobz = 'V';
    T* wk = lw < 0 ? &query_ : work.data();
    Real<T>* rw = lrw < 0 ? &rquery_ : rwork.data();
    int* iw = liw < 0 ? &iquery_ : iwork.data();
    if constexpr (std::is_same_v<T, float>)
      ssyevd_(&jobz, &uplo, &n, a, &n, w, wk, &lw, iw, &liw, &info, 1, 1);
    else if constexpr (std::is_same_v<T, double>)
      dsyevd_(&jobz, &uplo, &n, a, &n, w, wk, &lw, iw, &liw, &info, 1, 1);
    else if constexpr (std::is_same_v<T, c64>)
      cheevd_(&jobz, &uplo, &n, a, &n, w, wk, &lw, rw, &lrw, iw, &liw, &info, 1, 1);
    else
      zheevd_(&jobz, &uplo, &n, a, &n, w, wk, &lw, rw, &lrw, iw, &liw, &info, 1, 1);
    return info;
  }
  Syevd(char uplo_, int n_, T* a, Real<T>* w) : uplo(uplo_), n(n_) {
    call(a, w, -1, -1, -1);
    work.resize(size_t(std::max(1, int(std::real(query_)))));
    rwork.resize(size_t(std::max(1, int(rquery_))));
    iwork.resize(size_t(std::max(1, iquery_)));
  }
  int operator()(T* a, Real<T>* w) {
    return call(a, w, int(work.size()), int(rwork.size()), int(iwork.size()));
  }

 private:
  T query_ = 0;
  Real<T> rquery_ = 0;
  int iquery_ = 0;
};

// gesdd, with cgesdd/zgesdd's real workspace sized from LAPACK's documented bound.
template <class T>
struct Gesdd {
  char jobz;
  int m, n, ldu, ldvt;
  std::vector<T> work;
  std::vector<Real<T>> rwork;
  std::vector<int> iwork;
  int call(T* a, Real<T>* s, T* u, T* vt, T* wk, int lw) {
    int info = 0;
    if constexpr (std::is_same_v<T, float>)
      sgesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, wk, &lw, iwork.data(), &info, 1);
    else if constexpr (std::is_same_v<T, double>)
      dgesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, wk, &lw, iwork.data(), &info, 1);
    else if constexpr (std::is_same_v<T, c64>)
      cgesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, wk, &lw, rwork.data(), iwork.data(), &info, 1);
    else
      zgesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, wk, &lw, rwork.data(), iwork.data(), &info, 1);
    return info;
  }
  Gesdd(char jobz_, int m_, int n_, int ldu_, int ldvt_, T* a, Real<T>* s, T* u, T* vt)
      : jobz(jobz_), m(m_), n(n_), ldu(ldu_), ldvt(ldvt_) {
    const int64_t mn = std::min(m, n), mx = std::max(m, n);
    iwork.resize(size_t(8 * mn));
    if constexpr (kComplex<T>)
      rwork.resize(size_t(std::max<int64_t>(
          1, jobz == 'N' ? 7 * mn : std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn))));
    T query = 0;
    call(a, s, u, vt, &query, -1);
    work.resize(size_t(std::max(1, int(std::real(query)))));
  }
  int operator()(T* a, Real<T>* s, T* u, T* vt) {
    return call(a, s, u, vt, work.data(), int(work.size()));
  }
};

void geev(char jl, char jr, int n, float* a, float* wr, float* wi, float* vl, float* vr, float* w, int lw, int* info) {
  sgeev_(&jl, &jr, &n, a, &n, wr, wi, vl, &n, vr, &n, w, &lw, info, 1, 1);
}
void geev(char jl, char jr, int n, double* a, double* wr, double* wi, double* vl, double* vr, double* w, int lw, int* info) {
  dgeev_(&jl, &jr, &n, a, &n, wr, wi, vl, &n, vr, &n, w, &lw, info, 1, 1);
}
// The complex routines return complex eigenvalues and eigenvectors directly; rwork is 2n.
void geev(char jl, char jr, int n, c64* a, c64* w, c64* vl, c64* vr, c64* work, int lw, float* rw, int* info) {
  cgeev_(&jl, &jr, &n, a, &n, w, vl, &n, vr, &n, work, &lw, rw, info, 1, 1);
}
void geev(char jl, char jr, int n, c128* a, c128* w, c128* vl, c128* vr, c128* work, int lw, double* rw, int* info) {
  zgeev_(&jl, &jr, &n, a, &n, w, vl, &n, vr, &n, work, &lw, rw, info, 1, 1);
}

// dst's lower triangle = src's, or (src + src^H) / 2 there; the upper triangle is not read
// by the routines that get dst, so it is left as it is.
template <class T>
void copy_lower(const T* src, T* dst, int64_t n, bool symmetrize) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j)
      dst[i * n + j] = symmetrize ? (src[i * n + j] + conj_of(src[j * n + i])) / T(2) : src[i * n + j];
}

}  // namespace

template <class T>
void cholesky(const T* a, T* l, int64_t count, int64_t n, bool symmetrize) {
  // Row-major lower is column-major upper: potrf("U") factors the column-major view a^T
  // (= conj(a) for Hermitian a) as U^H U, so a = U^T conj(U), and U read row-major is
  // L = U^T with a = L L^H.
  for (int64_t b = 0; b < count; ++b) {
    T* x = l + b * n * n;
    copy_lower(a + b * n * n, x, n, symmetrize);
    int info = 0;
    if (n > 0) potrf("U", int(n), x, int(n), &info);
    if (info != 0) {
      fill_nan(x, n * n);
      continue;
    }
    for (int64_t i = 0; i < n; ++i) std::fill(x + i * n + i + 1, x + (i + 1) * n, T(0));
  }
}

template <class T>
void triangular_solve(const T* a, T* b, int64_t count, int64_t m, int64_t n, bool left, bool lower,
                      bool transpose, bool conjugate, bool unit_diagonal) {
  if (m == 0 || n == 0) return;
  // Column-major, a reads as a' = a^T and b as b^T: op(a) x = b becomes x^T op(a)^T = b^T, a
  // right-side solve with the triangle flipped (and the other way round). op(a)^T is a'
  // for op(a) = a, a'^T for a^T, and a'^H for a^H; for conj(a) it is conj(a'), which BLAS
  // has no flag for, so a conjugated copy is solved with 'N' (as JAX's CPU lowering does).
  conjugate = conjugate && kComplex<T>;
  const bool conj_copy = conjugate && !transpose;
  const int64_t k = left ? m : n;
  const char side = left ? 'R' : 'L', uplo = lower ? 'U' : 'L';
  const char trans = !transpose ? 'N' : (conjugate ? 'C' : 'T'), diag = unit_diagonal ? 'U' : 'N';
  std::vector<T> ac(conj_copy ? size_t(k * k) : 0);
  for (int64_t i = 0; i < count; ++i) {
    const T* ai = a + i * k * k;
    if (conj_copy) {
      std::transform(ai, ai + k * k, ac.begin(), [](T v) { return conj_of(v); });
      ai = ac.data();
    }
    trsm<T>(side, uplo, trans, diag, int(n), int(m), ai, int(k), b + i * m * n, int(n));
  }
}

template <class T>
void lu(T* a, int64_t count, int64_t m, int64_t n, int32_t* pivots, int32_t* permutation) {
  const int64_t k = std::min(m, n);
  std::vector<T> col(static_cast<size_t>(m * n));
  std::vector<int> ipiv(static_cast<size_t>(std::max<int64_t>(k, 1)));
  for (int64_t b = 0; b < count; ++b) {
    T* x = a + b * m * n;
    int32_t* piv = pivots + b * k;
    int32_t* perm = permutation + b * m;
    int info = 0;  // > 0: U is singular, which LU itself does not mind
    if (k > 0) {
      transpose(x, m, n, col.data());
      getrf(int(m), int(n), col.data(), ipiv.data(), &info);
      transpose(col.data(), n, m, x);
    }
    std::iota(perm, perm + m, 0);
    for (int64_t i = 0; i < k; ++i) {
      piv[i] = ipiv[size_t(i)] - 1;
      std::swap(perm[i], perm[piv[i]]);
    }
  }
}

template <class T>
void qr(const T* a, int64_t count, int64_t m, int64_t n, bool full, T* q, T* r) {
  const int64_t k = std::min(m, n), qc = full ? m : k;
  // Column-major work matrix m x max(n, qc): the reflectors, then Q in its first qc columns.
  const int64_t wc = std::max(n, qc);
  std::vector<T> w(static_cast<size_t>(std::max<int64_t>(m * wc, 1))), tau(size_t(k) + 1);
  std::vector<T> work(1);
  int info = 0;
  if (k > 0) {
    T query = 0;
    geqrf(int(m), int(n), w.data(), tau.data(), &query, -1, &info);
    int lw = work_size(query);
    orgqr(int(m), int(qc), int(k), w.data(), tau.data(), &query, -1, &info);
    work.resize(size_t(std::max(lw, work_size(query))));
  }
  for (int64_t b = 0; b < count; ++b) {
    const T* x = a + b * m * n;
    T* rb = r + b * qc * n;
    T* qb = q ? q + b * m * qc : nullptr;
    std::fill(rb, rb + qc * n, T(0));
    if (k == 0) {
      if (qb) {  // Q of an empty factorization: the identity where it has room
        std::fill(qb, qb + m * qc, T(0));
        for (int64_t i = 0; i < std::min(m, qc); ++i) qb[i * qc + i] = 1;
      }
      continue;
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) w[size_t(j * m + i)] = x[i * n + j];
    geqrf(int(m), int(n), w.data(), tau.data(), work.data(), int(work.size()), &info);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = i; j < n; ++j) rb[i * n + j] = w[size_t(j * m + i)];
    if (!qb) continue;
    orgqr(int(m), int(qc), int(k), w.data(), tau.data(), work.data(), int(work.size()), &info);
    transpose(w.data(), qc, m, qb);
  }
}

template <class T>
void eigh(const T* a, int64_t count, int64_t n, bool lower, bool symmetrize, Real<T>* w, T* v) {
  if (n == 0) return;
  std::vector<T> col(static_cast<size_t>(n * n));
  // The row-major lower triangle is the column-major upper; symmetrizing fills the lower.
  // Column-major the routine sees a^T = conj(a) (a Hermitian): the same eigenvalues, and
  // eigenvectors conj(v), conjugated back below.
  const char uplo = lower || symmetrize ? 'U' : 'L';
  Syevd<T> syevd(uplo, int(n), col.data(), w);
  for (int64_t b = 0; b < count; ++b) {
    const T* x = a + b * n * n;
    if (symmetrize) copy_lower(x, col.data(), n, true);
    else std::copy(x, x + n * n, col.begin());
    if (syevd(col.data(), w + b * n) != 0) {
      fill_nan(w + b * n, n);
      fill_nan(v + b * n * n, n * n);
      continue;
    }
    T* vb = v + b * n * n;
    transpose(col.data(), n, n, vb);  // column-major eigenvectors to row-major
    if constexpr (kComplex<T>) std::transform(vb, vb + n * n, vb, [](T z) { return std::conj(z); });
  }
}

template <class T>
void svd(const T* a, int64_t count, int64_t m, int64_t n, bool full, Real<T>* s, T* u, T* vt) {
  const int64_t k = std::min(m, n);
  const bool uv = u != nullptr;
  const int64_t uc = full ? m : k, vr = full ? n : k;
  if (k == 0) {  // no singular values; U and V^T are identities where they have room
    for (int64_t b = 0; b < count && uv; ++b) {
      T* ub = u + b * m * uc;
      T* vb = vt + b * vr * n;
      std::fill(ub, ub + m * uc, T(0));
      std::fill(vb, vb + vr * n, T(0));
      for (int64_t i = 0; i < std::min(m, uc); ++i) ub[i * uc + i] = 1;
      for (int64_t i = 0; i < std::min(vr, n); ++i) vb[i * n + i] = 1;
    }
    return;
  }
  // Column-major, a reads as a^T (n x m) = U' S V'^H, so a = conj(V') S U'^T: gesdd's V'^H
  // read row-major is conj(V') = our u, and its U' read row-major is U'^T = our vt (real or
  // complex alike). Nothing is transposed or conjugated.
  const char jobz = !uv ? 'N' : (full ? 'A' : 'S');
  std::vector<T> x(static_cast<size_t>(m * n));
  T dummy = 0;
  T* ucol = uv ? vt : &dummy;  // gesdd's U (n x vr, ld n)
  T* vtcol = uv ? u : &dummy;  // gesdd's V^T (uc x m, ld uc)
  const int ldu = uv ? int(n) : 1, ldvt = uv ? int(uc) : 1;
  Gesdd<T> gesdd(jobz, int(n), int(m), ldu, ldvt, x.data(), s, ucol, vtcol);
  for (int64_t b = 0; b < count; ++b) {
    std::copy(a + b * m * n, a + (b + 1) * m * n, x.begin());
    T* ub = uv ? vt + b * vr * n : &dummy;
    T* vb = uv ? u + b * m * uc : &dummy;
    if (gesdd(x.data(), s + b * k, ub, vb) != 0) {
      fill_nan(s + b * k, k);
      if (uv) {
        fill_nan(u + b * m * uc, m * uc);
        fill_nan(vt + b * vr * n, vr * n);
      }
    }
  }
}

// geev's real eigenvectors come packed: for a conjugate pair (wi[k] > 0), columns k and k+1
// hold the real and imaginary parts of the first vector; the second is its conjugate.
namespace {
template <class T>
void unpack_eigenvectors(const T* m, const T* wi, int64_t n, std::complex<T>* out) {
  for (int64_t k = 0; k < n; ++k) {
    if (wi[k] == 0 || k + 1 == n) {
      for (int64_t i = 0; i < n; ++i) out[i * n + k] = std::complex<T>(m[i + k * n], 0);
      continue;
    }
    for (int64_t i = 0; i < n; ++i) {
      const T re = m[i + k * n], im = m[i + (k + 1) * n];
      out[i * n + k] = std::complex<T>(re, im);
      out[i * n + k + 1] = std::complex<T>(re, -im);
    }
    ++k;
  }
}

template <class T>
void eig_real(const T* a, int64_t count, int64_t n, bool left, bool right, std::complex<T>* w,
              std::complex<T>* vl, std::complex<T>* vr) {
  const size_t nn = size_t(n * n);
  const size_t nv = static_cast<size_t>(n);
  std::vector<T> col(nn), wr(nv), wi(nv), l(left ? nn : 1), r(right ? nn : 1);
  const char jl = left ? 'V' : 'N', jr = right ? 'V' : 'N';
  T query = 0;
  int info = 0;
  geev(jl, jr, int(n), col.data(), wr.data(), wi.data(), l.data(), r.data(), &query, -1, &info);
  std::vector<T> work(size_t(work_size(query)));
  const std::complex<T> nan(kNaN<T>, kNaN<T>);
  for (int64_t b = 0; b < count; ++b) {
    transpose(a + b * n * n, n, n, col.data());  // row-major to column-major
    geev(jl, jr, int(n), col.data(), wr.data(), wi.data(), l.data(), r.data(), work.data(),
         int(work.size()), &info);
    std::complex<T>* wb = w + b * n;
    if (info != 0) {  // no convergence: NaNs, as the other decompositions
      std::fill(wb, wb + n, nan);
      if (left) std::fill(vl + b * n * n, vl + (b + 1) * n * n, nan);
      if (right) std::fill(vr + b * n * n, vr + (b + 1) * n * n, nan);
      continue;
    }
    for (int64_t k = 0; k < n; ++k) wb[k] = std::complex<T>(wr[size_t(k)], wi[size_t(k)]);
    if (left) unpack_eigenvectors(l.data(), wi.data(), n, vl + b * n * n);
    if (right) unpack_eigenvectors(r.data(), wi.data(), n, vr + b * n * n);
  }
}

// eig of complex matrices: cgeev/zgeev, whose results need no unpacking.
template <class T>
void eig_complex(const T* a, int64_t count, int64_t n, bool left, bool right, T* w, T* vl, T* vr) {
  const size_t nn = size_t(n * n);
  std::vector<T> col(nn), l(left ? nn : 1), r(right ? nn : 1);
  std::vector<Real<T>> rwork(size_t(2 * n));
  const char jl = left ? 'V' : 'N', jr = right ? 'V' : 'N';
  T query = 0;
  int info = 0;
  std::vector<T> w_query(static_cast<size_t>(n));
  geev(jl, jr, int(n), col.data(), w_query.data(), l.data(), r.data(), &query, -1, rwork.data(), &info);
  std::vector<T> work(size_t(work_size(query)));
  for (int64_t b = 0; b < count; ++b) {
    T* wb = w + b * n;
    transpose(a + b * n * n, n, n, col.data());  // row-major to column-major, not conjugated
    geev(jl, jr, int(n), col.data(), wb, l.data(), r.data(), work.data(), int(work.size()), rwork.data(),
         &info);
    if (info != 0) {  // no convergence: NaNs, as the other decompositions
      std::fill(wb, wb + n, kNaN<T>);
      if (left) std::fill(vl + b * n * n, vl + (b + 1) * n * n, kNaN<T>);
      if (right) std::fill(vr + b * n * n, vr + (b + 1) * n * n, kNaN<T>);
      continue;
    }
    if (left) transpose(l.data(), n, n, vl + b * n * n);
    if (right) transpose(r.data(), n, n, vr + b * n * n);
  }
}
}  // namespace

template <class T>
void eig(const T* a, int64_t count, int64_t n, bool left, bool right, std::complex<Real<T>>* w,
         std::complex<Real<T>>* vl, std::complex<Real<T>>* vr) {
  if (n == 0) return;
  if constexpr (kComplex<T>) {
    eig_complex(a, count, n, left, right, w, vl, vr);
  } else {
    eig_real(a, count, n, left, right, w, vl, vr);
  }
}

// The four LAPACK types.
#define JX_LINALG_INSTANTIATE(T)                                                               \
  template void cholesky<T>(const T*, T*, int64_t, int64_t, bool);                             \
  template void triangular_solve<T>(const T*, T*, int64_t, int64_t, int64_t, bool, bool, bool, \
                                    bool, bool);                                               \
  template void lu<T>(T*, int64_t, int64_t, int64_t, int32_t*, int32_t*);                      \
  template void qr<T>(const T*, int64_t, int64_t, int64_t, bool, T*, T*);                      \
  template void eigh<T>(const T*, int64_t, int64_t, bool, bool, Real<T>*, T*);                 \
  template void svd<T>(const T*, int64_t, int64_t, int64_t, bool, Real<T>*, T*, T*);
JX_LINALG_INSTANTIATE(float)
JX_LINALG_INSTANTIATE(double)
JX_LINALG_INSTANTIATE(c64)
JX_LINALG_INSTANTIATE(c128)
#undef JX_LINALG_INSTANTIATE
template void eig<float>(const float*, int64_t, int64_t, bool, bool, c64*, c64*, c64*);
template void eig<double>(const double*, int64_t, int64_t, bool, bool, c128*, c128*, c128*);
template void eig<c64>(const c64*, int64_t, int64_t, bool, bool, c64*, c64*, c64*);
template void eig<c128>(const c128*, int64_t, int64_t, bool, bool, c128*, c128*, c128*);

}  // namespace jx::cpu::linalg
