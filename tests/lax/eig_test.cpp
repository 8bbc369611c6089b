// lax::linalg::eig and jnp::linalg::eig/eigvals: hand-derived eigenvalues, the defining
// identities a v = v diag(w) and u^H a = diag(w) u^H on random batches, LAPACK's
// normalization (unit norm, largest component real), vmap against a loop, jit against eager,
// and the missing derivative said plainly.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>

#include "jx/jx.h"
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

std::vector<C> sorted(std::vector<C> v) {
  std::sort(v.begin(), v.end(), [](C a, C b) { return a.real() != b.real() ? a.real() < b.real() : a.imag() < b.imag(); });
  return v;
}

TEST(LaxEig, HandDerivedEigenvalues) {
  // [[0, 1], [-2, -3]]: characteristic polynomial l^2 + 3 l + 2, so -1 and -2.
  Array a = jnp::array(std::vector<double>{0, 1, -2, -3}, Shape{2, 2});
  auto w = sorted(ll::eig(a).w.to_vector<C>());
  EXPECT_NEAR(std::abs(w[0] - C(-2, 0)), 0, 1e-14);
  EXPECT_NEAR(std::abs(w[1] - C(-1, 0)), 0, 1e-14);
  // A rotation by 90 degrees: +-i, and complex64 for float32 input.
  Array r = jnp::array(std::vector<float>{0, -1, 1, 0}, Shape{2, 2});
  auto e = ll::eig(r);
  EXPECT_EQ(e.w.dtype(), DType::Complex64);
  auto wr = sorted(e.w.to_vector<C>());
  EXPECT_NEAR(std::abs(wr[0] - C(0, -1)), 0, 1e-6);
  EXPECT_NEAR(std::abs(wr[1] - C(0, 1)), 0, 1e-6);
}

TEST(LaxEig, EigenvectorsSatisfyTheDefinitions) {
  for (DType t : {DType::Float32, DType::Float64}) {
    const double tol = t == DType::Float32 ? 1e-4 : 1e-11;
    Array a = jx::testing::rand_f64({3, 5, 5}, 11).astype(t);  // real, non-symmetric
    auto [w, vl, vr] = ll::eig(a);
    const DType c = jx::complex_dtype(t);
    ASSERT_EQ(w.shape(), (Shape{3, 5}));
    ASSERT_EQ(vr.shape(), (Shape{3, 5, 5}));
    Array ac = a.astype(c);
    Array wd = jnp::expand_dims(w, -2);  // [3, 1, 5]: scales column k by w[k]
    Array right = jnp::matmul(ac, vr) - vr * wd;
    Array left = jnp::matmul(jnp::swapaxes(jnp::conj(vl), -1, -2), ac) -
                 jnp::swapaxes(jnp::conj(vl), -1, -2) * jnp::expand_dims(w, -1);
    EXPECT_LT(jnp::max(jnp::abs(right)).item<double>(), tol) << jx::dtype_name(t);
    EXPECT_LT(jnp::max(jnp::abs(left)).item<double>(), tol) << jx::dtype_name(t);
    // Unit columns.
    Array norms = jnp::sqrt(jnp::sum(jnp::square(jnp::abs(vr)), -2));
    for (double n : norms.to_vector<double>()) EXPECT_NEAR(n, 1.0, tol);
    // Eigenvalues only, and the jnp functions.
    auto only = ll::eig(a, false, false);
    EXPECT_FALSE(only.vl.valid());
    EXPECT_FALSE(only.vr.valid());
    EXPECT_EQ(only.w.to_vector<C>(), w.to_vector<C>());
    EXPECT_EQ(jnp::linalg::eigvals(a).to_vector<C>(), w.to_vector<C>());
    EXPECT_EQ(jnp::linalg::eig(a).eigenvectors.to_vector<C>(), vr.to_vector<C>());
  }
}

TEST(LaxEig, VmapAndJitEqualEager) {
  Array a = jx::testing::rand_f64({4, 3, 3}, 5);
  auto f = [](const Array& x) { return ll::eig(x, false, true).vr; };
  Array batched = jx::vmap(f)(a);
  for (int64_t b = 0; b < 4; ++b) EXPECT_EQ(batched(b).to_vector<C>(), f(a(b)).to_vector<C>());
  EXPECT_EQ(jx::jit(f)(a).to_vector<C>(), f(a).to_vector<C>());
  auto g = [](const Array& x) { return ll::eig(x).w; };
  EXPECT_EQ(jx::jit(g)(a).to_vector<C>(), g(a).to_vector<C>());
}

TEST(LaxEig, EigenvalueDerivatives) {
  // d(sum of eigenvalues) = d trace: the gradient is the identity.
  auto trace = [](const Array& x) { return jnp::sum(jnp::real(ll::eig(x, false, false).w)); };
  Array a = jx::testing::rand_f64({4, 4}, 3);
  Array g = jx::grad(trace)(a);
  Array eye = jnp::eye(4, std::nullopt, 0, DType::Float64);
  EXPECT_LT(jnp::max(jnp::abs(g - eye)).item<double>(), 1e-12);
  // The complex eigenvalues of a random matrix, forward and reverse, against finite
  // differences and each other.
  auto f = [](const std::vector<Array>& x) { return std::vector<Array>{ll::eig(x[0], false, false).w}; };
  EXPECT_NO_THROW(jx::testing::check_grads(f, {a}, {.order = 1, .atol = 1e-6, .rtol = 1e-6}));
  // Eigenvectors have no derivative, as in JAX.
  auto vecs = [](const Array& x) { return jnp::sum(jnp::abs(ll::eig(x).vr)); };
  expect_error<jx::ValueError>([&] { jx::grad(vecs)(a); }, {"[eig]", "eigenvectors are not implemented", "eigvals"});
}

TEST(LaxEig, Errors) {
  expect_error<jx::ShapeError>([] { ll::eig(jnp::zeros(Shape{2, 3})); }, {"[eig]", "square"});
  expect_error<jx::DTypeError>([] { ll::eig(jnp::zeros(Shape{2, 2}, DType::Int32)); }, {"[eig]", "i32[2,2]"});
  Array empty = ll::eig(jnp::zeros(Shape{0, 0})).w;
  EXPECT_EQ(empty.shape(), (Shape{0}));
}

}  // namespace
