// Helpers shared by the passes (passes.h).
#include <cstring>
#include <functional>
#include <string_view>

#include "compiler/passes.h"
#include "core/array_impl.h"
#include "ops/common.h"

namespace jx::compiler::passes {

namespace {

bool jaxpr_has_effects(const ir::Jaxpr& j) {
  for (const ir::Eqn& e : j.eqns)
    if (has_effects(e)) return true;
  return false;
}

const ir::JaxprsParam* jaxprs_in(const ops::ParamValue& v) {
  auto* obj = std::get_if<std::shared_ptr<const ops::ParamObject>>(&v);
  return obj ? dynamic_cast<const ir::JaxprsParam*>(obj->get()) : nullptr;
}

std::string_view bytes_of(const Array& a) {
  return {static_cast<const char*>(detail::raw_data(a)), a.nbytes()};
}

bool same_atom(const ir::Atom& a, const ir::Atom& b) {
  if (a.is_var() || b.is_var()) return a.var == b.var;
  return same_literal(a.literal, b.literal);
}

}  // namespace

bool has_effects(const ir::Eqn& e) {
  if (e.prim == ops::Prim::DebugCallback || e.outputs.empty()) return true;
  for (const auto& [key, value] : e.params.items())
    if (const ir::JaxprsParam* js = jaxprs_in(value))
      for (const auto& sub : js->jaxprs)
        if (jaxpr_has_effects(*sub)) return true;
  return false;
}

bool same_literal(const Array& a, const Array& b) {
  return a.dtype() == b.dtype() && a.weak_type() == b.weak_type() && a.shape() == b.shape() &&
         bytes_of(a) == bytes_of(b);
}

size_t hash_literal(const Array& a) {
  return std::hash<std::string_view>()(bytes_of(a)) * 31u + size_t(a.dtype()) * 2u +
         size_t(a.weak_type());
}

bool same_jaxpr(const ir::Jaxpr& a, const ir::Jaxpr& b) {
  if (!(a.avals == b.avals) || a.constvars != b.constvars || a.invars != b.invars ||
      a.eqns.size() != b.eqns.size() || a.outvars.size() != b.outvars.size() ||
      a.consts.size() != b.consts.size())
    return false;
  for (size_t i = 0; i < a.consts.size(); ++i)
    if (a.consts[i].impl() != b.consts[i].impl()) return false;
  for (size_t i = 0; i < a.outvars.size(); ++i)
    if (!same_atom(a.outvars[i], b.outvars[i])) return false;
  for (size_t i = 0; i < a.eqns.size(); ++i) {
    const ir::Eqn &x = a.eqns[i], &y = b.eqns[i];
    if (x.prim != y.prim || x.outputs != y.outputs || x.inputs.size() != y.inputs.size() ||
        !(x.params == y.params))
      return false;
    for (size_t k = 0; k < x.inputs.size(); ++k)
      if (!same_atom(x.inputs[k], y.inputs[k])) return false;
  }
  return true;
}

Array scalar_as(const Array& scalar, const ir::Aval& aval) {
  JX_CHECK(scalar.dtype() == aval.dtype && scalar.size() == 1, "scalar_as: ",
           ops::aval_str(ops::aval_of(scalar)), " as ", ops::aval_str(aval));
  if (scalar.ndim() == 0 && scalar.weak_type() == aval.weak) return scalar;
  return detail::alias_array(scalar, Shape{}, aval.weak);
}

ir::Eqn splat_eqn(int out_var, const ir::Aval& aval, const Array& scalar) {
  ir::Eqn e;
  e.prim = ops::Prim::BroadcastInDim;
  e.inputs.push_back(ir::Atom::of_literal(scalar_as(scalar, aval)));
  e.outputs.push_back(out_var);
  e.params.set("shape", std::vector<int64_t>(aval.shape.begin(), aval.shape.end()));
  e.params.set("broadcast_dimensions", std::vector<int64_t>{});
  return e;
}

bool is_splat_eqn(const ir::Eqn& e) {
  return e.prim == ops::Prim::BroadcastInDim && e.inputs.size() == 1 && !e.inputs[0].is_var();
}

std::optional<ir::Atom> emit_eqn(ir::Jaxpr& j, std::vector<ir::Eqn>& eqns, ops::Prim prim,
                                 std::vector<ir::Atom> inputs, ops::Params params, int output) {
  std::vector<ops::Aval> in;
  for (const ir::Atom& a : inputs) in.push_back(j.aval_of(a));
  std::vector<ops::Aval> res;
  try {
    res = ops::info(prim).abstract_eval(in, params);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (res.size() != 1) return std::nullopt;
  if (output >= 0 && !(res[0] == j.avals[size_t(output)])) return std::nullopt;
  ir::Eqn e;
  e.prim = prim;
  e.inputs = std::move(inputs);
  e.outputs = {output >= 0 ? output : j.new_var(res[0])};
  e.params = std::move(params);
  eqns.push_back(std::move(e));
  return ir::Atom::of_var(eqns.back().outputs[0]);
}

// ---- Substitution ----

Substitution::Substitution(size_t num_vars) { grow(num_vars); }

void Substitution::grow(size_t num_vars) {
  for (size_t v = to_.size(); v < num_vars; ++v) to_.push_back(ir::Atom::of_var(int(v)));
}

const ir::Atom& Substitution::operator()(const ir::Atom& a) const {
  return a.is_var() ? to_[size_t(a.var)] : a;
}

void Substitution::replace(int var, ir::Atom by) {
  grow(size_t(var) + 1);
  to_[size_t(var)] = std::move(by);
}

ir::Eqn Substitution::apply(ir::Eqn e) const {
  for (ir::Atom& a : e.inputs) a = (*this)(a);
  return e;
}

// ---- Producers ----

Producers::Producers(const ir::Jaxpr& j) : j_(j) {
  grow();
  for (size_t i = 0; i < j.constvars.size(); ++i)
    if (j.consts[i].is_concrete()) const_[size_t(j.constvars[i])] = int(i);
  for (size_t i = 0; i < j.eqns.size(); ++i) add_eqn(i);
}

void Producers::grow() {
  eqn_.resize(j_.avals.size(), -1);
  const_.resize(j_.avals.size(), -1);
}

void Producers::add_eqn(size_t index) {
  grow();
  for (int v : j_.eqns[index].outputs) eqn_[size_t(v)] = int(index);
}

const ir::Eqn* Producers::eqn_of(const ir::Atom& a) const {
  if (!a.is_var() || size_t(a.var) >= eqn_.size() || eqn_[size_t(a.var)] < 0) return nullptr;
  return &j_.eqns[size_t(eqn_[size_t(a.var)])];
}

const Array* Producers::const_of(const ir::Atom& a) const {
  if (!a.is_var() || size_t(a.var) >= const_.size() || const_[size_t(a.var)] < 0) return nullptr;
  return &j_.consts[size_t(const_[size_t(a.var)])];
}

std::optional<Array> Producers::splat_value(const ir::Atom& a) const {
  if (!a.is_var()) return a.literal;
  const ir::Aval& aval = j_.avals[size_t(a.var)];
  if (const Array* c = const_of(a)) {
    if (c->size() == 0) return std::nullopt;  // no element to take the value of
    const char* p = static_cast<const char*>(detail::raw_data(*c));
    const size_t item = c->itemsize();
    for (int64_t i = 1; i < c->size(); ++i)
      if (std::memcmp(p, p + size_t(i) * item, item) != 0) return std::nullopt;
    Array s = detail::empty_array(Shape{}, aval.dtype, aval.weak);
    std::memcpy(detail::raw_data(s), p, item);
    return s;
  }
  const ir::Eqn* e = eqn_of(a);
  if (!e || e->inputs.size() != 1) return std::nullopt;
  if (e->prim != ops::Prim::BroadcastInDim && e->prim != ops::Prim::Reshape &&
      e->prim != ops::Prim::Squeeze)
    return std::nullopt;
  // Shape ops keep every value; a broadcast of a 0-sized operand has no value to spread.
  if (j_.aval_of(e->inputs[0]).shape.numel() == 0) return std::nullopt;
  std::optional<Array> v = splat_value(e->inputs[0]);
  if (!v) return std::nullopt;
  return scalar_as(*v, aval);
}

}  // namespace jx::compiler::passes
