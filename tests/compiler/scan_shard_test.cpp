// Row shards of compiled scans (compiler/scan_shard.cpp): a scan whose body never mixes
// the rows of its carries runs as one loop per block of rows, each on its own thread.
// The compiled values equal the interpreter's (within the rounding of reordered float
// sums), with and without shards; bodies that mix rows, and batches too small to split,
// keep one loop. The split is seen in describe().
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdlib>

#include "backend/cpu/small_gemm.h"
#include "compiler/jit_testing.h"
#include "jx/control_flow.h"
#include "jx/jx.h"

namespace jx::testing {
namespace {

namespace jnp = jx::numpy;
using Arrays = std::vector<Array>;

// Two OpenMP threads while a test compiles and runs (the shard count follows them).
class TwoThreads : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = omp_get_max_threads();
    omp_set_num_threads(2);
  }
  void TearDown() override { omp_set_num_threads(saved_); }

 private:
  int saved_ = 1;
};
using RowShards = TwoThreads;

Arrays compiled(const ir::Jaxpr& j, const Arrays& args, std::string* description = nullptr) {
  auto exe = compiler::compile(j, {.name = "shards", .donate = {}});
  if (description) *description = exe->describe();
  return exe->run(args);
}

const char* kSharded = "2 row blocks on their own threads";

// h <- tanh(h @ W + x_t @ U + b) over a batch of B rows, with three kinds of ys: the new
// state, a per-row sum (a reduction over the other axis), and a scaled input row.
Arrays rnn(const Arrays& a, bool reverse) {
  const Array &W = a[0], &U = a[1], &b = a[2], &h0 = a[3], &xs = a[4];
  auto [h, ys] = lax::scan(
      [&](const Array& h, const Array& x) {
        Array n = jnp::tanh(jnp::matmul(h, W) + jnp::matmul(x, U) + b);
        return std::make_pair(n, std::make_tuple(n, (n * n).sum(1), x * 2.0f));
      },
      h0, xs, {.reverse = reverse});
  return {h, std::get<0>(ys), std::get<1>(ys), std::get<2>(ys)};
}

std::vector<ops::Aval> rnn_avals(int64_t batch, int64_t steps) {
  return {aval(DType::Float32, {64, 64}), aval(DType::Float32, {24, 64}), aval(DType::Float32, {64}),
          aval(DType::Float32, {batch, 64}), aval(DType::Float32, {steps, batch, 24})};
}
Arrays args_for(const std::vector<ops::Aval>& avals) {
  Arrays args;
  int seed = 1;
  for (const ops::Aval& a : avals) args.push_back(input(a.dtype, a.shape, seed++) * 0.3f);
  return args;
}

TEST_F(RowShards, RnnRunsInRowBlocksAndMatchesTheInterpreter) {
  for (bool reverse : {false, true}) {
    ir::Jaxpr j = trace_closed([&](const Arrays& a) { return rnn(a, reverse); }, rnn_avals(32, 7));
    Arrays args = args_for(rnn_avals(32, 7));
    std::string d;
    Arrays got = compiled(j, args, &d);
    EXPECT_NE(d.find(kSharded), std::string::npos) << d;
    EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, args), 0, 1e-5)) << d;
  }
}

// The same program without shards (JX_SCAN_SHARDS=0) gives the same values: each row is
// computed by the same arithmetic in either loop.
TEST_F(RowShards, ShardsChangeNoValue) {
  ir::Jaxpr j = trace_closed([&](const Arrays& a) { return rnn(a, false); }, rnn_avals(48, 5));
  Arrays args = args_for(rnn_avals(48, 5));
  std::string sharded, whole;
  Arrays a = compiled(j, args, &sharded);
  ::setenv("JX_SCAN_SHARDS", "0", 1);
  Arrays b = compiled(j, args, &whole);
  ::unsetenv("JX_SCAN_SHARDS");
  EXPECT_NE(sharded.find(kSharded), std::string::npos) << sharded;
  EXPECT_EQ(whole.find("row blocks"), std::string::npos) << whole;
  // Bit for bit where the products run through the tiles (a fixed order over K for every
  // row); oneDNN may order a product's sums by its row count.
  EXPECT_TRUE(close_values(a, b, 0, cpu::small_sgemm_supported(24, 64, 64) ? 0 : 1e-6));
}

