// Constant folding: equations whose inputs are all known at compile time are evaluated
// now, with the same eager kernels (eval_primitive) the program would run, so folding
// never changes a value. Known inputs are 0-d literals and concrete constvars of at most
// kSmall elements. A result becomes
//   - a literal when it is 0-d,
//   - the canonical splat `broadcast_in_dim[shape=.. broadcast_dimensions=()] <literal>`
//     when all its elements are equal (fusion turns that into an immediate constant),
//   - otherwise a new constvar, when it has at most kSmall elements (not inside the
//     sub-jaxprs of control flow, which stay closed: see KeepClosed).
// Larger results are not materialized, with one exception that costs nothing: an
// elementwise equation whose operands are all splats (e.g. `2.0 * broadcast(3.0)`) is
// evaluated once on 0-d operands and becomes a splat of the result.
// Constvars that are splats themselves (a captured jnp::zeros) become splat equations.
// Control flow, calls, collectives and effects are never folded, nor equations without operands
// (iota is as cheap to compute as to load). An evaluation that throws is left in the
// program, to raise the same error when it runs.
#include <cstring>

#include "compiler/passes.h"
#include "ops/common.h"
#include "transforms/bind.h"
#include "transforms/trace.h"

namespace jx::compiler {
namespace {

constexpr int64_t kSmall = 64;
thread_local bool keep_closed = false;

using ops::Prim;

bool foldable(const ir::Eqn& e) {
  // A collective needs the other replicas (it runs only where its axis is bound).
  return !e.inputs.empty() && ops::info(e.prim).fusion != ops::FusionKind::Control &&
         !ops::info(e.prim).collective && !passes::has_effects(e) && !passes::is_splat_eqn(e);
}

// Whether every element of a concrete array has the same bytes.
bool all_equal(const Array& a) {
  if (a.size() == 0) return false;
  const char* p = static_cast<const char*>(detail::raw_data(a));
  const size_t item = a.itemsize();
  for (int64_t i = 1; i < a.size(); ++i)
    if (std::memcmp(p, p + size_t(i) * item, item) != 0) return false;
  return true;
}

Array first_element(const Array& a) {
  Array s = detail::empty_array(Shape{}, a.dtype(), a.weak_type());
  std::memcpy(detail::raw_data(s), detail::raw_data(a), a.itemsize());
  return s;
}

std::optional<ops::Arrays> try_eval(Prim p, const ops::Arrays& in, const ops::Params& params) {
  try {
    tr::CurrentTraceGuard eager(nullptr);  // rules that bind inside their impl must not be traced
    return eval_primitive(p, in, params);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

class Folder {
 public:
  explicit Folder(const ir::Jaxpr& j) : j_(j), out_(j), subst_(j.avals.size()) {
    out_.eqns.clear();
    known_.resize(j.avals.size());
  }

  ir::Jaxpr run() {
    passes::Producers producers(out_);
    fold_constvars(producers);
    for (const ir::Eqn& original : j_.eqns) {
      ir::Eqn e = subst_.apply(original);
      const size_t before = out_.eqns.size();
      if (passes::is_splat_eqn(e)) {
        bind_splat(e.outputs[0], e.inputs[0].literal);  // the same equation, now known
      } else if (!(foldable(e) && (fold_known(e) || fold_splats(e, producers)))) {
        push(std::move(e));
      }
      for (size_t i = before; i < out_.eqns.size(); ++i) producers.add_eqn(i);
    }
    for (ir::Atom& a : out_.outvars) a = subst_(a);
    return std::move(out_);
  }

 private:
  void push(ir::Eqn e) { out_.eqns.push_back(std::move(e)); }

  // The value of a result: a literal, a splat equation, or a new constvar.
  void bind_result(int var, const Array& value) {
    const ir::Aval& aval = out_.avals[size_t(var)];
    if (aval.shape.empty()) {
      subst_.replace(var, ir::Atom::of_literal(passes::scalar_as(value, aval)));
    } else if (all_equal(value)) {
      push(passes::splat_eqn(var, aval, first_element(value)));
      known_[size_t(var)] = value;
    } else {
      out_.constvars.push_back(var);
      out_.consts.push_back(value);
      known_[size_t(var)] = value;
    }
  }

  // Whether fold_known may bind these results (a non-splat array needs a new constvar).
  bool can_bind(const ops::Arrays& outs) const {
    if (!keep_closed) return true;
    for (const Array& r : outs)
      if (r.ndim() > 0 && !all_equal(r)) return false;
    return true;
  }

  void fold_constvars(passes::Producers& producers) {
    for (size_t i = 0; i < j_.constvars.size(); ++i) {
      const Array& c = j_.consts[i];
      const int v = j_.constvars[i];
      if (!c.is_concrete()) continue;
      if (c.size() <= kSmall) known_[size_t(v)] = c;
      if (c.ndim() == 0) {
        subst_.replace(v, ir::Atom::of_literal(c));
      } else if (all_equal(c)) {
        // The constvar stays bound (DCE drops it); readers move to the splat equation.
        int nv = out_.new_var(j_.avals[size_t(v)]);
        push(passes::splat_eqn(nv, j_.avals[size_t(v)], first_element(c)));
        producers.add_eqn(out_.eqns.size() - 1);
        subst_.replace(v, ir::Atom::of_var(nv));
        known_.resize(out_.avals.size());
        if (c.size() <= kSmall) known_[size_t(nv)] = c;
      }
    }
  }

  // All operands known and small: evaluate exactly; fold when every result is small or
  // a splat.
  bool fold_known(const ir::Eqn& e) {
    for (int v : e.outputs)  // large results are left to fold_splats, never materialized
      if (out_.avals[size_t(v)].shape.numel() > kSmall) return false;
    ops::Arrays in;
    for (const ir::Atom& a : e.inputs) {
      const Array& v = a.is_var() ? known_[size_t(a.var)] : a.literal;
      if (!v.valid()) return false;
      in.push_back(v);
    }
    std::optional<ops::Arrays> outs = try_eval(e.prim, in, e.params);
    if (!outs || !results_fit(e, *outs) || !can_bind(*outs)) return false;
    for (size_t k = 0; k < outs->size(); ++k) bind_result(e.outputs[k], (*outs)[k]);
    return true;
  }

  // An elementwise equation on splats, however large: evaluate on 0-d operands. A
  // shape op (broadcast, reshape, squeeze) of a splat is a splat of the same value.
  bool fold_splats(const ir::Eqn& e, const passes::Producers& producers) {
    for (int v : e.outputs)
      if (out_.avals[size_t(v)].shape.numel() == 0) return false;
    if (e.prim == Prim::BroadcastInDim || e.prim == Prim::Reshape || e.prim == Prim::Squeeze) {
      std::optional<Array> s = producers.splat_value(e.inputs[0]);
      if (!s) return false;
      bind_splat(e.outputs[0], *s);
      return true;
    }
    if (ops::info(e.prim).fusion != ops::FusionKind::Elementwise ||
        e.prim == Prim::BitcastConvertType)  // may change the element count
      return false;
    ops::Arrays in;
    for (const ir::Atom& a : e.inputs) {
      std::optional<Array> s = producers.splat_value(a);
      if (!s) return false;
      in.push_back(*s);
    }
    std::optional<ops::Arrays> outs = try_eval(e.prim, in, e.params);
    if (!outs || outs->size() != e.outputs.size()) return false;
    for (size_t k = 0; k < outs->size(); ++k) {
      const ir::Aval& want = out_.avals[size_t(e.outputs[k])];
      const Array& r = (*outs)[k];
      if (r.ndim() != 0 || r.dtype() != want.dtype || r.weak_type() != want.weak) return false;
    }
    for (size_t k = 0; k < outs->size(); ++k) bind_splat(e.outputs[k], (*outs)[k]);
    return true;
  }

  // `var` holds `scalar` in every element (same dtype).
  void bind_splat(int var, const Array& scalar) {
    const ir::Aval& aval = out_.avals[size_t(var)];
    if (aval.shape.empty()) {
      subst_.replace(var, ir::Atom::of_literal(passes::scalar_as(scalar, aval)));
      return;
    }
    push(passes::splat_eqn(var, aval, scalar));
    if (aval.shape.numel() <= kSmall) {  // small: known to later folds as well
      const ir::Eqn& splat = out_.eqns.back();
      if (auto v = try_eval(splat.prim, {splat.inputs[0].literal}, splat.params)) known_[size_t(var)] = (*v)[0];
    }
  }

  bool results_fit(const ir::Eqn& e, const ops::Arrays& outs) const {
    if (outs.size() != e.outputs.size()) return false;
    for (size_t k = 0; k < outs.size(); ++k)
      if (!(ops::aval_of(outs[k]) == out_.avals[size_t(e.outputs[k])])) return false;
    return true;
  }

  const ir::Jaxpr& j_;
  ir::Jaxpr out_;
  passes::Substitution subst_;
  std::vector<Array> known_;  // per variable: its small concrete value, if known
};

}  // namespace

ir::Jaxpr fold_constants(const ir::Jaxpr& j) { return Folder(j).run(); }

KeepClosed::KeepClosed() : saved_(keep_closed) { keep_closed = true; }
KeepClosed::~KeepClosed() { keep_closed = saved_; }

}  // namespace jx::compiler
