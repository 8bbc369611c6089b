// Per-example outer products whose only readers are reductions. vmap(grad) of a dense
// layer gives each example's weight gradient as an outer product, one dot_general with a
// batch dim and no contraction:
//   m:f32[B,784,256] = dot_general[lhs_batch=(0,) rhs_batch=(0,) lhs_contracting=()
//                                  rhs_contracting=()] x:f32[B,784] g:f32[B,256]
// DP-SGD reads it only through two reductions: each example's squared norm (to clip it)
// and the mean of the clipped gradients. Both have closed forms that never build the
// [B,784,256] array (100 MB at B=128):
//   reduce_sum(square(m), all non-batch dims)           -> sum(square(x)) * sum(square(g))
//       (||x_b ⊗ g_b||² = ||x_b||² ||g_b||², per example)
//   reduce_sum(m * c, batch dims), c one weight per example (size 1 on every other dim)
//                                                        -> dot_general(x, g * c) contracting
//                                                           over the batch dims (the weight
//                                                           goes on the smaller operand)
//   reduce_sum(m, batch dims)                            -> dot_general(x, g) contracting over them
// The unweighted form covers a plain mean of per-example gradients. Between m and these
// readers there may be transposes and reshapes that keep m's leading batch dims (a
// layer whose kernel is used transposed, or gradients flattened per example); the mean's
// rewrite applies them to its (small) result. The square is `square`, `integer_pow[y=2]`
// (jnp::square) or `mul m m`. Contracting dims of size 1 (an example given as [1, n])
// count as no contraction.
//
// m is rewritten only when EVERY reader of it (through those shape ops) is one of these
// reductions and neither m nor an intermediate is returned or read elsewhere: if m must
// exist anyway, the rewrite would only add work. The rewritten reductions keep their
// output variables; m and its readers are left for DCE.
//
// Exact in real arithmetic; in floating point the sums are reassociated (the norm is a
// product of two sums instead of a sum of products, the weight multiplies an operand
// before the product instead of the product), so results differ by rounding: relative differences of
// a few ulp times the log of the summed length in practice. Overflow and underflow can
// differ where the products of the original would overflow or underflow and the sums do
// not (or the reverse). JX_PER_EXAMPLE_REWRITE=0 disables the pass (for measuring what
// it saves).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>

#include "compiler/passes.h"

