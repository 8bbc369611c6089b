// jx::lax special functions: the special-function primitives' wrappers (rules in ops/special.cpp).
#include "jx/lax/special.h"

#include "transforms/bind.h"

namespace jx::lax {

using ops::Prim;

Array igamma(const Array& a, const Array& x) { return bind1(Prim::Igamma, {a, x}); }
Array igammac(const Array& a, const Array& x) { return bind1(Prim::Igammac, {a, x}); }
Array igamma_grad_a(const Array& a, const Array& x) { return bind1(Prim::IgammaGradA, {a, x}); }
Array betainc(const Array& a, const Array& b, const Array& x) {
  return bind1(Prim::RegularizedIncompleteBeta, {a, b, x});
}
Array zeta(const Array& x, const Array& q) { return bind1(Prim::Zeta, {x, q}); }
Array polygamma(const Array& m, const Array& x) { return bind1(Prim::Polygamma, {m, x}); }
Array bessel_i0e(const Array& x) { return bind1(Prim::BesselI0e, {x}); }
Array bessel_i1e(const Array& x) { return bind1(Prim::BesselI1e, {x}); }

}  // namespace jx::lax
