// Windowed reductions, as jax/_src/lax/windowed_reductions.py defines them:
//   reduce_window_{sum,max,min}(operand)          XLA ReduceWindow with add/max/min
//   reduce_window(operand, init)[jaxpr, consts]   ReduceWindow with a traced computation
//   select_and_scatter_add(source, operand)       SelectAndScatter(ge|le, add): max pool's VJP
//   select_and_gather_add(tangents, operand)      the tangent at each window's selection
// Params (jax's names): window_dimensions, window_strides, padding ((lo, hi) per dim),
// base_dilation, window_dilation (select_and_scatter_add has no dilations), select_prim.
// Autodiff: sum is linear (transpose: pad + reduce_window_sum); max/min differentiate
// through select_and_gather_add, whose transpose is select_and_scatter_add and back.
// Batching gives the batch dim a window of 1, stride 1, no padding.
#include "ops/windowed.h"

#include <limits>

#include "backend/cpu/window.h"
#include "ir/jaxpr.h"
#include "ops/ad_rules.h"
#include "ops/batching.h"
#include "ops/common.h"
#include "ops/window_params.h"
#include "support/dtype_switch.h"
#include "transforms/bind.h"
#include "transforms/jaxpr_transforms.h"
#include "transforms/trace.h"

namespace jx::ops {
namespace windowed {

void check_window_lengths(const char* op, const Aval& x, const std::vector<int64_t>& dims,
                          const std::vector<int64_t>& strides, const std::vector<int64_t>& base,
                          const std::vector<int64_t>& wdil) {
  const size_t nd = x.shape.size();
  auto length = [&](const char* what, const std::vector<int64_t>& v) {
    if (v.size() != nd)
      throw ShapeError(str("[", op, "] ", what, " ", list_str(v), " has ", v.size(),
                           " entries for the operand ", aval_str(x), " of rank ", nd,
                           "; give one per operand dim (1 where the window does not reduce)"));
  };
  auto positive = [&](const char* what, const std::vector<int64_t>& v) {
    for (int64_t e : v)
      if (e < 1)
        throw ValueError(str("[", op, "] ", what, " ", list_str(v), " must all be positive, got ",
                             e, " (operand ", aval_str(x), ")"));
  };
  length("window_dimensions", dims);
  length("window_strides", strides);
  length("base_dilation", base);
  length("window_dilation", wdil);
  positive("window_dimensions", dims);
  positive("window_strides", strides);
  positive("base_dilation", base);
  positive("window_dilation", wdil);
}

Params window_params(const Window& w, bool dilations) {
  Params p{{"window_dimensions", w.dims},
           {"window_strides", w.strides},
           {"padding", padding_param(w.padding)}};
  if (dilations) {
    p.set("base_dilation", w.base_dilation);
    p.set("window_dilation", w.window_dilation);
  }
  return p;
}

Window window_of(const Params& p) {
  Window w{p.ints("window_dimensions"), p.ints("window_strides"), padding_of(p), {}, {}};
  const size_t n = w.dims.size();
  w.base_dilation = p.has("base_dilation") ? p.ints("base_dilation") : std::vector<int64_t>(n, 1);
  w.window_dilation = p.has("window_dilation") ? p.ints("window_dilation") : std::vector<int64_t>(n, 1);
  return w;
}

}  // namespace windowed

namespace {

using windowed::Window;
using windowed::window_of;
using windowed::window_params;
using batching::kNotMapped;

// ---- shape rule (jax's _common_reduce_window_shape_rule / reduce_window_shape_tuple) ----

Shape window_out_shape(const char* op, const Aval& x, const Window& w) {
  windowed::check_window_lengths(op, x, w.dims, w.strides, w.base_dilation, w.window_dilation);
  const size_t nd = x.shape.size();
  if (w.padding.size() != nd)
    throw ShapeError(str("[", op, "] padding has ", w.padding.size(), " (lo, hi) pairs for the operand ",
                         aval_str(x), " of rank ", nd, "; give one pair per operand dim"));
  Shape out;
  for (size_t d = 0; d < nd; ++d) {
    const auto [lo, hi] = w.padding[d];
    const int64_t padded = dilate_dim(x.shape[d], w.base_dilation[d]) + lo + hi;
    const int64_t win = dilate_dim(w.dims[d], w.window_dilation[d]);
    if (padded < 0)
      throw ShapeError(str("[", op, "] padding (", lo, ", ", hi, ") of dim ", d, " of ", aval_str(x),
                           " removes more than the whole dim; use padding that leaves a size >= 0"));
    // An empty padded dim has no windows (so vmap over a batch of 0 works); otherwise the
    // window must fit, as XLA requires.
    if (padded > 0 && win > padded)
      throw ShapeError(str("[", op, "] the window of size ", win, " (window_dimensions ",
                           list_str(w.dims), ", window_dilation ", list_str(w.window_dilation),
                           ") is larger than dim ", d, " of ", aval_str(x), ", which is ", padded,
                           " after base dilation ", w.base_dilation[d], " and padding (", lo, ", ",
                           hi, "); pad the operand or use a smaller window"));
    out.push_back(padded == 0 ? 0 : stride_dim(padded, win, w.strides[d]));
  }
  return out;
}

cpu::WindowGeom geom_of(const Shape& in, const Shape& out, const Window& w, std::vector<int64_t>& lo) {
  lo.clear();
  for (const auto& pr : w.padding) lo.push_back(pr.first);
  cpu::WindowGeom g;
  g.ndim = int(in.size());
  g.in_shape = in.data();
  g.out_shape = out.data();
  g.window = w.dims.data();
  g.strides = w.strides.data();
  g.pad_lo = lo.data();
  g.base_dilation = w.base_dilation.data();
  g.window_dilation = w.window_dilation.data();
  return g;
}

bool is_ge(const char* op, const Params& p) {
  const std::string& s = p.s("select_prim");
  if (s != "ge" && s != "le")
    throw ValueError(str("[", op, "] select_prim must be ge or le, got ", s));
  return s == "ge";
}

// The identity of the selection: -inf / lowest / false for ge, +inf / highest / true for le.
template <class T>
T select_identity_of(bool ge) {
  if constexpr (std::is_same_v<T, bool>) return !ge;
  else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bhalf>)
    return T(ge ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity());
  else return ge ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
}

Array select_identity(DType dt, bool ge) {
  Array a = detail::empty_array({}, dt);
  JX_DTYPE_SWITCH(dt, T, { *detail::data<T>(a) = select_identity_of<T>(ge); });
  return a;
}

// ---- reduce_window_sum / max / min ----

template <Prim P>
Avals monoid_abstract_eval(std::span<const Aval> in, const Params& p) {
  const Aval& x = in[0];
  if (P == Prim::ReduceWindowSum && x.dtype == DType::Bool)
    throw DTypeError(str("[reduce_window_sum] needs a number dtype, got ", aval_str(x),
                         "; convert bools to an integer dtype first"));
  return {Aval{window_out_shape(name(P), x, window_of(p)), x.dtype, x.weak}};
}

template <Prim P>
void monoid_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& x = detail::impl_of(in[0]);
  const Window w = window_of(p);
  const Shape os = out[0].shape();
  std::vector<int64_t> lo;
  const cpu::WindowOp op = P == Prim::ReduceWindowSum   ? cpu::WindowOp::Sum
                           : P == Prim::ReduceWindowMax ? cpu::WindowOp::Max
                                                        : cpu::WindowOp::Min;
  if (os.numel() == 0) return;
  cpu::reduce_window(op, x.dtype, x.buffer->data(), geom_of(x.shape, os, w, lo),
                     detail::raw_data(out[0]));
}

