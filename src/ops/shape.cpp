// Shape primitives: reshape, broadcast_in_dim, transpose, squeeze, rev, concatenate, pad, iota.
#include <memory>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/shape.h"
#include "ops/ad_rules.h"
#include "ops/batching.h"
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

// ---- transpose: output dim i is operand dim permutation[i] ----
Avals transpose_abstract_eval(std::span<const Aval> in, const Params& p) {
  const auto& perm = p.ints("permutation");
  const Aval& x = in[0];
  const size_t n = x.shape.size();
  std::vector<bool> seen(n, false);
  bool ok = perm.size() == n;
  for (size_t i = 0; ok && i < n; ++i) {
    if (perm[i] < 0 || perm[i] >= int64_t(n) || seen[size_t(perm[i])]) ok = false;
    else seen[size_t(perm[i])] = true;
  }
  if (!ok)
    throw IndexError(str("[transpose] permutation ", list_str(perm), " is not a permutation of "
                         "the dimensions of ", aval_str(x), "; give each axis 0..", int64_t(n) - 1,
                         " exactly once"));
  Shape s;
  for (int64_t d : perm) s.push_back(x.shape[size_t(d)]);
  return {Aval{s, x.dtype, x.weak}};
}
void transpose_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& perm = p.ints("permutation");
  const auto& x = detail::impl_of(in[0]);
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
  if (identity) {
    out[0] = detail::alias_array(in[0], x.shape, x.weak);
    return;
  }
  cpu::transpose(itemsize(x.dtype), x.buffer->data(), x.shape.data(), perm.data(),
                 detail::raw_data(out[0]), int(x.shape.size()));
}

// ---- squeeze: drops size-1 dims; eager result aliases ----
Avals squeeze_abstract_eval(std::span<const Aval> in, const Params& p) {
  const Aval& x = in[0];
  const auto& dims = p.ints("dimensions");
  const int64_t n = int64_t(x.shape.size());
  std::vector<bool> drop(static_cast<size_t>(n), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= n)
      throw IndexError(str("[squeeze] dimensions ", list_str(dims), " are outside [0, ", n,
                           ") for ", aval_str(x)));
    if (drop[size_t(d)])
      throw IndexError(str("[squeeze] dimensions ", list_str(dims), " are not unique"));
    if (x.shape[size_t(d)] != 1)
      throw ShapeError(str("[squeeze] cannot squeeze dimension ", d, " of ", aval_str(x),
                           ": its size is ", x.shape[size_t(d)], ", not 1"));
    drop[size_t(d)] = true;
  }
  Shape s;
  for (int64_t d = 0; d < n; ++d)
    if (!drop[size_t(d)]) s.push_back(x.shape[size_t(d)]);
  return {Aval{s, x.dtype, x.weak}};
}
void squeeze_impl(std::span<const Array> in, std::span<Array> out, const Params&) {
  out[0] = detail::alias_array(in[0], out[0].shape(), out[0].weak_type());
}

// ---- rev: reverses the listed dims ----
Avals rev_abstract_eval(std::span<const Aval> in, const Params& p) {
  const Aval& x = in[0];
  const auto& dims = p.ints("dimensions");
  const int64_t n = int64_t(x.shape.size());
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= n)
      throw IndexError(str("[rev] dimensions ", list_str(dims), " must all be in [0, ", n,
                           ") for ", aval_str(x)));
    if (seen[size_t(d)])
      throw IndexError(str("[rev] dimensions must be unique, got ", list_str(dims)));
    seen[size_t(d)] = true;
  }
  return {Aval{x.shape, x.dtype, x.weak}};
}
void rev_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& x = detail::impl_of(in[0]);
  // std::vector<bool> is packed bits; the kernel wants a bool array.
  std::unique_ptr<bool[]> reversed(new bool[x.shape.size() + 1]());
  bool any = false;
  for (int64_t d : p.ints("dimensions")) {
    reversed[size_t(d)] = true;
    any = any || x.shape[size_t(d)] > 1;
  }
  if (!any) {
    out[0] = detail::alias_array(in[0], x.shape, x.weak);
    return;
  }
  cpu::rev(itemsize(x.dtype), x.buffer->data(), x.shape.data(), reversed.get(),
           detail::raw_data(out[0]), int(x.shape.size()));
}

