// custom_vjp_call and custom_lin: a function whose reverse-mode derivative is a user
// fwd/bwd pair (JAX's custom_vjp_call_p and custom_lin_p).
//
// custom_vjp_call operands: [consts the function closed over..., args...]. Params:
// call_jaxpr (the function), fwd_jaxpr_thunk (the flat fwd: args -> (outs, residuals)),
// bwd (the flat bwd: (residuals, out cotangents) -> arg cotangents), num_consts,
// symbolic_zeros (False). Eager evaluation and staging use the function. Under jvp or
// linearize, fwd runs on the primals at once and a custom_lin equation stands for the
// tangent map: operands [residuals..., nonzero input tangents...], linear in the
// tangents, with no way to evaluate it forward (forward mode of a custom_vjp function is
// an error, raised when it is evaluated, as in JAX) but a transpose rule that calls bwd.
#include "control/custom_common.h"
#include "ops/batching.h"
#include "transforms/ad.h"
#include "transforms/batching.h"
#include "transforms/bind.h"
#include "transforms/jaxpr_transforms.h"

namespace jx {

namespace ops {
namespace {

using Fwd = jx::custom::FlatFwd;
using Bwd = jx::custom::FlatBwd;

const ir::Jaxpr& call_jaxpr(const Params& p) { return ir::jaxpr_of(p, "call_jaxpr"); }

// ---- custom_vjp_call ----

Avals vjp_call_abstract_eval(std::span<const Aval> in, const Params& p) {
  const ir::Jaxpr& j = call_jaxpr(p);
  custom::check_operands("custom_vjp_call", j, in);
  return j.out_avals();
}

void vjp_call_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  custom::eval_into(call_jaxpr(p), in, out);
}

std::pair<Arrays, Arrays> vjp_call_full_jvp(std::span<const Array> primals,
                                            std::span<const Array> tangents, const Params& p,
                                            bool /*linearize*/) {
  size_t nc = size_t(p.i("num_consts"));
  custom::reject_closed_over_tangents("custom_vjp", tangents, nc);
  Arrays args(primals.begin() + long(nc), primals.end());
  auto [pouts, res] = custom::fn_of<Fwd>(p, "fwd_jaxpr_thunk")(args);
  custom::check_rule_outputs("custom_vjp", "the fwd rule's primal output", pouts, call_jaxpr(p).out_avals());
  Arrays lin_in = res;
  std::vector<bool> in_zeros;
  for (size_t i = nc; i < primals.size(); ++i) {
    in_zeros.push_back(!tangents[i].valid());
    if (tangents[i].valid()) lin_in.push_back(tangents[i]);
  }
  Params lp;
  lp.set("num_res", int64_t(res.size()));
  lp.set("bwd", p.get<std::shared_ptr<const ParamObject>>("bwd"));
  lp.set("out_avals", custom::avals_param(custom::avals_of(pouts)));
  lp.set("symbolic_zeros", false);
  lp.set("in_zeros", custom::bools_param(std::move(in_zeros)));
  // With the tangent trace current: staged into the linear jaxpr under linearize;
  // evaluated (the forward-mode error) under plain jvp.
  Arrays touts = bind(Prim::CustomLin, lin_in, lp);
  return {std::move(pouts), std::move(touts)};
}

// ---- custom_lin ----

const std::vector<Aval>& out_avals(const Params& p) { return p.obj<custom::AvalsParam>("out_avals").avals; }
const std::vector<bool>& in_zeros(const Params& p) { return p.obj<custom::BoolsParam>("in_zeros").bools; }

Avals lin_abstract_eval(std::span<const Aval>, const Params& p) { return out_avals(p); }

void lin_impl(std::span<const Array>, std::span<Array>, const Params&) {
  throw ValueError(
      "[custom_vjp] can't apply forward-mode autodiff (jvp) to a custom_vjp function. Use reverse "
      "mode (grad, vjp, jacrev), or define the derivative with jx::custom_jvp instead.");
}

Arrays lin_transpose(std::span<const Array> cts, std::span<const Array> inputs,
                     std::span<const Aval> /*in_avals*/, std::span<const bool> linear, const Params& p) {
  size_t nr = size_t(p.i("num_res"));
  for (size_t i = 0; i < nr; ++i)
    JX_CHECK(!linear[i], "custom_lin: residual ", i, " is linear");
  Arrays res(inputs.begin(), inputs.begin() + long(nr)), cts_out;
  const std::vector<Aval>& oa = out_avals(p);
  for (size_t k = 0; k < oa.size(); ++k) cts_out.push_back(tr::instantiate(cts[k], oa[k]));
  Arrays cts_in = custom::fn_of<Bwd>(p, "bwd")(res, cts_out);
  Arrays result(inputs.size());
  size_t pos = nr;
  const std::vector<bool>& zeros = in_zeros(p);
  for (size_t i = 0; i < zeros.size(); ++i) {
    if (zeros[i]) continue;
    result[pos] = cts_in[i];
    ++pos;
  }
  return result;
}

// The tangent map is linear in its tangent operands; a tangent on a residual would need
// bwd's own derivative, which JAX does not offer either.
Arrays lin_jvp(std::span<const Array> primals, std::span<const Array>, std::span<const Array> tangents,
               const Params& p) {
  size_t nr = size_t(p.i("num_res"));
  for (size_t i = 0; i < nr; ++i)
    if (tangents[i].valid())
      throw ValueError("[custom_vjp] differentiating a custom_vjp function's linearization with "
                       "respect to its residuals is not supported; differentiate the function itself");
  Arrays in(primals.begin(), primals.begin() + long(nr));
  for (size_t i = nr; i < primals.size(); ++i) in.push_back(tr::instantiate(tangents[i], aval_of(primals[i])));
  return bind(Prim::CustomLin, in, p);
}

// ---- vmap ----

// bwd for batched residuals and cotangents (dims 0 where flagged), returning cotangents
// batched like the operands they belong to: summed over the batch where the operand is
// unbatched, broadcast where it is batched (JAX's batch_custom_vjp_bwd).
Bwd batched_bwd(Bwd bwd, int64_t size, std::function<std::vector<bool>()> res_and_cts_batched,
                std::vector<bool> args_batched) {
  return [=](const Arrays& res, const Arrays& cts) {
    Arrays xs = res;
    xs.insert(xs.end(), cts.begin(), cts.end());
    std::vector<bool> xb = res_and_cts_batched();
    std::vector<int> dims;
    for (bool b : xb) dims.push_back(b ? 0 : batching::kNotMapped);
    auto run = [&](const Arrays& a) {
      return bwd(Arrays(a.begin(), a.begin() + long(res.size())), Arrays(a.begin() + long(res.size()), a.end()));
    };
    auto [outs, od] = tr::vmap_flat_dims(run, xs, dims, size);
    for (size_t i = 0; i < outs.size(); ++i) {
      if (args_batched[i]) outs[i] = batching::materialize_at(outs[i], od[i], size, 0);
      else if (od[i] != batching::kNotMapped) outs[i] = lax::reduce_sum(outs[i], {od[i]});
    }
    return outs;
  };
}

// What a batched fwd produced: which primal outputs and residuals carry the batch dim.
struct FwdBatching {
  custom::BatchedOutputs outs;
  std::vector<bool> res;
  bool ran = false;
};

batching::BatchResult vjp_call_batch(std::span<const Array> in_, std::span<const int> dims, const Params& p) {
  int64_t size = batching::axis_size(in_, dims);
  Arrays in(in_.begin(), in_.end());
  std::vector<bool> in_batched = custom::batch_dims_to_front(in, dims);
  size_t nc = size_t(p.i("num_consts"));
  auto [bj, fun_batched] = tr::batch_jaxpr(call_jaxpr(p), size, in_batched, {});
  std::vector<bool> arg_batched(in_batched.begin() + long(nc), in_batched.end());
  auto st = std::make_shared<FwdBatching>();
  Fwd fwd = custom::fn_of<Fwd>(p, "fwd_jaxpr_thunk");
  Fwd batched_fwd = [fwd, arg_batched, fun_batched, size, st](const Arrays& args) {
    size_t nout = 0;
    auto run = [&](const Arrays& a) {
      auto [o, r] = fwd(a);
      nout = o.size();
      o.insert(o.end(), r.begin(), r.end());
      return o;
    };
    auto decide = [&](const std::vector<bool>& came) {
      std::vector<bool> o = st->outs.decide("custom_vjp", std::vector<bool>(came.begin(), came.begin() + long(nout)),
                                            fun_batched);
      std::vector<bool> r(came.begin() + long(nout), came.end());
      if (!st->ran) st->res = r;
      JX_CHECK(st->res == r, "custom_vjp: batched residuals changed between runs of fwd");
      st->ran = true;
      o.insert(o.end(), r.begin(), r.end());
      return o;
    };
    Arrays outs = custom::vmap_forced(run, args, arg_batched, size, decide);
    return std::make_pair(Arrays(outs.begin(), outs.begin() + long(nout)), Arrays(outs.begin() + long(nout), outs.end()));
  };
  auto res_and_cts = [st]() {
    JX_CHECK(st->ran, "custom_vjp: batched bwd ran before batched fwd");
    std::vector<bool> b = st->res;
    b.insert(b.end(), st->outs.batched.begin(), st->outs.batched.end());
    return b;
  };
  Bwd bwd = batched_bwd(custom::fn_of<Bwd>(p, "bwd"), size, res_and_cts, arg_batched);
  Params np = p;
  np.set("call_jaxpr", ir::jaxpr_param(std::move(bj.jaxpr)));
  np.set("fwd_jaxpr_thunk", custom::fn_param(std::move(batched_fwd), "<custom_vjp fwd>"));
  np.set("bwd", custom::fn_param(std::move(bwd), "<custom_vjp bwd>"));
  np.set("num_consts", int64_t(bj.consts.size() + nc));
  Arrays operands = bj.consts;
  operands.insert(operands.end(), in.begin(), in.end());
  Arrays outs = bind(Prim::CustomVjpCall, operands, np);
  std::vector<bool> out_batched = st->outs.fixed ? st->outs.batched : fun_batched;
  if (!st->outs.fixed) st->outs.decide("custom_vjp", fun_batched, {});
  std::vector<int> out_dims;
  for (bool b : out_batched) out_dims.push_back(b ? 0 : batching::kNotMapped);
  return {std::move(outs), std::move(out_dims)};
}

// custom_lin under vmap (e.g. a vmapped linear function from linearize): every output
// is batched, and bwd is batched to match.
batching::BatchResult lin_batch(std::span<const Array> in_, std::span<const int> dims, const Params& p) {
  int64_t size = batching::axis_size(in_, dims);
  Arrays in(in_.begin(), in_.end());
  std::vector<bool> in_batched = custom::batch_dims_to_front(in, dims);
  size_t nr = size_t(p.i("num_res"));
  std::vector<bool> res_batched(in_batched.begin(), in_batched.begin() + long(nr));
  // Cotangents for every argument come out of bwd; those of zero tangents are dropped.
  const std::vector<bool>& zeros = in_zeros(p);
  std::vector<bool> args_batched;
  size_t pos = nr;
  for (bool z : zeros) args_batched.push_back(z ? false : bool(in_batched[pos++]));
  std::vector<Aval> oa = out_avals(p);
  for (Aval& a : oa) a.shape.insert(0, size);
  std::vector<bool> xb = res_batched;
  xb.insert(xb.end(), oa.size(), true);
  Bwd bwd = batched_bwd(custom::fn_of<Bwd>(p, "bwd"), size, [xb] { return xb; }, args_batched);
  Params np = p;
  np.set("bwd", custom::fn_param(std::move(bwd), "<custom_vjp bwd>"));
  np.set("out_avals", custom::avals_param(std::move(oa)));
  Arrays outs = bind(Prim::CustomLin, in, np);
  return {std::move(outs), std::vector<int>(outs.size(), 0)};
}

}  // namespace

void register_custom_vjp() {
  auto& c = mutable_info(Prim::CustomVjpCall);
  c.abstract_eval = vjp_call_abstract_eval;
  c.impl = vjp_call_impl;
  c.full_jvp = vjp_call_full_jvp;
  c.batch = vjp_call_batch;
  c.not_linear = true;

  auto& l = mutable_info(Prim::CustomLin);
  l.abstract_eval = lin_abstract_eval;
  l.impl = lin_impl;
  l.jvp = lin_jvp;
  l.transpose = lin_transpose;
  l.batch = lin_batch;
}

}  // namespace ops

