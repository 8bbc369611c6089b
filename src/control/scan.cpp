// scan (lax.scan, and through it fori_loop with static bounds and map): operands
// [consts..., carry..., xs...], outputs [carry..., ys...]; params jaxpr ([consts...,
// carry..., x...] -> [carry..., y...]), num_consts, num_carry, length, reverse, unroll.
// Rules follow jax/_src/lax/control_flow/loops.py: jvp with a fixpoint over the carries,
// linearize by splitting the jvp body into a primal scan (stacking residuals as extra ys)
// and a tangent scan, transpose as a reverse scan, batching with a carry fixpoint.
#include <cstring>

#include "control/common.h"
#include "jx/lax.h"
#include "ops/batching.h"
#include "transforms/ad.h"
#include "transforms/bind.h"

namespace jx::control {
namespace {

using ops::batching::kNotMapped;

struct ScanParams {
  const ir::Jaxpr& jaxpr;
  size_t nc, ncar;
  int64_t length;
  bool reverse;
  int64_t unroll;
  size_t nx() const { return jaxpr.invars.size() - nc - ncar; }
  size_t ny() const { return jaxpr.outvars.size() - ncar; }
};
ScanParams parts(const Params& p) {
  return {ir::jaxpr_of(p, "jaxpr"), size_t(p.i("num_consts")), size_t(p.i("num_carry")), p.i("length"),
          p.b("reverse"), p.i("unroll")};
}

Arrays bind_scan(const Arrays& consts, const Arrays& carry, const Arrays& xs, ir::Jaxpr j, int64_t length,
                 bool reverse, int64_t unroll) {
  Params p;
  p.set("jaxpr", ir::jaxpr_param(std::move(j)));
  p.set("length", length);
  p.set("num_carry", int64_t(carry.size()));
  p.set("num_consts", int64_t(consts.size()));
  p.set("reverse", reverse);
  p.set("unroll", unroll);
  Arrays in = consts;
  in.insert(in.end(), carry.begin(), carry.end());
  in.insert(in.end(), xs.begin(), xs.end());
  return bind(Prim::Scan, in, p);
}

Aval stacked(Aval a, int64_t length) {
  a.shape.insert(0, length);
  return a;
}
Aval unstacked(Aval a) {
  a.shape.erase(0);
  return a;
}

ops::Avals scan_abstract_eval(std::span<const Aval> in, const Params& p) {
  ScanParams s = parts(p);
  std::vector<Aval> want = s.jaxpr.in_avals();
  if (in.size() != want.size())
    throw TypeError(str("[scan] the body takes ", want.size(), " operands, got ", in.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    bool is_x = i >= s.nc + s.ncar;
    if (is_x && (in[i].shape.empty() || in[i].shape[0] != s.length))
      throw TypeError(str("[scan] xs operand ", i - s.nc - s.ncar, " has type ", ops::aval_str(in[i]),
                          " but needs a leading axis of the scan length ", s.length));
    Aval have = is_x ? unstacked(in[i]) : in[i];
    if (!typematch(have, want[i]))
      throw TypeError(str("[scan] operand ", i, " has type ", ops::aval_str(have), " but the body takes ",
                          ops::aval_str(want[i])));
  }
  std::vector<Aval> out = s.jaxpr.out_avals();
  for (size_t k = 0; k < s.ncar; ++k)
    if (!typematch(out[k], want[s.nc + k]))
      throw TypeError(str("[scan] scan carry output and input must have identical types: carry ", k, " is ",
                          ops::aval_str(want[s.nc + k]), " in and ", ops::aval_str(out[k]), " out"));
  for (size_t k = s.ncar; k < out.size(); ++k) out[k] = stacked(out[k], s.length);
  return out;
}

// Row i of a contiguous array, as a new array (eager only).
Array row(const Array& x, int64_t i, const Aval& a) {
  Array r = detail::empty_array(a.shape, a.dtype, a.weak);
  size_t n = r.nbytes();
  if (n) std::memcpy(detail::raw_data(r), static_cast<const char*>(detail::raw_data(x)) + size_t(i) * n, n);
  return r;
}

void scan_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  ScanParams s = parts(p);
  std::vector<Aval> x_avals = s.jaxpr.in_avals();
  Arrays args(in.begin(), in.begin() + long(s.nc + s.ncar));
  args.resize(in.size());
  for (int64_t t = 0; t < s.length; ++t) {
    int64_t i = s.reverse ? s.length - 1 - t : t;
    for (size_t k = s.nc + s.ncar; k < in.size(); ++k) args[k] = row(in[k], i, x_avals[k]);
    Arrays r = eval_eager(s.jaxpr, args);
    for (size_t k = 0; k < s.ncar; ++k) args[s.nc + k] = std::move(r[k]);
    // ys go straight into the preallocated outputs: no per-step stacking.
    for (size_t k = s.ncar; k < r.size(); ++k) {
      size_t n = r[k].nbytes();
      if (n) std::memcpy(static_cast<char*>(detail::raw_data(out[k])) + size_t(i) * n, detail::raw_data(r[k]), n);
    }
  }
  for (size_t k = 0; k < s.ncar; ++k) out[k] = as_aval(args[s.nc + k], ops::aval_of(out[k]));
}

std::vector<size_t> iota_from(size_t lo, size_t n) {
  std::vector<size_t> r;
  for (size_t i = 0; i < n; ++i) r.push_back(lo + i);
  return r;
}
void append(std::vector<size_t>& a, const std::vector<size_t>& b) { a.insert(a.end(), b.begin(), b.end()); }
template <class T>
std::vector<T> slice(const std::vector<T>& v, size_t lo, size_t hi) {
  return std::vector<T>(v.begin() + long(lo), v.begin() + long(hi));
}
size_t count(const std::vector<bool>& v) {
  size_t n = 0;
  for (bool b : v) n += b;
  return n;
}

// The jaxpr that computes only `outs` of j from its first `n_in` invars, keeping just the
// equations they need (for hoisting loop-invariant residuals out of the scan).
ir::Jaxpr invariant_slice(const ir::Jaxpr& j, size_t n_in, const std::vector<int>& outs) {
  std::vector<bool> need(j.avals.size(), false);
  for (int v : outs) need[size_t(v)] = true;
  std::vector<bool> keep(j.eqns.size(), false);
  for (size_t e = j.eqns.size(); e-- > 0;) {
    bool k = false;
    for (int o : j.eqns[e].outputs) k = k || need[size_t(o)];
    if (!k) continue;
    keep[e] = true;
    for (const ir::Atom& a : j.eqns[e].inputs)
      if (a.is_var()) need[size_t(a.var)] = true;
  }
  ir::Jaxpr r;
  r.avals = j.avals;
  r.invars.assign(j.invars.begin(), j.invars.begin() + long(n_in));
  for (size_t e = 0; e < j.eqns.size(); ++e)
    if (keep[e]) r.eqns.push_back(j.eqns[e]);
  for (int v : outs) r.outvars.push_back(ir::Atom::of_var(v));
  return r;
}

std::pair<Arrays, Arrays> scan_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                                   const Params& p, bool linearize) {
  ScanParams s = parts(p);
  size_t nc = s.nc, ncar = s.ncar, nx = s.nx(), ny = s.ny();
  std::vector<bool> nz = nonzero_mask(primals, tangents);
  std::vector<bool> const_nz = slice(nz, 0, nc), carry_nz = slice(nz, nc, nc + ncar),
                    xs_nz = slice(nz, nc + ncar, nz.size());
  std::vector<bool> in_nz, out_nz;
  for (;;) {
    in_nz = const_nz;
    in_nz.insert(in_nz.end(), carry_nz.begin(), carry_nz.end());
    in_nz.insert(in_nz.end(), xs_nz.begin(), xs_nz.end());
    out_nz = nonzero_tangent_outs(s.jaxpr, in_nz);
    bool changed = false;
    for (size_t k = 0; k < ncar; ++k)
      if (out_nz[k] && !carry_nz[k]) carry_nz[k] = changed = true;
    if (!changed) break;
  }
  std::vector<bool> ys_nz = slice(out_nz, ncar, out_nz.size());
  size_t ncd = count(const_nz), nkd = count(carry_nz), nxd = count(xs_nz);
  Arrays const_dots, carry(primals.begin() + long(nc), primals.begin() + long(nc + ncar)), carry_dots,
      xs_primal(primals.begin() + long(nc + ncar), primals.end()), xs_dots;
  for (size_t i = 0; i < nc; ++i)
    if (const_nz[i]) const_dots.push_back(tangents[i]);
  for (size_t k = 0; k < ncar; ++k)
    if (carry_nz[k]) carry_dots.push_back(tr::instantiate(tangents[nc + k], ops::aval_of(carry[k])));
  for (size_t i = 0; i < nx; ++i)
    if (xs_nz[i]) xs_dots.push_back(tangents[nc + ncar + i]);
  auto finish = [&](Arrays pouts, const Arrays& kdots, const Arrays& ydots) {
    Arrays touts(ncar + ny);
    size_t a = 0, b = 0;
    for (size_t k = 0; k < ncar; ++k)
      if (carry_nz[k]) touts[k] = kdots[a++];
    for (size_t k = 0; k < ny; ++k)
      if (ys_nz[k]) touts[ncar + k] = ydots[b++];
    return std::make_pair(std::move(pouts), std::move(touts));
  };

  if (!linearize) {
    tr::TracedJaxpr J = tr::jvp_jaxpr(s.jaxpr, in_nz);
    size_t njc = J.consts.size();
    // To scan order: [jc, consts, const dots | carry, carry dots | xs, xs dots].
    size_t base = njc + nc + ncar + nx;
    std::vector<size_t> order = iota_from(0, njc + nc);
    append(order, iota_from(base, ncd));
    append(order, iota_from(njc + nc, ncar));
    append(order, iota_from(base + ncd, nkd));
    append(order, iota_from(njc + nc + ncar, nx));
    append(order, iota_from(base + ncd + nkd, nxd));
    std::vector<size_t> outs = iota_from(0, ncar);
    for (size_t k = 0; k < ncar; ++k)
      if (carry_nz[k]) outs.push_back(ncar + ny + k);
    append(outs, iota_from(ncar, ny));
    for (size_t k = 0; k < ny; ++k)
      if (ys_nz[k]) outs.push_back(ncar + ny + ncar + k);
    ir::Jaxpr body = select_outvars(reorder_invars(std::move(J.jaxpr), order), outs);
    Arrays c = J.consts, k = carry, x = xs_primal;
    c.insert(c.end(), primals.begin(), primals.begin() + long(nc));
    c.insert(c.end(), const_dots.begin(), const_dots.end());
    k.insert(k.end(), carry_dots.begin(), carry_dots.end());
    x.insert(x.end(), xs_dots.begin(), xs_dots.end());
    Arrays r = bind_scan(c, k, x, std::move(body), s.length, s.reverse, s.unroll);
    Arrays pouts = slice(r, 0, ncar), kd = slice(r, ncar, ncar + nkd);
    Arrays ys = slice(r, ncar + nkd, ncar + nkd + ny), yd = slice(r, ncar + nkd + ny, r.size());
    pouts.insert(pouts.end(), ys.begin(), ys.end());
    return finish(std::move(pouts), kd, yd);
  }

  // Linearize (JAX's _scan_partial_eval): split the body into the primal part, which runs
  // now and emits the residuals the tangent part needs, and the tangent part.
  std::vector<bool> split_out = carry_nz;
  split_out.insert(split_out.end(), ys_nz.begin(), ys_nz.end());
  SplitBody sb = split_linearize(s.jaxpr, in_nz, split_out);
  // Known: [kc, consts, carry, xs] -> [carry, ys, residuals...]. Residuals computed from
  // the constants alone are hoisted out of the loop (not stacked); residuals that are xs
  // themselves are forwarded; the rest become extra ys.
  const ir::Jaxpr& kj = sb.known.jaxpr;
  size_t nkc = sb.known.consts.size() + nc;
  std::vector<bool> invariant(kj.avals.size(), false);
  for (size_t i = 0; i < nkc; ++i) invariant[size_t(kj.invars[i])] = true;
  for (const ir::Eqn& e : kj.eqns) {
    bool inv = true;
    for (const ir::Atom& a : e.inputs) inv = inv && (!a.is_var() || invariant[size_t(a.var)]);
    for (int o : e.outputs) invariant[size_t(o)] = inv;
  }
  size_t nres = sb.res_avals.size();
  std::vector<int> inv_res;
  std::vector<size_t> inv_pos, fwd_pos, ext_pos;
  std::vector<size_t> fwd_x;  // which xs operand each forwarded residual is
  Arrays literal_res;         // residuals that are literals: invariant, known now
  std::vector<size_t> literal_pos;
  for (size_t r = 0; r < nres; ++r) {
    const ir::Atom& a = kj.outvars[ncar + ny + r];
    if (!a.is_var()) {
      literal_pos.push_back(r);
      literal_res.push_back(a.literal);
      continue;
    }
    if (invariant[size_t(a.var)]) {
      inv_res.push_back(a.var);
      inv_pos.push_back(r);
      continue;
    }
    auto it = std::find(kj.invars.begin() + long(nkc + ncar), kj.invars.end(), a.var);
    if (it != kj.invars.end()) {
      fwd_pos.push_back(r);
      fwd_x.push_back(size_t(it - kj.invars.begin()) - nkc - ncar);
    } else {
      ext_pos.push_back(r);
    }
  }
  Arrays kconsts = sb.known.consts;
  kconsts.insert(kconsts.end(), primals.begin(), primals.begin() + long(nc));
  Arrays inv_vals;
  if (!inv_res.empty()) inv_vals = ir::eval_jaxpr(invariant_slice(kj, nkc, inv_res), kconsts);
  std::vector<size_t> kouts = iota_from(0, ncar + ny);
  for (size_t r : ext_pos) kouts.push_back(ncar + ny + r);
  ir::Jaxpr known = select_outvars(kj, kouts);
  Arrays kr = bind_scan(kconsts, carry, xs_primal, std::move(known), s.length, s.reverse, s.unroll);
  Arrays pouts = slice(kr, 0, ncar + ny);
  Arrays ext_vals = slice(kr, ncar + ny, kr.size());
  // Tangent: [res..., const dots, carry dots, xs dots] -> [carry dots, ys dots], reordered to
  // [invariant res | const dots | carry dots | forwarded res, extensive res, xs dots].
  std::vector<size_t> uorder = inv_pos;
  append(uorder, literal_pos);
  append(uorder, iota_from(nres, ncd));
  append(uorder, iota_from(nres + ncd, nkd));
  append(uorder, fwd_pos);
  append(uorder, ext_pos);
  append(uorder, iota_from(nres + ncd + nkd, nxd));
  ir::Jaxpr unk = reorder_invars(std::move(sb.tangent), uorder);
  Arrays uconsts = inv_vals, uxs;
  uconsts.insert(uconsts.end(), literal_res.begin(), literal_res.end());
  uconsts.insert(uconsts.end(), const_dots.begin(), const_dots.end());
  for (size_t i : fwd_x) uxs.push_back(xs_primal[i]);
  uxs.insert(uxs.end(), ext_vals.begin(), ext_vals.end());
  uxs.insert(uxs.end(), xs_dots.begin(), xs_dots.end());
  Arrays ur = bind_scan(uconsts, carry_dots, uxs, std::move(unk), s.length, s.reverse, s.unroll);
  return finish(std::move(pouts), slice(ur, 0, nkd), slice(ur, nkd, ur.size()));
}

// Transpose: a scan in the opposite direction whose carry holds the carry cotangents and
// the accumulated cotangents of the linear consts; non-linear consts and xs are residuals.
// Every carry is treated as linear (a non-linear one is an instantiated zero tangent).
Arrays scan_transpose(std::span<const Array> cts, std::span<const Array> inputs,
                      std::span<const Aval> in_avals, std::span<const bool> linear, const Params& p) {
  ScanParams s = parts(p);
  size_t nc = s.nc, ncar = s.ncar, nx = s.nx(), ny = s.ny();
  std::vector<bool> mask(linear.begin(), linear.end());
  for (size_t k = 0; k < ncar; ++k) mask[nc + k] = true;
  std::vector<Aval> body_in = s.jaxpr.in_avals(), body_out = s.jaxpr.out_avals();
  Arrays res_c, res_x, acc0, ct_carry, ct_ys;
  std::vector<Aval> t_in;
  for (size_t i = 0; i < nc; ++i)
    if (!mask[i]) {
      res_c.push_back(inputs[i]);
      t_in.push_back(body_in[i]);
    }
  for (size_t i = 0; i < nc; ++i)
    if (mask[i]) {
      acc0.push_back(tr::zeros_like_aval(body_in[i]));
      t_in.push_back(body_in[i]);
    }
  for (size_t k = 0; k < ncar; ++k) {
    ct_carry.push_back(tr::instantiate(cts[k], body_out[k]));
    t_in.push_back(body_in[nc + k]);
  }
  for (size_t i = 0; i < nx; ++i)
    if (!mask[nc + ncar + i]) {
      res_x.push_back(inputs[nc + ncar + i]);
      t_in.push_back(body_in[nc + ncar + i]);
    }
  for (size_t k = 0; k < ny; ++k) {
    ct_ys.push_back(tr::instantiate(cts[ncar + k], stacked(body_out[ncar + k], s.length)));
    t_in.push_back(body_out[ncar + k]);
  }
  size_t nrc = res_c.size(), nacc = acc0.size(), nrx = res_x.size();
  const ir::Jaxpr& j = s.jaxpr;
  tr::TracedJaxpr T = tr::trace_to_jaxpr(
      [&](const Arrays& xs) {
        size_t a = 0, rc = 0, rx = 0;
        Arrays vals(j.invars.size());
        for (size_t i = 0; i < nc; ++i)
          if (!mask[i]) vals[i] = xs[rc++];
        for (size_t i = 0; i < nx; ++i)
          if (!mask[nc + ncar + i]) vals[nc + ncar + i] = xs[nrc + nacc + ncar + rx++];
        Arrays outs_ct(xs.begin() + long(nrc + nacc), xs.begin() + long(nrc + nacc + ncar));
        outs_ct.insert(outs_ct.end(), xs.begin() + long(nrc + nacc + ncar + nrx), xs.end());
        Arrays in_cts = tr::backward_pass_masked(j, mask, vals, outs_ct);
        Arrays r;
        for (size_t i = 0; i < nc; ++i)
          if (mask[i]) {
            const Array& acc = xs[nrc + a++];
            r.push_back(in_cts[i].valid() ? lax::add(acc, in_cts[i]) : acc);
          }
        for (size_t k = 0; k < ncar; ++k) r.push_back(tr::instantiate(in_cts[nc + k], body_in[nc + k]));
        for (size_t i = 0; i < nx; ++i)
          if (mask[nc + ncar + i]) r.push_back(tr::instantiate(in_cts[nc + ncar + i], body_in[nc + ncar + i]));
        return r;
      },
      t_in);
  Arrays tc = T.consts;
  tc.insert(tc.end(), res_c.begin(), res_c.end());
  Arrays tcarry = acc0;
  tcarry.insert(tcarry.end(), ct_carry.begin(), ct_carry.end());
  Arrays txs = res_x;
  txs.insert(txs.end(), ct_ys.begin(), ct_ys.end());
  Arrays r = bind_scan(tc, tcarry, txs, std::move(T.jaxpr), s.length, !s.reverse, s.unroll);
  Arrays result(inputs.size());
  size_t a = 0, x = nacc + ncar;
  for (size_t i = 0; i < nc; ++i)
    if (mask[i]) result[i] = r[a++];
  for (size_t k = 0; k < ncar; ++k)
    if (linear[nc + k]) result[nc + k] = r[nacc + k];
  for (size_t i = 0; i < nx; ++i)
    if (mask[nc + ncar + i]) result[nc + ncar + i] = r[x++];
  return result;
}

ops::batching::BatchResult scan_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  ScanParams s = parts(p);
  size_t nc = s.nc, ncar = s.ncar, nx = s.nx(), ny = s.ny();
  int64_t size = ops::batching::axis_size(in, dims);
  std::vector<bool> bat;
  for (int d : dims) bat.push_back(d != kNotMapped);
  std::vector<bool> carry_bat = slice(bat, nc, nc + ncar);
  for (;;) {
    std::vector<bool> b = slice(bat, 0, nc);
    b.insert(b.end(), carry_bat.begin(), carry_bat.end());
    for (size_t i = 0; i < nx; ++i) b.push_back(bat[nc + ncar + i]);
    std::vector<bool> out = depends_on(s.jaxpr, b);
    bool changed = false;
    for (size_t k = 0; k < ncar; ++k)
      if (out[k] && !carry_bat[k]) carry_bat[k] = changed = true;
    if (!changed) break;
  }
  std::vector<bool> in_bat = slice(bat, 0, nc);
  in_bat.insert(in_bat.end(), carry_bat.begin(), carry_bat.end());
  for (size_t i = 0; i < nx; ++i) in_bat.push_back(bat[nc + ncar + i]);
  std::vector<bool> force = carry_bat;
  force.resize(ncar + ny, false);
  auto [bj, out_bat] = tr::batch_jaxpr(s.jaxpr, size, in_bat, force);
  Arrays consts = bj.consts, carry, xs;
  for (size_t i = 0; i < nc; ++i) consts.push_back(bat[i] ? ops::batching::move_bdim(in[i], dims[i], 0) : in[i]);
  for (size_t k = 0; k < ncar; ++k) {
    size_t i = nc + k;
    carry.push_back(carry_bat[k] ? ops::batching::materialize_at(in[i], dims[i], size, 0) : in[i]);
  }
  // The scan axis stays at 0, so a batched xs has its batch dim at 1 (0 in the slices).
  for (size_t i = nc + ncar; i < in.size(); ++i)
    xs.push_back(bat[i] ? ops::batching::move_bdim(in[i], dims[i], 1) : in[i]);
  Arrays r = bind_scan(consts, carry, xs, std::move(bj.jaxpr), s.length, s.reverse, s.unroll);
  std::vector<int> od;
  for (size_t k = 0; k < ncar; ++k) od.push_back(carry_bat[k] ? 0 : kNotMapped);
  for (size_t k = 0; k < ny; ++k) od.push_back(out_bat[ncar + k] ? 1 : kNotMapped);
  return {r, od};
}

}  // namespace

