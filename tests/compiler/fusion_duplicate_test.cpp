// A data-parallel step's tail: pmean's division of a library result, the global gradient
// norm and an AdamW update clipped by it. Fusion must join a consumer into the largest
// set of its operands' groups that it can (not leave a lone `div` kernel behind), and
// duplicate the cheap division into each kernel that reads it instead of writing it once
// and reading it back (pass_duplicate.cpp).
#include "compiler/fusion.h"
#include "compiler/jit_testing.h"
#include "compiler/passes.h"
#include "compiler/pipeline.h"
#include "jx/lax.h"

namespace {

using namespace jx;
using namespace jx::testing;
using ops::Arrays;
using ops::Prim;

Array splat(float v, const Shape& s) { return lax::broadcast_in_dim(Array(v), s, {}); }

// Clips g by the global norm (a scalar; no clipping below 1), then AdamW: p', m', v'.
Arrays clip_adamw(const Array& g, const Array& norm, const Array& p, const Array& m, const Array& v) {
  const Shape& s = g.shape();
  std::vector<int64_t> dims;
  for (size_t d = 0; d < s.size(); ++d) dims.push_back(int64_t(d));
  Array norm_b = lax::broadcast_in_dim(lax::broadcast_in_dim(norm, Shape(s.size(), 1), {}), s, dims);
  Array small = lax::broadcast_in_dim(lax::lt(norm, Array(1.0f)), s, {});
  Array c = lax::select_n(small, {lax::div(g, norm_b), g});
  Array m2 = lax::add(lax::mul(splat(0.9f, s), m), lax::mul(splat(0.1f, s), c));
  Array v2 = lax::add(lax::mul(splat(0.999f, s), v), lax::mul(splat(0.001f, s), lax::mul(c, c)));
  Array upd = lax::add(lax::div(m2, lax::add(lax::sqrt(v2), splat(1e-8f, s))), lax::mul(splat(0.1f, s), p));
  return {lax::sub(p, lax::mul(splat(0.01f, s), upd)), m2, v2};
}

// Inputs: x[96,32], dy[32,256] (w's gradient is x @ dy, a library result), b's gradient
// [256], then p, m, v of w and of b. The norm's chain lands in b's kernel, so w's
// clipping reads a value computed after w's reduction kernel.
const Shape kW = {96, 256}, kB = {256};
Arrays clipped_adamw(const Arrays& a) {
  Array gw = lax::div(lax::dot(a[0], a[1]), splat(2.0f, kW));
  Array gb = lax::div(a[2], splat(2.0f, kB));
  Array sb = lax::reduce_sum(lax::integer_pow(gb, 2), {0});
  Array sw = lax::reduce_sum(lax::integer_pow(gw, 2), {0, 1});
  Array norm = lax::sqrt(lax::add(sb, sw));
  Arrays out = clip_adamw(gw, norm, a[3], a[4], a[5]);
  Arrays ob = clip_adamw(gb, norm, a[6], a[7], a[8]);
  out.insert(out.end(), ob.begin(), ob.end());
  return out;
}

std::vector<ops::Aval> clipped_adamw_avals() {
  const DType f = DType::Float32;
  return {aval(f, {96, 32}), aval(f, {32, 256}), aval(f, kB), aval(f, kW), aval(f, kW),
          aval(f, kW),       aval(f, kB),        aval(f, kB), aval(f, kB)};
}

// Kernels whose equations, splats and views aside, are one `div`.
int lone_div_kernels(const ir::Jaxpr& j, const compiler::FusionPlan& plan) {
  int n = 0;
  for (const compiler::FusedStep& st : plan.steps) {
    if (!st.is_kernel) continue;
    std::vector<Prim> prims;
    for (int i : st.eqns)
      if (j.eqns[size_t(i)].prim != Prim::BroadcastInDim) prims.push_back(j.eqns[size_t(i)].prim);
    n += prims == std::vector<Prim>{Prim::Div};
  }
  return n;
}

TEST(FusionSubsetJoin, ConsumerJoinsTheLargestSubsetOfItsOperandGroups) {
  // Without duplication: w's clipped gradient `select_n small (div gw norm) gw` reads the
  // reduction kernel (gw), the lone `div` kernel and the broadcast of `norm < 1`. Joining
  // all three makes a cycle through the reduction kernel; joining {broadcast, div} works
  // and must win over the broadcast's group alone.
  ir::Jaxpr j = compiler::optimize(trace_closed(clipped_adamw, clipped_adamw_avals()), "subset_join");
  compiler::FusionPlan plan = compiler::fuse(j);
  std::string steps = compiler::describe(j, plan);
  EXPECT_EQ(lone_div_kernels(j, plan), 0) << steps;
  EXPECT_EQ(count_steps(steps, "kernel"), 3) << steps;  // w's reduction, b's, w's update
  EXPECT_EQ(count_steps(steps, "library"), 1) << steps;  // the matmul
}

TEST(FusionDuplicate, PmeanDivisionIsComputedInEachKernelThatReadsIt) {
  ir::Jaxpr traced = trace_closed(clipped_adamw, clipped_adamw_avals());
  ir::Jaxpr j = compiler::optimize(traced, "duplicate", /*for_kernels=*/true);
  compiler::FusionPlan plan = compiler::fuse(j);
  std::string steps = compiler::describe(j, plan);
  EXPECT_EQ(lone_div_kernels(j, plan), 0) << steps;
  EXPECT_EQ(count_steps(steps, "kernel"), 3) << steps;  // w's reduction, b's, w's update
  // No kernel writes an f32[96,256] that the program does not return: w's reduction
  // kernel writes only the sum, not the divided gradient.
  std::vector<bool> returned(j.avals.size(), false);
  for (const ir::Atom& a : j.outvars)
    if (a.is_var()) returned[size_t(a.var)] = true;
  for (const compiler::FusedStep& st : plan.steps)
    for (int v : st.outputs)
      EXPECT_TRUE(returned[size_t(v)] || j.avals[size_t(v)].shape != kW) << steps;

  // The compiled program equals the interpreter up to the order of the full sum in the
  // norm, which scales every clipped gradient: compiled code adds in blocks of 64 lanes,
  // the eager kernel in the vectors its compiler chose for this CPU. Bit-equal on the
  // Intel machines this was written on; on an AMD Zen 4 build the clipped outputs differ
  // by up to 1.2e-10, where m' = 0.9 m + 0.1 c nearly cancels (8 ulps of a 1.6e-4 result),
  // and the unclipped ones (which do not read the norm) are bit-equal: hence an absolute
  // 1e-6.
  auto exe = compiler::compile(traced, {.name = "duplicate", .donate = {}});
  EXPECT_EQ(exe->describe().find("interpreted"), std::string::npos) << exe->describe();
  Arrays args;
  for (const ops::Aval& a : clipped_adamw_avals()) args.push_back(input(a.dtype, a.shape, int(args.size()) + 50));
  EXPECT_TRUE(close_values(exe->run(args), ir::eval_jaxpr(traced, args), 0, 1e-6)) << exe->describe();
  // Also with the norm below 1 (no clipping: the other case of the select).
  for (size_t i : {1, 2}) args[i] = args[i] * Array(0.001f);
  EXPECT_TRUE(close_values(exe->run(args), ir::eval_jaxpr(traced, args), 0, 1e-6)) << exe->describe();
}

// duplicate_cheap_producers on y = x / 2 and the readers `readers` builds from (x, y, w);
// `copies` is the number of equations it added.
ir::Jaxpr duplicated(Array (*readers)(const Array& x, const Array& y, const Array& w), int* copies) {
  ir::Jaxpr j = trace_closed(
      [readers](const Arrays& a) -> Arrays { return {readers(a[0], lax::div(a[0], splat(2.0f, {8, 8})), a[1])}; },
      {aval(DType::Float32, {8, 8}), aval(DType::Float32, {8, 8})});
  ir::Jaxpr d = compiler::duplicate_cheap_producers(j);
  EXPECT_NO_THROW(ir::verify(d)) << ir::to_string(d);
  EXPECT_TRUE(d.in_avals() == j.in_avals() && d.out_avals() == j.out_avals());
  *copies = int(d.eqns.size()) - int(j.eqns.size());
  return d;
}

TEST(FusionDuplicate, PassCopiesOnlyCheapProducersOfMemoryValuesForKernelReaders) {
  int copies = -1;
  // Three fused readers (mul reads y twice: one reader): two copies, each right before
  // its reader.
  ir::Jaxpr d = duplicated(
      [](const Array&, const Array& y, const Array&) { return lax::add(lax::tanh(y), lax::mul(y, lax::exp(y))); },
      &copies);
  EXPECT_EQ(copies, 2) << ir::to_string(d);
  for (size_t i = 0; i < d.eqns.size(); ++i)
    if (d.eqns[i].prim == Prim::Tanh || d.eqns[i].prim == Prim::Mul || d.eqns[i].prim == Prim::Exp) {
      ASSERT_GT(i, 0u);
      EXPECT_EQ(std::string(ops::name(d.eqns[i - 1].prim)), "div") << ir::to_string(d);
    }
  // The operand comes from a library call: still copied.
  duplicated([](const Array&, const Array&, const Array& w) {
    Array z = lax::div(lax::dot(w, w), splat(2.0f, {8, 8}));
    return lax::add(lax::tanh(z), lax::exp(z));
  }, &copies);
  EXPECT_EQ(copies, 1);
  // A library reader (the matmul) needs y in memory anyway: no copy.
  duplicated([](const Array&, const Array& y, const Array&) { return lax::add(lax::dot(y, y), lax::exp(y)); },
             &copies);
  EXPECT_EQ(copies, 0);
  // The operand is computed in a kernel (exp x): no copy.
  duplicated([](const Array& x, const Array&, const Array&) {
    Array z = lax::div(lax::exp(x), splat(2.0f, {8, 8}));
    return lax::add(lax::tanh(z), lax::sin(z));
  }, &copies);
  EXPECT_EQ(copies, 0);
  // Not cheap (exp): no copy.
  duplicated([](const Array&, const Array&, const Array& w) {
    Array z = lax::exp(w);
    return lax::add(lax::tanh(z), lax::sin(z));
  }, &copies);
  EXPECT_EQ(copies, 0);
}

TEST(FusionDuplicate, ReturnedValueIsNotCopied) {
  ir::Jaxpr j = trace_closed(
      [](const Arrays& a) -> Arrays {
        Array y = lax::div(a[0], splat(2.0f, {8}));
        return {y, lax::tanh(y), lax::exp(y)};
      },
      {aval(DType::Float32, {8})});
  EXPECT_EQ(ir::to_string(compiler::duplicate_cheap_producers(j)), ir::to_string(j));
}

}  // namespace
