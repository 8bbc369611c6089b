// The linear-algebra primitives (jx::lax::linalg over LAPACK): values from hand-worked
// examples and the defining identities, check_grads through every primitive (jvp against
// finite differences, vjp against jvp), vmap against a loop, jit against eager, and the
// errors. jnp.linalg's values against NumPy are in tests/numpy/linalg_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "support/str.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"
#include "transforms/vmap_testing.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
namespace ll = jx::lax::linalg;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::check_grads;
using jx::testing::expect_close;
using jx::testing::expect_error;
using jx::testing::rand_f64;
using Arrays = std::vector<Array>;

Array mT(const Array& a) { return jnp::swapaxes(a, -1, -2); }
Array eye_like(const Array& a) {
  const int64_t n = a.shape()[size_t(a.ndim() - 1)];
  return jnp::broadcast_to(jnp::eye(n, std::nullopt, 0, a.dtype()), a.shape());
}
void close(const Array& a, const Array& b, double tol, const std::string& what) {
  expect_close(a, b, tol, tol, what);
}
// A well-conditioned symmetric positive-definite stack: x x^T + n I.
Array spd(const Array& x) {
  return jnp::matmul(x, mT(x)) + Array(double(x.shape().back())) * eye_like(x);
}

// ---- values ----

TEST(LaxLinalg, LuByHand) {
  // [[1, 2], [3, 4]]: row 1 pivots; L = [[1, 0], [1/3, 1]], U = [[3, 4], [0, 2/3]].
  auto [lu, piv, perm] = ll::lu(jnp::array<double>({{1, 2}, {3, 4}}));
  close(lu, jnp::array<double>({{3, 4}, {1.0 / 3, 2.0 / 3}}), 1e-15, "lu");
  EXPECT_EQ(piv.dtype(), DType::Int32);
  EXPECT_EQ(piv.to_vector<int32_t>(), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(perm.to_vector<int32_t>(), (std::vector<int32_t>{1, 0}));
}

TEST(LaxLinalg, LuReconstructs) {
  for (Shape s : {Shape{5, 5}, Shape{6, 4}, Shape{3, 7}, Shape{2, 3, 4, 4}}) {
    Array a = rand_f64(s, 1);
    auto [lu, piv, perm] = ll::lu(a);
    const int64_t m = s[s.size() - 2], n = s[s.size() - 1], k = std::min(m, n);
    Array l = jnp::tril(lu, -1)(jx::ellipsis, jx::slice(), jx::slice(0, k)) +
              jnp::eye(m, k, 0, DType::Float64);
    Array u = jnp::triu(lu)(jx::ellipsis, jx::slice(0, k), jx::slice());
    Array pa = jnp::take_along_axis(a, jnp::broadcast_to(jnp::expand_dims(perm, -1), s), -2);
    close(jnp::matmul(l, u), pa, 1e-13, "P a = L U for " + jx::str(s));
    // The pivots replayed as row swaps give the permutation.
    auto pv = piv.to_vector<int32_t>(), pm = perm.to_vector<int32_t>();
    std::vector<int32_t> p(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) p[size_t(i)] = int32_t(i);
    for (int64_t i = 0; i < k; ++i) std::swap(p[size_t(i)], p[size_t(pv[size_t(i)])]);
    EXPECT_EQ(std::vector<int32_t>(pm.begin(), pm.begin() + m), p);
  }
}

TEST(LaxLinalg, CholeskyReadsTheLowerTriangle) {
  // [[4, 2], [2, 3]] = L L^T with L = [[2, 0], [1, sqrt(2)]]; the upper entry is not read.
  Array l = jnp::array<double>({{2, 0}, {1, std::sqrt(2.0)}});
  close(ll::cholesky(jnp::array<double>({{4, 2}, {2, 3}})), l, 1e-15, "cholesky");
  close(ll::cholesky(jnp::array<double>({{4, 99}, {2, 3}}), false), l, 1e-15, "lower only");
  for (float x : ll::cholesky(jnp::array<float>({{1, 2}, {2, 1}})).to_vector<float>())
    EXPECT_TRUE(std::isnan(x)) << "not positive definite";
  Array a = spd(rand_f64({3, 6, 6}, 2));
  Array L = ll::cholesky(a);
  close(jnp::matmul(L, mT(L)), a, 1e-12, "L L^T");
  close(jnp::triu(L, 1), jnp::zeros({3, 6, 6}, DType::Float64), 0, "upper zero");
}

TEST(LaxLinalg, TriangularSolveEveryVariant) {
  Array a0 = rand_f64({2, 4, 4}, 3) + Array(4.0) * eye_like(rand_f64({2, 4, 4}, 3));
  for (bool left : {true, false})
    for (bool lower : {true, false})
      for (bool trans : {true, false})
        for (bool unit : {true, false}) {
          Array b = rand_f64(left ? Shape{2, 4, 3} : Shape{2, 3, 4}, 4);
          Array x = ll::triangular_solve(a0, b, {.left_side = left, .lower = lower,
                                                 .transpose_a = trans, .unit_diagonal = unit});
          Array t = lower ? jnp::tril(a0, -1) : jnp::triu(a0, 1);
          t = t + (unit ? eye_like(a0) : a0 * eye_like(a0));
          Array op = trans ? mT(t) : t;
          Array back = left ? jnp::matmul(op, x) : jnp::matmul(x, op);
          close(back, b, 1e-13, jx::str("left=", left, " lower=", lower, " trans=", trans, " unit=", unit));
        }
  // float32 too.
  Array a32 = jnp::array<float>({{2, 0}, {1, 4}});
  Array x32 = ll::triangular_solve(a32, jnp::array<float>({{2}, {9}}), {.left_side = true, .lower = true});
  EXPECT_EQ(x32.to_vector<float>(), (std::vector<float>{1, 2}));
}

TEST(LaxLinalg, QrEighSvdIdentities) {
  for (Shape s : {Shape{5, 3}, Shape{3, 5}, Shape{2, 4, 4}, Shape{0, 3}}) {
    Array a = rand_f64(s, 5);
    for (bool full : {false, true}) {
      auto [q, r] = ll::qr(a, full);
      close(jnp::matmul(q, r), a, 1e-13, "q r " + jx::str(s));
      close(jnp::matmul(mT(q), q), eye_like(jnp::matmul(mT(q), q)), 1e-13, "q^T q");
      close(jnp::tril(r, -1), jnp::zeros(r.shape(), DType::Float64), 0, "r upper");
      auto [u, sv, vh] = ll::svd(a, full);
      const int64_t m = s[s.size() - 2], n = s[s.size() - 1], k = std::min(m, n);
      Array uk = u(jx::ellipsis, jx::slice(), jx::slice(0, k));
      Array vk = vh(jx::ellipsis, jx::slice(0, k), jx::slice());
      close(jnp::matmul(uk * jnp::expand_dims(sv, -2), vk), a, 1e-13, "u s vh " + jx::str(s));
      close(jnp::matmul(mT(u), u), eye_like(jnp::matmul(mT(u), u)), 1e-13, "u^T u");
      close(ll::svd(a, full, false).s, sv, 1e-13, "values only");
    }
  }
  Array b = rand_f64({3, 5, 5}, 6);
  Array a = b + mT(b);
  auto [v, w] = ll::eigh(a);
  close(jnp::matmul(a, v), v * jnp::expand_dims(w, -2), 1e-13, "a v = v diag(w)");
  close(jnp::matmul(mT(v), v), eye_like(v), 1e-13, "v^T v");
  auto [v2, w2] = ll::eigh(jnp::tril(a) + Array(7.0) * jnp::triu(a, 1), true, false);
  close(w2, w, 1e-13, "lower triangle only");
  auto [v3, w3] = ll::eigh(jnp::triu(a) + Array(7.0) * jnp::tril(a, -1), false, false);
  close(w3, w, 1e-13, "upper triangle only");
  // Hand-worked: [[2, 1], [1, 2]] has eigenvalues 1 and 3; [[3, 0], [0, -4]] has singular
  // values 4 and 3.
  close(ll::eigh(jnp::array<double>({{2, 1}, {1, 2}})).w, jnp::array<double>({1, 3}), 1e-15, "eigh 2x2");
  close(ll::svd(jnp::array<float>({{3, 0}, {0, -4}}), false, false).s, jnp::array<float>({4, 3}), 1e-6,
        "svd 2x2");
}

// ---- gradients ----

// The sign of each column of v from its first row: eigenvectors and singular vectors are
// defined up to sign, so the checked functions fix it (a constant near the point).
Array fix_signs(const Array& v) { return v * jnp::sign(v(jx::ellipsis, jx::slice(0, 1), jx::slice())); }

TEST(LaxLinalgGrad, Cholesky) {
  auto f = [](const Arrays& x) { return Arrays{ll::cholesky(spd(x[0]))}; };
  check_grads(f, {rand_f64({4, 4}, 7)});
  check_grads(f, {rand_f64({2, 3, 3}, 8)});
  // At a non-symmetric point the derivative is that of cholesky((x + x^T) / 2).
  Array b = rand_f64({4, 4}, 30);
  check_grads([](const Arrays& x) { return Arrays{ll::cholesky(x[0])}; }, {spd(b) + b - mT(b)});
}

TEST(LaxLinalgGrad, TriangularSolve) {
  for (bool left : {true, false})
    for (bool lower : {true, false})
      for (bool trans : {true, false})
        for (bool unit : {true, false})
          for (Shape bs : {Shape{3, 2}, Shape{3, 5}}) {  // m < n and m > n orders
            Shape b_shape = left ? Shape{3, bs[1]} : Shape{bs[1], 3};
            auto f = [=](const Arrays& x) {
              Array a = x[0] + Array(3.0) * jnp::eye(3, std::nullopt, 0, DType::Float64);
              return Arrays{ll::triangular_solve(a, x[1], {.left_side = left, .lower = lower,
                                                           .transpose_a = trans, .unit_diagonal = unit})};
            };
            EXPECT_NO_THROW(check_grads(f, {rand_f64({3, 3}, 9), rand_f64(b_shape, 10)}))
                << "left=" << left << " lower=" << lower << " trans=" << trans << " unit=" << unit;
          }
}

TEST(LaxLinalgGrad, Lu) {
  for (Shape s : {Shape{4, 4}, Shape{5, 3}, Shape{3, 5}, Shape{2, 3, 3}})
    EXPECT_NO_THROW(check_grads([](const Arrays& x) { return Arrays{ll::lu(x[0]).lu}; },
                                {rand_f64(s, 11)}))
        << jx::str(s);
}

TEST(LaxLinalgGrad, Qr) {
  for (Shape s : {Shape{4, 4}, Shape{5, 3}, Shape{2, 4, 2}}) {
    auto f = [](const Arrays& x) {
      auto [q, r] = ll::qr(x[0], false);
      return Arrays{q, r};
    };
    EXPECT_NO_THROW(check_grads(f, {rand_f64(s, 12)})) << jx::str(s);
  }
  // Square full matrices equal the reduced ones and are differentiable too.
  check_grads([](const Arrays& x) { return Arrays{ll::qr(x[0], true).q}; }, {rand_f64({3, 3}, 13)});
}

TEST(LaxLinalgGrad, Eigh) {
  auto f = [](const Arrays& x) {
    auto [v, w] = ll::eigh(x[0]);
    return Arrays{w, fix_signs(v)};
  };
  check_grads(f, {rand_f64({4, 4}, 14)});
  check_grads(f, {rand_f64({2, 3, 3}, 15)});
  // One triangle only: the derivative ignores the other.
  for (bool lower : {true, false})
    check_grads([lower](const Arrays& x) { return Arrays{ll::eigh(x[0], lower, false).w}; },
                {rand_f64({4, 4}, 31)});
  check_grads([](const Arrays& x) { return Arrays{ll::cholesky(x[0], false)}; },
              {jnp::tril(spd(rand_f64({3, 3}, 32))) + Array(5.0) * jnp::triu(rand_f64({3, 3}, 33), 1)});
}

TEST(LaxLinalgGrad, Svd) {
  for (Shape s : {Shape{4, 4}, Shape{5, 3}, Shape{3, 5}, Shape{2, 4, 3}}) {
    auto f = [](const Arrays& x) {
      auto [u, sv, vh] = ll::svd(x[0], false);
      Array sign = jnp::sign(u(jx::ellipsis, jx::slice(0, 1), jx::slice()));  // fixes u and vh
      return Arrays{sv, u * sign, vh * mT(sign)};
    };
    EXPECT_NO_THROW(check_grads(f, {rand_f64(s, 16)})) << jx::str(s);
    EXPECT_NO_THROW(check_grads([](const Arrays& x) { return Arrays{ll::svd(x[0], false, false).s}; },
                                {rand_f64(s, 17)}))
        << jx::str(s);
  }
}

// jnp.linalg on the primitives: check_grads, and hand-derived gradients.
TEST(LaxLinalgGrad, NumpyLinalg) {
  namespace la = jx::numpy::linalg;
  Array a = rand_f64({4, 4}, 18) + Array(2.0) * jnp::eye(4, std::nullopt, 0, DType::Float64);
  Array b = rand_f64({4, 2}, 19);
  check_grads([](const Arrays& x) { return Arrays{la::det(x[0])}; }, {a});
  check_grads([](const Arrays& x) { return Arrays{la::slogdet(x[0]).logabsdet}; }, {a});
  check_grads([](const Arrays& x) { return Arrays{la::inv(x[0])}; }, {a});
  check_grads([](const Arrays& x) { return Arrays{la::solve(x[0], x[1])}; }, {a, b});
  check_grads([](const Arrays& x) { return Arrays{la::eigvalsh(x[0])}; }, {a});
  check_grads([](const Arrays& x) { return Arrays{la::svdvals(x[0])}; }, {rand_f64({5, 3}, 20)});
  check_grads([](const Arrays& x) { return Arrays{la::norm(x[0], 2)}; }, {a});
  check_grads([](const Arrays& x) { return Arrays{la::pinv(x[0])}; }, {rand_f64({5, 3}, 21)});
  // d det(A) / dA = det(A) A^-T and d log|det A| / dA = A^-T (Jacobi's formula).
  Array inv_t = mT(la::inv(a));
  close(jx::grad([](const Array& x) { return la::det(x); })(a), la::det(a) * inv_t, 1e-12, "grad det");
  close(jx::grad([](const Array& x) { return la::slogdet(x).logabsdet; })(a), inv_t, 1e-12,
        "grad logabsdet");
}

// det's custom jvp (JAX's cofactor solve): the gradient is the cofactor matrix adj(A)^T,
// finite where A is singular. Hand-derived: [[1, 2], [2, 4]] (rank 1; LU swaps its rows) has cofactors
// [[4, -2], [-2, 1]]; diag(1, 1, 0) (rank 2) has the single cofactor 1 at (2, 2); a rank-1
// 3 x 3 matrix has none. Batched under vmap, order 2 by check_grads, and 1 x 1 and 0 x 0.
TEST(LaxLinalgGrad, DetAtSingularMatrices) {
  namespace la = jx::numpy::linalg;
  auto gdet = jx::grad([](const Array& x) { return la::det(x); });
  close(gdet(jnp::array(std::vector<double>{1, 2, 2, 4}, Shape{2, 2})),
        jnp::array(std::vector<double>{4, -2, -2, 1}, Shape{2, 2}), 1e-15, "grad det rank 1 (2x2)");
  close(gdet(jnp::array(std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 0}, Shape{3, 3})),
        jnp::array(std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 1}, Shape{3, 3}), 1e-15, "grad det rank 2");
  Array rank1 = jnp::outer(jnp::array(std::vector<double>{1, 2, 3}), jnp::array(std::vector<double>{4, 5, 6}));
  close(gdet(rank1), jnp::zeros(Shape{3, 3}, DType::Float64), 0, "grad det rank 1 (3x3)");
  // As JAX's, the rule needs LU's zero pivot last: [[0, 1], [0, 2]] (a zero first column,
  // so U's first pivot is 0) gives zeros, although its cofactors are [[2, 0], [-1, 0]].
  close(gdet(jnp::array(std::vector<double>{0, 1, 0, 2}, Shape{2, 2})), jnp::zeros(Shape{2, 2}, DType::Float64),
        0, "grad det, zero pivot first (JAX's limit)");
  Array batch = jnp::stack({jnp::array(std::vector<double>{1, 2, 2, 4}, Shape{2, 2}),
                            jnp::array(std::vector<double>{3, 1, 1, 2}, Shape{2, 2})});
  close(jx::vmap(gdet)(batch), jnp::array(std::vector<double>{4, -2, -2, 1, 2, -1, -1, 3}, Shape{2, 2, 2}),
        1e-15, "vmap(grad det)");
  check_grads([](const Arrays& x) { return Arrays{la::det(x[0])}; }, {rand_f64({2, 4, 4}, 22)}, {.order = 2});
  close(gdet(jnp::full(Shape{1, 1}, 3.0)), jnp::ones(Shape{1, 1}, DType::Float64), 0, "grad det 1x1");
  EXPECT_EQ(gdet(jnp::zeros(Shape{0, 0}, DType::Float64)).shape(), (Shape{0, 0}));
}

