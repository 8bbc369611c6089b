// lax::linalg::schur and jx::scipy::linalg::schur: hand-derived Schur forms, the defining
// properties (a = vs t vs^H, vs unitary, t triangular or in LAPACK's real standard form,
// t's eigenvalues those of eig) on random batches of all four dtypes, vmap against a loop,
// jit against eager, and the errors (no derivative, as in JAX).
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>

#include "jx/jx.h"
#include "jx/scipy.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"

namespace {

namespace jnp = jx::numpy;
namespace ll = jx::lax::linalg;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::expect_error;
using C = std::complex<double>;

// By real part, then imaginary part; real parts within rounding of each other count as
// equal (+-i computed as +-1e-17 +- i must not swap).
std::vector<C> sorted(std::vector<C> v) {
  std::sort(v.begin(), v.end(), [](C a, C b) {
    return std::abs(a.real() - b.real()) > 1e-4 ? a.real() < b.real() : a.imag() < b.imag();
  });
  return v;
}

Array ct(const Array& x) { return jnp::conj(jnp::swapaxes(x, -1, -2)); }

double max_abs(const Array& x) { return jnp::max(jnp::abs(x)).astype(DType::Float64).item<double>(); }

// The eigenvalues on t's diagonal: 1 x 1 blocks, and the pairs a +- i sqrt(-b c) of the
// 2 x 2 blocks [[a, b], [c, a]] of LAPACK's real standard form.
std::vector<C> schur_eigenvalues(const std::vector<double>& t, int64_t n) {
  std::vector<C> w;
  for (int64_t i = 0; i < n; ++i) {
    if (i + 1 < n && t[size_t((i + 1) * n + i)] != 0) {
      const double a = t[size_t(i * n + i)], b = t[size_t(i * n + i + 1)], c = t[size_t((i + 1) * n + i)];
      const double im = std::sqrt(-b * c);
      w.push_back({a, im});
      w.push_back({a, -im});
      ++i;
    } else {
      w.push_back({t[size_t(i * n + i)], 0});
    }
  }
  return w;
}

TEST(LaxSchur, HandDerivedForms) {
  for (DType t : {DType::Float32, DType::Float64}) {
    // Upper triangular, or already a standard 2 x 2 block (a rotation, eigenvalues +-i):
    // gees changes nothing, so t = a and vs = I exactly. A transposition mistake between
    // row- and column-major storage would give a lower-triangular a instead.
    for (std::vector<double> v : {std::vector<double>{1, 2, 0, 3}, std::vector<double>{0, -1, 1, 0}}) {
      Array a = jnp::array(v, Shape{2, 2}).astype(t);
      auto [tt, vs] = ll::schur(a);
      EXPECT_EQ(tt.dtype(), t);
      EXPECT_EQ(tt.astype(DType::Float64).to_vector<double>(), v) << jx::dtype_name(t);
      EXPECT_EQ(jnp::abs(vs).astype(DType::Float64).to_vector<double>(), (std::vector<double>{1, 0, 0, 1}));
    }
    // [[0, 1], [-2, -3]]: eigenvalues -1 and -2, and a unitary similarity keeps the Frobenius
    // norm, so the corner of t has |t01|^2 = (1 + 4 + 9) - 1 - 4 = 9.
    Array a = jnp::array(std::vector<double>{0, 1, -2, -3}, Shape{2, 2}).astype(t);
    auto tv = ll::schur(a).t.astype(DType::Float64).to_vector<double>();
    const double tol = t == DType::Float32 ? 1e-5 : 1e-13;
    EXPECT_EQ(tv[2], 0);
    EXPECT_NEAR(std::min(tv[0], tv[3]), -2, tol);
    EXPECT_NEAR(std::max(tv[0], tv[3]), -1, tol);
    EXPECT_NEAR(std::abs(tv[1]), 3, tol);
  }
  // The rotation as a complex matrix: triangular, with +-i on the diagonal.
  auto [tt, vs] = jx::scipy::linalg::schur(jnp::array(std::vector<double>{0, -1, 1, 0}, Shape{2, 2}), "complex");
  EXPECT_EQ(tt.dtype(), DType::Complex128);
  auto tv = tt.to_vector<C>();
  EXPECT_EQ(tv[2], C(0, 0));
  auto w = sorted({tv[0], tv[3]});
  EXPECT_NEAR(std::abs(w[0] - C(0, -1)), 0, 1e-14);
  EXPECT_NEAR(std::abs(w[1] - C(0, 1)), 0, 1e-14);
  EXPECT_NEAR(std::abs(tv[1]), 0, 1e-14);  // a normal matrix: t is diagonal
}

TEST(LaxSchur, DefiningPropertiesOnRandomBatches) {
  const int64_t n = 7;
  for (DType t : {DType::Float32, DType::Float64, DType::Complex64, DType::Complex128}) {
    const bool cx = jx::is_complex(t);
    const double tol = (t == DType::Float32 || t == DType::Complex64) ? 2e-5 : 1e-12;
    Array a = jx::testing::rand_f64({3, n, n}, 5).astype(t);
    if (cx) a = a + jx::testing::rand_f64({3, n, n}, 6).astype(t) * std::complex<double>(0, 1);
    auto [tt, vs] = ll::schur(a);
    ASSERT_EQ(tt.shape(), (Shape{3, n, n}));
    ASSERT_EQ(vs.shape(), (Shape{3, n, n}));
    EXPECT_EQ(vs.dtype(), t);
    EXPECT_LT(max_abs(jnp::matmul(jnp::matmul(vs, tt), ct(vs)) - a), tol * n) << jx::dtype_name(t);
    EXPECT_LT(max_abs(jnp::matmul(ct(vs), vs) - jnp::eye(n).astype(t)), tol * n) << jx::dtype_name(t);
    // Zero below the first subdiagonal (complex: below the diagonal), exactly.
    Array below = jnp::tril(tt, cx ? -1 : -2);
    EXPECT_EQ(max_abs(below), 0) << jx::dtype_name(t);
    // The eigenvalues are eig's.
    const DType r = jx::real_dtype(t);
    for (int64_t b = 0; b < 3; ++b) {
      std::vector<C> from_t;
      if (cx) {
        auto tv = tt(b).astype(DType::Complex128).to_vector<C>();
        for (int64_t i = 0; i < n; ++i) from_t.push_back(tv[size_t(i * n + i)]);
      } else {
        auto tv = tt(b).astype(DType::Float64).to_vector<double>();
        // The real standard form: 2 x 2 blocks have equal diagonals and b c < 0, and never
        // two subdiagonal entries in a row.
        for (int64_t i = 0; i + 1 < n; ++i) {
          if (tv[size_t((i + 1) * n + i)] == 0) continue;
          EXPECT_EQ(tv[size_t(i * n + i)], tv[size_t((i + 1) * n + i + 1)]);
          EXPECT_LT(tv[size_t(i * n + i + 1)] * tv[size_t((i + 1) * n + i)], 0);
          if (i + 2 < n) {
            EXPECT_EQ(tv[size_t((i + 2) * n + i + 1)], 0);
          }
        }
        from_t = schur_eigenvalues(tv, n);
      }
      Array m = a(b).astype(r);
      if (cx) {
        // eig takes real matrices: a complex one is the real 2n x 2n [[re, -im], [im, re]],
        // whose eigenvalues are a's and their conjugates.
        const size_t count = from_t.size();
        for (size_t k = 0; k < count; ++k) from_t.push_back(std::conj(from_t[k]));
        Array re = jnp::real(a(b)), im = jnp::imag(a(b));
        m = jnp::concatenate({jnp::concatenate({re, -im}, 1), jnp::concatenate({im, re}, 1)}, 0);
      }
      std::vector<C> want = ll::eig(m, false, false).w.astype(DType::Complex128).to_vector<C>();
      auto x = sorted(from_t), y = sorted(want);
      ASSERT_EQ(x.size(), y.size());
      for (size_t k = 0; k < x.size(); ++k) EXPECT_NEAR(std::abs(x[k] - y[k]), 0, tol * 10) << jx::dtype_name(t) << " " << k;
    }
    // Without vectors: the same t (gees' iteration does not depend on accumulating vs).
    Array t_only = ll::schur(a, false).t;
    EXPECT_LT(max_abs(t_only - tt), tol * n) << jx::dtype_name(t);
  }
}

TEST(LaxSchur, EmptyAndBatched) {
  auto [t0, v0] = ll::schur(jnp::zeros(Shape{2, 0, 0}));
  EXPECT_EQ(t0.shape(), (Shape{2, 0, 0}));
  EXPECT_EQ(v0.shape(), (Shape{2, 0, 0}));
  auto [t1, v1] = ll::schur(jnp::zeros(Shape{0, 3, 3}, DType::Complex64));
  EXPECT_EQ(t1.shape(), (Shape{0, 3, 3}));
  Array a = jx::testing::rand_f64({2, 3, 4, 4}, 9);
  auto [t, vs] = ll::schur(a);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      auto [tj, vj] = ll::schur(a(i)(j));
      EXPECT_EQ(t(i)(j).to_vector<double>(), tj.to_vector<double>());
      EXPECT_EQ(vs(i)(j).to_vector<double>(), vj.to_vector<double>());
    }
}

