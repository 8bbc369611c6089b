// while (lax.while_loop): operands [cond_consts..., body_consts..., carry...], params
// cond_jaxpr ([cond_consts..., carry...] -> bool[]), body_jaxpr ([body_consts...,
// carry...] -> carry), cond_nconsts, body_nconsts. Forward-mode differentiable; its
// transpose is JAX's error. Rules follow jax/_src/lax/control_flow/loops.py.
#include "control/common.h"
#include "jx/lax.h"
#include "ops/batching.h"
#include "transforms/ad.h"
#include "transforms/bind.h"

namespace jx::control {
namespace {

using ops::batching::kNotMapped;

constexpr const char* kReverseModeError =
    "[while_loop] Reverse-mode differentiation does not work for lax.while_loop or "
    "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or using fori_loop "
    "with static start/stop.";

struct WhileParts {
  const ir::Jaxpr& cond;
  const ir::Jaxpr& body;
  size_t cn, bn;
};
WhileParts parts(const Params& p) {
  return {ir::jaxpr_of(p, "cond_jaxpr"), ir::jaxpr_of(p, "body_jaxpr"), size_t(p.i("cond_nconsts")),
          size_t(p.i("body_nconsts"))};
}

Arrays bind_while(const Arrays& cconsts, const Arrays& bconsts, const Arrays& carry, ir::Jaxpr cond,
                  ir::Jaxpr body) {
  Params p;
  p.set("body_jaxpr", ir::jaxpr_param(std::move(body)));
  p.set("body_nconsts", int64_t(bconsts.size()));
  p.set("cond_jaxpr", ir::jaxpr_param(std::move(cond)));
  p.set("cond_nconsts", int64_t(cconsts.size()));
  Arrays in = cconsts;
  in.insert(in.end(), bconsts.begin(), bconsts.end());
  in.insert(in.end(), carry.begin(), carry.end());
  return bind(Prim::While, in, p);
}

ops::Avals while_abstract_eval(std::span<const Aval> in, const Params& p) {
  WhileParts w = parts(p);
  if (in.size() < w.cn + w.bn)
    throw TypeError(str("[while] expects ", w.cn + w.bn, " constants, got ", in.size(), " operands"));
  std::vector<Aval> carry(in.begin() + long(w.cn + w.bn), in.end());
  auto check = [&](const ir::Jaxpr& j, size_t off, size_t nc, const char* what) {
    std::vector<Aval> want = j.in_avals();
    if (want.size() != nc + carry.size())
      throw TypeError(str("[while] ", what, " takes ", want.size(), " inputs, got ", nc + carry.size()));
    for (size_t i = 0; i < nc; ++i)
      if (!typematch(want[i], in[off + i]))
        throw TypeError(str("[while] ", what, " constant ", i, " has type ", ops::aval_str(in[off + i]),
                            ", expected ", ops::aval_str(want[i])));
    for (size_t i = 0; i < carry.size(); ++i)
      if (!typematch(want[nc + i], carry[i]))
        throw TypeError(str("[while] ", what, " carry ", i, " has type ", ops::aval_str(carry[i]),
                            ", expected ", ops::aval_str(want[nc + i])));
  };
  check(w.cond, 0, w.cn, "cond_jaxpr");
  check(w.body, w.cn, w.bn, "body_jaxpr");
  std::vector<Aval> co = w.cond.out_avals();
  if (co.size() != 1 || co[0].dtype != DType::Bool || !co[0].shape.empty())
    throw TypeError(str("[while_loop] cond_fun must return a boolean scalar, but got output type(s) ",
                        ops::avals_str(co)));
  std::vector<Aval> out = w.body.out_avals();
  for (size_t i = 0; i < out.size() && i < carry.size(); ++i)
    if (!typematch(out[i], carry[i]))
      throw TypeError(str("[while] body_fun output and input must have identical types: carry ", i,
                          " is ", ops::aval_str(carry[i]), " in and ", ops::aval_str(out[i]), " out"));
  return out;
}

void while_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  WhileParts w = parts(p);
  Arrays cargs(in.begin(), in.begin() + long(w.cn));
  Arrays bargs(in.begin() + long(w.cn), in.begin() + long(w.cn + w.bn));
  Arrays carry(in.begin() + long(w.cn + w.bn), in.end());
  size_t nc = cargs.size(), nb = bargs.size();
  cargs.insert(cargs.end(), carry.begin(), carry.end());
  bargs.insert(bargs.end(), carry.begin(), carry.end());
  while (eval_eager(w.cond, cargs)[0].item<bool>()) {
    carry = eval_eager(w.body, bargs);
    std::copy(carry.begin(), carry.end(), cargs.begin() + long(nc));
    std::copy(carry.begin(), carry.end(), bargs.begin() + long(nb));
  }
  for (size_t k = 0; k < out.size(); ++k) out[k] = as_aval(carry[k], ops::aval_of(out[k]));
}

std::pair<Arrays, Arrays> while_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                                    const Params& p, bool linearize) {
  WhileParts w = parts(p);
  size_t ncarry = primals.size() - w.cn - w.bn;
  Arrays cconsts(primals.begin(), primals.begin() + long(w.cn));
  Arrays bconsts(primals.begin() + long(w.cn), primals.begin() + long(w.cn + w.bn));
  Arrays carry(primals.begin() + long(w.cn + w.bn), primals.end());
  std::vector<bool> nz = nonzero_mask(primals, tangents);
  std::vector<bool> bconst_nz(nz.begin() + long(w.cn), nz.begin() + long(w.cn + w.bn));
  std::vector<bool> carry_nz(nz.begin() + long(w.cn + w.bn), nz.end());
  // Fixpoint: a carry has a non-zero tangent if its initial value does or the body gives it one.
  for (;;) {
    std::vector<bool> in = bconst_nz;
    in.insert(in.end(), carry_nz.begin(), carry_nz.end());
    std::vector<bool> out = nonzero_tangent_outs(w.body, in);
    bool changed = false;
    for (size_t k = 0; k < ncarry; ++k)
      if (out[k] && !carry_nz[k]) carry_nz[k] = changed = true;
    if (!changed) break;
  }
  std::vector<bool> body_nz = bconst_nz;
  body_nz.insert(body_nz.end(), carry_nz.begin(), carry_nz.end());
  tr::TracedJaxpr bj = tr::jvp_jaxpr(w.body, body_nz);
  // bj: [jc..., bconsts..., carry..., bconst dots..., carry dots...] -> [carry..., all carry dots...]
  size_t njc = bj.consts.size();
  size_t nbd = 0, ncd = 0;
  for (bool b : bconst_nz) nbd += b;
  for (bool b : carry_nz) ncd += b;
  std::vector<size_t> order;
  for (size_t i = 0; i < njc + w.bn; ++i) order.push_back(i);
  for (size_t i = 0; i < nbd; ++i) order.push_back(njc + w.bn + ncarry + i);
  for (size_t i = 0; i < ncarry; ++i) order.push_back(njc + w.bn + i);
  for (size_t i = 0; i < ncd; ++i) order.push_back(njc + w.bn + ncarry + nbd + i);
  ir::Jaxpr body = reorder_invars(std::move(bj.jaxpr), order);
  std::vector<size_t> keep;
  for (size_t k = 0; k < ncarry; ++k) keep.push_back(k);
  for (size_t k = 0; k < ncarry; ++k)
    if (carry_nz[k]) keep.push_back(ncarry + k);
  body = select_outvars(std::move(body), keep);
  // cond: [cconsts..., carry..., carry dots (unused)...]
  std::vector<Aval> dot_avals;
  Arrays new_bconsts = bj.consts, carry_dots;
  new_bconsts.insert(new_bconsts.end(), bconsts.begin(), bconsts.end());
  for (size_t i = 0; i < w.bn; ++i)
    if (bconst_nz[i]) new_bconsts.push_back(tangents[w.cn + i]);
  for (size_t k = 0; k < ncarry; ++k) {
    if (!carry_nz[k]) continue;
    Aval a = ops::aval_of(carry[k]);
    dot_avals.push_back(a);
    carry_dots.push_back(tr::instantiate(tangents[w.cn + w.bn + k], a));
  }
  ir::Jaxpr cond = insert_unused_invars(w.cond, w.cn + ncarry, dot_avals);
  Arrays all_carry = carry;
  all_carry.insert(all_carry.end(), carry_dots.begin(), carry_dots.end());
  Arrays outs;
  Arrays primal_outs;
  if (linearize) {
    // As JAX: the primal loop runs now; the joint loop, which needs the primal values at
    // every step, is staged whole into the linear program. It evaluates (linearize, jacfwd)
    // but cannot be transposed, so reverse mode fails there with JAX's error.
    primal_outs = bind_while(cconsts, bconsts, carry, w.cond, w.body);
    outs = bind_while(cconsts, new_bconsts, all_carry, std::move(cond), std::move(body));
  } else {
    outs = bind_while(cconsts, new_bconsts, all_carry, std::move(cond), std::move(body));
    primal_outs.assign(outs.begin(), outs.begin() + long(ncarry));
  }
  Arrays touts(ncarry);
  size_t t = ncarry;
  for (size_t k = 0; k < ncarry; ++k)
    if (carry_nz[k]) touts[k] = outs[t++];
  return {primal_outs, touts};
}

