// Compiled control flow: scan, while, fori_loop and cond inside a compiled program run
// their bodies as compiled code (kernels in the describe() of the body) and give the
// interpreter's values; nested two deep, under grad (the reverse scan) and vmap; and a
// loop allocates a number of buffers independent of its length.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "compiler/jit_testing.h"
#include "core/allocator.h"
#include "jx/control_flow.h"
#include "jx/jx.h"

namespace jx::testing {
namespace {

namespace jnp = jx::numpy;
using Arrays = std::vector<Array>;

Arrays compiled(const ir::Jaxpr& j, const Arrays& args, std::string* description = nullptr) {
  auto exe = compiler::compile(j, {.name = "control", .donate = {}});
  if (description) *description = exe->describe();
  return exe->run(args);
}

// Compiled against interpreted, within `ulps` (transcendentals) or `rel` (float sums).
void expect_compiled_matches(const ir::Jaxpr& j, const Arrays& args, double ulps = 4, double rel = 0,
                             std::string* description = nullptr) {
  Arrays got = compiled(j, args, description);
  Arrays want = ir::eval_jaxpr(j, args);
  EXPECT_TRUE(close_values(got, want, ulps, rel)) << ir::to_string(j);
}

// h <- tanh(h @ W + x_t @ U + b): a library call (matmul) reading a row of xs, kernels
// writing the carry and the ys row in place.
Arrays rnn(const Arrays& a, bool reverse) {
  const Array &W = a[0], &U = a[1], &b = a[2], &h0 = a[3], &xs = a[4];
  auto [h, hs] = lax::scan(
      [&](const Array& h, const Array& x) {
        Array n = jnp::tanh(jnp::matmul(h, W) + jnp::matmul(x, U) + b);
        return std::make_pair(n, std::make_tuple(n, jnp::sum(n * n), x * 2.0f));
      },
      h0, xs, {.reverse = reverse});
  return {h, std::get<0>(hs), std::get<1>(hs), std::get<2>(hs)};
}

std::vector<ops::Aval> rnn_avals(int64_t steps) {
  return {aval(DType::Float32, {8, 8}), aval(DType::Float32, {6, 8}), aval(DType::Float32, {8}),
          aval(DType::Float32, {4, 8}), aval(DType::Float32, {steps, 4, 6})};
}
Arrays rnn_args(int64_t steps) {
  Arrays args;
  int seed = 1;
  for (const ops::Aval& a : rnn_avals(steps)) args.push_back(input(a.dtype, a.shape, seed++) * 0.5f);
  return args;
}

TEST(ControlFlowCompiled, ScanBodyIsCompiled) {
  for (bool reverse : {false, true}) {
    ir::Jaxpr j = trace_closed([&](const Arrays& a) { return rnn(a, reverse); }, rnn_avals(12));
    std::string d;
    expect_compiled_matches(j, rnn_args(12), 4, 1e-6, &d);
    EXPECT_NE(d.find(reverse ? "scan body, 12 steps, reverse:" : "scan body, 12 steps:"), std::string::npos) << d;
    EXPECT_NE(d.find("  kernel k0"), std::string::npos) << d;
    EXPECT_NE(d.find("  library dot_general"), std::string::npos) << d;
  }
}

TEST(ControlFlowCompiled, ScanHandDerived) {
  // Running sum and product with the carry also returned as a y and a literal y:
  // xs = 1..5 gives carry 15, ys (prefix sums) 1 3 6 10 15; reversed: 5 9 12 14 15.
  for (bool reverse : {false, true}) {
    ir::Jaxpr j = trace_closed(
        [&](const Arrays& a) {
          auto [c, ys] = lax::scan(
              [](const Array& c, const Array& x) {
                Array n = c + x;
                return std::make_pair(n, std::make_tuple(n, c, jnp::full({}, 7.0f)));
              },
              jnp::zeros({}, DType::Float32), a[0], {.reverse = reverse});
          return Arrays{c, std::get<0>(ys), std::get<1>(ys), std::get<2>(ys)};
        },
        {aval(DType::Float32, {5})});
    Arrays r = compiled(j, {jnp::array<float>({1, 2, 3, 4, 5})});
    EXPECT_EQ(r[0].item<float>(), 15.0f);
    EXPECT_EQ(r[1].to_vector<float>(), reverse ? std::vector<float>({15, 14, 12, 9, 5})
                                               : std::vector<float>({1, 3, 6, 10, 15}));
    EXPECT_EQ(r[2].to_vector<float>(), reverse ? std::vector<float>({14, 12, 9, 5, 0})
                                               : std::vector<float>({0, 1, 3, 6, 10}));
    EXPECT_EQ(r[3].to_vector<float>(), std::vector<float>(5, 7.0f));
  }
}

// A carry a kernel computes elementwise from its own previous value shares one buffer
// between iterations (describe() says which). Swapped carries (each computed from the
// other) and a carry also returned as a y keep two. From (1, 10), (a, b) -> (2b, a + 1)
// gives (20, 2), (4, 21), (42, 5); y is each step's a.
TEST(ControlFlowCompiled, CarriesUpdatedInPlace) {
  ir::Jaxpr j = trace_closed(
      [](const Arrays& a) {
        using P = std::pair<Array, Array>;
        auto [c, ys] = lax::scan(
            [](const P& c, const Array& x) { return std::make_pair(P(c.second * 2.0f, c.first + x), c.first); },
            P(a[0], a[1]), a[2]);
        auto [d, unused] = lax::scan(
            [](const Array& d, const Array& x) { return std::make_pair(d * 0.5f + x, jx::none); }, a[0], a[2]);
        return Arrays{c.first, c.second, ys, d};
      },
      {aval(DType::Float32, {64}), aval(DType::Float32, {64}), aval(DType::Float32, {3, 64})});
  std::string d;
  Arrays r = compiled(j, {jnp::full({64}, 1.0f), jnp::full({64}, 10.0f), jnp::ones({3, 64})}, &d);
  EXPECT_EQ(r[0].to_vector<float>(), std::vector<float>(64, 42.0f));
  EXPECT_EQ(r[1].to_vector<float>(), std::vector<float>(64, 5.0f));
  std::vector<float> ys;
  for (float v : {1.0f, 20.0f, 4.0f}) ys.insert(ys.end(), 64, v);
  EXPECT_EQ(r[2].to_vector<float>(), ys);
  EXPECT_EQ(r[3].to_vector<float>(), std::vector<float>(64, 1.875f));  // 1 -> 1.5 -> 1.75 -> 1.875
  EXPECT_NE(d.find("scan body, 3 steps:"), std::string::npos) << d;
  EXPECT_NE(d.find("scan body, 3 steps, carries 0 in place:"), std::string::npos) << d;
}

TEST(ControlFlowCompiled, ZeroLengthScanAndZeroTripWhile) {
  ir::Jaxpr j = trace_closed(
      [&](const Arrays& a) {
        auto [c, ys] = lax::scan([](const Array& c, const Array& x) { return std::make_pair(c * x, c); }, a[0], a[1]);
        Array w = lax::while_loop([](const Array& v) { return v.sum() > 100.0f; }, [](const Array& v) { return v * 2.0f; },
                                  a[0]);
        return Arrays{c, ys, w};
      },
      {aval(DType::Float32, {3}), aval(DType::Float32, {0, 3})});
  Array init = jnp::array<float>({1, 2, 3});
  Arrays r = compiled(j, {init, jnp::zeros({0, 3}, DType::Float32)});
  EXPECT_EQ(r[0].to_vector<float>(), init.to_vector<float>());
  EXPECT_EQ(r[1].shape(), (Shape{0, 3}));
  EXPECT_EQ(r[2].to_vector<float>(), init.to_vector<float>());
}

TEST(ControlFlowCompiled, WhileNewtonSqrt) {
  // x <- 0.5 (x + a / x) until max |x^2 - a| < 1e-5: a data-dependent trip count.
  ir::Jaxpr j = trace_closed(
      [&](const Arrays& a) {
        Array target = a[0];
        auto cond = [&](const std::tuple<Array, Array>& c) {
          return jnp::max(jnp::abs(std::get<0>(c) * std::get<0>(c) - target)) > 1e-5f;
        };
        auto body = [&](const std::tuple<Array, Array>& c) {
          const Array& x = std::get<0>(c);
          return std::make_tuple((x + target / x) * 0.5f, std::get<1>(c) + 1);
        };
        auto [x, n] = lax::while_loop(cond, body, std::make_tuple(target, jnp::zeros({}, DType::Int32)));
        return Arrays{x, n};
      },
      {aval(DType::Float32, {37})});
  Array a = jnp::linspace(0.5, 4.0, 37).astype(DType::Float32);
  std::string d;
  expect_compiled_matches(j, {a}, 0, 0, &d);
  EXPECT_NE(d.find("while cond:"), std::string::npos) << d;
  EXPECT_NE(d.find("while body, carries 0 1 in place:"), std::string::npos) << d;
  Arrays r = compiled(j, {a});
  std::vector<float> x = r[0].to_vector<float>(), av = a.to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], std::sqrt(av[i]), 1e-5) << i;
  EXPECT_GT(r[1].item<int32_t>(), 2);
}

