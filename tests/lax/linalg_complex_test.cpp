// The linear-algebra primitives on complex64 and complex128: the defining identities (with
// ^H the conjugate transpose), values against NumPy (tests/golden/gen_linalg_complex.py),
// check_grads through every primitive and through jnp.linalg, vmap against a loop, jit
// against eager, and the dtypes of the results.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "support/str.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"
#include "transforms/vmap_testing.h"

namespace {

#include "golden/linalg_complex_golden.inc"

namespace jnp = jx::numpy;
namespace lax = jx::lax;
namespace ll = jx::lax::linalg;
namespace la = jx::numpy::linalg;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::check_grads;
using jx::testing::expect_close;
using jx::testing::expect_error;
using jx::testing::rand_f64;
using Arrays = std::vector<Array>;

const DType kTypes[] = {DType::Complex64, DType::Complex128};

// Tolerances for results of order one: complex64 rounds at 6e-8, complex128 at 1e-16.
double tol(DType t) { return t == DType::Complex64 ? 2e-5 : 1e-12; }
void close(const Array& a, const Array& b, double t, const std::string& what) {
  expect_close(a, b, t, t, what);
}

Array cmat(const std::vector<C>& v, const Shape& s, DType t) { return jnp::array(v, s).astype(t); }
// A random complex array, both parts in [-1, 1).
Array crand(const Shape& s, unsigned seed, DType t = DType::Complex128) {
  return lax::complex(rand_f64(s, seed), rand_f64(s, seed + 500)).astype(t);
}
Array mT(const Array& a) { return jnp::swapaxes(a, -1, -2); }
Array mH(const Array& a) { return jnp::conj(mT(a)); }
Array eye_like(const Array& a) {
  const int64_t n = a.shape()[size_t(a.ndim() - 1)];
  return jnp::broadcast_to(jnp::eye(n, std::nullopt, 0, a.dtype()), a.shape());
}
// A well-conditioned Hermitian positive-definite stack: x x^H + n I.
Array hpd(const Array& x) {
  return jnp::matmul(x, mH(x)) + Array(double(x.shape().back())) * eye_like(x);
}
Array zeros_like(const Array& a) { return jnp::zeros(a.shape(), a.dtype()); }
std::string name(DType t) { return jx::dtype_name(t); }

// ---- dtypes and identities ----

TEST(LaxLinalgComplex, ResultDtypes) {
  for (DType t : kTypes) {
    const DType r = jx::real_dtype(t);
    Array a = crand({3, 3}, 1, t);
    auto [v, w] = ll::eigh(hpd(a));
    EXPECT_EQ(v.dtype(), t);
    EXPECT_EQ(w.dtype(), r) << "eigh's eigenvalues are real";
    auto [u, s, vh] = ll::svd(a);
    EXPECT_EQ(s.dtype(), r) << "singular values are real";
    EXPECT_EQ(u.dtype(), t);
    EXPECT_EQ(vh.dtype(), t);
    EXPECT_EQ(ll::svd(a, false, false).s.dtype(), r);
    auto [lu, piv, perm] = ll::lu(a);
    EXPECT_EQ(lu.dtype(), t);
    EXPECT_EQ(piv.dtype(), DType::Int32);
    EXPECT_EQ(ll::cholesky(hpd(a)).dtype(), t);
    EXPECT_EQ(ll::qr(a).r.dtype(), t);
    EXPECT_EQ(la::slogdet(a).logabsdet.dtype(), r);
    EXPECT_EQ(la::slogdet(a).sign.dtype(), t);
    EXPECT_EQ(la::eigvalsh(hpd(a)).dtype(), r);
    EXPECT_EQ(la::svdvals(a).dtype(), r);
    EXPECT_EQ(la::norm(a).dtype(), r);
    EXPECT_EQ(la::norm(a, 2).dtype(), r);
  }
}

TEST(LaxLinalgComplex, Cholesky) {
  for (DType t : kTypes) {
    Array a = hpd(crand({3, 5, 5}, 2, t));
    Array L = ll::cholesky(a);
    close(jnp::matmul(L, mH(L)), a, 10 * tol(t), "L L^H " + name(t));
    close(jnp::triu(L, 1), zeros_like(L), 0, "upper zero");
    close(jnp::imag(jnp::diagonal(L, 0, -2, -1)), jnp::zeros({3, 5}, jx::real_dtype(t)), 0,
          "real diagonal");
    // The upper triangle is not read without symmetrize_input; with it, (a + a^H) / 2 is.
    Array junk = crand({3, 5, 5}, 3, t);
    close(ll::cholesky(jnp::tril(a) + jnp::triu(junk, 1), false), L, 10 * tol(t), "lower only");
    Array skew = junk - mH(junk);  // anti-Hermitian: (x + x^H) / 2 removes it
    close(ll::cholesky(a + skew), L, 10 * tol(t), "symmetrized");
    // Not positive definite: NaNs.
    Array bad = ll::cholesky(cmat({C(1, 0), C(0, 2), C(0, -2), C(1, 0)}, {2, 2}, t));
    for (C z : bad.to_vector<C>()) EXPECT_TRUE(std::isnan(z.real()) && std::isnan(z.imag()));
  }
}

TEST(LaxLinalgComplex, TriangularSolveEveryVariant) {
  for (DType t : kTypes) {
    Array a0 = crand({2, 4, 4}, 4, t) + Array(4.0) * eye_like(crand({2, 4, 4}, 4, t));
    for (bool left : {true, false})
      for (bool lower : {true, false})
        for (bool trans : {true, false})
          for (bool conj : {true, false})
            for (bool unit : {true, false}) {
              Array b = crand(left ? Shape{2, 4, 3} : Shape{2, 3, 4}, 5, t);
              Array x = ll::triangular_solve(a0, b, {.left_side = left, .lower = lower, .transpose_a = trans,
                                                     .conjugate_a = conj, .unit_diagonal = unit});
              Array tri = lower ? jnp::tril(a0, -1) : jnp::triu(a0, 1);
              tri = tri + (unit ? eye_like(a0) : a0 * eye_like(a0));
              Array op = trans ? mT(tri) : tri;
              if (conj) op = jnp::conj(op);
              Array back = left ? jnp::matmul(op, x) : jnp::matmul(x, op);
              close(back, b, 10 * tol(t),
                    jx::str(name(t), " left=", left, " lower=", lower, " trans=", trans,
                            " conj=", conj, " unit=", unit));
            }
  }
  // conjugate_a has no effect on real matrices and is dropped from the params, as in JAX.
  Array a = rand_f64({3, 3}, 6) + Array(3.0) * jnp::eye(3, std::nullopt, 0, DType::Float64);
  Array b = rand_f64({3, 2}, 7);
  close(ll::triangular_solve(a, b, {.left_side = true, .lower = true, .conjugate_a = true}),
        ll::triangular_solve(a, b, {.left_side = true, .lower = true}), 0, "real conjugate_a");
}

TEST(LaxLinalgComplex, LuReconstructs) {
  for (DType t : kTypes)
    for (Shape s : {Shape{5, 5}, Shape{6, 4}, Shape{3, 7}, Shape{2, 3, 4, 4}}) {
      Array a = crand(s, 8, t);
      auto [lu, piv, perm] = ll::lu(a);
      const int64_t m = s[s.size() - 2], n = s[s.size() - 1], k = std::min(m, n);
      Array l = jnp::tril(lu, -1)(jx::ellipsis, jx::slice(), jx::slice(0, k)) + jnp::eye(m, k, 0, t);
      Array u = jnp::triu(lu)(jx::ellipsis, jx::slice(0, k), jx::slice());
      // clip: gather's fill mode takes real dtypes only (ops/indexing.cpp).
      Array pa = jnp::take_along_axis(a, jnp::broadcast_to(jnp::expand_dims(perm, -1), s), -2,
                                      jnp::TakeMode::clip);
      close(jnp::matmul(l, u), pa, 10 * tol(t), "P a = L U " + name(t) + " " + jx::str(s));
    }
}

TEST(LaxLinalgComplex, QrEighSvdIdentities) {
  for (DType t : kTypes) {
    const double e = 10 * tol(t);
    for (Shape s : {Shape{5, 3}, Shape{3, 5}, Shape{2, 4, 4}, Shape{0, 3}}) {
      Array a = crand(s, 9, t);
      const std::string what = name(t) + " " + jx::str(s);
      for (bool full : {false, true}) {
        auto [q, r] = ll::qr(a, full);
        close(jnp::matmul(q, r), a, e, "q r " + what);
        close(jnp::matmul(mH(q), q), eye_like(jnp::matmul(mH(q), q)), e, "q^H q " + what);
        close(jnp::tril(r, -1), zeros_like(jnp::tril(r, -1)), 0, "r upper " + what);
        auto [u, sv, vh] = ll::svd(a, full);
        const int64_t m = s[s.size() - 2], n = s[s.size() - 1], k = std::min(m, n);
        Array uk = u(jx::ellipsis, jx::slice(), jx::slice(0, k));
        Array vk = vh(jx::ellipsis, jx::slice(0, k), jx::slice());
        close(jnp::matmul(uk * jnp::expand_dims(sv, -2).astype(t), vk), a, e, "u s vh " + what);
        close(jnp::matmul(mH(u), u), eye_like(jnp::matmul(mH(u), u)), e, "u^H u " + what);
        close(jnp::matmul(vh, mH(vh)), eye_like(jnp::matmul(vh, mH(vh))), e, "vh vh^H " + what);
        close(ll::svd(a, full, false).s, sv, e, "values only " + what);
      }
    }
    Array b = crand({3, 5, 5}, 10, t);
    Array a = b + mH(b);
    auto [v, w] = ll::eigh(a);
    close(jnp::matmul(a, v), v * jnp::expand_dims(w, -2).astype(t), e, "a v = v diag(w) " + name(t));
    close(jnp::matmul(mH(v), v), eye_like(v), e, "v^H v " + name(t));
    auto wv = w.astype(DType::Float64).to_vector<double>();
    for (size_t i = 0; i + 1 < wv.size(); ++i)
      if ((i + 1) % 5) {
        EXPECT_LE(wv[i], wv[i + 1]) << "ascending";
      }
    // One triangle only (the other scaled to junk), and a non-Hermitian input symmetrized.
    Array junk = Array(7.0) * crand({3, 5, 5}, 11, t);
    close(ll::eigh(jnp::tril(a) + jnp::triu(junk, 1), true, false).w, w, e, "lower triangle only");
    close(ll::eigh(jnp::triu(a) + jnp::tril(junk, -1), false, false).w, w, e, "upper triangle only");
    close(ll::eigh(a + junk - mH(junk)).w, w, e, "symmetrized");
    // Hand-worked: [[2, i], [-i, 2]] has eigenvalues 1 and 3.
    close(ll::eigh(cmat({C(2, 0), C(0, 1), C(0, -1), C(2, 0)}, {2, 2}, t)).w,
          jnp::array<double>({1, 3}).astype(jx::real_dtype(t)), e, "eigh 2x2");
  }
}

// ---- values against NumPy ----

TEST(LaxLinalgComplex, AgainstNumpy) {
  for (DType t : kTypes) {
    const DType r = jx::real_dtype(t);
    const double e = t == DType::Complex64 ? 1e-4 : 1e-11;
    Array a = cmat(kA, {4, 4}, t), h = cmat(kH, {4, 4}, t), b = cmat(kB, {4, 2}, t);
    Array m = cmat(kM, {5, 3}, t), y = cmat(kY, {5}, t);
    const std::string T = " " + name(t);
    close(la::det(a), cmat(kDet, {}, t), e, "det" + T);
    auto [sign, logabsdet] = la::slogdet(a);
    close(sign, cmat(kSlogdetSign, {}, t), e, "slogdet sign" + T);
    close(logabsdet, jnp::array(kSlogdetLogabsdet, Shape{}).astype(r), e, "slogdet logabsdet" + T);
    close(la::solve(a, b), cmat(kSolve, {4, 2}, t), e, "solve" + T);
    close(la::solve(a, b(jx::slice(), 0)), cmat(kSolve, {4, 2}, t)(jx::slice(), 0), e, "solve vector" + T);
    close(la::inv(a), cmat(kInv, {4, 4}, t), e, "inv" + T);
    close(la::cholesky(h), cmat(kCholesky, {4, 4}, t), e, "cholesky" + T);
    close(la::cholesky(h, true), mH(cmat(kCholesky, {4, 4}, t)), e, "cholesky upper = L^H" + T);
    close(la::eigvalsh(h), jnp::array(kEigvalsh).astype(r), 10 * e, "eigvalsh" + T);
    close(la::svdvals(a), jnp::array(kSvdvalsA).astype(r), e, "svdvals" + T);
    close(la::svd(m).S, jnp::array(kSvdvalsM).astype(r), e, "svd" + T);
    auto [lu, piv, perm] = ll::lu(a);
    close(lu, cmat(kLu, {4, 4}, t), e, "lu" + T);
    EXPECT_EQ(piv.to_vector<int32_t>(), std::vector<int32_t>(kLuPivots.begin(), kLuPivots.end())) << T;
    close(la::pinv(m), cmat(kPinvM, {3, 5}, t), e, "pinv" + T);
    auto ls = la::lstsq(m, y);
    close(ls.x, cmat(kLstsqX, {3}, t), e, "lstsq x" + T);
    close(ls.residuals, jnp::array(kLstsqResid).astype(r), e, "lstsq residuals" + T);
    EXPECT_EQ(ls.rank.item<int32_t>(), 3);
    EXPECT_EQ(la::matrix_rank(m).item<int32_t>(), kRankM);
    Array na = jnp::stack({la::norm(a), la::norm(a, 2), la::norm(a, "nuc"), la::norm(a, 1),
                           la::norm(a, std::numeric_limits<double>::infinity())});
    close(na, jnp::array(kNormA).astype(r), e, "matrix norms" + T);
    Array ny = jnp::stack({la::norm(y), la::norm(y, 1),
                           la::norm(y, std::numeric_limits<double>::infinity()), la::norm(y, 3)});
    close(ny, jnp::array(kNormY).astype(r), e, "vector norms" + T);
    close(jnp::abs(la::qr(m).R), jnp::array(kQrAbsR, Shape{3, 3}).astype(r), e, "|R|" + T);
    close(jnp::vdot(a, h), cmat({kVdot}, {}, t), 10 * e, "vdot conjugates a" + T);
    close(jnp::vecdot(a, h), cmat(kVecdot, {4}, t), 10 * e, "vecdot conjugates a" + T);
  }
}

// ---- gradients (complex128; finite differences need it) ----

TEST(LaxLinalgComplexGrad, Cholesky) {
  auto f = [](const Arrays& x) { return Arrays{ll::cholesky(hpd(x[0]))}; };
  check_grads(f, {crand({4, 4}, 20)}, {.order = 1});
  check_grads(f, {crand({2, 3, 3}, 21)}, {.order = 2});
  // At a non-Hermitian point the derivative is that of cholesky((x + x^H) / 2); without
  // symmetrize_input, that of the lower triangle mirrored (the diagonal's real part).
  Array b = crand({3, 3}, 22);
  check_grads([](const Arrays& x) { return Arrays{ll::cholesky(x[0])}; }, {hpd(b) + b - mH(b)},
              {.order = 1});
  check_grads([](const Arrays& x) { return Arrays{ll::cholesky(x[0], false)}; },
              {jnp::tril(hpd(b)) + jnp::triu(crand({3, 3}, 23), 1)}, {.order = 1});
}

TEST(LaxLinalgComplexGrad, TriangularSolve) {
  for (bool left : {true, false})
    for (bool lower : {true, false})
      for (bool trans : {true, false})
        for (bool conj : {true, false})
          for (bool unit : {true, false}) {
            Shape b_shape = left ? Shape{3, 2} : Shape{2, 3};
            auto f = [=](const Arrays& x) {
              Array a = x[0] + Array(3.0) * jnp::eye(3, std::nullopt, 0, DType::Complex128);
              return Arrays{ll::triangular_solve(a, x[1], {.left_side = left, .lower = lower,
                                                           .transpose_a = trans, .conjugate_a = conj,
                                                           .unit_diagonal = unit})};
            };
            EXPECT_NO_THROW(check_grads(f, {crand({3, 3}, 24), crand(b_shape, 25)}, {.order = 1}))
                << "left=" << left << " lower=" << lower << " trans=" << trans << " conj=" << conj
                << " unit=" << unit;
          }
}

TEST(LaxLinalgComplexGrad, Lu) {
  for (Shape s : {Shape{4, 4}, Shape{5, 3}, Shape{3, 5}})
    EXPECT_NO_THROW(check_grads([](const Arrays& x) { return Arrays{ll::lu(x[0]).lu}; },
                                {crand(s, 26)}, {.order = 1}))
        << jx::str(s);
}

TEST(LaxLinalgComplexGrad, Qr) {
  for (Shape s : {Shape{4, 4}, Shape{5, 3}, Shape{2, 4, 2}}) {
    auto f = [](const Arrays& x) {
      auto [q, r] = ll::qr(x[0], false);
      return Arrays{q, r};
    };
    EXPECT_NO_THROW(check_grads(f, {crand(s, 27)}, {.order = 1})) << jx::str(s);
  }
}

// Eigenvectors and singular vectors are unique up to a phase per column: the checked
// functions are invariant to it (|v|^2 elementwise, v_k v_k^H, u vh).
TEST(LaxLinalgComplexGrad, Eigh) {
  auto f = [](const Arrays& x) {
    auto [v, w] = ll::eigh(x[0]);
    Array v0 = v(jx::ellipsis, jx::slice(), jx::slice(0, 1));
    return Arrays{w, jnp::abs(v) * jnp::abs(v), jnp::matmul(v0, mH(v0))};
  };
  EXPECT_NO_THROW(check_grads(f, {crand({4, 4}, 28)}, {.order = 1}));
  EXPECT_NO_THROW(check_grads(f, {crand({2, 3, 3}, 29)}, {.order = 1}));
  for (bool lower : {true, false})
    EXPECT_NO_THROW(check_grads([lower](const Arrays& x) { return Arrays{ll::eigh(x[0], lower, false).w}; },
                                {crand({4, 4}, 30)}, {.order = 1}))
        << "lower=" << lower;
}

TEST(LaxLinalgComplexGrad, Svd) {
  for (Shape s : {Shape{4, 4}, Shape{5, 3}, Shape{3, 5}, Shape{2, 4, 3}}) {
    auto f = [](const Arrays& x) {
      auto [u, sv, vh] = ll::svd(x[0], false);
      return Arrays{sv, jnp::abs(u) * jnp::abs(u), jnp::abs(vh) * jnp::abs(vh), jnp::matmul(u, vh)};
    };
    EXPECT_NO_THROW(check_grads(f, {crand(s, 31)}, {.order = 1})) << jx::str(s);
    EXPECT_NO_THROW(check_grads([](const Arrays& x) { return Arrays{ll::svd(x[0], false, false).s}; },
                                {crand(s, 32)}, {.order = 1}))
        << jx::str(s);
  }
}

// eig of complex matrices (cgeev/zgeev): a hand-worked triangular case, both eigenvector
// identities on random batches, and the eigenvalues' derivative.
TEST(LaxLinalgComplex, Eig) {
  for (DType t : {DType::Complex64, DType::Complex128}) {
    const double e = t == DType::Complex64 ? 2e-5 : 1e-12;
    // Upper triangular: the eigenvalues are the diagonal, 1 + i and 2.
    auto w = ll::eig(cmat({C(1, 1), C(0, 1), C(0, 0), C(2, 0)}, {2, 2}, t), false, false).w;
    EXPECT_EQ(w.dtype(), t);
    auto wv = w.astype(DType::Complex128).to_vector<C>();
    if (std::abs(wv[0] - C(2, 0)) < std::abs(wv[1] - C(2, 0))) std::swap(wv[0], wv[1]);
    EXPECT_NEAR(std::abs(wv[0] - C(1, 1)), 0, e);
    EXPECT_NEAR(std::abs(wv[1] - C(2, 0)), 0, e);
    Array a = crand({3, 5, 5}, 41, t);
    auto [w3, vl, vr] = ll::eig(a);
    Array right = jnp::matmul(a, vr) - vr * jnp::expand_dims(w3, -2);
    Array left = jnp::matmul(mH(vl), a) - mH(vl) * jnp::expand_dims(w3, -1);
    EXPECT_LT(jnp::max(jnp::abs(right)).astype(DType::Float64).item<double>(), e * 10);
    EXPECT_LT(jnp::max(jnp::abs(left)).astype(DType::Float64).item<double>(), e * 10);
    // vmap and jit agree with the plain call.
    auto ws = [](const Array& x) { return ll::eig(x, false, false).w; };
    close(jx::vmap(ws)(a), ws(a), 0, "vmap(eig)");
    close(jx::jit(ws)(a), ws(a), 0, "jit(eig)");
  }
  // The eigenvalues' derivative, dw = u^H dx v / (u^H v), holds for complex x too.
  check_grads([](const Arrays& x) { return Arrays{ll::eig(x[0], false, false).w}; }, {crand({4, 4}, 42)},
              {.order = 1});
}

TEST(LaxLinalgComplexGrad, NumpyLinalg) {
  Array a = crand({4, 4}, 33) + Array(2.0) * jnp::eye(4, std::nullopt, 0, DType::Complex128);
  Array b = crand({4, 2}, 34);
  const jx::testing::GradCheckOptions o1{.order = 1};
  check_grads([](const Arrays& x) { return Arrays{la::det(x[0])}; }, {a}, o1);
  check_grads([](const Arrays& x) {
    auto r = la::slogdet(x[0]);
    return Arrays{r.sign, r.logabsdet};
  }, {a}, o1);
  check_grads([](const Arrays& x) { return Arrays{la::inv(x[0])}; }, {a}, o1);
  check_grads([](const Arrays& x) { return Arrays{la::solve(x[0], x[1])}; }, {a, b}, o1);
  check_grads([](const Arrays& x) { return Arrays{la::eigvalsh(x[0])}; }, {a}, o1);
  check_grads([](const Arrays& x) { return Arrays{la::svdvals(x[0])}; }, {crand({5, 3}, 35)}, o1);
  check_grads([](const Arrays& x) { return Arrays{la::norm(x[0], 2)}; }, {a}, o1);
  check_grads([](const Arrays& x) { return Arrays{la::pinv(x[0])}; }, {crand({5, 3}, 36)}, o1);
  // log|det A| = re log det A, with log det holomorphic: its grad (df/dx - i df/dy,
  // docs/complex.md) is the complex derivative of log det, A^-T (Jacobi's formula).
  close(jx::grad([](const Array& x) { return la::slogdet(x).logabsdet; })(a), mT(la::inv(a)),
        1e-12, "grad logabsdet");
}

// ---- vmap against a loop, jit against eager ----

using vmap_testing::check_vmap;

// The vmap checker makes real arguments: pairs of them become the complex matrices.
Array z(const Arrays& a, size_t i = 0) { return lax::complex(a[i], a[i + 1]); }

TEST(LaxLinalgComplexVmap, EveryPrimitive) {
  const DType t = DType::Float64;
  const vmap_testing::Arg m33{{3, 3}, t}, m32{{3, 2}, t}, m34{{3, 4}, t}, m43{{4, 3}, t};
  check_vmap("cholesky", [](const Arrays& a) { return Arrays{ll::cholesky(hpd(z(a)))}; }, {m33, m33}, 1e-12);
  check_vmap("triangular_solve",
             [](const Arrays& a) {
               Array tri = z(a) + Array(5.0) * jnp::eye(3, std::nullopt, 0, DType::Complex128);
               return Arrays{ll::triangular_solve(tri, z(a, 2), {.left_side = true, .lower = true,
                                                                 .transpose_a = true, .conjugate_a = true})};
             },
             {m33, m33, m32, m32}, 1e-12);
  check_vmap("lu", [](const Arrays& a) {
    auto r = ll::lu(z(a));
    return Arrays{r.lu, r.pivots, r.permutation};
  }, {m34, m34}, 1e-12);
  check_vmap("qr", [](const Arrays& a) {
    auto r = ll::qr(z(a), false);
    return Arrays{r.q, r.r};
  }, {m43, m43}, 1e-12);
  check_vmap("eigh", [](const Arrays& a) {
    auto r = ll::eigh(z(a));
    return Arrays{r.w, jnp::abs(r.v)};
  }, {m33, m33}, 1e-10);
  check_vmap("svd", [](const Arrays& a) {
    auto r = ll::svd(z(a), false);
    return Arrays{r.s, jnp::abs(r.u), jnp::abs(r.vh), jnp::matmul(r.u, r.vh)};
  }, {m34, m34}, 1e-10);
}

TEST(LaxLinalgComplexJit, EqualsEager) {
  for (DType t : kTypes) {
    Array x = crand({2, 4, 4}, 40, t);
    auto f = [](const Array& a) {
      Array s = hpd(a);
      auto [lu, piv, perm] = ll::lu(a);
      auto [q, r] = ll::qr(a, false);
      auto [v, w] = ll::eigh(s);
      auto [u, sv, vh] = ll::svd(a, false);
      Array l = ll::cholesky(s);
      Array x1 = ll::triangular_solve(l, a, {.left_side = true, .lower = true, .conjugate_a = true});
      Array x2 = ll::triangular_solve(l, a, {.lower = true, .transpose_a = true, .conjugate_a = true});
      return Arrays{l, x1, x2, lu, piv, perm, q, r, v, w, u, sv, vh};
    };
    Arrays eager = f(x), jitted = jx::jit(f)(x);
    ASSERT_EQ(eager.size(), jitted.size());
    for (size_t i = 0; i < eager.size(); ++i) close(jitted[i], eager[i], 0, jx::str(name(t), " output ", i));
  }
  auto loss = [](const Array& a) {
    return la::slogdet(hpd(a)).logabsdet + jnp::sum(la::svdvals(a)) + jnp::real(jnp::sum(la::inv(hpd(a))));
  };
  Array x = crand({4, 4}, 41);
  close(jx::jit(jx::grad(loss))(x), jx::grad(loss)(x), 1e-12, "jit(grad)");
}

// ---- errors ----

TEST(LaxLinalgComplex, Errors) {
  expect_error<jx::DTypeError>([] { ll::eig(jnp::zeros({2, 2}, DType::Int32)); },
                               "[eig] supports float32, float64, complex64 and complex128 (LAPACK's types), got i32[2,2]");
  expect_error<jx::DTypeError>([] { ll::triangular_solve(jnp::zeros({3, 3}, DType::Complex64),
                                                         jnp::zeros({3, 3}, DType::Complex128)); },
                               "[triangular_solve] a and b must have the same dtype");
  expect_error<jx::DTypeError>([] { ll::qr(jnp::zeros({3, 3}, DType::Int32)); },
                               "[qr] supports float32, float64, complex64 and complex128 (LAPACK's types)");
}

}  // namespace
