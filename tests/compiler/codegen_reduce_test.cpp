// Code generation of kernels with reductions (codegen_reduce.cpp) and of bool values: long
// rows accumulate lane-wise in several vectors, then a tail loop, then the lanes fold in a
// fixed order; conversions from bool are selects and bool inputs are read as bytes (GCC
// vectorizes neither a bool-to-number conversion nor a select on a loaded bool). Source
// shape, and values against the interpreter at lengths around the vector and block sizes
// (tiny rows included), and softmax cross-entropy's gradient against the hand-derived
// (softmax(x) - onehot) / N.
#include <cmath>
#include <cstring>

#include "compiler/codegen.h"
#include "compiler/jit_testing.h"
#include "compiler/pipeline.h"
#include "jx/jx.h"

namespace {

using namespace jx;
using namespace jx::testing;
namespace jnp = jx::numpy;
using ops::Arrays;

std::string source_of(const tr::FlatFn& f, const std::vector<ops::Aval>& in) {
  ir::Jaxpr j = compiler::optimize(trace_closed(f, in), "codegen_reduce_test");
  return compiler::generate_source(j, compiler::fuse(j), "codegen_reduce_test");
}

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

Arrays row_sum(const Arrays& a) { return {lax::reduce_sum(a[0], {1})}; }

TEST(CodegenReduce, LongRowsAccumulateInSeveralVectors) {
  // 1000 = 15 blocks of 64 + a tail of 40 in a simd reduction.
  std::string src = source_of(row_sum, {aval(DType::Float32, {3, 1000})});
  EXPECT_TRUE(has(src, "float jx_l1[64];")) << src;
  EXPECT_TRUE(has(src, "const int64_t jx_rb0 = 960LL;")) << src;
  EXPECT_TRUE(has(src, "for (int64_t jx_b = 0; jx_b < jx_rb0; jx_b += 64LL) {\n"
                       "      #pragma omp simd\n"
                       "      for (int64_t r = jx_b; r < jx_b + 64LL; ++r) {")) << src;
  EXPECT_TRUE(has(src, "jx_l1[r - jx_b] += (float)x0;")) << src;
  EXPECT_TRUE(has(src, "#pragma omp simd reduction(+:acc1)\n    for (int64_t r = jx_rb0; r < 1000LL; ++r)")) << src;
  // The four vectors fold into the first, then into the tail's accumulator.
  EXPECT_TRUE(has(src, "jx_l1[jx_k] += (float)jx_l1[jx_k + 48LL];")) << src;
  EXPECT_TRUE(has(src, "acc1 += (float)jx_l1[jx_k];")) << src;
  // A whole number of blocks has no tail loop; a row shorter than two blocks keeps the one
  // simd reduction.
  std::string whole = source_of(row_sum, {aval(DType::Float32, {3, 1024})});
  EXPECT_TRUE(has(whole, "jx_rb0 = 1024LL")) << whole;
  EXPECT_FALSE(has(whole, "for (int64_t r = jx_rb0;")) << whole;
  std::string short_row = source_of(row_sum, {aval(DType::Float32, {3, 127})});
  EXPECT_FALSE(has(short_row, "jx_l1")) << short_row;
  EXPECT_TRUE(has(short_row, "#pragma omp simd reduction(+:acc1)\n    for (int64_t r = 0; r < 127LL; ++r)")) << short_row;
}

TEST(CodegenReduce, FloatMaxKeepsItsNanFlagPerLane) {
  std::string src = source_of([](const Arrays& a) -> Arrays { return {lax::reduce_max(a[0], {1})}; },
                              {aval(DType::Float32, {2, 300})});
  EXPECT_TRUE(has(src, "unsigned jx_ln1[64];")) << src;
  EXPECT_TRUE(has(src, "jx_ln1[r - jx_b] |= (unsigned)(x0 != x0);")) << src;
  EXPECT_TRUE(has(src, "acc1_nan |= jx_ln1[jx_k];")) << src;
}

TEST(CodegenReduce, BoolConversionsAreSelectsAndBoolInputsAreBytes) {
  auto f = [](const Arrays& a) -> Arrays {
    Array m = lax::broadcast_in_dim(lax::reduce_max(a[0], {1}), {4, 40}, {0});
    Array hits = lax::convert_element_type(lax::eq(a[0], m), DType::Float32);  // max's gradient
    return {lax::reduce_sum(hits, {1}), lax::convert_element_type(a[1], DType::Int32),
            lax::select_n(a[1], {a[0], lax::neg(a[0])})};
  };
  std::string src = source_of(f, {aval(DType::Float32, {4, 40}), aval(DType::Bool, {4, 40})});
  EXPECT_FALSE(has(src, "jx_convert<float>")) << src;
  EXPECT_FALSE(has(src, "jx_convert<int32_t>")) << src;
  EXPECT_TRUE(has(src, " ? (float)1 : (float)0)")) << src;
  EXPECT_TRUE(has(src, " ? (int32_t)1 : (int32_t)0)")) << src;
  EXPECT_TRUE(has(src, "const uint8_t* in1 = static_cast<const uint8_t*>(jx_in[1]);")) << src;
  EXPECT_TRUE(has(src, "(in1[i] != 0)")) << src;
}

// Each fusible reduction (through a fused producer, so that the reduction reads a computed
// value) over the rows of every dtype, at lengths around the vector (16) and block (64)
// sizes and a full reduction large enough to split across threads. Float sums and products
// within a relative 1e-5 (another summation order), everything else exact. NaN and
// infinities among the floats.
TEST(CodegenReduce, RowReductionsMatchTheInterpreterAroundTheBlockSize) {
  const DType types[] = {DType::Float32, DType::Float64, DType::Int32, DType::Bool, DType::UInt8};
  const std::vector<Shape> shapes = {{2, 1},   {3, 5},   {2, 17},  {2, 64},  {2, 127}, {2, 128},
                                     {3, 129}, {2, 200}, {3, 1000}, {1031}, {67591}};
  std::vector<ops::Aval> in;
  Arrays args;
  for (size_t k = 0; k < shapes.size(); ++k)
    for (int t = 0; t < 5; ++t) {
      in.push_back(aval(types[t], shapes[k]));
      Array x = input(types[t], shapes[k], int(10 * k) + t, true);
      args.push_back(t == 1 ? lax::exp(x * 0.01) : x);  // products of f64 near 1
    }
  auto f = [&](const Arrays& a) -> Arrays {
    Arrays out;
    for (size_t k = 0; k < shapes.size(); ++k) {
      const std::vector<int64_t> axes = {int64_t(shapes[k].size()) - 1};
      const Array* x = &a[5 * k];
      Array af = lax::max(x[0], lax::neg(x[0]));
      out.push_back(lax::reduce_sum(af, axes));
      out.push_back(lax::reduce_max(af, axes));
      out.push_back(lax::reduce_min(lax::neg(af), axes));
      out.push_back(lax::reduce_prod(lax::mul(x[1], x[1]), axes));
      out.push_back(lax::reduce_sum(lax::mul(x[2], x[2]), axes));
      out.push_back(lax::reduce_max(lax::neg(x[2]), axes));
      out.push_back(lax::reduce_and(lax::bitwise_not(x[3]), axes));
      out.push_back(lax::reduce_or(lax::bitwise_not(x[3]), axes));
      out.push_back(lax::reduce_sum(lax::convert_element_type(x[3], DType::Float32), axes));
      out.push_back(lax::reduce_min(lax::add(x[4], x[4]), axes));
    }
    return out;
  };
  ir::Jaxpr j = trace_closed(f, in);
  auto exe = compiler::compile(j, {.name = "codegen_reduce_test", .donate = {}});
  EXPECT_EQ(count_steps(exe->describe(), "library"), 0) << exe->describe();
  Arrays got = exe->run(args), want = ir::eval_jaxpr(j, args);
  ASSERT_EQ(got.size(), want.size());
  const char* names[] = {"sum f32", "max f32", "min f32", "prod f64", "sum i32",
                         "max i32", "and bool", "or bool", "sum convert(bool)", "min u8"};
  for (size_t i = 0; i < got.size(); ++i) {
    const bool inexact = i % 10 == 0 || i % 10 == 3;
    EXPECT_TRUE(close_values({got[i]}, {want[i]}, 0, inexact ? 1e-5 : 0))
        << names[i % 10] << " over " << shape_str(shapes[i / 10]);
  }
  // The same executable gives the same bits again (fixed order of lanes and threads).
  Arrays again = exe->run(args);
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(std::memcmp(detail::raw_data(got[i]), detail::raw_data(again[i]), got[i].nbytes()), 0) << i;
}

// Bool inputs (bytes in memory) and conversions from bool, flat, broadcast and in rows, at
// tiny and odd sizes, against the interpreter: exact.
TEST(CodegenReduce, BoolValuesMatchTheInterpreter) {
  const std::vector<Shape> shapes = {{1}, {7}, {17}, {3, 33}, {1000}};
  auto f = [&](const Arrays& a) -> Arrays {
    Arrays out;
    for (size_t k = 0; k < shapes.size(); ++k) {
      const Shape& s = shapes[k];
      const Array& x = a[2 * k];
      const Array& b = a[2 * k + 1];
      const std::vector<int64_t> last = {int64_t(s.size()) - 1};
      Array m = lax::broadcast_in_dim(lax::reduce_max(x, last), s,
                                      s.size() == 2 ? std::vector<int64_t>{0} : std::vector<int64_t>{});
      for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int8, DType::UInt8})
        out.push_back(lax::convert_element_type(b, t));
      out.push_back(lax::select_n(b, {x, lax::neg(x)}));
      out.push_back(lax::mul(lax::convert_element_type(lax::gt(x, lax::neg(x)), DType::Float32), x));
      out.push_back(lax::bitwise_and(b, lax::lt(x, m)));
      out.push_back(lax::reduce_sum(lax::convert_element_type(lax::eq(x, m), DType::Float32), last));
      out.push_back(lax::reduce_or(b, last));
    }
    return out;
  };
  std::vector<ops::Aval> in;
  Arrays args;
  for (size_t k = 0; k < shapes.size(); ++k) {
    in.push_back(aval(DType::Float32, shapes[k]));
    in.push_back(aval(DType::Bool, shapes[k]));
    args.push_back(input(DType::Float32, shapes[k], 70 + int(k), true));
    args.push_back(input(DType::Bool, shapes[k], 80 + int(k)));
  }
  ir::Jaxpr j = trace_closed(f, in);
  auto exe = compiler::compile(j, {.name = "codegen_reduce_test", .donate = {}});
  Arrays got = exe->run(args), want = ir::eval_jaxpr(j, args);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(close_values({got[i]}, {want[i]}, 0)) << "output " << i % 10 << " at " << shape_str(shapes[i / 10]);
}

