// jnp.linalg: det, slogdet, inv, solve, cholesky, qr, eigh, eigvalsh, svd, svdvals, pinv,
// lstsq (eager, through backend/cpu/linalg's float64 routines), and matrix_power,
// matrix_rank, norm composed from jnp ops as in jax/_src/numpy/linalg.py.
//
// There are no linalg primitives yet (ops/primitives.def), so the decompositions need
// concrete arrays: under a transformation they throw ConcretizationError.
#include <cmath>
#include <limits>

#include "backend/cpu/linalg.h"
#include "core/array_impl.h"
#include "jx/numpy.h"
#include "numpy/promote.h"
#include "ops/common.h"
#include "support/str.h"

namespace jx::numpy::linalg {

namespace cl = jx::cpu::linalg;

namespace {

std::string t_str(const Array& a) { return type_str(a.dtype(), a.shape()); }

// A stack of matrices converted to float64 for the kernels, with the dtype to return.
struct Stack {
  Array x;  // float64, contiguous
  Shape batch;
  int64_t count = 1, m = 0, n = 0;
  DType dtype = DType::Float32;
  const double* data() const { return jx::detail::data<double>(x); }
};

DType inexact(DType t) { return is_floating(t) ? t : DType::Float32; }

Array require_concrete(const char* op, const Array& a) {
  if (!a.is_concrete())
    throw ConcretizationError(str("[linalg.", op, "] runs eagerly and needs a concrete array, got a "
                                  "traced ", t_str(a), "; jx has no ", op,
                                  " primitive yet, so call it outside jit/grad/vmap"));
  return a;
}

Stack stack_of(const char* op, const Array& a, bool square) {
  require_concrete(op, a);
  if (a.ndim() < 2)
    throw ShapeError(str("[linalg.", op, "] needs an array of rank >= 2 (a stack of matrices), got ",
                         t_str(a)));
  Stack s;
  s.m = a.shape()[size_t(a.ndim() - 2)];
  s.n = a.shape()[size_t(a.ndim() - 1)];
  if (square && s.m != s.n)
    throw ShapeError(str("[linalg.", op, "] needs square matrices in the last two dims, got ",
                         t_str(a)));
  s.batch = Shape(a.shape().begin(), a.shape().end() - 2);
  s.count = s.batch.numel();
  s.dtype = inexact(a.dtype());
  s.x = lax::convert_element_type(a, DType::Float64, false);
  return s;
}

Shape with(const Shape& batch, std::initializer_list<int64_t> tail) {
  Shape s = batch;
  for (int64_t d : tail) s.push_back(d);
  return s;
}

Array f64(const Shape& s) { return jx::detail::empty_array(s, DType::Float64, false); }
double* ptr(const Array& a) { return jx::detail::data<double>(a); }
Array back(const Array& x, DType t) { return lax::convert_element_type(x, t, false); }

// (a + a^T) / 2, or one triangle mirrored.
std::vector<double> symmetric(const double* a, int64_t n, char tri) {
  std::vector<double> s(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double v;
      if (tri == 'S') v = (a[i * n + j] + a[j * n + i]) / 2;
      else if (tri == 'L') v = i >= j ? a[i * n + j] : a[j * n + i];
      else v = i <= j ? a[i * n + j] : a[j * n + i];
      s[size_t(i * n + j)] = v;
    }
  return s;
}

double eps_of(DType t) { return finfo(t).eps; }

}  // namespace

Array det(const Array& a) {
  Stack s = stack_of("det", a, true);
  Array out = f64(s.batch);
  for (int64_t b = 0; b < s.count; ++b) ptr(out)[b] = cl::det(s.data() + b * s.n * s.n, s.n);
  return back(out, s.dtype);
}

SlogdetResult slogdet(const Array& a) {
  Stack s = stack_of("slogdet", a, true);
  Array sign = f64(s.batch), logabs = f64(s.batch);
  for (int64_t b = 0; b < s.count; ++b)
    cl::slogdet(s.data() + b * s.n * s.n, s.n, ptr(sign) + b, ptr(logabs) + b);
  return {back(sign, s.dtype), back(logabs, s.dtype)};
}

Array solve(const Array& a0, const Array& b0) {
  auto ab = detail::promote_inexact({a0, b0});
  Array a = ab[0], b = ab[1];
  require_concrete("solve", b);
  Stack probe = stack_of("solve", a, true);
  const int64_t n = probe.n;
  const bool vec = b.ndim() == 1;
  if (!vec && b.ndim() < 2)
    throw ShapeError(str("[linalg.solve] b must be a vector or a stack of matrices, got ", t_str(b0)));
  const int64_t bn = b.shape()[size_t(b.ndim() - (vec ? 1 : 2))];
  if (bn != n)
    throw ShapeError(str("[linalg.solve] a is ", t_str(a0), " but b is ", t_str(b0), "; b needs ", n,
                         " rows (its ", vec ? "only" : "second-to-last", " dim) to match a"));
  Shape bbatch = vec ? Shape{} : Shape(b.shape().begin(), b.shape().end() - 2);
  Shape batch = detail::broadcast_shapes("linalg.solve", {probe.batch, bbatch});
  const int64_t k = vec ? 1 : b.shape()[size_t(b.ndim() - 1)];
  Array A = broadcast_to(a, with(batch, {n, n}));
  Array B = vec ? broadcast_to(lax::reshape(b, Shape{n, 1}), with(batch, {n, 1}))
                : broadcast_to(b, with(batch, {n, k}));
  Stack sa = stack_of("solve", A, true);
  Array bx = lax::convert_element_type(B, DType::Float64, false);
  Array out = f64(with(batch, {n, k}));
  for (int64_t i = 0; i < sa.count; ++i)
    cl::solve(sa.data() + i * n * n, ptr(bx) + i * n * k, n, k, ptr(out) + i * n * k);
  Array r = back(out, sa.dtype);
  return vec ? lax::reshape(r, with(batch, {n})) : r;
}

Array inv(const Array& a) {
  Stack s = stack_of("inv", a, true);
  Array out = f64(with(s.batch, {s.n, s.n}));
  std::vector<double> eye(static_cast<size_t>(s.n * s.n), 0.0);
  for (int64_t i = 0; i < s.n; ++i) eye[size_t(i * s.n + i)] = 1;
  for (int64_t b = 0; b < s.count; ++b)
    cl::solve(s.data() + b * s.n * s.n, eye.data(), s.n, s.n, ptr(out) + b * s.n * s.n);
  return back(out, s.dtype);
}

Array cholesky(const Array& a, bool upper) {
  Stack s = stack_of("cholesky", a, true);
  const int64_t n = s.n;
  Array out = f64(with(s.batch, {n, n}));
  for (int64_t b = 0; b < s.count; ++b) {
    auto sym = symmetric(s.data() + b * n * n, n, 'S');
    double* l = ptr(out) + b * n * n;
    cl::cholesky(sym.data(), n, l);
    if (upper)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = i + 1; j < n; ++j) std::swap(l[i * n + j], l[j * n + i]);
  }
  return back(out, s.dtype);
}

