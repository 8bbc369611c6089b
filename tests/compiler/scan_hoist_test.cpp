// pass_scan_hoist.cpp: invariant equations, products of xs slices and products
// accumulated into a carry leave scan bodies. Each case checks where the work went (the
// optimized program's scan body) and the compiled values: against hand-computed ones
// where they are short, against the interpreter running the unoptimized program
// otherwise, and against the same program compiled with the pass switched off.
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

Arrays compiled(const ir::Jaxpr& j, const Arrays& args) {
  return compiler::compile(j, {.name = "scan_hoist", .donate = {}})->run(args);
}

Arrays compiled_without_pass(const ir::Jaxpr& j, const Arrays& args) {
  ::setenv("JX_SCAN_HOIST", "0", 1);
  Arrays r = compiled(j, args);
  ::unsetenv("JX_SCAN_HOIST");
  return r;
}

// The tanh RNN (scan_testing.h) at hidden 8, input 6, batch 4, as in control_flow_test.cpp.
std::vector<ops::Aval> rnn_avals(int64_t steps) {
  return {aval(DType::Float32, {8, 8}), aval(DType::Float32, {6, 8}), aval(DType::Float32, {8}),
          aval(DType::Float32, {4, 8}), aval(DType::Float32, {steps, 4, 6})};
}

Arrays args_for(const std::vector<ops::Aval>& in) {
  Arrays args;
  int seed = 1;
  for (const ops::Aval& a : in) args.push_back(input(a.dtype, a.shape, seed++) * 0.5f);
  return args;
}

TEST(ScanHoist, RnnGradientKeepsOnlyTheDependentProductsInItsLoops) {
  ir::Jaxpr j = trace_closed(
      [](const Arrays& a) {
        auto [v, g] = jx::value_and_grad<0, 1, 2>(rnn_loss)(a[0], a[1], a[2], a[3], a[4]);
        return Arrays{v, std::get<0>(g), std::get<1>(g), std::get<2>(g)};
      },
      rnn_avals(9));
  ir::Jaxpr opt = compiler::optimize(j, "scan_hoist_rnn");
  auto s = scans(opt);
  ASSERT_EQ(s.size(), 2u) << ir::to_string(opt);
  // Forward: h @ W stays, x_t @ U is one product over all steps before the loop.
  // Backward: dz @ W^T stays; dW, dU (products) and db (a sum) are taken after the loop.
  EXPECT_EQ(count(body(s[0]), Prim::DotGeneral), 1) << ir::to_string(opt);
  EXPECT_EQ(count(body(s[1]), Prim::DotGeneral), 1) << ir::to_string(opt);
  EXPECT_EQ(count(body(s[1]), Prim::ReduceSum), 0) << ir::to_string(opt);
  EXPECT_EQ(s[1]->params.i("num_carry"), 1) << ir::to_string(opt);  // only dh is carried
  EXPECT_EQ(count(opt, Prim::DotGeneral), 3) << ir::to_string(opt);
  // W^T for the backward product is made once, before the loop.
  for (const ir::Eqn& e : body(s[1]).eqns)
    if (e.prim == Prim::DotGeneral) {
      EXPECT_EQ(e.params.ints("rhs_contracting"), std::vector<int64_t>{0});
    }

  Arrays args = args_for(rnn_avals(9));
  Arrays got = compiled(j, args);
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, args), 4, 2e-6));
  EXPECT_TRUE(close_values(got, compiled_without_pass(j, args), 4, 2e-6));
}

// vmap over a batch of sequences: the products in both loops get batch dims (x_t^T dz_t
// per sequence is a batched dot_general accumulated into a [3, 6, 8] carry), which the
// moved products keep beside the time axis.
TEST(ScanHoist, BatchedProductsUnderVmap) {
  std::vector<ops::Aval> in = rnn_avals(5);
  in[4] = aval(DType::Float32, {3, 5, 4, 6});
  ir::Jaxpr j = trace_closed(
      [](const Arrays& a) {
        auto per_sequence = [&](const Array& xs) {
          auto [v, g] = jx::value_and_grad<0, 1, 2>(rnn_loss)(a[0], a[1], a[2], a[3], xs);
          return std::make_tuple(v, std::get<0>(g), std::get<1>(g), std::get<2>(g));
        };
        auto [v, gW, gU, gb] = jx::vmap(per_sequence)(a[4]);
        return Arrays{v, gW, gU, gb};
      },
      in);
  ir::Jaxpr opt = compiler::optimize(j, "scan_hoist_vmap");
  auto s = scans(opt);
  ASSERT_EQ(s.size(), 2u) << ir::to_string(opt);
  EXPECT_EQ(count(body(s[0]), Prim::DotGeneral), 1) << ir::to_string(opt);
  EXPECT_EQ(count(body(s[1]), Prim::DotGeneral), 1) << ir::to_string(opt);
  Arrays args = args_for(in);
  Arrays got = compiled(j, args);
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, args), 4, 2e-6));
  EXPECT_TRUE(close_values(got, compiled_without_pass(j, args), 4, 2e-6));
}

