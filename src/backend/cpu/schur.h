// The Schur decomposition over LAPACK's gees, as JAX's CPU backend computes it: for each
// n x n row-major matrix a (count of them, one after another), a = vs t vs^H with vs
// orthogonal (unitary) and t upper triangular (complex) or quasi-upper-triangular (real:
// 2 x 2 blocks on the diagonal for complex-conjugate eigenvalue pairs, in LAPACK's standard
// form). Eigenvalues are not reordered. vs may be null. A decomposition that does not
// converge gives NaNs. T: float, double, std::complex<float>, std::complex<double>.
#pragma once
#include <cstdint>

namespace jx::cpu::linalg {

template <class T>
void schur(const T* a, int64_t count, int64_t n, T* t, T* vs);

}  // namespace jx::cpu::linalg
