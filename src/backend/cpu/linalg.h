// Dense linear algebra over LAPACK (Debian's liblapack3, or whichever implementation the
// system's liblapack.so.3 alternative points to, e.g. OpenBLAS), as JAX's CPU backend calls
// it: potrf, getrf, geqrf/orgqr (ungqr), syevd (heevd), gesdd, and BLAS trsm.
//
// Every routine takes `count` row-major matrices stored one after another and handles the
// row-major/column-major difference itself, mostly by reading a row-major matrix as the
// column-major transpose (for complex that is a^T, not a^H: each routine says how it
// accounts for it). T is float, double, std::complex<float> or std::complex<double>;
// R = Real<T> is its real type. LAPACK's 32-bit integers bound each
// dimension below 2^31 (the caller checks).
#pragma once
#include <complex>
#include <cstdint>
#include <type_traits>

namespace jx::cpu::linalg {

template <class T>
struct RealOf {
  using type = T;
};
template <class R>
struct RealOf<std::complex<R>> {
  using type = R;
};
template <class T>
using Real = typename RealOf<T>::type;
template <class T>
constexpr bool kComplex = !std::is_same_v<T, Real<T>>;

// l = L with a = L L^H for each n x n matrix, the strict upper triangle zero. Only a's
// lower triangle is read, or with `symmetrize` (a + a^H) / 2 (in the same pass as the copy
// LAPACK needs anyway). A matrix that is not positive definite gives all NaN, as JAX.
template <class T>
void cholesky(const T* a, T* l, int64_t count, int64_t n, bool symmetrize);

// In place on b: solves op(a) x = b (left) or x op(a) = b (right) with a triangular.
// a: count x k x k, b: count x m x n, k = m (left) or n (right). op(a) is a, a^T
// (transpose), conj(a) (conjugate) or a^H (both); conjugate does nothing for real T.
template <class T>
void triangular_solve(const T* a, T* b, int64_t count, int64_t m, int64_t n, bool left, bool lower,
                      bool transpose, bool conjugate, bool unit_diagonal);

// In place: each m x n matrix becomes its LU factors (unit-diagonal L below the diagonal,
// U on and above), P a = L U. pivots: count x min(m,n), 0-based (row i was swapped with
// row pivots[i]); permutation: count x m, row i of P a is row permutation[i] of a.
template <class T>
void lu(T* a, int64_t count, int64_t m, int64_t n, int32_t* pivots, int32_t* permutation);

// a = q r for each m x n matrix (a is read only). full: q is m x m and r m x n; otherwise
// q is m x k and r k x n, k = min(m, n). q may be null (r only).
template <class T>
void qr(const T* a, int64_t count, int64_t m, int64_t n, bool full, T* q, T* r);

// Symmetric or Hermitian eigendecomposition (only the lower or upper triangle of a is read,
// or with `symmetrize` (a + a^H) / 2): ascending real eigenvalues w (count x n) and
// eigenvectors in the columns of v (count x n x n). A failed decomposition gives NaNs.
template <class T>
void eigh(const T* a, int64_t count, int64_t n, bool lower, bool symmetrize, Real<T>* w, T* v);
// General eigenproblem (geev): complex eigenvalues w [count, n] and, when asked, left and
// right eigenvectors [count, n, n] in columns (row-major), each of unit norm with its largest
// component real, as LAPACK returns them. u^H a = w u^H for the left ones, a v = w v for the
// right ones.
template <class T>
void eig(const T* a, int64_t count, int64_t n, bool left, bool right, std::complex<Real<T>>* w,
         std::complex<Real<T>>* vl, std::complex<Real<T>>* vr);

// a = u diag(s) vt with real s descending, k = min(m, n) values. full: u is m x m and vt
// n x n, otherwise m x k and k x n. u and vt are null for values only. A failed
// decomposition gives NaNs.
template <class T>
void svd(const T* a, int64_t count, int64_t m, int64_t n, bool full, Real<T>* s, T* u, T* vt);

}  // namespace jx::cpu::linalg