// grad of -mean(sum(log_softmax(x) * onehot, 1)) is (softmax(x) - onehot) / N: jit (one row
// kernel, every phase a vector loop) against that formula in double, and against eager.
Array cross_entropy(const Array& logits, const Array& one_hot) {
  Array s = logits - jnp::max(logits, 1, true);
  Array log_sm = s - jnp::log(jnp::sum(jnp::exp(s), 1, true));
  return -jnp::mean(jnp::sum(log_sm * one_hot, 1));
}

TEST(CodegenReduce, SoftmaxCrossEntropyGradientUnderJit) {
  auto grad_xent = [](const Array& x, const Array& y) { return jx::grad(cross_entropy)(x, y); };
  auto jitted = jx::jit(grad_xent);
  for (const Shape& s : {Shape{1, 1}, Shape{2, 17}, Shape{5, 129}, Shape{3, 1000}}) {
    Array x = input(DType::Float32, s, 80) * 4.0;
    std::vector<float> labels(size_t(s[0] * s[1]), 0.0f);
    for (int64_t i = 0; i < s[0]; ++i) labels[size_t(i * s[1] + (i * 7 + 3) % s[1])] = 1.0f;
    Array y = jnp::array(labels, s);
    Array g = jitted(x, y), ge = grad_xent(x, y);
    std::vector<float> xs = x.to_vector<float>(), gs = g.to_vector<float>();
    for (int64_t i = 0; i < s[0]; ++i) {
      double mx = -INFINITY, z = 0;
      for (int64_t k = 0; k < s[1]; ++k) mx = std::max(mx, double(xs[size_t(i * s[1] + k)]));
      for (int64_t k = 0; k < s[1]; ++k) z += std::exp(double(xs[size_t(i * s[1] + k)]) - mx);
      for (int64_t k = 0; k < s[1]; ++k) {
        const size_t e = size_t(i * s[1] + k);
        const double want = (std::exp(double(xs[e]) - mx) / z - labels[e]) / double(s[0]);
        EXPECT_NEAR(gs[e], want, 1e-6) << shape_str(s) << " row " << i << " col " << k;
      }
    }
    EXPECT_TRUE(close_values({g}, {ge}, 0, 1e-6)) << shape_str(s);
  }
}

}  // namespace