// ---- concatenate: n operands, equal except along `dimension` ----
Avals concatenate_abstract_eval(std::span<const Aval> in, const Params& p) {
  if (in.empty())
    throw ValueError("[concatenate] needs at least one operand, got 0");
  const int64_t dim = p.i("dimension");
  const Shape& s0 = in[0].shape;
  for (const Aval& a : in)
    if (a.shape.size() != s0.size())
      throw ShapeError(str("[concatenate] operands must have the same rank, got ", avals_str(in)));
  if (dim < 0 || dim >= int64_t(s0.size()))
    throw IndexError(str("[concatenate] dimension ", dim, " is out of bounds for operands ",
                         avals_str(in), (s0.empty() ? "; 0-d arrays cannot be concatenated" : "")));
  require_same_dtype("concatenate", in);
  Shape out = s0;
  out[size_t(dim)] = 0;
  for (const Aval& a : in) {
    for (size_t d = 0; d < s0.size(); ++d)
      if (int64_t(d) != dim && a.shape[d] != s0[d])
        throw ShapeError(str("[concatenate] operand shapes may differ only along dimension ", dim,
                             ", got ", avals_str(in), " (dimension ", d, " differs)"));
    out[size_t(dim)] += a.shape[size_t(dim)];
  }
  return {Aval{out, in[0].dtype, all_weak(in)}};
}
void concatenate_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const int64_t dim = p.i("dimension");
  const Shape& os = out[0].shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= os[size_t(d)];
  for (size_t d = size_t(dim) + 1; d < os.size(); ++d) inner *= os[d];
  std::vector<const void*> srcs;
  std::vector<int64_t> sizes;
  for (const Array& a : in) {
    srcs.push_back(detail::raw_data(a));
    sizes.push_back(a.shape()[size_t(dim)]);
  }
  cpu::concatenate(itemsize(out[0].dtype()), srcs.data(), sizes.data(), int(in.size()), outer,
                   inner, detail::raw_data(out[0]));
}

// ---- pad: operand + scalar padding value; per dim lo, hi (negative crops), interior ----
Avals pad_abstract_eval(std::span<const Aval> in, const Params& p) {
  const Aval& x = in[0];
  const Aval& v = in[1];
  const auto &lo = p.ints("lo"), &hi = p.ints("hi"), &interior = p.ints("interior");
  if (!v.shape.empty())
    throw ShapeError(str("[pad] padding_value must be a scalar, got ", aval_str(v)));
  if (v.dtype != x.dtype)
    throw DTypeError(str("[pad] operand and padding_value must have the same dtype, got ",
                         avals_str(in)));
  const size_t n = x.shape.size();
  if (lo.size() != n || hi.size() != n || interior.size() != n)
    throw ShapeError(str("[pad] padding config needs one (lo, hi, interior) per dimension of ",
                         aval_str(x), ", got lo=", list_str(lo), " hi=", list_str(hi),
                         " interior=", list_str(interior)));
  Shape s;
  for (size_t d = 0; d < n; ++d) {
    if (interior[d] < 0)
      throw ValueError(str("[pad] interior padding must be nonnegative, got interior=",
                           list_str(interior), " for ", aval_str(x)));
    const int64_t xd = x.shape[d];
    const int64_t dilated = xd == 0 ? 0 : xd + (xd - 1) * interior[d];
    const int64_t o = lo[d] + hi[d] + dilated;
    if (o < 0)
      throw ShapeError(str("[pad] dimension ", d, " of ", aval_str(x), " would have size ", o,
                           " after padding with lo=", list_str(lo), " hi=", list_str(hi),
                           " interior=", list_str(interior), "; sizes must stay >= 0"));
    s.push_back(o);
  }
  return {Aval{s, x.dtype, x.weak && v.weak}};
}
void pad_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& x = detail::impl_of(in[0]);
  const Shape& os = out[0].shape();
  if (os.numel() == 0) return;
  cpu::pad(itemsize(x.dtype), x.buffer->data(), x.shape.data(), detail::raw_data(in[1]),
           p.ints("lo").data(), p.ints("interior").data(), detail::raw_data(out[0]), os.data(),
           int(os.size()));
}

