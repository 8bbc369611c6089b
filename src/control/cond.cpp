// cond (lax.cond and lax.switch): operands [index:int32[], ops...], param `branches` (one
// jaxpr per branch, each taking ops... and returning the same types). The index is
// clamped into range; only the selected branch runs. Rules follow JAX's
// jax/_src/lax/control_flow/conditionals.py.
#include "control/common.h"
#include "jx/lax.h"
#include "ops/batching.h"
#include "transforms/ad.h"
#include "transforms/bind.h"

namespace jx::control {
namespace {

using ops::batching::kNotMapped;

std::vector<const ir::Jaxpr*> branches_of(const Params& p) {
  std::vector<const ir::Jaxpr*> r;
  for (size_t i = 0; i < ir::num_jaxprs(p, "branches"); ++i) r.push_back(&ir::jaxpr_of(p, "branches", i));
  return r;
}

Params cond_params(std::vector<ir::Jaxpr> branches) {
  Params p;
  p.set("branches", ir::jaxprs_param(std::move(branches)));
  return p;
}

Arrays bind_cond(const Array& index, const Arrays& ops, std::vector<ir::Jaxpr> branches) {
  Arrays in{index};
  in.insert(in.end(), ops.begin(), ops.end());
  return bind(Prim::Cond, in, cond_params(std::move(branches)));
}

ops::Avals cond_abstract_eval(std::span<const Aval> in, const Params& p) {
  auto bs = branches_of(p);
  if (bs.empty()) throw ValueError("[cond] needs at least one branch");
  if (in.empty() || in[0].dtype != DType::Int32 || !in[0].shape.empty())
    throw TypeError(str("[cond] the branch index must be an int32 scalar, got ",
                        in.empty() ? std::string("nothing") : ops::aval_str(in[0])));
  for (size_t b = 0; b < bs.size(); ++b) {
    std::vector<Aval> want = bs[b]->in_avals();
    if (want.size() != in.size() - 1)
      throw TypeError(str("[cond] branch ", b, " takes ", want.size(), " operands, got ", in.size() - 1));
    for (size_t i = 0; i < want.size(); ++i)
      if (!typematch(want[i], in[i + 1]))
        throw TypeError(str("[cond] operand ", i, " has type ", ops::aval_str(in[i + 1]), " but branch ",
                            b, " takes ", ops::aval_str(want[i])));
  }
  return bs[0]->out_avals();
}

void cond_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  auto bs = branches_of(p);
  int64_t idx = std::clamp<int64_t>(in[0].item<int64_t>(), 0, int64_t(bs.size()) - 1);
  const ir::Jaxpr& j = *bs[size_t(idx)];
  Arrays r = eval_eager(j, Arrays(in.begin() + 1, in.end()));
  for (size_t k = 0; k < out.size(); ++k) out[k] = as_aval(r[k], ops::aval_of(out[k]));
}

// The jvp of each branch, keeping the tangent outputs where out_nz.
std::vector<tr::TracedJaxpr> jvp_branches(const std::vector<const ir::Jaxpr*>& bs,
                                          const std::vector<bool>& ops_nz,
                                          const std::vector<bool>& out_nz) {
  std::vector<tr::TracedJaxpr> r;
  size_t nout = out_nz.size();
  std::vector<size_t> keep;
  for (size_t k = 0; k < nout; ++k) keep.push_back(k);
  for (size_t k = 0; k < nout; ++k)
    if (out_nz[k]) keep.push_back(nout + k);
  for (const ir::Jaxpr* b : bs) {
    tr::TracedJaxpr t = tr::jvp_jaxpr(*b, ops_nz);
    t.jaxpr = select_outvars(std::move(t.jaxpr), keep);
    r.push_back(std::move(t));
  }
  return r;
}

// Residuals of several branches merged by type (JAX's _merge_branch_residuals): equal
// types are shared between branches, so [x], [y], [x, x] -> [x, y, x].
struct MergedRes {
  std::vector<Aval> all;
  std::vector<std::vector<size_t>> index;  // per branch: slot of each of its residuals
};
MergedRes merge_residuals(const std::vector<std::vector<Aval>>& per_branch) {
  MergedRes m;
  for (const auto& res : per_branch) {
    std::vector<bool> used(m.all.size(), false);
    std::vector<size_t> idx;
    for (const Aval& a : res) {
      size_t slot = m.all.size();
      for (size_t s = 0; s < m.all.size(); ++s)
        if (!used[s] && m.all[s] == a) {
          slot = s;
          break;
        }
      if (slot == m.all.size()) {
        m.all.push_back(a);
        used.push_back(false);
      }
      used[slot] = true;
      idx.push_back(slot);
    }
    m.index.push_back(std::move(idx));
  }
  return m;
}

std::pair<Arrays, Arrays> cond_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                                   const Params& p, bool linearize) {
  auto bs = branches_of(p);
  const Array& index = primals[0];
  Arrays ops(primals.begin() + 1, primals.end());
  std::vector<bool> ops_nz = nonzero_mask(primals.subspan(1), tangents.subspan(1));
  Arrays dots;
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops_nz[i]) dots.push_back(tangents[i + 1]);
  std::vector<bool> out_nz(bs[0]->outvars.size(), false);
  for (const ir::Jaxpr* b : bs) {
    auto nz = nonzero_tangent_outs(*b, ops_nz);
    for (size_t k = 0; k < nz.size(); ++k) out_nz[k] = out_nz[k] || nz[k];
  }
  size_t nout = out_nz.size();
  auto finish = [&](Arrays primal_outs, const Arrays& tangent_outs) {
    Arrays touts(nout);
    size_t t = 0;
    for (size_t k = 0; k < nout; ++k)
      if (out_nz[k]) touts[k] = tangent_outs[t++];
    return std::make_pair(std::move(primal_outs), std::move(touts));
  };
  if (!linearize) {
    auto [js, consts] = join_consts(jvp_branches(bs, ops_nz, out_nz));
    Arrays in = consts;
    in.insert(in.end(), ops.begin(), ops.end());
    in.insert(in.end(), dots.begin(), dots.end());
    Arrays outs = bind_cond(index, in, std::move(js));
    return finish(Arrays(outs.begin(), outs.begin() + long(nout)), Arrays(outs.begin() + long(nout), outs.end()));
  }

  // Linearize: the primal part (and the residuals the tangent part needs) runs now as one
  // cond; the tangent part is a second cond over the residuals, staged into the linear
  // jaxpr (JAX's _cond_partial_eval).
  std::vector<SplitBody> split;
  std::vector<std::vector<Aval>> res_avals;
  for (const ir::Jaxpr* b : bs) {
    split.push_back(split_linearize(*b, ops_nz, out_nz));
    res_avals.push_back(split.back().res_avals);
  }
  MergedRes m = merge_residuals(res_avals);
  // Known branches: [their consts..., ops...] -> [primal outs..., merged residuals...], each
  // filling the residual slots it does not produce with zeros.
  std::vector<tr::TracedJaxpr> known;
  std::vector<ir::Jaxpr> unknown;
  for (size_t b = 0; b < bs.size(); ++b) {
    const tr::TracedJaxpr& k = split[b].known;
    const std::vector<size_t>& slots = m.index[b];
    std::vector<Aval> in = avals_of(k.consts);
    for (const Array& o : ops) in.push_back(ops::aval_of(o));
    tr::TracedJaxpr t = tr::trace_to_jaxpr(
        [&](const Arrays& xs) {
          Arrays r = ir::eval_jaxpr(k.jaxpr, xs);
          Arrays outs(r.begin(), r.begin() + long(nout));
          Arrays res(m.all.size());
          for (size_t i = 0; i < slots.size(); ++i) res[slots[i]] = r[nout + i];
          for (size_t s = 0; s < res.size(); ++s)
            outs.push_back(res[s].valid() ? res[s] : tr::zeros_like_aval(m.all[s]));
          return outs;
        },
        in);
    JX_CHECK(t.consts.empty(), "cond linearize: known branch captured constants");
    known.push_back(tr::TracedJaxpr{std::move(t.jaxpr), k.consts});
    // Unknown branch: [merged residuals..., tangents...], ignoring the slots it does not read.
    ir::Jaxpr u = std::move(split[b].tangent);
    std::vector<int> inv;
    for (const Aval& a : m.all) inv.push_back(u.new_var(a));
    for (size_t i = 0; i < slots.size(); ++i) inv[slots[i]] = u.invars[i];
    inv.insert(inv.end(), u.invars.begin() + long(slots.size()), u.invars.end());
    u.invars = std::move(inv);
    unknown.push_back(std::move(u));
  }
  auto [kjs, kconsts] = join_consts(std::move(known));
  Arrays kin = kconsts;
  kin.insert(kin.end(), ops.begin(), ops.end());
  Arrays kout = bind_cond(index, kin, std::move(kjs));
  Arrays primal_outs(kout.begin(), kout.begin() + long(nout));
  Arrays uin(kout.begin() + long(nout), kout.end());
  uin.insert(uin.end(), dots.begin(), dots.end());
  Arrays touts = bind_cond(index, uin, std::move(unknown));
  return finish(std::move(primal_outs), touts);
}

