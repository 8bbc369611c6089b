// pass_scan_remat.cpp: a ys that is a cheap elementwise function of other ys of its scan
// is recomputed, row by row, by the scans that read it instead of being stacked. Each case
// checks the optimized program (which scan stacks what, which body recomputes it) and the
// compiled values: against the interpreter running the unoptimized program, and bit for
// bit against the same program compiled with the pass switched off (the recomputation is
// the same arithmetic on the same rows).
#include <gtest/gtest.h>

#include <cstdlib>

#include "compiler/jit_testing.h"
#include "compiler/passes.h"
#include "compiler/pipeline.h"
#include "compiler/scan_testing.h"
#include "jx/control_flow.h"
#include "jx/jx.h"

namespace jx::testing {
namespace {

namespace jnp = jx::numpy;
using Arrays = std::vector<Array>;
using ops::Prim;

size_t num_ys(const ir::Eqn* scan) { return scan->outputs.size() - size_t(scan->params.i("num_carry")); }
size_t num_xs(const ir::Eqn* scan) {
  return scan->inputs.size() - size_t(scan->params.i("num_carry") + scan->params.i("num_consts"));
}

Arrays compiled(const ir::Jaxpr& j, const Arrays& args) {
  return compiler::compile(j, {.name = "scan_remat", .donate = {}})->run(args);
}

Arrays compiled_without_pass(const ir::Jaxpr& j, const Arrays& args) {
  ::setenv("JX_SCAN_REMAT", "0", 1);
  Arrays r = compiled(j, args);
  ::unsetenv("JX_SCAN_REMAT");
  return r;
}

Arrays args_for(const std::vector<ops::Aval>& in) {
  Arrays args;
  int seed = 3;
  for (const ops::Aval& a : in) args.push_back(input(a.dtype, a.shape, seed++) * 0.5f);
  return args;
}

// Forward: s = tanh(h + x), stacked with u = 1 - s * s (cheap, derived from s). Backward
// (reversed): g <- g * u_t + s_t, reading both stacks, or only u when `read_s` is false.
ir::Jaxpr forward_backward(bool read_s, bool reverse) {
  return trace_closed(
      [=](const Arrays& a) {
        auto [h, ys] = lax::scan(
            [](const Array& h, const Array& x) {
              Array s = jnp::tanh(h + x);
              return std::make_pair(s, std::make_pair(s, Array(1.0f) - s * s));
            },
            a[0], a[1]);
        auto [g, unused] = lax::scan(
            [=](const Array& g, const std::pair<Array, Array>& su) {
              Array n = read_s ? g * su.second + su.first : g * su.second + 0.5f;
              return std::make_pair(n, jx::none);
            },
            a[0], std::make_pair(ys.first, ys.second), {.reverse = reverse});
        return Arrays{h, g};
      },
      {aval(DType::Float32, {4, 16}), aval(DType::Float32, {7, 4, 16})});
}

TEST(ScanRemat, ResidualRecomputedByTheScanThatReadsIt) {
  for (bool reverse : {false, true}) {
    ir::Jaxpr j = forward_backward(/*read_s=*/true, reverse);
    ir::Jaxpr opt = compiler::optimize(j, "scan_remat");
    auto s = scans(opt);
    ASSERT_EQ(s.size(), 2u) << ir::to_string(opt);
    EXPECT_EQ(num_ys(s[0]), 1u) << ir::to_string(opt);  // s only; u is no longer stacked
    EXPECT_EQ(count(body(s[0]), Prim::Sub), 0) << ir::to_string(opt);
    EXPECT_EQ(num_xs(s[1]), 1u) << ir::to_string(opt);  // reads s, computes u
    EXPECT_EQ(count(body(s[1]), Prim::Sub), 1) << ir::to_string(opt);
    Arrays args = args_for({aval(DType::Float32, {4, 16}), aval(DType::Float32, {7, 4, 16})});
    Arrays got = compiled(j, args);
    EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, args), 4, 2e-6));
    EXPECT_TRUE(close_values(got, compiled_without_pass(j, args), 0));
  }
}

// The reader does not read s yet: s becomes one of its xs.
TEST(ScanRemat, SourceRowsPassedToAReaderThatLackedThem) {
  ir::Jaxpr j = forward_backward(/*read_s=*/false, /*reverse=*/true);
  ir::Jaxpr opt = compiler::optimize(j, "scan_remat");
  auto s = scans(opt);
  ASSERT_EQ(s.size(), 2u) << ir::to_string(opt);
  EXPECT_EQ(num_ys(s[0]), 1u) << ir::to_string(opt);
  ASSERT_EQ(num_xs(s[1]), 1u) << ir::to_string(opt);
  EXPECT_EQ(s[1]->inputs.back().var, s[0]->outputs.back()) << ir::to_string(opt);
  Arrays args = args_for({aval(DType::Float32, {4, 16}), aval(DType::Float32, {7, 4, 16})});
  Arrays got = compiled(j, args);
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, args), 4, 2e-6));
  EXPECT_TRUE(close_values(got, compiled_without_pass(j, args), 0));
}