Array bind_window(Prim p, std::initializer_list<Array> in, const Window& w, bool dilations = true,
                  const char* select = nullptr) {
  Params params = window_params(w, dilations);
  if (select) params.set("select_prim", std::string(select));
  return bind1(p, in, params);
}

using namespace ad_rules;

Arrays sum_jvp(std::span<const Array>, std::span<const Array>, std::span<const Array> t,
               const Params& p) {
  if (is_zero(t[0])) return {Array()};
  return {bind_window(Prim::ReduceWindowSum, {t[0]}, window_of(p))};
}

// jax's _reduce_window_sum_transpose_rule: the cotangent, dilated by the strides and
// padded by _conv_general_vjp_lhs_padding, summed over the same window at strides equal
// to the base dilation.
Arrays sum_transpose(std::span<const Array> ct, std::span<const Array>, std::span<const Aval> avals,
                     std::span<const bool>, const Params& p) {
  if (is_zero(ct[0])) return {Array()};
  const Window w = window_of(p);
  const Shape& in = avals[0].shape;
  const Shape& out = ct[0].shape();
  const size_t nd = in.size();
  std::vector<lax::PadConfig> cfg(nd);
  Window t{w.dims, w.base_dilation, lax::Padding::Pairs(nd), std::vector<int64_t>(nd, 1), w.window_dilation};
  for (size_t d = 0; d < nd; ++d) {
    const int64_t win = dilate_dim(w.dims[d], w.window_dilation[d]);
    const int64_t before = win - w.padding[d].first - 1;
    const int64_t after = dilate_dim(in[d], w.base_dilation[d]) + win - 1 - dilate_dim(out[d], w.strides[d]) - before;
    cfg[d] = {before, after, w.strides[d] - 1};
  }
  Array padded = lax::pad(ct[0], lax::convert_element_type(Array(0), ct[0].dtype()), cfg);
  Array r = bind_window(Prim::ReduceWindowSum, {padded}, t);
  JX_CHECK(r.shape() == in, "reduce_window_sum transpose gave ", shape_str(r.shape()), " for ",
           shape_str(in));
  return {r};
}

