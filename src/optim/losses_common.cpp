// Argument checks shared by the loss files; see losses_common.h.
#include "optim/losses_common.h"

#include <algorithm>

#include "jx/error.h"
#include "jx/numpy.h"
#include "support/str.h"

namespace jx::optim::detail {

namespace jnp = jx::numpy;

std::string describe(const Array& x) { return type_str(x.dtype(), x.shape()); }

void require_floating(const char* fn, const char* what, const Array& x) {
  if (!is_floating(x.dtype()))
    throw DTypeError(str("[optim.", fn, "] ", what, " must be floating-point, got ", describe(x),
                         " (Optax checks this too); convert it first, e.g. ", what,
                         ".astype(jx::float32)"));
}

void require_integer(const char* fn, const char* what, const Array& x) {
  if (!is_integer(x.dtype()))
    throw DTypeError(str("[optim.", fn, "] ", what, " must be integer class ids, got ",
                         describe(x), "; for one-hot or probability labels use "
                         "optim::softmax_cross_entropy, or convert with ",
                         what, ".astype(jx::int32)"));
}

void require_broadcastable(const char* fn, const char* a_name, const Array& a,
                           const char* b_name, const Array& b) {
  try {
    jnp::broadcast_shapes({a.shape(), b.shape()});
  } catch (const ShapeError&) {
    throw ShapeError(str("[optim.", fn, "] ", a_name, " ", describe(a), " and ", b_name, " ",
                         describe(b), " do not broadcast together; give ", b_name,
                         " the shape of ", a_name, " (or one that broadcasts to it)"));
  }
}

void require_same_shape(const char* fn, const char* a_name, const Array& a, const char* b_name,
                        const Array& b) {
  if (a.shape() != b.shape())
    throw ShapeError(str("[optim.", fn, "] ", a_name, " ", describe(a), " and ", b_name, " ",
                         describe(b), " must have the same shape (Optax does not broadcast "
                         "here); reshape ",
                         b_name, ", e.g. ", b_name, ".reshape(", a_name, ".shape())"));
}

Array weak_as(const Array& scalar, const Array& like) {
  if (!scalar.weak_type() || !is_floating(like.dtype())) return scalar;
  return scalar.astype(like.dtype());
}

std::vector<int64_t> normalize_axes(const char* fn, const Array& x, const Axes& axis) {
  const int64_t rank = x.ndim();
  std::vector<int64_t> out;
  if (!axis.axes) {
    for (int64_t i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : *axis.axes) {
    if (a < -rank || a >= rank)
      throw IndexError(str("[optim.", fn, "] axis ", a, " is out of bounds for ", describe(x),
                           " (rank ", rank, "); valid axes are ", -rank, "..", rank - 1));
    const int64_t c = a < 0 ? a + rank : a;
    if (std::find(out.begin(), out.end(), c) != out.end())
      throw ValueError(str("[optim.", fn, "] duplicate value in axis ", list_str(*axis.axes),
                           " for ", describe(x), "; list each axis once"));
    out.push_back(c);
  }
  return out;
}

}  // namespace jx::optim::detail
