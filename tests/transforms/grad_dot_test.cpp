// Autodiff rules of the dot family (dot_general) and the random family (threefry2x32).
// dot_general is checked with check_grads over many dimension numbers, its transpose
// against the explicit Jacobian built column by column from the forward function, and a
// few gradients against hand-derived values.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "jx/transforms.h"
#include "ops/primitive.h"
#include "testing/check_grads.h"
#include "testing/jaxpr_text.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::check_grads;
using jx::testing::expect_close;
using jx::testing::rand_f64;

struct DotCase {
  std::string name;
  Shape lhs, rhs;
  lax::DotDimensionNumbers dn;
};

std::vector<DotCase> cases() {
  return {
      {"matmul", {3, 4}, {4, 5}, {{1}, {0}, {}, {}}},
      {"vecvec", {4}, {4}, {{0}, {0}, {}, {}}},
      {"matvec", {3, 4}, {4}, {{1}, {0}, {}, {}}},
      {"vecmat", {4}, {4, 2}, {{0}, {0}, {}, {}}},
      {"outer", {3}, {2}, {{}, {}, {}, {}}},
      {"scalars", {}, {}, {{}, {}, {}, {}}},
      {"scalar_times_matrix", {}, {2, 3}, {{}, {}, {}, {}}},
      {"lhs_contract_first", {4, 3}, {4, 5}, {{0}, {0}, {}, {}}},
      {"rhs_contract_last", {3, 4}, {5, 4}, {{1}, {1}, {}, {}}},
      {"batched", {2, 3, 4}, {2, 4, 5}, {{2}, {1}, {0}, {0}}},
      {"batch_not_leading", {3, 2, 4}, {4, 5, 2}, {{2}, {0}, {1}, {2}}},
      {"two_contracting", {4, 2, 3, 5}, {5, 4, 2, 6}, {{3, 0}, {0, 1}, {1}, {2}}},
      {"two_contracting_swapped", {4, 2, 3, 5}, {4, 5, 2, 6}, {{0, 3}, {0, 1}, {1}, {2}}},
      {"contract_order_reversed", {4, 3, 5}, {5, 2, 4}, {{0, 2}, {2, 0}, {}, {}}},
      {"two_batch_dims", {2, 3, 4, 2}, {3, 2, 2, 4}, {{2}, {3}, {3, 0}, {2, 1}}},
      {"size1_dims", {1, 4}, {4, 1}, {{1}, {0}, {}, {}}},
      {"size0_contraction", {3, 0}, {0, 4}, {{1}, {0}, {}, {}}},
      {"size0_free", {0, 4}, {4, 5}, {{1}, {0}, {}, {}}},
      {"size0_batch", {0, 2, 3}, {0, 3, 2}, {{2}, {1}, {0}, {0}}},
  };
}

TEST(GradDot, CheckGradsBothOperands) {
  unsigned seed = 1;
  for (const DotCase& c : cases()) {
    SCOPED_TRACE(c.name);
    Array x = rand_f64(c.lhs, seed++), w = rand_f64(c.rhs, seed++);
    auto f = [dn = c.dn](const std::vector<Array>& a) {
      return std::vector<Array>{lax::dot_general(a[0], a[1], dn)};
    };
    EXPECT_NO_THROW(check_grads(f, {x, w}, {.order = 2})) << c.name;
    // Each operand alone (the other a constant): only one tangent is non-zero.
    auto f_lhs = [&, dn = c.dn](const std::vector<Array>& a) {
      return std::vector<Array>{lax::dot_general(a[0], w, dn)};
    };
    auto f_rhs = [&, dn = c.dn](const std::vector<Array>& a) {
      return std::vector<Array>{lax::dot_general(x, a[0], dn)};
    };
    EXPECT_NO_THROW(check_grads(f_lhs, {x}, {.order = 2})) << c.name;
    EXPECT_NO_THROW(check_grads(f_rhs, {w}, {.order = 2})) << c.name;
  }
}