// jax's _reduce_window_chooser_jvp_rule.
template <bool ge>
Arrays chooser_jvp(std::span<const Array> x, std::span<const Array>, std::span<const Array> t,
                   const Params& p) {
  if (is_zero(t[0])) return {Array()};
  return {bind_window(Prim::SelectAndGatherAdd, {t[0], x[0]}, window_of(p), true, ge ? "ge" : "le")};
}

// jax's _reduce_window_batch_rule: the batch dim stays where it is, with a window of 1.
Window with_unit_dim(Window w, int at) {
  w.dims.insert(w.dims.begin() + at, 1);
  w.strides.insert(w.strides.begin() + at, 1);
  w.padding.insert(w.padding.begin() + at, {0, 0});
  w.base_dilation.insert(w.base_dilation.begin() + at, 1);
  w.window_dilation.insert(w.window_dilation.begin() + at, 1);
  return w;
}

template <Prim P>
batching::BatchResult monoid_batch(std::span<const Array> in, std::span<const int> dims,
                                   const Params& p) {
  return {{bind_window(P, {in[0]}, with_unit_dim(window_of(p), dims[0]))}, {dims[0]}};
}

// ---- reduce_window (generic): operands (operand, init_value); params jaxpr (a closed
// scalar computation (acc, x) -> acc) and consts (its captured constants) ----

// `consts=()` as jax prints it; the values themselves live in the jaxpr's constvars.
struct ConstsParam final : ParamObject {
  std::vector<Aval> avals;
  explicit ConstsParam(std::vector<Aval> a) : avals(std::move(a)) {}
  std::string str() const override {
    std::string s = "(";
    for (size_t i = 0; i < avals.size(); ++i) s += (i ? ", " : "") + aval_str(avals[i]);
    return s + (avals.size() == 1 ? ",)" : ")");
  }
  bool equals(const ParamObject& o) const override {
    auto* c = dynamic_cast<const ConstsParam*>(&o);
    return c && c->avals == avals;
  }
  size_t hash() const override { return avals.size(); }
};

