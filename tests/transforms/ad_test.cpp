// The transformation API: values hand-derived, jaxprs against JAX's printouts.
#include <gtest/gtest.h>

#include <cmath>

#include "jx/jx.h"
#include "jx/transforms.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;

Array f32(float v) { return jnp::array<float>({v}).reshape({}); }
Array f64(double v) { return jnp::array<double>({v}).reshape({}); }

TEST(Grad, Polynomial) {
  auto f = [](const Array& x) { return x * x * x; };  // f' = 3x^2, f'' = 6x
  EXPECT_FLOAT_EQ(jx::grad(f)(f32(2.0f)).item<float>(), 12.0f);
  EXPECT_FLOAT_EQ(jx::grad(jx::grad(f))(f32(2.0f)).item<float>(), 12.0f);
  EXPECT_FLOAT_EQ(jx::grad(jx::grad(jx::grad(f)))(f32(2.0f)).item<float>(), 6.0f);
}

TEST(Grad, ValueAndGradArgnums) {
  auto f = [](const Array& x, const Array& y) { return jnp::sum(x * y + jnp::sin(x)); };
  Array x = jnp::array<float>({0.5f, 1.0f}), y = jnp::array<float>({2.0f, 3.0f});
  auto [v, g] = jx::value_and_grad(f)(x, y);
  EXPECT_NEAR(v.item<float>(), 0.5f * 2 + 3 + std::sin(0.5f) + std::sin(1.0f), 1e-6);
  std::vector<float> gx = g.to_vector<float>();
  EXPECT_NEAR(gx[0], 2 + std::cos(0.5f), 1e-6);
  EXPECT_NEAR(gx[1], 3 + std::cos(1.0f), 1e-6);
  auto [gx2, gy2] = jx::grad<0, 1>(f)(x, y);
  EXPECT_EQ(gy2.to_vector<float>(), (std::vector<float>{0.5f, 1.0f}));
  EXPECT_EQ(gx2.to_vector<float>(), gx);
  Array gy = jx::grad<1>(f)(x, y);
  EXPECT_EQ(gy.to_vector<float>(), (std::vector<float>{0.5f, 1.0f}));
}

TEST(Grad, PytreeArgumentsAndAux) {
  using Params = std::map<std::string, Array>;
  auto loss = [](const Params& p, const Array& x) {
    Array y = p.at("w") * x + p.at("b");
    return std::make_pair(jnp::sum(y * y), y);
  };
  Params p{{"w", jnp::array<float>({2.0f})}, {"b", jnp::array<float>({1.0f})}};
  Array x = jnp::array<float>({3.0f});
  // The return type says there is aux data; jx::has_aux only checks that at compile time.
  auto [grads, aux] = jx::grad(loss, jx::has_aux)(p, x);
  // y = 7; d/dw y^2 = 2 y x = 42; d/db = 2 y = 14.
  EXPECT_FLOAT_EQ(grads.at("w").item<float>(), 42.0f);
  EXPECT_FLOAT_EQ(grads.at("b").item<float>(), 14.0f);
  EXPECT_FLOAT_EQ(aux.item<float>(), 7.0f);
  auto [grads2, aux2] = jx::grad(loss)(p, x);
  EXPECT_FLOAT_EQ(grads2.at("w").item<float>(), 42.0f);
  EXPECT_FLOAT_EQ(aux2.item<float>(), 7.0f);
  // (loss, aux), grads in one line; a std::tuple return works as a std::pair does.
  auto loss_tuple = [&](const Params& q, const Array& xx) {
    auto [l, y] = loss(q, xx);
    return std::make_tuple(l, y);
  };
  auto [value, aux3, grads3] = jx::value_and_grad(loss_tuple)(p, x);
  EXPECT_FLOAT_EQ(value.item<float>(), 49.0f);
  EXPECT_FLOAT_EQ(aux3.item<float>(), 7.0f);
  EXPECT_FLOAT_EQ(grads3.at("b").item<float>(), 14.0f);
}

