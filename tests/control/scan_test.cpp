// lax::scan, lax::fori_loop (static bounds) and lax::map: eager values, jaxprs, jvp, grad,
// check_grads, vmap, carry type errors. Expected values are hand-derived.
#include <gtest/gtest.h>

#include <cmath>

#include "jx/jx.h"
#include "testing/check_grads.h"
#include "testing/jaxpr_text.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::testing::check_grads;
using jx::testing::rand_f64;

Array f32(float v) { return jnp::array<float>({v}).reshape({}); }
Array f64(double v) { return jnp::array<double>({v}).reshape({}); }

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const jx::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Running sum: carry the total, emit the total before each element.
std::pair<Array, Array> prefix(const Array& c, const Array& x) { return {c + x, c}; }

TEST(Scan, Eager) {
  Array xs = jnp::array<float>({1, 2, 3, 4});
  auto [c, ys] = lax::scan(prefix, f32(0), xs);
  EXPECT_FLOAT_EQ(c.item<float>(), 10.0f);
  EXPECT_EQ(ys.to_vector<float>(), (std::vector<float>{0, 1, 3, 6}));
  // reverse visits the slices from the last; ys keep xs's order.
  auto [cr, yr] = lax::scan(prefix, f32(0), xs, {.reverse = true});
  EXPECT_FLOAT_EQ(cr.item<float>(), 10.0f);
  EXPECT_EQ(yr.to_vector<float>(), (std::vector<float>{9, 7, 4, 0}));
  // No xs: jx::none with a length.
  auto [n, ks] = lax::scan([](const Array& k, jx::None) { return std::make_pair(k + 1, k * k); }, Array(0), jx::none,
                           {.length = 4});
  EXPECT_EQ(n.item<int>(), 4);
  EXPECT_EQ(ks.to_vector<int>(), (std::vector<int>{0, 1, 4, 9}));
  // Length 0: the initial carry and empty ys.
  auto [c0, y0] = lax::scan(prefix, f32(5), jnp::zeros({0}));
  EXPECT_FLOAT_EQ(c0.item<float>(), 5.0f);
  EXPECT_EQ(y0.shape(), jx::Shape({0}));
  // Pytree carry and xs, rows of a matrix as slices.
  using P = std::pair<Array, Array>;
  Array m = jnp::array<float>({{1, 2}, {3, 4}, {5, 6}});
  auto [cp, yp] = lax::scan(
      [](const P& c, const P& x) { return std::make_pair(P(c.first + x.first, c.second * x.second), x.first * 10.0); },
      P(jnp::zeros({2}), f32(1)), P(m, jnp::array<float>({2, 3, 4})));
  EXPECT_EQ(cp.first.to_vector<float>(), (std::vector<float>{9, 12}));
  EXPECT_FLOAT_EQ(cp.second.item<float>(), 24.0f);
  EXPECT_EQ(yp.shape(), jx::Shape({3, 2}));
  EXPECT_EQ(yp.to_vector<float>(), (std::vector<float>{10, 20, 30, 40, 50, 60}));
}

TEST(Scan, Jaxpr) {
  Array zero = f32(0);
  auto f = [&](const Array& w, const Array& xs) {
    return lax::scan([&](const Array& c, const Array& x) { return std::make_pair(c * w + x, c); }, zero, xs);
  };
  // JAX: scan[jaxpr={ lambda ; c:f32[] d:f32[] e:f32[]. let f = mul d c; g = add f e in (g, d) }
  //           length=3 num_carry=1 num_consts=1 reverse=False unroll=1] a 0.0 b
  // (JAX also prints _split_transpose and linear, which jx does not have.)
  EXPECT_EQ(jx::make_jaxpr(f)(f32(2), jnp::zeros({3})).str(),
            "{ lambda ; a:f32[] b:f32[3]. let\n"
            "    c:f32[] d:f32[3] = scan[\n"
            "      jaxpr={ lambda ; e:f32[] f:f32[] g:f32[]. let\n"
            "          h:f32[] = mul f e\n"
            "          i:f32[] = add h g\n"
            "        in (i, f) }\n"
            "      length=3\n"
            "      num_carry=1\n"
            "      num_consts=1\n"
            "      reverse=False\n"
            "      unroll=1\n"
            "    ] a 0.0:f32[] b\n"
            "  in (c, d) }");
}

