// Complex values in generated code: every complex elementwise primitive compiled against
// the eager kernels bit for bit (infinite, NaN and signed-zero parts included, at every
// remainder length), the fusion of complex chains into one kernel, and what stays a
// library call (complex sums and products).
#include <complex>

#include "compiler/codegen.h"
#include "compiler/jit_testing.h"
#include "compiler/pipeline.h"

namespace {

using namespace jx;
using namespace jx::testing;
using ops::Arrays;

std::string source_of(const tr::FlatFn& f, const std::vector<ops::Aval>& in) {
  ir::Jaxpr j = compiler::optimize(trace_closed(f, in), "codegen_complex_test");
  return compiler::generate_source(j, compiler::fuse(j), "codegen_complex_test");
}

// A complex input whose real and imaginary parts come from different seeds, with zeros of
// both signs, infinities and NaN in either part when `specials`.
Array cinput(DType t, const Shape& s, int seed, bool specials) {
  const DType r = real_dtype(t);
  return lax::complex(input(r, s, seed, specials), input(r, s, seed + 101, specials));
}

// Bit for bit, part by part (NaN matches NaN, as close_values does).
::testing::AssertionResult same_bits(const Array& got, const Array& want) {
  if (!is_complex(want.dtype())) return close_values({got}, {want}, 0);
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return ::testing::AssertionFailure() << got.repr() << " vs " << want.repr();
  auto re = close_values({lax::real(got)}, {lax::real(want)}, 0);
  if (!re) return re << " (real part)";
  auto im = close_values({lax::imag(got)}, {lax::imag(want)}, 0);
  if (!im) return im << " (imaginary part)";
  return ::testing::AssertionSuccess();
}

using Op = std::function<Array(const Array&, const Array&)>;

std::vector<std::pair<const char*, Op>> operations() {
  return {
      {"add", [](const Array& z, const Array& w) { return lax::add(z, w); }},
      {"sub", [](const Array& z, const Array& w) { return lax::sub(z, w); }},
      {"mul", [](const Array& z, const Array& w) { return lax::mul(z, w); }},
      {"div", [](const Array& z, const Array& w) { return lax::div(z, w); }},
      {"pow", [](const Array& z, const Array& w) { return lax::pow(z, w); }},
      {"eq", [](const Array& z, const Array& w) { return lax::eq(z, lax::conj(z)); }},
      {"ne", [](const Array& z, const Array& w) { return lax::ne(z, w); }},
      {"max", [](const Array& z, const Array& w) { return lax::max(z, w); }},
      {"min", [](const Array& z, const Array& w) { return lax::min(z, w); }},
      // Equal real parts: the imaginary parts decide.
      {"max tie", [](const Array& z, const Array&) { return lax::max(z, lax::conj(z)); }},
      {"min tie", [](const Array& z, const Array&) { return lax::min(lax::conj(z), z); }},
      {"neg", [](const Array& z, const Array&) { return lax::neg(z); }},
      {"sign", [](const Array& z, const Array&) { return lax::sign(z); }},
      {"is_finite", [](const Array& z, const Array&) { return lax::is_finite(z); }},
      {"exp", [](const Array& z, const Array&) { return lax::exp(z); }},
      {"log", [](const Array& z, const Array&) { return lax::log(z); }},
      {"log1p", [](const Array& z, const Array&) { return lax::log1p(z); }},
      {"expm1", [](const Array& z, const Array&) { return lax::expm1(z); }},
      {"tanh", [](const Array& z, const Array&) { return lax::tanh(z); }},
      {"sin", [](const Array& z, const Array&) { return lax::sin(z); }},
      {"cos", [](const Array& z, const Array&) { return lax::cos(z); }},
      {"tan", [](const Array& z, const Array&) { return lax::tan(z); }},
      {"asin", [](const Array& z, const Array&) { return lax::asin(z); }},
      {"acos", [](const Array& z, const Array&) { return lax::acos(z); }},
      {"atan", [](const Array& z, const Array&) { return lax::atan(z); }},
      {"sinh", [](const Array& z, const Array&) { return lax::sinh(z); }},
      {"cosh", [](const Array& z, const Array&) { return lax::cosh(z); }},
      {"asinh", [](const Array& z, const Array&) { return lax::asinh(z); }},
      {"acosh", [](const Array& z, const Array&) { return lax::acosh(z); }},
      {"atanh", [](const Array& z, const Array&) { return lax::atanh(z); }},
      {"sqrt", [](const Array& z, const Array&) { return lax::sqrt(z); }},
      {"rsqrt", [](const Array& z, const Array&) { return lax::rsqrt(z); }},
      {"square", [](const Array& z, const Array&) { return lax::square(z); }},
      {"integer_pow 5", [](const Array& z, const Array&) { return lax::integer_pow(z, 5); }},
      {"integer_pow -3", [](const Array& z, const Array&) { return lax::integer_pow(z, -3); }},
      {"abs", [](const Array& z, const Array&) { return lax::abs(z); }},
      {"real", [](const Array& z, const Array&) { return lax::real(z); }},
      {"imag", [](const Array& z, const Array&) { return lax::imag(z); }},
      {"conj", [](const Array& z, const Array&) { return lax::conj(z); }},
      {"complex", [](const Array& z, const Array& w) { return lax::complex(lax::imag(z), lax::real(w)); }},
      {"select", [](const Array& z, const Array& w) { return lax::select(lax::is_finite(z), z, w); }},
      {"to bool", [](const Array& z, const Array&) { return lax::convert_element_type(z, DType::Bool); }},
      {"to int32", [](const Array& z, const Array&) { return lax::convert_element_type(z, DType::Int32); }},
      {"to float64", [](const Array& z, const Array&) { return lax::convert_element_type(z, DType::Float64); }},
      {"to complex128", [](const Array& z, const Array&) { return lax::convert_element_type(z, DType::Complex128); }},
      {"from int32", [](const Array& z, const Array&) {
         return lax::convert_element_type(lax::convert_element_type(lax::real(z), DType::Int32), z.dtype());
       }},
      {"from bool", [](const Array& z, const Array&) {
         return lax::add(z, lax::convert_element_type(lax::is_finite(z), z.dtype()));
       }},
      {"constant 1+2i", [](const Array& z, const Array&) {
         Array c = lax::convert_element_type(Array(std::complex<double>(1, 2)), z.dtype());
         return lax::mul(z, lax::broadcast_in_dim(c, z.shape(), {}));
       }},
  };
}

TEST(CodegenComplex, EveryOperationEqualsEagerBitForBit) {
  const auto ops = operations();
  for (DType t : {DType::Complex64, DType::Complex128}) {
    // Each operation on flat loops with and without a remainder, a one-element array, and
    // rows of 3 (lanes); one program per dtype, which keeps the test to two compiles.
    const std::vector<Shape> shapes = {{1}, {13}, {16}, {37}, {5, 3}};
    std::vector<ops::Aval> in;
    for (const Shape& s : shapes) in.push_back(aval(t, s)), in.push_back(aval(t, s));
    auto f = [&ops](const Arrays& a) -> Arrays {
      Arrays outs;
      for (const auto& [name, op] : ops)
        for (size_t k = 0; k + 1 < a.size(); k += 2) outs.push_back(op(a[k], a[k + 1]));
      return outs;
    };
    ir::Jaxpr j = trace_closed(f, in);
    Arrays args;
    for (size_t i = 0; i < in.size(); ++i) args.push_back(cinput(t, in[i].shape, int(i), true));
    auto exe = compiler::compile(j, {.name = "complex_ops", .donate = {}});
    EXPECT_EQ(count_steps(exe->describe(), "library"), 0) << exe->describe();
    Arrays got = exe->run(args), want = ir::eval_jaxpr(j, args);
    ASSERT_EQ(got.size(), ops.size() * shapes.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(same_bits(got[i], want[i]))
          << dtype_name(t) << " " << ops[i / shapes.size()].first << " on " << got[i].repr();
  }
}

// A kernel with complex values is compiled without `omp simd` (codegen.cpp says why), so
// real libm functions in it run glibc's scalar versions where eager runs libmvec's vector
// ones: a few ulps of max(1, |x|) apart (a sum of two such values cancels), not bit for bit.
TEST(CodegenComplex, RealFunctionsBesideComplexValuesWithinUlps) {
  auto f = [](const Arrays& a) -> Arrays {
    const Array& z = a[0];
    return {lax::exp(lax::mul(lax::abs(z), lax::real(z))), lax::add(lax::tanh(lax::real(z)), lax::log(lax::imag(z))),
            lax::sin(lax::mul(lax::real(z), lax::imag(lax::exp(z))))};
  };
  for (DType t : {DType::Complex64, DType::Complex128}) {
    std::vector<ops::Aval> in = {aval(t, {1000})};
    ir::Jaxpr j = trace_closed(f, in);
    Arrays args = {cinput(t, {1000}, 7, true)};
    auto exe = compiler::compile(j, {.name = "mixed", .donate = {}});
    EXPECT_EQ(count_steps(exe->describe(), "library"), 0) << exe->describe();
    const double rel = t == DType::Complex64 ? 4e-7 : 1e-15;  // about 4 ulps of 1
    EXPECT_TRUE(close_values(exe->run(args), ir::eval_jaxpr(j, args), 0, rel)) << dtype_name(t);
  }
}

TEST(CodegenComplex, ChainsFuseIntoOneKernel) {
  // |exp(z w) + conj(z) / (w + i)|, summed over rows: complex values live only in registers.
  auto f = [](const Arrays& a) -> Arrays {
    const Array& z = a[0];
    const Array& w = a[1];
    Array i = lax::broadcast_in_dim(Array(std::complex<float>(0, 1)), w.shape(), {});
    Array v = lax::add(lax::exp(lax::mul(z, w)), lax::div(lax::conj(z), lax::add(w, i)));
    return {lax::reduce_sum(lax::abs(v), {1})};
  };
  std::vector<ops::Aval> in = {aval(DType::Complex64, {8, 100}), aval(DType::Complex64, {8, 100})};
  ir::Jaxpr j = compiler::optimize(trace_closed(f, in), "chain");
  const std::string plan = compiler::describe(j, compiler::fuse(j));
  EXPECT_EQ(count_steps(plan, "kernel"), 1) << plan;
  EXPECT_EQ(count_steps(plan, "library"), 0) << plan;
  std::string src = source_of(f, in);
  for (const char* s : {"#include <complex>", "namespace jx_cx", "jx_cx::mul(", "jx_cx::div(", "std::conj",
                        "std::complex<float>((0x0p+0f), (0x1p+0f))"})
    EXPECT_NE(src.find(s), std::string::npos) << s << "\n" << src;
  Arrays args = {cinput(DType::Complex64, {8, 100}, 1, false), cinput(DType::Complex64, {8, 100}, 2, false)};
  auto exe = compiler::compile(trace_closed(f, in), {.name = "chain", .donate = {}});
  Arrays got = exe->run(args), want = ir::eval_jaxpr(trace_closed(f, in), args);
  // The row sums add in another order than the eager reduction: a few ulps.
  EXPECT_TRUE(close_values(got, want, 0, 1e-5));
}

TEST(CodegenComplex, ComplexSumsStayLibraryCalls) {
  auto f = [](const Arrays& a) -> Arrays { return {lax::reduce_sum(lax::mul(a[0], a[0]), {0})}; };
  std::vector<ops::Aval> in = {aval(DType::Complex128, {50, 4})};
  ir::Jaxpr j = compiler::optimize(trace_closed(f, in), "csum");
  EXPECT_EQ(compiler::describe(j, compiler::fuse(j)),
            "kernel k0 c128[50,4]: mul\nlibrary reduce_sum -> c128[4]\n");
  Array x = cinput(DType::Complex128, {50, 4}, 5, false);
  auto exe = compiler::compile(trace_closed(f, in), {.name = "csum", .donate = {}});
  EXPECT_TRUE(same_bits(exe->run(Arrays{x})[0], ir::eval_jaxpr(trace_closed(f, in), Arrays{x})[0]));
}

TEST(CodegenComplex, RealProgramsDoNotIncludeComplex) {
  std::string src = source_of([](const Arrays& a) -> Arrays { return {lax::exp(a[0])}; },
                              {aval(DType::Float32, {100})});
  EXPECT_EQ(src.find("<complex>"), std::string::npos);
  EXPECT_EQ(src.find("jx_cx"), std::string::npos);
}

}  // namespace
