// Small dense linear-algebra routines for jnp.linalg: row-major float64 matrices, one
// matrix at a time (callers loop over batch dims). Textbook algorithms chosen for
// robustness over speed: LU with partial pivoting, Cholesky, Householder QR (LAPACK's sign
// conventions, so Q and R match NumPy's), cyclic Jacobi for eigh and one-sided Jacobi SVD.
#pragma once
#include <cstdint>

namespace jx::cpu::linalg {

// In-place LU of an n x n matrix: a = P L U with unit-diagonal L below the diagonal and U
// on and above it. perm[i] is the original row now at row i. Returns the permutation's
// parity (0 even, 1 odd).
int lu(double* a, int64_t n, int64_t* perm);

// det and log|det| with its sign; a singular matrix gives det 0, sign 0, logabs -inf.
double det(const double* a, int64_t n);
void slogdet(const double* a, int64_t n, double* sign, double* logabsdet);

// x = a^-1 b for b of shape n x k (row-major). A singular a gives infs/NaNs, as LAPACK.
void solve(const double* a, const double* b, int64_t n, int64_t k, double* x);

// Lower Cholesky factor of the lower triangle of a; false (and NaNs in l) if a is not
// positive definite.
bool cholesky(const double* a, int64_t n, double* l);

// Householder QR of an m x n matrix. q: m x qcols (qcols = min(m,n) or m), r: rrows x n
// (rrows = qcols). q may be null (mode "r").
void qr(const double* a, int64_t m, int64_t n, double* q, int64_t qcols, double* r);

// Symmetric eigendecomposition of a (only its values are read, assumed symmetric):
// ascending eigenvalues w and eigenvectors in the columns of v (n x n, may be null).
void eigh(const double* a, int64_t n, double* w, double* v);

// a (m x n) = u diag(s) vt with s descending (k = min(m,n) values). full: u is m x m and
// vt n x n; otherwise u is m x k and vt k x n. u and vt may be null (values only).
void svd(const double* a, int64_t m, int64_t n, bool full, double* u, double* s, double* vt);

}  // namespace jx::cpu::linalg