TEST(Grad, NoPerturbationConfusion) {
  // d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1 (a confused implementation gives 2).
  auto inner = [](const Array& x) {
    return jx::grad([&](const Array& y) { return x + y; })(f32(1.0f));
  };
  auto outer = [&](const Array& x) { return x * inner(x); };
  EXPECT_FLOAT_EQ(jx::grad(outer)(f32(2.0f)).item<float>(), 1.0f);
}

TEST(Jvp, MatchesHandDerivative) {
  auto f = [](const Array& x) { return jnp::sin(x) * x; };
  auto [y, t] = jx::jvp(f, std::make_tuple(f64(0.3)), std::make_tuple(f64(2.0)));
  EXPECT_NEAR(y.item<double>(), std::sin(0.3) * 0.3, 1e-15);
  EXPECT_NEAR(t.item<double>(), 2.0 * (std::cos(0.3) * 0.3 + std::sin(0.3)), 1e-15);
}

TEST(Vjp, AndLinearize) {
  auto f = [](const Array& x) { return x * x; };
  Array x = jnp::array<double>({1.0, 2.0, 3.0});
  auto [y, f_vjp] = jx::vjp(f, x);
  auto [ct] = f_vjp(jnp::array<double>({1.0, 1.0, 0.5}));
  EXPECT_EQ(ct.to_vector<double>(), (std::vector<double>{2.0, 4.0, 3.0}));
  auto [y2, f_jvp] = jx::linearize(f, x);
  EXPECT_EQ(f_jvp(jnp::array<double>({1.0, 0.0, 2.0})).to_vector<double>(),
            (std::vector<double>{2.0, 0.0, 12.0}));
}

TEST(Jacobians, FwdRevHessian) {
  auto f = [](const Array& x) { return x * x * x; };  // elementwise: J = diag(3x^2)
  Array x = jnp::array<double>({1.0, 2.0});
  std::vector<double> jf = jx::jacfwd(f)(x).to_vector<double>();
  std::vector<double> jr = jx::jacrev(f)(x).to_vector<double>();
  EXPECT_EQ(jf, (std::vector<double>{3.0, 0.0, 0.0, 12.0}));
  EXPECT_EQ(jr, jf);
  auto g = [](const Array& x) { return jnp::sum(x * x * x); };  // H = diag(6x)
  Array h = jx::hessian(g)(x);
  EXPECT_EQ(h.shape(), (jx::Shape{2, 2}));
  EXPECT_EQ(h.to_vector<double>(), (std::vector<double>{6.0, 0.0, 0.0, 12.0}));
}

TEST(Jacobians, MatrixShapesAgreeWithTheHandDerivedJacobian) {
  // f(W) = W v for W [2,3], v [3]: d f_i / d W_jk = [i == j] v_k, shape [2, 2, 3].
  Array v = jnp::array<double>({1.0, -2.0, 0.5});
  auto f = [&](const Array& w) { return jnp::matmul(w, v); };
  Array w = jnp::arange(6.0).reshape({2, 3}).astype(jx::DType::Float64);
  Array jf = jx::jacfwd(f)(w), jr = jx::jacrev(f)(w);
  ASSERT_EQ(jf.shape(), (jx::Shape{2, 2, 3}));
  ASSERT_EQ(jr.shape(), (jx::Shape{2, 2, 3}));
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (double vk : {1.0, -2.0, 0.5}) want.push_back(i == j ? vk : 0.0);
  EXPECT_EQ(jf.to_vector<double>(), want);
  EXPECT_EQ(jr.to_vector<double>(), want);
  // A scalar function of a matrix: the Jacobian has the input's shape (the gradient).
  auto s = [](const Array& a) { return jnp::sum(jnp::sin(a)); };
  jx::testing::expect_close(jx::jacrev(s)(w), jnp::cos(w), 1e-15, 0, "jacrev of a scalar");
  jx::testing::expect_close(jx::jacfwd(s)(w), jnp::cos(w), 1e-15, 0, "jacfwd of a scalar");
  // Size 0 input.
  auto e = [](const Array& a) { return jnp::sin(a); };
  EXPECT_EQ(jx::jacfwd(e)(jnp::zeros({0, 2}, jx::DType::Float64)).shape(), (jx::Shape{0, 2, 0, 2}));
  EXPECT_EQ(jx::jacrev(e)(jnp::zeros({0, 2}, jx::DType::Float64)).shape(), (jx::Shape{0, 2, 0, 2}));
}

