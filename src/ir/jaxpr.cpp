#include "ir/jaxpr.h"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "core/array_impl.h"
#include "ops/common.h"
#include "transforms/bind.h"

namespace jx::ir {

std::vector<Aval> Jaxpr::in_avals() const {
  std::vector<Aval> r;
  for (int v : invars) r.push_back(avals[size_t(v)]);
  return r;
}

std::vector<Aval> Jaxpr::out_avals() const {
  std::vector<Aval> r;
  for (const Atom& a : outvars) r.push_back(aval_of(a));
  return r;
}

namespace {

// a..z, then ba, bb, ... as JAX names variables.
std::string var_name(int n) {
  std::string s;
  do {
    s.insert(s.begin(), char('a' + n % 26));
    n /= 26;
  } while (n > 0);
  return s;
}

std::string literal_str(const Array& a) {
  std::ostringstream os;
  DType t = a.dtype();
  if (t == DType::Bool) {
    os << (a.item<bool>() ? "True" : "False");
  } else if (is_floating(t)) {
    double v = a.item<double>();
    std::ostringstream num;
    num.precision(8);
    num << v;
    std::string s = num.str();
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // 1 -> 1.0, keeps inf/nan
    os << s;
  } else if (is_unsigned_integer(t)) {
    os << a.item<uint64_t>();
  } else {
    os << a.item<int64_t>();
  }
  os << ":" << type_str(t, a.shape());
  return os.str();
}

struct Printer {
  const Jaxpr& j;
  std::vector<std::string> names;
  int next = 0;
  std::vector<bool> used;

  explicit Printer(const Jaxpr& jj) : j(jj), names(jj.avals.size()), used(jj.avals.size(), false) {
    for (const Eqn& e : j.eqns)
      for (const Atom& a : e.inputs)
        if (a.is_var()) used[size_t(a.var)] = true;
    for (const Atom& a : j.outvars)
      if (a.is_var()) used[size_t(a.var)] = true;
  }
  std::string bind_name(int v) {
    names[size_t(v)] = var_name(next++);
    return names[size_t(v)] + ":" + type_str(j.avals[size_t(v)].dtype, j.avals[size_t(v)].shape);
  }
  std::string out_binder(int v) {
    if (!used[size_t(v)]) return "_:" + type_str(j.avals[size_t(v)].dtype, j.avals[size_t(v)].shape);
    return bind_name(v);
  }
  std::string atom(const Atom& a) { return a.is_var() ? names[size_t(a.var)] : literal_str(a.literal); }

  std::string eqn_str(const Eqn& e) {
    std::ostringstream os;
    for (size_t i = 0; i < e.outputs.size(); ++i) os << (i ? " " : "") << out_binder(e.outputs[i]);
    if (!e.outputs.empty()) os << " = ";  // JAX prints an effect with no outputs bare
    os << ops::name(e.prim);
    if (!e.params.empty()) {
      std::vector<std::pair<std::string_view, std::string>> ps;
      for (const auto& [k, v] : e.params.items()) {
        ops::Params one;
        one.set(k, v);
        std::string s = one.str();
        ps.emplace_back(k, s);
      }
      // JAX prints params sorted by name, except that a call's `name` comes first
      // (pjit[name=f jaxpr={ ... }]).
      std::sort(ps.begin(), ps.end(), [](const auto& a, const auto& b) {
        bool an = a.first == "name", bn = b.first == "name";
        return an != bn ? an : a < b;
      });
      os << "[";
      for (size_t i = 0; i < ps.size(); ++i) os << (i ? " " : "") << ps[i].second;
      os << "]";
    }
    for (const Atom& a : e.inputs) os << " " << atom(a);
    return os.str();
  }

