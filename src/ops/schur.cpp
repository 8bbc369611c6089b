// schur (jax.lax.linalg.schur): x = vs t vs^H for stacks of square matrices, real or complex,
// over LAPACK's gees (backend/cpu/schur). As in JAX it has no derivative rule, and
// eigenvalues are not reordered (JAX's sort_eig_vals/select_callable are not built).
#include <complex>
#include <limits>

#include "backend/cpu/schur.h"
#include "ops/batching.h"
#include "ops/common.h"
#include "transforms/bind.h"

namespace jx::ops {
namespace {

Avals schur_abstract_eval(std::span<const Aval> in, const Params& p) {
  const Aval& a = in[0];
  if (!is_inexact(a.dtype) || a.dtype == DType::Float16 || a.dtype == DType::BFloat16)
    throw DTypeError(str("[schur] supports float32, float64, complex64 and complex128 (LAPACK's types), got ",
                         aval_str(a), "; convert with astype(float32) or astype(float64)"));
  const size_t r = a.shape.size();
  if (r < 2 || a.shape[r - 1] != a.shape[r - 2])
    throw ShapeError(str("[schur] needs a stack of square matrices in the last two dims, got ", aval_str(a)));
  if (a.shape[r - 1] > std::numeric_limits<int32_t>::max() / std::max<int64_t>(a.shape[r - 1], 1))
    throw ValueError(str("[schur] ", aval_str(a), " is too large for LAPACK's 32-bit indices"));
  Avals out{{a.shape, a.dtype}};
  if (p.b("compute_schur_vectors")) out.push_back({a.shape, a.dtype});
  return out;
}

void schur_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const Shape& s = in[0].shape();
  const int64_t n = s.back(), count = n == 0 ? 0 : in[0].size() / (n * n);
  const bool vectors = p.b("compute_schur_vectors");
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* a = static_cast<const T*>(detail::impl_of(in[0]).buffer->data());
    cpu::linalg::schur(a, count, n, detail::data<T>(out[0]), vectors ? detail::data<T>(out[1]) : nullptr);
  };
  switch (in[0].dtype()) {
    case DType::Float32: return run(float{});
    case DType::Float64: return run(double{});
    case DType::Complex64: return run(std::complex<float>{});
    default: return run(std::complex<double>{});
  }
}

// JAX defines no derivative for schur; a rule that says so names the alternatives.
Arrays schur_jvp(std::span<const Array>, std::span<const Array>, std::span<const Array>, const Params&) {
  throw ValueError("[schur] has no derivative (as in JAX); for differentiable eigenvalues use "
                   "lax::linalg::eig(x, false, false) or, for symmetric / Hermitian x, eigh");
}

// The kernel takes leading batch dims: the mapped operand's batch dim moves to the front.
batching::BatchResult schur_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  Array x = batching::bdim_to_front(in[0], dims[0], batching::axis_size(in, dims));
  Arrays outs = bind(Prim::Schur, {&x, 1}, p);
  return {outs, std::vector<int>(outs.size(), 0)};
}

}  // namespace

void register_schur() {
  PrimitiveInfo& pi = mutable_info(Prim::Schur);
  pi.abstract_eval = schur_abstract_eval;
  pi.impl = schur_impl;
  pi.batch = schur_batch;
  pi.jvp = schur_jvp;
  pi.not_linear = true;
}

}  // namespace jx::ops