// ---- iota: no operands; index along `dimension` of `shape` ----
Avals iota_abstract_eval(std::span<const Aval>, const Params& p) {
  const DType t = p.dtype("dtype");
  Shape s(p.ints("shape"));
  const int64_t dim = p.i("dimension");
  if (t == DType::Bool)
    throw DTypeError("[iota] does not accept dtype bool; use an integer or floating dtype");
  for (int64_t d : s)
    if (d < 0) throw ValueError(str("[iota] shape ", shape_str(s), " has a negative dimension"));
  if (dim < 0 || dim >= int64_t(s.size()))
    throw IndexError(str("[iota] dimension ", dim, " must be in [0, ", s.size(), ") for shape ",
                         shape_str(s)));
  return {Aval{s, t, false}};
}
void iota_impl(std::span<const Array>, std::span<Array> out, const Params& p) {
  const Shape& s = out[0].shape();
  cpu::iota(out[0].dtype(), detail::raw_data(out[0]), s.data(), int(s.size()),
            int(p.i("dimension")));
}


// ---- autodiff: every shape primitive but iota is linear; jvp = the op on the tangent ----
using ad_rules::instantiate;
using ad_rules::is_zero;

Arrays reshape_jvp(std::span<const Array>, std::span<const Array> outs,
                   std::span<const Array> t, const Params&) {
  if (is_zero(t[0])) return {Array()};
  return {lax::reshape(t[0], outs[0].shape())};
}
Arrays reshape_transpose(std::span<const Array> ct, std::span<const Array>,
                         std::span<const Aval> in, std::span<const bool>, const Params&) {
  if (is_zero(ct[0])) return {Array()};
  return {lax::reshape(ct[0], in[0].shape)};
}

Arrays broadcast_in_dim_jvp(std::span<const Array>, std::span<const Array>,
                            std::span<const Array> t, const Params& p) {
  if (is_zero(t[0])) return {Array()};
  return {lax::broadcast_in_dim(t[0], Shape(p.ints("shape")), p.ints("broadcast_dimensions"))};
}
// As jax: sum over the output dims that no operand dim maps to and over the operand's
// size-1 dims, then put the size-1 dims back.
Arrays broadcast_in_dim_transpose(std::span<const Array> ct, std::span<const Array>,
                                  std::span<const Aval> in, std::span<const bool>,
                                  const Params& p) {
  if (is_zero(ct[0])) return {Array()};
  const auto& bd = p.ints("broadcast_dimensions");
  const Shape& xs = in[0].shape;
  const size_t out_rank = p.ints("shape").size();
  std::vector<bool> kept(out_rank, false);
  std::vector<int64_t> unit_dims;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i] == 1) unit_dims.push_back(int64_t(i));
    else kept[size_t(bd[i])] = true;
  }
  std::vector<int64_t> axes;
  for (size_t d = 0; d < out_rank; ++d)
    if (!kept[d]) axes.push_back(int64_t(d));
  Array r = axes.empty() ? ct[0] : lax::reduce_sum(ct[0], axes);
  return {lax::expand_dims(r, unit_dims)};
}

