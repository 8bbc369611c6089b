// The passes of the compiler's pipeline (pipeline.h), one per file, and the few helpers
// they share. Each pass maps a jaxpr to an equivalent one whose invars and outvars keep
// their types exactly (shape, dtype, weak type); every replacement of a variable by
// another atom checks that the avals are equal, so no pass can change a program's type.
#pragma once
#include <optional>
#include <vector>

#include "ir/jaxpr.h"

namespace jx::compiler {

// pass_inline.cpp: replaces `pjit`, `checkpoint`, `custom_jvp_call` and `custom_vjp_call`
// equations by their bodies.
ir::Jaxpr inline_calls(const ir::Jaxpr& j);
// pass_simplify.cpp: algebraic identities and chains of shape ops.
ir::Jaxpr simplify(const ir::Jaxpr& j);
// pass_fold.cpp: evaluates equations on constants at compile time.
ir::Jaxpr fold_constants(const ir::Jaxpr& j);
// While one is alive on this thread, fold_constants creates no constvars (only literals
// and splat equations): the sub-jaxprs of control flow stay closed over nothing, as
// their primitives' rules expect.
class KeepClosed {
 public:
  KeepClosed();
  ~KeepClosed();
  KeepClosed(const KeepClosed&) = delete;
  KeepClosed& operator=(const KeepClosed&) = delete;

 private:
  bool saved_;
};
// pass_cse.cpp: reuses the first of identical equations.
ir::Jaxpr eliminate_common_subexpressions(const ir::Jaxpr& j);
// pass_dce.cpp: drops equations and constvars whose results are unused.
ir::Jaxpr eliminate_dead_code(const ir::Jaxpr& j);
// pass_conv_epilogue.cpp: folds a bias add and a relu into the convolution before them.
ir::Jaxpr fuse_conv_epilogues(const ir::Jaxpr& j);
// pass_per_example.cpp: the squared norms and (weighted) sums over examples of batched
// outer products (vmap(grad)'s per-example weight gradients) without materializing them.
ir::Jaxpr rewrite_per_example_products(const ir::Jaxpr& j);
// pass_scan_hoist.cpp: moves loop-invariant equations, products of xs slices and
// products accumulated into a carry out of scan bodies.
ir::Jaxpr hoist_from_scans(const ir::Jaxpr& j);
// pass_scan_remat.cpp: a ys that is a cheap elementwise function of other ys of its scan,
// read only by scans of the same length, is recomputed in them instead of stacked.
ir::Jaxpr recompute_scan_residuals(const ir::Jaxpr& j);
// scan_shard.cpp: a scan body whose carries are batches of `rows` rows that it never
// mixes, cut to rows / shards rows, so that each block of rows loops on its own thread
// (the largest shards <= max_shards that leaves each block enough work); nullopt when
// the body may mix rows or the loop is too small. Not a pipeline pass: the control-flow
// compiler builds the sharded body beside the program (JX_SCAN_SHARDS=0 disables it).
struct RowShards {
  ir::Jaxpr body;
  int shards = 1;
  std::vector<bool> row_inputs;  // per body input: split by rows (else read whole)
};
std::optional<RowShards> shard_scan_rows(const ir::Jaxpr& body, size_t num_consts, size_t num_carry,
                                         int max_shards);
// pass_duplicate.cpp: one copy of a cheap elementwise producer per kernel-fused reader,
// so no kernel writes it for another (runs once, after the fixpoint, for kernels only).
ir::Jaxpr duplicate_cheap_producers(const ir::Jaxpr& j);

namespace passes {

// An equation that must run even when its results are unused: a debug callback, an
// equation with no outputs, or a control-flow equation whose sub-jaxprs contain one.
bool has_effects(const ir::Eqn& e);

// Structural equality of two jaxprs (same variables, equations, literals bit for bit,
// params, constants by identity): how the pipeline detects its fixpoint.
bool same_jaxpr(const ir::Jaxpr& a, const ir::Jaxpr& b);

// Bit-exact equality of two 0-d literals, including dtype and weak type (so NaN equals
// the same NaN and -0.0 differs from 0.0).
bool same_literal(const Array& a, const Array& b);
size_t hash_literal(const Array& a);

// A 0-d concrete array holding `scalar`'s value, typed as `aval`'s dtype/weak (same dtype).
Array scalar_as(const Array& scalar, const ir::Aval& aval);

// The canonical form of a constant whose elements are all equal ("splat"):
// `out = broadcast_in_dim[shape=.. broadcast_dimensions=()] <0-d literal>`.
ir::Eqn splat_eqn(int out_var, const ir::Aval& aval, const Array& scalar);
bool is_splat_eqn(const ir::Eqn& e);

// Appends `prim(inputs)` to `eqns`, its one result a fresh variable of `j` typed by the
// primitive's abstract eval, or the existing variable `output` when that has exactly this
// type; nullopt (and nothing appended) when the abstract eval rejects the operands or the
// type differs.
std::optional<ir::Atom> emit_eqn(ir::Jaxpr& j, std::vector<ir::Eqn>& eqns, ops::Prim prim,
                                 std::vector<ir::Atom> inputs, ops::Params params, int output = -1);

// Variable substitution: each variable maps to itself until replaced by another atom
// (a variable defined earlier, or a literal).
class Substitution {
 public:
  explicit Substitution(size_t num_vars);
  const ir::Atom& operator()(const ir::Atom& a) const;
  void replace(int var, ir::Atom by);
  void grow(size_t num_vars);
  // Applies the substitution to every input of e and returns it.
  ir::Eqn apply(ir::Eqn e) const;

 private:
  std::vector<ir::Atom> to_;
};

// Where each variable of a jaxpr comes from, for passes that look at an operand's
// producer: its equation (index into `j.eqns`) or its constant value.
class Producers {
 public:
  explicit Producers(const ir::Jaxpr& j);  // constvars and all equations of j
  // Registers the equation j.eqns[index] (for passes that build j as they go).
  void add_eqn(size_t index);
  const ir::Eqn* eqn_of(const ir::Atom& a) const;
  const Array* const_of(const ir::Atom& a) const;  // concrete constvars only
  // The value of `a` when every element of it is the same: a 0-d literal, a constvar
  // whose elements are all equal, or a shape op (broadcast_in_dim, reshape, squeeze) of
  // such a value. Returns a 0-d array of a's dtype and weak type.
  std::optional<Array> splat_value(const ir::Atom& a) const;

 private:
  const ir::Jaxpr& j_;
  std::vector<int> eqn_;    // per variable: defining equation, or -1
  std::vector<int> const_;  // per variable: index into j.consts, or -1
  void grow();
};

}  // namespace passes
}  // namespace jx::compiler
