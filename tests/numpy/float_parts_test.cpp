// jnp.frexp, ldexp, modf, divmod, cross and einsum_path against NumPy
// (tests/golden/gen_float_parts.py), bit for bit where NumPy is exact: signed zeros,
// infinities, NaNs, subnormals and exponents beyond the float range.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "jx/jx.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;
using jx::DType;
using jx::Shape;

#include "golden/float_parts_golden.inc"

// Equal as NumPy means it: NaN equals NaN, and a zero's sign counts.
void expect_same(const std::vector<double>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "]";
      continue;
    }
    EXPECT_EQ(got[i], want[i]) << what << " [" << i << "]";
    EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << what << " [" << i << "] sign";
  }
}

Array of(const std::vector<double>& v, DType t) { return jnp::array(v).astype(t); }

TEST(FloatParts, FrexpAndModfMatchNumPy) {
  struct Case {
    DType t;
    const std::vector<double> &in, &m, &f, &w;
    const std::vector<int32_t>& e;
  };
  for (const Case& c : {Case{DType::Float64, kFrexpIn_f64, kFrexpMantissa_f64, kModfFrac_f64, kModfWhole_f64, kFrexpExponent_f64},
                        Case{DType::Float32, kFrexpIn_f32, kFrexpMantissa_f32, kModfFrac_f32, kModfWhole_f32, kFrexpExponent_f32}}) {
    SCOPED_TRACE(jx::dtype_name(c.t));
    Array x = of(c.in, c.t);
    auto [m, e] = jnp::frexp(x);
    EXPECT_EQ(m.dtype(), c.t);
    EXPECT_EQ(e.dtype(), DType::Int32);
    expect_same(m.astype(DType::Float64).to_vector<double>(), c.m, "frexp mantissa");
    EXPECT_EQ(e.to_vector<int32_t>(), c.e);
    auto [frac, whole] = jnp::modf(x);
    expect_same(frac.astype(DType::Float64).to_vector<double>(), c.f, "modf fraction");
    expect_same(whole.astype(DType::Float64).to_vector<double>(), c.w, "modf whole");
    // Integers promote to float32, as jnp.
    EXPECT_EQ(jnp::frexp(jnp::array<int32_t>({12})).first.dtype(), DType::Float32);
  }
  // float16 computes in float32 and returns float16: 6 = 0.75 * 2^3.
  auto [m16, e16] = jnp::frexp(jnp::array<float>({6.0f}).astype(DType::Float16));
  EXPECT_EQ(m16.dtype(), DType::Float16);
  EXPECT_EQ(m16.astype(DType::Float32).item<float>(), 0.75f);
  EXPECT_EQ(e16.item<int32_t>(), 3);
}

TEST(FloatParts, LdexpIsExactAtTheRangeEnds) {
  Array x = jnp::array(kLdexpX), e = jnp::array(kLdexpE);
  expect_same(jnp::ldexp(x, e).to_vector<double>(), kLdexp, "ldexp float64");
  Array x32 = jnp::array<float>({1.0f, -1.5f, 3.0f, 1e-30f, 0.75f});
  Array e32 = jnp::array<int32_t>({127, -149, -150, 100, 128});
  expect_same(jnp::ldexp(x32, e32).astype(DType::Float64).to_vector<double>(), kLdexp32, "ldexp float32");
  // The inverse of frexp.
  Array v = jnp::array(kFrexpIn_f64);
  auto [m, ex] = jnp::frexp(v);
  expect_same(jnp::ldexp(m, ex).to_vector<double>(), kFrexpIn_f64, "ldexp(frexp(x))");
  // Differentiable in x1, as JAX's: d/dx x 2^n = 2^n.
  Array g = jx::grad([](const Array& a) { return jnp::sum(jnp::ldexp(a, jnp::array<int32_t>({3, -2}))); })(
      jnp::array<double>({1.5, -7.0}));
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{8.0, 0.25}));
  jx::testing::expect_error<jx::DTypeError>([] { jnp::ldexp(jnp::ones({2}), jnp::ones({2})); },
                                            "[ldexp] the exponent must be an integer array, got f32[2]");
}

TEST(FloatParts, DivmodMatchesNumPy) {
  auto [q, r] = jnp::divmod(jnp::array(kDivmodA), jnp::array(kDivmodB));
  expect_same(q.to_vector<double>(), kDivmodQ, "divmod quotient");
  expect_same(r.to_vector<double>(), kDivmodR, "divmod remainder");
  auto [iq, ir] = jnp::divmod(jnp::array<int32_t>({7, -7, 7, -7, 0, 13}), jnp::array<int32_t>({2, 2, -2, -2, 5, 4}));
  EXPECT_EQ(iq.to_vector<int32_t>(), kDivmodIq);
  EXPECT_EQ(ir.to_vector<int32_t>(), kDivmodIr);
}

