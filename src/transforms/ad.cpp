#include "transforms/ad.h"

#include "jx/lax.h"
#include "ops/common.h"
#include "transforms/bind.h"
#include "transforms/jaxpr_transforms.h"
#include "transforms/staging.h"

namespace jx::tr {

// ---- helpers ----

Array zeros_like_aval(const Aval& a) {
  Array z = lax::convert_element_type(Array(0), a.dtype, a.weak);
  return lax::broadcast_in_dim(z, a.shape, {});
}

Array instantiate(const Array& t, const Aval& a) { return t.valid() ? t : zeros_like_aval(a); }

Array add_tangents(const Array& a, const Array& b) {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  return lax::add(a, b);
}

namespace {

[[noreturn]] void no_rule(Prim p, const char* what) {
  throw ValueError(str("[", ops::name(p), "] ", what, " of '", ops::name(p),
                       "' is not implemented in jx yet"));
}

void check_tangent(size_t i, const Array& primal, const Array& tangent) {
  if (!tangent.valid()) return;
  if (tangent.shape() != primal.shape() || tangent.dtype() != primal.dtype())
    throw ValueError(str("[jvp] tangent ", i, " has type ", type_str(tangent.dtype(), tangent.shape()),
                         " but its primal has type ", type_str(primal.dtype(), primal.shape()),
                         "; tangents must match their primals' shapes and dtypes"));
}

}  // namespace

// ---- forward mode ----

// The shared step of forward mode and linearize: split the inputs into primals and
// tangents (a foreign value has a zero tangent), run the primitive on the parent, then the
// jvp rule with `rule_trace` current, and wrap the results as the trace's tracers.
template <class TracerT, class TraceT>
Arrays process_jvp(TraceT* self, Trace* rule_trace, Prim p, std::span<const Array> in,
                   const Params& params) {
  Arrays primals, tangents;
  bool any = false;
  for (const Array& x : in) {
    if (auto* t = tracer_of<TracerT>(x, self)) {
      primals.push_back(t->primal);
      tangents.push_back(t->tangent);
      any = true;
    } else {
      primals.push_back(x);
      tangents.emplace_back();
    }
  }
  const ops::PrimitiveInfo& pi = ops::info(p);
  if (any && pi.full_jvp) {
    std::pair<Arrays, Arrays> r;
    {
      CurrentTraceGuard g(rule_trace);
      r = pi.full_jvp(primals, tangents, params, rule_trace != self->parent());
    }
    Arrays outs;
    for (size_t i = 0; i < r.first.size(); ++i)
      outs.push_back(self->wrap(r.first[i], i < r.second.size() ? r.second[i] : Array()));
    return outs;
  }
  Arrays pouts = bind_with(self->parent(), p, primals, params);
  if (!any) return pouts;
  if (!pi.jvp) {
    if (pi.zero_tangent) return pouts;
    no_rule(p, "differentiation (jvp)");
  }
  Arrays touts;
  {
    CurrentTraceGuard g(rule_trace);
    touts = pi.jvp(primals, pouts, tangents, params);
  }
  Arrays outs;
  for (size_t i = 0; i < pouts.size(); ++i)
    outs.push_back(self->wrap(pouts[i], i < touts.size() ? touts[i] : Array()));
  return outs;
}


class JVPTracer : public TracerBase {
 public:
  JVPTracer(std::shared_ptr<Trace> t, Array p, Array d)
      : TracerBase(std::move(t)), primal(std::move(p)), tangent(std::move(d)) {}
  Array primal, tangent;
};

class JVPTrace : public Trace, public std::enable_shared_from_this<JVPTrace> {
 public:
  using Trace::Trace;
  const char* kind() const override { return "jvp"; }

  Array wrap(const Array& p, const Array& t) {
    if (!t.valid()) return p;
    return make_tracer_array(ops::aval_of(p), std::make_shared<JVPTracer>(shared_from_this(), p, t));
  }

  Arrays process_primitive(Prim p, std::span<const Array> in, const Params& params) override {
    return process_jvp<JVPTracer>(this, parent(), p, in, params);
  }
};

std::pair<Arrays, Arrays> jvp_flat(const FlatFn& f, const Arrays& primals, const Arrays& tangents) {
  if (primals.size() != tangents.size())
    throw ValueError(str("[jvp] got ", primals.size(), " primals but ", tangents.size(),
                         " tangents; pass one tangent per primal"));
  auto trace = std::make_shared<JVPTrace>(current_trace());
  Arrays in;
  for (size_t i = 0; i < primals.size(); ++i) {
    check_tangent(i, primals[i], tangents[i]);
    in.push_back(trace->wrap(primals[i], tangents[i]));
  }
  Arrays outs;
  {
    CurrentTraceGuard g(trace.get());
    outs = f(in);
  }
  trace->deactivate();
  Arrays pouts, touts;
  for (const Array& o : outs) {
    if (auto* t = tracer_of<JVPTracer>(o, trace.get())) {
      pouts.push_back(t->primal);
      touts.push_back(t->tangent);
    } else {
      pouts.push_back(o);
      touts.push_back(zeros_like_aval(ops::aval_of(o)));
    }
  }
  return {pouts, touts};
}

// ---- linearize ----

class LinearizeTracer : public TracerBase {
 public:
  LinearizeTracer(std::shared_ptr<Trace> t, Array p, Array d)
      : TracerBase(std::move(t)), primal(std::move(p)), tangent(std::move(d)) {}
  Array primal, tangent;  // tangent: a tracer of the tangent trace, or invalid (zero)
};

class LinearizeTrace : public Trace, public std::enable_shared_from_this<LinearizeTrace> {
 public:
  LinearizeTrace(Trace* parent, StagingTrace* tangent_trace)
      : Trace(parent), tangent_trace_(tangent_trace) {}
  const char* kind() const override { return "grad/vjp/linearize"; }

