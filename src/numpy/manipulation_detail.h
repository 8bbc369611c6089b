// Helpers shared by the jnp manipulation and creation files.
#pragma once
#include <cstdint>
#include <vector>

#include "jx/array.h"

namespace jx::numpy::detail {

// x[..., start:stop, ...] along `axis` (canonical), with 0 <= start <= stop <= dim.
Array slice_axis(const Array& x, int64_t axis, int64_t start, int64_t stop);
// Canonical axes of an Axes argument; jx::none gives every axis.
std::vector<int64_t> axes_or_all(const char* op, const Axes& axes, int64_t ndim);

}  // namespace jx::numpy::detail
