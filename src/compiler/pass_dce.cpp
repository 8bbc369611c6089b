// Dead code elimination: one backward sweep from the outvars keeps an equation when one
// of its outputs is used later or when it has effects (passes::has_effects: a debug
// callback must print even if nothing reads its result); constvars that no kept
// equation reads are dropped with their constants. Invars always stay: they are the
// program's signature. Sub-jaxprs of control flow are kept whole, as JAX does when it
// cannot prune a loop's carry. Variables are renumbered densely.
#include "compiler/passes.h"

namespace jx::compiler {

ir::Jaxpr eliminate_dead_code(const ir::Jaxpr& j) {
  std::vector<bool> live(j.avals.size(), false);
  auto use = [&](const ir::Atom& a) {
    if (a.is_var()) live[size_t(a.var)] = true;
  };
  for (const ir::Atom& a : j.outvars) use(a);
  std::vector<bool> keep(j.eqns.size(), false);
  for (size_t i = j.eqns.size(); i-- > 0;) {
    const ir::Eqn& e = j.eqns[i];
    bool needed = passes::has_effects(e);
    for (int v : e.outputs) needed = needed || live[size_t(v)];
    if (!needed) continue;
    keep[i] = true;
    for (const ir::Atom& a : e.inputs) use(a);
  }
  // The kept variables are renumbered densely in binding order, so that the variables
  // earlier passes left unbound do not accumulate in `avals`.
  ir::Jaxpr out;
  std::vector<int> renamed(j.avals.size(), -1);
  auto bind = [&](int v) {
    renamed[size_t(v)] = out.new_var(j.avals[size_t(v)]);
    return renamed[size_t(v)];
  };
  auto read = [&](ir::Atom a) {
    if (a.is_var()) a.var = renamed[size_t(a.var)];
    return a;
  };
  for (size_t i = 0; i < j.constvars.size(); ++i) {
    if (!live[size_t(j.constvars[i])]) continue;
    out.constvars.push_back(bind(j.constvars[i]));
    out.consts.push_back(j.consts[i]);
  }
  for (int v : j.invars) out.invars.push_back(bind(v));
  for (size_t i = 0; i < j.eqns.size(); ++i) {
    if (!keep[i]) continue;
    ir::Eqn e = j.eqns[i];
    for (ir::Atom& a : e.inputs) a = read(a);
    for (int& v : e.outputs) v = bind(v);
    out.eqns.push_back(std::move(e));
  }
  for (const ir::Atom& a : j.outvars) out.outvars.push_back(read(a));
  return out;
}

}  // namespace jx::compiler
