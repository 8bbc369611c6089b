// Linear algebra (jax.lax.linalg): cholesky, triangular_solve, lu, qr, eigh, svd, eig. Each
// works on stacks of matrices (leading dims are batch dims) and runs on LAPACK
// (backend/cpu/linalg): float32/float64 and complex64/complex128.
// The jvp rules are JAX's (jax/_src/lax/linalg.py), with its conjugate transposes for
// complex; triangular_solve is the only one linear in an operand (b), so the only one
// transposed.
#include <algorithm>
#include <complex>
#include <limits>

#include "backend/cpu/linalg.h"
#include "jx/lax/linalg.h"
#include "ops/ad_rules.h"
#include "ops/batching.h"
#include "ops/common.h"
#include "transforms/bind.h"

namespace jx::ops {
namespace {

namespace cl = jx::cpu::linalg;

// ---- shape rules ----

struct Matrices {
  Shape batch;
  int64_t m = 0, n = 0;
};

Shape with(const Shape& batch, std::initializer_list<int64_t> tail) {
  Shape s = batch;
  for (int64_t d : tail) s.push_back(d);
  return s;
}

Matrices matrices(const char* op, const Aval& a, bool square) {
  const bool real = a.dtype == DType::Float32 || a.dtype == DType::Float64;
  const bool cplx = a.dtype == DType::Complex64 || a.dtype == DType::Complex128;
  if (!real && !cplx)
    throw DTypeError(str("[", op, "] supports float32, float64, complex64 and complex128 (LAPACK's types)",
                         ", got ", aval_str(a), "; convert with astype(float32) or astype(float64)"));
  if (a.shape.size() < 2)
    throw ShapeError(str("[", op, "] needs a stack of matrices (rank >= 2), got ", aval_str(a)));
  Matrices r;
  r.m = a.shape[a.shape.size() - 2];
  r.n = a.shape[a.shape.size() - 1];
  r.batch = Shape(a.shape.begin(), a.shape.end() - 2);
  if (square && r.m != r.n)
    throw ShapeError(str("[", op, "] needs square matrices in the last two dims, got ", aval_str(a)));
  const int64_t lapack_max = std::numeric_limits<int32_t>::max();
  if (r.m > lapack_max || r.n > lapack_max || r.m * r.n > lapack_max)
    throw ValueError(str("[", op, "] ", aval_str(a), " is too large for LAPACK's 32-bit indices"));
  return r;
}

Avals cholesky_abstract_eval(std::span<const Aval> in, const Params&) {
  matrices("cholesky", in[0], true);
  return {{in[0].shape, in[0].dtype}};
}

Avals triangular_solve_abstract_eval(std::span<const Aval> in, const Params& p) {
  const Aval &a = in[0], &b = in[1];
  Matrices ma = matrices("triangular_solve", a, true), mb = matrices("triangular_solve", b, false);
  const bool left = p.b("left_side");
  auto both = [&] { return str(aval_str(a), " and ", aval_str(b)); };
  if (a.dtype != b.dtype)
    throw DTypeError(str("[triangular_solve] a and b must have the same dtype, got ", both()));
  if (ma.batch != mb.batch)
    throw ShapeError(str("[triangular_solve] a and b must have the same batch dims, got ", both(),
                         "; broadcast them first"));
  if (ma.m != (left ? mb.m : mb.n))
    throw ShapeError(str("[triangular_solve] with left_side=", left ? "True" : "False", " a's size ",
                         ma.m, " must equal b's ", left ? "rows" : "columns", ", got ", both()));
  return {{b.shape, b.dtype}};
}

Avals lu_abstract_eval(std::span<const Aval> in, const Params&) {
  Matrices x = matrices("lu", in[0], false);
  return {{in[0].shape, in[0].dtype},
          {with(x.batch, {std::min(x.m, x.n)}), DType::Int32},
          {with(x.batch, {x.m}), DType::Int32}};
}

Avals qr_abstract_eval(std::span<const Aval> in, const Params& p) {
  Matrices x = matrices("qr", in[0], false);
  const int64_t qc = p.b("full_matrices") ? x.m : std::min(x.m, x.n);
  const DType t = in[0].dtype;
  return {{with(x.batch, {x.m, qc}), t}, {with(x.batch, {qc, x.n}), t}};
}

Avals eigh_abstract_eval(std::span<const Aval> in, const Params&) {
  Matrices x = matrices("eigh", in[0], true);
  return {{in[0].shape, in[0].dtype}, {with(x.batch, {x.n}), real_dtype(in[0].dtype)}};
}

// eig: eigenvalues, then the left and/or right eigenvectors asked for, all complex.
Avals eig_abstract_eval(std::span<const Aval> in, const Params& p) {
  Matrices x = matrices("eig", in[0], true);
  const DType c = complex_dtype(in[0].dtype);
  Avals out{{with(x.batch, {x.n}), c}};
  if (p.b("compute_left_eigenvectors")) out.push_back({in[0].shape, c});
  if (p.b("compute_right_eigenvectors")) out.push_back({in[0].shape, c});
  return out;
}

Avals svd_abstract_eval(std::span<const Aval> in, const Params& p) {
  Matrices x = matrices("svd", in[0], false);
  const DType t = in[0].dtype;
  const int64_t k = std::min(x.m, x.n);
  Avals out{{with(x.batch, {k}), real_dtype(t)}};
  if (p.b("compute_uv")) {
    const bool full = p.b("full_matrices");
    out.push_back({with(x.batch, {x.m, full ? x.m : k}), t});
    out.push_back({with(x.batch, {full ? x.n : k, x.n}), t});
  }
  return out;
}

// ---- kernels ----

template <class T>
const T* in_ptr(const Array& a) {
  return static_cast<const T*>(detail::impl_of(a).buffer->data());
}
template <class T>
T* out_ptr(const Array& a) {
  return detail::data<T>(a);
}
Matrices dims_of(const Array& a) {
  const Shape& s = a.shape();
  Matrices r;
  r.m = s[s.size() - 2];
  r.n = s[s.size() - 1];
  r.batch = Shape(s.begin(), s.end() - 2);
  return r;
}

template <class F>
void by_dtype(const Array& a, F&& f) {
  switch (a.dtype()) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Complex64: return f(std::complex<float>{});
    default: return f(std::complex<double>{});
  }
}

void cholesky_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  Matrices x = dims_of(in[0]);
  by_dtype(in[0], [&](auto t) {
    using T = decltype(t);
    cl::cholesky(in_ptr<T>(in[0]), out_ptr<T>(out[0]), x.batch.numel(), x.n, p.b("symmetrize_input"));
  });
}

