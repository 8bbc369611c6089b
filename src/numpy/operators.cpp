// Array's operators: the jnp functions they stand for (promotion, broadcasting, and jnp's
// bool rules: bool + bool is logical or, bool * bool logical and).
#include "jx/numpy.h"

namespace jx {

namespace jnp = numpy;

Array operator+(const Array& a, const Array& b) { return jnp::add(a, b); }
Array operator-(const Array& a, const Array& b) { return jnp::subtract(a, b); }
Array operator*(const Array& a, const Array& b) { return jnp::multiply(a, b); }
Array operator/(const Array& a, const Array& b) { return jnp::true_divide(a, b); }
Array operator%(const Array& a, const Array& b) { return jnp::remainder(a, b); }
Array operator-(const Array& a) { return jnp::negative(a); }
Array operator+(const Array& a) { return jnp::positive(a); }
Array operator==(const Array& a, const Array& b) { return jnp::equal(a, b); }
Array operator!=(const Array& a, const Array& b) { return jnp::not_equal(a, b); }
Array operator<(const Array& a, const Array& b) { return jnp::less(a, b); }
Array operator<=(const Array& a, const Array& b) { return jnp::less_equal(a, b); }
Array operator>(const Array& a, const Array& b) { return jnp::greater(a, b); }
Array operator>=(const Array& a, const Array& b) { return jnp::greater_equal(a, b); }
Array operator&(const Array& a, const Array& b) { return jnp::bitwise_and(a, b); }
Array operator|(const Array& a, const Array& b) { return jnp::bitwise_or(a, b); }
Array operator^(const Array& a, const Array& b) { return jnp::bitwise_xor(a, b); }
Array operator~(const Array& a) { return jnp::invert(a); }
Array operator!(const Array& a) { return jnp::logical_not(a); }
Array operator<<(const Array& a, const Array& b) { return jnp::left_shift(a, b); }
Array operator>>(const Array& a, const Array& b) { return jnp::right_shift(a, b); }

}  // namespace jx