  Array wrap(const Array& p, const Array& t) {
    if (!t.valid()) return p;
    return make_tracer_array(ops::aval_of(p),
                             std::make_shared<LinearizeTracer>(shared_from_this(), p, t));
  }

  // Primal-only work inside the rule runs on the parent (the tangent trace forwards it);
  // whatever touches a tangent is staged into the linear jaxpr.
  Arrays process_primitive(Prim p, std::span<const Array> in, const Params& params) override {
    return process_jvp<LinearizeTracer>(this, tangent_trace_, p, in, params);
  }

 private:
  StagingTrace* tangent_trace_;
};

Linearized linearize_flat(const FlatFn& f, const Arrays& primals) {
  Trace* parent = current_trace();
  auto tangents = std::make_shared<StagingTrace>(parent, /*stage_all=*/false);
  auto trace = std::make_shared<LinearizeTrace>(parent, tangents.get());
  Linearized lin;
  Arrays in;
  for (const Array& x : primals) {
    Aval a = ops::aval_of(x);
    lin.in_avals.push_back(a);
    in.push_back(trace->wrap(x, tangents->new_arg(a)));
  }
  Arrays outs;
  {
    CurrentTraceGuard g(trace.get());
    outs = f(in);
  }
  trace->deactivate();
  Arrays touts;
  for (size_t i = 0; i < outs.size(); ++i) {
    const Array& o = outs[i];
    lin.out_avals.push_back(ops::aval_of(o));
    if (auto* t = tracer_of<LinearizeTracer>(o, trace.get())) {
      lin.primals_out.push_back(t->primal);
      touts.push_back(t->tangent);
      lin.out_index.push_back(int(i));
    } else {
      lin.primals_out.push_back(o);
    }
  }
  lin.linear = tangents->finish(touts);
  tangents->deactivate();
  return lin;
}

Arrays linear_apply(const Linearized& lin, const Arrays& tangents) {
  if (tangents.size() != lin.in_avals.size())
    throw ValueError(str("[linearize] the linear function takes ", lin.in_avals.size(),
                         " tangents, got ", tangents.size()));
  for (size_t i = 0; i < tangents.size(); ++i) {
    const Array& t = tangents[i];
    const Aval& a = lin.in_avals[i];
    if (t.valid() && (t.shape() != a.shape || t.dtype() != a.dtype))
      throw ValueError(str("[linearize] tangent ", i, " has type ", type_str(t.dtype(), t.shape()),
                           " but its primal has type ", type_str(a.dtype, a.shape),
                           "; tangents must match their primals' shapes and dtypes"));
  }
  Arrays in;
  for (size_t i = 0; i < tangents.size(); ++i) in.push_back(instantiate(tangents[i], lin.in_avals[i]));
  Arrays lin_outs = ir::eval_jaxpr(lin.linear, in);
  Arrays outs(lin.out_avals.size());
  for (size_t k = 0; k < lin.out_index.size(); ++k) outs[size_t(lin.out_index[k])] = lin_outs[k];
  for (size_t i = 0; i < outs.size(); ++i) outs[i] = instantiate(outs[i], lin.out_avals[i]);
  return outs;
}

Arrays linear_transpose(const Linearized& lin, const Arrays& cotangents) {
  if (cotangents.size() != lin.out_avals.size())
    throw ValueError(str("[vjp] the function has ", lin.out_avals.size(),
                         " outputs but got ", cotangents.size(), " cotangents"));
  for (size_t i = 0; i < cotangents.size(); ++i) {
    const Array& c = cotangents[i];
    const Aval& a = lin.out_avals[i];
    if (c.valid() && (c.shape() != a.shape || c.dtype() != a.dtype))
      throw ValueError(str("[vjp] cotangent ", i, " has type ", type_str(c.dtype(), c.shape()),
                           " but the output has type ", type_str(a.dtype, a.shape),
                           "; cotangents must match the outputs' shapes and dtypes"));
  }
  Arrays cts;
  for (int idx : lin.out_index) cts.push_back(cotangents[size_t(idx)]);
  Arrays in_cts = backward_pass(lin.linear, cts);
  for (size_t i = 0; i < in_cts.size(); ++i) in_cts[i] = instantiate(in_cts[i], lin.in_avals[i]);
  return in_cts;
}

Arrays backward_pass(const ir::Jaxpr& j, const Arrays& cts_out) {
  return backward_pass_masked(j, std::vector<bool>(j.invars.size(), true), Arrays(j.invars.size()),
                              cts_out);
}

}  // namespace jx::tr