void triangular_solve_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  Matrices b = dims_of(in[1]);
  by_dtype(in[1], [&](auto t) {
    using T = decltype(t);
    std::copy_n(in_ptr<T>(in[1]), in[1].size(), out_ptr<T>(out[0]));
    cl::triangular_solve(in_ptr<T>(in[0]), out_ptr<T>(out[0]), b.batch.numel(), b.m, b.n,
                         p.b("left_side"), p.b("lower"), p.b("transpose_a"), p.b("conjugate_a"),
                         p.b("unit_diagonal"));
  });
}

void lu_impl(std::span<const Array> in, std::span<Array> out, const Params&) {
  Matrices x = dims_of(in[0]);
  by_dtype(in[0], [&](auto t) {
    using T = decltype(t);
    std::copy_n(in_ptr<T>(in[0]), in[0].size(), out_ptr<T>(out[0]));
    cl::lu(out_ptr<T>(out[0]), x.batch.numel(), x.m, x.n, out_ptr<int32_t>(out[1]),
           out_ptr<int32_t>(out[2]));
  });
}

void qr_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  Matrices x = dims_of(in[0]);
  by_dtype(in[0], [&](auto t) {
    using T = decltype(t);
    cl::qr(in_ptr<T>(in[0]), x.batch.numel(), x.m, x.n, p.b("full_matrices"), out_ptr<T>(out[0]),
           out_ptr<T>(out[1]));
  });
}

void eigh_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  Matrices x = dims_of(in[0]);
  by_dtype(in[0], [&](auto t) {
    using T = decltype(t);
    cl::eigh(in_ptr<T>(in[0]), x.batch.numel(), x.n, p.b("lower"), p.b("symmetrize_input"),
             out_ptr<cl::Real<T>>(out[1]), out_ptr<T>(out[0]));
  });
}