TEST(ControlFlowCompiled, ForiLoopBothLowerings) {
  // sum_{i=lo}^{hi-1} i * x: static bounds lower to scan, traced bounds to while.
  ir::Jaxpr j = trace_closed(
      [&](const Arrays& a) {
        Array s1 = lax::fori_loop(2, 7, [&](const Array& i, const Array& acc) { return acc + i.astype(DType::Float32) * a[0]; },
                                  jnp::zeros({3}, DType::Float32));
        Array s2 = lax::fori_loop(a[1], a[2], [&](const Array& i, const Array& acc) {
          return acc + i.astype(DType::Float32) * a[0];
        }, jnp::zeros({3}, DType::Float32));
        return Arrays{s1, s2};
      },
      {aval(DType::Float32, {3}), aval(DType::Int32, {}), aval(DType::Int32, {})});
  std::string d;
  Array x = jnp::array<float>({1, -2, 0.5f});
  Arrays args = {x, jnp::array<int32_t>({2}).reshape({}), jnp::array<int32_t>({7}).reshape({})};
  expect_compiled_matches(j, args, 0, 0, &d);
  EXPECT_NE(d.find("scan body, 5 steps"), std::string::npos) << d;
  EXPECT_NE(d.find("while body"), std::string::npos) << d;
  Arrays r = compiled(j, args);
  EXPECT_EQ(r[0].to_vector<float>(), (std::vector<float>{20, -40, 10}));  // 2+3+4+5+6 = 20
  EXPECT_EQ(r[1].to_vector<float>(), (std::vector<float>{20, -40, 10}));
}

