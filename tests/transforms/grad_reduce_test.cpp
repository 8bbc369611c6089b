// Autodiff rules of the reduce and cumulative_sort families: check_grads (order 2, forward
// and reverse, float64) over every differentiable primitive, JAX's choices at kinks
// (ties, zeros) against hand-derived values, and transposes against explicit matrices.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "jx/jx.h"
#include "jx/transforms.h"
#include "ops/primitive.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::Shape;
using jx::testing::check_grads;
using jx::testing::rand_f64;

Array vec(std::vector<double> v) { return jnp::array<double>(v); }

using Unary = std::function<Array(const Array&)>;
using jx::ops::Prim;

// Rules of other families that a rule here binds on its tangent path: reverse mode and
// second order need their jvp/transpose rules. Until those exist, only first-order forward
// mode (which runs the tangent ops eagerly) is checked, and reverse-mode tests skip.
const std::vector<Prim> kArith = {Prim::Add, Prim::Mul, Prim::Div, Prim::Reshape,
                                  Prim::BroadcastInDim, Prim::ConvertElementType, Prim::Eq};
const std::vector<Prim> kProd = {Prim::Slice, Prim::Pad, Prim::Transpose};
const std::vector<Prim> kScan = {Prim::Slice,  Prim::Pad, Prim::Concatenate, Prim::Rev,
                                 Prim::Max,    Prim::Min, Prim::SelectN,     Prim::Exp,
                                 Prim::Log1p,  Prim::Abs, Prim::Neg,         Prim::Sub,
                                 Prim::Ne};
const std::vector<Prim> kSort = {Prim::Gather, Prim::Concatenate};

std::string missing(std::vector<Prim> deps) {
  deps.insert(deps.end(), kArith.begin(), kArith.end());
  std::string m;
  for (Prim p : deps) {
    const auto& pi = jx::ops::info(p);
    if (!pi.jvp && !pi.zero_tangent) m += std::string(" ") + pi.name + ":jvp";
    if (!pi.transpose && !pi.not_linear) m += std::string(" ") + pi.name + ":transpose";
  }
  return m;
}
#define REQUIRE_RULES(deps)                                                         \
  do {                                                                              \
    std::string m_ = missing(deps);                                                 \
    if (!m_.empty()) GTEST_SKIP() << "needs rules of other families:" << m_;        \
  } while (0)

void grads(const Unary& f, const Array& x, const std::vector<Prim>& deps = {}) {
  auto fn = [f](const std::vector<Array>& a) { return std::vector<Array>{f(a[0])}; };
  const bool full = missing(deps).empty();
  try {
    if (full)
      check_grads(fn, {x}, {.order = 2});
    else
      check_grads(fn, {x}, {.order = 1, .rev = false});
  } catch (const std::exception& e) {
    ADD_FAILURE() << "at " << jx::shape_str(x.shape()) << ": " << e.what();
  }
}

std::vector<double> jac_fwd(const Unary& f, const Array& x) { return jx::jacfwd(f)(x).to_vector<double>(); }
std::vector<double> jac_rev(const Unary& f, const Array& x) { return jx::jacrev(f)(x).to_vector<double>(); }

struct ReduceCase {
  Shape shape;
  std::vector<int64_t> axes;
};
const std::vector<ReduceCase> kReduceCases = {
    {{}, {}},          {{5}, {0}},        {{3, 4}, {0}},    {{3, 4}, {1}},
    {{3, 4}, {0, 1}},  {{2, 3, 4}, {0, 2}}, {{2, 1, 3}, {1}}, {{1, 5}, {0, 1}},
    {{0, 3}, {0}},     {{3, 0}, {0}},     {{2, 3, 4}, {}},
};

TEST(GradReduce, Sum) {
  unsigned seed = 1;
  for (const auto& c : kReduceCases)
    grads([ax = c.axes](const Array& x) { return lax::reduce_sum(x, ax); }, rand_f64(c.shape, seed++));
}

