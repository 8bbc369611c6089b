// Scalar hoisting in generated kernels: values computed only from literals, one-element
// inputs and broadcasts of such values are computed once, before the kernel's loops (the
// bias corrections of a fused Adam update), and give the interpreter's values.
#include "compiler/codegen.h"

#include "compiler/compile.h"
#include "compiler/jit_testing.h"
#include "compiler/pipeline.h"
#include "support/str.h"

namespace {

using namespace jx;
using namespace jx::testing;
using ops::Arrays;

ir::Jaxpr optimized(const tr::FlatFn& f, const std::vector<ops::Aval>& in) {
  return compiler::optimize(trace_closed(f, in), "hoist_test");
}

std::string source_of(const ir::Jaxpr& j) {
  return compiler::generate_source(j, compiler::fuse(j), "hoist_test");
}

// The text of kernel k's body before its first loop, and from the first loop on. The
// prologue is itself a 16-lane loop whose values are taken from lane 0 (`v_lanes[0]`):
// it counts as before the loops.
std::pair<std::string, std::string> split_at_loop(const std::string& src, int k) {
  size_t start = src.find(str("void jx_kernel_", k, "("));
  EXPECT_NE(start, std::string::npos) << src;
  size_t end = src.find("void jx_kernel_", start + 1);
  std::string body = src.substr(start, end == std::string::npos ? std::string::npos : end - start);
  size_t lane0 = body.rfind("_lanes[0];");
  size_t loop = body.find("for (", lane0 == std::string::npos ? 0 : lane0);
  if (loop == std::string::npos) return {body, ""};
  return {body.substr(0, loop), body.substr(loop)};
}

Arrays run_compiled(const ir::Jaxpr& j, const Arrays& args, std::vector<bool> donate = {}) {
  auto exe = compiler::compile(j, {.name = "hoist_test", .donate = std::move(donate)});
  return exe->run(args);
}

// Adam's update of one parameter: the step count is a 0-d value; its powers are not.
Arrays adam_like(const Arrays& a) {
  const Array& m = a[0];
  const Array& count = a[1];
  Array t = lax::convert_element_type(lax::add(count, Array(int32_t(1))), DType::Float32);
  Array scale = lax::div(Array(1.0f), lax::sub(Array(1.0f), lax::pow(Array(0.9f), t)));
  Array update = lax::mul(m, lax::broadcast_in_dim(scale, m.shape(), {}));
  return {update, lax::add(count, Array(int32_t(1)))};
}

TEST(Hoist, ScalarPowIsComputedBeforeTheLoop) {
  ir::Jaxpr j = optimized(adam_like, {aval(DType::Float32, {64, 32}), aval(DType::Int32, {})});
  std::string src = source_of(j);
  ASSERT_EQ(compiler::describe(j, compiler::fuse(j)).find("library"), std::string::npos)
      << compiler::describe(j, compiler::fuse(j));
  auto [prologue, loops] = split_at_loop(src, 0);
  EXPECT_NE(prologue.find("std::pow"), std::string::npos) << src;
  EXPECT_EQ(loops.find("std::pow"), std::string::npos) << src;
  // The one-element output (the new count) is written once, outside the loop.
  EXPECT_NE(prologue.find("[0] = "), std::string::npos) << src;
  EXPECT_EQ(loops.find("if ("), std::string::npos) << src;

  Array m = input(DType::Float32, {64, 32}, 1);
  Array count = numpy::array(std::vector<double>{6}, {}).astype(DType::Int32);
  Arrays got = run_compiled(j, {m, count});
  Arrays want = ir::eval_jaxpr(j, std::vector<Array>{m, count});
  EXPECT_TRUE(close_values(got, want, 2));
  // Hand-derived: t = 7, scale = 1 / (1 - 0.9^7) = 1.9134..., count + 1 = 7.
  EXPECT_EQ(got[1].item<int32_t>(), 7);
  const double scale = 1.0 / (1.0 - std::pow(0.9, 7.0));
  std::vector<float> mv = m.to_vector<float>(), uv = got[0].to_vector<float>();
  for (size_t i = 0; i < mv.size(); i += 97) EXPECT_NEAR(uv[i], mv[i] * scale, 1e-5) << i;
}

TEST(Hoist, ArithmeticOnBroadcastScalarsIsHoisted) {
  // div(broadcast(2), broadcast(s)) has the loop's shape but no dependence on its index.
  auto f = [](const Arrays& a) -> Arrays {
    const Shape& sh = a[0].shape();
    Array inv = lax::div(lax::broadcast_in_dim(Array(2.0f), sh, {}), lax::broadcast_in_dim(a[1], sh, {}));
    return {lax::mul(a[0], lax::exp(inv))};
  };
  ir::Jaxpr j = optimized(f, {aval(DType::Float32, {1000}), aval(DType::Float32, {})});
  std::string src = source_of(j);
  auto [prologue, loops] = split_at_loop(src, 0);
  EXPECT_NE(prologue.find("[0]"), std::string::npos) << src;  // the scalar, read once
  EXPECT_NE(prologue.find(" / "), std::string::npos) << src;
  EXPECT_EQ(loops.find(" / "), std::string::npos) << src;
  EXPECT_NE(loops.find("[i]"), std::string::npos) << src;  // the array is still read per element

  Array x = input(DType::Float32, {1000}, 2);
  Array s = numpy::array(std::vector<double>{4.0}, {}).astype(DType::Float32);
  Arrays got = run_compiled(j, {x, s});
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, std::vector<Array>{x, s}), 2));
  std::vector<float> xv = x.to_vector<float>(), gv = got[0].to_vector<float>();
  for (size_t i = 0; i < xv.size(); i += 101) EXPECT_NEAR(gv[i], xv[i] * std::exp(0.5), 1e-5) << i;
}