Arrays transpose_jvp(std::span<const Array>, std::span<const Array>, std::span<const Array> t,
                     const Params& p) {
  if (is_zero(t[0])) return {Array()};
  return {lax::transpose(t[0], p.ints("permutation"))};
}
Arrays transpose_transpose(std::span<const Array> ct, std::span<const Array>,
                           std::span<const Aval>, std::span<const bool>, const Params& p) {
  if (is_zero(ct[0])) return {Array()};
  const auto& perm = p.ints("permutation");
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[size_t(perm[i])] = int64_t(i);
  return {lax::transpose(ct[0], inv)};
}

Arrays squeeze_jvp(std::span<const Array>, std::span<const Array>, std::span<const Array> t,
                   const Params& p) {
  if (is_zero(t[0])) return {Array()};
  return {lax::squeeze(t[0], p.ints("dimensions"))};
}
Arrays squeeze_transpose(std::span<const Array> ct, std::span<const Array>,
                         std::span<const Aval>, std::span<const bool>, const Params& p) {
  if (is_zero(ct[0])) return {Array()};
  return {lax::expand_dims(ct[0], p.ints("dimensions"))};
}

Arrays rev_jvp(std::span<const Array>, std::span<const Array>, std::span<const Array> t,
               const Params& p) {
  if (is_zero(t[0])) return {Array()};
  return {lax::rev(t[0], p.ints("dimensions"))};
}
Arrays rev_transpose(std::span<const Array> ct, std::span<const Array>, std::span<const Aval>,
                     std::span<const bool>, const Params& p) {
  if (is_zero(ct[0])) return {Array()};
  return {lax::rev(ct[0], p.ints("dimensions"))};
}

// jax's deflinear: the op itself applied to the tangents, zeros instantiated.
Arrays concatenate_jvp(std::span<const Array> primals, std::span<const Array>,
                       std::span<const Array> t, const Params& p) {
  std::vector<Array> ts;
  for (size_t i = 0; i < t.size(); ++i) ts.push_back(instantiate(t[i], aval_of(primals[i])));
  return {lax::concatenate(ts, p.i("dimension"))};
}
// One slice of the cotangent per operand.
Arrays concatenate_transpose(std::span<const Array> ct, std::span<const Array>,
                             std::span<const Aval> in, std::span<const bool> linear,
                             const Params& p) {
  Arrays out(in.size());
  if (is_zero(ct[0])) return out;
  const size_t dim = size_t(p.i("dimension"));
  std::vector<int64_t> start(in[0].shape.size(), 0), limit = ct[0].shape().vec();
  int64_t off = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    start[dim] = off;
    limit[dim] = off + in[i].shape[dim];
    off = limit[dim];
    if (linear[i]) out[i] = lax::slice(ct[0], start, limit);
  }
  return out;
}

std::vector<lax::PadConfig> pad_config(const Params& p) {
  const auto &lo = p.ints("lo"), &hi = p.ints("hi"), &in = p.ints("interior");
  std::vector<lax::PadConfig> c;
  for (size_t d = 0; d < lo.size(); ++d) c.push_back({lo[d], hi[d], in[d]});
  return c;
}
Arrays pad_jvp(std::span<const Array> primals, std::span<const Array>, std::span<const Array> t,
               const Params& p) {
  return {lax::pad(instantiate(t[0], aval_of(primals[0])), instantiate(t[1], aval_of(primals[1])),
                   pad_config(p))};
}
// As jax: the operand's cotangent undoes lo/hi with a negative pad and strides over the
// interior; the padding value's is everything else, sum(ct) - sum(operand ct).
Arrays pad_transpose(std::span<const Array> ct, std::span<const Array>,
                     std::span<const Aval> in, std::span<const bool> linear, const Params& p) {
  if (is_zero(ct[0])) return {Array(), Array()};
  const Array& t = ct[0];
  const auto &lo = p.ints("lo"), &hi = p.ints("hi"), &interior = p.ints("interior");
  std::vector<lax::PadConfig> unpad;
  for (size_t d = 0; d < lo.size(); ++d) unpad.push_back({-lo[d], -hi[d], 0});
  Array unpadded = lax::pad(t, lax::convert_element_type(Array(0), t.dtype()), unpad);
  std::vector<int64_t> strides;
  for (int64_t i : interior) strides.push_back(i + 1);
  Array t_op = lax::slice(unpadded, std::vector<int64_t>(lo.size(), 0), unpadded.shape().vec(),
                          strides);
  Array t_padv;
  if (linear[1]) {
    std::vector<int64_t> all;
    for (int d = 0; d < t.ndim(); ++d) all.push_back(d);
    t_padv = lax::sub(lax::reduce_sum(t, all), lax::reduce_sum(t_op, all));
    if (t_padv.weak_type() != in[1].weak)
      t_padv = lax::convert_element_type(t_padv, in[1].dtype, in[1].weak);
  }
  return {linear[0] ? t_op : Array(), t_padv};
}