TEST(GradDot, SameOperandOnBothSides) {
  // x x^T through contracting dim 1 with itself: both tangents are live at once.
  Array x = rand_f64({3, 4}, 7);
  auto f = [](const std::vector<Array>& a) {
    return std::vector<Array>{lax::dot_general(a[0], a[0], {{1}, {1}, {}, {}})};
  };
  EXPECT_NO_THROW(check_grads(f, {x}, {.order = 2}));
  auto g = [](const std::vector<Array>& a) {  // batched x_b^T x_b
    return std::vector<Array>{lax::dot_general(a[0], a[0], {{1}, {1}, {0}, {0}})};
  };
  EXPECT_NO_THROW(check_grads(g, {rand_f64({2, 3, 2}, 8)}, {.order = 2}));
}

// Expected cotangent J^T u, with J built column by column from the forward function at
// unit vectors (the forward dot_general is tested on its own), summed in plain C++.
std::vector<double> explicit_vjp(const std::function<Array(const Array&)>& f, const Shape& in,
                                 const Array& u) {
  const int64_t n = in.numel();
  std::vector<double> uv = u.to_vector<double>(), ct(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> e(static_cast<size_t>(n), 0.0);
    e[size_t(i)] = 1.0;
    std::vector<double> col = f(jnp::array(e, in)).to_vector<double>();
    for (size_t k = 0; k < col.size(); ++k) ct[size_t(i)] += col[k] * uv[k];
  }
  return ct;
}

TEST(GradDot, TransposeMatchesExplicitJacobian) {
  unsigned seed = 100;
  for (const DotCase& c : cases()) {
    SCOPED_TRACE(c.name);
    Array x = rand_f64(c.lhs, seed++), w = rand_f64(c.rhs, seed++);
    Array y = lax::dot_general(x, w, c.dn);
    Array u = rand_f64(y.shape(), seed++);
    auto fl = [&](const Array& a) { return lax::dot_general(a, w, c.dn); };
    auto fr = [&](const Array& b) { return lax::dot_general(x, b, c.dn); };
    auto [yl, vjp_l] = jx::vjp(fl, x);
    auto [yr, vjp_r] = jx::vjp(fr, w);
    auto [ctx] = vjp_l(u);
    auto [ctw] = vjp_r(u);
    ASSERT_EQ(ctx.shape(), c.lhs);
    ASSERT_EQ(ctw.shape(), c.rhs);
    EXPECT_EQ(ctx.dtype(), DType::Float64);
    expect_close(ctx, jnp::array(explicit_vjp(fl, c.lhs, u), c.lhs), 1e-12, 1e-12, c.name + " lhs");
    expect_close(ctw, jnp::array(explicit_vjp(fr, c.rhs, u), c.rhs), 1e-12, 1e-12, c.name + " rhs");
  }
}

TEST(GradDot, LinearizeOfBothOperandsTransposes) {
  // linearize at (x, w), then transpose the joint linear map: <u, J (dx, dw)> identity.
  Array x = rand_f64({2, 3}, 11), w = rand_f64({3, 2}, 12), u = rand_f64({2, 2}, 13);
  jx::ad::LinearFn lin = jx::ad::linearize_flat(
      [](const std::vector<Array>& a) { return std::vector<Array>{lax::dot(a[0], a[1])}; }, {x, w});
  std::vector<Array> ct = lin.transpose({u});
  // d<u, x w>/dx = u w^T, d/dw = x^T u.
  std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>(), uv = u.to_vector<double>();
  std::vector<double> ex(6, 0.0), ew(6, 0.0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) {
        ex[size_t(i * 3 + j)] += uv[size_t(i * 2 + k)] * wv[size_t(j * 2 + k)];
        ew[size_t(j * 2 + k)] += xv[size_t(i * 3 + j)] * uv[size_t(i * 2 + k)];
      }
  expect_close(ct[0], jnp::array(ex, Shape{2, 3}), 1e-14, 1e-14, "dx");
  expect_close(ct[1], jnp::array(ew, Shape{3, 2}), 1e-14, 1e-14, "dw");
}