void eig_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  Matrices x = dims_of(in[0]);
  const bool left = p.b("compute_left_eigenvectors"), right = p.b("compute_right_eigenvectors");
  by_dtype(in[0], [&](auto t) {
    using T = decltype(t);
    using C = std::complex<cl::Real<T>>;
    cl::eig(in_ptr<T>(in[0]), x.batch.numel(), x.n, left, right, out_ptr<C>(out[0]),
            left ? out_ptr<C>(out[1]) : nullptr, right ? out_ptr<C>(out[left ? 2 : 1]) : nullptr);
  });
}

void svd_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  Matrices x = dims_of(in[0]);
  const bool uv = p.b("compute_uv");
  by_dtype(in[0], [&](auto t) {
    using T = decltype(t);
    cl::svd(in_ptr<T>(in[0]), x.batch.numel(), x.m, x.n, p.b("full_matrices"),
            out_ptr<cl::Real<T>>(out[0]),
            uv ? out_ptr<T>(out[1]) : nullptr, uv ? out_ptr<T>(out[2]) : nullptr);
  });
}

// ---- helpers for the rules: matrix algebra over leading batch dims ----

Array mT(const Array& x) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < x.ndim(); ++i) perm.push_back(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return lax::transpose(x, perm);
}

Array mm(const Array& a, const Array& b) {
  lax::DotDimensionNumbers dn;
  const int64_t nd = a.ndim();
  for (int64_t i = 0; i + 2 < nd; ++i) {
    dn.lhs_batch.push_back(i);
    dn.rhs_batch.push_back(i);
  }
  dn.lhs_contracting = {nd - 1};
  dn.rhs_contracting = {nd - 2};
  return lax::dot_general(a, b, dn);
}

// A constant r x c matrix (leading size-1 dims up to `rank`) with value(i, j) in each entry.
template <class F>
Array matrix_const(int64_t r, int64_t c, DType t, int64_t rank, F value) {
  Array d = detail::empty_array({r, c}, DType::Float64, false);
  double* p = detail::data<double>(d);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) p[i * c + j] = value(i, j);
  Shape s(size_t(rank - 2), 1);
  s.push_back(r);
  s.push_back(c);
  return lax::reshape(lax::convert_element_type(d, t, false), s);
}

Array eye_like(const Array& x, int64_t n) {
  return matrix_const(n, n, x.dtype(), x.ndim(), [](int64_t i, int64_t j) { return i == j ? 1.0 : 0.0; });
}
// The entries of x on and below diagonal k (tril) or on and above it (triu); others zero.
Array tril(const Array& x, int64_t k = 0) {
  const Matrices d = dims_of(x);
  return lax::mul(x, matrix_const(d.m, d.n, x.dtype(), x.ndim(),
                                  [k](int64_t i, int64_t j) { return j - i <= k ? 1.0 : 0.0; }));
}
Array triu(const Array& x, int64_t k = 0) {
  const Matrices d = dims_of(x);
  return lax::mul(x, matrix_const(d.m, d.n, x.dtype(), x.ndim(),
                                  [k](int64_t i, int64_t j) { return j - i >= k ? 1.0 : 0.0; }));
}
// The diagonal of each square matrix: [..., n, n] -> [..., n].
Array diagonal(const Array& x) {
  return lax::reduce_sum(lax::mul(x, eye_like(x, dims_of(x).n)), {x.ndim() - 1});
}
// x[..., None, :] (row) and x[..., :, None] (col) of a stack of vectors.
Array as_row(const Array& v) {
  Shape s = v.shape();
  s.insert(s.size() - 1, 1);
  return lax::reshape(v, s);
}
Array as_col(const Array& v) {
  Shape s = v.shape();
  s.push_back(1);
  return lax::reshape(v, s);
}
Array cst(double v, const Array& like) { return ad_rules::constant(v, like); }

// The complex forms of the rules (JAX's _H where the real ones transpose). Each helper is
// the identity, or the plain transpose, on real arrays, so real results stay as they were.
bool cplx(const Array& x) { return is_complex(x.dtype()); }
Array mH(const Array& x) { return cplx(x) ? lax::conj(mT(x)) : mT(x); }
Array re(const Array& x) { return cplx(x) ? lax::real(x) : x; }
Array as(const Array& x, DType t) {
  return x.dtype() == t ? x : lax::convert_element_type(x, t, false);
}

