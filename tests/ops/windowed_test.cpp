// The windowed-reduction family: values against PyTorch float64 (tests/golden/
// gen_windowed.py: max/min/avg pooling 1-D/2-D/3-D, strides, padding, dilations, NHWC,
// base dilation, max pooling's gradient), in float64 (reference kernels) and float32
// (fast kernels, NCHW and NHWC); the fast kernels against the reference kernels bit for
// bit; dtypes; the generic reduce_window and its monoid recognition; jit against eager;
// errors by their text.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "backend/cpu/window.h"
#include "jx/jx.h"
#include "jx/transforms.h"
#include "support/str.h"
#include "testing/golden.h"

namespace {

#include "golden/windowed_golden.inc"

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::DType;
using jx::Shape;
using Pairs = lax::Padding::Pairs;
using I = std::vector<int64_t>;

const jx::testing::NamedGolden& row(const std::string& name) {
  for (const auto& r : kWindowedGolden)
    if (name == r.name) return r;
  throw std::runtime_error("no golden row " + name);
}

Array golden(const std::string& name) {
  const auto& r = row(name);
  return jnp::array<double>(r.values, Shape(r.shape));
}

// |got - want| <= tol (1 + |want|), infinities equal.
void expect_golden(const Array& got, const std::string& name, double tol) {
  const auto& r = row(name);
  ASSERT_EQ(got.shape(), Shape(r.shape)) << name;
  auto v = got.astype(DType::Float64).to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i) {
    const double w = r.values[i];
    if (std::isinf(w)) EXPECT_EQ(v[i], w) << name << " [" << i << "]";
    else ASSERT_NEAR(v[i], w, tol * (1 + std::fabs(w))) << name << " [" << i << "]";
  }
}

Array to_nhwc(const Array& x) { return lax::transpose(x, {0, 2, 3, 1}); }
Array to_nchw(const Array& x) { return lax::transpose(x, {0, 3, 1, 2}); }

// A pooling over the spatial dims of an NC... operand: window 1 on N and C.
struct Pool {
  I k, s;
  Pairs pad;
  I dil;
  I window(size_t nd) const { I w{1, 1}; w.insert(w.end(), k.begin(), k.end()); return w; }
  I strides() const { I w{1, 1}; w.insert(w.end(), s.begin(), s.end()); return w; }
  Pairs padding() const { Pairs p{{0, 0}, {0, 0}}; p.insert(p.end(), pad.begin(), pad.end()); return p; }
  I wdil() const {
    if (dil.empty()) return {};
    I w{1, 1};
    w.insert(w.end(), dil.begin(), dil.end());
    return w;
  }
  Array max(const Array& x) const { return lax::reduce_window_max(x, window(0), strides(), padding(), {}, wdil()); }
  Array min(const Array& x) const { return lax::reduce_window_min(x, window(0), strides(), padding(), {}, wdil()); }
  Array sum(const Array& x) const { return lax::reduce_window_sum(x, window(0), strides(), padding(), {}, wdil()); }
};

Pairs sym(I p) {
  Pairs r;
  for (int64_t v : p) r.push_back({v, v});
  return r;
}

struct MaxCase {
  std::string name;
  Pool pool;
  bool grad;
};
const std::vector<MaxCase> kMaxCases = {
    {"max2d_k2s2", {{2, 2}, {2, 2}, sym({0, 0}), {}}, true},
    {"max2d_k3s2p1", {{3, 3}, {2, 2}, sym({1, 1}), {}}, true},
    {"max2d_k3s1p1_dil2", {{3, 3}, {1, 1}, sym({1, 1}), {2, 2}}, false},
    {"max2d_k2s1", {{2, 2}, {1, 1}, sym({0, 0}), {}}, true},
    {"max1d_k3s2p1", {{3}, {2}, sym({1}), {}}, true},
    {"max3d", {{2, 3, 2}, {2, 1, 2}, sym({1, 1, 0}), {}}, true},
};