TEST(GradDot, HandDerivedMatmul) {
  // y = x w with x [1,2], w [2,2]; vjp with u = ones: dx = row sums of w, dw[j,k] = x[j].
  Array x = jnp::array<float>({{1.0f, 2.0f}});
  Array w = jnp::array<float>({{3.0f, 4.0f}, {5.0f, 6.0f}});
  auto [y, f_vjp] = jx::vjp([](const Array& a, const Array& b) { return lax::dot(a, b); }, x, w);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{13.0f, 16.0f}));
  auto [dx, dw] = f_vjp(jnp::array<float>({{1.0f, 1.0f}}));
  EXPECT_EQ(dx.to_vector<float>(), (std::vector<float>{7.0f, 11.0f}));
  EXPECT_EQ(dw.to_vector<float>(), (std::vector<float>{1.0f, 1.0f, 2.0f, 2.0f}));
  // jvp: d(x w) = dx w + x dw.
  auto [y2, t] = jx::jvp([](const Array& a, const Array& b) { return lax::dot(a, b); },
                         std::make_tuple(x, w),
                         std::make_tuple(jnp::array<float>({{1.0f, 0.0f}}),
                                         jnp::array<float>({{0.0f, 1.0f}, {0.0f, 0.0f}})));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{3.0f, 4.0f + 1.0f}));
}

TEST(GradDot, VecVecSecondOrder) {
  // f(x) = <x, x>: grad 2x, and its jvp along v is 2v (Hessian 2I).
  Array x = jnp::array<double>({1.0, -2.0, 0.5});
  auto f = [](const Array& a) { return lax::dot(a, a); };
  EXPECT_EQ(jx::grad(f)(x).to_vector<double>(), (std::vector<double>{2.0, -4.0, 1.0}));
  auto [g, h] = jx::jvp(jx::grad(f), std::make_tuple(x),
                        std::make_tuple(jnp::array<double>({0.0, 1.0, 3.0})));
  EXPECT_EQ(h.to_vector<double>(), (std::vector<double>{0.0, 2.0, 6.0}));
}

TEST(GradDot, PreferredElementType) {
  // float32 operands accumulated in float64: the tangent is float64 (the output's type),
  // the cotangents come back in the operands' float32.
  Array x = jnp::array<float>({{1.0f, 2.0f}, {3.0f, 4.0f}});
  Array w = jnp::array<float>({{0.5f, -1.0f}, {2.0f, 0.25f}});
  auto f = [](const Array& a, const Array& b) {
    return lax::dot_general(a, b, {{1}, {0}, {}, {}}, DType::Float64);
  };
  auto [y, t] = jx::jvp(f, std::make_tuple(x, w), std::make_tuple(x, jnp::zeros_like(w)));
  EXPECT_EQ(y.dtype(), DType::Float64);
  EXPECT_EQ(t.dtype(), DType::Float64);
  EXPECT_EQ(t.to_vector<double>(), y.to_vector<double>());  // linear in x: J x = f(x)
  auto [y2, f_vjp] = jx::vjp(f, x, w);
  auto [dx, dw] = f_vjp(jnp::ones({2, 2}, DType::Float64));
  EXPECT_EQ(dx.dtype(), DType::Float32);
  EXPECT_EQ(dw.dtype(), DType::Float32);
  EXPECT_EQ(dx.to_vector<float>(), (std::vector<float>{-0.5f, 2.25f, -0.5f, 2.25f}));
  EXPECT_EQ(dw.to_vector<float>(), (std::vector<float>{4.0f, 4.0f, 6.0f, 6.0f}));
  // bfloat16 operands with a float32 result: cotangents are bfloat16.
  Array xb = x.astype(DType::BFloat16), wb = w.astype(DType::BFloat16);
  auto fb = [](const Array& a, const Array& b) {
    return lax::dot_general(a, b, {{1}, {0}, {}, {}}, DType::Float32);
  };
  auto [yb, vjp_b] = jx::vjp(fb, xb, wb);
  EXPECT_EQ(yb.dtype(), DType::Float32);
  auto [dxb, dwb] = vjp_b(jnp::ones({2, 2}, DType::Float32));
  EXPECT_EQ(dxb.dtype(), DType::BFloat16);
  EXPECT_EQ(dwb.dtype(), DType::BFloat16);
  EXPECT_EQ(dxb.astype(DType::Float32).to_vector<float>(),
            (std::vector<float>{-0.5f, 2.25f, -0.5f, 2.25f}));
}

TEST(GradDot, Float32GradientDtype) {
  Array x = jnp::array<float>({1.0f, 2.0f, 3.0f});
  Array w = jnp::array<float>({4.0f, 5.0f, 6.0f});
  Array g = jx::grad([&](const Array& a) { return lax::dot(a, w); })(x);
  EXPECT_EQ(g.dtype(), DType::Float32);
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{4.0f, 5.0f, 6.0f}));
}

