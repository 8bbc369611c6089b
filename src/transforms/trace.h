// The trace machinery (JAX's current-trace design; autodidax2). Every primitive goes
// through bind(), which hands it to the current trace; with none it runs eagerly. A
// transformation installs its trace as current while the user's function runs; the trace
// processes each primitive by running rules with its parent as the current trace, so
// nested transformations compose. A tracer belongs to one trace: another trace sees it
// as a constant, which is what keeps nested derivatives apart (perturbation confusion).
#pragma once
#include <memory>
#include <span>

#include "core/array_impl.h"
#include "ops/primitive.h"

namespace jx::tr {

using ops::Arrays;
using ops::Aval;
using ops::Params;
using ops::Prim;

class Trace {
 public:
  explicit Trace(Trace* parent) : parent_(parent) {}
  virtual ~Trace() = default;
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  virtual Arrays process_primitive(Prim p, std::span<const Array> in, const Params& params) = 0;
  virtual const char* kind() const = 0;  // "JVPTrace", ... for messages

  Trace* parent() const { return parent_; }
  bool active() const { return active_; }
  void deactivate() { active_ = false; }

 private:
  Trace* parent_;
  bool active_ = true;
};

// The tracer half of an ArrayImpl: which trace it belongs to. The aval lives in the
// ArrayImpl (shape, dtype, weak) like a concrete array's.
class TracerBase : public detail::Tracer {
 public:
  explicit TracerBase(std::shared_ptr<Trace> t) : trace_(std::move(t)) {}
  Trace* trace() const { return trace_.get(); }

 private:
  std::shared_ptr<Trace> trace_;  // keeps the trace object alive for error messages
};

// Makes an Array handle for a tracer with the given aval.
Array make_tracer_array(const Aval& aval, std::shared_ptr<detail::Tracer> tracer);

// The tracer of `x` if it belongs to `t`, else null.
template <class T>
T* tracer_of(const Array& x, const Trace* t) {
  auto* base = dynamic_cast<TracerBase*>(detail::impl_of(x).tracer.get());
  if (!base || base->trace() != t) return nullptr;
  return static_cast<T*>(base);
}

Trace* current_trace();

// Installs a trace as current for its scope (RAII).
class CurrentTraceGuard {
 public:
  explicit CurrentTraceGuard(Trace* t);
  ~CurrentTraceGuard();
  CurrentTraceGuard(const CurrentTraceGuard&) = delete;
  CurrentTraceGuard& operator=(const CurrentTraceGuard&) = delete;

 private:
  Trace* saved_;
};

// Binds on `t` (eager evaluation when null).
Arrays bind_with(Trace* t, Prim p, std::span<const Array> in, const Params& params);

}  // namespace jx::tr
