// jnp's complex-number functions (jax/_src/numpy/ufuncs.py): real, imag, conj, angle and
// the complex predicates. Real arrays pass through as jnp does: real(x) is x, imag(x) zeros.
#include <numbers>

#include "jx/numpy.h"
#include "numpy/promote.h"

namespace jx::numpy {

Array real(const Array& x) { return is_complex(x.dtype()) ? lax::real(x) : x; }

Array imag(const Array& x) {
  if (is_complex(x.dtype())) return lax::imag(x);
  return full_like(x, Array(0));
}

Array conjugate(const Array& x) { return is_complex(x.dtype()) ? lax::conj(x) : x; }
Array conj(const Array& x) { return conjugate(x); }

Array angle(const Array& z, bool deg) {
  Array re = real(z), im = imag(z);
  if (!is_inexact(re.dtype())) {  // integers and bools: float32, as jnp's canonical float
    re = lax::convert_element_type(re, default_float(), false);
    im = lax::convert_element_type(im, default_float(), false);
  }
  Array r = lax::atan2(im, re);
  return deg ? multiply(r, Array(180.0 / std::numbers::pi)) : r;
}

Array iscomplex(const Array& x) {
  if (!is_complex(x.dtype())) return full_like(x, Array(false), DType::Bool);
  return not_equal(lax::imag(x), Array(0.0));
}

Array isreal(const Array& x) {
  if (!is_complex(x.dtype())) return full_like(x, Array(true), DType::Bool);
  return equal(lax::imag(x), Array(0.0));
}

bool iscomplexobj(const Array& x) { return is_complex(x.dtype()); }
bool isrealobj(const Array& x) { return !is_complex(x.dtype()); }

}  // namespace jx::numpy

namespace jx {
Array Array::real() const { return numpy::real(*this); }
Array Array::imag() const { return numpy::imag(*this); }
Array Array::conj() const { return numpy::conjugate(*this); }
}  // namespace jx