Avals generic_abstract_eval(std::span<const Aval> in, const Params& p) {
  const Aval &x = in[0], &init = in[1];
  if (x.dtype != init.dtype)
    throw TypeError(str("[reduce_window] got inconsistent dtypes for operand and init_value: ",
                        aval_str(x), " and ", aval_str(init), "; convert init_value to ",
                        dtype_name(x.dtype)));
  if (!init.shape.empty())
    throw TypeError(str("[reduce_window] expected init_value to be a scalar, got ", aval_str(init)));
  const ir::Jaxpr& j = ir::jaxpr_of(p, "jaxpr");
  const Aval scalar{{}, x.dtype, false};
  if (j.invars.size() != 2 || j.outvars.size() != 1 || !(j.out_avals()[0].shape.empty()) ||
      j.out_avals()[0].dtype != x.dtype)
    throw TypeError(str("[reduce_window] the computation must map two ", aval_str(scalar),
                        " scalars to one, got ", avals_str(j.in_avals()), " -> ",
                        avals_str(j.out_avals())));
  return {Aval{window_out_shape("reduce_window", x, window_of(p)), x.dtype, x.weak}};
}

// Evaluates the fold out = c(...c(c(init, s_0), s_1)..., s_{K-1}) over the K window
// positions, where s_k is the strided slice of the padded, dilated operand that holds
// position k of every window, with the computation vmapped over all outputs at once.
void generic_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  tr::CurrentTraceGuard eager(nullptr);
  const Array &x = in[0], &init = in[1];
  const Window w = window_of(p);
  const Shape os = out[0].shape();
  const int64_t m = os.numel();
  if (m == 0) return;
  const size_t nd = os.size();
  std::vector<lax::PadConfig> cfg(nd);
  for (size_t d = 0; d < nd; ++d) cfg[d] = {w.padding[d].first, w.padding[d].second, w.base_dilation[d] - 1};
  Array xp = lax::pad(x, init, cfg);
  const ir::Jaxpr& j = ir::jaxpr_of(p, "jaxpr");
  auto [batched, out_batched] = tr::batch_jaxpr(j, m, {true, true}, {true});
  Array acc = lax::broadcast_in_dim(init, Shape{m}, {});
  int64_t positions = 1;
  for (int64_t k : w.dims) positions *= k;
  std::vector<int64_t> k(nd, 0), start(nd), limit(nd);
  for (int64_t kl = 0; kl < positions; ++kl) {
    int64_t rest = kl;
    for (size_t d = nd; d-- > 0;) {
      k[d] = rest % w.dims[d];
      rest /= w.dims[d];
    }
    for (size_t d = 0; d < nd; ++d) {
      start[d] = k[d] * w.window_dilation[d];
      limit[d] = start[d] + (os[d] - 1) * w.strides[d] + 1;
    }
    Array s = lax::reshape(lax::slice(xp, start, limit, w.strides), Shape{m});
    acc = tr::call_jaxpr(batched, {acc, s})[0];
  }
  out[0] = detail::alias_array(lax::reshape(acc, os), os, out[0].weak_type());
}

Arrays generic_jvp(std::span<const Array>, std::span<const Array>, std::span<const Array> t,
                   const Params&) {
  if (is_zero(t[0]) && is_zero(t[1])) return {Array()};
  throw ValueError(
      "[reduce_window] differentiation of reduce_window with a general computation is not "
      "implemented (jax has no rule for it either); reduce_window with add and 0, max and -inf, "
      "or min and +inf binds reduce_window_sum/max/min, which are differentiable");
}

// jax's _generic_reduce_window_batch_rule.
batching::BatchResult generic_batch(std::span<const Array> in, std::span<const int> dims,
                                    const Params& p) {
  if (dims[1] != kNotMapped)
    throw ValueError("[reduce_window] batching over init_value is not implemented (as in jax); "
                     "vmap over the operand only");
  Params q = p;
  const Window w = with_unit_dim(window_of(p), 0);
  Params wp = window_params(w);
  for (const auto& [key, value] : wp.items()) q.set(key, value);
  Array x = batching::move_bdim(in[0], dims[0], 0);
  const Arrays args{x, in[1]};
  return {bind(Prim::ReduceWindow, args, q), {0}};
}

// ---- select_and_scatter_add(source, operand)[select_prim, window_dimensions,
// window_strides, padding] ----

