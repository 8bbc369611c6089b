#include "ops/common.h"

namespace jx::ops {

int64_t canonical_axis(const char* op, int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    throw IndexError(str("[", op, "] axis ", axis, " is out of bounds for an array of rank ", ndim,
                         "; valid axes are ", -ndim, "..", ndim - 1));
  return axis < 0 ? axis + ndim : axis;
}

std::vector<int64_t> canonical_axes(const char* op, const std::vector<int64_t>& axes,
                                    int64_t ndim) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  std::vector<bool> seen(size_t(ndim), false);
  for (int64_t a : axes) {
    int64_t c = canonical_axis(op, a, ndim);
    if (seen[size_t(c)])
      throw IndexError(str("[", op, "] axis ", a, " appears twice in ", list_str(axes)));
    seen[size_t(c)] = true;
    out.push_back(c);
  }
  return out;
}

Shape elementwise_shape(const char* op, std::span<const Aval> in) {
  Shape out = in[0].shape;
  for (size_t i = 1; i < in.size(); ++i) {
    const Shape& s = in[i].shape;
    if (s.size() != out.size())
      throw ShapeError(str("[", op, "] operands must have equal rank, got ", avals_str(in),
                           "; use jnp functions for NumPy rank broadcasting"));
    for (size_t d = 0; d < s.size(); ++d) {
      if (s[d] == out[d] || s[d] == 1) continue;
      if (out[d] == 1) {
        out[d] = s[d];
        continue;
      }
      throw ShapeError(str("[", op, "] shapes ", avals_str(in), " do not broadcast: dimension ", d,
                           " is ", out[d], " vs ", s[d]));
    }
  }
  return out;
}

void require_same_dtype(const char* op, std::span<const Aval> in) {
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].dtype != in[0].dtype)
      throw DTypeError(str("[", op, "] operands must have the same dtype, got ", avals_str(in),
                           "; convert with astype, or use jnp functions, which promote"));
}

bool all_weak(std::span<const Aval> in) {
  for (const Aval& a : in)
    if (!a.weak) return false;
  return true;
}

}  // namespace jx::ops
