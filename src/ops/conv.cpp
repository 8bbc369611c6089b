// Family: conv — conv_general_dilated (XLA's Conv), with its rules as
// jax/_src/lax/convolution.py defines them. Canonical order: lhs and out (batch, feature,
// spatial...), rhs (out feature, in feature, spatial...); the dimension numbers say where
// each of those lives in the operands. docs/convolution.md derives each rule.
#include "ops/conv.h"

#include <algorithm>
#include <numeric>

#include "backend/cpu/conv.h"
#include "ops/ad_rules.h"
#include "ops/batching.h"
#include "ops/common.h"
#include "ops/window_params.h"
#include "transforms/bind.h"

namespace jx::ops {

// ---- params ----
namespace {
std::string tuple_str(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += jx::str(i ? ", " : "", v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}
}  // namespace

std::string ConvDnumsParam::str() const {
  return jx::str("ConvDimensionNumbers(lhs_spec=", tuple_str(d.lhs_spec), ", rhs_spec=",
                 tuple_str(d.rhs_spec), ", out_spec=", tuple_str(d.out_spec), ")");
}
bool ConvDnumsParam::equals(const ParamObject& other) const {
  auto* o = dynamic_cast<const ConvDnumsParam*>(&other);
  return o && o->d == d;
}
size_t ConvDnumsParam::hash() const {
  size_t h = 29;
  for (auto* v : {&d.lhs_spec, &d.rhs_spec, &d.out_spec})
    for (int64_t x : *v) h = h * 1000003u ^ std::hash<int64_t>()(x);
  return h;
}

Params conv_params(const ConvArgs& a) {
  Params p{{"window_strides", a.window_strides},
           {"padding", padding_param(a.padding)},
           {"lhs_dilation", a.lhs_dilation},
           {"rhs_dilation", a.rhs_dilation},
           {"dimension_numbers", std::make_shared<ConvDnumsParam>(a.dimension_numbers)},
           {"feature_group_count", a.feature_group_count},
           {"batch_group_count", a.batch_group_count},
           {"precision", std::shared_ptr<const ParamObject>()}};
  if (a.preferred_element_type)
    p.set("preferred_element_type", *a.preferred_element_type);
  else
    p.set("preferred_element_type", std::shared_ptr<const ParamObject>());
  return p;
}

ConvArgs conv_args(const Params& p) {
  ConvArgs a;
  a.window_strides = p.ints("window_strides");
  a.padding = padding_of(p);
  a.lhs_dilation = p.ints("lhs_dilation");
  a.rhs_dilation = p.ints("rhs_dilation");
  a.dimension_numbers = p.obj<ConvDnumsParam>("dimension_numbers").d;
  a.feature_group_count = p.i("feature_group_count");
  a.batch_group_count = p.i("batch_group_count");
  for (const auto& [k, v] : p.items())
    if (k == "preferred_element_type")
      if (const auto* t = std::get_if<DType>(&v)) a.preferred_element_type = *t;
  return a;
}

Array conv_bind(const Array& lhs, const Array& rhs, const ConvArgs& a) {
  return bind1(Prim::ConvGeneralDilated, {lhs, rhs}, conv_params(a));
}

namespace {


std::string pair_str(const Aval& l, const Aval& r) { return str(aval_str(l), " * ", aval_str(r)); }

std::vector<int64_t> take(const Shape& s, const std::vector<int64_t>& idx) {
  std::vector<int64_t> r;
  for (int64_t i : idx) r.push_back(s[size_t(i)]);
  return r;
}
std::vector<int64_t> spatial(const std::vector<int64_t>& spec) {
  return {spec.begin() + 2, spec.end()};
}
std::vector<int64_t> swap01(std::vector<int64_t> spec) {
  std::swap(spec[0], spec[1]);
  return spec;
}

void check_positive(const char* what, const std::vector<int64_t>& v, size_t n, const Aval& l,
                    const Aval& r) {
  if (v.size() != n)
    throw ShapeError(str("[conv_general_dilated] ", what, " ", list_str(v), " has ", v.size(),
                         " entries for ", n, " spatial dims: ", pair_str(l, r)));
  for (int64_t x : v)
    if (x < 1)
      throw ValueError(str("[conv_general_dilated] ", what, " ", list_str(v),
                           " must be positive: ", pair_str(l, r)));
}

// JAX's _validate_preferred_element_type.
void check_preferred(DType input, DType pref, const Aval& l, const Aval& r) {
  const bool ok = (is_integer(input) && (is_integer(pref) || is_floating(pref))) ||
                  (is_floating(input) && is_floating(pref));
  if (!ok || (is_integer(input) && is_integer(pref) &&
              is_signed_integer(input) != is_signed_integer(pref)))
    throw DTypeError(str("[conv_general_dilated] preferred_element_type ", dtype_name(pref),
                         " is incompatible with the operands ", pair_str(l, r)));
  if (itemsize(pref) < itemsize(input))
    throw DTypeError(str("[conv_general_dilated] preferred_element_type ", dtype_name(pref),
                         " must not be narrower than the operands ", pair_str(l, r)));
}

// The form only the compiler builds (compiler/pass_conv_epilogue.cpp): a bias operand
// (one value per output feature, rank 1 or the output's rank with size-1 dims elsewhere)
// and/or activation=relu, applied to the convolution's result in the same call.
bool has_epilogue(size_t num_inputs, const Params& p) { return num_inputs == 3 || p.has("activation"); }

void check_epilogue(std::span<const Aval> in, const Params& p, const Aval& out, int64_t feature_dim) {
  if (p.has("activation") && p.s("activation") != "relu")
    throw InternalError(str("[conv_general_dilated] unknown activation ", p.s("activation")));
  if (in.size() != 3) return;
  const Aval& b = in[2];
  bool ok = b.dtype == out.dtype && b.shape.numel() == out.shape[size_t(feature_dim)];
  if (b.shape.size() == out.shape.size())
    for (size_t i = 0; i < b.shape.size(); ++i) ok = ok && (b.shape[i] == 1 || int64_t(i) == feature_dim);
  else
    ok = ok && b.shape.size() == 1;
  if (!ok)
    throw InternalError(str("[conv_general_dilated] bias ", aval_str(b), " does not fit the output ",
                            aval_str(out)));
}

void no_epilogue(const char* rule, size_t num_inputs, const Params& p) {
  if (has_epilogue(num_inputs, p))
    throw InternalError(str("[conv_general_dilated] ", rule, " of the compiler's fused form (bias, "
                            "activation): it exists only in compiled programs"));
}

Avals conv_abstract_eval(std::span<const Aval> in, const Params& p) {
  if (in.size() == 3) {
    Avals out = conv_abstract_eval(in.first(2), p);
    check_epilogue(in, p, out[0], conv_args(p).dimension_numbers.out_spec[1]);
    return out;
  }
  const Aval &l = in[0], &r = in[1];
  const ConvArgs a = conv_args(p);
  const auto& dn = a.dimension_numbers;
  if (l.dtype != r.dtype)
    throw DTypeError(str("[conv_general_dilated] operands must have the same dtype: ",
                         pair_str(l, r), "; convert one of them"));
  if (l.dtype == DType::Bool)
    throw DTypeError(str("[conv_general_dilated] bool operands are not supported: ", pair_str(l, r),
                         "; convert them to an integer or float dtype"));
  if (l.shape.size() != r.shape.size())
    throw ShapeError(str("[conv_general_dilated] lhs and rhs must have the same rank: ",
                         pair_str(l, r)));
  const size_t nd = l.shape.size(), ns = nd - 2;
  for (auto* spec : {&dn.lhs_spec, &dn.rhs_spec, &dn.out_spec}) {
    std::vector<int64_t> s = *spec;
    std::sort(s.begin(), s.end());
    for (size_t i = 0; i < s.size(); ++i)
      if (s.size() != nd || s[i] != int64_t(i))
        throw ValueError(str("[conv_general_dilated] dimension numbers ", ConvDnumsParam(dn).str(),
                             " are not permutations of the ", nd, " operand dims: ", pair_str(l, r)));
  }
  const int64_t G = a.feature_group_count, B = a.batch_group_count;
  const int64_t lhs_batch = l.shape[size_t(dn.lhs_spec[0])];
  const int64_t lhs_feat = l.shape[size_t(dn.lhs_spec[1])];
  const int64_t rhs_out = r.shape[size_t(dn.rhs_spec[0])];
  const int64_t rhs_in = r.shape[size_t(dn.rhs_spec[1])];
  if (G < 1 || B < 1)
    throw ValueError(str("[conv_general_dilated] feature_group_count ", G, " and batch_group_count ",
                         B, " must be positive"));
  if (G > 1 && B > 1)
    throw ValueError(str("[conv_general_dilated] at most one of batch_group_count (", B,
                         ") and feature_group_count (", G, ") may be > 1"));
  if (lhs_feat % G)
    throw ShapeError(str("[conv_general_dilated] feature_group_count ", G,
                         " must divide the lhs feature dimension ", lhs_feat, ": ", pair_str(l, r)));
  if (lhs_feat / G != rhs_in)
    throw ShapeError(str("[conv_general_dilated] feature counts differ: ", pair_str(l, r),
                         "; the lhs has ", lhs_feat, " features",
                         G > 1 ? str(" in ", G, " groups of ", lhs_feat / G) : std::string(),
                         " but the rhs takes ", rhs_in,
                         " input features (its 'I' dim); check the dimension numbers"));
  if (rhs_out % G)
    throw ShapeError(str("[conv_general_dilated] the rhs output feature dimension ", rhs_out,
                         " must be a multiple of feature_group_count ", G, ": ", pair_str(l, r)));
  if (B > 1 && lhs_batch % B)
    throw ShapeError(str("[conv_general_dilated] batch_group_count ", B,
                         " must divide the lhs batch dimension ", lhs_batch, ": ", pair_str(l, r)));
  if (rhs_out % B)
    throw ShapeError(str("[conv_general_dilated] the rhs output feature dimension ", rhs_out,
                         " must be a multiple of batch_group_count ", B, ": ", pair_str(l, r)));
  check_positive("window_strides", a.window_strides, ns, l, r);
  check_positive("lhs_dilation", a.lhs_dilation, ns, l, r);
  check_positive("rhs_dilation", a.rhs_dilation, ns, l, r);
  if (a.padding.size() != ns)
    throw ShapeError(str("[conv_general_dilated] padding has ", a.padding.size(),
                         " (lo, hi) pairs for ", ns, " spatial dims: ", pair_str(l, r)));
  Shape out(nd);
  out[size_t(dn.out_spec[0])] = lhs_batch / B;
  out[size_t(dn.out_spec[1])] = rhs_out;
  for (size_t i = 0; i < ns; ++i) {
    const int64_t in_d = dilate_dim(l.shape[size_t(dn.lhs_spec[2 + i])], a.lhs_dilation[i]);
    const int64_t win = dilate_dim(r.shape[size_t(dn.rhs_spec[2 + i])], a.rhs_dilation[i]);
    const int64_t padded = in_d + a.padding[i].first + a.padding[i].second;
    if (padded < 0)
      throw ShapeError(str("[conv_general_dilated] negative padding ", PaddingParam(a.padding).str(),
                           " is larger than spatial dim ", i, " of the lhs: ", pair_str(l, r)));
    if (win > padded && in_d > 0)
      throw ShapeError(str("[conv_general_dilated] the window (", win, " along spatial dim ", i,
                           ", after rhs dilation) is larger than the padded input (", padded,
                           "): ", pair_str(l, r), " with padding ", PaddingParam(a.padding).str(),
                           "; pad the input (e.g. padding \"SAME\") or use a smaller kernel"));
    out[size_t(dn.out_spec[2 + i])] = stride_dim(padded, win, a.window_strides[i]);
  }
  if (a.preferred_element_type) {
    check_preferred(l.dtype, *a.preferred_element_type, l, r);
    return {Aval{out, *a.preferred_element_type, false}};
  }
  return {Aval{out, l.dtype, all_weak(in)}};
}

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

cpu::ConvGeometry geometry(const Aval& l, const Aval& r, const Aval& o, const ConvArgs& a) {
  const auto& dn = a.dimension_numbers;
  cpu::ConvGeometry g;
  g.spatial = int(l.shape.size()) - 2;
  if (g.spatial > cpu::kMaxConvSpatial)
    throw ValueError(str("[conv_general_dilated] ", g.spatial, " spatial dims: ", pair_str(l, r),
                         "; jx runs convolutions of 1, 2 or 3 spatial dims"));
  g.batch = l.shape[size_t(dn.lhs_spec[0])];
  g.in_features = l.shape[size_t(dn.lhs_spec[1])];
  g.out_features = r.shape[size_t(dn.rhs_spec[0])];
  g.feature_groups = a.feature_group_count;
  g.batch_groups = a.batch_group_count;
  const auto ls = row_major_strides(l.shape), rs = row_major_strides(r.shape),
             os = row_major_strides(o.shape);
  for (size_t i = 0; i < l.shape.size(); ++i) {
    g.lhs_strides[i] = ls[size_t(dn.lhs_spec[i])];
    g.rhs_strides[i] = rs[size_t(dn.rhs_spec[i])];
    g.out_strides[i] = os[size_t(dn.out_spec[i])];
  }
  for (int d = 0; d < g.spatial; ++d) {
    g.in[d] = l.shape[size_t(dn.lhs_spec[size_t(2 + d)])];
    g.window[d] = r.shape[size_t(dn.rhs_spec[size_t(2 + d)])];
    g.out[d] = o.shape[size_t(dn.out_spec[size_t(2 + d)])];
    g.stride[d] = a.window_strides[size_t(d)];
    g.pad_lo[d] = a.padding[size_t(d)].first;
    g.pad_hi[d] = a.padding[size_t(d)].second;
    g.lhs_dilation[d] = a.lhs_dilation[size_t(d)];
    g.rhs_dilation[d] = a.rhs_dilation[size_t(d)];
  }
  return g;
}

void conv_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const ConvArgs a = conv_args(p);
  const auto& l = detail::impl_of(in[0]);
  const auto& r = detail::impl_of(in[1]);
  const cpu::ConvGeometry g = geometry(aval_of(in[0]), aval_of(in[1]), aval_of(out[0]), a);
  if (out[0].size() == 0) return;
  cpu::ConvEpilogue epilogue;
  if (in.size() == 3) epilogue.bias = detail::impl_of(in[2]).buffer->data();
  epilogue.relu = p.has("activation");
  cpu::conv_general(l.dtype, out[0].dtype(), l.buffer->data(), r.buffer->data(),
                    detail::raw_data(out[0]), g, epilogue);
}

// ---- autodiff: conv is bilinear (JAX: ad.defbilinear) ----

Arrays conv_jvp(std::span<const Array> primals, std::span<const Array>,
                std::span<const Array> tangents, const Params& p) {
  no_epilogue("jvp", primals.size(), p);
  const ConvArgs a = conv_args(p);
  Array out;
  if (!ad_rules::is_zero(tangents[0])) out = conv_bind(tangents[0], primals[1], a);
  if (!ad_rules::is_zero(tangents[1]))
    out = ad_rules::add_tangents(out, conv_bind(primals[0], tangents[1], a));
  return {out};
}

// jax's _reshape_axis_into: dim `src` merged into dim `dst` (numbered with src removed),
// src's index major.
Array reshape_axis_into(int64_t src, int64_t dst, const Array& x) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (i != src) perm.push_back(i);
  perm.insert(perm.begin() + dst, src);
  Shape shape;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (i != src) shape.push_back(x.shape()[size_t(i)]);
  shape[size_t(dst)] *= x.shape()[size_t(src)];
  std::vector<int64_t> identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  const Array t = perm == identity ? x : lax::transpose(x, perm);
  return lax::reshape(t, shape);
}
// jax's _reshape_axis_out_of: dim `src` split into (size1, rest).
Array reshape_axis_out_of(int64_t src, int64_t size1, const Array& x) {
  Shape shape = x.shape();
  const int64_t rest = shape[size_t(src)] / size1;
  shape[size_t(src)] = rest;
  shape.insert(size_t(src), size1);
  return lax::reshape(x, shape);
}

std::vector<int64_t> dilate(const std::vector<int64_t>& s, const std::vector<int64_t>& d) {
  std::vector<int64_t> r;
  for (size_t i = 0; i < s.size(); ++i) r.push_back(dilate_dim(s[i], d[i]));
  return r;
}

// jax's _conv_general_vjp_lhs_padding and _rhs_padding.
lax::Padding::Pairs vjp_lhs_padding(const std::vector<int64_t>& in, const std::vector<int64_t>& window,
                                    const std::vector<int64_t>& out, const ConvArgs& a) {
  const auto ld = dilate(in, a.lhs_dilation), rd = dilate(window, a.rhs_dilation),
             od = dilate(out, a.window_strides);
  lax::Padding::Pairs pads;
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t before = rd[i] - a.padding[i].first - 1;
    pads.emplace_back(before, ld[i] + rd[i] - 1 - od[i] - before);
  }
  return pads;
}
lax::Padding::Pairs vjp_rhs_padding(const std::vector<int64_t>& in, const std::vector<int64_t>& window,
                                    const std::vector<int64_t>& out, const ConvArgs& a) {
  const auto ld = dilate(in, a.lhs_dilation), rd = dilate(window, a.rhs_dilation),
             od = dilate(out, a.window_strides);
  lax::Padding::Pairs pads;
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t lo = a.padding[i].first;
    pads.emplace_back(lo, (od[i] - ld[i]) + (rd[i] - lo - 1));
  }
  return pads;
}