Avals scatter_abstract_eval(std::span<const Aval> in, const Params& p) {
  const char* op = "select_and_scatter_add";
  const Aval &src = in[0], &x = in[1];
  is_ge(op, p);
  if (src.dtype != x.dtype)
    throw DTypeError(str("[", op, "] source and operand must have the same dtype, got ", aval_str(src),
                         " and ", aval_str(x)));
  const Shape windows = window_out_shape(op, x, window_of(p));
  if (src.shape != windows)
    throw ShapeError(str("[", op, "] source ", aval_str(src), " must have one element per window of ",
                         "the operand ", aval_str(x), ", i.e. shape ", shape_str(windows)));
  return {Aval{x.shape, x.dtype, all_weak(in)}};
}

void scatter_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& src = detail::impl_of(in[0]);
  const auto& x = detail::impl_of(in[1]);
  if (x.shape.numel() == 0) return;
  const Window w = window_of(p);
  std::vector<int64_t> lo;
  cpu::select_and_scatter_add(is_ge("select_and_scatter_add", p), x.dtype, src.buffer->data(),
                              x.buffer->data(), geom_of(x.shape, src.shape, w, lo),
                              detail::raw_data(out[0]));
}

// jax's _select_and_scatter_add_jvp: linear in source; the operand only selects.
Arrays scatter_jvp(std::span<const Array> primals, std::span<const Array>, std::span<const Array> t,
                   const Params& p) {
  if (is_zero(t[0])) return {Array()};
  return {bind_window(Prim::SelectAndScatterAdd, {t[0], primals[1]}, window_of(p), false,
                      p.s("select_prim").c_str())};
}

// jax's _select_and_scatter_add_transpose.
Arrays scatter_transpose(std::span<const Array> ct, std::span<const Array> inputs,
                         std::span<const Aval>, std::span<const bool> linear, const Params& p) {
  if (linear[1])
    throw InternalError("jx internal error: [select_and_scatter_add] transpose with respect to the operand");
  if (is_zero(ct[0])) return {Array(), Array()};
  return {bind_window(Prim::SelectAndGatherAdd, {ct[0], inputs[1]}, window_of(p), true,
                      p.s("select_prim").c_str()),
          Array()};
}

// ---- select_and_gather_add(tangents, operand)[select_prim, window..., dilations] ----

Avals gather_abstract_eval(std::span<const Aval> in, const Params& p) {
  const char* op = "select_and_gather_add";
  const Aval &t = in[0], &x = in[1];
  is_ge(op, p);
  if (t.shape != x.shape || t.dtype != x.dtype)
    throw ShapeError(str("[", op, "] tangents and operand must have the same shape and dtype, got ",
                         aval_str(t), " and ", aval_str(x)));
  if (!is_floating(x.dtype))
    throw DTypeError(str("[", op, "] needs a floating dtype, got ", aval_str(x)));
  return {Aval{window_out_shape(op, x, window_of(p)), x.dtype, all_weak(in)}};
}

void gather_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& t = detail::impl_of(in[0]);
  const auto& x = detail::impl_of(in[1]);
  const Shape os = out[0].shape();
  if (os.numel() == 0) return;
  const Window w = window_of(p);
  std::vector<int64_t> lo;
  cpu::select_and_gather_add(is_ge("select_and_gather_add", p), x.dtype, t.buffer->data(),
                             x.buffer->data(), geom_of(x.shape, os, w, lo), detail::raw_data(out[0]));
}

// jax's _select_and_gather_add_jvp: linear in tangents.
Arrays gather_jvp(std::span<const Array> primals, std::span<const Array>, std::span<const Array> t,
                  const Params& p) {
  if (is_zero(t[0])) return {Array()};
  return {bind_window(Prim::SelectAndGatherAdd, {t[0], primals[1]}, window_of(p), true,
                      p.s("select_prim").c_str())};
}