// c <- c + x_t^T x_t and s <- s + sum over rows of x_t, forward and reversed: the loop
// disappears into one product and one sum. xs = [[1,2],[3,4]], [[0,1],[2,0]]:
//   x0^T x0 = [[10,14],[14,20]], x1^T x1 = [[4,0],[0,1]], row sums [4,6] and [2,1].
TEST(ScanHoist, AccumulatedProductAndSumHandComputed) {
  for (bool reverse : {false, true}) {
    ir::Jaxpr j = trace_closed(
        [&](const Arrays& a) {
          auto [c, ys] = lax::scan(
              [](const std::pair<Array, Array>& c, const Array& x) {
                Array g = lax::dot_general(x, x, {{0}, {0}, {}, {}});
                return std::make_pair(std::make_pair(c.first + g, c.second + jnp::sum(x, {0})), jx::none);
              },
              std::make_pair(jnp::ones({2, 2}, DType::Float32), jnp::zeros({2}, DType::Float32)), a[0],
              {.reverse = reverse});
          return Arrays{c.first, c.second};
        },
        {aval(DType::Float32, {2, 2, 2})});
    ir::Jaxpr opt = compiler::optimize(j, "scan_hoist_acc");
    EXPECT_TRUE(scans(opt).empty()) << ir::to_string(opt);
    Arrays r = compiled(j, {jnp::array<float>({1, 2, 3, 4, 0, 1, 2, 0}).reshape({2, 2, 2})});
    EXPECT_EQ(r[0].to_vector<float>(), std::vector<float>({15, 15, 15, 22}));
    EXPECT_EQ(r[1].to_vector<float>(), std::vector<float>({6, 7}));
  }
}

// An accumulated product of the carry itself (h_{t-1} is stacked as a new ys) beside a
// carry the body reads (kept in the loop), and an accumulation whose sum the body also
// reads (kept: it is not only accumulated).
TEST(ScanHoist, StacksBodyValuesAndKeepsCarriesTheBodyReads) {
  auto f = [](const Arrays& a) {
    const Array& W = a[0];
    auto [c, ys] = lax::scan(
        [&](const std::tuple<Array, Array, Array>& c, const Array& x) {
          const auto& [h, acc, seen] = c;
          Array n = jnp::tanh(jnp::matmul(h, W) + x);
          Array acc2 = acc + lax::dot_general(h, n, {{0}, {0}, {}, {}});
          Array seen2 = seen + lax::dot_general(n, n, {{0}, {0}, {}, {}});
          return std::make_pair(std::make_tuple(n, acc2, seen2), jnp::sum(seen2));
        },
        std::make_tuple(a[1], jnp::zeros({3, 3}, DType::Float32), jnp::zeros({3, 3}, DType::Float32)), a[2]);
    return Arrays{std::get<0>(c), std::get<1>(c), std::get<2>(c), ys};
  };
  std::vector<ops::Aval> in = {aval(DType::Float32, {3, 3}), aval(DType::Float32, {2, 3}),
                               aval(DType::Float32, {5, 2, 3})};
  ir::Jaxpr j = trace_closed(f, in);
  ir::Jaxpr opt = compiler::optimize(j, "scan_hoist_stack");
  auto s = scans(opt);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0]->params.i("num_carry"), 2) << ir::to_string(opt);  // h and seen
  EXPECT_EQ(count(body(s[0]), Prim::DotGeneral), 2) << ir::to_string(opt);
  Arrays args = args_for(in);
  Arrays got = compiled(j, args);
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, args), 4, 2e-6));
  EXPECT_TRUE(close_values(got, compiled_without_pass(j, args), 4, 2e-6));
}

// Products of xs slices: with the slice on the left, on the right (the time axis then
// moves to the front with a transpose), and of two slices (a batched product).
TEST(ScanHoist, MappedProductsOnEitherSide) {
  auto f = [](const Arrays& a) {
    const Array &A = a[0], &xs = a[1], &zs = a[2];
    auto [c, ys] = lax::scan(
        [&](const Array& c, const std::pair<Array, Array>& xz) {
          const auto& [x, z] = xz;
          Array left = jnp::matmul(x, A);                                     // [2,4] @ [4,3]
          Array right = lax::dot_general(A, x, {{0}, {1}, {}, {}});           // A^T x^T: [3,2]
          Array both = lax::dot_general(x, z, {{1}, {1}, {}, {}});            // x z^T: [2,2]
          Array n = c + jnp::sum(left) + jnp::sum(right * right) + jnp::sum(both);
          return std::make_pair(n, std::make_tuple(left, right, both));
        },
        jnp::zeros({}, DType::Float32), std::make_pair(xs, zs));
    return Arrays{c, std::get<0>(ys), std::get<1>(ys), std::get<2>(ys)};
  };
  std::vector<ops::Aval> in = {aval(DType::Float32, {4, 3}), aval(DType::Float32, {6, 2, 4}),
                               aval(DType::Float32, {6, 2, 4})};
  ir::Jaxpr j = trace_closed(f, in);
  ir::Jaxpr opt = compiler::optimize(j, "scan_hoist_mapped");
  auto s = scans(opt);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(count(body(s[0]), Prim::DotGeneral), 0) << ir::to_string(opt);
  EXPECT_EQ(count(opt, Prim::Transpose), 1) << ir::to_string(opt);
  Arrays args = args_for(in);
  Arrays got = compiled(j, args);
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, args), 4, 2e-6));
  EXPECT_TRUE(close_values(got, compiled_without_pass(j, args), 4, 2e-6));
}

