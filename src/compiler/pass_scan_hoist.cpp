// Work that does not need to run once per iteration, moved out of scan bodies. A scan
// runs its body `length` times; an RNN's body holds three kinds of work that need not:
//   invariant   an equation that reads only consts (and literals), such as a reshape of
//               the bias, runs once before the loop; its result becomes a const.
//   mapped      a dot_general whose operands are xs slices and consts (the input
//               projection x_t @ U) runs once before the loop over the stacked xs, one
//               large product instead of `length` small ones; its result becomes an xs.
//   accumulated a carry updated only as c <- c + dot_general(a_t, b_t) (a weight
//               gradient in the transposed scan: dW += h_t^T dz_t) becomes one product
//               after the loop that also contracts the time axis:
//               c_final = c_0 + dot_general(stack(a), stack(b)). Operands computed in the
//               body are stacked as extra ys; xs slices are read from the scan's xs.
// Consts and xs that the body no longer reads are then dropped. XLA's while-loop
// invariant code motion does the first; the other two are what an RNN's hand-written
// kernel (cuDNN's, PyTorch's fused RNNs) does by construction, and what leaves only the
// products that depend on the previous step inside the loop.
//
// Exact in real arithmetic. The accumulated form sums the time steps in another order, so
// results differ by rounding, as any reassociation jit already does. A new stacked buffer
// (mapped result, stacked operand) is made only up to kMaxStackedBytes: past that the
// memory would cost more than the loop's small products. JX_SCAN_HOIST=0 disables the
// pass (for measuring what it saves).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

#include "compiler/passes.h"
#include "ops/common.h"

namespace jx::compiler {
namespace {

using ops::Aval;
using ops::Prim;
using ints = std::vector<int64_t>;

constexpr int64_t kMaxStackedBytes = int64_t(256) << 20;

bool disabled_by_env() {
  const char* v = std::getenv("JX_SCAN_HOIST");
  return v && std::strcmp(v, "0") == 0;
}

int64_t numel(const Aval& a) {
  int64_t n = 1;
  for (int64_t d : a.shape) n *= d;
  return n;
}

int64_t nbytes(const Aval& a) { return numel(a) * int64_t(itemsize(a.dtype)); }

Aval stacked(Aval a, int64_t length) {
  a.shape.insert(0, length);
  return a;
}

ints shifted(const ints& dims) {
  ints r;
  for (int64_t d : dims) r.push_back(d + 1);
  return r;
}

ints with_time(const ints& dims) {
  ints r{0};
  for (int64_t d : dims) r.push_back(d + 1);
  return r;
}

bool is_control_flow(Prim p) { return p == Prim::Cond || p == Prim::While || p == Prim::Scan; }

// One scan equation taken apart: its body, the outer operands and results of each part.
class ScanRewrite {
 public:
  ScanRewrite(ir::Jaxpr& outer, const ir::Eqn& e)
      : outer_(outer), params_(e.params), body_(ir::jaxpr_of(e.params, "jaxpr")) {
    nc_ = size_t(e.params.i("num_consts"));
    ncar_ = size_t(e.params.i("num_carry"));
    length_ = e.params.i("length");
    consts_.assign(e.inputs.begin(), e.inputs.begin() + std::ptrdiff_t(nc_));
    carry_.assign(e.inputs.begin() + std::ptrdiff_t(nc_), e.inputs.begin() + std::ptrdiff_t(nc_ + ncar_));
    xs_.assign(e.inputs.begin() + std::ptrdiff_t(nc_ + ncar_), e.inputs.end());
    carry_out_.assign(e.outputs.begin(), e.outputs.begin() + std::ptrdiff_t(ncar_));
    ys_out_.assign(e.outputs.begin() + std::ptrdiff_t(ncar_), e.outputs.end());
  }

  // Applies every rewrite; false when none applied (the equation then stays as it was).
  bool run() {
    // A body closed over constants, or a loop that never runs (hoisting would run code
    // the program never runs), is left alone.
    if (!body_.constvars.empty() || length_ <= 0) return false;
    // Sinking first: a product of two xs slices accumulated into a carry is one product
    // contracting the time axis, not a batched product summed after.
    bool changed = hoist_invariants();
    changed = sink_accumulated_products() || changed;
    changed = hoist_mapped_products() || changed;
    if (length_ > 1) changed = transpose_const_operands() || changed;
    if (changed) {
      body_ = eliminate_dead_code(body_);  // what only the moved equations read
      drop_unread_inputs();
    }
    return changed;
  }

