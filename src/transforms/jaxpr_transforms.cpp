#include "transforms/jaxpr_transforms.h"

#include "ops/batching.h"
#include "ops/common.h"
#include "support/profiler.h"
#include "transforms/ad.h"
#include "transforms/batching.h"
#include "transforms/bind.h"
#include "transforms/staging.h"

namespace jx::tr {

TracedJaxpr trace_to_jaxpr(const FlatFn& f, const std::vector<Aval>& in_avals) {
  JX_PROFILE_SCOPE("jit", "trace");
  auto trace = std::make_shared<StagingTrace>(current_trace(), /*stage_all=*/true);
  Arrays in;
  for (const Aval& a : in_avals) in.push_back(trace->new_arg(a));
  Arrays outs;
  {
    CurrentTraceGuard g(trace.get());
    outs = f(in);
  }
  TracedJaxpr r;
  r.jaxpr = trace->finish(outs);
  trace->deactivate();
  r.jaxpr.invars.insert(r.jaxpr.invars.begin(), r.jaxpr.constvars.begin(), r.jaxpr.constvars.end());
  r.jaxpr.constvars.clear();
  r.consts = std::move(r.jaxpr.consts);
  r.jaxpr.consts.clear();
  return r;
}

Arrays call_jaxpr(const ir::Jaxpr& j, const Arrays& consts, const Arrays& args) {
  Arrays all = consts;
  all.insert(all.end(), args.begin(), args.end());
  return ir::eval_jaxpr(j, all);
}
Arrays call_jaxpr(const TracedJaxpr& j, const Arrays& args) { return call_jaxpr(j.jaxpr, j.consts, args); }

TracedJaxpr jvp_jaxpr(const ir::Jaxpr& j, const std::vector<bool>& nonzero) {
  JX_CHECK(nonzero.size() == j.invars.size(), "jvp_jaxpr: mask size");
  std::vector<Aval> in = j.in_avals();
  size_t n = in.size();
  for (size_t i = 0; i < n; ++i)
    if (nonzero[i]) in.push_back(j.avals[size_t(j.invars[i])]);
  return trace_to_jaxpr(
      [&](const Arrays& xs) {
        Arrays primals(xs.begin(), xs.begin() + long(n)), tangents(n);
        size_t k = n;
        for (size_t i = 0; i < n; ++i)
          if (nonzero[i]) tangents[i] = xs[k++];
        auto [po, to] = jvp_flat([&](const Arrays& a) { return ir::eval_jaxpr(j, a); }, primals, tangents);
        po.insert(po.end(), to.begin(), to.end());
        return po;
      },
      in);
}

std::pair<TracedJaxpr, std::vector<bool>> batch_jaxpr(const ir::Jaxpr& j, int64_t axis_size,
                                                      const std::vector<bool>& in_batched,
                                                      const std::vector<bool>& force_out_batched) {
  JX_CHECK(in_batched.size() == j.invars.size(), "batch_jaxpr: mask size");
  std::vector<Aval> in = j.in_avals();
  std::vector<int> dims;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in_batched[i]) in[i].shape.insert(0, axis_size);
    dims.push_back(in_batched[i] ? 0 : ops::batching::kNotMapped);
  }
  std::vector<bool> out_batched;
  TracedJaxpr t = trace_to_jaxpr(
      [&](const Arrays& xs) {
        auto [outs, od] = vmap_flat_dims([&](const Arrays& a) { return ir::eval_jaxpr(j, a); }, xs,
                                         dims, axis_size);
        out_batched.clear();
        for (size_t k = 0; k < outs.size(); ++k) {
          bool force = k < force_out_batched.size() && force_out_batched[k];
          if (od[k] == ops::batching::kNotMapped && !force) {
            out_batched.push_back(false);
            continue;
          }
          outs[k] = ops::batching::materialize_at(outs[k], od[k], axis_size, 0);
          out_batched.push_back(true);
        }
        return outs;
      },
      in);
  return {std::move(t), std::move(out_batched)};
}

PartialEval partial_eval_jaxpr(const ir::Jaxpr& j, const std::vector<bool>& in_unknown,
                               const std::vector<bool>& instantiate) {
  JX_CHECK(in_unknown.size() == j.invars.size(), "partial_eval_jaxpr: mask size");
  PartialEval pe;
  pe.known.avals = j.avals;
  pe.unknown.avals = j.avals;
  pe.known.constvars = j.constvars;
  pe.known.consts = j.consts;
  std::vector<bool> unknown(j.avals.size(), false), is_res(j.avals.size(), false);
  std::vector<int> residuals;
  auto add_res = [&](int v) {
    if (!is_res[size_t(v)]) {
      is_res[size_t(v)] = true;
      residuals.push_back(v);
    }
  };
  std::vector<int> unknown_ins;
  for (size_t i = 0; i < j.invars.size(); ++i) {
    int v = j.invars[i];
    if (in_unknown[i]) {
      unknown[size_t(v)] = true;
      unknown_ins.push_back(v);
    } else {
      pe.known.invars.push_back(v);
    }
  }
  for (const ir::Eqn& e : j.eqns) {
    bool unk = false;
    for (const ir::Atom& a : e.inputs) unk = unk || (a.is_var() && unknown[size_t(a.var)]);
    if (!unk) {
      pe.known.eqns.push_back(e);
      continue;
    }
    for (const ir::Atom& a : e.inputs)
      if (a.is_var() && !unknown[size_t(a.var)]) add_res(a.var);
    for (int o : e.outputs) unknown[size_t(o)] = true;
    pe.unknown.eqns.push_back(e);
  }
  for (size_t k = 0; k < j.outvars.size(); ++k) {
    const ir::Atom& a = j.outvars[k];
    bool unk = a.is_var() && unknown[size_t(a.var)];
    bool inst = k < instantiate.size() && instantiate[k];
    pe.out_unknown.push_back(unk || inst);
    if (unk || inst) {
      if (!unk && a.is_var()) add_res(a.var);
      pe.unknown.outvars.push_back(a);
    } else {
      pe.known.outvars.push_back(a);
    }
  }
  // A known constvar used by the unknown side is forwarded as a residual like any other.
  for (int v : residuals) pe.known.outvars.push_back(ir::Atom::of_var(v));
  pe.unknown.invars = residuals;
  pe.unknown.invars.insert(pe.unknown.invars.end(), unknown_ins.begin(), unknown_ins.end());
  pe.num_res = int(residuals.size());
  return pe;
}

