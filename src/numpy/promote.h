// NumPy-style argument handling shared by the jnp functions: JAX's dtype promotion and
// NumPy's rank broadcasting, applied before binding a lax primitive.
#pragma once
#include <vector>

#include "jx/array.h"
#include "jx/lax.h"

namespace jx::numpy::detail {

// Converts every operand to the JAX result type of all of them (weak types included).
std::vector<Array> promote(std::vector<Array> xs);
// Promotion for functions that need an inexact (floating) result: ints/bools -> float
// (weak stays weak), as jnp's promote_dtypes_inexact.
std::vector<Array> promote_inexact(std::vector<Array> xs);
// NumPy's broadcast of shapes; throws ShapeError naming `op`.
Shape broadcast_shapes(const char* op, const std::vector<Shape>& shapes);
// Prepends size-1 dims up to `rank` (free: aliases the buffer).
Array expand_to_rank(const Array& x, size_t rank);
// Gives all operands equal rank (NumPy rank promotion), without materializing broadcasts.
std::vector<Array> equalize_ranks(std::vector<Array> xs);
// Materializes x broadcast to `shape` (NumPy rules).
Array broadcast_to(const char* op, const Array& x, const Shape& shape);

using LaxBinary = Array (*)(const Array&, const Array&);
// promote + equalize ranks + apply: the body of jnp.add, jnp.multiply, ...
Array binary(LaxBinary f, const Array& a, const Array& b);
// Same with inexact promotion (true_divide, arctan2, ...).
Array binary_inexact(LaxBinary f, const Array& a, const Array& b);

}  // namespace jx::numpy::detail
