// Helpers for writing jvp and transpose rules in the family files. Rules are written with
// jx::lax functions, which bind primitives under whatever trace is current, so the same
// rule serves eager jvp, linearize (tangent ops get staged) and higher-order derivatives.
// An invalid (default-constructed) Array stands for a symbolic zero tangent/cotangent.
#pragma once
#include <span>

#include "jx/lax.h"
#include "ops/primitive.h"

namespace jx::ops::ad_rules {

inline bool is_zero(const Array& t) { return !t.valid(); }
// A materialized zero of the given type.
Array zeros(const Aval& a);
Array zeros_like(const Array& x);
// t, or a real zero of type `a` when t is a symbolic zero.
Array instantiate(const Array& t, const Aval& a);
// Sum of two tangents, either of which may be zero.
Array add_tangents(const Array& a, const Array& b);
// Tangent `t` of an operand broadcast up to `like`'s shape (elementwise operands may have
// size-1 dims); a zero stays zero.
Array bcast(const Array& t, const Array& like);
// Cotangent `ct` of an elementwise output summed down to operand type `a` (over the dims
// where the operand had size 1); a zero stays zero.
Array unbroadcast(const Array& ct, const Aval& a);
// t * c where t may be zero (zero stays zero); c is a primal-side value.
Array scale(const Array& t, const Array& c);
// A constant of like's dtype (weak) and rank (all dims 1), for formulas like 0.5 * x.
Array constant(double v, const Array& like);

}  // namespace jx::ops::ad_rules