// pinv's custom jvp (Golub-Pereyra, JAX's) at a rank-deficient square matrix, along a path
// of constant rank 1, a(t) = (u + t du)(v + t dv)^T: against central differences of pinv's
// values, whose closed form there is v u^T / (|u|^2 |v|^2).
TEST(LaxLinalgGrad, PinvAtARankDeficientMatrix) {
  namespace la = jx::numpy::linalg;
  Array u = jnp::array(std::vector<double>{1, 2, 3}), v = jnp::array(std::vector<double>{2, -1, 1});
  Array du = jnp::array(std::vector<double>{0.5, -1, 0.25}), dv = jnp::array(std::vector<double>{1, 3, -2});
  auto a_at = [&](double t) { return jnp::outer(u + du * t, v + dv * t); };
  Array tangent = jnp::outer(du, v) + jnp::outer(u, dv);
  auto [p, dp] = jx::jvp([](const Array& x) { return la::pinv(x); }, std::tuple<Array>{a_at(0)},
                         std::tuple<Array>{tangent});
  close(p, jnp::outer(v, u) / Array(14.0 * 6.0), 1e-15, "pinv of u v^T");
  const double h = 1e-5;
  Array fd = (la::pinv(a_at(h)) - la::pinv(a_at(-h))) / Array(2 * h);
  close(dp, fd, 1e-8, "jvp of pinv at rank 1");
}

