// Transformations of whole jaxprs, for the rules of higher-order primitives (control
// flow, jit's call, custom derivatives, remat): trace a function to a jaxpr, and the jvp,
// batched, partially evaluated and transposed forms of a jaxpr (JAX's jvp_jaxpr,
// batch_jaxpr, partial_eval_jaxpr_nounits, backward_pass).
//
// Every jaxpr here is closed over nothing: the constants a transformation captures are
// returned beside it and become its leading invars, so a primitive that holds it passes
// them as explicit operands.
#pragma once
#include <functional>
#include <vector>

#include "ir/jaxpr.h"
#include "transforms/trace.h"

namespace jx::tr {

using FlatFn = std::function<Arrays(const Arrays&)>;

struct TracedJaxpr {
  ir::Jaxpr jaxpr;  // invars: [consts..., args...]; no constvars
  Arrays consts;    // values for the leading invars (concrete arrays or outer tracers)
};

// f traced at the given input types, with the current trace as the parent (so values of
// enclosing transformations that f captures become consts).
TracedJaxpr trace_to_jaxpr(const FlatFn& f, const std::vector<Aval>& in_avals);

// Runs a closed jaxpr on `consts` then `args` under the current trace.
Arrays call_jaxpr(const ir::Jaxpr& j, const Arrays& consts, const Arrays& args);
Arrays call_jaxpr(const TracedJaxpr& j, const Arrays& args);

// jvp: invars [primals..., tangents of the inputs where nonzero[i]...] ->
// outvars [primal outs..., tangent outs...] (every tangent out instantiated).
TracedJaxpr jvp_jaxpr(const ir::Jaxpr& j, const std::vector<bool>& nonzero);

// vmap: invars batched at dim 0 where in_batched[i]; outvars batched at dim 0 where the
// returned out_batched[k] (true at least where force_out_batched[k]).
std::pair<TracedJaxpr, std::vector<bool>> batch_jaxpr(const ir::Jaxpr& j, int64_t axis_size,
                                                      const std::vector<bool>& in_batched,
                                                      const std::vector<bool>& force_out_batched);

// Splits j by which inputs are unknown (JAX's partial_eval_jaxpr_nounits):
//   known:   [known ins...]               -> [known outs..., residuals...]
//   unknown: [residuals..., unknown ins...] -> [unknown outs...]
// An equation is unknown when any of its inputs is. Outputs in `instantiate` are made
// unknown even when computable from known inputs (forwarded through a residual).
struct PartialEval {
  ir::Jaxpr known, unknown;
  std::vector<bool> out_unknown;
  int num_res = 0;
};
PartialEval partial_eval_jaxpr(const ir::Jaxpr& j, const std::vector<bool>& in_unknown,
                               const std::vector<bool>& instantiate);

// Transpose of a jaxpr linear in the invars where linear[i]:
//   [non-linear ins..., cotangents of the outs...] -> [cotangents of the linear ins...]
// (every cotangent instantiated).
TracedJaxpr transpose_jaxpr(const ir::Jaxpr& j, const std::vector<bool>& linear);

// The backward pass over j given its non-linear invars' values (entries where
// !linear[i]; others ignored) and the outs' cotangents (invalid = zero). Equations with
// only non-linear inputs are evaluated forward first. Returns one entry per invar
// (invalid for non-linear ones and for zero cotangents).
Arrays backward_pass_masked(const ir::Jaxpr& j, const std::vector<bool>& linear,
                            const Arrays& nonlinear_vals, const Arrays& cts_out);

}  // namespace jx::tr