TEST(Windowed, MaxMinPoolingMatchesPyTorch) {
  for (const MaxCase& c : kMaxCases) {
    SCOPED_TRACE(c.name);
    Array x = golden(c.name + "/x");
    expect_golden(c.pool.max(x), c.name + "/max", 0);
    expect_golden(c.pool.min(x), c.name + "/min", 0);
    Array x32 = x.astype(DType::Float32);  // the fast float32 kernels (NCHW: C == 1 rows)
    expect_golden(c.pool.max(x32), c.name + "/max", 1e-6);
    expect_golden(c.pool.min(x32), c.name + "/min", 1e-6);
  }
}

TEST(Windowed, MaxPoolingGradientMatchesPyTorch) {
  for (const MaxCase& c : kMaxCases) {
    if (!c.grad) continue;
    SCOPED_TRACE(c.name);
    for (DType dt : {DType::Float64, DType::Float32}) {
      Array x = golden(c.name + "/x").astype(dt), g = golden(c.name + "/g").astype(dt);
      auto [y, pullback] = jx::vjp([&](const Array& a) { return c.pool.max(a); }, x);
      expect_golden(std::get<0>(pullback(g)), c.name + "/max_grad", dt == DType::Float64 ? 1e-15 : 1e-6);
    }
  }
}

TEST(Windowed, NhwcPoolingMatchesPyTorch) {
  // The NCHW goldens, transposed: the fast kernels' vectorized-over-channels path.
  for (const MaxCase& c : kMaxCases) {
    if (c.pool.k.size() != 2) continue;
    SCOPED_TRACE(c.name);
    Array x = to_nhwc(golden(c.name + "/x").astype(DType::Float32));
    I w{1, c.pool.k[0], c.pool.k[1], 1}, s{1, c.pool.s[0], c.pool.s[1], 1};
    Pairs p{{0, 0}, c.pool.pad[0], c.pool.pad[1], {0, 0}};
    I d = c.pool.dil.empty() ? I{} : I{1, c.pool.dil[0], c.pool.dil[1], 1};
    expect_golden(to_nchw(lax::reduce_window_max(x, w, s, p, {}, d)), c.name + "/max", 1e-6);
    expect_golden(to_nchw(lax::reduce_window_min(x, w, s, p, {}, d)), c.name + "/min", 1e-6);
    if (!c.grad) continue;
    Array g = to_nhwc(golden(c.name + "/g").astype(DType::Float32));
    auto [y, pullback] = jx::vjp([&](const Array& a) { return lax::reduce_window_max(a, w, s, p); }, x);
    expect_golden(to_nchw(std::get<0>(pullback(g))), c.name + "/max_grad", 1e-6);
    // Forward mode (select_and_gather_add's fast kernel): <g, J t> = <J^T g, t> with
    // PyTorch's J^T g.
    Array t = lax::cos(x * 3.0f);
    auto [y2, yt] = jx::jvp([&](const Array& a) { return lax::reduce_window_max(a, w, s, p); },
                            std::make_tuple(x), std::make_tuple(t));
    const double lhs = jnp::sum((yt * g).astype(DType::Float64)).item<double>();
    const double rhs =
        jnp::sum(golden(c.name + "/max_grad") * to_nchw(t).astype(DType::Float64)).item<double>();
    EXPECT_NEAR(lhs, rhs, 1e-5 * (1 + std::fabs(rhs)));
  }
}

struct AvgCase {
  std::string name;
  Pool pool;
};
const std::vector<AvgCase> kAvgCases = {
    {"avg2d_k3s2p1", {{3, 3}, {2, 2}, sym({1, 1}), {}}},
    {"avg2d_k2s2", {{2, 2}, {2, 2}, sym({0, 0}), {}}},
    {"avg1d_k4s3p2", {{4}, {3}, sym({2}), {}}},
    {"avg3d", {{2, 2, 3}, {1, 2, 2}, sym({1, 0, 1}), {}}},
};

