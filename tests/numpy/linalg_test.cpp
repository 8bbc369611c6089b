// jnp contractions and jnp.linalg against NumPy goldens (tests/golden/gen_linalg.py),
// structural checks for decompositions with sign freedom, dtype rules and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "jx/jx.h"
#include "testing/expect_error.h"

namespace {

namespace jnp = jx::numpy;
namespace la = jx::numpy::linalg;
using jx::Array;
using jx::DType;
using jx::Shape;

struct LinalgCase {
  const char* fn;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<double>> inputs;
  std::vector<int64_t> out_shape;
  std::vector<double> out;
};

const LinalgCase kCases[] = {
#include "golden/linalg_golden.inc"
};

using Fn = std::function<Array(const std::vector<Array>&)>;

const std::map<std::string, Fn>& functions() {
  static const std::map<std::string, Fn> m = {
      {"matmul", [](auto& x) { return jnp::matmul(x[0], x[1]); }},
      {"dot", [](auto& x) { return jnp::dot(x[0], x[1]); }},
      {"tensordot2", [](auto& x) { return jnp::tensordot(x[0], x[1], 2); }},
      {"tensordot1", [](auto& x) { return jnp::tensordot(x[0], x[1], 1); }},
      {"tensordot0", [](auto& x) { return jnp::tensordot(x[0], x[1], 0); }},
      {"tensordot_pairs", [](auto& x) { return jnp::tensordot(x[0], x[1], {{1, 0}, {0, 2}}); }},
      {"inner", [](auto& x) { return jnp::inner(x[0], x[1]); }},
      {"outer", [](auto& x) { return jnp::outer(x[0], x[1]); }},
      {"vdot", [](auto& x) { return jnp::vdot(x[0], x[1]); }},
      {"kron", [](auto& x) { return jnp::kron(x[0], x[1]); }},
      {"trace", [](auto& x) { return jnp::trace(x[0]); }},
      {"trace_off1", [](auto& x) { return jnp::trace(x[0], 1); }},
      {"trace_axes12", [](auto& x) { return jnp::trace(x[0], 0, 1, 2); }},
      {"vecdot", [](auto& x) { return jnp::vecdot(x[0], x[1]); }},
      {"vecdot_axis0", [](auto& x) { return jnp::vecdot(x[0], x[1], 0); }},
      {"det", [](auto& x) { return la::det(x[0]); }},
      {"slogdet_sign", [](auto& x) { return la::slogdet(x[0]).sign; }},
      {"slogdet_log", [](auto& x) { return la::slogdet(x[0]).logabsdet; }},
      {"inv", [](auto& x) { return la::inv(x[0]); }},
      {"solve", [](auto& x) { return la::solve(x[0], x[1]); }},
      {"solve_vec", [](auto& x) { return la::solve(x[0], x[1]); }},
      {"cholesky", [](auto& x) { return la::cholesky(x[0]); }},
      {"qr_r", [](auto& x) { return la::qr(x[0]).R; }},
      {"qr_q", [](auto& x) { return la::qr(x[0]).Q; }},
      {"eigvalsh", [](auto& x) { return la::eigvalsh(x[0]); }},
      {"svdvals", [](auto& x) { return la::svdvals(x[0]); }},
      {"pinv", [](auto& x) { return la::pinv(x[0]); }},
      {"lstsq_x", [](auto& x) { return la::lstsq(x[0], x[1]).x; }},
      {"lstsq_resid", [](auto& x) { return la::lstsq(x[0], x[1]).residuals; }},
      {"matrix_power3", [](auto& x) { return la::matrix_power(x[0], 3); }},
      {"matrix_power0", [](auto& x) { return la::matrix_power(x[0], 0); }},
      {"matrix_power-2", [](auto& x) { return la::matrix_power(x[0], -2); }},
      {"matrix_rank", [](auto& x) { return la::matrix_rank(x[0]); }},
      {"norm", [](auto& x) { return la::norm(x[0]); }},
      {"norm_inf", [](auto& x) { return la::norm(x[0], INFINITY); }},
      {"norm_-inf", [](auto& x) { return la::norm(x[0], -INFINITY); }},
      {"norm_1", [](auto& x) { return la::norm(x[0], 1); }},
      {"norm_-1", [](auto& x) { return la::norm(x[0], -1); }},
      {"norm_0", [](auto& x) { return la::norm(x[0], 0); }},
      {"norm_3", [](auto& x) { return la::norm(x[0], 3); }},
      {"norm_2", [](auto& x) { return la::norm(x[0], 2); }},
      {"norm_-2", [](auto& x) { return la::norm(x[0], -2); }},
      {"norm_fro", [](auto& x) { return la::norm(x[0], "fro"); }},
      {"norm_nuc", [](auto& x) { return la::norm(x[0], "nuc"); }},
      {"norm_axis1", [](auto& x) { return la::norm(x[0], {}, 1); }},
      {"norm_axis01_keep", [](auto& x) { return la::norm(x[0], {}, {0, 1}, true); }},
  };
  return m;
}

void check_case(const LinalgCase& c, DType t, double tol) {
  SCOPED_TRACE(std::string(c.fn) + " " + jx::dtype_name(t) + " case shape " +
               jx::shape_str(Shape(c.shapes[0])));
  std::vector<Array> ops;
  for (size_t i = 0; i < c.shapes.size(); ++i)
    ops.push_back(jnp::array(c.inputs[i], Shape(c.shapes[i])).astype(t));
  auto it = functions().find(c.fn);
  ASSERT_NE(it, functions().end()) << "no jx function for golden " << c.fn;
  Array r = it->second(ops);
  ASSERT_EQ(r.shape(), Shape(c.out_shape));
  auto v = r.to_vector<double>();
  ASSERT_EQ(v.size(), c.out.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isinf(c.out[i])) EXPECT_EQ(v[i], c.out[i]) << i;
    else EXPECT_NEAR(v[i], c.out[i], tol * (1 + std::abs(c.out[i]))) << i;
  }
}