TEST(GradReduce, SumTransposeIsBroadcast) {
  // d/dx sum over axis 1 of a [2,3]: J[i, (j,k)] = [i == j].
  Unary f = [](const Array& x) { return lax::reduce_sum(x, {1}); };
  Array x = rand_f64({2, 3}, 3);
  std::vector<double> want = {1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1};
  EXPECT_EQ(jac_rev(f, x), want);
  EXPECT_EQ(jac_fwd(f, x), want);
}

TEST(GradReduce, MaxMinAwayFromTies) {
  unsigned seed = 20;
  for (const auto& c : kReduceCases) {
    if (c.shape.numel() == 0) continue;  // the max of nothing is -inf, with no derivative
    grads([ax = c.axes](const Array& x) { return lax::reduce_max(x, ax); }, rand_f64(c.shape, seed++));
    grads([ax = c.axes](const Array& x) { return lax::reduce_min(x, ax); }, rand_f64(c.shape, seed++));
  }
}

TEST(GradReduce, MaxMinTiesShareTheGradient) {
  // JAX: the tangent is the mean over the positions attaining the extremum.
  Array x = vec({1, 3, 3, 2, 3});
  auto g = jx::grad([](const Array& a) { return lax::reduce_max(a, {0}); })(x).to_vector<double>();
  EXPECT_EQ(g, (std::vector<double>{0, 1.0 / 3, 1.0 / 3, 0, 1.0 / 3}));
  Array y = vec({0, -1, 4, -1});
  auto h = jx::grad([](const Array& a) { return lax::reduce_min(a, {0}); })(y).to_vector<double>();
  EXPECT_EQ(h, (std::vector<double>{0, 0.5, 0, 0.5}));
  // Per row, over axis 1.
  Array z = jnp::array<double>({2, 2, 1, 5, 0, 5}, {2, 3});
  Unary rowmax = [](const Array& a) { return lax::reduce_max(a, {1}); };
  EXPECT_EQ(jac_rev(rowmax, z), (std::vector<double>{0.5, 0.5, 0, 0, 0, 0, 0, 0, 0, 0.5, 0, 0.5}));
  EXPECT_EQ(jac_fwd(rowmax, z), jac_rev(rowmax, z));
}

TEST(GradReduce, Prod) {
  unsigned seed = 40;
  for (const auto& c : kReduceCases)
    grads([ax = c.axes](const Array& x) { return lax::reduce_prod(x, ax); },
          rand_f64(c.shape, seed++, 0.5, 1.5), kProd);
  // Seven factors: the pairwise tree pads odd halves with 1.
  grads([](const Array& x) { return lax::reduce_prod(x, {0}); }, rand_f64({7, 2}, 60, -1.5, 1.5),
        kProd);
}

const Unary kProd0 = [](const Array& x) { return lax::reduce_prod(x, {0}); };