TEST(Windowed, AvgPoolingMatchesPyTorch) {
  // Flax's avg_pool: count_include_pad divides by the window size, else by the window
  // sum of ones.
  for (const AvgCase& c : kAvgCases) {
    SCOPED_TRACE(c.name);
    for (DType dt : {DType::Float64, DType::Float32}) {
      const double tol = dt == DType::Float64 ? 1e-14 : 2e-6;
      Array x = golden(c.name + "/x").astype(dt);
      Array sum = c.pool.sum(x);
      int64_t size = 1;
      for (int64_t k : c.pool.k) size *= k;
      expect_golden(sum, c.name + "/sum", tol);
      expect_golden(sum / double(size), c.name + "/avg_incl", tol);
      expect_golden(sum / c.pool.sum(jnp::ones_like(x)), c.name + "/avg_excl", tol);
    }
  }
}

TEST(Windowed, DilationsAndAsymmetricPaddingMatchPyTorch) {
  struct G {
    std::string name;
    I w, s;
    Pairs p;
    I base, wdil;
  };
  const std::vector<G> cases = {
      {"general_nchw", {1, 1, 2, 3}, {1, 1, 1, 2}, {{0, 0}, {0, 0}, {1, 0}, {2, 1}}, {1, 1, 2, 1}, {1, 1, 1, 1}},
      {"general_nhwc", {1, 2, 2, 1}, {1, 2, 1, 1}, {{0, 0}, {1, 1}, {0, 1}, {0, 0}}, {1, 2, 1, 1}, {1, 1, 2, 1}},
      {"general_wdil", {1, 1, 3, 2}, {1, 1, 2, 1}, {{0, 0}, {0, 0}, {2, 0}, {0, 3}}, {1, 1, 1, 2}, {1, 1, 2, 3}},
  };
  for (const G& c : cases) {
    SCOPED_TRACE(c.name);
    for (DType dt : {DType::Float64, DType::Float32, DType::Float16}) {
      const double tol = dt == DType::Float64 ? 1e-14 : dt == DType::Float32 ? 2e-6 : 1e-2;
      Array x = golden(c.name + "/x");
      if (dt == DType::Float16) x = jnp::round(x * 64.0) / 64.0;  // exact in float16
      x = x.astype(dt);
      expect_golden(lax::reduce_window_max(x, c.w, c.s, c.p, c.base, c.wdil), c.name + "/max",
                    dt == DType::Float16 ? 0.1 : tol);
      expect_golden(lax::reduce_window_min(x, c.w, c.s, c.p, c.base, c.wdil), c.name + "/min",
                    dt == DType::Float16 ? 0.1 : tol);
      expect_golden(lax::reduce_window_sum(x, c.w, c.s, c.p, c.base, c.wdil), c.name + "/sum",
                    dt == DType::Float16 ? 0.1 : tol);
    }
  }
}

// ---- fast kernels against the reference kernels, bit for bit ----

struct Geom {
  Shape in;
  I w, s;
  Pairs p;
  I wdil;
};

Shape out_shape(const Geom& g) {
  Shape o;
  for (size_t d = 0; d < g.in.size(); ++d) {
    const int64_t padded = g.in[d] + g.p[d].first + g.p[d].second;
    const int64_t win = 1 + (g.w[d] - 1) * g.wdil[d];
    o.push_back(padded < win ? 0 : (padded - win) / g.s[d] + 1);
  }
  return o;
}

// Values with ties (small integers) and, optionally, NaNs and infinities.
std::vector<float> tie_data(int64_t n, unsigned seed, bool specials) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-4, 4);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& e : v) e = float(d(gen));
  if (specials && n > 10) {
    v[3] = std::numeric_limits<float>::quiet_NaN();
    v[7] = -std::numeric_limits<float>::infinity();
    v[size_t(n / 2)] = std::numeric_limits<float>::infinity();
    v[size_t(n - 2)] = -0.0f;
  }
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

