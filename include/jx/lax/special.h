// jx::lax special functions: jax.lax's igamma, igammac, igamma_grad_a, betainc, zeta,
// polygamma, bessel_i0e and bessel_i1e, one primitive each (src/ops/special.cpp).
// Operands share one floating dtype and have equal rank, each dim equal or 1 (as the
// binary lax ops); jx::scipy::special (jx/scipy.h) promotes and broadcasts NumPy-style.
// docs/scipy.md lists the algorithms, their accuracy and which arguments differentiate.
#pragma once
#include "jx/array.h"

namespace jx::lax {

// Regularized lower incomplete gamma P(a, x) = gamma(a, x) / Gamma(a); NaN for a < 0,
// x < 0 or a = x = 0. Differentiable in both (d/da is igamma_grad_a).
Array igamma(const Array& a, const Array& x);
// Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x), accurate where Q is small.
Array igammac(const Array& a, const Array& x);
// dP(a, x)/da. Differentiable in x only.
Array igamma_grad_a(const Array& a, const Array& x);
// Regularized incomplete beta I_x(a, b) (primitive regularized_incomplete_beta); NaN
// outside a, b >= 0, 0 <= x <= 1. Differentiable in x only, as JAX's.
Array betainc(const Array& a, const Array& b, const Array& x);
// Hurwitz zeta(x, q) = sum_k (q + k)^-x for x > 1. Differentiable in q only.
Array zeta(const Array& x, const Array& q);
// psi^(m)(x), the m-th derivative of digamma; m a natural number (NaN otherwise), given
// as a float of x's dtype. Differentiable in x only.
Array polygamma(const Array& m, const Array& x);
// exp(-|x|) I0(x) and exp(-|x|) I1(x), the exponentially scaled modified Bessel functions.
Array bessel_i0e(const Array& x);
Array bessel_i1e(const Array& x);

}  // namespace jx::lax