TEST(Hoist, IndexDependentValuesStayInTheLoop) {
  // An iota and a reduction depend on the loop indices; a scalar input scales them.
  auto f = [](const Arrays& a) -> Arrays {
    Array i = lax::convert_element_type(lax::iota(DType::Int32, 8), DType::Float32);
    Array y = lax::mul(lax::broadcast_in_dim(i, {8, 16}, {0}), a[0]);
    Array sum = lax::reduce_sum(y, {1});
    Array k = lax::mul(a[1], Array(3.0f));
    return {lax::mul(sum, lax::broadcast_in_dim(k, {8}, {}))};
  };
  ir::Jaxpr j = optimized(f, {aval(DType::Float32, {8, 16}), aval(DType::Float32, {})});
  Array x = input(DType::Float32, {8, 16}, 3);
  Array s = numpy::array(std::vector<double>{0.5}, {}).astype(DType::Float32);
  Arrays got = run_compiled(j, {x, s});
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, std::vector<Array>{x, s}), 0, 1e-5));
  std::vector<float> xv = x.to_vector<float>(), gv = got[0].to_vector<float>();
  for (int r = 0; r < 8; ++r) {
    double want = 0;
    for (int c = 0; c < 16; ++c) want += double(r) * xv[size_t(r * 16 + c)];
    EXPECT_NEAR(gv[size_t(r)], want * 1.5, 1e-4) << r;
  }
}

TEST(Hoist, FullReductionDependentsAreNotHoisted) {
  // One row: the reduction's result is one element, and so is what is computed from it;
  // neither may move before the reduction loop.
  auto f = [](const Arrays& a) -> Arrays {
    Array sum = lax::reduce_sum(a[0], {1});  // f32[1]
    Array twice = lax::mul(sum, lax::broadcast_in_dim(a[1], {1}, {}));
    return {twice, lax::div(a[0], lax::broadcast_in_dim(sum, {1, 40}, {0}))};
  };
  ir::Jaxpr j = optimized(f, {aval(DType::Float32, {1, 40}), aval(DType::Float32, {})});
  Array x = input(DType::Float32, {1, 40}, 4) + 1.0f;  // positive: sum far from 0
  Array s = numpy::array(std::vector<double>{2.0}, {}).astype(DType::Float32);
  Arrays got = run_compiled(j, {x, s});
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, std::vector<Array>{x, s}), 0, 1e-5));
  std::vector<float> xv = x.to_vector<float>();
  double sum = 0;
  for (float v : xv) sum += v;
  EXPECT_NEAR(got[0].to_vector<float>()[0], 2 * sum, 1e-3);
  EXPECT_NEAR(got[1].to_vector<float>()[5], xv[5] / sum, 1e-6);
}