// A reshape of a const, and its product with a literal, move out (once instead of per
// step); a broadcast of the const stays in the body, where the fused kernel makes it for
// free.
TEST(ScanHoist, InvariantEquationsMoveButBroadcastsStay) {
  auto f = [](const Arrays& a) {
    const Array &b = a[0], &xs = a[1];
    auto [c, ys] = lax::scan(
        [&](const Array& c, const Array& x) {
          Array row = b.reshape({1, 4}) * 2.0f;
          Array wide = jnp::broadcast_to(b, {3, 4});
          return std::make_pair(c + x * row + wide, jx::none);
        },
        jnp::zeros({3, 4}, DType::Float32), xs);
    return Arrays{c};
  };
  std::vector<ops::Aval> in = {aval(DType::Float32, {4}), aval(DType::Float32, {5, 3, 4})};
  ir::Jaxpr j = trace_closed(f, in);
  ir::Jaxpr opt = compiler::optimize(j, "scan_hoist_invariant");
  auto s = scans(opt);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(count(body(s[0]), Prim::Reshape), 0) << ir::to_string(opt);
  EXPECT_EQ(count(body(s[0]), Prim::Mul), 1) << ir::to_string(opt);  // x * row
  EXPECT_EQ(count(body(s[0]), Prim::BroadcastInDim), 1) << ir::to_string(opt);
  // b = [0, 1, 2, 3], xs all ones: each step adds 1 * 2b + b = 3b.
  Arrays r = compiled(j, {jnp::array<float>({0, 1, 2, 3}), jnp::ones({5, 3, 4}, DType::Float32)});
  EXPECT_EQ(r[0].to_vector<float>(), std::vector<float>({0, 15, 30, 45, 0, 15, 30, 45, 0, 15, 30, 45}));
}

// Nested scans (the inner loop's products leave the inner body into the outer one) and a
// zero-length scan (left alone: hoisting would run code the program never runs).
TEST(ScanHoist, NestedAndZeroLength) {
  auto f = [](const Arrays& a) {
    const Array &W = a[0], &xs = a[1];
    auto [c, ys] = lax::scan(
        [&](const Array& c, const Array& x) {
          auto [ci, yi] = lax::scan(
              [&](const Array& ci, const Array& row) {
                return std::make_pair(ci + lax::dot_general(row, jnp::matmul(row, W), {{0}, {0}, {}, {}}), jx::none);
              },
              c, x);
          return std::make_pair(ci, jx::none);
        },
        jnp::zeros({3, 3}, DType::Float32), xs);
    return Arrays{c};
  };
  for (int64_t steps : {4, 0}) {
    std::vector<ops::Aval> in = {aval(DType::Float32, {3, 3}), aval(DType::Float32, {steps, 5, 2, 3})};
    ir::Jaxpr j = trace_closed(f, in);
    Arrays args = args_for(in);
    Arrays got = compiled(j, args);
    EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, args), 4, 2e-6));
    EXPECT_TRUE(close_values(got, compiled_without_pass(j, args), 4, 2e-6));
  }
}

TEST(ScanHoist, EnvSwitchDisablesIt) {
  ir::Jaxpr j = trace_closed(
      [](const Arrays& a) {
        auto [v, g] = jx::value_and_grad<0, 1, 2>(rnn_loss)(a[0], a[1], a[2], a[3], a[4]);
        return Arrays{v, std::get<0>(g), std::get<1>(g), std::get<2>(g)};
      },
      rnn_avals(3));
  ::setenv("JX_SCAN_HOIST", "0", 1);
  ir::Jaxpr off = compiler::optimize(j, "scan_hoist_off");
  ::unsetenv("JX_SCAN_HOIST");
  auto s = scans(off);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(count(body(s[0]), Prim::DotGeneral), 2) << ir::to_string(off);
  EXPECT_EQ(count(body(s[1]), Prim::DotGeneral), 3) << ir::to_string(off);
}

}  // namespace
}  // namespace jx::testing