TEST(Scan, JvpAndGrad) {
  // c_{t+1} = c_t * w + x_t from c_0 = 0 over xs = (1, 2, 3): c = x0 w^2 + x1 w + x2.
  auto f = [](const Array& w, const Array& xs) {
    return lax::scan([&](const Array& c, const Array& x) { return std::make_pair(c * w + x, c); }, f64(0), xs).first;
  };
  Array xs = jnp::array<double>({1, 2, 3});
  double w = 1.5;
  auto [y, t] = jx::jvp(f, std::make_tuple(f64(w), xs), std::make_tuple(f64(1), jnp::zeros_like(xs)));
  EXPECT_NEAR(y.item<double>(), w * w + 2 * w + 3, 1e-14);
  EXPECT_NEAR(t.item<double>(), 2 * w + 2, 1e-14);
  auto [gw, gx] = jx::grad<0, 1>(f)(f64(w), xs);
  EXPECT_NEAR(gw.item<double>(), 2 * w + 2, 1e-14);
  EXPECT_EQ(gx.to_vector<double>(), (std::vector<double>{w * w, w, 1}));
  // reverse: c = x2 w^2 + x1 w + x0.
  auto fr = [](const Array& w, const Array& xs) {
    return lax::scan([&](const Array& c, const Array& x) { return std::make_pair(c * w + x, c); }, f64(0), xs,
                     {.reverse = true})
        .first;
  };
  EXPECT_EQ(jx::grad<1>(fr)(f64(w), xs).to_vector<double>(), (std::vector<double>{1, w, w * w}));
}

TEST(Scan, CheckGrads) {
  // Consts (w, captured), a carry pair, xs and ys all differentiated, forward and reverse.
  auto f = [](const std::vector<Array>& a) {
    const Array& w = a[0];
    using C = std::pair<Array, Array>;
    auto [c, ys] = lax::scan(
        [&](const C& c, const Array& x) {
          Array h = jnp::tanh(c.first * w + x);
          return std::make_pair(C(h, c.second + jnp::sin(h)), h * c.second);
        },
        C(a[1], a[2]), a[3]);
    return std::vector<Array>{c.first, c.second, ys};
  };
  check_grads(f, {rand_f64({2}, 1), rand_f64({2}, 2), rand_f64({2}, 3), rand_f64({5, 2}, 4)});
  auto fr = [&](const std::vector<Array>& a) {
    auto [c, ys] = lax::scan([&](const Array& c, const Array& x) { return std::make_pair(c * a[0] + x, c * x); },
                             a[1], a[2], {.reverse = true});
    return std::vector<Array>{c, ys};
  };
  check_grads(fr, {rand_f64({3}, 5), rand_f64({3}, 6), rand_f64({4, 3}, 7)});
}

TEST(Scan, GradJaxprHasPrimalAndTransposedScans) {
  auto f = [](const Array& w, const Array& xs) {
    return lax::scan([&](const Array& c, const Array& x) { return std::make_pair(jnp::sin(c * w + x), c); }, f32(0),
                     xs)
        .first;
  };
  std::string j = jx::make_jaxpr(jx::grad(f))(f32(2), jnp::zeros({3})).str();
  // The primal scan runs forward and stacks cos(c*w+x) and c as residuals; the transposed
  // tangent scan runs in reverse.
  EXPECT_NE(j.find("reverse=False"), std::string::npos) << j;
  EXPECT_NE(j.find("reverse=True"), std::string::npos) << j;
  EXPECT_NE(j.find("cos"), std::string::npos) << j;
}

TEST(ForiLoop, StaticBoundsAreAScan) {
  auto f = [](const Array& x) {
    return lax::fori_loop(0, 4, [&](const Array& i, const Array& acc) { return acc * x + i; }, x);
  };
  // acc: x -> x^2 + 0 -> x^3 + 1 -> x^4 + x + 2 -> x^5 + x^2 + 2x + 3.
  double x = 0.8;
  EXPECT_NEAR(f(f64(x)).item<double>(), std::pow(x, 5) + x * x + 2 * x + 3, 1e-14);
  EXPECT_NEAR(jx::grad(f)(f64(x)).item<double>(), 5 * std::pow(x, 4) + 2 * x + 2, 1e-13);
  check_grads([&](const std::vector<Array>& a) { return std::vector<Array>{f(a[0])}; }, {rand_f64({3}, 8)});
  std::string j = jx::testing::unbroken(jx::make_jaxpr(f)(f32(1)).str());
  EXPECT_NE(j.find("scan[jaxpr="), std::string::npos) << j;
  EXPECT_NE(j.find("length=4"), std::string::npos) << j;
  // upper < lower: no iterations.
  EXPECT_FLOAT_EQ(lax::fori_loop(5, 2, [](const Array&, const Array& v) { return v * 2.0; }, f32(3)).item<float>(),
                  3.0f);
}

