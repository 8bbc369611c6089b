#include "ir/jaxpr.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <set>
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
  } else if (is_complex(t)) {  // Python's repr of a complex: (1+2j)
    auto v = a.item<std::complex<double>>();
    std::ostringstream num;
    num.precision(8);
    num << "(" << v.real() << (std::signbit(v.imag()) ? "-" : "+") << std::abs(v.imag()) << "j)";
    os << num.str();
  } else if (is_unsigned_integer(t)) {
    os << a.item<uint64_t>();
  } else {
    os << a.item<int64_t>();
  }
  os << ":" << type_str(t, a.shape());
  return os.str();
}

// ---- printing, as JAX's pretty printer (jax/_src/core.py, jaxlib/_pretty_printer.cc) ----
// A Wadler-style document: a group prints flat when its flat width fits in what is left of
// the 80-column line, otherwise each of its own breaks becomes a newline at the current
// nest indent (nested groups decide for themselves).
struct Doc {
  enum Kind { Text, Break, Nest, Group, Concat } kind = Concat;
  std::string text;  // Text; a Break's flat text
  int indent = 0;    // Nest
  std::vector<Doc> kids;
};
Doc text(std::string s) { return Doc{Doc::Text, std::move(s), 0, {}}; }
Doc brk(std::string flat) { return Doc{Doc::Break, std::move(flat), 0, {}}; }
Doc nest(int n, std::vector<Doc> kids) { return Doc{Doc::Nest, "", n, std::move(kids)}; }
Doc group(std::vector<Doc> kids) { return Doc{Doc::Group, "", 0, std::move(kids)}; }
Doc concat(std::vector<Doc> kids) { return Doc{Doc::Concat, "", 0, std::move(kids)}; }

size_t flat_width(const Doc& d) {
  if (d.kind == Doc::Text || d.kind == Doc::Break) return d.text.size();
  size_t w = 0;
  for (const Doc& k : d.kids) w += flat_width(k);
  return w;
}

void format(const Doc& d, int indent, bool flat, size_t& col, std::string& out) {
  switch (d.kind) {
    case Doc::Text: out += d.text; col += d.text.size(); return;
    case Doc::Break:
      if (flat) {
        out += d.text;
        col += d.text.size();
      } else {
        out += '\n';
        out.append(size_t(indent), ' ');
        col = size_t(indent);
      }
      return;
    case Doc::Nest:
      for (const Doc& k : d.kids) format(k, indent + d.indent, flat, col, out);
      return;
    case Doc::Group: {
      const bool fits = flat || col + flat_width(d) <= 80;
      for (const Doc& k : d.kids) format(k, indent, fits, col, out);
      return;
    }
    case Doc::Concat:
      for (const Doc& k : d.kids) format(k, indent, flat, col, out);
      return;
  }
}

// Names are handed out in the order the document is built, from one counter for the whole
// printout, so a sub-jaxpr's variables continue the outer ones (JaxprPpContext). A jit's
// sub-jaxpr reuses the names of the values passed in and out (suggest_same_var_names).
struct Printer {
  int next = 0;
  std::map<const Jaxpr*, std::vector<std::string>> names;
  std::map<const Jaxpr*, std::map<int, std::string>> suggested;

  std::string& name_of(const Jaxpr& j, int v) {
    auto& n = names[&j];
    if (n.empty()) n.resize(j.avals.size());
    return n[size_t(v)];
  }
  std::string type_of(const Jaxpr& j, int v) {
    return type_str(j.avals[size_t(v)].dtype, j.avals[size_t(v)].shape);
  }
  std::string bind(const Jaxpr& j, int v) {
    auto& sug = suggested[&j];
    auto it = sug.find(v);
    name_of(j, v) = it != sug.end() ? it->second : var_name(next++);
    return str(name_of(j, v), ":", type_of(j, v));
  }
  std::string atom(const Jaxpr& j, const Atom& a) {
    return a.is_var() ? name_of(j, a.var) : literal_str(a.literal);
  }

  Doc jaxpr_doc(const Jaxpr& j, bool top) {
    std::vector<bool> used(j.avals.size(), !top);  // only the top level prints `_`
    if (top) {
      for (const Eqn& e : j.eqns)
        for (const Atom& a : e.inputs)
          if (a.is_var()) used[size_t(a.var)] = true;
      for (const Atom& a : j.outvars)
        if (a.is_var()) used[size_t(a.var)] = true;
    }
    std::string head = "{ lambda ";
    for (size_t i = 0; i < j.constvars.size(); ++i) head += str(i ? " " : "", bind(j, j.constvars[i]));
    head += "; ";
    for (size_t i = 0; i < j.invars.size(); ++i) head += str(i ? " " : "", bind(j, j.invars[i]));
    head += ". let";
    std::vector<Doc> eqns;
    for (const Eqn& e : j.eqns) {
      if (!eqns.empty()) eqns.push_back(brk("; "));
      eqns.push_back(eqn_doc(j, e, used));
    }
    std::string outs = "(";
    for (size_t i = 0; i < j.outvars.size(); ++i) outs += str(i ? ", " : "", atom(j, j.outvars[i]));
    outs += j.outvars.size() == 1 ? ",)" : ")";
    std::vector<Doc> body{brk(" ")};
    body.push_back(concat(std::move(eqns)));
    return concat({group({nest(2, {text(head), nest(2, std::move(body)), brk(" "), text(str("in ", outs))})}),
                   text(" }")});
  }