TracedJaxpr transpose_jaxpr(const ir::Jaxpr& j, const std::vector<bool>& linear) {
  JX_CHECK(linear.size() == j.invars.size(), "transpose_jaxpr: mask size");
  std::vector<Aval> in;
  size_t num_nonlinear = 0;
  for (size_t i = 0; i < j.invars.size(); ++i)
    if (!linear[i]) {
      in.push_back(j.avals[size_t(j.invars[i])]);
      ++num_nonlinear;
    }
  for (const Aval& a : j.out_avals()) in.push_back(a);
  return trace_to_jaxpr(
      [&](const Arrays& xs) {
        Arrays vals(j.invars.size());
        size_t k = 0;
        for (size_t i = 0; i < j.invars.size(); ++i)
          if (!linear[i]) vals[i] = xs[k++];
        Arrays cts(xs.begin() + long(num_nonlinear), xs.end());
        Arrays in_cts = backward_pass_masked(j, linear, vals, cts);
        Arrays outs;
        for (size_t i = 0; i < j.invars.size(); ++i)
          if (linear[i]) outs.push_back(instantiate(in_cts[i], j.avals[size_t(j.invars[i])]));
        return outs;
      },
      in);
}

namespace {
[[noreturn]] void no_transpose(Prim p) {
  throw ValueError(str("[", ops::name(p), "] reverse-mode differentiation (transpose) of '",
                       ops::name(p), "' is not implemented in jx yet"));
}
}  // namespace

Arrays backward_pass_masked(const ir::Jaxpr& j, const std::vector<bool>& linear_in,
                            const Arrays& nonlinear_vals, const Arrays& cts_out) {
  std::vector<bool> linear(j.avals.size(), false);
  std::vector<Array> vals(j.avals.size());
  for (size_t i = 0; i < j.constvars.size(); ++i) vals[size_t(j.constvars[i])] = j.consts[i];
  for (size_t i = 0; i < j.invars.size(); ++i) {
    if (linear_in[i]) linear[size_t(j.invars[i])] = true;
    else vals[size_t(j.invars[i])] = nonlinear_vals[i];
  }
  // Forward: evaluate what depends on non-linear values only; mark the rest linear.
  std::vector<const ir::Eqn*> lin_eqns;
  Arrays in;
  for (const ir::Eqn& e : j.eqns) {
    bool lin = false;
    for (const ir::Atom& a : e.inputs) lin = lin || (a.is_var() && linear[size_t(a.var)]);
    if (lin) {
      for (int o : e.outputs) linear[size_t(o)] = true;
      lin_eqns.push_back(&e);
      continue;
    }
    in.clear();
    for (const ir::Atom& a : e.inputs) in.push_back(a.is_var() ? vals[size_t(a.var)] : a.literal);
    Arrays out = bind(e.prim, in, e.params);
    for (size_t k = 0; k < out.size(); ++k) vals[size_t(e.outputs[k])] = std::move(out[k]);
  }
  std::vector<Array> ct(j.avals.size());
  for (size_t i = 0; i < j.outvars.size(); ++i) {
    const ir::Atom& a = j.outvars[i];
    if (a.is_var() && linear[size_t(a.var)]) ct[size_t(a.var)] = add_tangents(ct[size_t(a.var)], cts_out[i]);
  }
  for (auto it = lin_eqns.rbegin(); it != lin_eqns.rend(); ++it) {
    const ir::Eqn& e = **it;
    Arrays out_cts;
    bool any = false;
    for (int o : e.outputs) {
      out_cts.push_back(ct[size_t(o)]);
      any = any || ct[size_t(o)].valid();
      ct[size_t(o)] = Array();  // free as soon as it is consumed
    }
    if (!any) continue;
    const ops::PrimitiveInfo& pi = ops::info(e.prim);
    if (!pi.transpose) no_transpose(e.prim);
    Arrays inputs;
    std::vector<Aval> in_avals;
    std::unique_ptr<bool[]> mask(new bool[e.inputs.size()]);
    for (size_t k = 0; k < e.inputs.size(); ++k) {
      const ir::Atom& a = e.inputs[k];
      in_avals.push_back(j.aval_of(a));
      bool lin = a.is_var() && linear[size_t(a.var)];
      mask[k] = lin;
      inputs.push_back(lin ? Array() : (a.is_var() ? vals[size_t(a.var)] : a.literal));
    }
    Arrays in_cts = pi.transpose(out_cts, inputs, in_avals,
                                 std::span<const bool>(mask.get(), e.inputs.size()), e.params);
    for (size_t k = 0; k < e.inputs.size() && k < in_cts.size(); ++k) {
      if (!mask[k] || !in_cts[k].valid()) continue;
      int v = e.inputs[k].var;
      ct[size_t(v)] = add_tangents(ct[size_t(v)], in_cts[k]);
    }
  }
  Arrays result;
  for (size_t i = 0; i < j.invars.size(); ++i) result.push_back(linear_in[i] ? ct[size_t(j.invars[i])] : Array());
  return result;
}

}  // namespace jx::tr