TEST(Map, MapsTheLeadingAxis) {
  Array xs = jnp::array<float>({{1, 2}, {3, 4}, {5, 6}});
  Array r = lax::map([](const Array& row) { return jnp::sum(row * row); }, xs);
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{5, 25, 61}));
  Array g = jx::grad([](const Array& x) { return jnp::sum(lax::map([](const Array& v) { return v * v * v; }, x)); })(
      jnp::array<float>({1, 2}));
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{3, 12}));
}

TEST(Scan, Vmap) {
  // c_{t+1} = c_t * w + x_t; vmap over each of w (consts), c0 (carry) and xs in turn.
  auto f = [](const Array& w, const Array& c0, const Array& xs) {
    return lax::scan([&](const Array& c, const Array& x) { return std::make_pair(c * w + x, c * 2.0); }, c0, xs);
  };
  Array ws = jnp::array<float>({0.5f, 1, 2}), cs = jnp::array<float>({1, -1, 3});
  Array xss = jnp::array<float>({{1, 2, 3, 4}, {0, 1, 0, 1}, {2, 2, 2, 2}});
  auto check = [&](const std::pair<Array, Array>& got, bool bw, bool bc, bool bx) {
    for (int i = 0; i < 3; ++i) {
      auto [c, ys] = f(bw ? ws(i) : ws(0), bc ? cs(i) : cs(0), bx ? xss(i) : xss(0));
      EXPECT_FLOAT_EQ(got.first(i).item<float>(), c.item<float>()) << bw << bc << bx << i;
      EXPECT_EQ(got.second(i).to_vector<float>(), ys.to_vector<float>()) << bw << bc << bx << i;
    }
  };
  using jx::none;
  check(jx::vmap(f, {.in_axes = {0, none, none}, .axis_size = 3})(ws, cs(0), xss(0)), true, false, false);
  check(jx::vmap(f, {.in_axes = {none, 0, none}})(ws(0), cs, xss(0)), false, true, false);
  check(jx::vmap(f, {.in_axes = {none, none, 0}})(ws(0), cs(0), xss), false, false, true);
  check(jx::vmap(f)(ws, cs, xss), true, true, true);
  // xs batched along its second axis.
  check(jx::vmap(f, {.in_axes = {none, none, 1}})(ws(0), cs(0), xss.T()), false, false, true);
  // Per-example gradients through scan.
  Array g = jx::vmap(jx::grad([&](const Array& w, const Array& xs) { return f(w, f32(1), xs).first; }))(ws, xss);
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(g(i).item<float>(),
                jx::grad([&](const Array& w) { return f(w, f32(1), xss(i)).first; })(ws(i)).item<float>(), 1e-5);
}

TEST(Scan, CarryTypeErrors) {
  std::string e = error_of([] {
    lax::scan([](const Array& c, const Array& x) { return std::make_pair((c + x).astype(jx::DType::Int32), x); },
              f32(0), jnp::zeros({3}));
  });
  EXPECT_NE(e.find("[scan] scan carry output and input must have identical types"), std::string::npos) << e;
  EXPECT_NE(e.find("has type f32[] but the corresponding output carry component has type i32[], so the dtypes "
                   "do not match"),
            std::string::npos)
      << e;
  e = error_of([] {
    lax::scan([](const std::vector<Array>& c, const Array& x) { return std::make_pair(std::vector<Array>{c[0]}, x); },
              std::vector<Array>{f32(0), f32(1)}, jnp::zeros({3}));
  });
  EXPECT_NE(e.find("must have the same pytree structure"), std::string::npos) << e;
  e = error_of([] { lax::scan(prefix, f32(0), jnp::zeros({3}), {.length = 4}); });
  EXPECT_NE(e.find("[scan] got `length` argument of 4 which disagrees with leading axis sizes (3,)."),
            std::string::npos)
      << e;
  e = error_of([] { lax::scan(prefix, f32(0), f32(1)); });
  EXPECT_NE(e.find("[scan] got value with no leading axis to scan over: f32[]"), std::string::npos) << e;
}

}  // namespace
