// Array's operators: jnp semantics (promotion, broadcasting).
#include "jx/numpy.h"
#include "numpy/promote.h"

namespace jx {

namespace jd = numpy::detail;

Array operator+(const Array& a, const Array& b) { return jd::binary(lax::add, a, b); }
Array operator-(const Array& a, const Array& b) { return jd::binary(lax::sub, a, b); }
Array operator*(const Array& a, const Array& b) { return jd::binary(lax::mul, a, b); }
Array operator==(const Array& a, const Array& b) { return jd::binary(lax::eq, a, b); }
Array operator!=(const Array& a, const Array& b) { return jd::binary(lax::ne, a, b); }
Array operator<(const Array& a, const Array& b) { return jd::binary(lax::lt, a, b); }
Array operator<=(const Array& a, const Array& b) { return jd::binary(lax::le, a, b); }
Array operator>(const Array& a, const Array& b) { return jd::binary(lax::gt, a, b); }
Array operator>=(const Array& a, const Array& b) { return jd::binary(lax::ge, a, b); }
Array operator&(const Array& a, const Array& b) { return jd::binary(lax::bitwise_and, a, b); }
Array operator|(const Array& a, const Array& b) { return jd::binary(lax::bitwise_or, a, b); }
Array operator^(const Array& a, const Array& b) { return jd::binary(lax::bitwise_xor, a, b); }
Array operator<<(const Array& a, const Array& b) { return jd::binary(lax::shift_left, a, b); }

}  // namespace jx