// ---- vmap against a loop, jit against eager ----

using vmap_testing::check_vmap;

TEST(LaxLinalgVmap, EveryPrimitive) {
  const DType t = DType::Float64;
  check_vmap("cholesky", [](const Arrays& a) { return Arrays{ll::cholesky(spd(a[0]))}; }, {{{3, 3}, t}}, 1e-12);
  check_vmap("triangular_solve",
             [](const Arrays& a) {
               Array tri = a[0] + Array(5.0) * jnp::eye(3, std::nullopt, 0, DType::Float64);
               return Arrays{ll::triangular_solve(tri, a[1], {.left_side = true, .lower = true})};
             },
             {{{3, 3}, t}, {{3, 2}, t}}, 1e-12);
  check_vmap("lu", [](const Arrays& a) {
    auto r = ll::lu(a[0]);
    return Arrays{r.lu, r.pivots, r.permutation};
  }, {{{3, 4}, t}}, 1e-12);
  check_vmap("qr", [](const Arrays& a) {
    auto r = ll::qr(a[0], false);
    return Arrays{r.q, r.r};
  }, {{{4, 3}, t}}, 1e-12);
  check_vmap("eigh", [](const Arrays& a) {
    auto r = ll::eigh(a[0]);
    return Arrays{r.w, fix_signs(r.v)};
  }, {{{3, 3}, t}}, 1e-12);
  check_vmap("svd", [](const Arrays& a) {
    auto r = ll::svd(a[0], false);
    return Arrays{r.s, jnp::abs(r.u), jnp::abs(r.vh)};
  }, {{{3, 4}, t}}, 1e-12);
}

