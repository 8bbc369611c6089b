#include "control/common.h"

#include "jx/lax.h"
#include "transforms/ad.h"
#include "transforms/bind.h"

namespace jx::control {

TracedBody trace_body(const lax::cf::FlatBody& f, const std::vector<Aval>& in_avals) {
  std::vector<tree::TreeDef> defs;
  tr::TracedJaxpr t = tr::trace_to_jaxpr(
      [&](const Arrays& xs) {
        lax::cf::FlatOut out = f(xs);
        defs = std::move(out.defs);
        return out.leaves;
      },
      in_avals);
  return TracedBody{std::move(t.jaxpr), std::move(t.consts), std::move(defs)};
}

std::vector<Aval> avals_of(const Arrays& xs) {
  std::vector<Aval> r;
  r.reserve(xs.size());
  for (const Array& x : xs) r.push_back(ops::aval_of(x));
  return r;
}

bool is_float(const Aval& a) { return is_inexact(a.dtype); }  // carries a tangent

Array as_aval(const Array& x, const Aval& a) {
  if (x.is_concrete() && x.weak_type() != a.weak) return detail::alias_array(x, a.shape, a.weak);
  return x;
}

Array i32_scalar(int32_t v) {
  Array a = detail::empty_array({}, DType::Int32);
  *detail::data<int32_t>(a) = v;
  return a;
}

Arrays eval_eager(const ir::Jaxpr& j, const Arrays& args) {
  tr::CurrentTraceGuard g(nullptr);
  return ir::eval_jaxpr(j, args);
}

ir::Jaxpr reorder_invars(ir::Jaxpr j, const std::vector<size_t>& order) {
  JX_CHECK(order.size() == j.invars.size(), "reorder_invars: ", order.size(), " for ", j.invars.size());
  std::vector<int> inv;
  for (size_t k : order) inv.push_back(j.invars.at(k));
  j.invars = std::move(inv);
  return j;
}

ir::Jaxpr select_outvars(ir::Jaxpr j, const std::vector<size_t>& order) {
  std::vector<ir::Atom> outs;
  for (size_t k : order) outs.push_back(j.outvars.at(k));
  j.outvars = std::move(outs);
  return j;
}

ir::Jaxpr insert_unused_invars(ir::Jaxpr j, size_t pos, const std::vector<Aval>& avals) {
  std::vector<int> vs;
  for (const Aval& a : avals) vs.push_back(j.new_var(a));
  j.invars.insert(j.invars.begin() + long(pos), vs.begin(), vs.end());
  return j;
}

std::pair<std::vector<ir::Jaxpr>, Arrays> join_consts(std::vector<tr::TracedJaxpr> js) {
  std::vector<std::vector<Aval>> const_avals;
  Arrays all;
  for (const auto& t : js) {
    const_avals.push_back(avals_of(t.consts));
    all.insert(all.end(), t.consts.begin(), t.consts.end());
  }
  std::vector<ir::Jaxpr> out;
  for (size_t i = 0; i < js.size(); ++i) {
    ir::Jaxpr j = std::move(js[i].jaxpr);
    std::vector<Aval> before, after;
    for (size_t k = 0; k < i; ++k) before.insert(before.end(), const_avals[k].begin(), const_avals[k].end());
    for (size_t k = i + 1; k < js.size(); ++k) after.insert(after.end(), const_avals[k].begin(), const_avals[k].end());
    j = insert_unused_invars(std::move(j), const_avals[i].size(), after);
    j = insert_unused_invars(std::move(j), 0, before);
    out.push_back(std::move(j));
  }
  return {std::move(out), std::move(all)};
}

namespace {
std::vector<bool> propagate(const ir::Jaxpr& j, const std::vector<bool>& marked_in, bool tangents) {
  JX_CHECK(marked_in.size() == j.invars.size(), "propagate: mask size");
  std::vector<bool> m(j.avals.size(), false);
  for (size_t i = 0; i < j.invars.size(); ++i) m[size_t(j.invars[i])] = marked_in[i];
  for (const ir::Eqn& e : j.eqns) {
    bool any = false;
    for (const ir::Atom& a : e.inputs) any = any || (a.is_var() && m[size_t(a.var)]);
    if (!any) continue;
    if (tangents && ops::info(e.prim).zero_tangent) continue;
    for (int o : e.outputs) m[size_t(o)] = !tangents || is_float(j.avals[size_t(o)]);
  }
  std::vector<bool> r;
  for (const ir::Atom& a : j.outvars) r.push_back(a.is_var() && m[size_t(a.var)]);
  return r;
}
}  // namespace

std::vector<bool> nonzero_tangent_outs(const ir::Jaxpr& j, const std::vector<bool>& nz_in) {
  return propagate(j, nz_in, true);
}

std::vector<bool> depends_on(const ir::Jaxpr& j, const std::vector<bool>& marked_in) {
  return propagate(j, marked_in, false);
}

std::vector<bool> nonzero_mask(std::span<const Array> primals, std::span<const Array> tangents) {
  std::vector<bool> nz;
  for (size_t i = 0; i < primals.size(); ++i)
    nz.push_back(i < tangents.size() && tangents[i].valid() && is_inexact(primals[i].dtype()));
  return nz;
}

SplitBody split_linearize(const ir::Jaxpr& body, const std::vector<bool>& in_nz, const std::vector<bool>& out_nz) {
  std::vector<Aval> in_avals = body.in_avals(), out_avals = body.out_avals();
  ir::Jaxpr lin_jaxpr;
  std::vector<int> out_index;
  SplitBody sb;
  sb.known = tr::trace_to_jaxpr(
      [&](const Arrays& in) {
        Arrays nzv;
        for (size_t i = 0; i < in.size(); ++i)
          if (in_nz[i]) nzv.push_back(in[i]);
        tr::Linearized lin = tr::linearize_flat(
            [&](const Arrays& v) {
              Arrays all = in;
              size_t k = 0;
              for (size_t i = 0; i < all.size(); ++i)
                if (in_nz[i]) all[i] = v[k++];
              return ir::eval_jaxpr(body, all);
            },
            nzv);
        Arrays outs = lin.primals_out;
        // The primal values the linear map closed over are the residuals.
        outs.insert(outs.end(), lin.linear.consts.begin(), lin.linear.consts.end());
        lin_jaxpr = std::move(lin.linear);
        out_index = std::move(lin.out_index);
        return outs;
      },
      in_avals);
  for (int v : lin_jaxpr.constvars) sb.res_avals.push_back(lin_jaxpr.avals[size_t(v)]);
  ir::Jaxpr u = std::move(lin_jaxpr);
  u.invars.insert(u.invars.begin(), u.constvars.begin(), u.constvars.end());
  u.constvars.clear();
  u.consts.clear();
  tr::TracedJaxpr t = tr::trace_to_jaxpr(
      [&](const Arrays& xs) {
        Arrays r = ir::eval_jaxpr(u, xs);
        Arrays by_out(out_avals.size());
        for (size_t k = 0; k < out_index.size(); ++k) by_out[size_t(out_index[k])] = r[k];
        Arrays outs;
        for (size_t k = 0; k < out_avals.size(); ++k) {
          if (out_nz[k]) outs.push_back(tr::instantiate(by_out[k], out_avals[k]));
          else JX_CHECK(!by_out[k].valid(), "split_linearize: output ", k, " has a tangent not in out_nz");
        }
        return outs;
      },
      u.in_avals());
  JX_CHECK(t.consts.empty(), "split_linearize: the tangent body captured constants");
  sb.tangent = std::move(t.jaxpr);
  return sb;
}

void check_carry(const char* op, const char* what, const tree::TreeDef& in_def,
                 const std::vector<Aval>& in_avals, const tree::TreeDef& out_def,
                 const std::vector<Aval>& out_avals) {
  if (in_def != out_def)
    throw TypeError(str("[", op, "] ", what, " must have the same pytree structure, got input ",
                        in_def.str(), " and output ", out_def.str(),
                        ". Revise the function so that the carry output has the same pytree "
                        "structure as the carry input."));
  std::vector<tree::KeyPath> paths = in_def.leaf_paths();
  std::string diffs;
  for (size_t i = 0; i < in_avals.size(); ++i) {
    const Aval& a = in_avals[i];
    const Aval& b = out_avals[i];
    if (typematch(a, b)) continue;
    std::string where = paths[i].size() ? str("the input carry at path ", paths[i].keystr())
                                        : std::string("the input carry");
    bool dt = a.dtype != b.dtype, sh = a.shape != b.shape;
    diffs += str("\n  * ", where, " has type ", ops::aval_str(a),
                 " but the corresponding output carry component has type ", ops::aval_str(b),
                 ", so ", dt ? "the dtypes do not match" : "", dt && sh ? " and also " : "",
                 sh ? "the shapes do not match" : "");
  }
  if (diffs.empty()) return;
  throw TypeError(str("[", op, "] ", what, " must have identical types, but they differ:", diffs,
                      "\nRevise the function so that all output types (e.g. shapes and dtypes) "
                      "match the corresponding input types."));
}

bool promote_weak_carries(Arrays& init, const std::vector<Aval>& out_avals) {
  if (init.size() != out_avals.size()) return false;
  bool changed = false;
  for (size_t i = 0; i < init.size(); ++i) {
    Aval a = ops::aval_of(init[i]);
    const Aval& b = out_avals[i];
    if (!a.weak || typematch(a, b) || a.shape != b.shape) continue;
    init[i] = lax::convert_element_type(init[i], b.dtype, b.weak);
    changed = true;
  }
  return changed;
}

}  // namespace jx::control