Arrays cond_transpose(std::span<const Array> cts, std::span<const Array> inputs,
                      std::span<const Aval> in_avals, std::span<const bool> linear, const Params& p) {
  auto bs = branches_of(p);
  JX_CHECK(!linear[0], "cond transpose: the index cannot be linear");
  std::vector<bool> lin(linear.begin() + 1, linear.end());
  std::vector<tr::TracedJaxpr> ts;
  for (const ir::Jaxpr* b : bs) ts.push_back(tr::transpose_jaxpr(*b, lin));
  auto [js, consts] = join_consts(std::move(ts));
  Arrays in = consts;
  for (size_t i = 0; i < lin.size(); ++i)
    if (!lin[i]) in.push_back(inputs[i + 1]);
  std::vector<Aval> out_avals = bs[0]->out_avals();
  for (size_t k = 0; k < out_avals.size(); ++k) in.push_back(tr::instantiate(cts[k], out_avals[k]));
  Arrays r = bind_cond(inputs[0], in, std::move(js));
  Arrays result(inputs.size());
  size_t k = 0;
  for (size_t i = 0; i < lin.size(); ++i)
    if (lin[i]) result[i + 1] = r[k++];
  return result;
}

ops::batching::BatchResult cond_batch(std::span<const Array> in, std::span<const int> dims,
                                      const Params& p) {
  auto bs = branches_of(p);
  int64_t size = ops::batching::axis_size(in, dims);
  size_t nops = in.size() - 1;
  size_t nout = bs[0]->outvars.size();
  if (dims[0] != kNotMapped) {
    // A batched index: run every branch on the whole batch and select per example.
    Array index = ops::batching::bdim_to_front(in[0], dims[0], size);
    Arrays ops;
    for (size_t i = 0; i < nops; ++i) ops.push_back(ops::batching::bdim_to_front(in[i + 1], dims[i + 1], size));
    std::vector<Arrays> outs;
    for (const ir::Jaxpr* b : bs) {
      auto [bj, ob] = tr::batch_jaxpr(*b, size, std::vector<bool>(nops, true), std::vector<bool>(nout, true));
      outs.push_back(tr::call_jaxpr(bj, ops));
    }
    index = lax::clamp(i32_scalar(0), index, i32_scalar(int32_t(bs.size()) - 1));
    Arrays r;
    for (size_t k = 0; k < nout; ++k) {
      Arrays cases;
      for (const Arrays& o : outs) cases.push_back(o[k]);
      Array which = cases[0].ndim() == 1 ? index : lax::broadcast_in_dim(index, cases[0].shape(), {0});
      r.push_back(lax::select_n(which, cases));
    }
    return {r, std::vector<int>(nout, 0)};
  }
  std::vector<bool> ops_bat;
  Arrays ops;
  for (size_t i = 0; i < nops; ++i) {
    bool b = dims[i + 1] != kNotMapped;
    ops_bat.push_back(b);
    ops.push_back(b ? ops::batching::move_bdim(in[i + 1], dims[i + 1], 0) : in[i + 1]);
  }
  std::vector<bool> out_bat(nout, false);
  for (const ir::Jaxpr* b : bs) {
    auto ob = tr::batch_jaxpr(*b, size, ops_bat, {}).second;
    for (size_t k = 0; k < nout; ++k) out_bat[k] = out_bat[k] || ob[k];
  }
  std::vector<tr::TracedJaxpr> bjs;
  for (const ir::Jaxpr* b : bs) bjs.push_back(tr::batch_jaxpr(*b, size, ops_bat, out_bat).first);
  auto [js, consts] = join_consts(std::move(bjs));
  Arrays args = consts;
  args.insert(args.end(), ops.begin(), ops.end());
  Arrays r = bind_cond(in[0], args, std::move(js));
  std::vector<int> od;
  for (bool b : out_bat) od.push_back(b ? 0 : kNotMapped);
  return {r, od};
}

}  // namespace

