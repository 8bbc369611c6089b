// Casts and selection: convert_element_type, bitcast_convert_type, select_n, clamp.
#include "backend/cpu/kernels.h"
#include "ops/common.h"

namespace jx::ops {
namespace {

Avals convert_abstract_eval(std::span<const Aval> in, const Params& p) {
  return {Aval{in[0].shape, p.dtype("new_dtype"), p.b("weak_type")}};
}
void convert_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& x = detail::impl_of(in[0]);
  DType to = p.dtype("new_dtype");
  if (x.dtype == to) {  // only the weak flag changes
    out[0] = detail::alias_array(in[0], x.shape, p.b("weak_type"));
    return;
  }
  cpu::convert(x.dtype, to, x.buffer->data(), detail::raw_data(out[0]), x.shape.numel());
}

}  // namespace

void register_convert_select() {
  auto& c = mutable_info(Prim::ConvertElementType);
  c.abstract_eval = convert_abstract_eval;
  c.impl = convert_impl;
}

}  // namespace jx::ops
