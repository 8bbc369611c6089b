#include "jx/lax.h"
#include "transforms/bind.h"

namespace jx::lax {

using ops::Prim;

Array neg(const Array& x) { return bind1(Prim::Neg, {x}); }
Array sign(const Array& x) { return bind1(Prim::Sign, {x}); }
Array floor(const Array& x) { return bind1(Prim::Floor, {x}); }
Array ceil(const Array& x) { return bind1(Prim::Ceil, {x}); }
Array round(const Array& x, RoundingMethod method) {
  return bind1(Prim::Round, {x}, {{"rounding_method", int64_t(method)}});
}
Array is_finite(const Array& x) { return bind1(Prim::IsFinite, {x}); }
Array exp(const Array& x) { return bind1(Prim::Exp, {x}); }
Array exp2(const Array& x) { return bind1(Prim::Exp2, {x}); }
Array log(const Array& x) { return bind1(Prim::Log, {x}); }
Array log1p(const Array& x) { return bind1(Prim::Log1p, {x}); }
Array expm1(const Array& x) { return bind1(Prim::Expm1, {x}); }
Array tanh(const Array& x) { return bind1(Prim::Tanh, {x}); }
Array logistic(const Array& x) { return bind1(Prim::Logistic, {x}); }
Array sin(const Array& x) { return bind1(Prim::Sin, {x}); }
Array cos(const Array& x) { return bind1(Prim::Cos, {x}); }
Array tan(const Array& x) { return bind1(Prim::Tan, {x}); }
Array asin(const Array& x) { return bind1(Prim::Asin, {x}); }
Array acos(const Array& x) { return bind1(Prim::Acos, {x}); }
Array atan(const Array& x) { return bind1(Prim::Atan, {x}); }
Array sinh(const Array& x) { return bind1(Prim::Sinh, {x}); }
Array cosh(const Array& x) { return bind1(Prim::Cosh, {x}); }
Array asinh(const Array& x) { return bind1(Prim::Asinh, {x}); }
Array acosh(const Array& x) { return bind1(Prim::Acosh, {x}); }
Array atanh(const Array& x) { return bind1(Prim::Atanh, {x}); }
Array abs(const Array& x) { return bind1(Prim::Abs, {x}); }
Array sqrt(const Array& x) { return bind1(Prim::Sqrt, {x}); }
Array rsqrt(const Array& x) { return bind1(Prim::Rsqrt, {x}); }
Array cbrt(const Array& x) { return bind1(Prim::Cbrt, {x}); }
Array square(const Array& x) { return bind1(Prim::Square, {x}); }
Array integer_pow(const Array& x, int64_t y) { return bind1(Prim::IntegerPow, {x}, {{"y", y}}); }
Array bitwise_not(const Array& x) { return bind1(Prim::Not, {x}); }
Array population_count(const Array& x) { return bind1(Prim::PopulationCount, {x}); }
Array clz(const Array& x) { return bind1(Prim::Clz, {x}); }
Array lgamma(const Array& x) { return bind1(Prim::Lgamma, {x}); }
Array digamma(const Array& x) { return bind1(Prim::Digamma, {x}); }
Array erf(const Array& x) { return bind1(Prim::Erf, {x}); }
Array erfc(const Array& x) { return bind1(Prim::Erfc, {x}); }
Array erf_inv(const Array& x) { return bind1(Prim::ErfInv, {x}); }
Array copy(const Array& x) { return bind1(Prim::Copy, {x}); }
Array real(const Array& x) { return bind1(Prim::Real, {x}); }
Array imag(const Array& x) { return bind1(Prim::Imag, {x}); }
Array conj(const Array& x) { return bind1(Prim::Conj, {x}); }

}  // namespace jx::lax
