// Shape primitives: reshape, broadcast_in_dim, transpose, squeeze, rev, concatenate, pad, iota.
#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "ops/common.h"

namespace jx::ops {
namespace {

// ---- reshape: same element count; eager result aliases the operand's buffer ----
Avals reshape_abstract_eval(std::span<const Aval> in, const Params& p) {
  Shape s(p.ints("new_sizes"));
  for (int64_t d : s)
    if (d < 0)
      throw ValueError(str("[reshape] new_sizes ", shape_str(s), " has a negative dimension"));
  if (s.numel() != in[0].shape.numel())
    throw ShapeError(str("[reshape] cannot reshape ", aval_str(in[0]), " (", in[0].shape.numel(),
                         " elements) into shape ", shape_str(s), " (", s.numel(), " elements)"));
  return {Aval{s, in[0].dtype, in[0].weak}};
}
void reshape_impl(std::span<const Array> in, std::span<Array> out, const Params&) {
  out[0] = detail::alias_array(in[0], out[0].shape(), out[0].weak_type());
}

// ---- broadcast_in_dim: operand dim i goes to output dim broadcast_dimensions[i] ----
Avals broadcast_in_dim_abstract_eval(std::span<const Aval> in, const Params& p) {
  Shape s(p.ints("shape"));
  const auto& bd = p.ints("broadcast_dimensions");
  const Aval& x = in[0];
  if (bd.size() != x.shape.size())
    throw ShapeError(str("[broadcast_in_dim] broadcast_dimensions ", list_str(bd), " must have one "
                         "entry per operand dim of ", aval_str(x)));
  for (size_t i = 0; i < bd.size(); ++i) {
    if (bd[i] < 0 || bd[i] >= int64_t(s.size()) || (i > 0 && bd[i] <= bd[i - 1]))
      throw ShapeError(str("[broadcast_in_dim] broadcast_dimensions ", list_str(bd),
                           " must be strictly increasing and within the rank of ", shape_str(s)));
    if (x.shape[i] != 1 && x.shape[i] != s[size_t(bd[i])])
      throw ShapeError(str("[broadcast_in_dim] cannot broadcast ", aval_str(x), " to ",
                           shape_str(s), ": operand dim ", i, " (", x.shape[i],
                           ") must be 1 or equal output dim ", bd[i], " (", s[size_t(bd[i])], ")"));
  }
  return {Aval{s, x.dtype, x.weak}};
}
void broadcast_in_dim_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& x = detail::impl_of(in[0]);
  const Shape& os = out[0].shape();
  if (x.shape.numel() == os.numel()) {  // only size-1 dims inserted: alias
    out[0] = detail::alias_array(in[0], os, out[0].weak_type());
    return;
  }
  const auto& bd = p.ints("broadcast_dimensions");
  auto xs = cpu::contiguous_strides(x.shape.data(), int(x.shape.size()));
  std::vector<int64_t> ss(os.size(), 0);
  for (size_t i = 0; i < bd.size(); ++i)
    ss[size_t(bd[i])] = x.shape[i] == 1 ? 0 : xs[i];
  cpu::copy_strided(itemsize(x.dtype), x.buffer->data(), ss.data(), detail::raw_data(out[0]),
                    os.data(), int(os.size()));
}

}  // namespace

void register_shape() {
  auto& r = mutable_info(Prim::Reshape);
  r.abstract_eval = reshape_abstract_eval;
  r.impl = reshape_impl;
  auto& b = mutable_info(Prim::BroadcastInDim);
  b.abstract_eval = broadcast_in_dim_abstract_eval;
  b.impl = broadcast_in_dim_impl;
}

}  // namespace jx::ops