TEST(Windowed, FastKernelsEqualReferenceBitForBit) {
  const std::vector<Geom> geoms = {
      {{4, 28, 28, 32}, {1, 2, 2, 1}, {1, 2, 2, 1}, {{0, 0}, {0, 0}, {0, 0}, {0, 0}}, {1, 1, 1, 1}},  // NHWC 2x2/2
      {{2, 9, 7, 3}, {1, 3, 3, 1}, {1, 2, 2, 1}, {{0, 0}, {1, 1}, {1, 1}, {0, 0}}, {1, 1, 1, 1}},    // overlapping, padded
      {{2, 8, 9, 5}, {1, 2, 3, 1}, {1, 1, 2, 1}, {{0, 0}, {0, 1}, {2, 0}, {0, 0}}, {1, 2, 1, 1}},    // dilated, asymmetric
      {{3, 4, 12, 10}, {1, 1, 2, 2}, {1, 1, 2, 2}, {{0, 0}, {0, 0}, {0, 0}, {0, 0}}, {1, 1, 1, 1}},  // NCHW 2x2/2
      {{2, 3, 11, 9}, {1, 1, 3, 3}, {1, 1, 2, 2}, {{0, 0}, {0, 0}, {1, 1}, {1, 1}}, {1, 1, 1, 1}},   // NCHW 3x3/2 pad 1
      {{2, 3, 10, 13}, {1, 1, 2, 3}, {1, 1, 3, 1}, {{0, 0}, {0, 0}, {0, 2}, {1, 0}}, {1, 1, 1, 2}},  // NCHW gaps, dilation
      {{5, 17}, {1, 4}, {1, 3}, {{0, 0}, {2, 2}}, {1, 1}},                                             // 1-D rows
      {{2, 6, 8, 5, 4}, {1, 3, 2, 2, 1}, {1, 2, 2, 1, 1}, {{0, 0}, {1, 1}, {0, 0}, {1, 0}, {0, 0}}, {1, 1, 1, 1, 1}},  // 3 windowed dims: reference
      {{2, 1, 3, 2}, {1, 1, 3, 2}, {1, 1, 1, 1}, {{0, 0}, {0, 0}, {0, 0}, {0, 0}}, {1, 1, 1, 1}},    // one window
  };
  unsigned seed = 1;
  for (const Geom& g : geoms) {
    for (bool specials : {false, true}) {
      SCOPED_TRACE(jx::str("in ", jx::shape_str(g.in), " window ", jx::list_str(g.w), " strides ",
                           jx::list_str(g.s), specials ? " with NaN/inf" : ""));
      const Shape o = out_shape(g);
      std::vector<float> x = tie_data(g.in.numel(), seed++, specials);
      std::vector<float> src = tie_data(o.numel(), seed++, specials);
      I lo, base(g.in.size(), 1);
      for (auto [l, h] : g.p) lo.push_back(l);
      jx::cpu::WindowGeom wg{int(g.in.size()), g.in.data(), o.data(), g.w.data(), g.s.data(),
                             lo.data(), base.data(), g.wdil.data()};
      for (auto op : {jx::cpu::WindowOp::Sum, jx::cpu::WindowOp::Max, jx::cpu::WindowOp::Min}) {
        std::vector<float> fast(size_t(o.numel())), ref(size_t(o.numel()));
        jx::cpu::reduce_window(op, DType::Float32, x.data(), wg, fast.data());
        jx::cpu::reduce_window_reference(op, DType::Float32, x.data(), wg, ref.data());
        EXPECT_TRUE(same_bits(fast, ref)) << "reduce_window op " << int(op);
      }
      std::vector<float> tan = tie_data(g.in.numel(), seed++, specials);
      for (bool ge : {true, false}) {
        std::vector<float> fast(size_t(o.numel())), ref(size_t(o.numel()));
        jx::cpu::select_and_gather_add(ge, DType::Float32, tan.data(), x.data(), wg, fast.data());
        jx::cpu::select_and_gather_add_reference(ge, DType::Float32, tan.data(), x.data(), wg, ref.data());
        EXPECT_TRUE(same_bits(fast, ref)) << "select_and_gather_add " << (ge ? "ge" : "le");
      }
      for (bool ge : {true, false}) {
        std::vector<float> fast(size_t(g.in.numel())), ref(size_t(g.in.numel()));
        jx::cpu::select_and_scatter_add(ge, DType::Float32, src.data(), x.data(), wg, fast.data());
        jx::cpu::select_and_scatter_add_reference(ge, DType::Float32, src.data(), x.data(), wg, ref.data());
        EXPECT_TRUE(same_bits(fast, ref)) << "select_and_scatter_add " << (ge ? "ge" : "le");
      }
    }
  }
}