TEST(FloatParts, CrossMatchesNumPy) {
  Array a = jnp::reshape(jnp::array(kCrossA), {4, 3}), b = jnp::reshape(jnp::array(kCrossB), {4, 3});
  auto two = [](const Array& v) { return v(jx::ellipsis, jx::slice(0, 2)); };
  expect_same(jnp::cross(a, b).to_vector<double>(), kCross33, "3 x 3");
  expect_same(jnp::cross(a, two(b)).to_vector<double>(), kCross32, "3 x 2");
  expect_same(jnp::cross(two(a), two(b)).to_vector<double>(), kCross22, "2 x 2");
  EXPECT_EQ(jnp::cross(two(a), two(b)).shape(), (Shape{4}));
  expect_same(jnp::cross(a.T(), b.T(), 0, 0, 0).to_vector<double>(), kCrossAxis0, "axis 0");
  expect_same(jnp::cross(a.T(), b.T(), -1, -1, -1, 0).to_vector<double>(), kCrossAxis0, "axis=0");
  jx::testing::check_grads([](const std::vector<Array>& x) { return std::vector<Array>{jnp::cross(x[0], x[1])}; },
                           {jx::testing::rand_f64({2, 3}, 1), jx::testing::rand_f64({2, 3}, 2)});
  jx::testing::expect_error<jx::ValueError>([] { jnp::cross(jnp::ones({4}), jnp::ones({3})); },
                                            "[cross] the vectors must have 2 or 3 components, got f32[4]");
}

// The multiply-adds of a path: each step costs the product of the sizes of the labels its
// two operands have (an independent re-count of what einsum_path minimizes).
double path_cost(const std::string& sub, const std::vector<std::vector<int64_t>>& shapes,
                 const std::vector<std::pair<int64_t, int64_t>>& path) {
  std::string lhs = sub.substr(0, sub.find("->")), out = sub.substr(sub.find("->") + 2);
  std::vector<std::string> ops;
  std::map<char, int64_t> size;
  size_t start = 0;
  for (size_t i = 0; i <= lhs.size(); ++i)
    if (i == lhs.size() || lhs[i] == ',') {
      ops.push_back(lhs.substr(start, i - start));
      start = i + 1;
    }
  for (size_t k = 0; k < ops.size(); ++k)
    for (size_t d = 0; d < ops[k].size(); ++d) size[ops[k][d]] = shapes[k][d];
  double total = 0;
  for (auto [i, j] : path) {
    std::string u = ops[size_t(i)];
    for (char c : ops[size_t(j)])
      if (u.find(c) == std::string::npos) u += c;
    double c = 1;
    for (char l : u) c *= double(size[l]);
    total += c;
    std::string rest;
    for (size_t k = 0; k < ops.size(); ++k)
      if (int64_t(k) != i && int64_t(k) != j) rest += ops[k];
    std::string r;
    for (char l : u)
      if (out.find(l) != std::string::npos || rest.find(l) != std::string::npos) r += l;
    ops.erase(ops.begin() + j);
    ops.erase(ops.begin() + i);
    ops.push_back(r);
  }
  return total;
}

TEST(FloatParts, EinsumPathFindsNumPysOptimalOrder) {
  for (const PathCase& c : kPathCases) {
    SCOPED_TRACE(c.subscripts);
    std::vector<Array> ops;
    for (const auto& s : c.shapes) ops.push_back(jnp::ones(Shape(s)));
    jnp::EinsumPath p = jnp::einsum_path(c.subscripts, ops, "optimal");
    // The same cost as NumPy's optimal path (ties may be broken differently).
    EXPECT_EQ(path_cost(c.subscripts, c.shapes, p.path), path_cost(c.subscripts, c.shapes, c.path));
    EXPECT_NE(p.description.find("Optimized FLOP count"), std::string::npos);
    // einsum's default ("auto") takes that path; any path gives the same values.
    Array want = jnp::einsum(c.subscripts, ops, std::nullopt, "greedy");
    jx::testing::expect_close(jnp::einsum(c.subscripts, ops), want, 0, 1e-6, c.subscripts);
  }
  // On the chain where the order matters, the optimal path is NumPy's exactly.
  const PathCase& chain = kPathCases[1];
  std::vector<Array> ops;
  for (const auto& s : chain.shapes) ops.push_back(jnp::ones(Shape(s)));
  EXPECT_EQ(jnp::einsum_path(chain.subscripts, ops, "optimal").path, chain.path);
  jx::testing::expect_error<jx::ValueError>([&] { jnp::einsum_path("ij,jk->ik", {ops[0], ops[1]}, "best"); },
                                            "[einsum] unknown optimize=\"best\"");
}

}  // namespace