QRResult qr(const Array& a, const std::string& mode) {
  if (mode != "reduced" && mode != "complete" && mode != "r")
    throw ValueError(str("[linalg.qr] unknown mode \"", mode,
                         "\"; use \"reduced\", \"complete\" or \"r\""));
  Stack s = stack_of("qr", a, false);
  const int64_t m = s.m, n = s.n, k = std::min(m, n);
  const int64_t qc = mode == "complete" ? m : k;
  Array q = f64(with(s.batch, {m, qc})), r = f64(with(s.batch, {qc, n}));
  for (int64_t b = 0; b < s.count; ++b)
    cl::qr(s.data() + b * m * n, m, n, mode == "r" ? nullptr : ptr(q) + b * m * qc, qc,
           ptr(r) + b * qc * n);
  QRResult res;
  res.R = back(r, s.dtype);
  if (mode != "r") res.Q = back(q, s.dtype);
  return res;
}

EighResult eigh(const Array& a, const std::string& UPLO, bool symmetrize_input) {
  if (UPLO != "L" && UPLO != "U")
    throw ValueError(str("[linalg.eigh] UPLO must be \"L\" or \"U\", got \"", UPLO, "\""));
  Stack s = stack_of("eigh", a, true);
  const int64_t n = s.n;
  Array w = f64(with(s.batch, {n})), v = f64(with(s.batch, {n, n}));
  for (int64_t b = 0; b < s.count; ++b) {
    auto sym = symmetric(s.data() + b * n * n, n, symmetrize_input ? 'S' : UPLO[0]);
    cl::eigh(sym.data(), n, ptr(w) + b * n, ptr(v) + b * n * n);
  }
  return {back(w, s.dtype), back(v, s.dtype)};
}

