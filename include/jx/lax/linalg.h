// jx::lax::linalg: JAX's jax.lax.linalg, one function per linear-algebra primitive. Each
// takes a stack of matrices [..., m, n] (leading dims are batch dims) in float32, float64,
// complex64 or complex128, runs on LAPACK, and has JAX's derivative rules
// (docs/linalg.md lists their limits). For complex matrices ^H is the conjugate transpose.
// jx::numpy::linalg builds NumPy's API on these.
#pragma once
#include "jx/array.h"

namespace jx::lax::linalg {

// Lower Cholesky factor L, x = L L^H. Only x's lower triangle is read, after
// symmetrize_input's (x + x^H) / 2. A matrix that is not positive definite gives NaNs.
Array cholesky(const Array& x, bool symmetrize_input = true);

struct TriangularSolveOptions {
  bool left_side = false;  // solve op(a) x = b (true) or x op(a) = b (false)
  bool lower = false;      // a's lower triangle (true) or upper triangle is read
  bool transpose_a = false;  // op(a) = a^T, or a^H with conjugate_a
  bool conjugate_a = false;  // op(a) = conj(a), or a^H with transpose_a; ignored for real a
  bool unit_diagonal = false;  // a's diagonal is taken to be ones
};
// a: [..., k, k], b: [..., m, n] with k = m (left_side) or n; batch dims equal.
Array triangular_solve(const Array& a, const Array& b, const TriangularSolveOptions& options = {});

// P x = L U with partial pivoting: lu holds L (unit diagonal, below) and U (on and above);
// pivots [..., min(m, n)] (int32, 0-based: row i was swapped with row pivots[i]);
// permutation [..., m] (int32: row i of P x is row permutation[i] of x).
struct LuResult {
  Array lu, pivots, permutation;
};
LuResult lu(const Array& x);

// x = q r. full_matrices: q is [..., m, m] and r [..., m, n]; otherwise [..., m, k] and
// [..., k, n], k = min(m, n).
struct QrResult {
  Array q, r;
};
QrResult qr(const Array& x, bool full_matrices = true);

// x = v diag(w) v^H with ascending eigenvalues w (real: float32 for complex64, float64 for
// complex128) and eigenvectors in v's columns. Only the lower (or upper) triangle is read,
// after symmetrize_input's (x + x^H) / 2.
struct EighResult {
  Array v, w;
};
EighResult eigh(const Array& x, bool lower = true, bool symmetrize_input = true);

// The general eigenproblem (LAPACK geev): eigenvalues w [..., n] and, when asked, left
// eigenvectors vl (u^H x = w u^H) and right ones vr (x v = w v) [..., n, n] in columns, all
// complex64 (float32 or complex64 input) or complex128; each eigenvector has unit norm and
// its largest component real. Only the eigenvalues have a derivative (docs/linalg.md).
struct EigResult {
  Array w, vl, vr;  // vl / vr invalid unless computed
};
EigResult eig(const Array& x, bool compute_left_eigenvectors = true,
              bool compute_right_eigenvectors = true);

// x = u diag(s) vh with descending singular values (real, as eigh's w). full_matrices: u
// [..., m, m] and vh [..., n, n], otherwise [..., m, k] and [..., k, n]. With compute_uv =
// false only s is computed (u and vh are left invalid).
struct SvdResult {
  Array u, s, vh;
};
SvdResult svd(const Array& x, bool full_matrices = true, bool compute_uv = true);

// x = vs t vs^H (LAPACK gees) for real or complex square matrices: t upper triangular
// (complex), or quasi-upper-triangular with 2 x 2 diagonal blocks for complex-conjugate
// eigenvalue pairs (real); vs orthogonal or unitary. Eigenvalues in LAPACK's order (JAX's
// sort_eig_vals is not built). With compute_schur_vectors = false, vs is left invalid. No
// derivative, as in JAX.
struct SchurResult {
  Array t, vs;
};
SchurResult schur(const Array& x, bool compute_schur_vectors = true);

}  // namespace jx::lax::linalg