namespace jx::compiler {
namespace {

using ops::Prim;
using ints = std::vector<int64_t>;
using ops::Aval;

bool disabled_by_env() {
  const char* v = std::getenv("JX_PER_EXAMPLE_REWRITE");
  return v && std::strcmp(v, "0") == 0;
}

ints range(int64_t begin, int64_t end) {
  ints r(size_t(std::max<int64_t>(end - begin, 0)));
  std::iota(r.begin(), r.end(), begin);
  return r;
}

bool contains(const ints& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

int64_t numel(const Aval& a) {
  int64_t n = 1;
  for (int64_t d : a.shape) n *= d;
  return n;
}

// A reduction found below m, with the shape ops between m and its operand.
struct Reduction {
  size_t eqn = 0;                      // the reduce_sum equation (its output is kept)
  bool norm = false;                   // true: squared norm per example; false: sum over examples
  const ir::Eqn* square = nullptr;     // norm: the square equation (its primitive is reused)
  std::optional<ir::Atom> weight;      // sum over examples: the per-example weight c, if any
  std::vector<const ir::Eqn*> views;   // transposes/reshapes from m to the reduced value
};

class PerExampleRewriter {
 public:
  explicit PerExampleRewriter(const ir::Jaxpr& j)
      : out_(j), readers_(j.avals.size()), returned_(j.avals.size(), false) {
    for (size_t i = 0; i < j.eqns.size(); ++i)
      for (const ir::Atom& a : j.eqns[i].inputs)
        if (a.is_var() && (readers_[size_t(a.var)].empty() || readers_[size_t(a.var)].back() != i))
          readers_[size_t(a.var)].push_back(i);
    for (const ir::Atom& a : j.outvars)
      if (a.is_var()) returned_[size_t(a.var)] = true;
  }

  ir::Jaxpr run() {
    for (size_t i = 0; i < out_.eqns.size(); ++i) try_rewrite(i);
    if (replacements_.empty()) return std::move(out_);
    std::vector<ir::Eqn> eqns;
    for (size_t i = 0; i < out_.eqns.size(); ++i) {
      auto it = replacements_.find(i);
      if (it == replacements_.end()) eqns.push_back(std::move(out_.eqns[i]));
      else for (ir::Eqn& e : it->second) eqns.push_back(std::move(e));
    }
    out_.eqns = std::move(eqns);
    return std::move(out_);
  }

 private:
  ir::Jaxpr out_;
  std::vector<std::vector<size_t>> readers_;  // per variable: the equations reading it, once each
  std::vector<bool> returned_;
  std::map<size_t, std::vector<ir::Eqn>> replacements_;

  // The only equation reading v, when v is not returned and exactly one equation reads it.
  const ir::Eqn* sole_reader(int v, size_t* index = nullptr) const {
    if (returned_[size_t(v)] || readers_[size_t(v)].size() != 1) return nullptr;
    if (index) *index = readers_[size_t(v)][0];
    return &out_.eqns[readers_[size_t(v)][0]];
  }

  bool is_square_of(const ir::Eqn& e, int v) const {
    if (e.inputs.empty() || !e.inputs[0].is_var() || e.inputs[0].var != v) return false;
    if (e.prim == Prim::Square) return true;
    if (e.prim == Prim::IntegerPow) return e.params.i("y") == 2;
    return e.prim == Prim::Mul && e.inputs[1].is_var() && e.inputs[1].var == v;
  }

  // c is one weight per example for a value of type `of` with nb leading batch dims: same
  // dtype and rank, size 1 on every other dim, the batch size or 1 on the batch dims.
  bool is_per_example_weight(const ir::Atom& c, const Aval& of, size_t nb) const {
    const Aval a = out_.aval_of(c);
    if (a.dtype != of.dtype || a.shape.size() != of.shape.size()) return false;
    for (size_t d = 0; d < a.shape.size(); ++d)
      if (a.shape[d] != 1 && (d >= nb || a.shape[d] != of.shape[d])) return false;
    return true;
  }

  // Collects the reductions below value v (m or a view of it); false when some reader
  // is anything else.
  bool collect(int v, size_t nb, const Shape& batch, std::vector<const ir::Eqn*> views,
               std::vector<Reduction>& found) const {
    if (returned_[size_t(v)]) return false;
    const Aval& av = out_.avals[size_t(v)];
    const int64_t rank = int64_t(av.shape.size());
    for (size_t r : readers_[size_t(v)]) {
      const ir::Eqn& e = out_.eqns[r];
      if (e.outputs.size() != 1) return false;
      const int out = e.outputs[0];
      const Aval& oa = out_.avals[size_t(out)];
      if (e.prim == Prim::Transpose) {
        const ints& perm = e.params.ints("permutation");
        for (size_t k = 0; k < nb; ++k)
          if (perm[k] != int64_t(k)) return false;
        views.push_back(&e);
        if (!collect(out, nb, batch, views, found)) return false;
        views.pop_back();
        continue;
      }
      if (e.prim == Prim::Reshape) {
        if ((e.params.has("dimensions") && !e.params.ints("dimensions").empty()) || oa.shape.size() < nb)
          return false;
        for (size_t k = 0; k < nb; ++k)
          if (oa.shape[k] != batch[k]) return false;
        views.push_back(&e);
        if (!collect(out, nb, batch, views, found)) return false;
        views.pop_back();
        continue;
      }
      if (e.prim == Prim::ReduceSum) {  // the plain sum over examples
        if (e.params.ints("axes") != range(0, int64_t(nb))) return false;
        found.push_back({r, false, nullptr, std::nullopt, views});
        continue;
      }
      size_t reduce = 0;
      const ir::Eqn* next = sole_reader(out, &reduce);
      if (!next || next->prim != Prim::ReduceSum) return false;
      const ints& axes = next->params.ints("axes");
      if (is_square_of(e, v)) {
        if (axes != range(int64_t(nb), rank)) return false;
        found.push_back({reduce, true, &e, std::nullopt, views});
        continue;
      }
      if (e.prim == Prim::Mul && e.inputs.size() == 2) {
        const bool lhs = e.inputs[0].is_var() && e.inputs[0].var == v;
        const ir::Atom& c = e.inputs[lhs ? 1 : 0];
        if (!(oa == av) || !is_per_example_weight(c, av, nb) || axes != range(0, int64_t(nb)))
          return false;
        found.push_back({reduce, false, nullptr, c, views});
        continue;
      }
      return false;
    }
    return true;
  }

  std::optional<ir::Atom> emit(std::vector<ir::Eqn>& eqns, Prim prim, std::vector<ir::Atom> inputs,
                               ops::Params params) {
    return passes::emit_eqn(out_, eqns, prim, std::move(inputs), std::move(params));
  }

  // sum over `operand`'s non-batch dims of its square, squared as `square` squares m.
  std::optional<ir::Atom> sum_of_squares(std::vector<ir::Eqn>& eqns, const ir::Atom& operand,
                                         const ints& batch_dims, const ir::Eqn& square) {
    std::vector<ir::Atom> in = {operand};
    if (square.prim == Prim::Mul) in.push_back(operand);
    auto sq = emit(eqns, square.prim, in, square.params);
    if (!sq) return std::nullopt;
    ints axes;
    for (int64_t d = 0; d < int64_t(out_.aval_of(operand).shape.size()); ++d)
      if (!contains(batch_dims, d)) axes.push_back(d);
    if (axes.empty()) return sq;
    return emit(eqns, Prim::ReduceSum, {*sq}, ops::Params{{"axes", axes}});
  }

  // The weight c (batch dims first, then ones) reshaped to multiply `operand`, whose
  // batch dims are `batch_dims` (ascending).
  std::optional<ir::Atom> weighted(std::vector<ir::Eqn>& eqns, const ir::Atom& operand,
                                   const ints& batch_dims, const ir::Atom& c) {
    const Aval ca = out_.aval_of(c), oa = out_.aval_of(operand);
    ints shape(oa.shape.size(), 1);
    for (size_t k = 0; k < batch_dims.size(); ++k) shape[size_t(batch_dims[k])] = ca.shape[k];
    ir::Atom cw = c;
    if (ints(ca.shape.begin(), ca.shape.end()) != shape) {
      auto r = emit(eqns, Prim::Reshape, {c}, ops::Params{{"new_sizes", shape}, {"dimensions", ints{}}});
      if (!r) return std::nullopt;
      cw = *r;
    }
    return emit(eqns, Prim::Mul, {operand, cw}, {});
  }

  std::optional<std::vector<ir::Eqn>> rewrite(const ir::Eqn& dot, const Reduction& red) {
    const ir::Eqn& reduce = out_.eqns[red.eqn];
    const ir::Atom &x = dot.inputs[0], &g = dot.inputs[1];
    const ints &lb = dot.params.ints("lhs_batch"), &rb = dot.params.ints("rhs_batch");
    const ints &lc = dot.params.ints("lhs_contracting"), &rc = dot.params.ints("rhs_contracting");
    std::vector<ir::Eqn> eqns;
    std::optional<ir::Atom> result;
    if (red.norm) {
      auto sx = sum_of_squares(eqns, x, lb, *red.square);
      auto sg = sx ? sum_of_squares(eqns, g, rb, *red.square) : std::nullopt;
      if (!sg) return std::nullopt;
      result = emit(eqns, Prim::Mul, {*sx, *sg}, {});
    } else {
      ir::Atom lhs = x, rhs = g;
      if (red.weight) {  // weight the smaller operand
        const bool on_x = numel(out_.aval_of(x)) <= numel(out_.aval_of(g));
        auto w = weighted(eqns, on_x ? x : g, on_x ? lb : rb, *red.weight);
        if (!w) return std::nullopt;
        (on_x ? lhs : rhs) = *w;
      }
      ops::Params p = dot.params;
      ints new_lc = lb, new_rc = rb;
      new_lc.insert(new_lc.end(), lc.begin(), lc.end());
      new_rc.insert(new_rc.end(), rc.begin(), rc.end());
      p.set("lhs_contracting", new_lc);
      p.set("rhs_contracting", new_rc);
      p.set("lhs_batch", ints{});
      p.set("rhs_batch", ints{});
      result = emit(eqns, Prim::DotGeneral, {lhs, rhs}, p);
      // The shape ops between m and the reduction, on the free dims only.
      const size_t nb = lb.size();
      for (const ir::Eqn* v : red.views) {
        if (!result) break;
        if (v->prim == Prim::Transpose) {
          ints perm;
          for (size_t k = nb; k < v->params.ints("permutation").size(); ++k)
            perm.push_back(v->params.ints("permutation")[k] - int64_t(nb));
          result = emit(eqns, Prim::Transpose, {*result}, ops::Params{{"permutation", perm}});
        } else {
          const ints& sizes = v->params.ints("new_sizes");
          result = emit(eqns, Prim::Reshape, {*result},
                        ops::Params{{"new_sizes", ints(sizes.begin() + std::ptrdiff_t(nb), sizes.end())},
                                    {"dimensions", ints{}}});
        }
      }
    }
    const int target = reduce.outputs[0];
    if (!result || !(out_.aval_of(*result) == out_.avals[size_t(target)])) return std::nullopt;
    eqns.back().outputs[0] = target;  // the reduction's result, computed without m
    return eqns;
  }

  void try_rewrite(size_t i) {
    const ir::Eqn& dot = out_.eqns[i];
    if (dot.prim != Prim::DotGeneral || dot.outputs.size() != 1 || dot.inputs.size() != 2) return;
    const ints &lb = dot.params.ints("lhs_batch"), &rb = dot.params.ints("rhs_batch");
    const ints& lc = dot.params.ints("lhs_contracting");
    if (lb.empty() || !std::is_sorted(lb.begin(), lb.end()) || !std::is_sorted(rb.begin(), rb.end()))
      return;
    const Aval xa = out_.aval_of(dot.inputs[0]), ma = out_.avals[size_t(dot.outputs[0])];
    if (!is_floating(ma.dtype) || xa.dtype != ma.dtype) return;  // no preferred wider type
    for (int64_t d : lc)  // (rc has the same sizes: abstract eval checked)
      if (xa.shape[size_t(d)] != 1) return;  // a real contraction: not an outer product
    const size_t nb = lb.size();
    const Shape batch(ma.shape.begin(), ma.shape.begin() + std::ptrdiff_t(nb));
    std::vector<Reduction> found;
    if (!collect(dot.outputs[0], nb, batch, {}, found) || found.empty()) return;
    std::map<size_t, std::vector<ir::Eqn>> planned;
    for (const Reduction& red : found) {
      if (replacements_.count(red.eqn) || planned.count(red.eqn)) return;
      auto eqns = rewrite(dot, red);
      if (!eqns) return;
      planned[red.eqn] = std::move(*eqns);
    }
    for (auto& [k, eqns] : planned) replacements_[k] = std::move(eqns);
  }
};

}  // namespace

ir::Jaxpr rewrite_per_example_products(const ir::Jaxpr& j) {
  if (disabled_by_env()) return j;
  return PerExampleRewriter(j).run();
}

}  // namespace jx::compiler
