// The order of complex numbers, as JAX's: lax::max/min, jnp's comparisons, fmax/fmin, the
// max/min reductions, argmax/argmin and sort/argsort on complex64 and complex128, against
// tests/golden/gen_complex_order.py (NumPy's values, or JAX's rule written out in NumPy
// where JAX's NaN handling departs from NumPy's); jit against eager, vmap against a loop,
// and gradients through complex max, min and sort.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <string>

#include "jx/jx.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::testing::expect_error;
using Arrays = std::vector<Array>;

#include "golden/complex_order_golden.inc"

const DType kDtypes[] = {DType::Complex64, DType::Complex128};

Array carray(const std::vector<C>& v, DType t) { return jnp::array(v).astype(t); }

// Equal as values and in their zeros' signs; a NaN part matches a NaN part.
bool same_part(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

void expect_same(const Array& got, const std::vector<C>& want, const std::string& what) {
  auto g = got.to_vector<C>();
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_TRUE(same_part(g[i].real(), want[i].real()) && same_part(g[i].imag(), want[i].imag()))
        << what << " [" << i << "]: got " << g[i] << ", want " << want[i];
}

void expect_same(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  if (jx::is_complex(want.dtype())) return expect_same(got, want.to_vector<C>(), what);
  EXPECT_EQ(got.astype(DType::Int64).to_vector<int64_t>(),
            want.astype(DType::Int64).to_vector<int64_t>())
      << what;
}

void expect_bools(const Array& got, const std::vector<bool>& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), DType::Bool) << what;
  auto g = got.astype(DType::Int32).to_vector<int32_t>();
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) EXPECT_EQ(g[i] != 0, want[i]) << what << " [" << i << "]";
}

void expect_ints(const Array& got, const std::vector<int>& want, const std::string& what) {
  auto g = got.astype(DType::Int64).to_vector<int64_t>();
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) EXPECT_EQ(g[i], want[i]) << what << " [" << i << "]";
}

// ---- elementwise ----

TEST(ComplexOrder, MaxMinPickByRealThenImagAsLax) {
  for (DType t : kDtypes) {
    SCOPED_TRACE(jx::dtype_name(t));
    Array x = carray(kX, t), y = carray(kY, t);
    expect_same(lax::max(x, y), kMax, "lax::max");
    expect_same(lax::min(x, y), kMin, "lax::min");
    // With a NaN part every comparison is false and the second operand comes out.
    expect_same(lax::max(y, x), kMaxYX, "lax::max(y, x)");
    expect_same(jnp::maximum(x, y), kMax, "jnp::maximum");
    expect_same(jnp::minimum(x, y), kMin, "jnp::minimum");
    expect_same(jnp::fmax(x, y), kFmax, "jnp::fmax");
    expect_same(jnp::fmin(x, y), kFmin, "jnp::fmin");
    EXPECT_EQ(lax::max(x, y).dtype(), t);
  }
  // Promotion first: a float64 operand against complex64 gives complex128.
  Array m = jnp::maximum(carray(kX, DType::Complex64), jnp::array(std::vector<double>(kX.size(), 1.0)));
  EXPECT_EQ(m.dtype(), DType::Complex128);
}

TEST(ComplexOrder, ComparisonsAsJnpComplexComparison) {
  for (DType t : kDtypes) {
    SCOPED_TRACE(jx::dtype_name(t));
    Array x = carray(kX, t), y = carray(kY, t);
    expect_bools(jnp::less(x, y), kLess, "less");
    expect_bools(jnp::less_equal(x, y), kLessEqual, "less_equal");
    expect_bools(jnp::greater(x, y), kGreater, "greater");
    expect_bools(jnp::greater_equal(x, y), kGreaterEqual, "greater_equal");
    expect_bools(x < y, kLess, "operator<");
    expect_bools(x >= y, kGreaterEqual, "operator>=");
    // Broadcasting against a scalar: 1 + 0j.
    Array one = jnp::less(x, Array(std::complex<double>(1, 0)));
    EXPECT_EQ(one.shape(), x.shape());
    EXPECT_EQ(one.astype(DType::Int32).to_vector<int32_t>()[11], 1);  // -2 + 0.5j < 1
  }
}

TEST(ComplexOrder, LaxOrderedComparisonsStayRealOnlyAsJax) {
  // lax.lt's dtype rule takes _ordered operands (ints, floats, bool): complex is an error.
  Array x = carray(kX, DType::Complex64);
  expect_error<jx::DTypeError>([&] { lax::lt(x, x); }, {"[lt]", "complex", "jnp::less"});
  expect_error<jx::DTypeError>([&] { lax::ge(x, x); }, {"[ge]", "complex"});
}

// ---- reductions ----

