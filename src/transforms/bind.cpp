#include "transforms/bind.h"

#include <array>

#include "core/array_impl.h"
#include "support/profiler.h"
#include "transforms/trace.h"

namespace jx {

namespace tr {
namespace {
thread_local Trace* g_current = nullptr;
}  // namespace

Trace* current_trace() { return g_current; }
CurrentTraceGuard::CurrentTraceGuard(Trace* t) : saved_(g_current) { g_current = t; }
CurrentTraceGuard::~CurrentTraceGuard() { g_current = saved_; }

Array make_tracer_array(const Aval& aval, std::shared_ptr<detail::Tracer> tracer) {
  auto im = std::make_shared<detail::ArrayImpl>();
  im->shape = aval.shape;
  im->dtype = aval.dtype;
  im->weak = aval.weak;
  im->tracer = std::move(tracer);
  return Array(std::move(im));
}

Arrays bind_with(Trace* t, Prim p, std::span<const Array> in, const Params& params) {
  if (!t) return eval_primitive(p, in, params);
  CurrentTraceGuard g(t);
  return t->process_primitive(p, in, params);
}

}  // namespace tr

namespace {

void check_inputs(ops::Prim p, std::span<const Array> in) {
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i].valid())
      throw ValueError(str("[", ops::name(p), "] operand ", i,
                           " is an empty jx::Array (default-constructed); give it a value first"));
  }
}

[[noreturn]] void escaped(ops::Prim p, const Array& a) {
  if (!detail::impl_of(a).tracer)
    throw ValueError(str("[", ops::name(p), "] got an array (", type_str(a.dtype(), a.shape()),
                         ") that was deleted: it was donated to a jitted function "
                         "(donate_argnums), which reused its buffer. Use the function's "
                         "outputs instead, or do not donate that argument."));
  auto* base = dynamic_cast<tr::TracerBase*>(detail::impl_of(a).tracer.get());
  throw ConcretizationError(str(
      "[", ops::name(p), "] got a tracer (", type_str(a.dtype(), a.shape()), ") from ",
      base ? base->trace()->kind() : "a transformation",
      " that has already finished: a traced value escaped its transformation, e.g. by being "
      "stored in a variable outside the function. Return it from the function instead."));
}

// The input avals of an eager call. Most primitives take at most 4 operands: their avals stay
// on the stack (a heap vector here was one of a 1-element op's twelve mallocs, bench_eager's
// dispatch).
// Also the device the operands are committed to (jx/device.h), which the results get.
struct InputAvals {
  std::array<ops::Aval, 4> small;
  ops::Avals large;
  std::span<const ops::Aval> span;
  int32_t device = -1;
  InputAvals(ops::Prim p, std::span<const Array> in) {
    if (in.size() > small.size()) large.resize(in.size());
    ops::Aval* avals = in.size() > small.size() ? large.data() : small.data();
    for (size_t i = 0; i < in.size(); ++i) {
      if (!in[i].is_concrete()) escaped(p, in[i]);
      avals[i] = ops::aval_of(in[i]);
      detail::merge_device(ops::name(p), device, in[i]);
    }
    span = std::span<const ops::Aval>(avals, in.size());
  }
};
}  // namespace

ops::Arrays eval_primitive(ops::Prim p, std::span<const Array> in, const ops::Params& params) {
  const ops::PrimitiveInfo& pi = ops::info(p);
  check_inputs(p, in);
  InputAvals avals(p, in);
  ops::Avals out_avals = ops::abstract_eval(p, avals.span, params);
  JX_PROFILE_OP(ops::name(p), in, out_avals);
  ops::Arrays out;
  out.reserve(out_avals.size());
  for (const ops::Aval& av : out_avals) out.push_back(detail::empty_array(av.shape, av.dtype, av.weak));
  pi.impl(in, out, params);
  if (avals.device >= 0)
    for (Array& o : out) detail::commit(o, avals.device);
  return out;
}

ops::Arrays bind(ops::Prim p, std::span<const Array> in, const ops::Params& params) {
  tr::Trace* t = tr::current_trace();
  if (!t) return eval_primitive(p, in, params);
  check_inputs(p, in);
  return t->process_primitive(p, in, params);
}

Array bind1(ops::Prim p, std::span<const Array> in, const ops::Params& params) {
  if (!tr::current_trace()) {
    // Eagerly, the one output is made in place: no vector of outputs (a malloc per op).
    const ops::PrimitiveInfo& pi = ops::info(p);
    check_inputs(p, in);
    InputAvals avals(p, in);
    ops::Avals out_avals = ops::abstract_eval(p, avals.span, params);
    JX_PROFILE_OP(ops::name(p), in, out_avals);
    JX_CHECK(out_avals.size() == 1, ops::name(p), " has ", out_avals.size(), " outputs");
    Array out = detail::empty_array(out_avals[0].shape, out_avals[0].dtype, out_avals[0].weak);
    pi.impl(in, std::span<Array>(&out, 1), params);
    if (avals.device >= 0) detail::commit(out, avals.device);
    return out;
  }
  ops::Arrays out = bind(p, in, params);
  JX_CHECK(out.size() == 1, ops::name(p), " has ", out.size(), " outputs");
  return std::move(out[0]);
}

}  // namespace jx
