// Inlining: a `pjit` equation (a nested jit call), a `checkpoint` equation (remat) or a
// `custom_jvp_call` / `custom_vjp_call` is replaced by the equations of its sub-jaxpr
// (param "jaxpr", or "call_jaxpr" for the custom calls; operands = its invars), with the
// sub-jaxpr's variables renamed into the caller's. Nested calls are inlined recursively.
// Remat only changes what autodiff saves for the backward pass, and a custom derivative
// rule only what autodiff computes; autodiff has happened before jit compiles, so their
// bodies run inline like any call (as XLA's lowering of them does). Without this, an
// inference step's nn::relu (a custom_jvp) ran op by op in the interpreter, outside the
// fused kernels and the convolution epilogues.
// Sub-jaxprs of control flow (cond, while, scan) are left whole; the pipeline optimizes
// them on their own.
#include "compiler/passes.h"
#include "ops/common.h"

namespace jx::compiler {
namespace {

bool is_inlined_call(ops::Prim p) {
  return p == ops::Prim::Pjit || p == ops::Prim::Remat || p == ops::Prim::CustomJvpCall ||
         p == ops::Prim::CustomVjpCall;
}

const char* body_param(ops::Prim p) {
  return p == ops::Prim::CustomJvpCall || p == ops::Prim::CustomVjpCall ? "call_jaxpr" : "jaxpr";
}

// Appends src's equations to `out`, reading src's variables through `env` (one atom of
// `out` per variable of src; its invars and constvars are bound by the caller).
void emit_body(ir::Jaxpr& out, const ir::Jaxpr& src, std::vector<ir::Atom>& env) {
  auto read = [&](const ir::Atom& a) -> ir::Atom {
    if (!a.is_var()) return a;
    const ir::Atom& r = env[size_t(a.var)];
    JX_CHECK(r.is_var() || r.literal.valid(), "[inline] variable used before it is bound");
    return r;
  };
  for (const ir::Eqn& e : src.eqns) {
    std::vector<ir::Atom> ins;
    for (const ir::Atom& a : e.inputs) ins.push_back(read(a));
    if (!is_inlined_call(e.prim)) {
      ir::Eqn copy;
      copy.prim = e.prim;
      copy.params = e.params;
      copy.inputs = std::move(ins);
      for (int v : e.outputs) {
        int nv = out.new_var(src.avals[size_t(v)]);
        copy.outputs.push_back(nv);
        env[size_t(v)] = ir::Atom::of_var(nv);
      }
      out.eqns.push_back(std::move(copy));
      continue;
    }
    const ir::Jaxpr& body = ir::jaxpr_of(e.params, body_param(e.prim));
    JX_CHECK(body.invars.size() == ins.size() && body.outvars.size() == e.outputs.size(), "[inline] ",
             ops::name(e.prim), " with ", ins.size(), " operands and ", e.outputs.size(),
             " results holds a jaxpr of ", body.invars.size(), " invars and ", body.outvars.size(),
             " outvars");
    std::vector<ir::Atom> body_env(body.avals.size());
    for (size_t i = 0; i < body.constvars.size(); ++i) {
      int nv = out.new_var(body.avals[size_t(body.constvars[i])]);
      out.constvars.push_back(nv);
      out.consts.push_back(body.consts[i]);
      body_env[size_t(body.constvars[i])] = ir::Atom::of_var(nv);
    }
    for (size_t i = 0; i < ins.size(); ++i) {
      JX_CHECK(body.avals[size_t(body.invars[i])] == out.aval_of(ins[i]), "[inline] operand ", i,
               " of ", ops::name(e.prim), " is ", ops::aval_str(out.aval_of(ins[i])),
               " but the body's invar is ", ops::aval_str(body.avals[size_t(body.invars[i])]));
      body_env[size_t(body.invars[i])] = ins[i];
    }
    emit_body(out, body, body_env);
    for (size_t k = 0; k < e.outputs.size(); ++k) {
      const ir::Atom& a = body.outvars[k];
      env[size_t(e.outputs[k])] = a.is_var() ? body_env[size_t(a.var)] : a;
    }
  }
}

}  // namespace

ir::Jaxpr inline_calls(const ir::Jaxpr& j) {
  bool any = false;
  for (const ir::Eqn& e : j.eqns) any = any || is_inlined_call(e.prim);
  if (!any) return j;
  // A fresh jaxpr with the same constvars and invars first, so their types stay put.
  ir::Jaxpr out;
  std::vector<ir::Atom> env(j.avals.size());
  for (size_t i = 0; i < j.constvars.size(); ++i) {
    int v = out.new_var(j.avals[size_t(j.constvars[i])]);
    out.constvars.push_back(v);
    out.consts.push_back(j.consts[i]);
    env[size_t(j.constvars[i])] = ir::Atom::of_var(v);
  }
  for (int iv : j.invars) {
    int v = out.new_var(j.avals[size_t(iv)]);
    out.invars.push_back(v);
    env[size_t(iv)] = ir::Atom::of_var(v);
  }
  emit_body(out, j, env);
  for (const ir::Atom& a : j.outvars) out.outvars.push_back(a.is_var() ? env[size_t(a.var)] : a);
  return out;
}

}  // namespace jx::compiler