TEST(Windowed, TiesSelectTheFirstMaximum) {
  // XLA's select: the first position of a window holding the max gets the whole cotangent.
  Array x = jnp::array<float>({1, 3, 3, 0, 2, 2}, {6});
  Array src = jnp::array<float>({10, 20, 30}, {3});
  Array r = lax::select_and_scatter_add(src, x, lax::WindowSelect::ge, {2}, {2}, {{0, 0}});
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{0, 10, 20, 0, 30, 0}));
  Array l = lax::select_and_scatter_add(src, x, lax::WindowSelect::le, {2}, {2}, {{0, 0}});
  EXPECT_EQ(l.to_vector<float>(), (std::vector<float>{10, 0, 0, 20, 30, 0}));
  // Overlapping windows add up; le picks the first minimum.
  Array o = lax::select_and_scatter_add(jnp::array<float>({1, 2, 4, 8, 16}, {5}), x,
                                        lax::WindowSelect::ge, {2}, {1}, {{0, 0}});
  EXPECT_EQ(o.to_vector<float>(), (std::vector<float>{0, 3, 4, 0, 24, 0}));
  // select_and_gather_add: the tangent of the first max; 0 for an all-padding window.
  Array t = jnp::array<float>({1, 2, 3, 4, 5, 6}, {6});
  Array gth = lax::select_and_gather_add(t, x, lax::WindowSelect::ge, {2}, {2}, {{0, 2}});
  EXPECT_EQ(gth.to_vector<float>(), (std::vector<float>{2, 3, 5, 0}));
}