// ---- batching (jax/_src/lax/lax.py): the batch dim stays where it is and the params are
// renumbered, except reshape, which needs it in front, and transpose, which puts it there
// for free. Each operand here has rank = unbatched rank + 1. ----
using batching::BatchResult;
using batching::kNotMapped;

// Unbatched dim numbers renumbered for an operand that gained a batch dim at `bdim`.
std::vector<int64_t> bump(const std::vector<int64_t>& dims, int bdim) {
  std::vector<int64_t> r;
  for (int64_t d : dims) r.push_back(d >= bdim ? d + 1 : d);
  return r;
}

// Row-major order must hold the batch dim outermost for a reshape to keep it intact.
BatchResult reshape_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  Array x = batching::move_bdim(in[0], dims[0], 0);
  Shape s(p.ints("new_sizes"));
  s.insert(0, x.shape()[0]);
  return {{lax::reshape(x, s)}, {0}};
}

// The batch dim b becomes output dim q, placed right after the output dim of operand dim
// b-1, so broadcast_dimensions stay increasing and no transpose is needed.
BatchResult broadcast_in_dim_batch(std::span<const Array> in, std::span<const int> dims,
                                   const Params& p) {
  const auto& bd = p.ints("broadcast_dimensions");
  const int b = dims[0];
  const int64_t q = b == 0 ? 0 : bd[size_t(b - 1)] + 1;
  std::vector<int64_t> nbd;
  for (size_t i = 0; i < bd.size(); ++i) nbd.push_back(bd[i] >= q ? bd[i] + 1 : bd[i]);
  nbd.insert(nbd.begin() + b, q);
  Shape s(p.ints("shape"));
  s.insert(size_t(q), in[0].shape()[size_t(b)]);
  return {{lax::broadcast_in_dim(in[0], s, nbd)}, {int(q)}};
}

BatchResult transpose_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  const int b = dims[0];
  std::vector<int64_t> perm = bump(p.ints("permutation"), b);
  perm.insert(perm.begin(), b);
  return {{lax::transpose(in[0], perm)}, {0}};
}

BatchResult squeeze_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  const int b = dims[0];
  const auto& sq = p.ints("dimensions");
  int out = b;
  for (int64_t d : sq) out -= d < b ? 1 : 0;
  return {{lax::squeeze(in[0], bump(sq, b))}, {out}};
}

BatchResult rev_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  return {{lax::rev(in[0], bump(p.ints("dimensions"), dims[0]))}, {dims[0]}};
}

// All operands get the batch dim where the first mapped one has it; unmapped operands are
// broadcast there.
BatchResult concatenate_batch(std::span<const Array> in, std::span<const int> dims,
                              const Params& p) {
  const int64_t size = batching::axis_size(in, dims);
  int t = kNotMapped;
  for (int d : dims)
    if (t == kNotMapped) t = d;
  std::vector<Array> xs;
  for (size_t i = 0; i < in.size(); ++i) xs.push_back(batching::materialize_at(in[i], dims[i], size, t));
  const int64_t dim = p.i("dimension");
  return {{lax::concatenate(xs, dim >= t ? dim + 1 : dim)}, {t}};
}