  std::vector<ir::Eqn> before, after;  // outer equations to place around the scan

  ir::Eqn eqn() const {
    ir::Eqn e;
    e.prim = Prim::Scan;
    e.params = params_;
    e.params.set("jaxpr", ir::jaxpr_param(body_));
    e.params.set("num_consts", int64_t(nc_));
    e.params.set("num_carry", int64_t(ncar_));
    for (const auto* part : {&consts_, &carry_, &xs_}) e.inputs.insert(e.inputs.end(), part->begin(), part->end());
    e.outputs = carry_out_;
    e.outputs.insert(e.outputs.end(), ys_out_.begin(), ys_out_.end());
    return e;
  }

 private:
  enum class Role { Const, Carry, X, Body };

  Role role(int var, size_t* index = nullptr) const {
    auto it = std::find(body_.invars.begin(), body_.invars.end(), var);
    if (it == body_.invars.end()) return Role::Body;
    const size_t k = size_t(it - body_.invars.begin());
    const Role r = k < nc_ ? Role::Const : k < nc_ + ncar_ ? Role::Carry : Role::X;
    if (index) *index = r == Role::Const ? k : r == Role::Carry ? k - nc_ : k - nc_ - ncar_;
    return r;
  }

  std::vector<int> uses() const {
    std::vector<int> n(body_.avals.size(), 0);
    for (const ir::Eqn& e : body_.eqns)
      for (const ir::Atom& a : e.inputs)
        if (a.is_var()) ++n[size_t(a.var)];
    for (const ir::Atom& a : body_.outvars)
      if (a.is_var()) ++n[size_t(a.var)];
    return n;
  }

  // An outer equation with one result (passes::emit_eqn).
  std::optional<ir::Atom> emit(std::vector<ir::Eqn>& eqns, Prim prim, std::vector<ir::Atom> inputs,
                               ops::Params params, int output = -1) {
    return passes::emit_eqn(outer_, eqns, prim, std::move(inputs), std::move(params), output);
  }

  void erase_eqns(const std::vector<bool>& drop) {
    std::vector<ir::Eqn> kept;
    for (size_t i = 0; i < body_.eqns.size(); ++i)
      if (!drop[i]) kept.push_back(std::move(body_.eqns[i]));
    body_.eqns = std::move(kept);
  }

  // Equations reading only consts and literals, in order (so chains move together).
  bool hoist_invariants() {
    std::map<int, ir::Atom> outside;  // body variable -> its outer value
    for (size_t k = 0; k < nc_; ++k) outside[body_.invars[k]] = consts_[k];
    std::map<int, size_t> splats;     // body variable -> the splat equation making it
    std::vector<bool> moved(body_.eqns.size(), false);
    for (size_t i = 0; i < body_.eqns.size(); ++i) {
      const ir::Eqn& e = body_.eqns[i];
      // A splat stays (fused kernels make it for free) but counts as invariant: an
      // equation moved out that reads it reads a copy made outside.
      if (passes::is_splat_eqn(e)) {
        splats[e.outputs[0]] = i;
        continue;
      }
      if (is_control_flow(e.prim) || passes::has_effects(e)) continue;
      bool invariant = true, reads_var = false;
      int64_t largest_input = 1;
      for (const ir::Atom& a : e.inputs) {
        if (!a.is_var()) continue;
        reads_var = true;
        invariant = invariant && (outside.count(a.var) || splats.count(a.var));
        largest_input = std::max(largest_input, numel(body_.avals[size_t(a.var)]));
      }
      // A result larger than its inputs (a broadcast) is cheaper to recompute inside
      // the fused body than to read from memory.
      bool grows = false;
      for (int v : e.outputs) grows = grows || numel(body_.avals[size_t(v)]) > largest_input;
      if (!invariant || !reads_var || grows) continue;
      for (const ir::Atom& a : e.inputs) {
        if (!a.is_var() || outside.count(a.var)) continue;
        ir::Eqn copy = body_.eqns[splats.at(a.var)];
        copy.outputs[0] = outer_.new_var(body_.avals[size_t(a.var)]);
        outside[a.var] = ir::Atom::of_var(copy.outputs[0]);
        before.push_back(std::move(copy));
      }
      ir::Eqn h = e;
      for (ir::Atom& a : h.inputs)
        if (a.is_var()) a = outside.at(a.var);
      for (int& v : h.outputs) {
        const int body_var = v;
        v = outer_.new_var(body_.avals[size_t(body_var)]);
        outside[body_var] = ir::Atom::of_var(v);
        body_.invars.insert(body_.invars.begin() + std::ptrdiff_t(nc_), body_var);
        consts_.push_back(ir::Atom::of_var(v));
        ++nc_;
      }
      before.push_back(std::move(h));
      moved[i] = true;
    }
    erase_eqns(moved);
    return std::count(moved.begin(), moved.end(), true) > 0;
  }