TEST(Linalg, MatchesNumPyFloat64) {
  for (const auto& c : kCases) check_case(c, DType::Float64, 1e-9);
}

TEST(Linalg, MatchesNumPyFloat32) {
  for (const auto& c : kCases) {
    std::string f = c.fn;
    if (f == "det" && c.out.size() == 1 && c.out[0] == 0) continue;  // singular: rounding decides
    check_case(c, DType::Float32, 2e-4);
  }
}

// ---- decompositions with sign freedom: check the defining identities ----

Array mT(const Array& a) { return jnp::swapaxes(a, -1, -2); }

void expect_close(const Array& a, const Array& b, double tol) {
  ASSERT_EQ(a.shape(), b.shape());
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], tol) << i;
}

Array random_matrix(const Shape& s, uint64_t seed) {
  std::vector<double> v(static_cast<size_t>(s.numel()));
  uint64_t x = seed * 2654435761u + 1;
  for (auto& e : v) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    e = double((x >> 33) % 2001) / 1000.0 - 1.0;
  }
  return jnp::array(v, s);
}

TEST(Linalg, QrIdentities) {
  for (Shape s : {Shape{5, 3}, Shape{3, 5}, Shape{2, 4, 4}, Shape{6, 1}}) {
    Array a = random_matrix(s, 3);
    auto [q, r] = la::qr(a);
    expect_close(jnp::matmul(q, r), a, 1e-12);
    int64_t k = std::min(s[s.size() - 2], s[s.size() - 1]);
    expect_close(jnp::matmul(mT(q), q), jnp::broadcast_to(jnp::eye(k, std::nullopt, 0, DType::Float64),
                                                          jnp::matmul(mT(q), q).shape()), 1e-12);
    auto full = la::qr(a, "complete");
    int64_t m = s[s.size() - 2];
    EXPECT_EQ(full.Q.shape()[full.Q.ndim() - 1], m);
    expect_close(jnp::matmul(full.Q, full.R), a, 1e-12);
    EXPECT_FALSE(la::qr(a, "r").Q.valid());
  }
}

