// checkpoint (remat): a call whose intermediate values are recomputed on the backward
// pass instead of being stored (JAX's remat_p, jax/_src/ad_checkpoint.py).
//
// Operands: [consts the function closed over..., args...]. Params, printed as JAX prints
// them: differentiated, jaxpr, policy (None for nothing_saveable), prevent_cse.
//
// Forward mode binds checkpoint on the jvp of its jaxpr. Linearize splits that jvp jaxpr
// by the policy: the known half (primal outputs, plus the residuals the policy lets it
// save) runs at once; the staged half, [residuals..., tangents...] -> tangents, becomes ONE
// checkpoint equation in the linear jaxpr. With nothing_saveable its residuals are just
// the inputs, so the linear jaxpr holds the inputs and no intermediates. Its transpose
// binds checkpoint on the transposed jaxpr, which recomputes the forward values it needs
// and then runs the backward pass.
#include "control/custom_common.h"
#include "ops/batching.h"
#include "transforms/ad.h"
#include "transforms/bind.h"
#include "transforms/jaxpr_transforms.h"

namespace jx {

namespace ops {
namespace {

const char* policy_name(CheckpointPolicy p) {
  switch (p) {
    case CheckpointPolicy::NothingSaveable: return "nothing_saveable";
    case CheckpointPolicy::EverythingSaveable: return "everything_saveable";
    case CheckpointPolicy::DotsSaveable: return "dots_saveable";
    case CheckpointPolicy::DotsWithNoBatchDimsSaveable: return "dots_with_no_batch_dims_saveable";
  }
  return "?";
}

class PolicyParam : public ParamObject {
 public:
  explicit PolicyParam(CheckpointPolicy p) : policy(p) {}
  std::string str() const override { return policy_name(policy); }
  bool equals(const ParamObject& other) const override {
    auto* o = dynamic_cast<const PolicyParam*>(&other);
    return o && o->policy == policy;
  }
  size_t hash() const override { return size_t(policy) + 17; }
  CheckpointPolicy policy;
};

// JAX's default policy is None, which means nothing_saveable; printed the same way.
ParamValue policy_param(CheckpointPolicy p) {
  if (p == CheckpointPolicy::NothingSaveable) return std::shared_ptr<const ParamObject>();
  return std::shared_ptr<const ParamObject>(std::make_shared<PolicyParam>(p));
}
CheckpointPolicy policy_of(const Params& p) {
  const auto& v = p.get<std::shared_ptr<const ParamObject>>("policy");
  if (!v) return CheckpointPolicy::NothingSaveable;
  auto* pp = dynamic_cast<const PolicyParam*>(v.get());
  JX_CHECK(pp, "checkpoint: policy param of another type");
  return pp->policy;
}

// May the policy keep this (known) equation's outputs as residuals?
bool saveable(CheckpointPolicy policy, const ir::Eqn& e) {
  switch (policy) {
    case CheckpointPolicy::NothingSaveable: return false;
    case CheckpointPolicy::EverythingSaveable: return true;
    case CheckpointPolicy::DotsSaveable: return e.prim == Prim::DotGeneral;
    case CheckpointPolicy::DotsWithNoBatchDimsSaveable:
      return e.prim == Prim::DotGeneral && e.params.ints("lhs_batch").empty() &&
             e.params.ints("rhs_batch").empty();
  }
  return false;
}

const ir::Jaxpr& jaxpr_of(const Params& p) { return ir::jaxpr_of(p, "jaxpr"); }

// ---- the policy-aware split (JAX's partial_eval_jaxpr_custom, for first-order
// equations and nested checkpoints) ----

struct Split {
  ir::Jaxpr known;   // [known ins...] -> [known outs..., residuals...]
  ir::Jaxpr staged;  // [residuals..., unknown ins...] -> [unknown outs...]
  std::vector<bool> out_unknown;
  size_t num_res = 0;
};

Split split(const ir::Jaxpr& j, const std::vector<bool>& in_unknown,
            const std::vector<bool>& force_out_unknown, CheckpointPolicy policy) {
  JX_CHECK(j.constvars.empty(), "checkpoint: split of a jaxpr with constvars");
  std::vector<Aval> avals = j.avals;
  std::vector<char> unknown(avals.size(), 0);
  auto new_var = [&](const Aval& a) {
    avals.push_back(a);
    unknown.push_back(0);
    return int(avals.size()) - 1;
  };
  auto is_unknown = [&](const ir::Atom& a) { return a.is_var() && unknown[size_t(a.var)]; };
  for (size_t i = 0; i < j.invars.size(); ++i)
    if (in_unknown[i]) unknown[size_t(j.invars[i])] = 1;

  std::vector<ir::Eqn> known_eqns;
  // Equations the staged side may need: the unknown ones, and known ones whose outputs
  // the policy does not save (recomputed there). Dead ones are dropped below.
  std::vector<ir::Eqn> staged_eqns;
  auto add_known = [&](ir::Eqn e) {
    if (!saveable(policy, e)) staged_eqns.push_back(e);
    known_eqns.push_back(std::move(e));
  };
  for (const ir::Eqn& e : j.eqns) {
    bool any_unknown = false, all_unknown = true;
    for (const ir::Atom& a : e.inputs) {
      any_unknown = any_unknown || is_unknown(a);
      all_unknown = all_unknown && is_unknown(a);
    }
    if (!any_unknown) {
      add_known(e);
      continue;
    }
    if (e.prim != Prim::Remat || all_unknown) {
      for (int o : e.outputs) unknown[size_t(o)] = 1;
      staged_eqns.push_back(e);
      continue;
    }
    // A nested checkpoint with some known inputs: split it the same way, with its own
    // policy, so its known half runs (or is recomputed) as a non-linear equation and only
    // its staged half takes tangents.
    std::vector<bool> iu;
    for (const ir::Atom& a : e.inputs) iu.push_back(is_unknown(a));
    Split s = split(jaxpr_of(e.params), iu, {}, policy_of(e.params));
    ir::Eqn ke{Prim::Remat, {}, {}, e.params};
    ke.params.set("jaxpr", ir::jaxpr_param(s.known));
    ir::Eqn se{Prim::Remat, {}, {}, e.params};
    se.params.set("jaxpr", ir::jaxpr_param(s.staged));
    se.params.set("differentiated", true);
    for (size_t k = 0; k < e.inputs.size(); ++k)
      if (!iu[k]) ke.inputs.push_back(e.inputs[k]);
    for (size_t k = 0; k < e.outputs.size(); ++k)
      (s.out_unknown[k] ? se.outputs : ke.outputs).push_back(e.outputs[k]);
    std::vector<Aval> kout = s.known.out_avals();
    for (size_t r = 0; r < s.num_res; ++r) {
      int v = new_var(kout[kout.size() - s.num_res + r]);
      ke.outputs.push_back(v);
      se.inputs.push_back(ir::Atom::of_var(v));
    }
    for (size_t k = 0; k < e.inputs.size(); ++k)
      if (iu[k]) se.inputs.push_back(e.inputs[k]);
    for (int o : se.outputs) unknown[size_t(o)] = 1;
    if (!ke.outputs.empty()) add_known(std::move(ke));
    if (!se.outputs.empty()) staged_eqns.push_back(std::move(se));
  }

  Split r;
  std::vector<ir::Atom> known_outs, unknown_outs;
  for (size_t k = 0; k < j.outvars.size(); ++k) {
    const ir::Atom& a = j.outvars[k];
    bool u = is_unknown(a) || (k < force_out_unknown.size() && force_out_unknown[k]);
    r.out_unknown.push_back(u);
    (u ? unknown_outs : known_outs).push_back(a);
  }

  // The staged side, dead code removed; a known value it still needs and does not
  // recompute is a residual.
  std::vector<char> live(avals.size(), 0), produced(avals.size(), 0);
  for (const ir::Atom& a : unknown_outs)
    if (a.is_var()) live[size_t(a.var)] = 1;
  std::vector<char> keep(staged_eqns.size(), 0);
  for (size_t i = staged_eqns.size(); i-- > 0;) {
    const ir::Eqn& e = staged_eqns[i];
    bool needed = false;
    for (int o : e.outputs) needed = needed || live[size_t(o)];
    if (!needed) continue;
    keep[i] = 1;
    for (int o : e.outputs) produced[size_t(o)] = 1;
    for (const ir::Atom& a : e.inputs)
      if (a.is_var()) live[size_t(a.var)] = 1;
  }
  std::vector<int> residuals;
  std::vector<char> is_res(avals.size(), 0);
  auto consider = [&](int v) {
    size_t u = size_t(v);
    if (live[u] && !unknown[u] && !produced[u] && !is_res[u]) {
      is_res[u] = 1;
      residuals.push_back(v);
    }
  };
  std::vector<int> unknown_ins;
  for (size_t i = 0; i < j.invars.size(); ++i) {
    if (in_unknown[i]) unknown_ins.push_back(j.invars[i]);
    else consider(j.invars[i]);
  }
  for (const ir::Eqn& e : known_eqns)
    for (int o : e.outputs) consider(o);
  r.num_res = residuals.size();

  r.staged.avals = avals;
  r.staged.invars = residuals;
  r.staged.invars.insert(r.staged.invars.end(), unknown_ins.begin(), unknown_ins.end());
  for (size_t i = 0; i < staged_eqns.size(); ++i)
    if (keep[i]) r.staged.eqns.push_back(staged_eqns[i]);
  r.staged.outvars = unknown_outs;

  // The known side, dead code removed.
  r.known.avals = avals;
  for (size_t i = 0; i < j.invars.size(); ++i)
    if (!in_unknown[i]) r.known.invars.push_back(j.invars[i]);
  r.known.outvars = known_outs;
  for (int v : residuals) r.known.outvars.push_back(ir::Atom::of_var(v));
  std::vector<char> klive(avals.size(), 0);
  for (const ir::Atom& a : r.known.outvars)
    if (a.is_var()) klive[size_t(a.var)] = 1;
  std::vector<char> kkeep(known_eqns.size(), 0);
  for (size_t i = known_eqns.size(); i-- > 0;) {
    bool needed = false;
    for (int o : known_eqns[i].outputs) needed = needed || klive[size_t(o)];
    if (!needed) continue;
    kkeep[i] = 1;
    for (const ir::Atom& a : known_eqns[i].inputs)
      if (a.is_var()) klive[size_t(a.var)] = 1;
  }
  for (size_t i = 0; i < known_eqns.size(); ++i)
    if (kkeep[i]) r.known.eqns.push_back(std::move(known_eqns[i]));
  return r;
}

// ---- rules ----

Avals abstract_eval(std::span<const Aval> in, const Params& p) {
  const ir::Jaxpr& j = jaxpr_of(p);
  custom::check_operands("checkpoint", j, in);
  return j.out_avals();
}

void impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  custom::eval_into(jaxpr_of(p), in, out);
}

std::pair<Arrays, Arrays> full_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                                   const Params& p, bool linearize) {
  const ir::Jaxpr& j = jaxpr_of(p);
  size_t nout = j.outvars.size();
  std::vector<bool> nonzero;
  Arrays nz_tangents;
  for (const Array& t : tangents) {
    nonzero.push_back(t.valid());
    if (t.valid()) nz_tangents.push_back(t);
  }
  tr::TracedJaxpr jvp = tr::jvp_jaxpr(j, nonzero);
  Arrays in = jvp.consts;
  in.insert(in.end(), primals.begin(), primals.end());
  Params np = p;
  if (!linearize) {
    // Forward mode: one checkpoint of the joint jvp jaxpr (JAX's remat_jvp).
    in.insert(in.end(), nz_tangents.begin(), nz_tangents.end());
    np.set("jaxpr", ir::jaxpr_param(std::move(jvp.jaxpr)));
    Arrays outs = bind(Prim::Remat, in, np);
    return {Arrays(outs.begin(), outs.begin() + long(nout)), Arrays(outs.begin() + long(nout), outs.end())};
  }
  // Linearize (JAX's remat_partial_eval): primal outputs and residuals now, the tangent
  // map staged as one checkpoint equation.
  std::vector<bool> in_unknown(in.size(), false);
  in_unknown.resize(in.size() + nz_tangents.size(), true);
  std::vector<bool> force(nout, false);
  force.resize(2 * nout, true);
  Split s = split(jvp.jaxpr, in_unknown, force, policy_of(p));
  for (size_t k = 0; k < nout; ++k) JX_CHECK(!s.out_unknown[k], "checkpoint: primal output depends on tangents");
  Arrays known = ir::eval_jaxpr(s.known, in);
  Arrays staged_in(known.begin() + long(nout), known.end());
  staged_in.insert(staged_in.end(), nz_tangents.begin(), nz_tangents.end());
  np.set("jaxpr", ir::jaxpr_param(std::move(s.staged)));
  np.set("differentiated", true);
  Arrays touts = bind(Prim::Remat, staged_in, np);
  known.resize(nout);
  return {std::move(known), std::move(touts)};
}

// JAX's remat_transpose: checkpoint of the transposed jaxpr, so the recomputation happens
// inside the backward pass.
Arrays transpose(std::span<const Array> cts, std::span<const Array> inputs, std::span<const Aval> /*in_avals*/,
                 std::span<const bool> linear, const Params& p) {
  const ir::Jaxpr& j = jaxpr_of(p);
  std::vector<bool> lin(linear.begin(), linear.end());
  tr::TracedJaxpr t = tr::transpose_jaxpr(j, lin);
  Arrays in = t.consts;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!lin[i]) in.push_back(inputs[i]);
  std::vector<Aval> out_avals = j.out_avals();
  for (size_t k = 0; k < out_avals.size(); ++k) in.push_back(tr::instantiate(cts[k], out_avals[k]));
  Params np = p;
  np.set("jaxpr", ir::jaxpr_param(std::move(t.jaxpr)));
  Arrays r = bind(Prim::Remat, in, np);
  Arrays result(inputs.size());
  size_t q = 0;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (lin[i]) result[i] = std::move(r[q++]);
  return result;
}

