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

// Throws ShapeError, naming `op` and the operands as the caller passed them (before any
// promotion), unless their shapes broadcast together.
void check_broadcast(const char* op, const Array& a, const Array& b);

using LaxBinary = Array (*)(const Array&, const Array&);
// check_broadcast + promote + equalize ranks + apply: the body of jnp.subtract, jnp.equal, ...
Array binary(const char* op, LaxBinary f, const Array& a, const Array& b);
// Same with inexact promotion (true_divide, arctan2, ...).
Array binary_inexact(const char* op, LaxBinary f, const Array& a, const Array& b);

}  // namespace jx::numpy::detail