// Gradients through the scan (the reverse scan of the transposed body shards too) and a
// vmap over a batch of sequences, against the interpreter.
TEST_F(RowShards, UnderGradAndVmap) {
  auto loss = [](const Array& W, const Array& U, const Array& h0, const Array& xs) {
    Arrays r = rnn({W, U, jnp::zeros({64}, DType::Float32), h0, xs}, false);
    return (r[0] * r[0]).sum() + r[2].sum();
  };
  ir::Jaxpr g = trace_closed(
      [&](const Arrays& a) {
        auto [v, gr] = jx::value_and_grad<0, 1>(loss)(a[0], a[1], a[2], a[3]);
        return Arrays{v, std::get<0>(gr), std::get<1>(gr)};
      },
      {aval(DType::Float32, {64, 64}), aval(DType::Float32, {24, 64}), aval(DType::Float32, {16, 64}),
       aval(DType::Float32, {6, 16, 24})});
  Arrays gargs = args_for({aval(DType::Float32, {64, 64}), aval(DType::Float32, {24, 64}),
                           aval(DType::Float32, {16, 64}), aval(DType::Float32, {6, 16, 24})});
  std::string d;
  Arrays got = compiled(g, gargs, &d);
  EXPECT_NE(d.find("reverse, " + std::string(kSharded)), std::string::npos) << d;
  // The weight gradients are sums over 96 (step, row) terms that the compiled program adds
  // in another order (scan_hoist's products after the loop): 1e-5 of a value near 1 was
  // exceeded (1.2e-5) in the -O1 sanitizer build.
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(g, gargs), 0, 1e-4)) << d;

  // vmap over 3 sequences: the carry is [3, 16, 64], rows of the vmapped axis.
  ir::Jaxpr v = trace_closed(
      [&](const Arrays& a) {
        auto f = [&](const Array& h0, const Array& xs) { return rnn({a[0], a[1], a[2], h0, xs}, false)[0]; };
        return Arrays{jx::vmap(f)(a[3], a[4])};
      },
      {aval(DType::Float32, {64, 64}), aval(DType::Float32, {24, 64}), aval(DType::Float32, {64}),
       aval(DType::Float32, {3, 16, 64}), aval(DType::Float32, {3, 4, 16, 24})});
  Arrays vargs = args_for({aval(DType::Float32, {64, 64}), aval(DType::Float32, {24, 64}), aval(DType::Float32, {64}),
                           aval(DType::Float32, {3, 16, 64}), aval(DType::Float32, {3, 4, 16, 24})});
  EXPECT_TRUE(close_values(compiled(v, vargs), ir::eval_jaxpr(v, vargs), 0, 1e-5));
}

// A per-step value without the batch rows (a step size read from xs) is read whole by
// every block; consts broadcast along the rows are cut to a block.
TEST_F(RowShards, FreeXsAndUniformConsts) {
  ir::Jaxpr j = trace_closed(
      [](const Arrays& a) {
        auto [c, ys] = lax::scan(
            [&](const Array& c, const Array& lr) { return std::make_pair(c - lr * (c * c - a[1]), c * lr); }, a[0],
            a[2]);
        return Arrays{c, ys};
      },
      {aval(DType::Float32, {256, 8}), aval(DType::Float32, {256, 8}), aval(DType::Float32, {5})});
  Arrays args{jnp::full({256, 8}, 1.0f), input(DType::Float32, {256, 8}, 3) + 2.0f, jnp::full({5}, 0.25f)};
  std::string d;
  Arrays got = compiled(j, args, &d);
  EXPECT_NE(d.find(kSharded), std::string::npos) << d;
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, args), 0));
}