TEST(ComplexOrder, MaxMinReductionsFoldLaxMaxFromTheIdentity) {
  for (DType t : kDtypes) {
    SCOPED_TRACE(jx::dtype_name(t));
    Array m = carray(kM, t).reshape({4, 5});
    expect_same(jnp::max(m, 0), kReduceMaxAxis0, "max axis 0");
    expect_same(jnp::max(m, 1), kReduceMaxAxis1, "max axis 1");
    expect_same(jnp::max(m), kReduceMaxAll, "max");
    expect_same(jnp::min(m, 0), kReduceMinAxis0, "min axis 0");
    expect_same(jnp::min(m, 1), kReduceMinAxis1, "min axis 1");
    expect_same(jnp::min(m), kReduceMinAll, "min");
    expect_same(jnp::amax(m, 1, true).reshape({4}), kReduceMaxAxis1, "amax keepdims");
    EXPECT_EQ(jnp::amax(m, 1, true).shape(), (Shape{4, 1}));
    // The NaN-free rows and columns agree with NumPy's max: the first row's is 1 + 5j.
    EXPECT_EQ(jnp::max(m(0)).item<C>(), C(1, 5));
    // XLA keeps a lone element (a one-element reduce is a reshape) but folds two from
    // -inf + 0j, which is above -inf - 1j.
    expect_same(jnp::max(carray(kLone, t)), kLoneMax, "max of one");
    expect_same(jnp::max(jnp::concatenate({carray(kLone, t), carray(kLone, t)})), kTwoLoneMax,
                "max of two");
    // An empty reduction gives the identity.
    Array e = lax::reduce_max(jnp::zeros(Shape{0, 2}, t), {0});
    expect_same(e, std::vector<C>(2, C(-INFINITY, 0)), "empty max");
    // where needs initial, as JAX; the masked elements take the identity.
    jnp::ReduceOptions o;
    o.where = jnp::array(std::vector<bool>{true, false, true, false, true}).reshape({1, 5});
    o.initial = carray({C(0.5, 0)}, t).reshape({});
    expect_same(jnp::max(m(0).reshape({1, 5}), 1, o), std::vector<C>{C(1, 2)}, "max where");
  }
}

TEST(ComplexOrder, NanMaxNanMinSkipValuesWithANanPart) {
  for (DType t : kDtypes) {
    SCOPED_TRACE(jx::dtype_name(t));
    Array m = carray(kM, t).reshape({4, 5});
    expect_same(jnp::nanmax(m, 1), kNanMaxAxis1, "nanmax axis 1");
    expect_same(jnp::nanmax(m), kNanMaxAll, "nanmax");
    expect_same(jnp::nanmin(m, 1), kNanMinAxis1, "nanmin axis 1");
    expect_same(jnp::nanmin(m), kNanMinAll, "nanmin");
    // Every element has a NaN part: NaN + 0j, as JAX's where(all_nan, nan, out).
    Array allnan = carray({C(NAN, 1), C(1, NAN)}, t);
    expect_same(jnp::nanmax(allnan), std::vector<C>{C(NAN, 0)}, "nanmax of NaNs");
  }
}

TEST(ComplexOrder, ClipRejectsComplexAsJax) {
  // maximum/minimum order complex values, but JAX's clip refuses them.
  Array x = carray(kX, DType::Complex64);
  expect_error<jx::ValueError>([&] { jnp::clip(x, x, x); }, {"[clip]", "complex", "jnp::real"});
  Array r = jnp::array(std::vector<float>{1, 2});
  expect_error<jx::ValueError>([&] { jnp::clip(r, Array(std::complex<double>(0, 1))); }, {"[clip]"});
}

TEST(ComplexOrder, ArgmaxArgminAsNumpy) {
  for (DType t : kDtypes) {
    SCOPED_TRACE(jx::dtype_name(t));
    Array m = carray(kM, t).reshape({4, 5});
    expect_ints(jnp::argmax(m, 0), kArgmaxAxis0, "argmax axis 0");
    expect_ints(jnp::argmax(m, 1), kArgmaxAxis1, "argmax axis 1");
    expect_ints(jnp::argmax(m), kArgmaxAll, "argmax");
    expect_ints(jnp::argmin(m, 0), kArgminAxis0, "argmin axis 0");
    expect_ints(jnp::argmin(m, 1), kArgminAxis1, "argmin axis 1");
    expect_ints(jnp::argmin(m), kArgminAll, "argmin");
    expect_ints(jnp::argmax(carray(kX, t)), kArgmaxX, "argmax x");
    expect_ints(jnp::argmin(carray(kX, t)), kArgminX, "argmin x");
    // Ties on both parts: the first one; equal real parts: the imaginary parts decide.
    Array tie = carray({C(1, 2), C(3, 1), C(3, 4), C(3, 4), C(-1, 9)}, t);
    EXPECT_EQ(jnp::argmax(tie).item<int64_t>(), 2);
    EXPECT_EQ(jnp::argmin(tie).item<int64_t>(), 4);
    EXPECT_EQ(lax::argmax(tie, 0, DType::Int64).dtype(), DType::Int64);
  }
}