void register_cond() {
  auto& c = ops::mutable_info(Prim::Cond);
  c.abstract_eval = cond_abstract_eval;
  c.impl = cond_impl;
  c.full_jvp = cond_jvp;
  c.transpose = cond_transpose;
  c.batch = cond_batch;
}

}  // namespace jx::control

namespace jx::lax::cf {

using control::Arrays;
using control::Aval;

Array cond_index(const Array& pred) {
  if (pred.ndim() != 0)
    throw TypeError(str("[cond] Pred must be a scalar, got ", type_str(pred.dtype(), pred.shape()),
                        "; reduce it first (e.g. with .any() or .all())"));
  DType t = pred.dtype();
  Array b = pred;
  if (t != DType::Bool) {
    if (!is_integer(t) && !is_floating(t))
      throw TypeError(str("[cond] Pred type must be either boolean or number, got ", dtype_name(t)));
    b = lax::ne(pred, lax::convert_element_type(Array(0), t, pred.weak_type()));
  }
  return lax::convert_element_type(b, DType::Int32);
}

Array switch_index(const Array& index, size_t num_branches) {
  if (index.ndim() != 0)
    throw TypeError(str("[switch] Branch index must be scalar, got ",
                        type_str(index.dtype(), index.shape())));
  if (!is_integer(index.dtype()))
    throw TypeError(str("[switch] Index type must be an integer, got ", dtype_name(index.dtype()),
                        "; convert the index with astype(jx::int32)"));
  Array i = lax::convert_element_type(index, DType::Int32);
  return lax::clamp(control::i32_scalar(0), i, control::i32_scalar(int32_t(num_branches) - 1));
}

std::vector<Array> cond_flat(const char* api, const Array& index, const std::vector<FlatBody>& branches,
                             const std::vector<Array>& operands, tree::TreeDef* out_def) {
  std::vector<Aval> in_avals = control::avals_of(operands);
  std::vector<control::TracedBody> traced;
  for (const FlatBody& b : branches) traced.push_back(control::trace_body(b, in_avals));
  bool is_cond = std::string(api) == "cond";
  auto name = [&](size_t b) { return is_cond ? std::string(b ? "true_fun" : "false_fun") : str("branch ", b); };
  // Branch 0 is the reference; for cond report (true_fun, false_fun) in that order.
  for (size_t b = 1; b < traced.size(); ++b) {
    size_t first = is_cond ? 1 : 0, second = is_cond ? 0 : b;
    const auto& t1 = traced[first];
    const auto& t2 = traced[second];
    std::string what = str(name(first), " and ", name(second), " output");
    if (t1.defs[0] != t2.defs[0])
      throw TypeError(str("[", api, "] ", what, " must have same type structure, got ", t1.defs[0].str(),
                          " and ", t2.defs[0].str(), "."));
    std::vector<Aval> a1 = t1.jaxpr.out_avals(), a2 = t2.jaxpr.out_avals();
    std::vector<tree::KeyPath> paths = t1.defs[0].leaf_paths();
    std::string diffs;
    for (size_t k = 0; k < a1.size(); ++k)
      if (!control::typematch(a1[k], a2[k]))
        diffs += str("\nDIFFERENT ", ops::aval_str(a1[k]), " vs. ", ops::aval_str(a2[k]), " at output",
                     paths[k].keystr());
    if (!diffs.empty())
      throw TypeError(str("[", api, "] ", what, " must have identical types, got", diffs,
                          ".\nMake every branch return the same shapes and dtypes (e.g. with "
                          "astype or broadcast_to)."));
  }
  // Branch outputs may differ in weak_type only: the result is weak only where all are.
  std::vector<tr::TracedJaxpr> ts;
  for (auto& t : traced) ts.push_back(tr::TracedJaxpr{std::move(t.jaxpr), std::move(t.consts)});
  std::vector<Aval> out0 = ts[0].jaxpr.out_avals();
  std::vector<bool> strong(out0.size(), false);
  for (const auto& t : ts) {
    auto oa = t.jaxpr.out_avals();
    for (size_t k = 0; k < oa.size(); ++k) strong[k] = strong[k] || !oa[k].weak;
  }
  for (auto& t : ts) {
    auto oa = t.jaxpr.out_avals();
    bool differs = false;
    for (size_t k = 0; k < oa.size(); ++k) differs = differs || (oa[k].weak && strong[k]);
    if (!differs) continue;
    const ir::Jaxpr inner = t.jaxpr;
    std::vector<Aval> ia = inner.in_avals();
    tr::TracedJaxpr w = tr::trace_to_jaxpr(
        [&](const Arrays& xs) {
          Arrays r = ir::eval_jaxpr(inner, xs);
          for (size_t k = 0; k < r.size(); ++k)
            if (strong[k] && r[k].weak_type()) r[k] = lax::convert_element_type(r[k], r[k].dtype(), false);
          return r;
        },
        ia);
    JX_CHECK(w.consts.empty(), "cond: weak-type fix captured constants");
    t.jaxpr = std::move(w.jaxpr);
  }
  *out_def = traced[0].defs[0];
  auto [js, consts] = control::join_consts(std::move(ts));
  Arrays in = consts;
  in.insert(in.end(), operands.begin(), operands.end());
  return control::bind_cond(index, in, std::move(js));
}

}  // namespace jx::lax::cf
