// Helpers shared by src/scipy/*.cpp: JAX's promote_args_inexact and lax._const.
#pragma once
#include <limits>
#include <vector>

#include "jx/array.h"
#include "jx/numpy.h"
#include "numpy/promote.h"

namespace jx::scipy::detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// JAX's promote_args_inexact(fn, ...): every argument to the promoted inexact dtype (ints
// and bools -> float32, weak stays weak). With `fn`, shapes that do not broadcast together
// throw ShapeError naming it (before any arithmetic would, under another name).
inline std::vector<Array> inexact(std::vector<Array> xs, const char* fn = nullptr) {
  if (fn && xs.size() > 1) {
    std::vector<Shape> shapes;
    for (const Array& x : xs) shapes.push_back(x.shape());
    numpy::detail::broadcast_shapes(fn, shapes);
  }
  return numpy::detail::promote_inexact(std::move(xs));
}

// lax._const(like, v): a strong 0-d constant of like's dtype.
inline Array k(const Array& like, double v) { return numpy::scalar(v, like.dtype()); }

}  // namespace jx::scipy::detail
