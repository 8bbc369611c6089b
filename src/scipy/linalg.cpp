// jax.scipy.linalg (jax/_src/scipy/linalg.py), in part: schur.
#include "jx/lax/linalg.h"
#include "jx/scipy.h"
#include "support/str.h"

namespace jx::scipy::linalg {

std::pair<Array, Array> schur(const Array& a, const std::string& output) {
  if (output != "real" && output != "complex")
    throw ValueError(str("[jax.scipy.linalg.schur] output must be \"real\" or \"complex\", got \"", output, "\""));
  Array x = a;
  // JAX's to_complex_dtype: through the inexact dtype, so int32 becomes complex64.
  if (output == "complex" && !is_complex(x.dtype()))
    x = x.astype(complex_dtype(x.dtype() == DType::Float64 ? DType::Float64 : DType::Float32));
  auto [t, z] = lax::linalg::schur(x);
  return {t, z};
}

}  // namespace jx::scipy::linalg
