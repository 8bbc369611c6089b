// jnp: contractions (dot, matmul, einsum, tensordot, ...) and jnp.linalg.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.h"

namespace jx::numpy {

// All of these promote their operands with JAX's rules (weak types included) and lower to
// lax::dot_general. `preferred_element_type` sets the result dtype (accumulation type).
Array dot(const Array& a, const Array& b, std::optional<DType> preferred_element_type = std::nullopt);
// NumPy's matmul: 1-d operands are promoted to matrices and the added dim removed again;
// leading (batch) dims broadcast.
Array matmul(const Array& a, const Array& b,
             std::optional<DType> preferred_element_type = std::nullopt);
// Flattens both operands; they must have the same size. A complex a is conjugated.
Array vdot(const Array& a, const Array& b, std::optional<DType> preferred_element_type = std::nullopt);
// Sum over `axis` of conj(a) * b, with the other dims broadcast (the array API's vecdot).
Array vecdot(const Array& a, const Array& b, int64_t axis = -1,
             std::optional<DType> preferred_element_type = std::nullopt);
// Contracts the last axis of a with the last axis of b.
Array inner(const Array& a, const Array& b, std::optional<DType> preferred_element_type = std::nullopt);
// outer(a, b)[i, j] = ravel(a)[i] * ravel(b)[j].
Array outer(const Array& a, const Array& b);
// Contracts the last `axes` dims of a with the first `axes` dims of b.
Array tensordot(const Array& a, const Array& b, int64_t axes = 2,
                std::optional<DType> preferred_element_type = std::nullopt);
// axes = {a_axes, b_axes}: contracts a's a_axes with b's b_axes pairwise (negative axes
// count from the end), as jnp.tensordot(a, b, axes=((1, 0), (0, 2))).
using TensordotAxes = std::pair<std::vector<int64_t>, std::vector<int64_t>>;
Array tensordot(const Array& a, const Array& b, const TensordotAxes& axes,
                std::optional<DType> preferred_element_type = std::nullopt);
Array kron(const Array& a, const Array& b);
// jnp.cross: vectors of 2 or 3 components along axisa/axisb (a 2-vector has z = 0); the
// result's along axisc. `axis` sets all three. Two 2-vectors give the z component alone.
Array cross(const Array& a, const Array& b, int64_t axisa = -1, int64_t axisb = -1,
            int64_t axisc = -1, std::optional<int64_t> axis = std::nullopt);
// Sum of the `offset` diagonal over axes (axis1, axis2); ints narrower than the default int
// sum in the default int, as jnp.sum.
Array trace(const Array& a, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1,
            std::optional<DType> dtype = std::nullopt);

// einsum("ij,jk->ik", {a, b}): explicit or implicit output, '...' broadcasting, repeated
// labels (diagonals/traces), any number of operands, contracted pairwise into
// dot_general chains. optimize picks the order: "optimal" (fewest multiply-adds, up to
// 12 operands), "greedy", or "auto" (optimal up to 8 operands), as jnp.einsum.
Array einsum(std::string_view subscripts, const std::vector<Array>& operands,
             std::optional<DType> preferred_element_type = std::nullopt,
             std::string_view optimize = "auto");
template <class... A, std::enable_if_t<(std::is_convertible_v<const A&, Array> && ...), int> = 0>
Array einsum(std::string_view subscripts, const A&... operands) {
  return einsum(subscripts, std::vector<Array>{Array(operands)...});
}
// jnp.einsum_path: the contraction order einsum would take with `optimize`, in opt_einsum's
// format (each step names two positions in the current operand list; both leave it and
// their result joins its end), and a description with the naive and optimized costs.
struct EinsumPath {
  std::vector<std::pair<int64_t, int64_t>> path;
  std::string description;
};
EinsumPath einsum_path(std::string_view subscripts, const std::vector<Array>& operands,
                       std::string_view optimize = "greedy");

namespace linalg {

// On the linear-algebra primitives (jx/lax/linalg.h, over LAPACK), so all of these trace
// and differentiate (docs/linalg.md). Integers promote to float32 as in jnp; float16 and
// bfloat16 compute in float32. Complex64 and complex128 work too; the eigenvalues of eigh,
// singular values, logabsdet, norms and residuals are then real. Leading dims are batch dims.
Array det(const Array& a);
struct SlogdetResult {
  Array sign, logabsdet;  // complex a: sign is the phase (|sign| = 1), logabsdet real
};
SlogdetResult slogdet(const Array& a);
Array inv(const Array& a);
// b is a vector (..., n) when it is 1-d, else a matrix (..., n, k); batch dims broadcast.
Array solve(const Array& a, const Array& b);
// Lower-triangular L with a = L L^H (upper: U = L^H). A matrix that is not positive
// definite gives NaNs, as JAX (no exception).
Array cholesky(const Array& a, bool upper = false);
struct QRResult {
  Array Q, R;
};
// mode: "reduced" (default), "complete", or "r" (Q is left invalid).
QRResult qr(const Array& a, const std::string& mode = "reduced");
struct EighResult {
  Array eigenvalues, eigenvectors;  // ascending eigenvalues; eigenvectors in columns
};
// symmetrize_input (JAX's default) uses (a + a^H) / 2; otherwise the UPLO triangle ("L"/"U").
EighResult eigh(const Array& a, const std::string& UPLO = "L", bool symmetrize_input = true);
Array eigvalsh(const Array& a, const std::string& UPLO = "L");
struct EigResult {
  Array eigenvalues, eigenvectors;  // complex; right eigenvectors in columns
};
// A general (non-symmetric) real matrix: complex eigenvalues and right eigenvectors, in
// LAPACK's order (as NumPy's). No derivative.
EigResult eig(const Array& a);
Array eigvals(const Array& a);
struct SVDResult {
  Array U, S, Vh;  // descending singular values
};
SVDResult svd(const Array& a, bool full_matrices = true);
Array svdvals(const Array& a);
// Cutoff rtol * largest singular value; default rtol = 10 * max(m, n) * eps.
Array pinv(const Array& a, std::optional<double> rtol = std::nullopt);
struct LstsqResult {
  Array x, residuals, rank, singular_values;
};
// rcond default: eps * max(m, n), as jnp.
LstsqResult lstsq(const Array& a, const Array& b, std::optional<double> rcond = std::nullopt);
Array matrix_power(const Array& a, int64_t n);
// Default rtol: max(m, n) * eps.
Array matrix_rank(const Array& a, std::optional<double> rtol = std::nullopt);
// ord: none (2-norm / Frobenius), a number (inf, -inf, 0, 1, 2, -1, -2, p), or "fro" / "nuc".
struct NormOrd {
  std::optional<double> p;  // a numeric order
  std::string name;         // "fro" or "nuc"
  NormOrd() = default;
  NormOrd(None) {}
  NormOrd(double v) : p(v) {}
  NormOrd(int v) : p(double(v)) {}
  NormOrd(const char* s) : name(s) {}
  NormOrd(std::string s) : name(std::move(s)) {}
};
Array norm(const Array& x, const NormOrd& ord = {}, Axes axis = none, bool keepdims = false);

}  // namespace linalg
}  // namespace jx::numpy