// jax's _select_and_gather_add_transpose: select_and_scatter_add over the operand, with
// base-dilation holes filled by the selection's identity and sliced away after.
Arrays gather_transpose(std::span<const Array> ct, std::span<const Array> inputs,
                        std::span<const Aval>, std::span<const bool> linear, const Params& p) {
  if (linear[1])
    throw InternalError("jx internal error: [select_and_gather_add] transpose with respect to the operand");
  const Window w = window_of(p);
  for (int64_t d : w.window_dilation)
    if (d != 1)
      throw ValueError(str("[select_and_gather_add] the VJP of max/min pooling with window_dilation ",
                           list_str(w.window_dilation), " is not implemented (as in jax); use "
                           "window_dilation 1, or forward mode (jvp)"));
  if (is_zero(ct[0])) return {Array(), Array()};
  const bool ge = is_ge("select_and_gather_add", p);
  Array x = inputs[1];
  bool dilated = false;
  for (int64_t d : w.base_dilation) dilated = dilated || d != 1;
  if (dilated) {
    std::vector<lax::PadConfig> cfg;
    for (int64_t d : w.base_dilation) cfg.push_back({0, 0, d - 1});
    x = lax::pad(x, select_identity(x.dtype(), ge), cfg);
  }
  Window sw{w.dims, w.strides, w.padding, {}, {}};
  Array r = bind_window(Prim::SelectAndScatterAdd, {ct[0], x}, sw, false, ge ? "ge" : "le");
  if (dilated) {
    std::vector<int64_t> zero(size_t(r.ndim()), 0);
    r = lax::slice(r, zero, std::vector<int64_t>(r.shape().begin(), r.shape().end()), w.base_dilation);
  }
  return {r, Array()};
}

// jax's _select_and_scatter_add_batch_rule / _select_and_gather_add_batching_rule: both
// operands with the batch dim in front.
template <Prim P>
batching::BatchResult select_batch(std::span<const Array> in, std::span<const int> dims,
                                   const Params& p) {
  const int64_t n = batching::axis_size(in, dims);
  Array a = batching::bdim_to_front(in[0], dims[0], n);
  Array b = batching::bdim_to_front(in[1], dims[1], n);
  Window w = with_unit_dim(window_of(p), 0);
  const bool dil = P == Prim::SelectAndGatherAdd;
  return {{bind_window(P, {a, b}, w, dil, p.s("select_prim").c_str())}, {0}};
}

}  // namespace

void register_windowed() {
  auto& sum = mutable_info(Prim::ReduceWindowSum);
  sum.abstract_eval = monoid_abstract_eval<Prim::ReduceWindowSum>;
  sum.impl = monoid_impl<Prim::ReduceWindowSum>;
  sum.jvp = sum_jvp;
  sum.transpose = sum_transpose;
  sum.batch = monoid_batch<Prim::ReduceWindowSum>;

  auto& mx = mutable_info(Prim::ReduceWindowMax);
  mx.abstract_eval = monoid_abstract_eval<Prim::ReduceWindowMax>;
  mx.impl = monoid_impl<Prim::ReduceWindowMax>;
  mx.jvp = chooser_jvp<true>;
  mx.not_linear = true;
  mx.batch = monoid_batch<Prim::ReduceWindowMax>;

  auto& mn = mutable_info(Prim::ReduceWindowMin);
  mn.abstract_eval = monoid_abstract_eval<Prim::ReduceWindowMin>;
  mn.impl = monoid_impl<Prim::ReduceWindowMin>;
  mn.jvp = chooser_jvp<false>;
  mn.not_linear = true;
  mn.batch = monoid_batch<Prim::ReduceWindowMin>;

  auto& g = mutable_info(Prim::ReduceWindow);
  g.abstract_eval = generic_abstract_eval;
  g.impl = generic_impl;
  g.jvp = generic_jvp;
  g.not_linear = true;
  g.batch = generic_batch;

  auto& sas = mutable_info(Prim::SelectAndScatterAdd);
  sas.abstract_eval = scatter_abstract_eval;
  sas.impl = scatter_impl;
  sas.jvp = scatter_jvp;
  sas.transpose = scatter_transpose;
  sas.batch = select_batch<Prim::SelectAndScatterAdd>;

  auto& sga = mutable_info(Prim::SelectAndGatherAdd);
  sga.abstract_eval = gather_abstract_eval;
  sga.impl = gather_impl;
  sga.jvp = gather_jvp;
  sga.transpose = gather_transpose;
  sga.batch = select_batch<Prim::SelectAndGatherAdd>;
}

std::shared_ptr<const ParamObject> windowed::consts_param(std::vector<Aval> avals) {
  return std::make_shared<ConstsParam>(std::move(avals));
}

}  // namespace jx::ops