TEST(Hoist, DonatedScalarIsReadBeforeItIsOverwritten) {
  // A kernel of scalars only: the new count takes the donated count's buffer, and every
  // read of the old count (here also by a second output) must see the old value.
  auto f = [](const Arrays& a) -> Arrays {
    Array next = lax::add(a[0], Array(1.0f));
    return {next, lax::mul(next, a[0])};
  };
  ir::Jaxpr j = optimized(f, {aval(DType::Float32, {})});
  Array c = numpy::array(std::vector<double>{5.0}, {}).astype(DType::Float32);
  const void* c_data = detail::raw_data(c);
  Arrays got = run_compiled(j, {c}, {true});
  EXPECT_EQ(detail::raw_data(got[0]), c_data);  // written in place
  EXPECT_EQ(got[0].item<float>(), 6.0f);
  EXPECT_EQ(got[1].item<float>(), 30.0f);
  auto [prologue, loops] = split_at_loop(source_of(j), 0);
  EXPECT_EQ(loops, "") << prologue;  // nothing left for a loop to do
}

TEST(Hoist, ColumnSumWritesItsElementwiseOperandInOnePass) {
  // A bias gradient: g = where(mask, x, 0) * y, returned and summed over rows. g uses no
  // reduction result, so the reduction's loop writes it; no second pass over the rows.
  auto f = [](const Arrays& a) -> Arrays {
    Array g = lax::mul(lax::select_n(a[0], {lax::broadcast_in_dim(Array(0.0f), {32, 24}, {}), a[1]}), a[2]);
    return {g, lax::reduce_sum(g, {0})};
  };
  ir::Jaxpr j = optimized(f, {aval(DType::Bool, {32, 24}), aval(DType::Float32, {32, 24}),
                              aval(DType::Float32, {32, 24})});
  std::string src = source_of(j);
  EXPECT_EQ(compiler::describe(j, compiler::fuse(j)).find("library"), std::string::npos)
      << compiler::describe(j, compiler::fuse(j));
  // A pass over the rows is a loop from row 0, or groups of rows from row 0 (with the
  // remaining rows after them).
  size_t r_loops = 0;
  for (const char* pass : {"for (int64_t r = 0;", "int64_t jx_rg = 0;"})
    for (size_t p = src.find(pass); p != std::string::npos; p = src.find(pass, p + 1)) ++r_loops;
  EXPECT_EQ(r_loops, 1u) << src;
  Array m = input(DType::Bool, {32, 24}, 6), x = input(DType::Float32, {32, 24}, 7),
        y = input(DType::Float32, {32, 24}, 8);
  Arrays got = run_compiled(j, {m, x, y});
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, std::vector<Array>{m, x, y}), 0, 1e-5));
  std::vector<float> xv = x.to_vector<float>(), yv = y.to_vector<float>(), gv = got[0].to_vector<float>(),
                     sv = got[1].to_vector<float>();
  std::vector<bool> mv;
  for (double b : m.astype(DType::Float64).to_vector<double>()) mv.push_back(b != 0);
  double col3 = 0;
  for (int r = 0; r < 32; ++r) {
    size_t k = size_t(r * 24 + 3);
    float want = mv[k] ? xv[k] * yv[k] : 0.0f;
    EXPECT_EQ(gv[k], want) << k;
    col3 += want;
  }
  EXPECT_NEAR(sv[3], col3, 1e-4);
}

TEST(Hoist, SplatsAreImmediatesInEveryKernelThatReadsThem) {
  // The zeros feed a kernel before a matmul and one after it: neither reads them from
  // memory. The program also returns them, so one library step materializes them.
  auto f = [](const Arrays& a) -> Arrays {
    Array zeros = lax::broadcast_in_dim(Array(0.0f), {8, 8}, {});
    Array h = lax::max(a[0], zeros);
    Array p = lax::dot(h, a[1]);
    return {lax::max(p, zeros), zeros};
  };
  ir::Jaxpr j = optimized(f, {aval(DType::Float32, {8, 8}), aval(DType::Float32, {8, 8})});
  compiler::FusionPlan plan = compiler::fuse(j);
  std::string d = compiler::describe(j, plan);
  EXPECT_EQ(count_steps(d, "kernel"), 2) << d;
  EXPECT_EQ(count_steps(d, "library broadcast_in_dim"), 1) << d;
  for (const compiler::FusedStep& st : plan.steps)
    if (st.is_kernel) {
      EXPECT_EQ(st.inputs.size(), 1u) << d;  // a[0], or the matmul's result
    }
  Array x = input(DType::Float32, {8, 8}, 9), w = input(DType::Float32, {8, 8}, 10);
  Arrays got = run_compiled(j, {x, w});
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, std::vector<Array>{x, w}), 0, 1e-5));
  for (float v : got[1].to_vector<float>()) EXPECT_EQ(v, 0.0f);
  for (float v : got[0].to_vector<float>()) EXPECT_GE(v, 0.0f);
}

}  // namespace
