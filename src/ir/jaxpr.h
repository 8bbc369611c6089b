// Jaxprs: the typed, printable IR that tracing produces (JAX's core.Jaxpr). Variables are
// indices into `avals`; an atom is a variable or a 0-d literal.
#pragma once
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "ops/primitive.h"

namespace jx::ir {

using ops::Aval;

struct Atom {
  int var = -1;   // >= 0: a variable
  Array literal;  // otherwise: a concrete 0-d array
  static Atom of_var(int v) { return Atom{v, Array()}; }
  static Atom of_literal(Array a) { return Atom{-1, std::move(a)}; }
  bool is_var() const { return var >= 0; }
};

struct Eqn {
  ops::Prim prim{};
  std::vector<Atom> inputs;
  std::vector<int> outputs;
  ops::Params params;
};

struct Jaxpr {
  std::vector<Aval> avals;     // the type of every variable, by index
  std::vector<int> constvars;  // bound to `consts`
  std::vector<int> invars;
  std::vector<Eqn> eqns;
  std::vector<Atom> outvars;
  std::vector<Array> consts;   // values of constvars (a "closed" jaxpr)

  int new_var(const Aval& a) {
    avals.push_back(a);
    return int(avals.size()) - 1;
  }
  Aval aval_of(const Atom& a) const { return a.is_var() ? avals[size_t(a.var)] : ops::aval_of(a.literal); }
  std::vector<Aval> in_avals() const;
  std::vector<Aval> out_avals() const;
};

// JAX's text form: `{ lambda a:f32[3]; b:f32[]. let c:f32[3] = mul a b in (c,) }`,
// one equation per line when it does not fit on one.
std::string to_string(const Jaxpr& j);
std::ostream& operator<<(std::ostream& os, const Jaxpr& j);

// Re-derives every equation's output types with the primitives' abstract eval rules and
// checks that each variable is bound once before use. Throws InternalError on a bad jaxpr.
void verify(const Jaxpr& j);

// Evaluates the jaxpr by binding each equation (so it runs under the current trace).
std::vector<Array> eval_jaxpr(const Jaxpr& j, std::span<const Array> args);

}  // namespace jx::ir

namespace jx::ir {

// A primitive parameter holding sub-jaxprs (cond branches, a scan body, a jit call's
// program). Sub-jaxprs are closed over nothing: captured constants are hoisted to
// explicit leading operands of the primitive when the sub-jaxpr is traced.
class JaxprsParam : public ops::ParamObject {
 public:
  explicit JaxprsParam(std::vector<std::shared_ptr<const Jaxpr>> js) : jaxprs(std::move(js)) {}
  std::string str() const override;
  bool equals(const ops::ParamObject& other) const override;
  size_t hash() const override;
  std::vector<std::shared_ptr<const Jaxpr>> jaxprs;
};
// Params value for one or several sub-jaxprs, and the way back.
ops::ParamValue jaxprs_param(std::vector<Jaxpr> js);
ops::ParamValue jaxpr_param(Jaxpr j);
const Jaxpr& jaxpr_of(const ops::Params& p, std::string_view key, size_t i = 0);
size_t num_jaxprs(const ops::Params& p, std::string_view key);

}  // namespace jx::ir