struct SolveOpts {
  bool left = false, lower = false, transpose = false, conj = false, unit = false;
};
Params solve_params(SolveOpts o) {
  return {{"left_side", o.left}, {"lower", o.lower}, {"transpose_a", o.transpose},
          {"conjugate_a", o.conj}, {"unit_diagonal", o.unit}};
}
SolveOpts solve_opts(const Params& p) {
  return {p.b("left_side"), p.b("lower"), p.b("transpose_a"), p.b("conjugate_a"), p.b("unit_diagonal")};
}
Array tsolve(const Array& a, const Array& b, SolveOpts o) {
  o.conj = o.conj && cplx(a);  // as JAX's wrapper: no conjugate_a on real matrices
  return bind1(Prim::TriangularSolve, {a, b}, solve_params(o));
}

// ---- autodiff ----
using ad_rules::is_zero;

// The tangent of the Hermitian matrix cholesky and eigh factor: (dA + dA^H) / 2 when they
// symmetrize their input (JAX symmetrizes in the wrapper, with the same effect; jx does it
// in the kernel's copy, which saves a pass and a parallel region before LAPACK's own
// threads), else the triangle they read, mirrored (conjugated), with the diagonal's real
// part, the only part LAPACK reads of it. (JAX takes dA as it comes there, which agrees
// whenever dA is Hermitian.)
Array tangent_input(const Array& t, const Params& p, bool lower) {
  if (p.b("symmetrize_input")) return lax::mul(lax::add(t, mH(t)), cst(0.5, t));
  if (!cplx(t))
    return lower ? lax::add(tril(t), mT(tril(t, -1))) : lax::add(triu(t), mT(triu(t, 1)));
  Array off = lower ? tril(t, -1) : triu(t, 1);
  Array diag = lax::mul(as(lax::real(t), t.dtype()), eye_like(t, dims_of(t).n));
  return lax::add(lax::add(off, mH(off)), diag);
}

// Murray, "Differentiation of the Cholesky decomposition" (arXiv:1602.07527), as JAX:
// dL = L phi(L^-1 dA L^-H), phi taking the lower triangle with the diagonal halved.
Arrays cholesky_jvp(std::span<const Array>, std::span<const Array> out, std::span<const Array> t,
                    const Params& p) {
  if (is_zero(t[0])) return {Array()};
  const Array& L = out[0];
  Array dA = tangent_input(t[0], p, true);
  Array tmp = tsolve(L, dA, {.left = false, .lower = true, .transpose = true, .conj = true});
  Array inner = tsolve(L, tmp, {.left = true, .lower = true});
  const int64_t n = dims_of(L).n;
  Array phi = lax::mul(inner, matrix_const(n, n, L.dtype(), L.ndim(), [](int64_t i, int64_t j) {
                         return j < i ? 1.0 : (j == i ? 0.5 : 0.0);
                       }));
  return {mm(L, phi)};
}

// dX = -op(A)^-1 op(dA) X (left side) or -X op(dA) op(A)^-1 (right side), each product
// ordered the cheaper way; plus the solve of db.
Arrays triangular_solve_jvp(std::span<const Array> x, std::span<const Array> out,
                            std::span<const Array> t, const Params& p) {
  const Array &a = x[0], &ans = out[0];
  const SolveOpts o = solve_opts(p);
  Array result;
  if (!is_zero(t[1])) result = tsolve(a, t[1], o);
  if (!is_zero(t[0])) {
    const int64_t k = o.unit ? 1 : 0;
    Array ga = lax::neg(o.lower ? tril(t[0], -k) : triu(t[0], k));
    if (o.transpose) ga = mT(ga);
    if (o.conj && cplx(ga)) ga = lax::conj(ga);
    const Matrices d = dims_of(ans);
    Array da;
    if (o.left) da = d.m > d.n ? tsolve(a, mm(ga, ans), o) : mm(tsolve(a, ga, o), ans);
    else da = d.m < d.n ? tsolve(a, mm(ans, ga), o) : mm(ans, tsolve(a, ga, o));
    result = ad_rules::add_tangents(result, da);
  }
  return {result};
}