  // The outer value of a const or xs operand (stacked for xs), or nothing.
  std::optional<ir::Atom> outer_operand(const ir::Atom& a, bool* is_xs) const {
    if (!a.is_var()) return std::nullopt;
    size_t k = 0;
    switch (role(a.var, &k)) {
      case Role::Const: return *is_xs = false, consts_[k];
      case Role::X: return *is_xs = true, xs_[k];
      default: return std::nullopt;
    }
  }

  bool hoist_mapped_products() {
    std::vector<bool> moved(body_.eqns.size(), false);
    for (size_t i = 0; i < body_.eqns.size(); ++i) {
      const ir::Eqn& e = body_.eqns[i];
      if (e.prim != Prim::DotGeneral) continue;
      bool lx = false, rx = false;
      auto lhs = outer_operand(e.inputs[0], &lx), rhs = outer_operand(e.inputs[1], &rx);
      if (!lhs || !rhs || !(lx || rx)) continue;
      const int out = e.outputs[0];
      const Aval out_aval = body_.avals[size_t(out)];
      if (nbytes(stacked(out_aval, length_)) > kMaxStackedBytes) continue;
      const ints &lb = e.params.ints("lhs_batch"), &rb = e.params.ints("rhs_batch");
      const ints &lc = e.params.ints("lhs_contracting"), &rc = e.params.ints("rhs_contracting");
      ops::Params p = e.params;
      // Both sliced: the time axis is one more batch dim (first in the result). One
      // sliced: it is the first free dim of that operand, moved to the front after.
      int64_t time_at = 0;
      if (lx && rx) {
        p.set("lhs_batch", with_time(lb));
        p.set("rhs_batch", with_time(rb));
        p.set("lhs_contracting", shifted(lc));
        p.set("rhs_contracting", shifted(rc));
      } else {
        const ints& batch = lx ? lb : rb;
        p.set(lx ? "lhs_batch" : "rhs_batch", shifted(batch));
        p.set(lx ? "lhs_contracting" : "rhs_contracting", shifted(lx ? lc : rc));
        const int64_t lhs_rank = int64_t(body_.aval_of(e.inputs[0]).shape.size());
        time_at = int64_t(lb.size()) + (lx ? 0 : lhs_rank - int64_t(lb.size() + lc.size()));
      }
      std::vector<ir::Eqn> eqns;
      auto product = emit(eqns, Prim::DotGeneral, {*lhs, *rhs}, p);
      if (!product) continue;
      if (time_at != 0) {
        ints perm{time_at};
        for (int64_t d = 0; d < int64_t(out_aval.shape.size()) + 1; ++d)
          if (d != time_at) perm.push_back(d);
        product = emit(eqns, Prim::Transpose, {*product}, ops::Params{{"permutation", perm}});
        if (!product) continue;
      }
      if (!(outer_.aval_of(*product) == stacked(out_aval, length_))) continue;
      for (ir::Eqn& h : eqns) before.push_back(std::move(h));
      body_.invars.push_back(out);
      xs_.push_back(*product);
      moved[i] = true;
    }
    erase_eqns(moved);
    return std::count(moved.begin(), moved.end(), true) > 0;
  }