TEST(Windowed, Dtypes) {
  // Integers and half types through the reference kernels, against float64 results.
  Array xd = jnp::array<double>({3, -1, 4, 1, -5, 9, 2, -6, 5, 3, -5, 8}, {3, 4});
  const I w{2, 2}, s{1, 2};
  const Pairs p{{1, 0}, {0, 1}};
  for (DType dt : {DType::Int8, DType::Int32, DType::Int64, DType::Float16, DType::BFloat16, DType::Float64}) {
    SCOPED_TRACE(jx::dtype_name(dt));
    Array x = xd.astype(dt);
    EXPECT_EQ(lax::reduce_window_sum(x, w, s, p).dtype(), dt);
    EXPECT_EQ(lax::reduce_window_sum(x, w, s, p).astype(DType::Float64).to_vector<double>(),
              lax::reduce_window_sum(xd, w, s, p).to_vector<double>());
    // Padding holds the dtype's identity: lowest/highest for integers, -inf/+inf for floats.
    Array mx = lax::reduce_window_max(x, w, s, p), mn = lax::reduce_window_min(x, w, s, p);
    EXPECT_EQ(mx.astype(DType::Float64).to_vector<double>(), lax::reduce_window_max(xd, w, s, p).to_vector<double>());
    EXPECT_EQ(mn.astype(DType::Float64).to_vector<double>(), lax::reduce_window_min(xd, w, s, p).to_vector<double>());
  }
  Array u = jnp::array<uint8_t>({0, 200, 100, 255}, {4});
  EXPECT_EQ(lax::reduce_window_sum(u, {2}, {1}, "VALID").to_vector<uint8_t>(),
            (std::vector<uint8_t>{200, 44, 99}));  // wraps, as XLA
  Array b = jnp::array<bool>({false, true, false, false}, {4});
  EXPECT_EQ(lax::reduce_window_max(b, {2}, {1}, "VALID").to_vector<bool>(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(lax::reduce_window_min(b, {2}, {1}, {{1, 0}}).to_vector<bool>(),
            (std::vector<bool>{false, false, false, false}));
  // select_and_scatter_add on integers and bool (whose add is or); select_and_gather_add
  // on float16.
  const auto ge = lax::WindowSelect::ge;
  Array xi = jnp::array<int32_t>({1, 3, 3, 0, 2, 2}, {6});
  EXPECT_EQ(lax::select_and_scatter_add(jnp::array<int32_t>({10, 20, 30}, {3}), xi, ge, {2}, {2}, {{0, 0}})
                .to_vector<int32_t>(),
            (std::vector<int32_t>{0, 10, 20, 0, 30, 0}));
  Array xb = jnp::array<bool>({false, true, true, false}, {4});
  EXPECT_EQ(lax::select_and_scatter_add(jnp::array<bool>({true, true, true}, {3}), xb, ge, {2}, {1}, {{0, 0}})
                .to_vector<bool>(),
            (std::vector<bool>{false, true, true, false}));
  Array th = jnp::array<double>({1, 2, 3, 4, 5, 6}, {6}).astype(DType::Float16);
  EXPECT_EQ(lax::select_and_gather_add(th, xi.astype(DType::Float16), ge, {2}, {2}, {{0, 0}})
                .astype(DType::Float64).to_vector<double>(),
            (std::vector<double>{2, 3, 5}));
  // An all-padding window gives the identity.
  Array e = lax::reduce_window_max(jnp::array<int32_t>({1, 2}, {2}), {1}, {1}, {{1, 0}});
  EXPECT_EQ(e.to_vector<int32_t>(), (std::vector<int32_t>{std::numeric_limits<int32_t>::lowest(), 1, 2}));
}

TEST(Windowed, NamedPaddingUsesTheDilatedWindow) {
  Array x = jnp::arange(10.0).astype(DType::Float32);
  // SAME: out = ceil(10 / 3) = 4; the dilated window 1 + 2 * (3 - 1) = 5 needs total
  // padding (4 - 1) * 3 + 5 - 10 = 4, split (2, 2).
  Array a = lax::reduce_window_sum(x, {3}, {3}, "SAME", {}, {2});
  Array b = lax::reduce_window_sum(x, {3}, {3}, {{2, 2}}, {}, {2});
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  EXPECT_EQ(a.shape(), Shape({4}));
  EXPECT_EQ(lax::reduce_window_max(x, {3}, {}, "VALID").shape(), Shape({8}));  // strides default to 1
}

// ---- the generic reduce_window ----

std::string jaxpr_of(const std::function<Array(const Array&)>& f, const Array& x) {
  return jx::make_jaxpr(f)(x).str();
}

TEST(Windowed, GenericRecognizesMonoids) {
  Array x = jnp::arange(12.0).astype(DType::Float32).reshape({3, 4});
  const I w{2, 2}, s{1, 1};
  auto rw = [&](double init, lax::WindowComputation c) {
    return [=](const Array& a) { return lax::reduce_window(a, Array(init), c, w, s, "VALID"); };
  };
  const double inf = std::numeric_limits<double>::infinity();
  auto add = [](const Array& a, const Array& b) { return lax::add(a, b); };
  auto mx = [](const Array& a, const Array& b) { return lax::max(b, a); };
  auto mn = [](const Array& a, const Array& b) { return lax::min(a, b); };
  EXPECT_NE(jaxpr_of(rw(0.0, add), x).find("reduce_window_sum["), std::string::npos);
  EXPECT_NE(jaxpr_of(rw(-inf, mx), x).find("reduce_window_max["), std::string::npos);
  EXPECT_NE(jaxpr_of(rw(inf, mn), x).find("reduce_window_min["), std::string::npos);
  // Not the monoid's identity, or not a single add/max/min: the generic primitive.
  EXPECT_NE(jaxpr_of(rw(1.0, add), x).find("reduce_window["), std::string::npos);
  EXPECT_NE(jaxpr_of(rw(0.0, mx), x).find("reduce_window["), std::string::npos);
  // Integers: max's identity is the lowest value.
  Array xi = x.astype(DType::Int32);
  // (Made outside the traced function: a reshape inside it would be staged, and a traced
  // init is not a known identity, in jax as here.)
  Array lowest = jnp::array<int32_t>({std::numeric_limits<int32_t>::lowest()}).reshape({});
  auto ri = [&](const Array& a) {
    return lax::reduce_window(a, lowest,
                              [](const Array& p, const Array& q) { return lax::max(p, q); }, w, s, "VALID");
  };
  EXPECT_NE(jaxpr_of(ri, xi).find("reduce_window_max["), std::string::npos);
}

TEST(Windowed, GenericComputesAFoldOverTheWindow) {
  Array x = jnp::array<double>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4});
  const I w{2, 2}, s{1, 2};
  const Pairs p{{0, 1}, {1, 0}};
  auto mul = [](const Array& a, const Array& b) { return lax::mul(a, b); };
  // Product with init 1: padding contributes 1.
  Array prod = lax::reduce_window(x, Array(1.0), mul, w, s, p);
  EXPECT_EQ(prod.to_vector<double>(), (std::vector<double>{1 * 5, 2 * 3 * 6 * 7, 5 * 9, 6 * 7 * 10 * 11, 9, 10 * 11}));
  // A computation that is not a single max, and a constant inside it: same as max.
  auto mx = [](const Array& a, const Array& b) { return lax::max(lax::max(a, b), b * 0.5); };
  const double inf = std::numeric_limits<double>::infinity();
  Array g = lax::reduce_window(x, Array(-inf), mx, w, s, p);
  EXPECT_EQ(g.to_vector<double>(), lax::reduce_window_max(x, w, s, p).to_vector<double>());
  // Base and window dilation, with a float32 operand and a weak init.
  Array xf = x.astype(DType::Float32);
  auto add2 = [](const Array& a, const Array& b) { return lax::add(a, lax::add(b, b)); };
  Array s2 = lax::reduce_window(xf, Array(0.0), add2, {2, 2}, {1, 1}, {{1, 0}, {0, 1}}, {2, 1}, {1, 2});
  Array want = lax::reduce_window_sum(xf, {2, 2}, {1, 1}, {{1, 0}, {0, 1}}, {2, 1}, {1, 2}) * 2.0;
  EXPECT_EQ(s2.dtype(), DType::Float32);
  EXPECT_EQ(s2.to_vector<float>(), want.to_vector<float>());
}

