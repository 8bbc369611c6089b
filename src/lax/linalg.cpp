// jx::lax::linalg: the linear-algebra primitives' wrappers (rules in ops/linalg.cpp).
#include "jx/lax/linalg.h"

#include "jx/lax.h"
#include "transforms/bind.h"

namespace jx::lax::linalg {

using ops::Prim;

// Symmetrizing happens in the kernel, in the copy LAPACK needs anyway, and the jvp rules
// symmetrize the tangent (ops/linalg.cpp).
Array cholesky(const Array& x, bool symmetrize_input) {
  return bind1(Prim::Cholesky, {x}, {{"symmetrize_input", symmetrize_input}});
}

// As JAX's wrapper, conjugate_a is dropped for real a, so the primitive's params say what
// it computes.
Array triangular_solve(const Array& a, const Array& b, const TriangularSolveOptions& o) {
  const bool conj = o.conjugate_a && is_complex(a.dtype());
  return bind1(Prim::TriangularSolve, {a, b},
               {{"left_side", o.left_side}, {"lower", o.lower}, {"transpose_a", o.transpose_a},
                {"conjugate_a", conj}, {"unit_diagonal", o.unit_diagonal}});
}

LuResult lu(const Array& x) {
  ops::Arrays o = bind(Prim::Lu, {&x, 1});
  return {o[0], o[1], o[2]};
}

QrResult qr(const Array& x, bool full_matrices) {
  ops::Arrays o = bind(Prim::Qr, {&x, 1}, {{"full_matrices", full_matrices}});
  return {o[0], o[1]};
}

EighResult eigh(const Array& x, bool lower, bool symmetrize_input) {
  ops::Arrays o = bind(Prim::Eigh, {&x, 1}, {{"lower", lower}, {"symmetrize_input", symmetrize_input}});
  return {o[0], o[1]};
}

EigResult eig(const Array& x, bool compute_left_eigenvectors, bool compute_right_eigenvectors) {
  ops::Arrays o = bind(Prim::Eig, {&x, 1},
                       {{"compute_left_eigenvectors", compute_left_eigenvectors},
                        {"compute_right_eigenvectors", compute_right_eigenvectors}});
  EigResult r{o[0], Array(), Array()};
  if (compute_left_eigenvectors) r.vl = o[1];
  if (compute_right_eigenvectors) r.vr = o[compute_left_eigenvectors ? 2 : 1];
  return r;
}

SvdResult svd(const Array& x, bool full_matrices, bool compute_uv) {
  ops::Arrays o =
      bind(Prim::Svd, {&x, 1}, {{"full_matrices", full_matrices}, {"compute_uv", compute_uv}});
  if (!compute_uv) return {Array(), o[0], Array()};
  return {o[1], o[0], o[2]};
}

SchurResult schur(const Array& x, bool compute_schur_vectors) {
  ops::Arrays o = bind(Prim::Schur, {&x, 1}, {{"compute_schur_vectors", compute_schur_vectors}});
  return {o[0], compute_schur_vectors ? o[1] : Array()};
}

}  // namespace jx::lax::linalg