TEST(Linalg, EighIdentities) {
  Array b = random_matrix({2, 5, 5}, 4);
  Array a = b + mT(b);
  auto [w, v] = la::eigh(a);
  // a v = v diag(w), v^T v = I
  expect_close(jnp::matmul(a, v), v * jnp::expand_dims(w, -2), 1e-10);
  expect_close(jnp::matmul(mT(v), v), jnp::broadcast_to(jnp::eye(5, std::nullopt, 0, DType::Float64), {2, 5, 5}), 1e-10);
  auto wv = w.to_vector<double>();
  for (size_t i = 1; i < 5; ++i) EXPECT_LE(wv[i - 1], wv[i]);
}

TEST(Linalg, SvdIdentities) {
  for (Shape s : {Shape{5, 3}, Shape{3, 5}, Shape{4, 4}}) {
    Array a = random_matrix(s, 5);
    for (bool full : {false, true}) {
      auto [u, sv, vh] = la::svd(a, full);
      int64_t m = s[0], n = s[1], k = std::min(m, n);
      EXPECT_EQ(u.shape(), (Shape{m, full ? m : k}));
      EXPECT_EQ(vh.shape(), (Shape{full ? n : k, n}));
      Array uk = jnp::matmul(u, jnp::eye(u.shape(1), k, 0, DType::Float64));
      Array vk = jnp::matmul(jnp::eye(k, vh.shape(0), 0, DType::Float64), vh);
      expect_close(jnp::matmul(uk * sv, vk), a, 1e-12);
      expect_close(jnp::matmul(mT(u), u), jnp::eye(u.shape(1), std::nullopt, 0, DType::Float64), 1e-12);
      expect_close(jnp::matmul(vh, mT(vh)), jnp::eye(vh.shape(0), std::nullopt, 0, DType::Float64), 1e-12);
    }
  }
  // Rank-deficient: U is still orthonormal.
  Array a = jnp::array<double>({{1, 2, 3}, {2, 4, 6}, {1, 1, 1}, {0, 0, 0}});
  auto [u, sv, vh] = la::svd(a, true);
  expect_close(jnp::matmul(mT(u), u), jnp::eye(4, std::nullopt, 0, DType::Float64), 1e-12);
  EXPECT_NEAR(sv.to_vector<double>()[2], 0.0, 1e-12);
}

TEST(Linalg, CholeskyNotPositiveDefiniteGivesNaN) {
  Array a = jnp::array<double>({{1, 2}, {2, 1}});
  for (double x : la::cholesky(a).to_vector<double>()) EXPECT_TRUE(std::isnan(x));
  Array p = jnp::array<double>({{4, 2}, {2, 3}});
  expect_close(la::cholesky(p, true), mT(la::cholesky(p)), 0);
}

TEST(Linalg, DtypesAndWeakTypes) {
  Array i = jnp::array<int32_t>({{2, 0}, {0, 4}});
  EXPECT_EQ(la::det(i).dtype(), DType::Float32);
  EXPECT_EQ(la::det(i).item<float>(), 8.0f);
  EXPECT_EQ(la::inv(i).dtype(), DType::Float32);
  Array f = jnp::array<float>({{1, 2}, {3, 4}});
  Array m = jnp::matmul(f, Array(2.0) * jnp::eye(2));
  EXPECT_EQ(m.dtype(), DType::Float32);
  EXPECT_EQ(jnp::matmul(jnp::array<int8_t>({1, 2}), jnp::array<int8_t>({3, 4})).dtype(), DType::Int8);
  EXPECT_EQ(jnp::dot(jnp::array<int8_t>({100, 100}), jnp::array<int8_t>({2, 1}), DType::Int32).item<int32_t>(), 300);
  EXPECT_EQ(jnp::matmul(jnp::array<int32_t>({1, 2}), jnp::array<float>({3, 4})).dtype(), DType::Float32);
  EXPECT_EQ(f.dot(f).to_vector<float>(), (std::vector<float>{7, 10, 15, 22}));
  EXPECT_EQ(la::matrix_rank(jnp::array<float>({0, 0})).item<int32_t>(), 0);
  EXPECT_EQ(la::matrix_power(jnp::array<int32_t>({{1, 1}, {0, 1}}), 5).to_vector<int32_t>(),
            (std::vector<int32_t>{1, 5, 0, 1}));
  EXPECT_EQ(jnp::trace(jnp::array<int8_t>({{100, 0}, {0, 100}})).dtype(), DType::Int32);
  EXPECT_EQ(jnp::trace(jnp::array<int8_t>({{100, 0}, {0, 100}})).item<int32_t>(), 200);
}

