// Common subexpression elimination: an equation with the same primitive, params and
// inputs (after earlier replacements; literals compared bit for bit) as an earlier one
// is dropped and its outputs are read from the earlier one's. Every primitive is a pure
// function of its inputs and params except debug callbacks, which are never merged
// (two prints stay two prints). Sub-jaxpr params compare by identity, so two control-
// flow equations merge only when they hold the very same traced programs.
#include <unordered_map>

#include "compiler/passes.h"

namespace jx::compiler {
namespace {

struct EqnKey {
  const ir::Eqn* eqn;
};

struct EqnKeyHash {
  size_t operator()(const EqnKey& k) const {
    size_t h = size_t(k.eqn->prim) * 1000003u ^ k.eqn->params.hash();
    for (const ir::Atom& a : k.eqn->inputs)
      h = h * 31u + (a.is_var() ? size_t(a.var) : passes::hash_literal(a.literal) ^ 0x9e3779b9u);
    return h;
  }
};

struct EqnKeyEq {
  bool operator()(const EqnKey& x, const EqnKey& y) const {
    const ir::Eqn &a = *x.eqn, &b = *y.eqn;
    if (a.prim != b.prim || a.inputs.size() != b.inputs.size() ||
        a.outputs.size() != b.outputs.size() || !(a.params == b.params))
      return false;
    for (size_t i = 0; i < a.inputs.size(); ++i) {
      const ir::Atom &p = a.inputs[i], &q = b.inputs[i];
      if (p.is_var() != q.is_var()) return false;
      if (p.is_var() ? p.var != q.var : !passes::same_literal(p.literal, q.literal)) return false;
    }
    return true;
  }
};

}  // namespace

ir::Jaxpr eliminate_common_subexpressions(const ir::Jaxpr& j) {
  ir::Jaxpr out = j;
  out.eqns.clear();
  out.eqns.reserve(j.eqns.size());  // keys point into out.eqns: no reallocation
  passes::Substitution subst(j.avals.size());
  std::unordered_map<EqnKey, size_t, EqnKeyHash, EqnKeyEq> seen;
  for (const ir::Eqn& e : j.eqns) {
    out.eqns.push_back(subst.apply(e));
    const ir::Eqn& mine = out.eqns.back();
    if (passes::has_effects(mine)) continue;
    auto [it, inserted] = seen.emplace(EqnKey{&mine}, out.eqns.size() - 1);
    if (inserted) continue;
    const ir::Eqn& first = out.eqns[it->second];
    bool same_types = true;
    for (size_t k = 0; k < mine.outputs.size(); ++k)
      same_types = same_types && j.avals[size_t(mine.outputs[k])] == j.avals[size_t(first.outputs[k])];
    if (!same_types) continue;  // cannot happen for well-typed rules; keep both to be safe
    for (size_t k = 0; k < mine.outputs.size(); ++k)
      subst.replace(mine.outputs[k], ir::Atom::of_var(first.outputs[k]));
    out.eqns.pop_back();
  }
  for (ir::Atom& a : out.outvars) a = subst(a);
  return out;
}

}  // namespace jx::compiler
