// jnp.linalg: det, slogdet, inv, solve, cholesky, qr, eigh, eigvalsh, svd, svdvals, pinv,
// lstsq on the linear-algebra primitives (jx::lax::linalg, over LAPACK), and matrix_power,
// matrix_rank, norm composed from jnp ops, as jax/_src/numpy/linalg.py. All of them trace,
// so they work under jit, grad and vmap.
#include <cmath>
#include <limits>

#include "jx/custom_derivatives.h"
#include "jx/lax/linalg.h"
#include "jx/numpy.h"
#include "numpy/promote.h"
#include "ops/common.h"
#include "support/str.h"

namespace jx::numpy::linalg {

namespace ll = jx::lax::linalg;

namespace {

std::string t_str(const Array& a) { return type_str(a.dtype(), a.shape()); }

// LAPACK computes in float32, float64, complex64 or complex128: integers and bools promote
// to float32 (jnp's inexact promotion), float16 and bfloat16 compute in float32 and return
// in their type.
DType result_dtype(DType t) { return is_inexact(t) ? t : DType::Float32; }
DType compute_dtype(DType t) { return t == DType::Float64 || is_complex(t) ? t : DType::Float32; }

int64_t rows(const Array& a) { return a.shape()[size_t(a.ndim() - 2)]; }
int64_t cols(const Array& a) { return a.shape()[size_t(a.ndim() - 1)]; }

// a checked as a stack of matrices and converted to its compute dtype.
Array matrices(const char* op, const Array& a, bool square) {
  if (a.ndim() < 2)
    throw ShapeError(str("[linalg.", op, "] needs an array of rank >= 2 (a stack of matrices), got ",
                         t_str(a)));
  if (square && rows(a) != cols(a))
    throw ShapeError(str("[linalg.", op, "] needs square matrices in the last two dims, got ",
                         t_str(a)));
  return a.astype(compute_dtype(result_dtype(a.dtype())));
}

Array back(const Array& x, const Array& like) { return x.astype(result_dtype(like.dtype())); }
// For the real results of complex input (eigenvalues, singular values, log|det|).
Array back_real(const Array& x, const Array& like) {
  return x.astype(real_dtype(result_dtype(like.dtype())));
}
Array mT(const Array& a) { return swapaxes(a, -1, -2); }
// The conjugate transpose (the transpose for real a).
Array mH(const Array& a) { return is_complex(a.dtype()) ? conj(mT(a)) : mT(a); }
Array diag(const Array& a) { return diagonal(a, 0, -2, -1); }
double eps_of(DType t) { return finfo(t).eps; }

Shape with(const Shape& batch, std::initializer_list<int64_t> tail) {
  Shape s = batch;
  for (int64_t d : tail) s.push_back(d);
  return s;
}
Shape batch_of(const Array& a) { return Shape(a.shape().begin(), a.shape().end() - 2); }

// The number of row swaps in LU's pivots, per matrix.
Array swap_count(const Array& pivots) {
  return count_nonzero(pivots != arange(0, pivots.shape().back(), 1, DType::Int32), -1);
}

// x = a^-1 b for a stack of LU factors (JAX's lu_solve): permute b's rows, then the two
// triangular solves. b: [..., n, k] with a's batch dims.
Array lu_solve(const Array& lu, const Array& permutation, const Array& b) {
  // The permutation is in bounds, so clip equals jnp's default fill here, without the
  // bounds test per row.
  Array rows_of_b = take_along_axis(b, broadcast_to(expand_dims(permutation, -1), b.shape()), -2,
                                    TakeMode::clip);
  Array y = ll::triangular_solve(lu, rows_of_b, {.left_side = true, .lower = true, .unit_diagonal = true});
  return ll::triangular_solve(lu, y, {.left_side = true, .lower = false});
}

}  // namespace

// For complex a, the sign is the phase prod(d / |d|) times the pivots' sign, and
// logabsdet is real, as JAX's.
SlogdetResult slogdet(const Array& a0) {
  Array a = matrices("slogdet", a0, true);
  auto [lu, pivots, perm] = ll::lu(a);
  Array d = diag(lu);
  Array is_zero = any(d == 0, -1);
  const bool cplx = is_complex(a.dtype());
  Array parity = cplx ? swap_count(pivots) : swap_count(pivots) + count_nonzero(d < 0, -1);
  Array one = ones({}, a.dtype());
  Array sign = where(parity % 2 == 0, one, -one);
  if (cplx) sign = sign * prod(d / abs(d).astype(a.dtype()), -1);
  sign = where(is_zero, zeros({}, a.dtype()), sign);
  const DType rt = real_dtype(a.dtype());
  Array logdet = where(is_zero, full({}, Array(-std::numeric_limits<double>::infinity()), rt),
                       sum(log(abs(d)), -1));
  return {back(sign, a0), back_real(logdet, a0)};
}

// The product of U's diagonal with the pivots' sign: exact zeros for singular matrices
// (exp(logdet) would not give them). Differentiable where a is invertible.
namespace {

Array det_value(const Array& a) {
  auto [lu, pivots, perm] = ll::lu(a);
  Array sign = where(swap_count(pivots) % 2 == 0, ones({}, a.dtype()), -ones({}, a.dtype()));
  return sign * prod(diag(lu), -1);
}

// JAX's _cofactor_solve: det(a) and adj(a) b = det(a) a^-1 b (b: a's shape), finite where a
// is singular. With P a = L U and p = det(U11) * sign the determinant without U's last
// pivot u, det(a) = p u; the last pivot of U is replaced by 1 / p and the first n - 1 rows of
// L^-1 P b are scaled by det(a), so the back substitution gives det(a) U^-1 L^-1 P b without
// dividing by u. Where the first n - 1 pivots hold a zero (rank < n - 1) the adjugate is
// zero, and so is the result.
std::pair<Array, Array> cofactor_solve(const Array& a, const Array& b) {
  const int64_t n = rows(a);
  auto [lu, pivots, perm] = ll::lu(a);
  Array sign = where(swap_count(pivots) % 2 == 0, ones({}, a.dtype()), -ones({}, a.dtype()));
  Array partial = cumprod(diag(lu), -1) * expand_dims(sign, -1);  // [..., n]
  Array full = take(partial, Array(int32_t(n - 1)), -1), head = take(partial, Array(int32_t(n - 2)), -1);
  Array corner = (arange(0, n, 1, DType::Int32) == int32_t(n - 1));
  corner = logical_and(expand_dims(corner, -1), expand_dims(corner, 0));  // [n, n], true at (n-1, n-1)
  Array inv_head = ones({}, a.dtype()) / head;
  lu = where(corner, expand_dims(expand_dims(inv_head, -1), -1), lu);
  Array rank_low = logical_not(isfinite(inv_head));  // a zero among the first n - 1 pivots
  Array low = expand_dims(expand_dims(rank_low, -1), -1);
  Array x = where(low, zeros({}, b.dtype()), b);
  x = take_along_axis(x, broadcast_to(expand_dims(perm, -1), x.shape()), -2, TakeMode::clip);
  x = ll::triangular_solve(lu, x, {.left_side = true, .lower = true, .unit_diagonal = true});
  Array scale = where(arange(0, n, 1, DType::Int32) == int32_t(n - 1), ones({}, a.dtype()),
                      expand_dims(full, -1));  // [..., n]: det(a) on the first n - 1 rows
  x = x * expand_dims(scale, -1);
  x = ll::triangular_solve(lu, x, {.left_side = true, .lower = false});
  return {full, where(low, zeros({}, x.dtype()), x)};
}

}  // namespace

// JAX's custom jvp: d det(a) = tr(adj(a) da), through the cofactor solve above, so the
// derivative is finite (the adjugate) at singular matrices too, where differentiating the
// LU would divide by the zero pivot.
Array det(const Array& a0) {
  static const auto with_rule = jx::custom_jvp(det_value).defjvp(
      [](const std::tuple<Array>& primals, const std::tuple<Array>& tangents) {
        const Array& a = std::get<0>(primals);
        const Array& da = std::get<0>(tangents);
        const int64_t n = rows(a);
        if (n < 2) {  // 1 x 1: det(a) = a, and 0 x 0: det = 1 with no tangent
          if (n == 0) return std::pair(det_value(a), zeros(batch_of(a), a.dtype()));
          return std::pair(squeeze(a, std::vector<int64_t>{-2, -1}), squeeze(da, std::vector<int64_t>{-2, -1}));
        }
        auto [y, z] = cofactor_solve(a, da);
        return std::pair(y, trace(z, 0, -2, -1));
      });
  return back(with_rule(matrices("det", a0, true)), a0);
}

Array solve(const Array& a0, const Array& b0) {
  auto ab = detail::promote_inexact({a0, b0});
  Array a = matrices("solve", ab[0], true), b = ab[1].astype(a.dtype());
  const int64_t n = rows(a);
  const bool vec = b.ndim() == 1;
  if (!vec && b.ndim() < 2)
    throw ShapeError(str("[linalg.solve] b must be a vector or a stack of matrices, got ", t_str(b0)));
  const int64_t bn = b.shape()[size_t(b.ndim() - (vec ? 1 : 2))];
  if (bn != n)
    throw ShapeError(str("[linalg.solve] a is ", t_str(a0), " but b is ", t_str(b0), "; b needs ", n,
                         " rows (its ", vec ? "only" : "second-to-last", " dim) to match a"));
  Shape bbatch = vec ? Shape{} : batch_of(b);
  Shape batch = detail::broadcast_shapes("linalg.solve", {batch_of(a), bbatch});
  const int64_t k = vec ? 1 : cols(b);
  Array A = broadcast_to(a, with(batch, {n, n}));
  Array B = vec ? broadcast_to(reshape(b, {n, 1}), with(batch, {n, 1})) : broadcast_to(b, with(batch, {n, k}));
  auto [lu, pivots, perm] = ll::lu(A);
  Array x = back(lu_solve(lu, perm, B), ab[0]);
  return vec ? reshape(x, with(batch, {n})) : x;
}

Array inv(const Array& a0) {
  Array a = matrices("inv", a0, true);
  const int64_t n = rows(a);
  auto [lu, pivots, perm] = ll::lu(a);
  return back(lu_solve(lu, perm, broadcast_to(eye(n, std::nullopt, 0, a.dtype()), a.shape())), a0);
}

// upper: U = L^H, as jnp.
Array cholesky(const Array& a0, bool upper) {
  Array l = ll::cholesky(matrices("cholesky", a0, true));
  return back(upper ? mH(l) : l, a0);
}

QRResult qr(const Array& a0, const std::string& mode) {
  if (mode != "reduced" && mode != "complete" && mode != "r")
    throw ValueError(str("[linalg.qr] unknown mode \"", mode,
                         "\"; use \"reduced\", \"complete\" or \"r\""));
  auto [q, r] = ll::qr(matrices("qr", a0, false), mode == "complete");
  QRResult res;
  res.R = back(r, a0);
  if (mode != "r") res.Q = back(q, a0);
  return res;
}

EighResult eigh(const Array& a0, const std::string& UPLO, bool symmetrize_input) {
  if (UPLO != "L" && UPLO != "U")
    throw ValueError(str("[linalg.eigh] UPLO must be \"L\" or \"U\", got \"", UPLO, "\""));
  auto [v, w] = ll::eigh(matrices("eigh", a0, true), UPLO == "L", symmetrize_input);
  return {back_real(w, a0), back(v, a0)};
}

Array eigvalsh(const Array& a, const std::string& UPLO) { return eigh(a, UPLO).eigenvalues; }

EigResult eig(const Array& a) {
  auto r = ll::eig(matrices("eig", a, true), false, true);
  return {r.w, r.vr};
}
Array eigvals(const Array& a) { return ll::eig(matrices("eigvals", a, true), false, false).w; }

SVDResult svd(const Array& a0, bool full_matrices) {
  auto [u, s, vh] = ll::svd(matrices("svd", a0, false), full_matrices);
  return {back(u, a0), back_real(s, a0), back(vh, a0)};
}

Array svdvals(const Array& a0) {
  return back_real(ll::svd(matrices("svdvals", a0, false), false, false).s, a0);
}

// As JAX: singular values at or below rtol * the largest count as zero. a+ = V S^-1 U^H.
namespace {
Array pinv_value(const Array& a, double rt) {
  auto [u, s, vh] = ll::svd(a, false);
  Array cutoff = full({}, Array(rt), s.dtype()) * lax::slice_in_dim(s, 0, 1, 1, s.ndim() - 1);
  Array s_safe = where(s > cutoff, s, full({}, Array(std::numeric_limits<double>::infinity()), s.dtype()));
  return matmul(mH(vh), mH(u) / expand_dims(s_safe, -1).astype(a.dtype()));
}
}  // namespace

// JAX's custom jvp (Golub and Pereyra 1973), exact wherever the rank is locally constant:
// dp = -p da p + p p^H da^H (I - a p) + (I - p a) da^H p^H p, grouped by the smaller
// dimension as JAX's. Unlike the SVD's rule, it divides by no singular value or difference
// of two, which a rank-deficient matrix has zero.
Array pinv(const Array& a0, std::optional<double> rtol) {
  Array a = matrices("pinv", a0, false);
  const int64_t m = rows(a), n = cols(a);
  if (std::min(m, n) == 0) return back(zeros(with(batch_of(a), {n, m}), a.dtype()), a0);
  const double rt = rtol ? *rtol : 10.0 * double(std::max(m, n)) * eps_of(result_dtype(a0.dtype()));
  auto value = [rt](const Array& x) { return pinv_value(x, rt); };
  auto with_rule = jx::custom_jvp(value).defjvp(
      [rt, m, n](const std::tuple<Array>& primals, const std::tuple<Array>& tangents) {
        const Array& x = std::get<0>(primals);
        const Array& dx = std::get<0>(tangents);
        Array p = pinv_value(x, rt), dxh = mH(dx), ph = mH(p);
        Array dp;
        if (m >= n) {
          Array sp = matmul(matmul(p, ph), dxh), tp = matmul(matmul(dxh, ph), p);  // n x m
          dp = -matmul(matmul(p, dx), p) + sp - matmul(matmul(sp, x), p) + tp - matmul(matmul(p, x), tp);
        } else {
          Array sp = matmul(p, matmul(ph, dxh)), tp = matmul(dxh, matmul(ph, p));
          dp = -matmul(p, matmul(dx, p)) + sp - matmul(sp, matmul(x, p)) + tp - matmul(p, matmul(x, tp));
        }
        return std::pair(p, dp);
      });
  return back(with_rule(a), a0);
}

LstsqResult lstsq(const Array& a0, const Array& b0, std::optional<double> rcond) {
  auto ab = detail::promote_inexact({a0, b0});
  if (ab[0].ndim() != 2)
    throw ShapeError(str("[linalg.lstsq] a must be a matrix, got ", t_str(a0)));
  if (ab[1].ndim() != 1 && ab[1].ndim() != 2)
    throw ShapeError(str("[linalg.lstsq] b must be a vector or a matrix, got ", t_str(b0)));
  Array a = matrices("lstsq", ab[0], false), b = ab[1].astype(a.dtype());
  const int64_t m = rows(a), n = cols(a), k = std::min(m, n);
  if (b.shape()[0] != m)
    throw ShapeError(str("[linalg.lstsq] a is ", t_str(a0), " but b is ", t_str(b0),
                         "; b needs ", m, " rows"));
  const bool vec = b.ndim() == 1;
  if (vec) b = reshape(b, {m, 1});
  const DType rt = result_dtype(ab[0].dtype());
  const double rc = rcond ? (*rcond < 0 ? eps_of(rt) : *rcond) : eps_of(rt) * double(std::max(m, n));
  auto [u, s, vt] = ll::svd(a, false);
  const DType st = s.dtype();
  Array x = zeros({n, b.shape()[1]}, a.dtype());
  Array rank = zeros({}, DType::Int32);
  if (k > 0) {
    Array mask = s >= full({}, Array(rc), st) * lax::slice_in_dim(s, 0, 1);
    ReduceOptions o;
    o.dtype = DType::Int32;
    rank = sum(mask, none, o);
    Array s_inv = where(mask, ones({}, st) / where(mask, s, ones({}, st)), zeros({}, st));
    x = matmul(mH(vt), expand_dims(s_inv, -1).astype(a.dtype()) * matmul(mH(u), b));
  }
  Array r = b - matmul(a, x);
  // JAX always returns the residuals (zeros when exact), |r|^2 summed: real.
  Array resid = is_complex(r.dtype()) ? sum(real(r * conj(r)), 0) : sum(r * r, 0);
  if (vec) x = reshape(x, {n});
  return {back(x, ab[0]), back_real(resid, ab[0]), rank, back_real(s, ab[0])};
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

// Complex x: |x|^2 as real(x conj(x)), abs elsewhere, and a real result, as jnp.
Array norm(const Array& x0, const NormOrd& ord, Axes axis, bool keepdims) {
  Array x = detail::promote_inexact({x0})[0];
  const int64_t nd = x.ndim();
  const DType rt = real_dtype(x.dtype());
  const Array x2 = is_complex(x.dtype()) ? real(x * conj(x)) : x * x;
  if (!axis.axes) {
    if (!ord.p && ord.name.empty()) return sqrt(sum(x2, none, keepdims));
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
    if (p == 2) return sqrt(sum(x2, a1, keepdims));
    if (p == inf) {
      ReduceOptions o = keep;
      o.initial = zeros({}, rt);
      return max(abs(x), a1, o);
    }
    if (p == -inf) return min(abs(x), a1, keepdims);
    if (p == 0) {
      ReduceOptions o = keep;
      o.dtype = rt;
      return sum(x != 0, a1, o);
    }
    if (p == 1) return sum(abs(x), a1, keepdims);
    Array pa = scalar(p, rt);
    Array pinv_ = scalar(1.0 / p, rt);
    return power(sum(power(abs(x), pa), a1, keepdims), pinv_);
  }
  if (ax.size() != 2)
    throw ValueError(str("[linalg.norm] improper number of axes ", list_str(*axis.axes),
                         "; pass one axis for a vector norm or two for a matrix norm"));
  int64_t row = ax[0], col = ax[1];
  const std::string& nm = ord.name;
  if ((!ord.p && nm.empty()) || nm == "fro" || nm == "f")
    return sqrt(sum(x2, Axes(std::vector<int64_t>{row, col}), keepdims));
  if (!nm.empty() && nm != "nuc")
    throw ValueError(str("[linalg.norm] invalid order \"", nm, "\" for a matrix norm"));
  ReduceOptions init0 = keep;
  init0.initial = zeros({}, rt);
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