Array convert_to(const Array& x, DType t) {
  return x.dtype() == t ? x : lax::convert_element_type(x, t);
}

// jax's _conv_general_dilated_transpose_lhs.
Array transpose_lhs(const Array& g, Array rhs, const Aval& lhs, const ConvArgs& a) {
  const auto& [lhs_spec, rhs_spec, out_spec] = a.dimension_numbers;
  const Shape rhs_shape = rhs.shape();
  int64_t G = a.feature_group_count;
  const int64_t B = a.batch_group_count;
  if (G > 1 || B > 1) {
    rhs = reshape_axis_out_of(rhs_spec[0], std::max(G, B), rhs);
    rhs = reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs);
    G = std::max(G, B);
  }
  ConvArgs t;
  t.dimension_numbers = {out_spec, swap01(rhs_spec), lhs_spec};
  t.padding = vjp_lhs_padding(take(lhs.shape, spatial(lhs_spec)), take(rhs_shape, spatial(rhs_spec)),
                              take(g.shape(), spatial(out_spec)), a);
  t.window_strides = a.lhs_dilation;
  t.lhs_dilation = a.window_strides;
  t.rhs_dilation = a.rhs_dilation;
  t.feature_group_count = G;
  t.preferred_element_type = a.preferred_element_type;
  Array out = conv_bind(g, convert_to(lax::rev(rhs, spatial(rhs_spec)), g.dtype()), t);
  out = convert_to(out, lhs.dtype);
  if (B > 1) {
    out = reshape_axis_out_of(lhs_spec[1], B, out);
    out = reshape_axis_into(lhs_spec[1], lhs_spec[0], out);
  }
  return out;
}