// ---- jit ----

TEST(Windowed, JitEqualsEager) {
  auto f = [](const Array& x) {
    const I w{1, 3, 3, 1}, s{1, 2, 2, 1};
    const Pairs p{{0, 0}, {1, 1}, {1, 1}, {0, 0}};
    Array a = lax::reduce_window_max(x, w, s, p);
    Array b = lax::reduce_window_min(x, w, s, p);
    Array c = lax::reduce_window_sum(x, w, s, p, {1, 2, 1, 1}, {1, 1, 2, 1});
    Array d = lax::reduce_window(x, Array(1.0f), [](const Array& u, const Array& v) { return lax::mul(u, v); },
                                 w, s, p);
    Array e = lax::select_and_scatter_add(a, x, lax::WindowSelect::ge, w, s, p);
    Array g = lax::select_and_gather_add(x, x, lax::WindowSelect::le, w, s, p);
    return std::make_tuple(a, b, c, d, e, g);
  };
  Array x = jx::random::normal(jx::random::PRNGKey(3), {2, 7, 6, 3});
  auto eager = f(x);
  auto jitted = jx::jit(f)(x);
  auto cmp = [](const Array& u, const Array& v) { EXPECT_EQ(u.to_vector<float>(), v.to_vector<float>()); };
  cmp(std::get<0>(eager), std::get<0>(jitted));
  cmp(std::get<1>(eager), std::get<1>(jitted));
  cmp(std::get<2>(eager), std::get<2>(jitted));
  cmp(std::get<3>(eager), std::get<3>(jitted));
  cmp(std::get<4>(eager), std::get<4>(jitted));
  cmp(std::get<5>(eager), std::get<5>(jitted));
}

