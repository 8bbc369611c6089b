// Algebraic simplification, one forward sweep. Each rule either forwards an equation's
// operand in place of its result (x + 0 -> x) or rewrites the equation into a simpler
// one with the same output variable (a chain of two transposes -> one transpose); the
// producers the rewritten equation no longer reads are left for DCE.
//
// A result is forwarded only when the operand has exactly the result's aval (shape,
// dtype, weak type): `x:f32[1,3] * ones:f32[4,3]` is not x, and neither is a weak x
// times a strong 1. Rules that are only exact for some dtypes say so:
//   x + 0, 0 + x, x - 0        -> x   (for floats, -0.0 + 0.0 gives -0.0 as XLA's
//                                      algebraic simplifier does; every other value is exact)
//   x * 1, 1 * x, x / 1        -> x   (exact, NaN included)
//   x * 0, 0 * x               -> 0   integers only: for floats NaN * 0 and inf * 0 are NaN
//   integer_pow(x, 1)          -> x
//   neg(neg(x))                -> x
//   convert_element_type to x's own dtype and weak type, reshape/broadcast_in_dim to x's
//   own shape, transpose by the identity, squeeze/rev of no dims, reductions over no
//   axes, a full slice, a zero pad, concatenate of one operand   -> x
//   select_n with one case, or with every case the same variable  -> that case
//   stop_gradient(x)           -> x   (the compiled program is never differentiated:
//                                      autodiff ran before jit compiles)
//   transpose(transpose(x, p), q)         -> transpose(x, p∘q)
//   reshape/squeeze of reshape/squeeze(x) -> one reshape of x
//   broadcast_in_dim of broadcast_in_dim  -> one broadcast_in_dim
//   reshape of a 0-d operand              -> broadcast_in_dim (the form of a splat)
#include "compiler/passes.h"
#include "ops/common.h"

namespace jx::compiler {
namespace {

using ops::Prim;
using ints = std::vector<int64_t>;

struct Rewrite {
  std::optional<ir::Atom> forward;  // the (single) result is this atom
  std::optional<ir::Eqn> eqn;       // or: the equation becomes this one
};

class Simplifier {
 public:
  Simplifier(ir::Jaxpr& out, const passes::Producers& producers)
      : out_(out), producers_(producers) {}

  Rewrite rewrite(const ir::Eqn& e) const {
    if (e.outputs.size() != 1) return {};
    const ir::Aval& result = out_.avals[size_t(e.outputs[0])];
    auto operand_if_same = [&](size_t i) -> Rewrite {
      if (i < e.inputs.size() && out_.aval_of(e.inputs[i]) == result) return {e.inputs[i], {}};
      return {};
    };
    const ops::Params& p = e.params;
    switch (e.prim) {
      case Prim::Add:
        if (is_value(e.inputs[1], 0)) return operand_if_same(0);
        if (is_value(e.inputs[0], 0)) return operand_if_same(1);
        return {};
      case Prim::Sub:
        return is_value(e.inputs[1], 0) ? operand_if_same(0) : Rewrite{};
      case Prim::Mul:
        if (is_integer(result.dtype)) {
          for (size_t i = 0; i < 2; ++i) {
            if (!is_value(e.inputs[i], 0)) continue;
            Array zero = passes::scalar_as(*producers_.splat_value(e.inputs[i]), result);
            if (result.shape.empty()) return {ir::Atom::of_literal(zero), {}};
            return {{}, passes::splat_eqn(e.outputs[0], result, zero)};
          }
        }
        if (is_value(e.inputs[1], 1)) return operand_if_same(0);
        if (is_value(e.inputs[0], 1)) return operand_if_same(1);
        return {};
      case Prim::Div:
        return is_value(e.inputs[1], 1) ? operand_if_same(0) : Rewrite{};
      case Prim::IntegerPow:
        return p.i("y") == 1 ? operand_if_same(0) : Rewrite{};
      case Prim::Neg:
        if (const ir::Eqn* inner = producers_.eqn_of(e.inputs[0]); inner && inner->prim == Prim::Neg)
          return {inner->inputs[0], {}};  // same aval: neg keeps the type
        return {};
      case Prim::ConvertElementType:
      case Prim::StopGradient:
      case Prim::Squeeze:
      case Prim::Rev:
      case Prim::Concatenate:
      case Prim::ReduceSum:
      case Prim::ReduceProd:
      case Prim::ReduceMax:
      case Prim::ReduceMin:
      case Prim::ReduceAnd:
      case Prim::ReduceOr:
      case Prim::ReduceXor:
        // Each is the identity exactly when its result has the operand's aval: a convert
        // to the same dtype and weak type, a squeeze/rev/reduction of no dims, a
        // concatenate of one operand. Squeeze chains are handled below.
        if (e.inputs.size() == 1 && !(e.prim == Prim::Squeeze && !p.ints("dimensions").empty()) &&
            !(e.prim == Prim::Rev && !p.ints("dimensions").empty()))
          if (Rewrite r = operand_if_same(0); r.forward) return r;
        return e.prim == Prim::Squeeze ? reshape_chain(e, result) : Rewrite{};
      case Prim::Reshape:
        if (!p.ints("dimensions").empty()) return {};
        if (Rewrite r = operand_if_same(0); r.forward) return r;
        return reshape_chain(e, result);
      case Prim::Transpose:
        return transpose_rule(e);
      case Prim::BroadcastInDim:
        if (Rewrite r = operand_if_same(0); r.forward) return r;
        return broadcast_chain(e, result);
      case Prim::Slice: {
        const ints& start = p.ints("start_indices");
        const ints& limit = p.ints("limit_indices");
        const Shape& in = out_.aval_of(e.inputs[0]).shape;
        bool full = true;
        for (size_t d = 0; d < in.size(); ++d) full = full && start[d] == 0 && limit[d] == in[d];
        for (const auto& [key, value] : p.items())  // strides: a list, or None for all 1
          if (auto* strides = std::get_if<ints>(&value); strides && key == "strides")
            for (int64_t s : *strides) full = full && s == 1;
        return full ? operand_if_same(0) : Rewrite{};
      }
      case Prim::Pad: {
        bool zero = true;
        for (const char* k : {"lo", "hi", "interior"})
          for (int64_t v : p.ints(k)) zero = zero && v == 0;
        return zero ? operand_if_same(0) : Rewrite{};
      }
      case Prim::SelectN: {
        bool all_same = e.inputs[1].is_var();
        for (size_t i = 2; i < e.inputs.size(); ++i)
          all_same = all_same && e.inputs[i].is_var() && e.inputs[i].var == e.inputs[1].var;
        return all_same || e.inputs.size() == 2 ? operand_if_same(1) : Rewrite{};
      }
      default:
        return {};
    }
  }