Arrays while_transpose(std::span<const Array>, std::span<const Array>, std::span<const Aval>,
                       std::span<const bool>, const Params&) {
  throw ValueError(kReverseModeError);
}

ops::batching::BatchResult while_batch(std::span<const Array> in, std::span<const int> dims,
                                       const Params& p) {
  WhileParts w = parts(p);
  int64_t size = ops::batching::axis_size(in, dims);
  size_t ncarry = in.size() - w.cn - w.bn;
  std::vector<bool> bat;
  for (int d : dims) bat.push_back(d != kNotMapped);
  std::vector<bool> cconst_bat(bat.begin(), bat.begin() + long(w.cn));
  std::vector<bool> bconst_bat(bat.begin() + long(w.cn), bat.begin() + long(w.cn + w.bn));
  std::vector<bool> carry_bat(bat.begin() + long(w.cn + w.bn), bat.end());
  // Fixpoint over which carries are batched; a batched predicate batches them all, since
  // each example then stops at its own step (JAX's _while_loop_batching_rule).
  bool pred_bat = false;
  for (;;) {
    std::vector<bool> cin = cconst_bat;
    cin.insert(cin.end(), carry_bat.begin(), carry_bat.end());
    pred_bat = depends_on(w.cond, cin)[0];
    std::vector<bool> bin = bconst_bat;
    bin.insert(bin.end(), carry_bat.begin(), carry_bat.end());
    std::vector<bool> out = depends_on(w.body, bin);
    bool changed = false;
    for (size_t k = 0; k < ncarry; ++k) {
      bool want = out[k] || pred_bat;
      if (want && !carry_bat[k]) carry_bat[k] = changed = true;
    }
    if (!changed) break;
  }
  auto front = [&](size_t i, bool want) {
    if (!want) return in[i];
    return dims[i] == kNotMapped ? ops::batching::bdim_to_front(in[i], dims[i], size)
                                 : ops::batching::move_bdim(in[i], dims[i], 0);
  };
  Arrays cconsts, bconsts, carry;
  for (size_t i = 0; i < w.cn; ++i) cconsts.push_back(front(i, cconst_bat[i]));
  for (size_t i = 0; i < w.bn; ++i) bconsts.push_back(front(w.cn + i, bconst_bat[i]));
  for (size_t k = 0; k < ncarry; ++k) carry.push_back(front(w.cn + w.bn + k, carry_bat[k]));
  std::vector<bool> cin = cconst_bat, bin = bconst_bat;
  cin.insert(cin.end(), carry_bat.begin(), carry_bat.end());
  bin.insert(bin.end(), carry_bat.begin(), carry_bat.end());
  auto [cb, cob] = tr::batch_jaxpr(w.cond, size, cin, {});
  auto [bb, bob] = tr::batch_jaxpr(w.body, size, bin, carry_bat);
  std::vector<int> od;
  for (bool b : carry_bat) od.push_back(b ? 0 : kNotMapped);
  if (!pred_bat) {
    Arrays cc = cb.consts, bc = bb.consts;
    cc.insert(cc.end(), cconsts.begin(), cconsts.end());
    bc.insert(bc.end(), bconsts.begin(), bconsts.end());
    return {bind_while(cc, bc, carry, std::move(cb.jaxpr), std::move(bb.jaxpr)), od};
  }
  // Batched predicate: loop while any example is active; inactive examples keep their carry.
  std::vector<Aval> cond_in = avals_of(cb.consts), body_in;
  for (const Array& x : cconsts) cond_in.push_back(ops::aval_of(x));
  size_t ncc = cond_in.size();
  for (const Array& x : carry) cond_in.push_back(ops::aval_of(x));
  const ir::Jaxpr& cbj = cb.jaxpr;
  const ir::Jaxpr& bbj = bb.jaxpr;
  tr::TracedJaxpr new_cond = tr::trace_to_jaxpr(
      [&](const Arrays& xs) { return Arrays{lax::reduce_or(ir::eval_jaxpr(cbj, xs)[0], {0})}; }, cond_in);
  // The body takes the cond's constants too, to know which examples are still active.
  body_in = cond_in;
  body_in.erase(body_in.begin() + long(ncc), body_in.end());
  std::vector<Aval> bca = avals_of(bb.consts);
  body_in.insert(body_in.end(), bca.begin(), bca.end());
  for (const Array& x : bconsts) body_in.push_back(ops::aval_of(x));
  size_t nbc = body_in.size() - ncc;
  for (const Array& x : carry) body_in.push_back(ops::aval_of(x));
  tr::TracedJaxpr new_body = tr::trace_to_jaxpr(
      [&](const Arrays& xs) {
        Arrays cargs(xs.begin(), xs.begin() + long(ncc));
        Arrays bargs(xs.begin() + long(ncc), xs.begin() + long(ncc + nbc));
        Arrays c(xs.begin() + long(ncc + nbc), xs.end());
        cargs.insert(cargs.end(), c.begin(), c.end());
        bargs.insert(bargs.end(), c.begin(), c.end());
        Array pred = ir::eval_jaxpr(cbj, cargs)[0];
        Arrays next = ir::eval_jaxpr(bbj, bargs);
        for (size_t k = 0; k < next.size(); ++k) {
          Array which = next[k].ndim() == 1 ? pred : lax::broadcast_in_dim(pred, next[k].shape(), {0});
          next[k] = lax::select(which, next[k], c[k]);
        }
        return next;
      },
      body_in);
  Arrays cc = new_cond.consts, bc = new_body.consts;
  cc.insert(cc.end(), cb.consts.begin(), cb.consts.end());
  cc.insert(cc.end(), cconsts.begin(), cconsts.end());
  bc.insert(bc.end(), cb.consts.begin(), cb.consts.end());
  bc.insert(bc.end(), cconsts.begin(), cconsts.end());
  bc.insert(bc.end(), bb.consts.begin(), bb.consts.end());
  bc.insert(bc.end(), bconsts.begin(), bconsts.end());
  return {bind_while(cc, bc, carry, std::move(new_cond.jaxpr), std::move(new_body.jaxpr)), od};
}

}  // namespace