Array eigvalsh(const Array& a, const std::string& UPLO) { return eigh(a, UPLO).eigenvalues; }

SVDResult svd(const Array& a, bool full_matrices) {
  Stack s = stack_of("svd", a, false);
  const int64_t m = s.m, n = s.n, k = std::min(m, n);
  const int64_t uc = full_matrices ? m : k, vr = full_matrices ? n : k;
  Array u = f64(with(s.batch, {m, uc})), sv = f64(with(s.batch, {k})), vt = f64(with(s.batch, {vr, n}));
  for (int64_t b = 0; b < s.count; ++b)
    cl::svd(s.data() + b * m * n, m, n, full_matrices, ptr(u) + b * m * uc, ptr(sv) + b * k,
            ptr(vt) + b * vr * n);
  return {back(u, s.dtype), back(sv, s.dtype), back(vt, s.dtype)};
}

Array svdvals(const Array& a) {
  Stack s = stack_of("svdvals", a, false);
  const int64_t k = std::min(s.m, s.n);
  Array sv = f64(with(s.batch, {k}));
  for (int64_t b = 0; b < s.count; ++b)
    cl::svd(s.data() + b * s.m * s.n, s.m, s.n, false, nullptr, ptr(sv) + b * k, nullptr);
  return back(sv, s.dtype);
}

Array pinv(const Array& a, std::optional<double> rtol) {
  Stack s = stack_of("pinv", a, false);
  const int64_t m = s.m, n = s.n, k = std::min(m, n);
  const double rt = rtol ? *rtol : 10.0 * double(std::max(m, n)) * eps_of(s.dtype);
  Array out = f64(with(s.batch, {n, m}));
  std::vector<double> u(static_cast<size_t>(m * k)), sv(static_cast<size_t>(k)),
      vt(static_cast<size_t>(k * n));
  for (int64_t b = 0; b < s.count; ++b) {
    double* o = ptr(out) + b * n * m;
    std::fill(o, o + n * m, 0.0);
    if (k == 0) continue;
    cl::svd(s.data() + b * m * n, m, n, false, u.data(), sv.data(), vt.data());
    const double cutoff = rt * sv[0];
    for (int64_t j = 0; j < k; ++j) {
      if (!(sv[size_t(j)] > cutoff)) continue;
      const double inv_s = 1 / sv[size_t(j)];
      for (int64_t i = 0; i < n; ++i)
        for (int64_t c = 0; c < m; ++c)
          o[i * m + c] += vt[size_t(j * n + i)] * inv_s * u[size_t(c * k + j)];
    }
  }
  return back(out, s.dtype);
}

