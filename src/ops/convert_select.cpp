// Casts and selection: convert_element_type, bitcast_convert_type, select_n, clamp.
// Autodiff and batching rules follow jax/_src/lax/lax.py; code generation matches the
// kernels of src/backend/cpu/{convert,select}.cpp.
#include "backend/cpu/kernels.h"
#include "ops/ad_rules.h"
#include "ops/batching.h"
#include "ops/common.h"
#include "ops/emit_prelude.h"
#include "support/check.h"

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

// ---- autodiff ----

// Rank-0 operands of select_n/clamp broadcast against any rank, but the binary lax ops
// they are differentiated with need equal ranks: view a scalar as all-1 dims.
Array lift(const Array& a, int rank) {
  if (!a.valid() || a.ndim() == rank) return a;
  return lax::reshape(a, Shape(static_cast<size_t>(rank), 1));
}

// The cotangent `ct` of a select_n/clamp output, summed down to an operand's type (which
// may be rank 0).
Array reduce_to(const Array& ct, const Aval& a) {
  if (ad_rules::is_zero(ct) || ct.shape() == a.shape) return ct;
  if (a.shape.empty()) {
    std::vector<int64_t> all;
    for (int i = 0; i < ct.ndim(); ++i) all.push_back(i);
    return lax::reduce_sum(ct, all);
  }
  return ad_rules::unbroadcast(ct, a);
}

Array scalar_zero(DType t) { return ad_rules::zeros(Aval{Shape{}, t, false}); }

// Only conversions among float and complex dtypes carry a tangent (integers and bool have
// none: float0). complex -> real keeps the real part, in the tangent as in the value.
Arrays convert_jvp(std::span<const Array> primals, std::span<const Array>,
                   std::span<const Array> tangents, const Params& p) {
  DType to = p.dtype("new_dtype");
  if (ad_rules::is_zero(tangents[0]) || !is_inexact(primals[0].dtype()) || !is_inexact(to))
    return {Array()};
  return {lax::convert_element_type(tangents[0], to, p.b("weak_type"))};
}
Arrays convert_transpose(std::span<const Array> cts, std::span<const Array>,
                         std::span<const Aval> avals, std::span<const bool>, const Params&) {
  const Aval& old = avals[0];
  if (ad_rules::is_zero(cts[0]) || !is_inexact(old.dtype) || !is_inexact(cts[0].dtype()))
    return {Array()};
  return {lax::convert_element_type(cts[0], old.dtype, old.weak)};
}

// select_n's tangent selects among the cases' tangents (zeros where a case has none);
// `which` is piecewise constant.
Arrays select_n_jvp(std::span<const Array> primals, std::span<const Array> outs,
                    std::span<const Array> tangents, const Params&) {
  const Array& out = outs[0];
  bool any = false;
  for (size_t k = 1; k < tangents.size(); ++k) any = any || !ad_rules::is_zero(tangents[k]);
  if (!any || !is_inexact(out.dtype())) return {Array()};
  Arrays cases;
  for (size_t k = 1; k < tangents.size(); ++k)
    cases.push_back(ad_rules::is_zero(tangents[k]) ? scalar_zero(out.dtype()) : tangents[k]);
  Array t = lax::select_n(primals[0], cases);
  // The cases with tangents may not span the output's shape alone.
  if (t.shape() != out.shape()) t = ad_rules::bcast(lift(t, out.ndim()), out);
  return {t};
}
Arrays select_n_transpose(std::span<const Array> cts, std::span<const Array> in,
                          std::span<const Aval> avals, std::span<const bool> linear,
                          const Params&) {
  JX_CHECK(!linear[0], "select_n is not linear in its predicate");
  Arrays res(in.size());
  const Array& ct = cts[0];
  if (ad_rules::is_zero(ct)) return res;
  Array zero = scalar_zero(ct.dtype());
  for (size_t i = 1; i < in.size(); ++i) {
    if (!linear[i]) continue;
    Arrays cases(in.size() - 1, zero);
    cases[i - 1] = ct;
    res[i] = reduce_to(lax::select_n(in[0], cases), avals[i]);
  }
  return res;
}

// clamp(lo, x, hi): the tangent flows from whichever operand the result equals strictly;
// at ties (x == lo or x == hi) JAX's rule gives zero to every operand.
Arrays clamp_jvp(std::span<const Array> primals, std::span<const Array> outs,
                 std::span<const Array> tangents, const Params&) {
  const Array& out = outs[0];
  if (!is_floating(out.dtype())) return {Array()};
  int r = out.ndim();
  Array lo = lift(primals[0], r), x = primals[1], hi = lift(primals[2], r);
  Array zero = scalar_zero(out.dtype());
  Array t;
  if (!ad_rules::is_zero(tangents[0]))
    t = lax::select(lax::bitwise_and(lax::gt(lo, x), lax::lt(lo, hi)), lift(tangents[0], r), zero);
  if (!ad_rules::is_zero(tangents[1]))
    t = ad_rules::add_tangents(
        t, lax::select(lax::bitwise_and(lax::gt(x, lo), lax::lt(x, hi)), tangents[1], zero));
  if (!ad_rules::is_zero(tangents[2]))
    t = ad_rules::add_tangents(t, lax::select(lax::lt(hi, x), lift(tangents[2], r), zero));
  return {t};
}

// ---- batching ----
using batching::BatchResult;
using batching::kNotMapped;