TEST(ControlFlowCompiled, CondAndSwitch) {
  ir::Jaxpr j = trace_closed(
      [&](const Arrays& a) {
        Array c = lax::cond(a[0].sum() > 0.0f, [](const Array& v) { return jnp::exp(v) + 1.0f; },
                            [](const Array& v) { return v * v; }, a[0]);
        std::vector<std::function<Array(Array)>> fs = {[](Array v) { return v - 1.0f; },
                                                       [](Array v) { return jnp::matmul(v, jnp::ones({4, 4}, DType::Float32)); },
                                                       [](Array v) { return v; }};
        Array s = lax::switch_(a[1], fs, a[0].reshape({1, 4}) * 1.0f);
        return Arrays{c, s.sum({1})};
      },
      {aval(DType::Float32, {4}), aval(DType::Int32, {})});
  for (int idx : {-3, 0, 1, 2, 9})
    for (float sign : {1.0f, -1.0f}) {
      Arrays args = {jnp::array<float>({0.5f, 1, 2, -0.25f}) * sign, jnp::array<int32_t>({idx}).reshape({})};
      expect_compiled_matches(j, args, 4, 1e-6);
    }
  Arrays r = compiled(j, {jnp::array<float>({1, 2, 0, 0}), jnp::array<int32_t>({1}).reshape({})});
  EXPECT_FLOAT_EQ(r[0].to_vector<float>()[2], 2.0f);  // exp(0) + 1
  EXPECT_FLOAT_EQ(r[1].item<float>(), 12.0f);  // 4 columns of 1 + 2
}

TEST(ControlFlowCompiled, NestedTwoDeep) {
  // A scan whose body runs a while loop and a scan, the inner scan's body a cond.
  ir::Jaxpr j = trace_closed(
      [&](const Arrays& a) {
        auto [c, ys] = lax::scan(
            [&](const Array& h, const Array& x) {
              Array w = lax::while_loop([](const Array& v) { return jnp::max(jnp::abs(v)) > 1.0f; },
                                        [](const Array& v) { return v * 0.5f; }, h + x);
              auto [g, gs] = lax::scan(
                  [&](const Array& acc, const Array& r) {
                    Array n = lax::cond(r.sum() > 0.0f, [&](const Array& v) { return jnp::tanh(v + r); },
                                        [&](const Array& v) { return v - r * r; }, acc);
                    return std::make_pair(n, n.sum());
                  },
                  w, a[2]);
              return std::make_pair(g, std::make_pair(gs, jnp::matmul(g, a[1])));
            },
            a[0], a[3]);
        return Arrays{c, ys.first, ys.second};
      },
      {aval(DType::Float32, {5}), aval(DType::Float32, {5, 2}), aval(DType::Float32, {3, 5}),
       aval(DType::Float32, {7, 5})});
  Arrays args = {input(DType::Float32, {5}, 1) * 3.0f, input(DType::Float32, {5, 2}, 2),
                 input(DType::Float32, {3, 5}, 3), input(DType::Float32, {7, 5}, 4) * 4.0f};
  std::string d;
  expect_compiled_matches(j, args, 4, 1e-6, &d);
  EXPECT_NE(d.find("      branch 1:"), std::string::npos) << d;
}