 private:
  bool is_value(const ir::Atom& a, double v) const {
    std::optional<Array> s = producers_.splat_value(a);
    // Through std::complex: a complex constant is v only when its imaginary part is 0.
    return s && s->item<std::complex<double>>() == std::complex<double>(v, 0);
  }

  static ir::Eqn with_input(const ir::Eqn& e, ir::Atom in, ops::Params params) {
    ir::Eqn r;
    r.prim = e.prim;
    r.inputs = {std::move(in)};
    r.outputs = e.outputs;
    r.params = std::move(params);
    return r;
  }

  static bool is_plain_reshape(const ir::Eqn* e) {
    return e && ((e->prim == Prim::Reshape && e->params.ints("dimensions").empty()) ||
                 e->prim == Prim::Squeeze);
  }

  Rewrite reshape_chain(const ir::Eqn& e, const ir::Aval& result) const {
    ints sizes(result.shape.begin(), result.shape.end());
    ops::Params reshape{{"new_sizes", sizes}, {"dimensions", ints{}}};
    const ir::Eqn* inner = producers_.eqn_of(e.inputs[0]);
    if (is_plain_reshape(inner)) {
      ir::Eqn r = with_input(e, inner->inputs[0], reshape);
      r.prim = Prim::Reshape;
      return {{}, r};
    }
    // A reshape of a 0-d value only inserts size-1 dims: a broadcast_in_dim, the form
    // in which fusion and constant folding recognize a splat.
    if (out_.aval_of(e.inputs[0]).shape.empty()) {
      ir::Eqn r = with_input(e, e.inputs[0],
                             ops::Params{{"shape", sizes}, {"broadcast_dimensions", ints{}}});
      r.prim = Prim::BroadcastInDim;
      return {{}, r};
    }
    return {};
  }

  Rewrite transpose_rule(const ir::Eqn& e) const {
    const ints& perm = e.params.ints("permutation");
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
    if (identity) return {e.inputs[0], {}};  // a transpose keeps dtype and weak type
    const ir::Eqn* inner = producers_.eqn_of(e.inputs[0]);
    if (!inner || inner->prim != Prim::Transpose) return {};
    // Output dim i of the outer is inner dim perm[i], which is x's dim inner_perm[perm[i]].
    const ints& inner_perm = inner->params.ints("permutation");
    ints composed;
    for (int64_t d : perm) composed.push_back(inner_perm[size_t(d)]);
    return {{}, with_input(e, inner->inputs[0], ops::Params{{"permutation", composed}})};
  }

  Rewrite broadcast_chain(const ir::Eqn& e, const ir::Aval& result) const {
    const ir::Eqn* inner = producers_.eqn_of(e.inputs[0]);
    if (!inner || inner->prim != Prim::BroadcastInDim) return {};
    // x's dim i went to inner dim bd1[i], which goes to output dim bd2[bd1[i]]; a size-1
    // dim of x still broadcasts, a full one keeps its size through both.
    const ints& bd1 = inner->params.ints("broadcast_dimensions");
    const ints& bd2 = e.params.ints("broadcast_dimensions");
    ints composed;
    for (int64_t d : bd1) composed.push_back(bd2[size_t(d)]);
    ints shape(result.shape.begin(), result.shape.end());
    return {{}, with_input(e, inner->inputs[0],
                           ops::Params{{"shape", shape}, {"broadcast_dimensions", composed}})};
  }

  ir::Jaxpr& out_;
  const passes::Producers& producers_;
};

}  // namespace

ir::Jaxpr simplify(const ir::Jaxpr& j) {
  ir::Jaxpr out = j;
  out.eqns.clear();
  passes::Producers producers(out);
  passes::Substitution subst(j.avals.size());
  Simplifier simplifier(out, producers);
  for (const ir::Eqn& original : j.eqns) {
    ir::Eqn e = subst.apply(original);
    // A rewritten equation may simplify further (a composed transpose that is the
    // identity). Each rewrite reads an operand further up the chain or reaches a
    // canonical form that no rule rewrites, so this ends; the bound is a guard.
    bool forwarded = false;
    for (int round = 0; round < 8; ++round) {
      Rewrite r = simplifier.rewrite(e);
      if (r.forward) {
        subst.replace(e.outputs[0], *r.forward);
        forwarded = true;
        break;
      }
      if (!r.eqn) break;
      e = std::move(*r.eqn);
    }
    if (forwarded) continue;
    out.eqns.push_back(std::move(e));
    producers.add_eqn(out.eqns.size() - 1);
  }
  for (ir::Atom& a : out.outvars) a = subst(a);
  return out;
}

}  // namespace jx::compiler