TEST(GradDot, JnpContractions) {
  // The jnp front ends compose dot_general with reshape/transpose/broadcast: their
  // gradients exercise the dot rules under the dimension orders jnp actually produces.
  using F = std::function<Array(const Array&, const Array&)>;
  struct C {
    std::string name;
    Shape a, b;
    F f;
  };
  const std::vector<C> cs = {
      {"matmul", {3, 4}, {4, 2}, [](const Array& a, const Array& b) { return jnp::matmul(a, b); }},
      {"matmul_broadcast_batch", {2, 1, 3, 4}, {3, 4, 2},
       [](const Array& a, const Array& b) { return jnp::matmul(a, b); }},
      {"matmul_vec", {4}, {2, 4, 3}, [](const Array& a, const Array& b) { return jnp::matmul(a, b); }},
      {"vdot", {2, 3}, {3, 2}, [](const Array& a, const Array& b) { return jnp::vdot(a, b); }},
      {"tensordot", {2, 3, 4}, {3, 4, 5},
       [](const Array& a, const Array& b) { return jnp::tensordot(a, b, 2); }},
      {"einsum_bij_bjk", {2, 3, 4}, {2, 4, 3},
       [](const Array& a, const Array& b) { return jnp::einsum("bij,bjk->bki", a, b); }},
  };
  unsigned seed = 300;
  for (const C& c : cs) {
    SCOPED_TRACE(c.name);
    Array a = rand_f64(c.a, seed++), b = rand_f64(c.b, seed++);
    auto f = [&](const std::vector<Array>& x) { return std::vector<Array>{c.f(x[0], x[1])}; };
    EXPECT_NO_THROW(check_grads(f, {a, b}, {.order = 2})) << c.name;
  }
}

TEST(GradDot, JaxprOfGradientMatchesJax) {
  // jax.make_jaxpr(jax.grad(lambda x, w: jnp.sum(x @ w), (0, 1))) computes
  //   f = dot_general[(([1], [1]), ([], []))] ct w     (x's cotangent, no transpose)
  //   g = dot_general[(([0], [0]), ([], []))] ct x; h = transpose[(1, 0)] g   (w's)
  // jx departs on purpose for w's cotangent: it contracts x with ct in the order that
  // gives w's layout directly (dot_general x ct), so eager grad materializes no transpose.
  auto g = [](const Array& a, const Array& b) {
    return jx::grad<0, 1>([](const Array& p, const Array& q) { return jnp::sum(lax::dot(p, q)); })(a, b);
  };
  const std::string j =
      jx::testing::unbroken(jx::make_jaxpr(g)(jnp::ones({2, 3}), jnp::ones({3, 4})).str());
  EXPECT_NE(j.find("f32[3,4] = dot_general[lhs_batch=() lhs_contracting=(0,) rhs_batch=() "
                   "rhs_contracting=(0,)] a e"),
            std::string::npos)
      << j;
  EXPECT_EQ(j.find("transpose"), std::string::npos) << j;
  EXPECT_NE(j.find("f32[2,3] = dot_general[lhs_batch=() lhs_contracting=(1,) rhs_batch=() "
                   "rhs_contracting=(1,)]"),
            std::string::npos)
      << j;
}

TEST(GradDot, RulesRegistered) {
  for (const std::string& line : jx::ops::missing_rules({.jvp = true, .transpose = true})) {
    EXPECT_NE(line.rfind("dot_general:", 0), 0u) << line;
    EXPECT_NE(line.rfind("threefry2x32:", 0), 0u) << line;
  }
  const auto& t = jx::ops::info(jx::ops::Prim::Threefry2x32);
  EXPECT_TRUE(t.zero_tangent);
  EXPECT_TRUE(t.not_linear);
}

TEST(GradRandom, ThreefryHasZeroTangent) {
  // Random bits do not depend on a float input: the threefry outputs carry no tangent, so
  // a function of (x, bits) differentiates as if the bits were constants.
  Array key = jx::random::PRNGKey(0);
  auto f = [&](const Array& x) {
    Array u = jx::random::uniform(key, {3}, DType::Float64);
    return lax::dot(x, u);
  };
  Array x = jnp::array<double>({1.0, 2.0, 3.0});
  Array u = jx::random::uniform(key, {3}, DType::Float64);
  EXPECT_EQ(jx::grad(f)(x).to_vector<double>(), u.to_vector<double>());
}

}  // namespace