// b -> op(a)^-1 b has the plain transpose b -> op(a)^-T b: transpose_a flips and
// conjugate_a stays (transposes never conjugate, as JAX's).
Arrays triangular_solve_transpose(std::span<const Array> ct, std::span<const Array> in,
                                  std::span<const Aval>, std::span<const bool> linear,
                                  const Params& p) {
  if (linear[0])
    throw InternalError("[triangular_solve] is linear in b only; a must not be a linear input");
  if (is_zero(ct[0])) return {Array(), Array()};
  SolveOpts o = solve_opts(p);
  o.transpose = !o.transpose;
  return {Array(), tsolve(in[0], ct[0], o)};
}

// JAX's _lu_jvp_rule ("Differentiation of Matrix Functionals Using Triangular
// Factorization", F. R. de Hoog et al.), for any m x n.
Arrays lu_jvp(std::span<const Array>, std::span<const Array> out, std::span<const Array> t,
              const Params&) {
  if (is_zero(t[0])) return {Array(), Array(), Array()};
  const Array &lu = out[0], &perm = out[2];
  const Matrices d = dims_of(lu);
  const int64_t m = d.m, n = d.n, k = std::min(m, n), nd = lu.ndim();
  const DType dt = lu.dtype();
  // P dA: row i is row perm[i] of dA, as a one-hot matrix product.
  Shape iota_shape(size_t(nd - 2), 1);
  iota_shape.push_back(1);
  iota_shape.push_back(m);
  Array onehot = lax::convert_element_type(
      lax::eq(as_col(perm), lax::broadcasted_iota(DType::Int32, iota_shape, nd - 1)), dt, false);
  Array x = mm(onehot, t[0]);

  auto pad_dims = [&](const Array& v, int64_t rows_hi, int64_t cols_hi) {
    std::vector<lax::PadConfig> cfg(static_cast<size_t>(nd));
    cfg[size_t(nd - 2)].hi = rows_hi;
    cfg[size_t(nd - 1)].hi = cols_hi;
    return lax::pad(v, lax::convert_element_type(Array(0.0), dt, false), cfg);
  };
  std::vector<int64_t> start(size_t(nd), 0), limit(lu.shape().begin(), lu.shape().end());
  limit[size_t(nd - 1)] = k;
  Array l = lax::add(pad_dims(tril(lax::slice(lu, start, limit), -1), 0, m - k), eye_like(lu, m));
  limit[size_t(nd - 1)] = n;
  limit[size_t(nd - 2)] = k;
  Array u_eye = matrix_const(n, n, dt, nd, [k](int64_t i, int64_t j) { return i == j && i >= k ? 1.0 : 0.0; });
  Array u = lax::add(pad_dims(triu(lax::slice(lu, start, limit)), n - k, 0), u_eye);

  Array la = tsolve(l, x, {.left = true, .lower = true, .unit = true});
  Array lau = tsolve(u, la, {.left = false, .lower = false});
  Array lu_dot = lax::add(mm(l, tril(lau, -1)), mm(triu(lau), u));
  return {lu_dot, Array(), Array()};
}

// J. Townsend's QR derivative (j-towns.github.io/papers/qr-derivative.pdf), as JAX: for
// m >= n, reduced or square.
Arrays qr_jvp(std::span<const Array> x, std::span<const Array> out, std::span<const Array> t,
              const Params& p) {
  if (is_zero(t[0])) return {Array(), Array()};
  const Matrices d = dims_of(x[0]);
  if (d.m < d.n || (p.b("full_matrices") && d.m != d.n))
    throw ValueError(str("[qr] the derivative is implemented for m >= n with reduced matrices "
                         "(or square ones), as JAX's; got ", type_str(x[0].dtype(), x[0].shape()),
                         d.m < d.n ? "" : " with full_matrices=True; use full_matrices=False"));
  const Array &q = out[0], &r = out[1];
  Array dx_rinv = tsolve(r, t[0], {.left = false, .lower = false});
  Array qt_dx_rinv = mm(mH(q), dx_rinv);
  Array low = tril(qt_dx_rinv, -1);
  Array dom = lax::sub(low, mH(low));  // skew-Hermitian
  // For complex, Q^H dQ also has an imaginary diagonal, R's diagonal being real (JAX's
  // "correction necessary for complex inputs").
  if (cplx(q))
    dom = lax::add(dom, lax::mul(eye_like(dom, d.n), lax::sub(qt_dx_rinv, as(lax::real(qt_dx_rinv),
                                                                            q.dtype()))));
  Array dq = lax::add(mm(q, lax::sub(dom, qt_dx_rinv)), dx_rinv);
  Array dr = mm(lax::sub(qt_dx_rinv, dom), r);
  return {dq, dr};
}