TEST(GradReduce, ProdWithZerosIsExactForward) {
  EXPECT_EQ(jac_fwd(kProd0, vec({2, 0, 3})), (std::vector<double>{0, 6, 0}));
  EXPECT_EQ(jac_fwd(kProd0, vec({0, 0, 3})), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(jac_fwd(kProd0, vec({2, 5, 3, 0.5})), (std::vector<double>{7.5, 3, 5, 30}));
  // A polynomial, so finite differences hold at the zeros too.
  grads(kProd0, vec({0, 2, 0, -1.5, 0.5}), kProd);
  grads(kProd0, vec({1.5, 0, -2}), kProd);
}

TEST(GradReduce, ProdWithZerosIsExactReverse) {
  REQUIRE_RULES(kProd);
  EXPECT_EQ(jx::grad(kProd0)(vec({2, 0, 3})).to_vector<double>(), (std::vector<double>{0, 6, 0}));
  EXPECT_EQ(jx::grad(kProd0)(vec({0, 0, 3})).to_vector<double>(), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(jx::grad(kProd0)(vec({2, 5, 3, 0.5})).to_vector<double>(),
            (std::vector<double>{7.5, 3, 5, 30}));
  // Second derivative of x0 x1 x2 at (2, 0, 3): the off-diagonal products.
  auto h = jx::hessian(kProd0)(vec({2, 0, 3})).to_vector<double>();
  EXPECT_EQ(h, (std::vector<double>{0, 3, 0, 3, 0, 2, 0, 2, 0}));
}

TEST(GradReduce, IntegerAndBoolReductionsHaveZeroTangents) {
  // sum(x) + (integer/bool paths converted back to float): only the sum has a derivative.
  auto f = [](const Array& x) {
    Array i = lax::convert_element_type(x, jx::DType::Int32);
    Array zero = lax::reshape(lax::convert_element_type(Array(0), jx::DType::Float64), {1});
    Array any = lax::convert_element_type(lax::reduce_or(lax::gt(x, zero), {0}), jx::DType::Float64);
    Array am = lax::convert_element_type(lax::argmax(x, 0), jx::DType::Float64);
    Array s = lax::convert_element_type(lax::reduce_xor(i, {0}), jx::DType::Float64);
    return lax::add(lax::add(lax::reduce_sum(x, {0}), any), lax::add(am, s));
  };
  EXPECT_EQ(jx::grad(f)(vec({1.5, -2, 3})).to_vector<double>(), (std::vector<double>{1, 1, 1}));
}

TEST(GradReduce, Float32ThroughJnp) {
  // The training-code path: jnp reductions on float32, hand-derived gradients.
  Array x = jnp::array<float>({1, 4, 2, 4, -1, 0.5f}, {2, 3});
  auto gmax = jx::grad([](const Array& a) { return jnp::sum(jnp::max(a, 1)); })(x);
  EXPECT_EQ(gmax.dtype(), jx::DType::Float32);
  EXPECT_EQ(gmax.to_vector<float>(), (std::vector<float>{0, 1, 0, 1, 0, 0}));
  auto gmean = jx::grad([](const Array& a) { return jnp::mean(a * a); })(x);
  std::vector<float> gm = gmean.to_vector<float>(), xv = x.to_vector<float>();
  for (size_t i = 0; i < gm.size(); ++i) EXPECT_FLOAT_EQ(gm[i], xv[i] / 3.0f);
  REQUIRE_RULES(kProd);
  auto gprod = jx::grad([](const Array& a) { return jnp::prod(a); })(jnp::array<float>({2, 3, 0.5f}));
  EXPECT_EQ(gprod.to_vector<float>(), (std::vector<float>{1.5f, 1, 6}));
}

TEST(GradReduce, LargeMaxIsOneHotAtArgmax) {
  // 120k elements: the threaded kernels on both the primal and the tangent path.
  Array x = rand_f64({300, 400}, 77);
  Array g = jx::grad([](const Array& a) { return jnp::sum(lax::reduce_max(a, {1})); })(x);
  std::vector<int32_t> am = lax::argmax(x, 1).to_vector<int32_t>();
  std::vector<double> gv = g.to_vector<double>();
  double total = 0;
  for (double v : gv) total += v;
  EXPECT_EQ(total, 300.0);
  for (size_t r = 0; r < 300; ++r) EXPECT_EQ(gv[r * 400 + size_t(am[r])], 1.0) << "row " << r;
  Array gs = jx::grad([](const Array& a) { return jnp::sum(lax::cumsum(a, 1, true)); })(x);
  std::vector<double> sv = gs.to_vector<double>();
  // d/dx_j sum_k sum_{i>=k} x_i = j + 1 for the reverse cumsum.
  for (size_t j : {size_t(0), size_t(1), size_t(399), size_t(1234)}) EXPECT_EQ(sv[j], double(j % 400 + 1));
}

struct CumCase {
  Shape shape;
  int64_t axis;
};
const std::vector<CumCase> kCumCases = {{{1}, 0},    {{2}, 0},    {{5}, 0},       {{8}, 0},
                                        {{3, 4}, 0}, {{3, 4}, 1}, {{2, 7, 3}, 1}, {{0, 3}, 1},
                                        {{3, 0}, 1}, {{1, 1}, 0}};

void cum_grads(Array (*op)(const Array&, int64_t, bool), double lo, double hi, unsigned seed,
               const std::vector<Prim>& deps) {
  for (const auto& c : kCumCases)
    for (bool rev : {false, true})
      grads([op, ax = c.axis, rev](const Array& x) { return op(x, ax, rev); },
            rand_f64(c.shape, seed++, lo, hi), deps);
}

TEST(GradCumulative, Cumsum) { cum_grads(lax::cumsum, -1, 1, 100, {}); }

TEST(GradCumulative, CumsumTransposeIsReversedCumsum) {
  Array x = rand_f64({3}, 5);
  Unary f = [](const Array& a) { return lax::cumsum(a, 0, false); };
  std::vector<double> lower = {1, 0, 0, 1, 1, 0, 1, 1, 1};
  EXPECT_EQ(jac_rev(f, x), lower);
  EXPECT_EQ(jac_fwd(f, x), lower);
  Unary r = [](const Array& a) { return lax::cumsum(a, 0, true); };
  std::vector<double> upper = {1, 1, 1, 0, 1, 1, 0, 0, 1};
  EXPECT_EQ(jac_rev(r, x), upper);
  EXPECT_EQ(jac_fwd(r, x), upper);
}

TEST(GradCumulative, Cumprod) { cum_grads(lax::cumprod, 0.5, 1.5, 200, kScan); }

const Unary kCumprod0 = [](const Array& a) { return lax::cumprod(a, 0, false); };
// out = [2, 0, 0]; d out_k / d x_j = prod_{i<=k, i!=j} x_i.
const std::vector<double> kCumprodJac = {1, 0, 0, 0, 2, 0, 0, 6, 0};

TEST(GradCumulative, CumprodWithZerosIsExact) {
  EXPECT_EQ(jac_fwd(kCumprod0, vec({2, 0, 3})), kCumprodJac);
  grads(kCumprod0, vec({0, 1.5, 0, -2, 0.5}), kScan);
}

const Unary kCummax0 = [](const Array& a) { return lax::cummax(a, 0, false); };
const Unary kCumminRev = [](const Array& a) { return lax::cummin(a, 0, true); };

TEST(GradCumulative, CummaxCummin) {
  cum_grads(lax::cummax, -1, 1, 300, kScan);
  cum_grads(lax::cummin, -1, 1, 400, kScan);
}

TEST(GradCumulative, CummaxTiesFollowTheScan) {
  // Through associative_scan, max(x0, x1) at a tie splits its tangent 0.5/0.5.
  EXPECT_EQ(jac_fwd(kCummax0, vec({1, 1})), (std::vector<double>{1, 0, 0.5, 0.5}));
  // [3, 1, 2]: the running max stays at x0.
  EXPECT_EQ(jac_fwd(kCummax0, vec({3, 1, 2})), (std::vector<double>{1, 0, 0, 1, 0, 0, 1, 0, 0}));
  // Reverse cummin of [2, 1, 3] = [1, 1, 3].
  EXPECT_EQ(jac_fwd(kCumminRev, vec({2, 1, 3})), (std::vector<double>{0, 1, 0, 0, 1, 0, 0, 0, 1}));
}

const Unary kLse0 = [](const Array& a) { return lax::cumlogsumexp(a, 0, false); };

TEST(GradCumulative, Cumlogsumexp) {
  cum_grads(lax::cumlogsumexp, -2, 2, 500, kScan);
  // d out_k / d x_j = softmax of x[0..k] at j.
  std::vector<double> j = jac_fwd(kLse0, vec({0, std::log(3.0)}));
  std::vector<double> want = {1, 0, 0.25, 0.75};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(j[i], want[i], 1e-15);
}

TEST(GradCumulative, ScanRulesReverse) {
  REQUIRE_RULES(kScan);
  EXPECT_EQ(jac_rev(kCumprod0, vec({2, 0, 3})), kCumprodJac);
  EXPECT_EQ(jac_rev(kCummax0, vec({1, 1})), (std::vector<double>{1, 0, 0.5, 0.5}));
  EXPECT_EQ(jac_rev(kCumminRev, vec({2, 1, 3})), (std::vector<double>{0, 1, 0, 0, 1, 0, 0, 0, 1}));
  std::vector<double> j = jac_rev(kLse0, vec({0, std::log(3.0)}));
  std::vector<double> want = {1, 0, 0.25, 0.75};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(j[i], want[i], 1e-15);
}

const Unary kSort0 = [](const Array& a) { return lax::sort(a, 0); };
// sort([3, 1, 2]) = [1, 2, 3]: the Jacobian is the sorting permutation.
const std::vector<double> kSortJac = {0, 1, 0, 0, 0, 1, 1, 0, 0};

TEST(GradSort, SingleOperand) {
  unsigned seed = 600;
  for (auto [shape, dim] : std::vector<std::pair<Shape, int64_t>>{
           {{1}, 0}, {{6}, 0}, {{3, 4}, 0}, {{3, 4}, 1}, {{2, 3, 5}, 1}, {{0, 3}, 1}, {{3, 0}, 0}})
    grads([d = dim](const Array& x) { return lax::sort(x, d); }, rand_f64(shape, seed++), kSort);
  EXPECT_EQ(jac_fwd(kSort0, vec({3, 1, 2})), kSortJac);
}

const jx::testing::Fn kTwoKeys = [](const std::vector<Array>& a) {
  return lax::sort({vec({1, 0, 1, 0}), a[0], a[1]}, 0, true, 2);
};

TEST(GradSort, PayloadFollowsTheKeys) {
  // Sort (k, v) by k: v's tangent is permuted by argsort(k); k's by the same permutation.
  auto payload = [](const Array& v) { return lax::sort({vec({2, 0, 1}), v}, 0, true, 1)[1]; };
  EXPECT_EQ(jac_fwd(payload, vec({5, 6, 7})), (std::vector<double>{0, 1, 0, 0, 0, 1, 1, 0, 0}));
  auto fn = [](const std::vector<Array>& a) { return lax::sort({a[0], a[1]}, 1, true, 1); };
  check_grads(fn, {rand_f64({2, 5}, 700), rand_f64({2, 5}, 701)}, {.order = 1, .rev = false});
  // Two keys: ties in the (constant) first key are broken by the second; a perturbed first
  // key would break them instead, so only the second key and a payload are differentiated.
  check_grads(kTwoKeys, {rand_f64({4}, 702), rand_f64({4}, 703)}, {.order = 1, .rev = false});
  auto second = [](const Array& k2) { return kTwoKeys({k2, vec({0, 0, 0, 0})})[1]; };
  // keys (1, 0, 1, 0) x (4, 3, 2, 1): order 3, 1, 2, 0.
  EXPECT_EQ(jac_fwd(second, vec({4, 3, 2, 1})),
            (std::vector<double>{0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0}));
}

TEST(GradSort, Reverse) {
  REQUIRE_RULES(kSort);
  EXPECT_EQ(jac_rev(kSort0, vec({3, 1, 2})), kSortJac);
  auto payload = [](const Array& v) { return lax::sort({vec({2, 0, 1}), v}, 0, true, 1)[1]; };
  EXPECT_EQ(jac_rev(payload, vec({5, 6, 7})), (std::vector<double>{0, 1, 0, 0, 0, 1, 1, 0, 0}));
  auto fn = [](const std::vector<Array>& a) { return lax::sort({a[0], a[1]}, 1, true, 1); };
  check_grads(fn, {rand_f64({2, 5}, 700), rand_f64({2, 5}, 701)}, {.order = 2});
  check_grads(kTwoKeys, {rand_f64({4}, 702), rand_f64({4}, 703)}, {.order = 2});
}

}  // namespace