  // A product of a body value and a const whose contracting dim is not where a row-major
  // matrix product wants it (x @ W^T: the library then reads W transposed at every step)
  // reads a transposed copy of the const made once before the loop instead.
  bool transpose_const_operands() {
    bool changed = false;
    for (ir::Eqn& e : body_.eqns) {
      if (e.prim != Prim::DotGeneral || !e.params.ints("lhs_batch").empty()) continue;
      for (size_t side = 0; side < 2; ++side) {
        const ir::Atom& x = e.inputs[side];
        size_t k = 0;
        if (!x.is_var() || role(x.var, &k) != Role::Const) continue;
        const Aval a = body_.avals[size_t(x.var)];
        const char* key = side == 0 ? "lhs_contracting" : "rhs_contracting";
        const ints want{side == 0 ? 1 : 0}, have{side == 0 ? 0 : 1};
        if (a.shape.size() != 2 || e.params.ints(key) != have) continue;
        std::vector<ir::Eqn> eqns;
        auto t = emit(eqns, Prim::Transpose, {consts_[k]}, ops::Params{{"permutation", ints{1, 0}}});
        if (!t) continue;
        for (ir::Eqn& h : eqns) before.push_back(std::move(h));
        const int v = body_.new_var(outer_.aval_of(*t));
        body_.invars.insert(body_.invars.begin() + std::ptrdiff_t(nc_), v);
        consts_.push_back(*t);
        ++nc_;
        e.inputs[side] = ir::Atom::of_var(v);
        e.params.set(key, want);
        changed = true;
      }
    }
    return changed;
  }

  // The stacked outer value of a product's operand: an xs as it is, a value of the body
  // as a new ys (one per variable). Consts and literals are not stacked.
  std::optional<ir::Atom> stacked_operand(const ir::Atom& a, std::map<int, ir::Atom>& new_ys) {
    if (!a.is_var()) return std::nullopt;
    size_t k = 0;
    const Role r = role(a.var, &k);
    if (r == Role::X) return xs_[k];
    if (r == Role::Const) return std::nullopt;
    if (auto it = new_ys.find(a.var); it != new_ys.end()) return it->second;
    const Aval s = stacked(body_.avals[size_t(a.var)], length_);
    if (nbytes(s) > kMaxStackedBytes) return std::nullopt;
    const ir::Atom y = ir::Atom::of_var(outer_.new_var(s));
    new_ys.emplace(a.var, y);
    return y;
  }

  bool sink_accumulated_products() {
    bool changed = false;
    std::map<int, ir::Atom> new_ys;  // body variable -> its stacked outer ys
    for (size_t k = 0; k < ncar_;) {
      if (!sink_carry(k, new_ys)) {
        ++k;
        continue;
      }
      changed = true;
    }
    for (const auto& [var, y] : new_ys) {
      body_.outvars.push_back(ir::Atom::of_var(var));
      ys_out_.push_back(y.var);
    }
    return changed;
  }

