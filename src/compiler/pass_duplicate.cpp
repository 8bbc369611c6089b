// Duplication of cheap producers, as XLA's fusion duplicates them: a cheap elementwise
// equation whose operands are read from memory anyway (invars, constants, library
// results, splats) and whose result several equations read gets one copy per reader, so
// each reader's kernel computes it inline. Otherwise the kernel that holds it writes it
// and the other kernels read it back: pmean's `g = psum(x) / n`, read by the gradient
// norm's reduction and by the optimizer update, costs a full write and read of g.
//
//   b = div a 2.0;  c = integer_pow[y=2] b;  ...;  d = select_n p e b
//   -> b = div a 2.0;  c = integer_pow[y=2] b;  ...;  b' = div a 2.0;  d = select_n p e b'
//
// It runs once, after the pipeline's fixpoint (CSE would merge the copies again), and
// only when kernels are generated. Only what fusion puts in kernels is copied, for
// readers that are kernel members too; a returned value is written anyway and stays.
#include "compiler/fusion.h"
#include "compiler/passes.h"

namespace jx::compiler {
namespace {

using ops::Prim;

bool is_cheap(Prim p) {
  switch (p) {
    case Prim::Add: case Prim::Sub: case Prim::Mul: case Prim::Div: case Prim::Neg:
    case Prim::Max: case Prim::Min: case Prim::ConvertElementType: case Prim::SelectN:
      return true;
    default:
      return false;
  }
}

}  // namespace

ir::Jaxpr duplicate_cheap_producers(const ir::Jaxpr& j) {
  std::vector<int> producer(j.avals.size(), -1);
  std::vector<std::vector<int>> readers(j.avals.size());  // distinct equations, in order
  std::vector<FusionRole> role(j.eqns.size());
  for (size_t i = 0; i < j.eqns.size(); ++i) {
    const ir::Eqn& e = j.eqns[i];
    role[i] = fusion_role(j, e);
    for (const ir::Atom& a : e.inputs)
      if (a.is_var() && (readers[size_t(a.var)].empty() || readers[size_t(a.var)].back() != int(i)))
        readers[size_t(a.var)].push_back(int(i));
    for (int v : e.outputs) producer[size_t(v)] = int(i);
  }
  std::vector<bool> returned(j.avals.size(), false);
  for (const ir::Atom& a : j.outvars)
    if (a.is_var()) returned[size_t(a.var)] = true;

  // An operand no kernel computes: the copy reads it from memory, as the original does.
  auto from_memory = [&](const ir::Atom& a) {
    if (!a.is_var() || producer[size_t(a.var)] < 0) return true;
    const int p = producer[size_t(a.var)];
    return role[size_t(p)] == FusionRole::Library || passes::is_splat_eqn(j.eqns[size_t(p)]);
  };
  auto duplicable = [&](size_t i) {
    const ir::Eqn& e = j.eqns[i];
    if (!is_cheap(e.prim) || role[i] != FusionRole::Elementwise || e.outputs.size() != 1) return false;
    const int v = e.outputs[0];
    if (returned[size_t(v)] || readers[size_t(v)].size() < 2) return false;
    for (int r : readers[size_t(v)])
      if (role[size_t(r)] == FusionRole::Library) return false;  // it is written anyway
    for (const ir::Atom& a : e.inputs)
      if (!from_memory(a)) return false;
    return true;
  };

  // Per reader: the duplicated values it reads, each to get a copy before it.
  std::vector<std::vector<int>> copies_for(j.eqns.size());
  bool any = false;
  for (size_t i = 0; i < j.eqns.size(); ++i) {
    if (!duplicable(i)) continue;
    const std::vector<int>& rs = readers[size_t(j.eqns[i].outputs[0])];
    for (size_t k = 1; k < rs.size(); ++k) copies_for[size_t(rs[k])].push_back(int(i));
    any = true;
  }
  if (!any) return j;

  ir::Jaxpr out = j;
  out.eqns.clear();
  for (size_t i = 0; i < j.eqns.size(); ++i) {
    ir::Eqn e = j.eqns[i];
    for (int src : copies_for[i]) {
      ir::Eqn copy = j.eqns[size_t(src)];
      const int from = copy.outputs[0];
      const int to = out.new_var(j.avals[size_t(from)]);
      copy.outputs[0] = to;
      out.eqns.push_back(std::move(copy));
      for (ir::Atom& a : e.inputs)
        if (a.is_var() && a.var == from) a.var = to;
    }
    out.eqns.push_back(std::move(e));
  }
  return out;
}

}  // namespace jx::compiler
