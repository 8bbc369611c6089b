// The flat functions behind include/jx/transforms.h.
#include <ostream>

#include "jx/lax.h"
#include "jx/transforms.h"
#include "ops/common.h"
#include "transforms/ad.h"
#include "transforms/batching.h"
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

// The standard basis of arrays shaped like `shape`, stacked: [n, shape...] with n =
// numel(shape) (JAX's _std_basis).
Array std_basis(const Shape& shape, DType dtype) {
  const int64_t n = shape.numel();
  Shape stacked = shape;
  stacked.insert(0, n);
  Array eye = lax::eq(lax::broadcasted_iota(DType::Int32, {n, n}, 0),
                      lax::broadcasted_iota(DType::Int32, {n, n}, 1));
  return lax::reshape(lax::convert_element_type(eye, dtype, false), stacked);
}

// Moves the leading axis of `a` (the basis index) behind the others.
Array leading_axis_last(const Array& a) {
  std::vector<int64_t> perm;
  for (int64_t d = 1; d < a.ndim(); ++d) perm.push_back(d);
  perm.push_back(0);
  return lax::transpose(a, perm);
}

}  // namespace

// As JAX: one linearization, then the linear map vmapped over the standard basis
// (jacfwd pushes every input basis vector at once, jacrev pulls every output one).
Array jacfwd_flat(const std::function<Array(const Array&)>& f, const Array& x) {
  ad::check_differentiable_inputs("jacfwd", {x});
  ad::FlatFn flat = [&](const std::vector<Array>& xs) { return std::vector<Array>{f(xs[0])}; };
  ad::LinearFn lin = ad::linearize_flat(flat, {x});
  Shape full = lin.primals_out()[0].shape();
  for (auto d : x.shape()) full.push_back(d);
  if (x.size() == 0 || lin.primals_out()[0].size() == 0)
    return lax::broadcast_in_dim(lax::convert_element_type(Array(0), lin.primals_out()[0].dtype(), false),
                                 full, {});
  Array cols = tr::vmap_flat([&](const std::vector<Array>& t) { return lin.apply(t); }, {std_basis(x.shape(), x.dtype())},
                             {0}, [](size_t n) { return std::vector<int>(n, 0); })[0];
  return lax::reshape(leading_axis_last(cols), full);  // [out..., in...]
}

Array jacrev_flat(const std::function<Array(const Array&)>& f, const Array& x) {
  ad::check_differentiable_inputs("jacrev", {x});
  ad::FlatFn flat = [&](const std::vector<Array>& xs) { return std::vector<Array>{f(xs[0])}; };
  ad::LinearFn lin = ad::linearize_flat(flat, {x});
  const Array& out = lin.primals_out()[0];
  Shape full = out.shape();
  for (auto d : x.shape()) full.push_back(d);
  if (out.size() == 0 || x.size() == 0)
    return lax::broadcast_in_dim(lax::convert_element_type(Array(0), x.dtype(), false), full, {});
  // [out..., in...] directly: the basis index is the output element, leading.
  Array rows = tr::vmap_flat([&](const std::vector<Array>& c) { return lin.transpose(c); }, {std_basis(out.shape(), out.dtype())},
                             {0}, [](size_t n) { return std::vector<int>(n, 0); })[0];
  return lax::reshape(rows, full);
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