TEST(Jacobians, PytreesArgnumsAndAux) {
  using Params = std::map<std::string, Array>;
  auto vec = [](std::vector<double> v) { return jnp::array<double>(v); };
  auto d = [](const Array& a) { return a.to_vector<double>(); };
  Array x = vec({1.0, 2.0, 3.0});
  // A pytree result from one Array: the result's type, each leaf its Jacobian.
  auto pair_out = [](const Array& v) { return std::make_pair(v * 2.0, jnp::sum(v * v)); };
  for (auto [jf, jr] : {std::make_pair(jx::jacfwd(pair_out)(x), jx::jacrev(pair_out)(x))}) {
    EXPECT_EQ(d(jf.first), (std::vector<double>{2, 0, 0, 0, 2, 0, 0, 0, 2}));  // 2 I
    EXPECT_EQ(d(jf.second), (std::vector<double>{2, 4, 6}));                 // 2 x
    EXPECT_EQ(d(jr.first), d(jf.first));
    EXPECT_EQ(d(jr.second), d(jf.second));
  }
  // A scalar of a dict: the dict's type (the gradient); argnums give a tuple.
  Params p{{"w", vec({0.5, -1.0})}, {"b", vec({2.0}).reshape({})}};
  Array u = vec({3.0, 4.0});
  auto g = [](const Params& q, const Array& v) { return jnp::sum(q.at("w") * v) + q.at("b"); };
  Params gp = jx::jacrev(g)(p, u);
  EXPECT_EQ(d(gp.at("w")), d(u));
  EXPECT_EQ(gp.at("b").item<double>(), 1.0);
  auto [gp2, gu] = jx::jacfwd<0, 1>(g)(p, u);
  EXPECT_EQ(d(gp2.at("w")), d(u));
  EXPECT_EQ(d(gu), d(p.at("w")));
  // Pytree in, pytree out: a jx::Tree nesting the input's structure inside the output's.
  auto h = [](const Params& q) { return std::make_pair(q.at("w") * 2.0, q.at("b") * 3.0); };
  jx::Tree jt = jx::jacfwd(h)(p);
  EXPECT_EQ(jt.str(), "[{'b': f64[2], 'w': f64[2,2]}, {'b': f64[], 'w': f64[2]}]");
  EXPECT_EQ(d(jt[0]["w"].array()), (std::vector<double>{2, 0, 0, 2}));
  EXPECT_EQ(d(jt[0]["b"].array()), (std::vector<double>{0, 0}));
  EXPECT_EQ(jt[1]["b"].array().item<double>(), 3.0);
  EXPECT_EQ(jx::jacrev(h)(p).str(), jt.str());
  EXPECT_EQ(d(jx::jacrev(h)(p)[0]["w"].array()), (std::vector<double>{2, 0, 0, 2}));
  // has_aux: (jacobian, aux), the aux value untouched.
  auto with_aux = [](const Array& v) { return std::make_pair(v * v, jnp::sum(v)); };
  auto [ja, aux] = jx::jacrev(with_aux, jx::has_aux)(x);
  EXPECT_EQ(d(ja), (std::vector<double>{2, 0, 0, 0, 4, 0, 0, 0, 6}));
  EXPECT_EQ(aux.item<double>(), 6.0);
  auto [jb, aux2] = jx::jacfwd(with_aux, jx::has_aux)(x);
  EXPECT_EQ(d(jb), d(ja));
  EXPECT_EQ(aux2.item<double>(), 6.0);
  // hessian, against the hand-derived 2 I.
  auto sq = [](const Array& v) { return jnp::sum(v * v); };
  EXPECT_EQ(d(jx::hessian(sq)(x)), (std::vector<double>{2, 0, 0, 0, 2, 0, 0, 0, 2}));
}