TEST(LaxLinalgJit, EqualsEager) {
  Array x = rand_f64({2, 4, 4}, 22);
  auto f = [](const Array& a) {
    Array s = spd(a);
    auto [lu, piv, perm] = ll::lu(a);
    auto [q, r] = ll::qr(a, false);
    auto [v, w] = ll::eigh(s);
    auto [u, sv, vh] = ll::svd(a, false);
    Array l = ll::cholesky(s);
    return Arrays{l, ll::triangular_solve(l, a, {.left_side = true, .lower = true}), lu, piv, perm,
                  q, r, v, w, u, sv, vh};
  };
  Arrays eager = f(x), jitted = jx::jit(f)(x);
  ASSERT_EQ(eager.size(), jitted.size());
  for (size_t i = 0; i < eager.size(); ++i) close(jitted[i], eager[i], 0, jx::str("output ", i));
  // And a jitted gradient through several of them equals the eager one.
  auto loss = [](const Array& a) {
    namespace la = jx::numpy::linalg;
    return jnp::sum(la::inv(spd(a))) + la::slogdet(spd(a)).logabsdet + jnp::sum(la::svdvals(a));
  };
  close(jx::jit(jx::grad(loss))(x(0)), jx::grad(loss)(x(0)), 1e-12, "jit(grad)");
}

