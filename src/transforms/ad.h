// Automatic differentiation: forward mode (JVPTrace), linearize (LinearizeTrace: primal
// runs, tangent is staged into a linear jaxpr), and the backward pass that transposes a
// linear jaxpr. grad = linearize + transpose, as in JAX, so only linear primitives need
// transpose rules. The public, pytree-level API is in include/jx/transforms.h.
#pragma once
#include <functional>
#include <memory>

#include "ir/jaxpr.h"
#include "transforms/trace.h"

namespace jx::tr {

using FlatFn = std::function<Arrays(const Arrays&)>;

// ---- helpers for jvp and transpose rules (invalid Array = symbolic zero) ----
Array zeros_like_aval(const Aval& a);
Array instantiate(const Array& t, const Aval& a);  // a real zero for a symbolic one
Array add_tangents(const Array& a, const Array& b);

// Forward mode: (f(primals), J(primals) . tangents). Tangents must match the primals'
// shapes and dtypes; an invalid tangent is a zero.
std::pair<Arrays, Arrays> jvp_flat(const FlatFn& f, const Arrays& primals, const Arrays& tangents);

// The linear map of f at primals, as a jaxpr from input tangents to output tangents.
struct Linearized {
  Arrays primals_out;
  std::vector<Aval> in_avals, out_avals;
  ir::Jaxpr linear;              // invars: one per input; outvars: the non-zero outputs
  std::vector<int> out_index;    // output position of each outvar of `linear`
};
Linearized linearize_flat(const FlatFn& f, const Arrays& primals);

// Evaluates J . tangents with the linear jaxpr (forward) ...
Arrays linear_apply(const Linearized& lin, const Arrays& tangents);
// ... and J^T . cotangents (backward pass). Invalid cotangents are zeros; the result has
// one real array per input.
Arrays linear_transpose(const Linearized& lin, const Arrays& cotangents);

// Cotangents of a linear jaxpr's invars given its outvars' cotangents (invalid = zero).
Arrays backward_pass(const ir::Jaxpr& j, const Arrays& cts_out);

}  // namespace jx::tr