using jx::testing::expect_error;

TEST(Linalg, Errors) {
  expect_error<jx::ShapeError>([] { jnp::matmul(jnp::zeros({3, 4}), jnp::zeros({5, 6})); },
                               "[matmul] contracting dimensions differ: f32[3,4] @ f32[5,6]; a has "
                               "4 columns but b has 5 rows");
  expect_error<jx::ShapeError>([] { jnp::matmul(jnp::zeros({2, 3, 4}), jnp::zeros({3, 4, 5})); },
                               "[matmul] batch dimensions do not broadcast: f32[2,3,4] @ f32[3,4,5]; "
                               "2 vs 3 at batch axis 0");
  expect_error<jx::ValueError>([] { jnp::matmul(jnp::zeros({}), jnp::zeros({3})); },
                               "[matmul] operand 0 must have at least one dimension, got f32[]");
  expect_error<jx::ShapeError>([] { jnp::dot(jnp::zeros({3, 4}), jnp::zeros({5})); },
                               "[dot] contracting dimensions differ: f32[3,4] · f32[5]");
  expect_error<jx::ShapeError>([] { jnp::vdot(jnp::zeros({3}), jnp::zeros({4})); },
                               "[vdot] operands must have the same number of elements, got f32[3] "
                               "and f32[4]");
  expect_error<jx::ValueError>([] { jnp::tensordot(jnp::zeros({3}), jnp::zeros({3}), 2); },
                               "[tensordot] the number of axes (2) must be between 0 and the "
                               "smaller rank of f32[3] and f32[3]");
  expect_error<jx::ValueError>([] { jnp::tensordot(jnp::zeros({3}), jnp::zeros({3}), {{0}, {}}); },
                               "[tensordot] the axes lists must have equal length, got (0,) and ()");
  expect_error<jx::ShapeError>([] { la::det(jnp::zeros({2, 3})); },
                               "[linalg.det] needs square matrices in the last two dims, got f32[2,3]");
  expect_error<jx::ShapeError>([] { la::inv(jnp::zeros({3})); },
                               "[linalg.inv] needs an array of rank >= 2 (a stack of matrices), got "
                               "f32[3]");
  expect_error<jx::ShapeError>([] { la::solve(jnp::zeros({3, 3}), jnp::zeros({4})); },
                               "[linalg.solve] a is f32[3,3] but b is f32[4]; b needs 3 rows");
  expect_error<jx::ValueError>([] { la::qr(jnp::zeros({3, 3}), "full"); },
                               "[linalg.qr] unknown mode \"full\"");
  expect_error<jx::ValueError>([] { la::norm(jnp::zeros({3}), "fro"); },
                               "[linalg.norm] invalid order \"fro\" for a vector norm");
  expect_error<jx::ValueError>([] { la::norm(jnp::zeros({3, 3}), 3); },
                               "[linalg.norm] invalid order 3 for a matrix norm");
  expect_error<jx::ValueError>([] { la::norm(jnp::zeros({3, 3, 3}), {}, {0, 1, 2}); },
                               "[linalg.norm] improper number of axes (0, 1, 2)");
}

}  // namespace