TEST(ControlFlowCompiled, GradAndVmapThroughScan) {
  // value_and_grad of an RNN loss (its backward pass is a reverse scan with the residuals
  // as xs), and vmap of it over a batch of initial states.
  auto loss = [](const Array& W, const Array& U, const Array& b, const Array& h0, const Array& xs) {
    auto [h, hs] = lax::scan(
        [&](const Array& h, const Array& x) {
          Array n = jnp::tanh(jnp::matmul(h, W) + jnp::matmul(x, U) + b);
          return std::make_pair(n, n.mean());
        },
        h0, xs);
    return (h * h).sum() + hs.sum();
  };
  std::vector<ops::Aval> in = rnn_avals(9);
  ir::Jaxpr g = trace_closed(
      [&](const Arrays& a) {
        auto [v, gr] = jx::value_and_grad<0, 1, 2>(loss)(a[0], a[1], a[2], a[3], a[4]);
        return Arrays{v, std::get<0>(gr), std::get<1>(gr), std::get<2>(gr)};
      },
      in);
  std::string d;
  expect_compiled_matches(g, rnn_args(9), 4, 1e-5, &d);
  EXPECT_NE(d.find("scan body, 9 steps, reverse:"), std::string::npos) << d;
  std::vector<ops::Aval> vin = in;
  vin[3] = aval(DType::Float32, {3, 4, 8});
  ir::Jaxpr v = trace_closed(
      [&](const Arrays& a) {
        auto f = [&](const Array& h0) { return loss(a[0], a[1], a[2], h0, a[4]); };
        return Arrays{jx::vmap(f)(a[3])};
      },
      vin);
  Arrays vargs = rnn_args(9);
  vargs[3] = input(DType::Float32, {3, 4, 8}, 9);
  expect_compiled_matches(v, vargs, 4, 1e-5);
}

// Buffers allocated by one call of the compiled program, after a warm-up call.
uint64_t allocs_per_call(const compiler::Executable& exe, const Arrays& args) {
  exe.run(args);
  const uint64_t before = detail::allocator_stats().num_allocs;
  exe.run(args);
  return detail::allocator_stats().num_allocs - before;
}

TEST(ControlFlowCompiled, NoAllocationPerIteration) {
  // The RNN scan plus a fori_loop with a traced bound (a while) running a nested scan
  // over the same xs: U is 8x8 so that xs rows have h's shape.
  auto avals = [](int64_t steps) {
    std::vector<ops::Aval> in = rnn_avals(steps);
    in[1] = aval(DType::Float32, {8, 8});
    in[4] = aval(DType::Float32, {steps, 4, 8});
    in.push_back(aval(DType::Int32, {}));
    return in;
  };
  auto build = [&](int64_t steps) {
    return trace_closed(
        [&](const Arrays& a) {
          Arrays r = rnn(a, false);
          r.push_back(lax::fori_loop(jnp::zeros({}, DType::Int32), a[5], [&](const Array&, const Array& v) {
            auto [c, ys] = lax::scan([](const Array& c, const Array& x) { return std::make_pair(jnp::sin(c) + x, c); },
                                     v, a[4]);
            return c;
          }, a[3]));
          return r;
        },
        avals(steps));
  };
  auto make_args = [&](int64_t steps, int32_t trips) {
    Arrays a;
    std::vector<ops::Aval> in = avals(steps);
    for (size_t i = 0; i + 1 < in.size(); ++i) a.push_back(input(in[i].dtype, in[i].shape, int(i) + 1) * 0.5f);
    a.push_back(jnp::array<int32_t>({trips}).reshape({}));
    return a;
  };
  auto short_exe = compiler::compile(build(10), {.name = "short", .donate = {}});
  auto long_exe = compiler::compile(build(100), {.name = "long", .donate = {}});
  const uint64_t a10 = allocs_per_call(*short_exe, make_args(10, 3));
  const uint64_t a100 = allocs_per_call(*long_exe, make_args(100, 30));
  EXPECT_EQ(a10, a100) << long_exe->describe();
  std::printf("allocations per call: %llu (10 steps), %llu (100 steps)\n", (unsigned long long)a10, (unsigned long long)a100);
  EXPECT_LT(a100, 60u);
  expect_compiled_matches(build(10), make_args(10, 3), 4, 1e-6);
}

}  // namespace
}  // namespace jx::testing