// Hand-computed: forward over xs = [1, 2, 3] from 0 stacks c_t = c_{t-1} + x_t = 1, 3, 6
// and d_t = 2 c_t + 1 = 3, 7, 13; the reader runs t <- t / 2 + d_t: 3, 8.5, 17.25. d is
// recomputed from c. (A reader that only summed d would leave its loop: hoist_from_scans.)
TEST(ScanRemat, HandComputed) {
  ir::Jaxpr j = trace_closed(
      [](const Arrays& a) {
        auto [c, ys] = lax::scan(
            [](const Array& c, const Array& x) {
              Array n = c + x;
              return std::make_pair(n, std::make_pair(n, n * 2.0f + 1.0f));
            },
            jnp::zeros({}, DType::Float32), a[0]);
        auto [total, unused] = lax::scan(
            [](const Array& t, const std::pair<Array, Array>& cd) {
              return std::make_pair(t * 0.5f + cd.second, jx::none);
            },
            jnp::zeros({}, DType::Float32), std::make_pair(ys.first, ys.second));
        return Arrays{c, total};
      },
      {aval(DType::Float32, {3})});
  ir::Jaxpr opt = compiler::optimize(j, "scan_remat_hand");
  auto s = scans(opt);
  ASSERT_EQ(s.size(), 2u) << ir::to_string(opt);
  EXPECT_EQ(num_ys(s[0]), 1u) << ir::to_string(opt);
  Arrays r = compiled(j, {jnp::array<float>({1, 2, 3})});
  EXPECT_EQ(r[0].item<float>(), 6.0f);
  EXPECT_EQ(r[1].item<float>(), 17.25f);
}

// What stays stacked: a residual the program also returns, one read whole (a const of the
// reader, not its xs), and one that is not cheap (exp).
TEST(ScanRemat, StaysStackedWhenNotOnlyReadRowByRowOrNotCheap) {
  auto program = [](int variant) {
    return trace_closed(
        [=](const Arrays& a) {
          auto [h, ys] = lax::scan(
              [=](const Array& h, const Array& x) {
                Array s = jnp::tanh(h + x);
                Array u = variant == 2 ? jnp::exp(s) : Array(1.0f) - s;
                return std::make_pair(s, std::make_pair(s, u));
              },
              a[0], a[1]);
          const Array& us = ys.second;
          auto [g, unused] = lax::scan(
              [&](const Array& g, const std::pair<Array, Array>& su) {
                Array n = g * su.first + (variant == 1 ? jnp::sum(us, {0}) : su.second);
                return std::make_pair(n, jx::none);
              },
              a[0], std::make_pair(ys.first, us));
          return variant == 0 ? Arrays{g, us} : Arrays{h, g};
        },
        {aval(DType::Float32, {4, 16}), aval(DType::Float32, {5, 4, 16})});
  };
  for (int variant : {0, 1, 2}) {
    ir::Jaxpr j = program(variant);
    ir::Jaxpr opt = compiler::optimize(j, "scan_remat_stays");
    auto s = scans(opt);
    ASSERT_EQ(s.size(), 2u) << variant << ir::to_string(opt);
    EXPECT_EQ(num_ys(s[0]), 2u) << variant << ir::to_string(opt);
    Arrays args = args_for({aval(DType::Float32, {4, 16}), aval(DType::Float32, {5, 4, 16})});
    EXPECT_TRUE(close_values(compiled(j, args), ir::eval_jaxpr(j, args), 4, 2e-6)) << variant;
  }
}

// The tanh RNN's gradient: its forward loop stacked h_t, h_{t-1} and 1 - h_t; 1 - h_t is
// now computed by the backward loop, with the same values bit for bit.
TEST(ScanRemat, RnnGradientStacksOneResidualLess) {
  std::vector<ops::Aval> in = {aval(DType::Float32, {16, 16}), aval(DType::Float32, {8, 16}),
                               aval(DType::Float32, {16}), aval(DType::Float32, {32, 16}),
                               aval(DType::Float32, {9, 32, 8})};
  ir::Jaxpr j = trace_closed(
      [](const Arrays& a) {
        auto [v, g] = jx::value_and_grad<0, 1, 2>(rnn_loss)(a[0], a[1], a[2], a[3], a[4]);
        return Arrays{v, std::get<0>(g), std::get<1>(g), std::get<2>(g)};
      },
      in);
  ir::Jaxpr opt = compiler::optimize(j, "scan_remat_rnn");
  auto s = scans(opt);
  ASSERT_EQ(s.size(), 2u) << ir::to_string(opt);
  EXPECT_EQ(num_ys(s[0]), 2u) << ir::to_string(opt);  // h_{t-1} for dW, h_t for tanh'
  EXPECT_EQ(count(body(s[0]), Prim::Sub), 0) << ir::to_string(opt);
  EXPECT_EQ(count(body(s[1]), Prim::Sub), 1) << ir::to_string(opt);
  Arrays args = args_for(in);
  Arrays got = compiled(j, args);
  // dW and dU are one product each over 288 rows, summed in another order than the
  // interpreter's per-step products (hoist_from_scans): a relative 1e-4, as in
  // scan_shard_test. The pass itself changes no bit.
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, args), 0, 1e-4));
  EXPECT_TRUE(close_values(got, compiled_without_pass(j, args), 0));
}

}  // namespace
}  // namespace jx::testing
