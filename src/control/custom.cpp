// Family: custom_jvp, custom_vjp and checkpoint (remat). The primitives' rules live in
// custom_jvp.cpp, custom_vjp.cpp and custom_remat.cpp; this file holds what they share.
#include <sstream>

#include "control/custom_common.h"
#include "ops/batching.h"
#include "transforms/batching.h"

namespace jx {

namespace custom {
void structure_mismatch(const char* op, const char* what, const tree::TreeDef& got,
                        const tree::TreeDef& want) {
  std::ostringstream os;
  os << "[" << op << "] " << what << " has pytree structure " << got << " but must have structure "
     << want << " (the same containers, Array leaves and static values); make the rule return "
     << "values shaped like the function's";
  throw ValueError(os.str());
}
}  // namespace custom

namespace ops::custom {

std::string AvalsParam::str() const {
  std::string s = "(";
  for (size_t i = 0; i < avals.size(); ++i) s += (i ? ", " : "") + aval_str(avals[i]);
  return s + (avals.size() == 1 ? ",)" : ")");
}
bool AvalsParam::equals(const ParamObject& other) const {
  auto* o = dynamic_cast<const AvalsParam*>(&other);
  return o && o->avals == avals;
}
size_t AvalsParam::hash() const {
  size_t h = avals.size();
  for (const Aval& a : avals) h = h * 1000003u ^ std::hash<std::string>()(aval_str(a));
  return h;
}
ParamValue avals_param(std::vector<Aval> a) {
  return std::shared_ptr<const ParamObject>(std::make_shared<AvalsParam>(std::move(a)));
}

std::string BoolsParam::str() const {
  std::string s = "(";
  for (size_t i = 0; i < bools.size(); ++i) s += std::string(i ? ", " : "") + (bools[i] ? "True" : "False");
  return s + (bools.size() == 1 ? ",)" : ")");
}
bool BoolsParam::equals(const ParamObject& other) const {
  auto* o = dynamic_cast<const BoolsParam*>(&other);
  return o && o->bools == bools;
}
size_t BoolsParam::hash() const { return std::hash<std::vector<bool>>()(bools); }
ParamValue bools_param(std::vector<bool> b) {
  return std::shared_ptr<const ParamObject>(std::make_shared<BoolsParam>(std::move(b)));
}

std::vector<Aval> avals_of(std::span<const Array> xs) {
  std::vector<Aval> r;
  r.reserve(xs.size());
  for (const Array& x : xs) r.push_back(aval_of(x));
  return r;
}

bool same_type(const Aval& a, const Aval& b) { return a.shape == b.shape && a.dtype == b.dtype; }

void check_operands(const char* op, const ir::Jaxpr& j, std::span<const Aval> in) {
  JX_CHECK(in.size() == j.invars.size(), op, ": ", in.size(), " operands for ", j.invars.size(),
           " jaxpr inputs");
  for (size_t i = 0; i < in.size(); ++i)
    JX_CHECK(same_type(in[i], j.avals[size_t(j.invars[i])]), op, ": operand ", i, " is ",
             aval_str(in[i]), " but the jaxpr takes ", aval_str(j.avals[size_t(j.invars[i])]));
}

void eval_into(const ir::Jaxpr& j, std::span<const Array> in, std::span<Array> out) {
  Arrays r = ir::eval_jaxpr(j, in);
  JX_CHECK(r.size() == out.size(), "call: ", r.size(), " results for ", out.size(), " outputs");
  for (size_t i = 0; i < r.size(); ++i) out[i] = std::move(r[i]);
}

void reject_closed_over_tangents(const char* op, std::span<const Array> tangents, size_t num_consts) {
  for (size_t i = 0; i < num_consts && i < tangents.size(); ++i) {
    if (!tangents[i].valid()) continue;
    throw ValueError(str(
        "[", op, "] detected differentiation of a ", op, " function with respect to a "
        "closed-over value (", aval_str(aval_of(tangents[i])), "). That isn't supported because "
        "the custom rule only specifies how to differentiate with respect to explicit "
        "arguments. Pass the closed-over value to the function as an argument, and adapt the "
        "rule(s)."));
  }
}

void check_rule_outputs(const char* op, const char* what, std::span<const Array> got,
                        const std::vector<Aval>& want) {
  if (got.size() != want.size())
    throw ValueError(str("[", op, "] ", what, " has ", got.size(), " leaves but the function has ",
                         want.size(), " outputs"));
  for (size_t i = 0; i < got.size(); ++i) {
    if (!got[i].valid()) continue;  // a zero, for tangents and cotangents
    Aval g = aval_of(got[i]);
    if (!same_type(g, want[i]))
      throw ValueError(str("[", op, "] ", what, " must have the shapes and dtypes of the function's "
                           "outputs, but leaf ", i, " is ", aval_str(g), " where the function gives ",
                           aval_str(want[i])));
  }
}

std::vector<bool> batch_dims_to_front(Arrays& in, std::span<const int> dims) {
  std::vector<bool> batched(in.size(), false);
  for (size_t i = 0; i < in.size(); ++i) {
    if (dims[i] == batching::kNotMapped) continue;
    in[i] = batching::move_bdim(in[i], dims[i], 0);
    batched[i] = true;
  }
  return batched;
}

Arrays vmap_forced(const std::function<Arrays(const Arrays&)>& f, const Arrays& args,
                   const std::vector<bool>& batched, int64_t axis_size,
                   const std::function<std::vector<bool>(const std::vector<bool>&)>& decide) {
  std::vector<int> dims;
  for (bool b : batched) dims.push_back(b ? 0 : batching::kNotMapped);
  auto [outs, od] = tr::vmap_flat_dims(f, args, dims, axis_size);
  std::vector<bool> came(outs.size());
  for (size_t k = 0; k < outs.size(); ++k) came[k] = od[k] != batching::kNotMapped;
  std::vector<bool> want = decide(came);
  for (size_t k = 0; k < outs.size(); ++k)
    if (want[k]) outs[k] = batching::materialize_at(outs[k], od[k], axis_size, 0);
  return outs;
}

std::vector<bool> BatchedOutputs::decide(const char* op, const std::vector<bool>& came_out,
                                         const std::vector<bool>& at_least) {
  std::vector<bool> want(came_out.size());
  for (size_t k = 0; k < want.size(); ++k) want[k] = came_out[k] || (k < at_least.size() && at_least[k]);
  if (!fixed) {
    fixed = true;
    batched = want;
    return want;
  }
  JX_CHECK(batched.size() == came_out.size(), op, ": batched rule output count changed");
  for (size_t k = 0; k < want.size(); ++k) {
    if (came_out[k] && !batched[k])
      throw ValueError(str("[", op, "] under vmap, output ", k, " of the custom rule depends on the "
                           "mapped axis but the same output of the function does not, so its batched "
                           "type was already fixed as unbatched; make the function's output depend "
                           "on the mapped inputs the way the rule's does"));
  }
  return batched;
}

}  // namespace ops::custom

namespace ops {
void register_custom_jvp();
void register_custom_vjp();
void register_remat();

void register_custom() {
  register_custom_jvp();
  register_custom_vjp();
  register_remat();
}
}  // namespace ops

}  // namespace jx
