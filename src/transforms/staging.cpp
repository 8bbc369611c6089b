#include "transforms/staging.h"

#include "ops/common.h"

namespace jx::tr {

Array StagingTrace::new_arg(const Aval& aval) {
  int v = jaxpr_.new_var(aval);
  jaxpr_.invars.push_back(v);
  return make_tracer_array(aval, std::make_shared<StagingTracer>(shared_from_this(), v));
}

ir::Atom StagingTrace::to_atom(const Array& x) {
  if (auto* t = tracer_of<StagingTracer>(x, this)) return ir::Atom::of_var(t->var);
  const detail::ArrayImpl* key = x.impl().get();
  if (x.is_concrete() && x.ndim() == 0) return ir::Atom::of_literal(x);
  auto it = const_vars_.find(key);
  if (it != const_vars_.end()) return ir::Atom::of_var(it->second);
  // A constant or a tracer of an enclosing transformation: captured as a constvar.
  int v = jaxpr_.new_var(ops::aval_of(x));
  jaxpr_.constvars.push_back(v);
  jaxpr_.consts.push_back(x);
  const_vars_.emplace(key, v);
  return ir::Atom::of_var(v);
}

Arrays StagingTrace::process_primitive(Prim p, std::span<const Array> in, const Params& params) {
  if (!stage_all_) {
    bool mine = false;
    for (const Array& x : in) mine = mine || tracer_of<StagingTracer>(x, this);
    if (!mine) return bind_with(parent(), p, in, params);
  }
  ir::Eqn e;
  e.prim = p;
  e.params = params;
  ops::Avals in_avals;
  for (const Array& x : in) {
    e.inputs.push_back(to_atom(x));
    in_avals.push_back(ops::aval_of(x));
  }
  ops::Avals out_avals = ops::abstract_eval(p, in_avals, params);
  Arrays outs;
  auto self = shared_from_this();
  for (const Aval& a : out_avals) {
    int v = jaxpr_.new_var(a);
    e.outputs.push_back(v);
    outs.push_back(make_tracer_array(a, std::make_shared<StagingTracer>(self, v)));
  }
  jaxpr_.eqns.push_back(std::move(e));
  return outs;
}

ir::Jaxpr StagingTrace::finish(std::span<const Array> outs) {
  jaxpr_.outvars.clear();
  for (const Array& x : outs) jaxpr_.outvars.push_back(to_atom(x));
  return jaxpr_;
}

}  // namespace jx::tr