// ---- errors ----

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const jx::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Windowed, ErrorsNameTheOpTheShapesAndTheFix) {
  Array x = jnp::zeros({1, 2, 2, 1});
  EXPECT_EQ(error_of([&] { lax::reduce_window_max(x, {1, 3, 3, 1}, {1, 1, 1, 1}, "VALID"); }),
            "[reduce_window_max] the window of size 3 (window_dimensions (1, 3, 3, 1), window_dilation "
            "(1, 1, 1, 1)) is larger than dim 1 of f32[1,2,2,1], which is 2 after base dilation 1 and "
            "padding (0, 0); pad the operand or use a smaller window");
  EXPECT_EQ(error_of([&] { lax::reduce_window_sum(x, {2, 2}, {1, 1}, "VALID"); }),
            "[reduce_window_sum] window_dimensions (2, 2) has 2 entries for the operand f32[1,2,2,1] of "
            "rank 4; give one per operand dim (1 where the window does not reduce)");
  EXPECT_EQ(error_of([&] { lax::reduce_window_min(x, {1, 1, 1, 1}, {1, 0, 1, 1}, "SAME"); }),
            "[reduce_window_min] window_strides (1, 0, 1, 1) must all be positive, got 0 (operand "
            "f32[1,2,2,1])");
  EXPECT_EQ(error_of([&] { lax::reduce_window_max(x, {1, 1, 1, 1}, {}, "VALID", {1, 1, 1, -1}); }),
            "[reduce_window_max] base_dilation (1, 1, 1, -1) must all be positive, got -1 (operand "
            "f32[1,2,2,1])");
  EXPECT_EQ(error_of([&] { lax::reduce_window_max(x, {1, 1, 1, 1}, {}, {{0, 0}}); }),
            "[reduce_window_max] padding has 1 (lo, hi) pairs for 4 spatial dims; give one pair per dim");
  EXPECT_EQ(error_of([&] { lax::reduce_window_max(x, {1, 1, 1, 1}, {}, "FULL"); }),
            "[reduce_window_max] unknown padding \"FULL\"; use \"SAME\", \"SAME_LOWER\", \"VALID\" or (lo, hi) pairs");
  EXPECT_EQ(error_of([&] { lax::reduce_window_sum(x.astype(DType::Bool), {1, 1, 1, 1}, {}, "VALID"); }),
            "[reduce_window_sum] needs a number dtype, got bool[1,2,2,1]; convert bools to an integer "
            "dtype first");
  auto add = [](const Array& a, const Array& b) { return lax::add(a, b); };
  EXPECT_EQ(error_of([&] { lax::reduce_window(x, jnp::zeros({2}), add, {1, 1, 1, 1}, {}, "VALID"); }),
            "[reduce_window] expected init_value to be a scalar, got f32[2]");
  EXPECT_EQ(error_of([&] {
              lax::reduce_window(x, jnp::array<double>({0.0}).reshape({}), add, {1, 1, 1, 1}, {}, "VALID");
            }),
            "[reduce_window] got inconsistent dtypes for operand and init_value: f32[1,2,2,1] and f64[]; "
            "convert init_value to float32");
  EXPECT_EQ(error_of([&] { lax::reduce_window(x.astype(DType::Int32), Array(1.5), add, {1, 1, 1, 1}, {}, "VALID"); }),
            "[reduce_window] got inconsistent dtypes for operand and init_value: i32[1,2,2,1] and f32[]; "
            "convert init_value to int32");
  EXPECT_EQ(error_of([&] {
              lax::select_and_scatter_add(jnp::zeros({1, 2, 2, 1}), x, lax::WindowSelect::ge, {1, 2, 2, 1},
                                          {1, 2, 2, 1}, {{0, 0}, {0, 0}, {0, 0}, {0, 0}});
            }),
            "[select_and_scatter_add] source f32[1,2,2,1] must have one element per window of the operand "
            "f32[1,2,2,1], i.e. shape (1, 1, 1, 1)");
  EXPECT_EQ(error_of([&] {
              lax::select_and_gather_add(x.astype(DType::Int32), x.astype(DType::Int32), lax::WindowSelect::ge,
                                         {1, 1, 1, 1}, {1, 1, 1, 1}, {{0, 0}, {0, 0}, {0, 0}, {0, 0}});
            }),
            "[select_and_gather_add] needs a floating dtype, got i32[1,2,2,1]");
  // The VJP of max pooling with window dilation: not implemented, as in jax.
  Array y = jnp::ones({5});
  EXPECT_EQ(error_of([&] {
              jx::grad([](const Array& a) { return jnp::sum(lax::reduce_window_max(a, {2}, {1}, "VALID", {}, {2})); })(y);
            }),
            "[select_and_gather_add] the VJP of max/min pooling with window_dilation (2,) is not "
            "implemented (as in jax); use window_dilation 1, or forward mode (jvp)");
}

}  // namespace