  // Carry k as c + dot_general(a, b) and nothing else: replaced, true.
  bool sink_carry(size_t k, std::map<int, ir::Atom>& new_ys) {
    const int cin = body_.invars[nc_ + k];
    const ir::Atom& cout = body_.outvars[k];
    if (!cout.is_var()) return false;
    const std::vector<int> n = uses();
    if (n[size_t(cin)] != 1 || n[size_t(cout.var)] != 1) return false;
    auto producer = [&](int v) -> int {
      for (size_t i = 0; i < body_.eqns.size(); ++i)
        for (int o : body_.eqns[i].outputs)
          if (o == v) return int(i);
      return -1;
    };
    const int add = producer(cout.var);
    if (add < 0 || body_.eqns[size_t(add)].prim != Prim::Add) return false;
    const ir::Eqn& a = body_.eqns[size_t(add)];
    const ir::Atom& d = a.inputs[0].is_var() && a.inputs[0].var == cin ? a.inputs[1] : a.inputs[0];
    const ir::Atom& c = a.inputs[0].is_var() && a.inputs[0].var == cin ? a.inputs[0] : a.inputs[1];
    if (!c.is_var() || c.var != cin || !d.is_var()) return false;
    if (!(body_.avals[size_t(d.var)] == body_.avals[size_t(cin)])) return false;
    std::map<int, ir::Atom> tentative = new_ys;
    std::vector<ir::Eqn> eqns;
    std::optional<ir::Atom> total;
    int term = -1;
    size_t x = 0;
    if (role(d.var, &x) == Role::X) {  // c + x_t: the sum of the xs over time
      total = emit(eqns, Prim::ReduceSum, {xs_[x]}, ops::Params{{"axes", ints{0}}});
    } else {
      term = producer(d.var);
      if (n[size_t(d.var)] != 1 || term < 0) return false;
      const ir::Eqn& T = body_.eqns[size_t(term)];
      if (T.prim != Prim::DotGeneral && T.prim != Prim::ReduceSum) return false;
      std::vector<ir::Atom> operands;
      for (const ir::Atom& o : T.inputs) {
        auto s = stacked_operand(o, tentative);
        if (!s) return false;
        operands.push_back(*s);
      }
      // The same reduction over the stacked operands, with the time axis reduced too.
      ops::Params p = T.params;
      if (T.prim == Prim::DotGeneral) {
        p.set("lhs_batch", shifted(T.params.ints("lhs_batch")));
        p.set("rhs_batch", shifted(T.params.ints("rhs_batch")));
        p.set("lhs_contracting", with_time(T.params.ints("lhs_contracting")));
        p.set("rhs_contracting", with_time(T.params.ints("rhs_contracting")));
      } else {
        p.set("axes", with_time(T.params.ints("axes")));
      }
      total = emit(eqns, T.prim, operands, p);
    }
    if (!total || !emit(eqns, Prim::Add, {carry_[k], *total}, a.params, carry_out_[k])) return false;
    new_ys = std::move(tentative);
    for (ir::Eqn& h : eqns) after.push_back(std::move(h));
    std::vector<bool> drop(body_.eqns.size(), false);
    drop[size_t(add)] = true;
    if (term >= 0) drop[size_t(term)] = true;
    erase_eqns(drop);
    body_.invars.erase(body_.invars.begin() + std::ptrdiff_t(nc_ + k));
    body_.outvars.erase(body_.outvars.begin() + std::ptrdiff_t(k));
    carry_.erase(carry_.begin() + std::ptrdiff_t(k));
    carry_out_.erase(carry_out_.begin() + std::ptrdiff_t(k));
    --ncar_;
    return true;
  }

  void drop_unread_inputs() {
    const std::vector<int> n = uses();
    for (size_t i = body_.invars.size(); i-- > 0;) {
      if (i >= nc_ && i < nc_ + ncar_) continue;
      if (n[size_t(body_.invars[i])] != 0) continue;
      body_.invars.erase(body_.invars.begin() + std::ptrdiff_t(i));
      if (i < nc_) {
        consts_.erase(consts_.begin() + std::ptrdiff_t(i));
        --nc_;
      } else {
        xs_.erase(xs_.begin() + std::ptrdiff_t(i - nc_ - ncar_));
      }
    }
  }

  ir::Jaxpr& outer_;
  ops::Params params_;
  ir::Jaxpr body_;
  size_t nc_ = 0, ncar_ = 0;
  int64_t length_ = 0;
  std::vector<ir::Atom> consts_, carry_, xs_;
  std::vector<int> carry_out_, ys_out_;
};

}  // namespace

ir::Jaxpr hoist_from_scans(const ir::Jaxpr& j) {
  if (disabled_by_env()) return j;
  ir::Jaxpr out = j;
  out.eqns.clear();
  for (const ir::Eqn& e : j.eqns) {
    if (e.prim != Prim::Scan) {
      out.eqns.push_back(e);
      continue;
    }
    ScanRewrite r(out, e);
    if (!r.run()) {
      out.eqns.push_back(e);
      continue;
    }
    for (ir::Eqn& h : r.before) out.eqns.push_back(std::move(h));
    // A scan left with no results (everything moved out) and no effects is gone.
    ir::Eqn scan = r.eqn();
    bool effects = !scan.outputs.empty();
    for (const ir::Eqn& b : ir::jaxpr_of(scan.params, "jaxpr").eqns) effects = effects || passes::has_effects(b);
    if (effects) out.eqns.push_back(std::move(scan));
    for (ir::Eqn& h : r.after) out.eqns.push_back(std::move(h));
  }
  return out;
}

}  // namespace jx::compiler
