// Family: primitives that exist for the transformations themselves.
#include "ops/batching.h"
#include "ops/common.h"
#include "ops/emit_prelude.h"

namespace jx::ops {
namespace {

// stop_gradient: the identity whose tangent is zero.
Avals stop_gradient_abstract_eval(std::span<const Aval> in, const Params&) { return {in[0]}; }
void stop_gradient_impl(std::span<const Array> in, std::span<Array> out, const Params&) {
  out[0] = in[0];
}
std::string stop_gradient_emit(std::span<const std::string> args, std::span<const Aval> in,
                               const Params&) {
  return emit::expressible(in, in[0].dtype) ? emit::paren(args[0]) : "";
}

}  // namespace

void register_ad() {
  auto& s = mutable_info(Prim::StopGradient);
  s.abstract_eval = stop_gradient_abstract_eval;
  s.impl = stop_gradient_impl;
  s.zero_tangent = true;
  s.not_linear = true;
  s.batch = batching::elementwise<Prim::StopGradient>;
  s.emit = stop_gradient_emit;
}

}  // namespace jx::ops
