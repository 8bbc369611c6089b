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

// ---- bitcast_convert_type: same bits, another dtype. A wider source gains a trailing dim
// of size ratio; a narrower one must end in that dim, which is dropped (as lax).
Avals bitcast_abstract_eval(std::span<const Aval> in, const Params& p) {
  const Aval& x = in[0];
  DType to = p.dtype("new_dtype");
  if (x.dtype == DType::Bool || to == DType::Bool)
    throw DTypeError(str("[bitcast_convert_type] does not support bool, got ", aval_str(x), " -> ",
                         dtype_name(to), "; use convert_element_type (astype) for bool"));
  size_t from_size = itemsize(x.dtype), to_size = itemsize(to);
  Shape shape = x.shape;
  if (from_size > to_size) {
    shape.push_back(int64_t(from_size / to_size));
  } else if (from_size < to_size) {
    int64_t ratio = int64_t(to_size / from_size);
    if (shape.empty() || shape.back() != ratio)
      throw ShapeError(str("[bitcast_convert_type] converting ", aval_str(x), " to ",
                           dtype_name(to), " needs a last dimension of size ", ratio,
                           " (the ratio of the item sizes)"));
    shape.resize(shape.size() - 1);
  }
  return {Aval{shape, to, false}};
}
void bitcast_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& o = detail::impl_of(out[0]);
  out[0] = detail::alias_array(in[0], o.shape, o.dtype, false);  // zero-copy
}

// Operands of rank 0 broadcast against any rank (lax allows scalar which / bounds); others
// need the output's rank. Returns the shape the kernel should read the operand through.
std::vector<int64_t> kernel_shape(const Shape& s, size_t rank) {
  if (s.empty() && rank > 0) return std::vector<int64_t>(rank, 1);
  return s.vec();
}

Shape broadcast_with_scalars(const char* op, std::span<const Aval> in) {
  size_t rank = 0;
  for (const Aval& a : in) rank = std::max(rank, a.shape.size());
  std::vector<Aval> lifted(in.begin(), in.end());
  for (Aval& a : lifted)
    if (a.shape.empty()) a.shape = Shape(rank, 1);
  return elementwise_shape(op, lifted);
}

// ---- select_n(which, *cases) ----
Avals select_n_abstract_eval(std::span<const Aval> in, const Params&) {
  if (in.size() < 2)
    throw ValueError("[select_n] needs at least one case: select_n(which, case0, ...)");
  const Aval& which = in[0];
  auto cases = in.subspan(1);
  if (which.dtype != DType::Bool && which.dtype != DType::Int32)
    throw DTypeError(str("[select_n] which must be bool or int32, got ", aval_str(which),
                         "; compare it (x > 0) or convert it with astype(jx::int32)"));
  if (which.dtype == DType::Bool && cases.size() > 2)
    throw DTypeError(str("[select_n] a bool which selects between at most 2 cases, got ",
                         cases.size(), "; use an int32 which"));
  require_same_dtype("select_n", cases);
  Shape shape = broadcast_with_scalars("select_n", in);
  return {Aval{shape, cases[0].dtype, all_weak(cases)}};
}
void select_n_impl(std::span<const Array> in, std::span<Array> out, const Params&) {
  const auto& o = detail::impl_of(out[0]);
  size_t rank = o.shape.size();
  const auto& w = detail::impl_of(in[0]);
  std::vector<int64_t> ws = kernel_shape(w.shape, rank);
  std::vector<std::vector<int64_t>> cs;
  std::vector<const void*> cp;
  std::vector<const int64_t*> csp;
  for (size_t k = 1; k < in.size(); ++k) {
    const auto& c = detail::impl_of(in[k]);
    cs.push_back(kernel_shape(c.shape, rank));
    cp.push_back(c.buffer->data());
  }
  for (auto& s : cs) csp.push_back(s.data());
  cpu::select_n(w.dtype, w.buffer->data(), ws.data(), itemsize(o.dtype), cp.data(), csp.data(),
                int(cp.size()), detail::raw_data(out[0]), o.shape.data(), int(rank));
}

// ---- clamp(lo, x, hi) ----
Avals clamp_abstract_eval(std::span<const Aval> in, const Params&) {
  require_same_dtype("clamp", in);
  Shape shape = broadcast_with_scalars("clamp", in);
  if (shape != in[1].shape)
    throw ShapeError(str("[clamp] the bounds must be scalars or broadcast to the operand's shape, "
                         "got clamp(", avals_str(in), "); use jnp::clip for NumPy broadcasting"));
  return {Aval{shape, in[1].dtype, all_weak(in)}};
}
void clamp_impl(std::span<const Array> in, std::span<Array> out, const Params&) {
  const auto& o = detail::impl_of(out[0]);
  size_t rank = o.shape.size();
  const auto& lo = detail::impl_of(in[0]);
  const auto& x = detail::impl_of(in[1]);
  const auto& hi = detail::impl_of(in[2]);
  auto ls = kernel_shape(lo.shape, rank), xs = kernel_shape(x.shape, rank),
       hs = kernel_shape(hi.shape, rank);
  cpu::clamp(o.dtype, lo.buffer->data(), ls.data(), x.buffer->data(), xs.data(),
             hi.buffer->data(), hs.data(), detail::raw_data(out[0]), o.shape.data(), int(rank));
}

}  // namespace

void register_convert_select() {
  auto& c = mutable_info(Prim::ConvertElementType);
  c.abstract_eval = convert_abstract_eval;
  c.impl = convert_impl;
  auto& b = mutable_info(Prim::BitcastConvertType);
  b.abstract_eval = bitcast_abstract_eval;
  b.impl = bitcast_impl;
  auto& s = mutable_info(Prim::SelectN);
  s.abstract_eval = select_n_abstract_eval;
  s.impl = select_n_impl;
  auto& k = mutable_info(Prim::Clamp);
  k.abstract_eval = clamp_abstract_eval;
  k.impl = clamp_impl;
}

}  // namespace jx::ops