namespace custom {

Flat custom_vjp_call(const FlatFn& fun, FlatFwd fwd, FlatBwd bwd, const Flat& args) {
  std::vector<ops::Aval> in_avals = ops::custom::avals_of(args);
  tr::TracedJaxpr t = tr::trace_to_jaxpr(fun, in_avals);
  // bwd's cotangents are checked against the arguments and zeros made real here, so the
  // transpose and batching rules can rely on one real cotangent per argument.
  FlatBwd checked = [bwd = std::move(bwd), in_avals](const Flat& res, const Flat& cts) {
    Flat r = bwd(res, cts);
    if (r.size() != in_avals.size())
      throw ValueError(str("[custom_vjp] the bwd rule returned ", r.size(), " cotangent leaves for ",
                           in_avals.size(), " argument leaves; return one per argument"));
    for (size_t i = 0; i < r.size(); ++i) {
      const ops::Aval& a = in_avals[i];
      if (!r[i].valid() || !is_inexact(a.dtype)) {
        r[i] = tr::zeros_like_aval(a);  // None, or an integer argument: a zero cotangent
        continue;
      }
      ops::Aval g = ops::aval_of(r[i]);
      if (!ops::custom::same_type(g, a))
        throw ValueError(str("[custom_vjp] the bwd rule must produce cotangents with the shapes and "
                             "dtypes of the arguments, but for argument leaf ", i, " it produced ",
                             ops::aval_str(g), " where the argument is ", ops::aval_str(a)));
    }
    return r;
  };
  ops::Params p;
  p.set("call_jaxpr", ir::jaxpr_param(std::move(t.jaxpr)));
  p.set("fwd_jaxpr_thunk", ops::custom::fn_param(std::move(fwd), "<custom_vjp fwd>"));
  p.set("bwd", ops::custom::fn_param(std::move(checked), "<custom_vjp bwd>"));
  p.set("num_consts", int64_t(t.consts.size()));
  p.set("symbolic_zeros", false);
  Flat operands = std::move(t.consts);
  operands.insert(operands.end(), args.begin(), args.end());
  return bind(ops::Prim::CustomVjpCall, operands, p);
}

}  // namespace custom

}  // namespace jx