void register_while() {
  auto& w = ops::mutable_info(Prim::While);
  w.abstract_eval = while_abstract_eval;
  w.impl = while_impl;
  w.full_jvp = while_jvp;
  w.transpose = while_transpose;
  w.batch = while_batch;
}

}  // namespace jx::control

namespace jx::lax::cf {

using control::Arrays;
using control::Aval;

std::vector<Array> while_flat(const char* api, const FlatBody& cond_fun, const FlatBody& body_fun,
                              std::vector<Array> init, const tree::TreeDef& init_def) {
  auto trace = [&] {
    std::vector<Aval> ca = control::avals_of(init);
    return std::make_pair(control::trace_body(cond_fun, ca), control::trace_body(body_fun, ca));
  };
  auto [c, b] = trace();
  // Weakly typed initial values (C++ scalars) take the body's output type, then retrace.
  if (b.defs.size() == 1 && b.defs[0] == init_def && control::promote_weak_carries(init, b.jaxpr.out_avals())) {
    auto r = trace();
    c = std::move(r.first);
    b = std::move(r.second);
  }
  std::vector<Aval> co = c.jaxpr.out_avals();
  if (co.size() != 1 || co[0].dtype != DType::Bool || !co[0].shape.empty())
    throw TypeError(str("[", api, "] cond_fun must return a boolean scalar, but got output type(s) ",
                        ops::avals_str(co), "; compare or reduce it (e.g. x.any())"));
  control::check_carry(api, "body_fun output and input", init_def, control::avals_of(init), b.defs[0],
                       b.jaxpr.out_avals());
  return control::bind_while(c.consts, b.consts, init, std::move(c.jaxpr), std::move(b.jaxpr));
}

int64_t fori_length(int64_t lower, int64_t upper) { return upper > lower ? upper - lower : 0; }

std::pair<Array, Array> fori_bounds(const Array& lower, const Array& upper) {
  if (lower.ndim() != 0 || upper.ndim() != 0 || !is_integer(lower.dtype()) || !is_integer(upper.dtype()))
    throw TypeError(str("[fori_loop] lower and upper must be integer scalars, got ",
                        type_str(lower.dtype(), lower.shape()), " and ", type_str(upper.dtype(), upper.shape())));
  if (lower.dtype() == upper.dtype()) return {lower, upper};
  // jnp promotion of the two bounds (a weak bound takes the other's type).
  DType t = lower.weak_type() ? upper.dtype() : upper.weak_type() ? lower.dtype()
            : (itemsize(lower.dtype()) >= itemsize(upper.dtype()) ? lower.dtype() : upper.dtype());
  bool weak = lower.weak_type() && upper.weak_type();
  return {lax::convert_element_type(lower, t, weak), lax::convert_element_type(upper, t, weak)};
}

}  // namespace jx::lax::cf