// ---- errors ----

TEST(LaxLinalg, Errors) {
  expect_error<jx::DTypeError>([] { ll::cholesky(jnp::zeros({2, 2}, DType::Int32)); },
                               "[cholesky] supports float32, float64, complex64 and complex128 (LAPACK's "
                               "types), got i32[2,2]; convert with astype(float32) or "
                               "astype(float64)");
  expect_error<jx::ShapeError>([] { ll::lu(jnp::zeros({3})); },
                               "[lu] needs a stack of matrices (rank >= 2), got f32[3]");
  expect_error<jx::ShapeError>([] { ll::eigh(jnp::zeros({2, 3})); },
                               "[eigh] needs square matrices in the last two dims, got f32[2,3]");
  expect_error<jx::ShapeError>([] { ll::triangular_solve(jnp::zeros({3, 3}), jnp::zeros({2, 3}), {.left_side = true}); },
                               "[triangular_solve] with left_side=True a's size 3 must equal b's rows, "
                               "got f32[3,3] and f32[2,3]");
  expect_error<jx::ShapeError>([] { ll::triangular_solve(jnp::zeros({2, 3, 3}), jnp::zeros({3, 3})); },
                               "[triangular_solve] a and b must have the same batch dims");
  expect_error<jx::DTypeError>([] { ll::triangular_solve(jnp::zeros({3, 3}), jnp::zeros({3, 3}, DType::Float64)); },
                               "[triangular_solve] a and b must have the same dtype");
  expect_error<jx::ValueError>([] { jx::jvp([](const Array& a) { return ll::qr(a, false).q; },
                                            std::tuple<Array>{jnp::ones({2, 3})},
                                            std::tuple<Array>{jnp::ones({2, 3})}); },
                               "[qr] the derivative is implemented for m >= n");
  expect_error<jx::ValueError>([] { jx::grad([](const Array& a) { return jnp::sum(ll::svd(a, true).u); })(jnp::ones({3, 2})); },
                               "[svd] the derivative of U and V^T is implemented for reduced matrices");
}

}  // namespace