// dV = V (F o V^H dA V), dw = re diag(V^H dA V), F_ij = 1/(w_j - w_i) off the diagonal.
// Equal eigenvalues make F infinite: the eigenvectors' derivative is then undefined (JAX's
// too).
Arrays eigh_jvp(std::span<const Array>, std::span<const Array> out, std::span<const Array> t,
                const Params& p) {
  if (is_zero(t[0])) return {Array(), Array()};
  const Array &v = out[0], &w = out[1];
  const int64_t n = dims_of(v).n;
  Array eye = matrix_const(n, n, w.dtype(), v.ndim(), [](int64_t i, int64_t j) { return i == j ? 1.0 : 0.0; });
  Array F = lax::sub(lax::integer_pow(lax::add(eye, lax::sub(as_row(w), as_col(w))), -1), eye);
  Array vt_da_v = mm(mm(mH(v), tangent_input(t[0], p, p.b("lower"))), v);
  return {mm(v, lax::mul(as(F, v.dtype()), vt_da_v)), re(diagonal(vt_da_v))};
}

// JAX's _svd_jvp_rule (reduced matrices; full ones only when square, where they agree).
// Equal singular values make F infinite, zero ones make 1/s infinite: U's and V's
// derivatives are then undefined, as in JAX; the singular values' stays finite.
Arrays svd_jvp(std::span<const Array> x, std::span<const Array> out, std::span<const Array> t,
               const Params& p) {
  const bool uv = p.b("compute_uv");
  if (is_zero(t[0])) return Arrays(uv ? 3 : 1);
  const Matrices d = dims_of(x[0]);
  if (uv && p.b("full_matrices") && d.m != d.n)
    throw ValueError(str("[svd] the derivative of U and V^T is implemented for reduced matrices "
                         "(and square ones), as JAX's; got ", type_str(x[0].dtype(), x[0].shape()),
                         " with full_matrices=True; use full_matrices=False"));
  Array s, U, Vt;
  if (uv) {
    s = out[0], U = out[1], Vt = out[2];
  } else {
    Arrays o = bind(Prim::Svd, x, {{"full_matrices", false}, {"compute_uv", true}});
    s = o[0], U = o[1], Vt = o[2];
  }
  const Array& dA = t[0];
  const DType dt = U.dtype();
  Array Ut = mH(U), V = mH(Vt);
  Array s_row = as_row(s), s_col = as_col(s);
  Array dS = mm(mm(Ut, dA), V);
  Array ds = re(diagonal(dS));
  if (!uv) return {ds};
  const int64_t k = dims_of(dS).n;
  Array eye = matrix_const(k, k, s.dtype(), U.ndim(), [](int64_t i, int64_t j) { return i == j ? 1.0 : 0.0; });
  Array s_diffs = lax::mul(lax::add(s_row, s_col), lax::sub(s_row, s_col));
  Array F = as(lax::sub(lax::div(cst(1, s_diffs), lax::add(s_diffs, eye)), eye), dt);
  Array dSS = lax::mul(as(s_row, dt), dS), SdS = lax::mul(as(s_col, dt), dS);
  Array s_zeros = lax::convert_element_type(lax::eq(s, cst(0, s)), s.dtype(), false);
  Array s_inv = lax::sub(lax::div(cst(1, s), lax::add(s, s_zeros)), s_zeros);
  Array s_inv_mat = as(lax::mul(as_row(s_inv), eye), dt);
  // Zero for real matrices (dS - dS^T has a zero diagonal); for complex, the imaginary
  // diagonal of U^H dA V, which moves U's phases against V's.
  Array dUdV_diag = lax::mul(lax::mul(cst(0.5, dS), lax::sub(dS, mH(dS))), s_inv_mat);
  Array dU = mm(U, lax::add(lax::mul(F, lax::add(dSS, mH(dSS))), dUdV_diag));
  Array dV = mm(V, lax::mul(F, lax::add(SdS, mH(SdS))));
  if (d.m > d.n) {
    Array dAV = mm(dA, V);
    dU = lax::add(dU, lax::div(lax::sub(dAV, mm(U, mm(Ut, dAV))), as(s_row, dt)));
  }
  if (d.n > d.m) {
    Array dAHU = mm(mH(dA), U);
    dV = lax::add(dV, lax::div(lax::sub(dAHU, mm(V, mm(Vt, dAHU))), as(s_row, dt)));
  }
  return {ds, dU, mH(dV)};
}

