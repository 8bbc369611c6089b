// flax/linen/dtypes.py for the layers of layers_linear.cpp, normalization.cpp and
// attention.cpp: the dtype a layer computes in, and its inputs and parameters cast to it.
#pragma once
#include <optional>
#include <vector>

#include "jx/array.h"
#include "jx/error.h"
#include "jx/numpy.h"
#include "support/str.h"

namespace jx::nn::detail {

// Flax's canonicalize_dtype: `dtype` if given, else the result type of the valid arrays,
// raised to float32 when `inexact` asks for a floating type and they are all integers.
inline DType canonicalize_dtype(const std::vector<Array>& xs, std::optional<DType> dtype,
                                bool inexact = true) {
  DType t;
  if (dtype) {
    t = *dtype;
  } else {
    std::vector<Array> present;
    for (const Array& x : xs)
      if (x.valid()) present.push_back(x);
    t = numpy::result_type(present);
    if (inexact && !is_floating(t)) t = promote_types(t, DType::Float32);
  }
  if (inexact && !is_floating(t))
    throw DTypeError(str("[nn] the computation dtype must be a floating type, got ", dtype_name(t)));
  return t;
}

// Flax's promote_dtype: every valid array cast to canonicalize_dtype(xs, dtype); invalid
// (absent) ones stay absent.
inline std::vector<Array> promote_dtype(std::vector<Array> xs, std::optional<DType> dtype,
                                        bool inexact = true) {
  const DType t = canonicalize_dtype(xs, dtype, inexact);
  for (Array& x : xs)
    if (x.valid() && x.dtype() != t) x = x.astype(t);
  return xs;
}

}  // namespace jx::nn::detail
