// The flat functions behind include/jx/transforms.h.
#include <ostream>

#include "jx/lax.h"
#include "jx/transforms.h"
#include "ops/common.h"
#include "transforms/ad.h"
#include "transforms/bind.h"
#include "transforms/staging.h"

namespace jx {
namespace ad {

std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const FlatFn& f,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents) {
  return tr::jvp_flat(f, primals, tangents);
}

struct LinearFn::Impl {
  tr::Linearized lin;
};

const std::vector<Array>& LinearFn::primals_out() const { return impl_->lin.primals_out; }
std::vector<Array> LinearFn::apply(const std::vector<Array>& t) const {
  return tr::linear_apply(impl_->lin, t);
}
std::vector<Array> LinearFn::transpose(const std::vector<Array>& c) const {
  return tr::linear_transpose(impl_->lin, c);
}
size_t LinearFn::num_inputs() const { return impl_->lin.in_avals.size(); }
std::vector<std::pair<Shape, DType>> LinearFn::out_types() const {
  std::vector<std::pair<Shape, DType>> r;
  for (const auto& a : impl_->lin.out_avals) r.emplace_back(a.shape, a.dtype);
  return r;
}

LinearFn linearize_flat(const FlatFn& f, const std::vector<Array>& primals) {
  auto impl = std::make_shared<LinearFn::Impl>();
  impl->lin = tr::linearize_flat(f, primals);
  return LinearFn(std::move(impl));
}

void check_differentiable_inputs(const char* op, const std::vector<Array>& leaves) {
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!is_floating(leaves[i].dtype()))
      throw DTypeError(str("[", op, "] requires floating-point inputs, but input leaf ", i,
                           " has dtype ", leaves[i].dtype(),
                           "; convert it with astype(jx::float32), or pass integer data as a "
                           "non-differentiated argument"));
  }
}

void check_scalar_output(const char* op, const Array& out) {
  if (out.ndim() != 0 || !is_floating(out.dtype()))
    throw ValueError(str("[", op, "] requires a real scalar output, got ",
                         type_str(out.dtype(), out.shape()),
                         "; reduce it (e.g. jnp::sum) or use jx::vjp / jx::jacrev for "
                         "non-scalar outputs"));
}

Array ones_like(const Array& x) {
  return lax::broadcast_in_dim(lax::convert_element_type(Array(1), x.dtype(), x.weak_type()),
                               x.shape(), {});
}

}  // namespace ad

Array stop_gradient(const Array& x) { return bind1(ops::Prim::StopGradient, {x}); }

namespace {

// e_i for i in [0, n), reshaped to `shape`.
Array basis(int64_t i, const Shape& shape, DType dtype) {
  std::vector<double> v(static_cast<size_t>(shape.numel()), 0.0);
  v[size_t(i)] = 1.0;
  Array flat = detail::empty_array(shape, DType::Float64, false);
  std::copy(v.begin(), v.end(), detail::data<double>(flat));
  return lax::convert_element_type(flat, dtype, false);
}

Array stack_jacobian(const std::vector<Array>& cols, const Shape& lead, const Shape& trail,
                     bool cols_are_inputs) {
  // cols[k] has shape `lead` (jacfwd: outputs for input k) or `trail` (jacrev: input grads
  // for output k); the Jacobian is out.shape + in.shape.
  Shape piece = cols_are_inputs ? lead : trail;
  std::vector<Array> parts;
  for (const Array& c : cols) {
    Shape s = piece;
    s.insert(cols_are_inputs ? s.size() : 0, 1);
    parts.push_back(lax::reshape(c, s));
  }
  Shape full = lead;
  for (auto d : trail) full.push_back(d);
  if (parts.empty()) return lax::broadcast_in_dim(lax::convert_element_type(Array(0), DType::Float32, false), full, {});
  Array j = lax::concatenate(parts, cols_are_inputs ? int64_t(piece.size()) : 0);
  return lax::reshape(j, full);
}

}  // namespace

Array jacfwd_flat(const std::function<Array(const Array&)>& f, const Array& x) {
  ad::check_differentiable_inputs("jacfwd", {x});
  ad::FlatFn flat = [&](const std::vector<Array>& xs) { return std::vector<Array>{f(xs[0])}; };
  // One linearization, then one forward (J . e_k) per input element.
  ad::LinearFn lin = ad::linearize_flat(flat, {x});
  Shape out_shape = lin.primals_out()[0].shape();
  std::vector<Array> cols;
  for (int64_t k = 0; k < x.size(); ++k)
    cols.push_back(lin.apply({basis(k, x.shape(), x.dtype())})[0]);
  Shape in_flat{x.size()};
  Array j = stack_jacobian(cols, out_shape, in_flat, true);
  Shape full = out_shape;
  for (auto d : x.shape()) full.push_back(d);
  return lax::reshape(j, full);
}

Array jacrev_flat(const std::function<Array(const Array&)>& f, const Array& x) {
  ad::check_differentiable_inputs("jacrev", {x});
  ad::FlatFn flat = [&](const std::vector<Array>& xs) { return std::vector<Array>{f(xs[0])}; };
  ad::LinearFn lin = ad::linearize_flat(flat, {x});
  const Array& out = lin.primals_out()[0];
  std::vector<Array> rows;
  for (int64_t k = 0; k < out.size(); ++k)
    rows.push_back(lin.transpose({basis(k, out.shape(), out.dtype())})[0]);
  Shape out_flat{out.size()};
  Array j = stack_jacobian(rows, out_flat, x.shape(), false);
  Shape full = out.shape();
  for (auto d : x.shape()) full.push_back(d);
  return lax::reshape(j, full);
}

struct ClosedJaxpr::Impl {
  ir::Jaxpr jaxpr;
};

std::string ClosedJaxpr::str() const { return ir::to_string(impl_->jaxpr); }
std::ostream& operator<<(std::ostream& os, const ClosedJaxpr& j) { return os << j.str(); }

namespace ad {
ClosedJaxpr make_jaxpr_flat(const FlatFn& f, const std::vector<Array>& example_args) {
  auto trace = std::make_shared<tr::StagingTrace>(tr::current_trace(), /*stage_all=*/true);
  std::vector<Array> in;
  for (const Array& a : example_args) in.push_back(trace->new_arg(ops::aval_of(a)));
  std::vector<Array> outs;
  {
    tr::CurrentTraceGuard g(trace.get());
    outs = f(in);
  }
  auto impl = std::make_shared<ClosedJaxpr::Impl>();
  impl->jaxpr = trace->finish(outs);
  trace->deactivate();
  ir::verify(impl->jaxpr);
  return ClosedJaxpr(std::move(impl));
}
}  // namespace ad

}  // namespace jx