// jax's _conv_general_dilated_transpose_rhs.
Array transpose_rhs(const Array& g, const Array& lhs, const Aval& rhs, const ConvArgs& a) {
  if (g.size() == 0) return ad_rules::zeros(rhs);
  const auto& [lhs_spec, rhs_spec, out_spec] = a.dimension_numbers;
  ConvArgs t;
  t.feature_group_count = a.batch_group_count;
  t.batch_group_count = a.feature_group_count;
  t.dimension_numbers = {swap01(lhs_spec), swap01(out_spec), swap01(rhs_spec)};
  t.padding = vjp_rhs_padding(take(lhs.shape(), spatial(lhs_spec)), take(rhs.shape, spatial(rhs_spec)),
                              take(g.shape(), spatial(out_spec)), a);
  t.window_strides = a.rhs_dilation;
  t.lhs_dilation = a.lhs_dilation;
  t.rhs_dilation = a.window_strides;
  t.preferred_element_type = a.preferred_element_type;
  return convert_to(conv_bind(convert_to(lhs, g.dtype()), g, t), rhs.dtype);
}

Arrays conv_transpose(std::span<const Array> cts, std::span<const Array> inputs,
                      std::span<const Aval> avals, std::span<const bool> linear, const Params& p) {
  if (linear[0] && linear[1])
    throw InternalError("[conv_general_dilated] transpose: both operands are linear (a bilinear "
                        "primitive is linear in one operand at a time)");
  no_epilogue("transpose", inputs.size(), p);
  Arrays out(2);
  const Array& g = cts[0];
  if (ad_rules::is_zero(g)) return out;
  const ConvArgs a = conv_args(p);
  if (linear[0]) out[0] = transpose_lhs(g, inputs[1], avals[0], a);
  if (linear[1]) out[1] = transpose_rhs(g, inputs[0], avals[1], a);
  return out;
}

