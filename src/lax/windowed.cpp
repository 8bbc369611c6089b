// jx::lax windowed reductions: defaults (empty strides/dilations mean 1), named padding
// resolved against the dilated window (jax.lax.reduce_window), and the generic
// reduce_window's recognition of add/max/min monoids (jax's _get_monoid_window_reducer).
#include <limits>

#include "ir/jaxpr.h"
#include "jx/lax.h"
#include "ops/common.h"
#include "ops/window_params.h"
#include "ops/windowed.h"
#include "support/dtype_switch.h"
#include "transforms/bind.h"
#include "transforms/jaxpr_transforms.h"

namespace jx::lax {

using ops::Prim;
using ops::windowed::Window;

namespace {

std::vector<int64_t> ones_if_empty(const std::vector<int64_t>& v, size_t n) {
  return v.empty() ? std::vector<int64_t>(n, 1) : v;
}

Window resolve(const char* op, const Array& operand, const std::vector<int64_t>& dims,
               const std::vector<int64_t>& strides, const Padding& padding,
               const std::vector<int64_t>& base_dilation,
               const std::vector<int64_t>& window_dilation) {
  const size_t nd = size_t(operand.ndim());
  Window w{dims, ones_if_empty(strides, nd), {}, ones_if_empty(base_dilation, nd),
           ones_if_empty(window_dilation, nd)};
  ops::windowed::check_window_lengths(op, ops::aval_of(operand), w.dims, w.strides, w.base_dilation,
                                      w.window_dilation);
  std::vector<int64_t> dilated, in(operand.shape().begin(), operand.shape().end());
  for (size_t d = 0; d < nd; ++d) dilated.push_back(ops::dilate_dim(w.dims[d], w.window_dilation[d]));
  w.padding = padding.resolve(op, in, dilated, w.strides);
  return w;
}

Array monoid(Prim p, const Array& operand, const std::vector<int64_t>& dims,
             const std::vector<int64_t>& strides, const Padding& padding,
             const std::vector<int64_t>& base_dilation, const std::vector<int64_t>& window_dilation) {
  Window w = resolve(ops::name(p), operand, dims, strides, padding, base_dilation, window_dilation);
  return bind1(p, {operand}, ops::windowed::window_params(w));
}

// Whether `init` is the identity of the monoid: 0 for add; -inf (floats), the lowest
// value (ints) or false for max; +inf, the highest value or true for min.
template <class T>
bool is_identity_of(Prim monoid, T value) {
  using C = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bhalf>, float, T>;
  const C v = C(value);
  if constexpr (std::is_same_v<T, bool>) {
    return monoid == Prim::Max ? !v : monoid == Prim::Min ? v : false;
  } else if constexpr (std::is_floating_point_v<C>) {
    if (monoid == Prim::Add) return v == C(0);
    return v == (monoid == Prim::Max ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity());
  } else {
    if (monoid == Prim::Add) return v == C(0);
    return v == (monoid == Prim::Max ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max());
  }
}

bool is_identity(Prim monoid, const Array& init) {
  if (!init.is_concrete() || init.ndim() != 0) return false;
  bool r = false;
  JX_DTYPE_SWITCH(init.dtype(), T, { r = is_identity_of<T>(monoid, *detail::data<T>(init)); });
  return r;
}

// The single binary primitive the computation applies to its two arguments (in either
// order), if that is all it does.
std::optional<Prim> single_binary(const tr::TracedJaxpr& t) {
  const ir::Jaxpr& j = t.jaxpr;
  if (!t.consts.empty() || j.eqns.size() != 1 || j.invars.size() != 2 || j.outvars.size() != 1)
    return std::nullopt;
  const ir::Eqn& e = j.eqns[0];
  if (e.inputs.size() != 2 || !e.inputs[0].is_var() || !e.inputs[1].is_var() || e.outputs.size() != 1)
    return std::nullopt;
  const int a = e.inputs[0].var, b = e.inputs[1].var;
  const bool args = (a == j.invars[0] && b == j.invars[1]) || (a == j.invars[1] && b == j.invars[0]);
  if (!args || !j.outvars[0].is_var() || j.outvars[0].var != e.outputs[0]) return std::nullopt;
  return e.prim;
}

}  // namespace

Array reduce_window_sum(const Array& operand, const std::vector<int64_t>& window_dimensions,
                        const std::vector<int64_t>& window_strides, const Padding& padding,
                        const std::vector<int64_t>& base_dilation,
                        const std::vector<int64_t>& window_dilation) {
  return monoid(Prim::ReduceWindowSum, operand, window_dimensions, window_strides, padding,
                base_dilation, window_dilation);
}

Array reduce_window_max(const Array& operand, const std::vector<int64_t>& window_dimensions,
                        const std::vector<int64_t>& window_strides, const Padding& padding,
                        const std::vector<int64_t>& base_dilation,
                        const std::vector<int64_t>& window_dilation) {
  return monoid(Prim::ReduceWindowMax, operand, window_dimensions, window_strides, padding,
                base_dilation, window_dilation);
}

Array reduce_window_min(const Array& operand, const std::vector<int64_t>& window_dimensions,
                        const std::vector<int64_t>& window_strides, const Padding& padding,
                        const std::vector<int64_t>& base_dilation,
                        const std::vector<int64_t>& window_dilation) {
  return monoid(Prim::ReduceWindowMin, operand, window_dimensions, window_strides, padding,
                base_dilation, window_dilation);
}

Array reduce_window(const Array& operand, const Array& init_value,
                    const WindowComputation& computation,
                    const std::vector<int64_t>& window_dimensions,
                    const std::vector<int64_t>& window_strides, const Padding& padding,
                    const std::vector<int64_t>& base_dilation,
                    const std::vector<int64_t>& window_dilation) {
  const DType dt = operand.dtype();
  if (init_value.ndim() != 0)
    throw TypeError(str("[reduce_window] expected init_value to be a scalar, got ",
                        ops::aval_str(ops::aval_of(init_value))));
  // A weakly typed init (a C++ scalar) takes the operand's dtype, as a Python scalar would
  // (but a float does not become an integer).
  Array init = init_value;
  if (init.dtype() != dt) {
    if (!init.weak_type() || (is_floating(init.dtype()) && !is_floating(dt)))
      throw TypeError(str("[reduce_window] got inconsistent dtypes for operand and init_value: ",
                          ops::aval_str(ops::aval_of(operand)), " and ",
                          ops::aval_str(ops::aval_of(init)), "; convert init_value to ", dtype_name(dt)));
    init = convert_element_type(init, dt);
  }
  Window w = resolve("reduce_window", operand, window_dimensions, window_strides, padding,
                     base_dilation, window_dilation);
  const ops::Aval scalar{{}, dt, false};
  tr::TracedJaxpr t = tr::trace_to_jaxpr(
      [&](const ops::Arrays& a) { return ops::Arrays{computation(a[0], a[1])}; }, {scalar, scalar});
  if (auto p = single_binary(t)) {
    if (*p == Prim::Add && is_identity(Prim::Add, init))
      return bind1(Prim::ReduceWindowSum, {operand}, ops::windowed::window_params(w));
    if (*p == Prim::Max && is_identity(Prim::Max, init))
      return bind1(Prim::ReduceWindowMax, {operand}, ops::windowed::window_params(w));
    if (*p == Prim::Min && is_identity(Prim::Min, init))
      return bind1(Prim::ReduceWindowMin, {operand}, ops::windowed::window_params(w));
  }
  // The captured constants become the closed jaxpr's constvars (jax's `consts`); a
  // traced value from an enclosing transformation cannot be closed over.
  std::vector<ops::Aval> const_avals;
  for (const Array& c : t.consts) {
    if (!c.is_concrete())
      throw ValueError("[reduce_window] the computation closes over a traced value; its result "
                       "may depend only on its two arguments and on constants");
    const_avals.push_back(ops::aval_of(c));
  }
  ir::Jaxpr j = std::move(t.jaxpr);
  const size_t nc = t.consts.size();
  j.constvars.assign(j.invars.begin(), j.invars.begin() + long(nc));
  j.invars.erase(j.invars.begin(), j.invars.begin() + long(nc));
  j.consts = t.consts;
  const ops::Aval out = j.out_avals().at(0);
  if (j.outvars.size() != 1 || !out.shape.empty() || out.dtype != dt)
    throw TypeError(str("[reduce_window] the computation must return one ", ops::aval_str(scalar),
                        " scalar, got ", ops::avals_str(j.out_avals())));
  ops::Params params{{"jaxpr", ir::jaxpr_param(std::move(j))},
                     {"consts", ops::windowed::consts_param(std::move(const_avals))}};
  const ops::Params wp = ops::windowed::window_params(w);
  for (const auto& [key, value] : wp.items()) params.set(key, value);
  const ops::Arrays args{operand, init};
  return bind(Prim::ReduceWindow, args, params)[0];
}

Array select_and_scatter_add(const Array& source, const Array& operand, WindowSelect select,
                             const std::vector<int64_t>& window_dimensions,
                             const std::vector<int64_t>& window_strides,
                             const Padding::Pairs& padding) {
  const size_t nd = size_t(operand.ndim());
  Window w{window_dimensions, window_strides, padding, std::vector<int64_t>(nd, 1),
           std::vector<int64_t>(nd, 1)};
  ops::Params p = ops::windowed::window_params(w, /*dilations=*/false);
  p.set("select_prim", std::string(ops::windowed::select_name(select)));
  return bind1(Prim::SelectAndScatterAdd, {source, operand}, p);
}

Array select_and_gather_add(const Array& tangents, const Array& operand, WindowSelect select,
                            const std::vector<int64_t>& window_dimensions,
                            const std::vector<int64_t>& window_strides,
                            const Padding::Pairs& padding,
                            const std::vector<int64_t>& base_dilation,
                            const std::vector<int64_t>& window_dilation) {
  const size_t nd = size_t(operand.ndim());
  Window w{window_dimensions, window_strides, padding, ones_if_empty(base_dilation, nd),
           ones_if_empty(window_dilation, nd)};
  ops::Params p = ops::windowed::window_params(w);
  p.set("select_prim", std::string(ops::windowed::select_name(select)));
  return bind1(Prim::SelectAndGatherAdd, {tangents, operand}, p);
}

}  // namespace jx::lax