void register_scan() {
  auto& s = ops::mutable_info(Prim::Scan);
  s.abstract_eval = scan_abstract_eval;
  s.impl = scan_impl;
  s.full_jvp = scan_jvp;
  s.transpose = scan_transpose;
  s.batch = scan_batch;
}

}  // namespace jx::control

namespace jx::lax::cf {

using control::Arrays;
using control::Aval;

std::vector<Array> scan_flat(const char* api, const FlatBody& f, std::vector<Array> init,
                             const tree::TreeDef& init_def, const std::vector<Array>& xs,
                             const ScanSpec& spec, tree::TreeDef* y_def) {
  std::vector<int64_t> lengths;
  for (const Array& x : xs) {
    if (x.ndim() == 0)
      throw ValueError(str("[", api, "] got value with no leading axis to scan over: ",
                           type_str(x.dtype(), x.shape()), "; every leaf of xs needs a leading axis"));
    lengths.push_back(x.shape()[0]);
  }
  int64_t length = 0;
  if (spec.length) {
    length = *spec.length;
    if (length < 0) throw ValueError(str("[", api, "] length must be non-negative, got ", length));
    for (int64_t l : lengths)
      if (l != length)
        throw ValueError(str("[", api, "] got `length` argument of ", length,
                             " which disagrees with leading axis sizes ", list_str(lengths),
                             ". Give every xs leaf that many rows, or drop `length`."));
  } else {
    if (lengths.empty())
      throw ValueError(str("[", api, "] got no values to scan over and `length` not provided; pass "
                           "ScanOptions{.length = n}"));
    for (int64_t l : lengths)
      if (l != lengths[0])
        throw ValueError(str("[", api, "] got values with different leading axis sizes: ", list_str(lengths),
                             ". Every xs leaf is sliced along axis 0 and needs the same number of rows."));
    length = lengths[0];
  }
  if (spec.unroll < 1) throw ValueError(str("[", api, "] `unroll` must be a positive int, got ", spec.unroll));
  std::vector<Aval> x_avals;
  for (const Array& x : xs) {
    Aval a = ops::aval_of(x);
    a.shape.erase(0);
    x_avals.push_back(a);
  }
  auto trace = [&] {
    std::vector<Aval> in = control::avals_of(init);
    in.insert(in.end(), x_avals.begin(), x_avals.end());
    return control::trace_body(f, in);
  };
  control::TracedBody b = trace();
  JX_CHECK(b.defs.size() == 2, "scan body: expected (carry, y) structures");
  size_t nc = init.size();
  std::vector<Aval> out = b.jaxpr.out_avals();
  std::vector<Aval> carry_out(out.begin(), out.begin() + long(std::min(nc, out.size())));
  if (b.defs[0] == init_def && control::promote_weak_carries(init, carry_out)) {
    b = trace();
    out = b.jaxpr.out_avals();
    carry_out.assign(out.begin(), out.begin() + long(nc));
  }
  control::check_carry(api, "scan carry output and input", init_def, control::avals_of(init), b.defs[0],
                       carry_out);
  *y_def = b.defs[1];
  return control::bind_scan(b.consts, init, xs, std::move(b.jaxpr), length, spec.reverse, spec.unroll);
}

}  // namespace jx::lax::cf