  std::string print() {
    std::ostringstream head;
    head << "{ lambda ";
    for (size_t i = 0; i < j.constvars.size(); ++i) head << (i ? " " : "") << bind_name(j.constvars[i]);
    head << "; ";
    for (size_t i = 0; i < j.invars.size(); ++i) head << (i ? " " : "") << bind_name(j.invars[i]);
    head << ". let";
    std::vector<std::string> lines;
    for (const Eqn& e : j.eqns) lines.push_back(eqn_str(e));
    std::ostringstream outs;
    outs << "(";
    for (size_t i = 0; i < j.outvars.size(); ++i) outs << (i ? ", " : "") << atom(j.outvars[i]);
    if (j.outvars.size() == 1) outs << ",";
    outs << ")";
    std::ostringstream one;
    one << head.str();
    for (size_t i = 0; i < lines.size(); ++i) one << (i ? "; " : " ") << lines[i];
    one << " in " << outs.str() << " }";
    if (one.str().size() <= 80) return one.str();
    std::ostringstream multi;
    multi << head.str() << "\n";
    for (const auto& l : lines) multi << "    " << l << "\n";
    multi << "  in " << outs.str() << " }";
    return multi.str();
  }
};

}  // namespace

std::string to_string(const Jaxpr& j) { return Printer(j).print(); }
std::ostream& operator<<(std::ostream& os, const Jaxpr& j) { return os << to_string(j); }

void verify(const Jaxpr& j) {
  std::vector<bool> bound(j.avals.size(), false);
  auto bind = [&](int v, const char* what) {
    JX_CHECK(v >= 0 && size_t(v) < j.avals.size(), "jaxpr ", what, " var out of range");
    JX_CHECK(!bound[size_t(v)], "jaxpr var bound twice (", what, ")");
    bound[size_t(v)] = true;
  };
  auto use = [&](const Atom& a) {
    if (a.is_var()) {
      JX_CHECK(size_t(a.var) < j.avals.size() && bound[size_t(a.var)], "jaxpr var used before bound");
    } else {
      JX_CHECK(a.literal.valid() && a.literal.ndim() == 0, "jaxpr literal must be a 0-d array");
    }
  };
  JX_CHECK(j.consts.size() == j.constvars.size(), "jaxpr consts/constvars mismatch");
  for (int v : j.constvars) bind(v, "constvar");
  for (int v : j.invars) bind(v, "invar");
  for (const Eqn& e : j.eqns) {
    std::vector<Aval> in;
    for (const Atom& a : e.inputs) {
      use(a);
      in.push_back(j.aval_of(a));
    }
    ops::Avals out = ops::info(e.prim).abstract_eval(in, e.params);
    JX_CHECK(out.size() == e.outputs.size(), ops::name(e.prim), ": wrong number of outputs");
    for (size_t i = 0; i < out.size(); ++i) {
      const Aval& have = j.avals[size_t(e.outputs[i])];
      JX_CHECK(have == out[i], ops::name(e.prim), ": output ", i, " is typed ", ops::aval_str(have),
               " but abstract eval gives ", ops::aval_str(out[i]));
      bind(e.outputs[i], "eqn output");
    }
  }
  for (const Atom& a : j.outvars) use(a);
}

std::vector<Array> eval_jaxpr(const Jaxpr& j, std::span<const Array> args) {
  JX_CHECK(args.size() == j.invars.size(), "eval_jaxpr: ", args.size(), " args for ",
           j.invars.size(), " invars");
  std::vector<Array> env(j.avals.size());
  for (size_t i = 0; i < j.constvars.size(); ++i) env[size_t(j.constvars[i])] = j.consts[i];
  for (size_t i = 0; i < j.invars.size(); ++i) env[size_t(j.invars[i])] = args[i];
  auto read = [&](const Atom& a) -> const Array& { return a.is_var() ? env[size_t(a.var)] : a.literal; };
  std::vector<Array> in;
  for (const Eqn& e : j.eqns) {
    in.clear();
    for (const Atom& a : e.inputs) in.push_back(read(a));
    ops::Arrays out = bind(e.prim, in, e.params);
    for (size_t i = 0; i < out.size(); ++i) env[size_t(e.outputs[i])] = std::move(out[i]);
  }
  std::vector<Array> outs;
  for (const Atom& a : j.outvars) outs.push_back(read(a));
  return outs;
}

}  // namespace jx::ir

namespace jx::ir {

std::string JaxprsParam::str() const {
  std::string s = jaxprs.size() == 1 ? "" : "(";
  for (size_t i = 0; i < jaxprs.size(); ++i) s += (i ? ", " : "") + to_string(*jaxprs[i]);
  return jaxprs.size() == 1 ? s : s + ")";
}

bool JaxprsParam::equals(const ops::ParamObject& other) const {
  auto* o = dynamic_cast<const JaxprsParam*>(&other);
  return o && o->jaxprs == jaxprs;  // identity: the same traced programs
}

size_t JaxprsParam::hash() const {
  size_t h = jaxprs.size();
  for (const auto& j : jaxprs) h = h * 1000003u ^ std::hash<const void*>()(j.get());
  return h;
}

ops::ParamValue jaxprs_param(std::vector<Jaxpr> js) {
  std::vector<std::shared_ptr<const Jaxpr>> v;
  for (Jaxpr& j : js) v.push_back(std::make_shared<const Jaxpr>(std::move(j)));
  return std::shared_ptr<const ops::ParamObject>(std::make_shared<JaxprsParam>(std::move(v)));
}
ops::ParamValue jaxpr_param(Jaxpr j) {
  std::vector<Jaxpr> v;
  v.push_back(std::move(j));
  return jaxprs_param(std::move(v));
}
const Jaxpr& jaxpr_of(const ops::Params& p, std::string_view key, size_t i) {
  return *p.obj<JaxprsParam>(key).jaxprs.at(i);
}
size_t num_jaxprs(const ops::Params& p, std::string_view key) {
  return p.obj<JaxprsParam>(key).jaxprs.size();
}

}  // namespace jx::ir