batching::BatchResult batch(std::span<const Array> in_, std::span<const int> dims, const Params& p) {
  int64_t size = batching::axis_size(in_, dims);
  Arrays in(in_.begin(), in_.end());
  std::vector<bool> in_batched = custom::batch_dims_to_front(in, dims);
  auto [bj, out_batched] = tr::batch_jaxpr(jaxpr_of(p), size, in_batched, {});
  Params np = p;
  np.set("jaxpr", ir::jaxpr_param(std::move(bj.jaxpr)));
  Arrays operands = bj.consts;
  operands.insert(operands.end(), in.begin(), in.end());
  Arrays outs = bind(Prim::Remat, operands, np);
  std::vector<int> out_dims;
  for (bool b : out_batched) out_dims.push_back(b ? 0 : batching::kNotMapped);
  return {std::move(outs), std::move(out_dims)};
}

}  // namespace

void register_remat() {
  auto& r = mutable_info(Prim::Remat);
  r.abstract_eval = abstract_eval;
  r.impl = impl;
  r.full_jvp = full_jvp;
  r.transpose = transpose;
  r.batch = batch;
}

}  // namespace ops

namespace custom {

Flat checkpoint_call(const FlatFn& fun, const Flat& args, const CheckpointOptions& opts) {
  tr::TracedJaxpr t = tr::trace_to_jaxpr(fun, ops::custom::avals_of(args));
  ops::Params p;
  p.set("jaxpr", ir::jaxpr_param(std::move(t.jaxpr)));
  p.set("prevent_cse", opts.prevent_cse);
  p.set("differentiated", false);
  p.set("policy", ops::policy_param(opts.policy));
  Flat operands = std::move(t.consts);
  operands.insert(operands.end(), args.begin(), args.end());
  return bind(ops::Prim::Remat, operands, p);
}

}  // namespace custom

}  // namespace jx