  Doc eqn_doc(const Jaxpr& j, const Eqn& e, const std::vector<bool>& used) {
    std::string lhs;
    for (size_t i = 0; i < e.outputs.size(); ++i) {
      const int v = e.outputs[i];
      lhs += str(i ? " " : "", used[size_t(v)] ? bind(j, v) : str("_:", type_of(j, v)));
    }
    std::vector<Doc> parts;
    parts.push_back(text(str(lhs, e.outputs.empty() ? "" : " = ", ops::name(e.prim))));
    if (!e.params.empty()) parts.push_back(params_doc(j, e));
    std::string ins;
    for (const Atom& a : e.inputs) ins += str(" ", atom(j, a));
    parts.push_back(text(ins));
    return concat(std::move(parts));
  }

  Doc params_doc(const Jaxpr& j, const Eqn& e) {
    // Sorted by name, except that a call's `name` comes first (pjit[name=f jaxpr={ ... }]).
    std::vector<std::pair<std::string_view, const ops::ParamValue*>> ps;
    for (const auto& [k, v] : e.params.items()) ps.emplace_back(k, &v);
    std::sort(ps.begin(), ps.end(), [](const auto& a, const auto& b) {
      bool an = a.first == "name", bn = b.first == "name";
      return an != bn ? an : a.first < b.first;
    });
    std::vector<Doc> kvs{text("["), brk("")};
    for (size_t i = 0; i < ps.size(); ++i) {
      if (i) kvs.push_back(brk(" "));
      kvs.push_back(param_doc(j, e, ps[i].first, *ps[i].second));
    }
    return group({nest(2, std::move(kvs)), brk(""), text("]")});
  }

  Doc param_doc(const Jaxpr& j, const Eqn& e, std::string_view key, const ops::ParamValue& v) {
    const auto* obj = std::get_if<std::shared_ptr<const ops::ParamObject>>(&v);
    const auto* sub = obj ? dynamic_cast<const JaxprsParam*>(obj->get()) : nullptr;
    if (!sub) {
      ops::Params one;
      one.set(key, v);
      return text(one.str());
    }
    const std::string k = str(key, "=");
    if (sub->jaxprs.size() == 1) {
      const Jaxpr& s = *sub->jaxprs[0];
      if (e.prim == ops::Prim::Pjit) suggest_call_names(j, e, s);
      return concat({text(k), jaxpr_doc(s, false)});
    }
    std::vector<Doc> items{text("("), brk("")};
    for (size_t i = 0; i < sub->jaxprs.size(); ++i) {
      if (i) items.push_back(brk(" "));
      items.push_back(jaxpr_doc(*sub->jaxprs[i], false));
    }
    return concat({text(k), group({nest(2, std::move(items)), brk(""), text(")")})});
  }

  // A jit's body is printed with the caller's names for its inputs and outputs.
  // A name is suggested once: a value passed twice gets a fresh name the second time.
  void suggest_call_names(const Jaxpr& j, const Eqn& e, const Jaxpr& s) {
    auto& sug = suggested[&s];
    std::set<std::string> taken;
    auto suggest = [&](int inner, const std::string& n) {
      if (n.empty() || sug.count(inner) || !taken.insert(n).second) return;
      sug[inner] = n;
    };
    const size_t skip = e.inputs.size() - std::min(e.inputs.size(), s.invars.size());
    for (size_t i = 0; i < s.invars.size() && skip + i < e.inputs.size(); ++i) {
      const Atom& a = e.inputs[skip + i];
      if (a.is_var()) suggest(s.invars[i], name_of(j, a.var));
    }
    for (size_t i = 0; i < s.outvars.size() && i < e.outputs.size(); ++i)
      if (s.outvars[i].is_var()) suggest(s.outvars[i].var, name_of(j, e.outputs[i]));
  }

  std::string print(const Jaxpr& j) {
    std::string out;
    size_t col = 0;
    format(jaxpr_doc(j, true), 0, false, col, out);
    return out;
  }
};

}  // namespace

std::string to_string(const Jaxpr& j) { return Printer().print(j); }
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