TEST(StopGradient, CutsTheDerivative) {
  auto f = [](const Array& x) { return x * jx::stop_gradient(x); };
  EXPECT_FLOAT_EQ(jx::grad(f)(f32(3.0f)).item<float>(), 3.0f);
}

TEST(MakeJaxpr, JaxsDocstringExample) {
  auto f = [](const Array& x) { return jnp::sin(jnp::cos(x)); };
  EXPECT_EQ(jx::make_jaxpr(f)(Array(3.0)).str(),
            "{ lambda ; a:f32[]. let b:f32[] = cos a; c:f32[] = sin b in (c,) }");
}

TEST(MakeJaxpr, ConstantsAndLiterals) {
  Array w = jnp::array<float>({1.0f, 2.0f});
  auto f = [&](const Array& x) { return x * w + w; };  // w is captured: a constvar
  EXPECT_EQ(jx::make_jaxpr(f)(jnp::array<float>({0.0f, 0.0f})).str(),
            "{ lambda a:f32[2]; b:f32[2]. let c:f32[2] = mul b a; d:f32[2] = add c a in (d,) }");
  // A C++ scalar is a weak literal; promotion converts it at trace time, as JAX does.
  auto g = [](const Array& x) { return x * 2.0; };
  EXPECT_EQ(jx::make_jaxpr(g)(jnp::array<float>({1.0f}).reshape({})).str(),
            "{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }");
}

TEST(MakeJaxpr, GradOfSinCos) {
  // JAX's docstring shows the same equations, in its own order (it prints the jvp of the
  // forward pass first, then the transposed linear part).
  auto f = [](const Array& x) { return jnp::sin(jnp::cos(x)); };
  std::string j = jx::make_jaxpr(jx::grad(f))(Array(3.0)).str();
  EXPECT_NE(j.find("= cos a"), std::string::npos) << j;
  EXPECT_NE(j.find("= sin a"), std::string::npos) << j;
  EXPECT_NE(j.find("neg"), std::string::npos) << j;
}

TEST(Errors, GradNeedsScalarFloatOutputAndFloatInputs) {
  auto vec = [](const Array& x) { return x * 2.0; };
  try {
    jx::grad(vec)(jnp::array<float>({1.0f, 2.0f}));
    FAIL();
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("requires a real scalar output, got f32[2]"), std::string::npos)
        << e.what();
  }
  auto f = [](const Array& x) { return jnp::sum(x); };
  EXPECT_THROW(jx::grad(f)(jnp::array<int32_t>({1, 2})), jx::DTypeError);
}

TEST(Errors, ConcretizationUnderGrad) {
  auto f = [](const Array& x) {
    if (x.item<float>() > 0) return x;  // a traced value used as a C++ bool
    return -x;
  };
  try {
    jx::grad(f)(f32(1.0f));
    FAIL();
  } catch (const jx::ConcretizationError& e) {
    EXPECT_NE(std::string(e.what()).find("jx::lax::cond"), std::string::npos) << e.what();
  }
}

TEST(Errors, EscapedTracer) {
  Array leaked;
  auto f = [&](const Array& x) {
    leaked = x * 2.0;
    return x;
  };
  jx::jvp(f, std::make_tuple(f32(1.0f)), std::make_tuple(f32(1.0f)));
  try {
    Array y = leaked + 1.0;
    FAIL() << y.repr();
  } catch (const jx::ConcretizationError& e) {
    EXPECT_NE(std::string(e.what()).find("escaped"), std::string::npos) << e.what();
  }
}

TEST(CheckGrads, CompositeFloat64) {
  jx::testing::Fn f = [](const std::vector<Array>& a) {
    return std::vector<Array>{jnp::sum(jnp::tanh(a[0] * a[1]) + a[0] * a[0])};
  };
  jx::testing::check_grads(f, {jx::testing::rand_f64({3}, 1), jx::testing::rand_f64({3}, 2)});
}

}  // namespace