// A carry without the batch rows (a step counter, as fori_loop keeps) is computed by
// every block in buffers of its own; a per-row const (Newton's targets) is split.
TEST_F(RowShards, StepCounterCarryAndRowConsts) {
  ir::Jaxpr j = trace_closed(
      [](const Arrays& a) {
        using P = std::pair<Array, Array>;
        auto [c, ys] = lax::scan(
            [&](const P& c, const Array& x) {
              return std::make_pair(P((c.first + a[1] / c.first) * 0.5f + x, c.second + 1.0f), c.second * c.first);
            },
            P(a[0], jnp::zeros({}, DType::Float32)), a[2]);
        return Arrays{c.first, c.second, ys};
      },
      {aval(DType::Float32, {64, 16}), aval(DType::Float32, {64, 16}), aval(DType::Float32, {5, 64, 16})});
  Arrays args{jnp::full({64, 16}, 1.0f), input(DType::Float32, {64, 16}, 3) + 2.0f, jnp::zeros({5, 64, 16}, DType::Float32)};
  std::string d;
  Arrays got = compiled(j, args, &d);
  EXPECT_NE(d.find(kSharded), std::string::npos) << d;
  EXPECT_EQ(got[1].item<float>(), 5.0f);
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, args), 0));
}

// Bodies that mix rows keep one loop: a reduction over the batch axis, a product with
// the rows contracted. So do batches too small or odd.
TEST_F(RowShards, BodiesThatMixRowsAndSmallBatchesKeepOneLoop) {
  std::vector<std::pair<const char*, tr::FlatFn>> bodies = {
      {"centred",
       [](const Arrays& a) {
         auto [c, u] = lax::scan(
             [](const Array& c, const Array& x) {
               return std::make_pair(jnp::tanh(c - c.mean(0, true) + x), jx::none);
             },
             a[0], a[1]);
         return Arrays{c};
       }},
      {"gram",
       [](const Arrays& a) {
         auto [c, u] = lax::scan(
             [](const Array& c, const Array& x) {
               return std::make_pair(jnp::tanh(jnp::matmul(jnp::matmul(c, c.T()), c) * 0.01f + x), jx::none);
             },
             a[0], a[1]);
         return Arrays{c};
       }},
  };
  for (const auto& [name, f] : bodies) {
    const std::vector<ops::Aval> in{aval(DType::Float32, {32, 32}), aval(DType::Float32, {4, 32, 32})};
    ir::Jaxpr j = trace_closed(f, in);
    Arrays args = args_for(in);
    std::string d;
    Arrays got = compiled(j, args, &d);
    EXPECT_EQ(d.find("row blocks"), std::string::npos) << name << "\n" << d;
    EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, args), 0, 1e-5)) << name;
  }
  for (int64_t batch : {6, 33}) {  // 3 rows a block; an odd batch
    ir::Jaxpr j = trace_closed([&](const Arrays& a) { return rnn(a, false); }, rnn_avals(batch, 3));
    Arrays args = args_for(rnn_avals(batch, 3));
    std::string d;
    Arrays got = compiled(j, args, &d);
    EXPECT_EQ(d.find("row blocks"), std::string::npos) << batch << "\n" << d;
    EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, args), 0, 1e-5)) << batch;
  }
}

// A sharded scan nested in another loop runs its blocks every outer iteration.
TEST_F(RowShards, NestedInAnOuterLoop) {
  ir::Jaxpr j = trace_closed(
      [](const Arrays& a) {
        Array h = lax::fori_loop(0, 3, [&](const Array&, const Array& h) { return rnn({a[0], a[1], a[2], h, a[4]}, false)[0]; },
                                 a[3]);
        return Arrays{h};
      },
      rnn_avals(32, 4));
  Arrays args = args_for(rnn_avals(32, 4));
  std::string d;
  Arrays got = compiled(j, args, &d);
  EXPECT_NE(d.find(kSharded), std::string::npos) << d;
  EXPECT_TRUE(close_values(got, ir::eval_jaxpr(j, args), 0, 1e-5)) << d;
}

}  // namespace
}  // namespace jx::testing