// ---- sorting ----

TEST(ComplexOrder, SortAndArgsortAsLaxSort) {
  for (DType t : kDtypes) {
    SCOPED_TRACE(jx::dtype_name(t));
    Array s = carray(kS, t);
    expect_same(jnp::sort(s), kSortS, "sort");
    expect_ints(jnp::argsort(s), kArgsortS, "argsort");
    expect_same(s.sort(), kSortS, "Array::sort");
    expect_same(lax::sort(s), kSortS, "lax::sort");
    // JAX's order is not NumPy's for R + nan*j: it stays among the values with real part R.
    EXPECT_NE(jnp::sort(s).to_vector<C>()[6], kNumpySortS[6]);
    Array m = carray(kM, t).reshape({4, 5});
    expect_same(jnp::sort(m, -1), kSortMAxis1, "sort axis -1");
    expect_ints(jnp::argsort(m, -1), kArgsortMAxis1, "argsort axis -1");
    expect_same(jnp::sort(m, 0), kSortMAxis0, "sort axis 0");
    expect_ints(jnp::argsort(m, 0), kArgsortMAxis0, "argsort axis 0");
    // Complex keys with a payload, and an unstable sort (equal keys in any order).
    Array payload = lax::broadcasted_iota(DType::Int32, Shape{int64_t(kS.size())}, 0);
    expect_ints(lax::sort({s, payload}, 0, true, 1)[1], kArgsortS, "sort with payload");
    expect_same(lax::sort(s, 0, false), kSortS, "unstable sort");  // equal keys are equal values
    // Descending: the reverse of the stable ascending order, with ties kept in order.
    auto d = jnp::argsort(s, -1, true, true).astype(DType::Int64).to_vector<int64_t>();
    EXPECT_EQ(d.front(), 8);   // nan + nan*j is last ascending, first descending
    EXPECT_EQ(d.back(), 6);    // -inf + 3j
  }
}

// ---- transformations ----

std::vector<Array> everything(const Array& x, const Array& y) {
  return {jnp::maximum(x, y),        jnp::minimum(y, x), jnp::less(x, y),    jnp::greater_equal(y, x),
          jnp::max(jnp::stack({x, y}), 0), jnp::argmin(jnp::stack({x, y}), 0), jnp::sort(x),
          jnp::argsort(y),           jnp::fmax(x * 2.0, y) + 1.0};
}

TEST(ComplexOrder, JitEqualsEager) {
  for (DType t : kDtypes) {
    SCOPED_TRACE(jx::dtype_name(t));
    Array x = carray(kX, t), y = carray(kY, t);
    std::vector<Array> got = jx::jit(everything)(x, y), want = everything(x, y);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) expect_same(got[i], want[i], "output " + std::to_string(i));
    // Elementwise max/min of complex values run in generated code (jx_cx::lex_max), fused.
    auto f = [](const Array& a, const Array& b) { return jnp::maximum(a * b, b) - jnp::minimum(a, b); };
    expect_same(jx::jit(f)(x, y), f(x, y), "fused max/min");
  }
}

TEST(ComplexOrder, VmapEqualsLoop) {
  for (DType t : kDtypes) {
    SCOPED_TRACE(jx::dtype_name(t));
    Array m = carray(kM, t).reshape({4, 5});
    Array n = jnp::flip(m, 1);
    const std::vector<std::pair<const char*, std::function<Array(const Array&, const Array&)>>> fs = {
        {"maximum", [](const Array& a, const Array& b) { return jnp::maximum(a, b); }},
        {"less", [](const Array& a, const Array& b) { return jnp::less(a, b); }},
        {"max", [](const Array& a, const Array& b) { return jnp::max(a) + jnp::min(b); }},
        {"argmax", [](const Array& a, const Array& b) { return jnp::argmax(a) + jnp::argmin(b); }},
        {"sort", [](const Array& a, const Array& b) { return jnp::sort(a); }},
        {"argsort", [](const Array& a, const Array& b) { return jnp::argsort(b); }},
    };
    for (const auto& [name, f] : fs) {
      Array batched = jx::vmap(f)(m, n);
      for (int64_t r = 0; r < 4; ++r) expect_same(batched(r), f(m(r), n(r)), std::string(name) + " row");
      // Mapped along axis 1 of the operands (columns): the kernels see another layout.
      Array cols = jx::vmap(f, {.in_axes = 1})(m, n);
      for (int64_t c = 0; c < 5; ++c)
        expect_same(cols(c), f(m(jx::slice(), c), n(jx::slice(), c)), std::string(name) + " column");
    }
  }
}

