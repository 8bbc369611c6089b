// Family: random. threefry2x32(k0, k1, x0, x1) -> (y0, y1): the Threefry-2x32 hash,
// elementwise over uint32 operands that broadcast like the other n-ary elementwise
// primitives (equal ranks, dims equal or 1). Integer outputs: no tangent. Batching is the
// elementwise rule (JAX: defbroadcasting). No emit rule: with two outputs it is not one
// expression, so generated code calls the kernel.
#include "backend/cpu/threefry.h"
#include "ops/batching.h"
#include "ops/common.h"

namespace jx::ops {
namespace {

Avals threefry_abstract_eval(std::span<const Aval> in, const Params&) {
  if (in.size() != 4)
    throw ValueError(str("[threefry2x32] takes 4 operands (k0, k1, x0, x1), got ", in.size()));
  for (const Aval& a : in)
    if (a.dtype != DType::UInt32)
      throw DTypeError(str("[threefry2x32] operands must be uint32, got ", avals_str(in),
                           "; convert keys and counters with lax::convert_element_type"));
  Shape shape = elementwise_shape("threefry2x32", in);
  return {Aval{shape, DType::UInt32, false}, Aval{shape, DType::UInt32, false}};
}

void threefry_impl(std::span<const Array> in, std::span<Array> out, const Params&) {
  const auto& o = detail::impl_of(out[0]);
  auto p = [&](size_t i) { return detail::data<uint32_t>(in[i]); };
  auto s = [&](size_t i) { return detail::impl_of(in[i]).shape.data(); };
  cpu::threefry2x32(p(0), s(0), p(1), s(1), p(2), s(2), p(3), s(3),
                    detail::data<uint32_t>(out[0]), detail::data<uint32_t>(out[1]),
                    o.shape.data(), int(o.shape.size()));
}

}  // namespace

void register_random() {
  PrimitiveInfo& pi = mutable_info(Prim::Threefry2x32);
  pi.abstract_eval = threefry_abstract_eval;
  pi.impl = threefry_impl;
  pi.zero_tangent = true;
  pi.not_linear = true;
  pi.batch = batching::elementwise<Prim::Threefry2x32>;
}

}  // namespace jx::ops