// As jax's _pad_batch_rule: a batched padding value cannot be a pad operand (it must be a
// scalar), so the operand is padded with zeros and the padding is selected in by a mask.
BatchResult pad_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  const int64_t size = batching::axis_size(in, dims);
  const int b = dims[0] == kNotMapped ? 0 : dims[0];
  Array x = batching::materialize_at(in[0], dims[0], size, b);
  std::vector<lax::PadConfig> cfg = pad_config(p);
  cfg.insert(cfg.begin() + b, lax::PadConfig{});
  if (dims[1] == kNotMapped) return {{lax::pad(x, in[1], cfg)}, {b}};
  const Array& v = in[1];  // [size]
  const bool weak = x.weak_type() && v.weak_type();
  Array padded = lax::pad(x, lax::convert_element_type(Array(0), x.dtype(), weak), cfg);
  Array inside = lax::pad(lax::broadcast_in_dim(Array(true), x.shape(), {}), Array(false), cfg);
  Array fill = lax::broadcast_in_dim(v, padded.shape(), {int64_t(b)});
  return {{lax::select(inside, padded, fill)}, {b}};
}

BatchResult iota_batch(std::span<const Array>, std::span<const int>, const Params&) {
  throw InternalError("[iota] batching rule called: iota has no operands, so vmap never "
                      "batches it");
}

}  // namespace

void register_shape() {
  auto& r = mutable_info(Prim::Reshape);
  r.abstract_eval = reshape_abstract_eval;
  r.impl = reshape_impl;
  r.jvp = reshape_jvp;
  r.transpose = reshape_transpose;
  r.batch = reshape_batch;
  auto& b = mutable_info(Prim::BroadcastInDim);
  b.abstract_eval = broadcast_in_dim_abstract_eval;
  b.impl = broadcast_in_dim_impl;
  b.jvp = broadcast_in_dim_jvp;
  b.transpose = broadcast_in_dim_transpose;
  b.batch = broadcast_in_dim_batch;
  auto& t = mutable_info(Prim::Transpose);
  t.abstract_eval = transpose_abstract_eval;
  t.impl = transpose_impl;
  t.jvp = transpose_jvp;
  t.transpose = transpose_transpose;
  t.batch = transpose_batch;
  auto& sq = mutable_info(Prim::Squeeze);
  sq.abstract_eval = squeeze_abstract_eval;
  sq.impl = squeeze_impl;
  sq.jvp = squeeze_jvp;
  sq.transpose = squeeze_transpose;
  sq.batch = squeeze_batch;
  auto& rv = mutable_info(Prim::Rev);
  rv.abstract_eval = rev_abstract_eval;
  rv.impl = rev_impl;
  rv.jvp = rev_jvp;
  rv.transpose = rev_transpose;
  rv.batch = rev_batch;
  auto& c = mutable_info(Prim::Concatenate);
  c.abstract_eval = concatenate_abstract_eval;
  c.impl = concatenate_impl;
  c.jvp = concatenate_jvp;
  c.transpose = concatenate_transpose;
  c.batch = concatenate_batch;
  auto& pd = mutable_info(Prim::Pad);
  pd.abstract_eval = pad_abstract_eval;
  pd.impl = pad_impl;
  pd.jvp = pad_jvp;
  pd.transpose = pad_transpose;
  pd.batch = pad_batch;
  auto& io = mutable_info(Prim::Iota);
  io.abstract_eval = iota_abstract_eval;
  io.impl = iota_impl;
  io.batch = iota_batch;
  io.zero_tangent = true;  // no operands: nothing to differentiate
  io.not_linear = true;
}

}  // namespace jx::ops
