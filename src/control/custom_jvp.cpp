// custom_jvp_call: a function whose derivative is a user rule (JAX's custom_jvp_call_p).
//
// Operands: [consts the function closed over..., args...]. Params: call_jaxpr (the
// function, traced when called), jvp_jaxpr_fun (the flat rule, run only when the call is
// differentiated: JAX traces it lazily too), num_consts, symbolic_zeros (always False:
// zero tangents reach the rule as real zeros). Eager evaluation and staging use the
// function; forward mode and linearize call the rule; vmap batches both.
#include "control/custom_common.h"
#include "ops/batching.h"
#include "transforms/ad.h"
#include "transforms/bind.h"
#include "transforms/jaxpr_transforms.h"

namespace jx {

namespace ops {
namespace {

using custom::FnParam;
using Rule = jx::custom::FlatJvpRule;

const ir::Jaxpr& call_jaxpr(const Params& p) { return ir::jaxpr_of(p, "call_jaxpr"); }

Avals abstract_eval(std::span<const Aval> in, const Params& p) {
  const ir::Jaxpr& j = call_jaxpr(p);
  custom::check_operands("custom_jvp_call", j, in);
  return j.out_avals();
}

void impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  custom::eval_into(call_jaxpr(p), in, out);
}

// JVPTrace and LinearizeTrace: the user's rule replaces differentiation of the function.
// It runs with the tangent trace current, so under linearize its primal work runs at once
// and only its tangent work is staged into the linear jaxpr.
std::pair<Arrays, Arrays> full_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                                   const Params& p, bool /*linearize*/) {
  size_t nc = size_t(p.i("num_consts"));
  custom::reject_closed_over_tangents("custom_jvp", tangents, nc);
  Arrays ps(primals.begin() + long(nc), primals.end()), ts;
  for (size_t i = nc; i < primals.size(); ++i)
    ts.push_back(tr::instantiate(tangents[i], aval_of(primals[i])));
  auto [pouts, touts] = custom::fn_of<Rule>(p, "jvp_jaxpr_fun")(ps, ts);
  std::vector<Aval> want = call_jaxpr(p).out_avals();
  custom::check_rule_outputs("custom_jvp", "the jvp rule's primal output", pouts, want);
  custom::check_rule_outputs("custom_jvp", "the jvp rule's tangent output", touts, custom::avals_of(pouts));
  return {std::move(pouts), std::move(touts)};
}

// vmap: the function is batched as a jaxpr; the rule is wrapped so that, when it runs,
// it runs vmapped with matching batch dims. Outputs batched by either side are batched on
// both (JAX's _custom_jvp_call_vmap); the first run decides, later runs must agree.
batching::BatchResult batch(std::span<const Array> in_, std::span<const int> dims, const Params& p) {
  int64_t size = batching::axis_size(in_, dims);
  Arrays in(in_.begin(), in_.end());
  std::vector<bool> in_batched = custom::batch_dims_to_front(in, dims);
  size_t nc = size_t(p.i("num_consts"));
  auto [bj, fun_batched] = tr::batch_jaxpr(call_jaxpr(p), size, in_batched, {});
  std::vector<bool> arg_batched(in_batched.begin() + long(nc), in_batched.end());
  auto decided = std::make_shared<custom::BatchedOutputs>();
  Rule rule = custom::fn_of<Rule>(p, "jvp_jaxpr_fun");
  Rule batched_rule = [rule, arg_batched, fun_batched, size, decided](const Arrays& ps, const Arrays& ts) {
    size_t n = ps.size(), nout = 0;
    Arrays xs = ps;
    xs.insert(xs.end(), ts.begin(), ts.end());
    std::vector<bool> xb = arg_batched;
    xb.insert(xb.end(), arg_batched.begin(), arg_batched.end());
    auto run = [&](const Arrays& a) {
      auto [po, to] = rule(Arrays(a.begin(), a.begin() + long(n)), Arrays(a.begin() + long(n), a.end()));
      nout = po.size();
      if (to.size() != po.size())
        throw ValueError(str("[custom_jvp] the jvp rule returned ", po.size(), " primal and ",
                             to.size(), " tangent leaves; they must correspond one to one"));
      for (size_t k = 0; k < to.size(); ++k) to[k] = tr::instantiate(to[k], aval_of(po[k]));
      po.insert(po.end(), to.begin(), to.end());
      return po;
    };
    auto decide = [&](const std::vector<bool>& came) {
      std::vector<bool> either(nout);
      for (size_t k = 0; k < nout; ++k) either[k] = came[k] || came[nout + k];
      std::vector<bool> one = decided->decide("custom_jvp", either, fun_batched);
      std::vector<bool> both = one;
      both.insert(both.end(), one.begin(), one.end());
      return both;
    };
    Arrays outs = custom::vmap_forced(run, xs, xb, size, decide);
    return std::make_pair(Arrays(outs.begin(), outs.begin() + long(nout)),
                          Arrays(outs.begin() + long(nout), outs.end()));
  };
  Params np = p;
  np.set("call_jaxpr", ir::jaxpr_param(std::move(bj.jaxpr)));
  np.set("jvp_jaxpr_fun", custom::fn_param(std::move(batched_rule), "<custom_jvp rule>"));
  np.set("num_consts", int64_t(bj.consts.size() + nc));
  Arrays operands = bj.consts;
  operands.insert(operands.end(), in.begin(), in.end());
  Arrays outs = bind(Prim::CustomJvpCall, operands, np);
  // If the rule ran inside that bind (a jvp or linearize below this vmap), its outputs
  // are what came back; otherwise the function's are, and they fix the rule's from now on.
  std::vector<bool> out_batched = decided->fixed ? decided->batched : fun_batched;
  if (!decided->fixed) decided->decide("custom_jvp", fun_batched, {});
  std::vector<int> out_dims;
  for (bool b : out_batched) out_dims.push_back(b ? 0 : batching::kNotMapped);
  return {std::move(outs), std::move(out_dims)};
}

}  // namespace

void register_custom_jvp() {
  auto& c = mutable_info(Prim::CustomJvpCall);
  c.abstract_eval = abstract_eval;
  c.impl = impl;
  c.full_jvp = full_jvp;
  c.batch = batch;
  c.not_linear = true;
}

}  // namespace ops

namespace custom {

Flat custom_jvp_call(const FlatFn& fun, FlatJvpRule jvp, const Flat& args) {
  tr::TracedJaxpr t = tr::trace_to_jaxpr(fun, ops::custom::avals_of(args));
  ops::Params p;
  p.set("call_jaxpr", ir::jaxpr_param(std::move(t.jaxpr)));
  p.set("jvp_jaxpr_fun", ops::custom::fn_param(std::move(jvp), "<custom_jvp rule>"));
  p.set("num_consts", int64_t(t.consts.size()));
  p.set("symbolic_zeros", false);
  Flat operands = std::move(t.consts);
  operands.insert(operands.end(), args.begin(), args.end());
  return bind(ops::Prim::CustomJvpCall, operands, p);
}

}  // namespace custom

}  // namespace jx