// ---- batching (jax's _conv_general_dilated_batch_rule): the vmapped dim is folded into
// the batch dim (lhs), the output features (rhs), or, with both, into the feature groups.
batching::BatchResult conv_batch(std::span<const Array> in, std::span<const int> dims,
                                 const Params& p) {
  using batching::kNotMapped;
  no_epilogue("batching", in.size(), p);
  ConvArgs a = conv_args(p);
  const Array &lhs = in[0], &rhs = in[1];
  const int lb = dims[0], rb = dims[1];
  const auto& [lhs_spec, rhs_spec, out_spec] = a.dimension_numbers;
  const int64_t n = lb != kNotMapped ? lhs.shape()[size_t(lb)] : rhs.shape()[size_t(rb)];
  if (n == 0) {
    Aval l = aval_of(lhs), r = aval_of(rhs);
    if (lb != kNotMapped) l.shape.erase(size_t(lb));
    if (rb != kNotMapped) r.shape.erase(size_t(rb));
    Aval o = conv_abstract_eval(std::vector<Aval>{l, r}, p)[0];
    o.shape.insert(0, 0);
    return {{ad_rules::zeros(o)}, {0}};
  }
  if (lb != kNotMapped && rb != kNotMapped) {
    Array new_lhs;
    if (a.batch_group_count > 1) {
      new_lhs = reshape_axis_into(lb, lhs_spec[0], lhs);
      a.batch_group_count *= n;
    } else {
      new_lhs = reshape_axis_into(lb, lhs_spec[1], lhs);
      a.feature_group_count *= n;
    }
    Array out = conv_bind(new_lhs, reshape_axis_into(rb, rhs_spec[0], rhs), a);
    return {{reshape_axis_out_of(out_spec[1], n, out)}, {int(out_spec[1])}};
  }
  if (lb != kNotMapped) {
    if (a.batch_group_count == 1) {
      Array out = conv_bind(reshape_axis_into(lb, lhs_spec[0], lhs), rhs, a);
      return {{reshape_axis_out_of(out_spec[0], n, out)}, {int(out_spec[0])}};
    }
    Array x = reshape_axis_out_of(lhs_spec[0] + (lb <= lhs_spec[0]), a.batch_group_count, lhs);
    x = reshape_axis_into(lb + (lhs_spec[0] < lb), lhs_spec[0] + 1, x);
    x = reshape_axis_into(lhs_spec[0], lhs_spec[0], x);
    Array out = conv_bind(x, rhs, a);
    return {{reshape_axis_out_of(out_spec[0], n, out)}, {int(out_spec[0])}};
  }
  if (a.feature_group_count == 1 && a.batch_group_count == 1) {
    Array out = conv_bind(lhs, reshape_axis_into(rb, rhs_spec[0], rhs), a);
    return {{reshape_axis_out_of(out_spec[1], n, out)}, {int(out_spec[1])}};
  }
  // Groups must stay outermost in the rhs output features: factor them out, fold the
  // vmapped dim in under them, and undo the same on the output.
  const int64_t groups = std::max(a.feature_group_count, a.batch_group_count);
  Array w = reshape_axis_out_of(rhs_spec[0] + (rb <= rhs_spec[0]), groups, rhs);
  w = reshape_axis_into(rb + (rhs_spec[0] < rb), rhs_spec[0] + 1, w);
  w = reshape_axis_into(rhs_spec[0], rhs_spec[0], w);
  Array out = conv_bind(lhs, w, a);
  out = reshape_axis_out_of(out_spec[1], groups, out);
  out = reshape_axis_out_of(out_spec[1] + 1, n, out);
  out = reshape_axis_into(out_spec[1], out_spec[1] + 1, out);
  return {{out}, {int(out_spec[1])}};
}

}  // namespace

void register_conv() {
  auto& c = mutable_info(Prim::ConvGeneralDilated);
  c.abstract_eval = conv_abstract_eval;
  c.impl = conv_impl;
  c.jvp = conv_jvp;
  c.transpose = conv_transpose;
  c.batch = conv_batch;
}

}  // namespace jx::ops