TEST(ComplexOrder, GradThroughComplexMaxSelectsTheWinner) {
  // f(z) = sum |max(z, w)|^2 is real: its gradient is 2 conj(max) where z wins, half of it
  // where z ties with w (lax.max's balanced jvp), and 0 where w wins.
  Array z = carray({C(1, 2), C(1, -1), C(-2, 0.5), C(3, 1)}, DType::Complex128);
  Array w = carray({C(1, 3), C(1, -1), C(-3, 9), C(2, 7)}, DType::Complex128);
  auto f = [&w](const Array& z) { return jnp::sum(jnp::square(jnp::abs(jnp::maximum(z, w)))); };
  auto g = jx::grad(f)(z).to_vector<C>();
  const std::vector<C> want = {C(0, 0), C(1, 1), C(-4, -1), C(6, -2)};
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); ++i) EXPECT_EQ(g[i], want[i]) << i;
  // The max reduction passes the gradient to its (single) winner.
  auto h = [](const Array& z) { return jnp::square(jnp::abs(jnp::max(z))); };
  auto gh = jx::grad(h)(z).to_vector<C>();
  EXPECT_EQ(gh, (std::vector<C>{C(0, 0), C(0, 0), C(0, 0), C(6, -2)}));
}

TEST(ComplexOrder, CheckGrads) {
  // Away from ties (real parts at least 0.25 apart) a small step keeps every comparison, so
  // the finite differences see the same branch as the derivative rules.
  const std::vector<C> a = {C(1, 2), C(-3, 0.5), C(0.25, -0.5), C(2.5, -4), C(-0.75, 1)};
  const std::vector<C> b = {C(0.5, -1), C(2, 0.25), C(1.5, 1), C(-1, 3), C(-0.5, 0.5)};
  using Fn = std::function<Array(const Arrays&)>;
  const std::vector<std::pair<const char*, Fn>> fns = {
      {"max", [](const Arrays& v) { return lax::max(v[0], v[1]); }},
      {"min", [](const Arrays& v) { return lax::min(v[0], v[1]); }},
      {"reduce_max", [](const Arrays& v) { return jnp::max(v[0] * v[1]); }},
      {"reduce_min", [](const Arrays& v) { return jnp::min(v[0] + v[1]); }},
      {"sort", [](const Arrays& v) { return jnp::sort(v[0] * v[1]); }},
      {"fmax", [](const Arrays& v) { return jnp::fmax(v[0], v[1]); }},
  };
  Arrays args = {carray(a, DType::Complex128), carray(b, DType::Complex128)};
  for (const auto& [name, f] : fns) {
    SCOPED_TRACE(name);
    auto flat = [f = f](const Arrays& v) { return Arrays{f(v)}; };
    EXPECT_NO_THROW(jx::testing::check_grads(flat, args, {.order = 2, .atol = 1e-6, .rtol = 1e-6}));
  }
}

// lax::cummax / cummin on complex: the running lexicographic extreme, by hand; reversed;
// under jit, vmap, and check_grads (the jvp goes through lax::max's balanced rule, as the
// real one does).
TEST(ComplexOrder, CumulativeMaxMin) {
  for (DType t : {DType::Complex64, DType::Complex128}) {
    Array z = carray({C(1, 1), C(1, 3), C(0, 9), C(2, -1), C(2, -2)}, t);
    auto as_c = [](const Array& a) { return a.astype(DType::Complex128).to_vector<C>(); };
    EXPECT_EQ(as_c(lax::cummax(z)), (std::vector<C>{C(1, 1), C(1, 3), C(1, 3), C(2, -1), C(2, -1)}));
    EXPECT_EQ(as_c(lax::cummin(z)), (std::vector<C>{C(1, 1), C(1, 1), C(0, 9), C(0, 9), C(0, 9)}));
    EXPECT_EQ(as_c(lax::cummax(z, 0, true)), (std::vector<C>{C(2, -1), C(2, -1), C(2, -1), C(2, -1), C(2, -2)}));
    auto f = [](const Array& x) { return lax::cummax(x, 1); };
    Array m = jnp::stack({z, jnp::flip(z), z * C(0, 1)});
    EXPECT_EQ(as_c(jx::jit(f)(m)), as_c(f(m)));
    Array batched = jx::vmap(f)(jnp::expand_dims(m, 1));
    for (int64_t b = 0; b < 3; ++b) EXPECT_EQ(as_c(batched(b)), as_c(f(m(b).reshape({1, 5}))));
  }
  Array x = carray({C(0.3, 1), C(1.2, -0.5), C(0.7, 2), C(1.9, 0.1)}, DType::Complex128);
  auto g = [](const Arrays& a) { return Arrays{lax::cummax(a[0]), lax::cummin(a[0], 0, true)}; };
  EXPECT_NO_THROW(jx::testing::check_grads(g, {x}, {.order = 2}));
}

}  // namespace