LstsqResult lstsq(const Array& a0, const Array& b0, std::optional<double> rcond) {
  auto ab = detail::promote_inexact({a0, b0});
  Array a = ab[0], b = ab[1];
  if (a.ndim() != 2)
    throw ShapeError(str("[linalg.lstsq] a must be a matrix, got ", t_str(a0)));
  if (b.ndim() != 1 && b.ndim() != 2)
    throw ShapeError(str("[linalg.lstsq] b must be a vector or a matrix, got ", t_str(b0)));
  const int64_t m = a.shape()[0], n = a.shape()[1], k = std::min(m, n);
  if (b.shape()[0] != m)
    throw ShapeError(str("[linalg.lstsq] a is ", t_str(a0), " but b is ", t_str(b0),
                         "; b needs ", m, " rows"));
  const bool vec = b.ndim() == 1;
  const int64_t nb = vec ? 1 : b.shape()[1];
  Stack sa = stack_of("lstsq", a, false);
  Array bx = lax::convert_element_type(require_concrete("lstsq", b), DType::Float64, false);
  double rc = rcond ? (*rcond < 0 ? eps_of(sa.dtype) : *rcond) : eps_of(sa.dtype) * double(std::max(m, n));
  std::vector<double> u(static_cast<size_t>(m * k)), vt(static_cast<size_t>(k * n));
  Array sv = f64(Shape{k}), x = f64(Shape{n, nb}), resid = f64(Shape{nb});
  int32_t rank = 0;
  std::fill(ptr(x), ptr(x) + n * nb, 0.0);
  if (k > 0) {
    cl::svd(sa.data(), m, n, false, u.data(), ptr(sv), vt.data());
    for (int64_t j = 0; j < k; ++j) {
      if (!(ptr(sv)[j] >= rc * ptr(sv)[0])) continue;
      ++rank;
      for (int64_t c = 0; c < nb; ++c) {
        double utb = 0;
        for (int64_t i = 0; i < m; ++i) utb += u[size_t(i * k + j)] * ptr(bx)[i * nb + c];
        utb /= ptr(sv)[j];
        for (int64_t i = 0; i < n; ++i) ptr(x)[i * nb + c] += vt[size_t(j * n + i)] * utb;
      }
    }
  }
  for (int64_t c = 0; c < nb; ++c) {  // JAX always returns the residuals (zeros when exact)
    double r2 = 0;
    for (int64_t i = 0; i < m; ++i) {
      double e = ptr(bx)[i * nb + c];
      for (int64_t j = 0; j < n; ++j) e -= sa.data()[i * n + j] * ptr(x)[j * nb + c];
      r2 += e * e;
    }
    ptr(resid)[c] = r2;
  }
  Array xr = back(x, sa.dtype);
  if (vec) xr = lax::reshape(xr, Shape{n});
  return {xr, back(resid, sa.dtype), array<int32_t>(std::vector<int32_t>{rank}, Shape{}),
          back(sv, sa.dtype)};
}

Array matrix_power(const Array& a, int64_t n) {
  if (a.ndim() < 2 || a.shape()[size_t(a.ndim() - 1)] != a.shape()[size_t(a.ndim() - 2)])
    throw ShapeError(str("[linalg.matrix_power] needs a stack of square matrices, got ", t_str(a)));
  if (n == 0) return broadcast_to(eye(a.shape()[size_t(a.ndim() - 1)], std::nullopt, 0, a.dtype()), a.shape());
  Array x = a;
  if (n < 0) {
    x = inv(a);
    n = -n;
  }
  Array z, result;
  while (n > 0) {  // binary powering, as jnp
    z = z.valid() ? matmul(z, z) : x;
    if (n % 2) result = result.valid() ? matmul(result, z) : z;
    n /= 2;
  }
  return result;
}

Array matrix_rank(const Array& a, std::optional<double> rtol) {
  Array x = detail::promote_inexact({a})[0];
  if (x.ndim() < 2) return any(x != 0).astype(DType::Int32);
  Array s = svdvals(x);
  const int64_t mn = std::max(x.shape()[size_t(x.ndim() - 1)], x.shape()[size_t(x.ndim() - 2)]);
  const double rt = rtol ? *rtol : double(mn) * eps_of(s.dtype());
  Array tol = max(s, -1, true) * Array(rt);
  ReduceOptions o;
  o.dtype = DType::Int32;
  return sum(s > tol, -1, o);
}

