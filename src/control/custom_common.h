// Shared pieces of the custom-derivative and remat primitives (custom_jvp.cpp,
// custom_vjp.cpp, custom_remat.cpp): parameters that hold C++ functions or type lists,
// and the checks every one of them makes.
#pragma once
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ir/jaxpr.h"
#include "jx/custom_derivatives.h"
#include "ops/common.h"

namespace jx::ops::custom {

// A C++ function held as a primitive parameter (JAX keeps Python callables in params).
// Two params are equal only when they are the same object: functions cannot be compared.
template <class Fn>
class FnParam : public ParamObject {
 public:
  FnParam(Fn f, std::string label) : fn(std::move(f)), label_(std::move(label)) {}
  std::string str() const override { return label_; }
  bool equals(const ParamObject& other) const override { return this == &other; }
  size_t hash() const override { return std::hash<const void*>()(this); }
  Fn fn;

 private:
  std::string label_;
};
template <class Fn>
ParamValue fn_param(Fn f, std::string label) {
  return std::shared_ptr<const ParamObject>(std::make_shared<FnParam<Fn>>(std::move(f), std::move(label)));
}
template <class Fn>
const Fn& fn_of(const Params& p, std::string_view key) {
  return p.obj<FnParam<Fn>>(key).fn;
}

// A list of avals, printed as JAX prints custom_lin's out_avals: (f32[3], f32[]).
class AvalsParam : public ParamObject {
 public:
  explicit AvalsParam(std::vector<Aval> a) : avals(std::move(a)) {}
  std::string str() const override;
  bool equals(const ParamObject& other) const override;
  size_t hash() const override;
  std::vector<Aval> avals;
};
ParamValue avals_param(std::vector<Aval> a);

// A list of flags, printed as a Python tuple of bools: (False, True).
class BoolsParam : public ParamObject {
 public:
  explicit BoolsParam(std::vector<bool> b) : bools(std::move(b)) {}
  std::string str() const override;
  bool equals(const ParamObject& other) const override;
  size_t hash() const override;
  std::vector<bool> bools;
};
ParamValue bools_param(std::vector<bool> b);

std::vector<Aval> avals_of(std::span<const Array> xs);
// Shape and dtype equal; weak types are ignored, as JAX's typematch does.
bool same_type(const Aval& a, const Aval& b);

// Checks a call primitive's operands against its sub-jaxpr's invars (internal invariant).
void check_operands(const char* op, const ir::Jaxpr& j, std::span<const Aval> in);

// Runs `j` on the operands and moves the results into `out` (the impl of every call here).
void eval_into(const ir::Jaxpr& j, std::span<const Array> in, std::span<Array> out);

// A custom rule covers only the explicit arguments: a tangent on one of the leading
// `num_consts` operands (values the function closed over) cannot be honoured.
void reject_closed_over_tangents(const char* op, std::span<const Array> tangents, size_t num_consts);

// Checks that a rule's outputs have the types the function's outputs have.
void check_rule_outputs(const char* op, const char* what, std::span<const Array> got,
                        const std::vector<Aval>& want);

// Moves each mapped operand's batch dim to the front; returns which operands are mapped.
std::vector<bool> batch_dims_to_front(Arrays& in, std::span<const int> dims);

// f vmapped with batch dims 0 (where `batched`) in and whatever comes out, every output
// then moved to dim 0 or left unbatched as `out_batched` says. `decide` receives the
// batched-ness the outputs came out with and returns the one to force (growing it is an
// error the caller reports).
Arrays vmap_forced(const std::function<Arrays(const Arrays&)>& f, const Arrays& args,
                   const std::vector<bool>& batched, int64_t axis_size,
                   const std::function<std::vector<bool>(const std::vector<bool>&)>& decide);

// The batched-ness of a batched rule's outputs, fixed by its first use: a batched
// primitive's outputs are typed once, so every later run of the rule (e.g. when a staged
// program is differentiated again) must batch them the same way.
struct BatchedOutputs {
  bool fixed = false;
  std::vector<bool> batched;
  // First call: `came_out` (or'ed with `at_least`) becomes the fixed answer. Later calls:
  // the fixed answer, or a ValueError naming `op` if `came_out` needs more.
  std::vector<bool> decide(const char* op, const std::vector<bool>& came_out,
                           const std::vector<bool>& at_least);
};

}  // namespace jx::ops::custom
