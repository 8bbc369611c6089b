#include "jx/lax.h"
#include "transforms/bind.h"

namespace jx::lax {

using ops::Prim;

Array add(const Array& x, const Array& y) { return bind1(Prim::Add, {x, y}); }
Array sub(const Array& x, const Array& y) { return bind1(Prim::Sub, {x, y}); }
Array mul(const Array& x, const Array& y) { return bind1(Prim::Mul, {x, y}); }
Array div(const Array& x, const Array& y) { return bind1(Prim::Div, {x, y}); }
Array rem(const Array& x, const Array& y) { return bind1(Prim::Rem, {x, y}); }
Array pow(const Array& x, const Array& y) { return bind1(Prim::Pow, {x, y}); }
Array max(const Array& x, const Array& y) { return bind1(Prim::Max, {x, y}); }
Array min(const Array& x, const Array& y) { return bind1(Prim::Min, {x, y}); }
Array atan2(const Array& x, const Array& y) { return bind1(Prim::Atan2, {x, y}); }
Array nextafter(const Array& x, const Array& y) { return bind1(Prim::Nextafter, {x, y}); }
Array complex(const Array& re, const Array& im) { return bind1(Prim::Complex, {re, im}); }
Array bitwise_and(const Array& x, const Array& y) { return bind1(Prim::And, {x, y}); }
Array bitwise_or(const Array& x, const Array& y) { return bind1(Prim::Or, {x, y}); }
Array bitwise_xor(const Array& x, const Array& y) { return bind1(Prim::Xor, {x, y}); }
Array shift_left(const Array& x, const Array& y) { return bind1(Prim::ShiftLeft, {x, y}); }
Array shift_right_arithmetic(const Array& x, const Array& y) {
  return bind1(Prim::ShiftRightArithmetic, {x, y});
}
Array shift_right_logical(const Array& x, const Array& y) {
  return bind1(Prim::ShiftRightLogical, {x, y});
}
Array eq(const Array& x, const Array& y) { return bind1(Prim::Eq, {x, y}); }
Array ne(const Array& x, const Array& y) { return bind1(Prim::Ne, {x, y}); }
Array lt(const Array& x, const Array& y) { return bind1(Prim::Lt, {x, y}); }
Array le(const Array& x, const Array& y) { return bind1(Prim::Le, {x, y}); }
Array gt(const Array& x, const Array& y) { return bind1(Prim::Gt, {x, y}); }
Array ge(const Array& x, const Array& y) { return bind1(Prim::Ge, {x, y}); }

}  // namespace jx::lax