Array norm(const Array& x0, const NormOrd& ord, Axes axis, bool keepdims) {
  Array x = detail::promote_inexact({x0})[0];
  const int64_t nd = x.ndim();
  if (!axis.axes) {
    if (!ord.p && ord.name.empty()) return sqrt(sum(x * x, none, keepdims));
    std::vector<int64_t> all;
    for (int64_t i = 0; i < nd; ++i) all.push_back(i);
    axis = Axes(all);
  }
  auto ax = ops::canonical_axes("linalg.norm", *axis.axes, nd);
  const double inf = std::numeric_limits<double>::infinity();
  ReduceOptions keep;
  keep.keepdims = keepdims;
  if (ax.size() == 1) {
    if (!ord.name.empty())
      throw ValueError(str("[linalg.norm] invalid order \"", ord.name, "\" for a vector norm"));
    const double p = ord.p.value_or(2.0);
    Axes a1(ax[0]);
    if (p == 2) return sqrt(sum(x * x, a1, keepdims));
    if (p == inf) {
      ReduceOptions o = keep;
      o.initial = zeros({}, x.dtype());
      return max(abs(x), a1, o);
    }
    if (p == -inf) return min(abs(x), a1, keepdims);
    if (p == 0) {
      ReduceOptions o = keep;
      o.dtype = x.dtype();
      return sum(x != 0, a1, o);
    }
    if (p == 1) return sum(abs(x), a1, keepdims);
    Array pa = scalar(p, x.dtype());
    Array pinv_ = scalar(1.0 / p, x.dtype());
    return power(sum(power(abs(x), pa), a1, keepdims), pinv_);
  }
  if (ax.size() != 2)
    throw ValueError(str("[linalg.norm] improper number of axes ", list_str(*axis.axes),
                         "; pass one axis for a vector norm or two for a matrix norm"));
  int64_t row = ax[0], col = ax[1];
  const std::string& nm = ord.name;
  if ((!ord.p && nm.empty()) || nm == "fro" || nm == "f")
    return sqrt(sum(x * x, Axes(std::vector<int64_t>{row, col}), keepdims));
  if (!nm.empty() && nm != "nuc")
    throw ValueError(str("[linalg.norm] invalid order \"", nm, "\" for a matrix norm"));
  ReduceOptions init0 = keep;
  init0.initial = zeros({}, x.dtype());
  if (ord.p && (*ord.p == 1 || *ord.p == -1)) {
    if (!keepdims && col > row) col -= 1;
    Array s = sum(abs(x), row, keepdims);
    return *ord.p == 1 ? max(s, col, init0) : min(s, col, keepdims);
  }
  if (ord.p && (*ord.p == inf || *ord.p == -inf)) {
    if (!keepdims && row > col) row -= 1;
    Array s = sum(abs(x), col, keepdims);
    return *ord.p == inf ? max(s, row, init0) : min(s, row, keepdims);
  }
  if (nm == "nuc" || (ord.p && (*ord.p == 2 || *ord.p == -2))) {
    Array m = moveaxis(x, std::vector<int64_t>{row, col}, std::vector<int64_t>{-2, -1});
    Array s = svdvals(m);
    Array y = nm == "nuc" ? sum(s, -1) : (*ord.p == 2 ? max(s, -1) : min(s, -1));
    if (keepdims) {
      std::vector<int64_t> dims{std::min(row, col), std::max(row, col)};
      y = expand_dims(y, dims);
    }
    return y;
  }
  throw ValueError(str("[linalg.norm] invalid order ", *ord.p, " for a matrix norm"));
}

}  // namespace jx::numpy::linalg