TEST(LaxSchur, VmapEqualsLoopAndJitEqualsEager) {
  Array a = jx::testing::rand_f64({4, 5, 5}, 13);
  auto f = [](const Array& x) { return ll::schur(x).t + ll::schur(x).vs; };
  for (int axis : {0, 1, 2}) {
    Array moved = jnp::moveaxis(a, 0, axis);
    Array batched = jx::vmap(f, {axis})(moved);
    for (int64_t b = 0; b < 4; ++b) EXPECT_EQ(batched(b).to_vector<double>(), f(a(b)).to_vector<double>()) << axis;
  }
  Array c = a.astype(DType::Complex64) * std::complex<float>(1, 2);
  EXPECT_EQ(jx::jit(f)(a).to_vector<double>(), f(a).to_vector<double>());
  auto jc = jx::jit(f)(c).to_vector<std::complex<float>>(), ec = f(c).to_vector<std::complex<float>>();
  EXPECT_EQ(jc, ec);
}

TEST(LaxSchur, ErrorsNameTheProblem) {
  expect_error<jx::DTypeError>([] { ll::schur(jnp::ones(Shape{3, 3}, DType::Int32)); }, {"[schur]", "i32[3,3]", "astype"});
  expect_error<jx::ShapeError>([] { ll::schur(jnp::ones(Shape{3, 4})); }, {"[schur]", "square", "f32[3,4]"});
  expect_error<jx::ShapeError>([] { ll::schur(jnp::ones(Shape{3})); }, {"[schur]", "square"});
  expect_error<jx::ValueError>([] { jx::scipy::linalg::schur(jnp::eye(2), "complex64"); }, {"schur", "\"real\" or \"complex\""});
  // No derivative, as in JAX.
  auto loss = [](const Array& x) { return jnp::sum(ll::schur(x).t); };
  expect_error<jx::ValueError>([&] { jx::grad(loss)(jnp::eye(3)); }, {"[schur]", "no derivative", "eig"});
}

}  // namespace