// bitcast_convert_type keeps the batch dim (JAX's defvectorized), except that a narrower
// source consumes its last dim, which must then not be the batch dim: move that to the
// front.
BatchResult bitcast_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  Array x = in[0];
  int bdim = dims[0];
  if (itemsize(x.dtype()) < itemsize(p.dtype("new_dtype")) && bdim == x.ndim() - 1) {
    x = batching::move_bdim(x, bdim, 0);
    bdim = 0;
  }
  return {{lax::bitcast_convert_type(x, p.dtype("new_dtype"))}, {bdim}};
}

// clamp's result has the shape of x, so an unmapped x is materialized along the batch;
// lo and hi broadcast as the elementwise rule aligns them.
BatchResult clamp_batch(std::span<const Array> in, std::span<const int> dims, const Params&) {
  auto [args, bdim] = batching::align_elementwise(in, dims);
  if (dims[1] == kNotMapped)
    args[1] = batching::materialize_at(in[1], kNotMapped, batching::axis_size(in, dims), bdim);
  return {{lax::clamp(args[0], args[1], args[2])}, {bdim}};
}

// ---- code generation (ops/emit_prelude.h) ----
std::string convert_emit(std::span<const std::string> args, std::span<const Aval> in,
                         const Params& p) {
  const DType to = p.dtype("new_dtype");
  if (!emit::expressible(in, to)) return "";
  if (in[0].dtype == to) return emit::paren(args[0]);
  // Complex as the kernel's convert_one: to bool is "either part nonzero", to another real
  // type through the real part; a real number gets a zero imaginary part.
  if (is_complex(in[0].dtype)) {
    const std::string x = emit::paren(args[0]);
    if (is_complex(to)) return str("((", c_type(to), ")", x, ")");
    if (to == DType::Bool) return str("(", x, ".real() != 0 || ", x, ".imag() != 0)");
    return str("jx_convert<", c_type(to), ">(", x, ".real())");
  }
  if (is_complex(to)) {
    const std::string r = c_type(real_dtype(to));
    return str(c_type(to), "((", r, ")(", args[0], "), (", r, ")0)");
  }
  // A bool becomes a number through a select: GCC 12 does not vectorize a loop converting a
  // bool ("type conversion to/from bit-precision unsupported"), and softmax cross-entropy's
  // gradient through max (convert(x == max)) kept a whole row phase, exp included, scalar.
  if (in[0].dtype == DType::Bool) {
    const std::string t = c_type(to);
    return str("((", args[0], ") ? (", t, ")1 : (", t, ")0)");
  }
  return str("jx_convert<", c_type(to), ">(", args[0], ")");
}

// Only same-size bitcasts map one element to one element.
std::string bitcast_emit(std::span<const std::string> args, std::span<const Aval> in,
                         const Params& p) {
  const DType to = p.dtype("new_dtype");
  if (!emit::expressible(in, to) || itemsize(in[0].dtype) != itemsize(to)) return "";
  if (in[0].dtype == to) return emit::paren(args[0]);
  return str("jx_bitcast<", c_type(to), ">(", args[0], ")");
}

// The kernel picks case 1 where which > 0 when there are two cases, and clamps an int32
// which into range otherwise.
std::string select_n_emit(std::span<const std::string> args, std::span<const Aval> in,
                          const Params&) {
  if (!emit::expressible(in, in[1].dtype)) return "";
  const size_t ncases = args.size() - 1;
  if (ncases == 1) return emit::paren(args[1]);
  const std::string w = emit::paren(args[0]);
  if (ncases == 2)
    return str("(", w, in[0].dtype == DType::Bool ? "" : " > 0", " ? ", emit::paren(args[2]),
               " : ", emit::paren(args[1]), ")");
  return emit::call("jx_select_n", args);
}

std::string clamp_emit(std::span<const std::string> args, std::span<const Aval> in,
                       const Params&) {
  if (!emit::expressible(in, in[1].dtype)) return "";
  return emit::call("jx_clamp", args);
}

}  // namespace

void register_convert_select() {
  auto& c = mutable_info(Prim::ConvertElementType);
  c.abstract_eval = convert_abstract_eval;
  c.impl = convert_impl;
  c.jvp = convert_jvp;
  c.transpose = convert_transpose;
  c.batch = batching::elementwise<Prim::ConvertElementType>;
  c.emit = convert_emit;
  auto& b = mutable_info(Prim::BitcastConvertType);
  b.abstract_eval = bitcast_abstract_eval;
  b.impl = bitcast_impl;
  b.zero_tangent = true;  // reinterpreted bits: no derivative, as JAX's defjvp_zero
  b.not_linear = true;
  b.batch = bitcast_batch;
  b.emit = bitcast_emit;
  auto& s = mutable_info(Prim::SelectN);
  s.abstract_eval = select_n_abstract_eval;
  s.impl = select_n_impl;
  s.jvp = select_n_jvp;
  s.transpose = select_n_transpose;
  s.batch = batching::elementwise<Prim::SelectN>;
  s.emit = select_n_emit;
  auto& k = mutable_info(Prim::Clamp);
  k.abstract_eval = clamp_abstract_eval;
  k.impl = clamp_impl;
  k.jvp = clamp_jvp;
  k.not_linear = true;
  k.batch = clamp_batch;
  k.emit = clamp_emit;
}

}  // namespace jx::ops
