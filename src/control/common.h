// Helpers shared by the control-flow primitives (cond.cpp, while.cpp, scan.cpp): tracing
// user bodies, small jaxpr surgery (reordering and padding invars, joining the constants
// of sibling jaxprs), which outputs carry non-zero tangents, and the carry/branch type
// checks with JAX's messages.
#pragma once
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "jx/control_flow.h"
#include "ops/common.h"
#include "transforms/jaxpr_transforms.h"

namespace jx::control {

using ops::Arrays;
using ops::Aval;
using ops::Params;
using ops::Prim;


// A user body traced to a jaxpr closed over nothing (captured values are `consts`, its
// leading invars), with the tree structures of its output parts.
struct TracedBody {
  ir::Jaxpr jaxpr;
  Arrays consts;
  std::vector<tree::TreeDef> defs;
};
TracedBody trace_body(const lax::cf::FlatBody& f, const std::vector<Aval>& in_avals);

std::vector<Aval> avals_of(const Arrays& xs);
bool is_float(const Aval& a);

// The result as an array of exactly type `a` (an eager loop's result may differ from the
// abstract value only in weak_type, e.g. after zero iterations).
Array as_aval(const Array& x, const Aval& a);

// A concrete int32 scalar, created without binding (so no equation is staged for it).
Array i32_scalar(int32_t v);

// Runs a closed jaxpr eagerly, whatever trace is current (for impl rules).
Arrays eval_eager(const ir::Jaxpr& j, const Arrays& args);

// j with its invars permuted: new invars[k] = old invars[order[k]].
ir::Jaxpr reorder_invars(ir::Jaxpr j, const std::vector<size_t>& order);
// j with its outvars selected/permuted: new outvars[k] = old outvars[order[k]].
ir::Jaxpr select_outvars(ir::Jaxpr j, const std::vector<size_t>& order);
// j with new unused invars of the given types inserted at position `pos`.
ir::Jaxpr insert_unused_invars(ir::Jaxpr j, size_t pos, const std::vector<Aval>& avals);

// Sibling jaxprs (cond branches) with different captured constants, made to take the same
// leading operands: each gets unused invars for the others' constants. Returns the
// jaxprs and the joined constants (branch 0's first).
std::pair<std::vector<ir::Jaxpr>, Arrays> join_consts(std::vector<tr::TracedJaxpr> js);

// Which outputs of j can have a non-zero tangent when the inputs where nz_in[i] do:
// data dependence through equations, stopped at integer/bool values and zero-tangent
// primitives. An over-approximation is safe (it only instantiates zeros).
std::vector<bool> nonzero_tangent_outs(const ir::Jaxpr& j, const std::vector<bool>& nz_in);

// Which outputs of j depend on the inputs where batched[i] (for batching fixpoints).
std::vector<bool> depends_on(const ir::Jaxpr& j, const std::vector<bool>& marked_in);

// A body linearized at symbolic inputs (JAX's partial evaluation of a jvp, done by running
// the body under linearize so that nested control flow splits itself too):
//   known:   [known.consts..., body ins...] -> [body outs..., residuals...]
//   tangent: [residuals..., tangents of the ins where in_nz...] -> [tangents of the outs
//            where out_nz...] (zeros instantiated where the linear map has none).
// out_nz must include every output with a non-zero tangent (nonzero_tangent_outs).
struct SplitBody {
  tr::TracedJaxpr known;
  ir::Jaxpr tangent;
  std::vector<Aval> res_avals;
};
SplitBody split_linearize(const ir::Jaxpr& body, const std::vector<bool>& in_nz, const std::vector<bool>& out_nz);

// The nonzero mask of tangents: valid and of a floating primal.
std::vector<bool> nonzero_mask(std::span<const Array> primals, std::span<const Array> tangents);

// Throws TypeError (JAX's _check_carry_type) when the carry output of a loop body
// differs from its input in tree structure, shape or dtype. `what` is "while_loop body"
// or "scan body"; `op` the construct for the bracketed prefix.
void check_carry(const char* op, const char* what, const tree::TreeDef& in_def,
                 const std::vector<Aval>& in_avals, const tree::TreeDef& out_def,
                 const std::vector<Aval>& out_avals);

// Weakly typed initial carries whose type differs from the body's output are converted
// to the output's type (JAX's _promote_weak_typed_inputs). Returns true if any changed.
bool promote_weak_carries(Arrays& init, const std::vector<Aval>& out_avals);

// Same shape and dtype (JAX's typematch ignores weak_type).
inline bool typematch(const Aval& a, const Aval& b) { return a.shape == b.shape && a.dtype == b.dtype; }

}  // namespace jx::control
