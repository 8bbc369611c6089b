// Helpers shared by the family files: shape rules and error messages.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "core/array_impl.h"
#include "ops/primitive.h"
#include "support/str.h"

namespace jx::ops {

// "f32[32,10]" for an aval.
inline std::string aval_str(const Aval& a) { return type_str(a.dtype, a.shape); }
inline std::string avals_str(std::span<const Aval> in) {
  std::string s;
  for (size_t i = 0; i < in.size(); ++i) s += (i ? ", " : "") + aval_str(in[i]);
  return s;
}

// Normalizes a possibly negative axis; throws IndexError naming `op`.
int64_t canonical_axis(const char* op, int64_t axis, int64_t ndim);
// Normalizes and checks for duplicates.
std::vector<int64_t> canonical_axes(const char* op, const std::vector<int64_t>& axes, int64_t ndim);

// n-ary elementwise: equal ranks, each dim equal or 1. Returns the output shape.
Shape elementwise_shape(const char* op, std::span<const Aval> in);
// Throws DTypeError unless all operands have the same dtype.
void require_same_dtype(const char* op, std::span<const Aval> in);
// The output is weak only if every operand is weak.
bool all_weak(std::span<const Aval> in);

}  // namespace jx::ops
