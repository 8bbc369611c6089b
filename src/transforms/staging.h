// StagingTrace: records primitives into a jaxpr instead of running them (JAX's
// DynamicJaxprTrace). With stage_all, every primitive is staged, including ones on
// constants (make_jaxpr, jit). Without it, only primitives that touch one of its own
// tracers are staged and the rest run on the parent trace: that is how linearize stages
// the tangent computation while the primal one runs.
#pragma once
#include <unordered_map>

#include "ir/jaxpr.h"
#include "transforms/trace.h"

namespace jx::tr {

class StagingTracer : public TracerBase {
 public:
  StagingTracer(std::shared_ptr<Trace> t, int var) : TracerBase(std::move(t)), var(var) {}
  int var;
};

class StagingTrace : public Trace, public std::enable_shared_from_this<StagingTrace> {
 public:
  StagingTrace(Trace* parent, bool stage_all) : Trace(parent), stage_all_(stage_all) {}
  const char* kind() const override { return "a jaxpr trace (jit / make_jaxpr / linearize)"; }

  // A new input variable, returned as a tracer.
  Array new_arg(const Aval& aval);
  Arrays process_primitive(Prim p, std::span<const Array> in, const Params& params) override;
  // The jaxpr with `outs` as its outputs (own tracers, literals, or captured constants).
  ir::Jaxpr finish(std::span<const Array> outs);

 private:
  ir::Atom to_atom(const Array& x);
  bool stage_all_;
  ir::Jaxpr jaxpr_;
  std::unordered_map<const detail::ArrayImpl*, int> const_vars_;
};

}  // namespace jx::tr
