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

void check_differentiable_inputs(const char* op, const std::vector<Array>& leaves,
                                 bool holomorphic, bool allow_complex) {
  for (size_t i = 0; i < leaves.size(); ++i) {
    const DType t = leaves[i].dtype();
    if (holomorphic && !is_complex(t))
      throw DTypeError(str("[", op, "] with jx::holomorphic requires complex inputs, but input "
                           "leaf ", i, " has dtype ", t, "; convert it with "
                           "astype(jx::complex64)"));
    if (!allow_complex && is_complex(t))
      throw DTypeError(str("[", op, "] requires real-valued inputs, but input leaf ", i,
                           " has dtype ", t, "; for holomorphic differentiation pass "
                           "jx::holomorphic, otherwise use jx::jacrev or jx::jvp directly"));
    if (!is_inexact(t))
      throw DTypeError(str("[", op, "] requires floating-point inputs, but input leaf ", i,
                           " has dtype ", leaves[i].dtype(),
                           "; convert it with astype(jx::float32), or pass integer data as a "
                           "non-differentiated argument"));
  }
}

void check_scalar_output(const char* op, const Array& out, bool holomorphic) {
  if (holomorphic && (out.ndim() != 0 || !is_complex(out.dtype())))
    throw ValueError(str("[", op, "] with jx::holomorphic requires a complex scalar output, "
                         "got ", type_str(out.dtype(), out.shape())));
  if (!holomorphic && out.ndim() == 0 && is_complex(out.dtype()))
    throw ValueError(str("[", op, "] requires a real scalar output, got ",
                         type_str(out.dtype(), out.shape()),
                         "; for a holomorphic function pass jx::holomorphic; for a "
                         "non-holomorphic one take jnp::real / jnp::abs of it, or use jx::vjp"));
  if (holomorphic) return;
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

// Moves the leading axis of `a` (the basis index) behind the others.
Array leading_axis_last(const Array& a) {
  std::vector<int64_t> perm;
  for (int64_t d = 1; d < a.ndim(); ++d) perm.push_back(d);
  perm.push_back(0);
  return lax::transpose(a, perm);
}

}  // namespace

namespace ad {

// Rows [off, off + n) of the [total, ...] array `a`, as [n, ...].
static Array rows(const Array& a, int64_t off, int64_t n) { return lax::slice_in_dim(a, off, off + n, 1, 0); }

// The basis of the concatenated, flattened `parts`, split back into them: part j of the
// result is [total, shape_j...] with ones where the row's index falls inside part j.
static std::vector<Array> split_basis(const std::vector<std::pair<Shape, DType>>& parts) {
  int64_t total = 0;
  for (const auto& [s, t] : parts) total += s.numel();
  std::vector<Array> out;
  int64_t off = 0;
  for (const auto& [s, t] : parts) {
    const int64_t n = s.numel();
    Array eye = lax::eq(lax::broadcasted_iota(DType::Int32, {total, n}, 0),
                        lax::add(lax::broadcasted_iota(DType::Int32, {total, n}, 1),
                                 lax::broadcast_in_dim(
                                     lax::convert_element_type(Array(int32_t(off)), DType::Int32, false),
                                     {total, n}, {})));
    Shape stacked = s;
    stacked.insert(0, total);
    out.push_back(lax::reshape(lax::convert_element_type(eye, t, false), stacked));
    off += n;
  }
  return out;
}

Jacobian jacobian_flat(const char* op, const FlatFn& f, const std::vector<Array>& xs, bool forward,
                       const size_t& num_diff, bool holomorphic) {
  check_differentiable_inputs(op, xs, holomorphic, /*allow_complex=*/!forward || holomorphic);
  LinearFn lin = linearize_flat(f, xs);
  Jacobian J;
  J.outs = lin.primals_out();
  for (size_t i = 0; i < std::min(num_diff, J.outs.size()); ++i) {
    const DType t = J.outs[i].dtype();
    if (holomorphic && !is_complex(t))
      throw DTypeError(str("[", op, "] with jx::holomorphic requires complex outputs, but "
                           "output leaf ", i, " has dtype ", t));
    if (!holomorphic && !forward && is_complex(t))
      throw DTypeError(str("[", op, "] requires real-valued outputs, but output leaf ", i,
                           " has dtype ", t, "; for holomorphic differentiation pass "
                           "jx::holomorphic, otherwise use jx::vjp directly"));
  }
  const size_t n_all = J.outs.size(), m = std::min(num_diff, n_all), n = xs.size();
  J.blocks.assign(m, std::vector<Array>(n));
  int64_t n_in = 0, n_out = 0;
  for (const Array& x : xs) n_in += x.size();
  for (size_t i = 0; i < m; ++i) n_out += J.outs[i].size();
  auto full_shape = [&](size_t i, size_t j) {
    Shape s = J.outs[i].shape();
    for (int64_t d : xs[j].shape()) s.push_back(d);
    return s;
  };
  if ((forward ? n_in : n_out) == 0) {  // nothing to push or pull: all blocks are empty
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < n; ++j)
        J.blocks[i][j] = lax::broadcast_in_dim(
            lax::convert_element_type(Array(0), forward ? J.outs[i].dtype() : xs[j].dtype(), false),
            full_shape(i, j), {});
    return J;
  }
  auto all_zero = [](size_t k) { return std::vector<int>(k, 0); };
  if (forward) {
    // Push every input basis vector at once: column block j of output i.
    std::vector<std::pair<Shape, DType>> parts;
    for (const Array& x : xs) parts.emplace_back(x.shape(), x.dtype());
    std::vector<Array> cols = tr::vmap_flat(
        [&](const std::vector<Array>& t) {
          std::vector<Array> o = lin.apply(t);
          o.resize(m);  // aux outputs are not differentiated
          return o;
        },
        split_basis(parts), std::vector<int>(n, 0), all_zero);
    for (size_t i = 0; i < m; ++i) {
      int64_t off = 0;
      for (size_t j = 0; j < n; ++j) {
        J.blocks[i][j] = lax::reshape(leading_axis_last(rows(cols[i], off, xs[j].size())), full_shape(i, j));
        off += xs[j].size();
      }
    }
  } else {
    // Pull every output basis vector at once: row block i of input j.
    std::vector<std::pair<Shape, DType>> parts;
    for (size_t i = 0; i < m; ++i) parts.emplace_back(J.outs[i].shape(), J.outs[i].dtype());
    std::vector<Array> rws = tr::vmap_flat(
        [&](const std::vector<Array>& c) {
          std::vector<Array> cts = c;
          cts.resize(n_all);  // no cotangent (zero) for aux outputs
          return lin.transpose(cts);
        },
        split_basis(parts), std::vector<int>(m, 0), all_zero);
    for (size_t j = 0; j < n; ++j) {
      int64_t off = 0;
      for (size_t i = 0; i < m; ++i) {
        J.blocks[i][j] = lax::reshape(rows(rws[j], off, J.outs[i].size()), full_shape(i, j));
        off += J.outs[i].size();
      }
    }
  }
  return J;
}

}  // namespace ad

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