// JAX differentiates eig's eigenvalues only (eigenvectors raise). For a diagonalizable x
// with right eigenvectors v_k and left ones u_k, dw_k = u_k^H dx v_k / (u_k^H v_k): the
// diagonal of V^-1 dx V (JAX's formula), with V^-1's rows u_k^H / (u_k^H v_k), so no
// complex solve is needed. Infinite at a defective (non-diagonalizable) x, as in JAX.
Arrays eig_jvp(std::span<const Array> x, std::span<const Array>, std::span<const Array> t,
               const Params& p) {
  if (ad_rules::is_zero(t[0])) return Arrays(1 + p.b("compute_left_eigenvectors") +
                                             p.b("compute_right_eigenvectors"));
  if (p.b("compute_left_eigenvectors") || p.b("compute_right_eigenvectors"))
    throw ValueError("[eig] the derivatives of eigenvectors are not implemented (as in JAX), only "
                     "of eigenvalues: call eig(x, false, false) (jnp::linalg::eigvals) under "
                     "grad, or use eigh for a symmetric matrix");
  const Array& dx = t[0];
  auto [w, vl, vr] = lax::linalg::eig(x[0], true, true);
  const DType c = w.dtype();
  Array uh = lax::conj(vl);  // u_k^H as column k, conjugated
  const int64_t rows = x[0].ndim() - 2;  // reduce over the row index i
  Array num = lax::reduce_sum(lax::mul(uh, mm(lax::convert_element_type(dx, c), vr)), {rows});
  Array den = lax::reduce_sum(lax::mul(uh, vr), {rows});
  return {lax::div(num, den)};
}

// ---- batching: the primitives take leading batch dims, so the batch dim goes first ----
using batching::BatchResult;

template <Prim P>
BatchResult front_batch(std::span<const Array> in, std::span<const int> dims, const Params& p) {
  const int64_t size = batching::axis_size(in, dims);
  Arrays args;
  for (size_t i = 0; i < in.size(); ++i) args.push_back(batching::bdim_to_front(in[i], dims[i], size));
  Arrays outs = bind(P, args, p);
  return {outs, std::vector<int>(outs.size(), 0)};
}

template <Prim P>
void reg(AbstractEvalRule ae, ImplRule impl, JvpRule jvp) {
  PrimitiveInfo& pi = mutable_info(P);
  pi.abstract_eval = ae;
  pi.impl = impl;
  pi.jvp = jvp;
  pi.batch = front_batch<P>;
  pi.not_linear = true;
}

}  // namespace

void register_linalg() {
  reg<Prim::Cholesky>(cholesky_abstract_eval, cholesky_impl, cholesky_jvp);
  reg<Prim::TriangularSolve>(triangular_solve_abstract_eval, triangular_solve_impl,
                             triangular_solve_jvp);
  mutable_info(Prim::TriangularSolve).not_linear = false;
  mutable_info(Prim::TriangularSolve).transpose = triangular_solve_transpose;
  reg<Prim::Lu>(lu_abstract_eval, lu_impl, lu_jvp);
  reg<Prim::Qr>(qr_abstract_eval, qr_impl, qr_jvp);
  reg<Prim::Eigh>(eigh_abstract_eval, eigh_impl, eigh_jvp);
  reg<Prim::Svd>(svd_abstract_eval, svd_impl, svd_jvp);
  reg<Prim::Eig>(eig_abstract_eval, eig_impl, eig_jvp);
}

}  // namespace jx::ops
