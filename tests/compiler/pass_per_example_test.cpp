// The per-example pass (pass_per_example.cpp): golden printouts of the rewrite of a
// squared norm and a weighted sum of a batched outer product, the cases it must leave
// alone (the products are also returned or read otherwise, a real contraction, the env
// switch), and the rewritten programs against the unrewritten ones on random inputs:
// hand-written lax programs (transposes, reshapes, size-1 contractions, float64) and the
// DP-SGD clipped mean of vmap(grad) of a two-layer MLP with biases, through optimize()
// and through jit.
//
// Tolerance: the rewrite reassociates float sums (||x||²·||g||² instead of Σ x_i² g_j²,
// x·(g·c) instead of (x·g)·c), so results are not bit for bit the same: float32 results
// agree within 1e-5 times the largest magnitude of each result, float64 within 1e-12
// (relative to each element would fail for sums over examples that cancel).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "compiler/pass_testing.h"
#include "compiler/passes.h"
#include "compiler/pipeline.h"
#include "jx/jx.h"
#include "support/str.h"

namespace jx::testing {
namespace {

namespace jnp = jx::numpy;
namespace cc = jx::compiler;
using ops::Prim;
using Arrays = std::vector<Array>;

ir::Jaxpr run_pass(const ir::Jaxpr& j) {
  ir::Jaxpr out = cc::rewrite_per_example_products(j);
  ir::verify(out);
  EXPECT_EQ(out.in_avals(), j.in_avals());
  EXPECT_EQ(out.out_avals(), j.out_avals());
  return out;
}

Arrays random_args(const ir::Jaxpr& j, uint32_t seed) {
  Arrays args;
  Array key = random::PRNGKey(seed);
  for (const ops::Aval& a : j.in_avals()) {
    auto [k1, k2] = random::split<2>(key);
    key = k1;
    args.push_back(random::uniform(k2, a.shape, a.dtype, -2.0, 2.0));
  }
  return args;
}

// The equations of a jaxpr that build a batched product without contraction.
int batched_products(const ir::Jaxpr& j) {
  int n = 0;
  for (const ir::Eqn& e : j.eqns)
    if (e.prim == Prim::DotGeneral && !e.params.ints("lhs_batch").empty()) ++n;
  return n;
}

// Equal types, and values within `tol` times the largest magnitude of each result: the
// sums over examples cancel, so an element's own magnitude is no scale for its rounding.
::testing::AssertionResult close_to_scale(const Arrays& got, const Arrays& want, double tol) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << got.size() << " vs " << want.size() << " results";
  for (size_t i = 0; i < got.size(); ++i) {
    if (ops::aval_of(got[i]) != ops::aval_of(want[i]))
      return ::testing::AssertionFailure() << "result " << i << ": " << got[i].repr() << " vs " << want[i].repr();
    std::vector<double> g = got[i].astype(DType::Float64).to_vector<double>();
    std::vector<double> w = want[i].astype(DType::Float64).to_vector<double>();
    double scale = 0.0, err = 0.0;
    for (size_t k = 0; k < w.size(); ++k) {
      scale = std::max(scale, std::abs(w[k]));
      err = std::max(err, std::abs(g[k] - w[k]));
    }
    if (!(err <= tol * scale))
      return ::testing::AssertionFailure() << "result " << i << ": max |difference| " << err << " > " << tol
                                           << " * max |value| " << scale;
  }
  return ::testing::AssertionSuccess();
}

void expect_same_values(const ir::Jaxpr& original, const ir::Jaxpr& rewritten, double tol) {
  for (uint32_t seed = 0; seed < 3; ++seed) {
    Arrays args = random_args(original, seed);
    EXPECT_TRUE(close_to_scale(ir::eval_jaxpr(rewritten, args), ir::eval_jaxpr(original, args), tol))
        << "seed " << seed;
  }
}

// Per-example outer product of x [B, n] and g [B, k]: what vmap(grad) gives a dense layer.
Array outer(const Array& x, const Array& g) { return lax::dot_general(x, g, {{}, {}, {0}, {0}}); }

// c [B] as a weight of a [B, ...] value of rank r.
Array per_example(const Array& c, int64_t r) {
  Shape s(size_t(r), 1);
  s[0] = c.shape()[0];
  return lax::reshape(c, s);
}

TEST(PerExample, GoldenNormAndWeightedSum) {
  ir::Jaxpr j = closed_jaxpr(
      [](const Arrays& in) {
        Array m = outer(in[0], in[1]);
        Array norm2 = lax::reduce_sum(lax::integer_pow(m, 2), {1, 2});
        Array mean = lax::reduce_sum(lax::mul(m, per_example(in[2], 3)), {0});
        return Arrays{norm2, mean};
      },
      {f32({4, 3}), f32({4, 2}), f32({4})});
  EXPECT_EQ(ir::to_string(j),
            "{ lambda ; a:f32[4,3] b:f32[4,2] c:f32[4]. let\n"
            "    d:f32[4,3,2] = dot_general[\n"
            "      lhs_batch=(0,)\n"
            "      lhs_contracting=()\n"
            "      rhs_batch=(0,)\n"
            "      rhs_contracting=()\n"
            "    ] a b\n"
            "    e:f32[4,3,2] = integer_pow[y=2] d\n"
            "    f:f32[4] = reduce_sum[axes=(1, 2)] e\n"
            "    g:f32[4,1,1] = reshape[dimensions=() new_sizes=(4, 1, 1)] c\n"
            "    h:f32[4,3,2] = mul d g\n"
            "    i:f32[3,2] = reduce_sum[axes=(0,)] h\n"
            "  in (f, i) }");
  ir::Jaxpr r = cc::eliminate_dead_code(run_pass(j));
  // The norm is ||a||² ||b||² per example; the sum contracts a with (b * c) over the
  // examples (the weight goes on the smaller operand, b, reshaped to its rank: simplify
  // later merges the two reshapes).
  EXPECT_EQ(ir::to_string(r),
            "{ lambda ; a:f32[4,3] b:f32[4,2] c:f32[4]. let\n"
            "    d:f32[4,3] = integer_pow[y=2] a\n"
            "    e:f32[4] = reduce_sum[axes=(1,)] d\n"
            "    f:f32[4,2] = integer_pow[y=2] b\n"
            "    g:f32[4] = reduce_sum[axes=(1,)] f\n"
            "    h:f32[4] = mul e g\n"
            "    i:f32[4,1,1] = reshape[dimensions=() new_sizes=(4, 1, 1)] c\n"
            "    j:f32[4,1] = reshape[dimensions=() new_sizes=(4, 1)] i\n"
            "    k:f32[4,2] = mul b j\n"
            "    l:f32[3,2] = dot_general[\n"
            "      lhs_batch=()\n"
            "      lhs_contracting=(0,)\n"
            "      rhs_batch=()\n"
            "      rhs_contracting=(0,)\n"
            "    ] a k\n"
            "  in (h, l) }");
  expect_same_values(j, r, 1e-5);
}

TEST(PerExample, GoldenSquareAsMulAndPlainSum) {
  ir::Jaxpr j = closed_jaxpr(
      [](const Arrays& in) {
        Array m = outer(in[0], in[1]);
        return Arrays{lax::reduce_sum(lax::mul(m, m), {1, 2}), lax::reduce_sum(m, {0})};
      },
      {f32({5, 2}), f32({5, 3})});
  ir::Jaxpr r = cc::eliminate_dead_code(run_pass(j));
  EXPECT_EQ(ir::to_string(r),
            "{ lambda ; a:f32[5,2] b:f32[5,3]. let\n"
            "    c:f32[5,2] = mul a a\n"
            "    d:f32[5] = reduce_sum[axes=(1,)] c\n"
            "    e:f32[5,3] = mul b b\n"
            "    f:f32[5] = reduce_sum[axes=(1,)] e\n"
            "    g:f32[5] = mul d f\n"
            "    h:f32[2,3] = dot_general[\n"
            "      lhs_batch=()\n"
            "      lhs_contracting=(0,)\n"
            "      rhs_batch=()\n"
            "      rhs_contracting=(0,)\n"
            "    ] a b\n"
            "  in (g, h) }");
  expect_same_values(j, r, 1e-5);
}

TEST(PerExample, LeavesProductsThatAreAlsoNeeded) {
  auto norms_and_mean = [](const Arrays& in, bool return_m, bool other_reader) {
    Array m = outer(in[0], in[1]);
    Arrays out{lax::reduce_sum(lax::square(m), {1, 2}), lax::reduce_sum(m, {0})};
    if (return_m) out.push_back(m);
    if (other_reader) out.push_back(lax::reduce_max(m, {1, 2}));
    return out;
  };
  for (auto [ret, other] : {std::pair{true, false}, std::pair{false, true}}) {
    ir::Jaxpr j = closed_jaxpr([&](const Arrays& in) { return norms_and_mean(in, ret, other); },
                               {f32({4, 3}), f32({4, 2})});
    ir::Jaxpr r = run_pass(j);
    EXPECT_TRUE(cc::passes::same_jaxpr(r, j)) << ir::to_string(r);
  }
  // The intermediate square is returned: still needed, no rewrite.
  ir::Jaxpr j = closed_jaxpr(
      [](const Arrays& in) {
        Array sq = lax::square(outer(in[0], in[1]));
        return Arrays{lax::reduce_sum(sq, {1, 2}), sq};
      },
      {f32({4, 3}), f32({4, 2})});
  EXPECT_TRUE(cc::passes::same_jaxpr(run_pass(j), j));
}

TEST(PerExample, LeavesOtherProducts) {
  auto same = [](const tr::FlatFn& f, const std::vector<ops::Aval>& in) {
    ir::Jaxpr j = closed_jaxpr(f, in);
    ir::Jaxpr r = run_pass(j);
    EXPECT_TRUE(cc::passes::same_jaxpr(r, j)) << ir::to_string(r);
  };
  // A real contraction (k = 3) is not an outer product.
  same([](const Arrays& in) {
    Array m = lax::dot_general(in[0], in[1], {{2}, {1}, {0}, {0}});
    return Arrays{lax::reduce_sum(lax::square(m), {1, 2})};
  }, {f32({4, 2, 3}), f32({4, 3, 5})});
  // Not batched: an outer product of one example.
  same([](const Arrays& in) {
    Array m = lax::dot_general(in[0], in[1], {{}, {}, {}, {}});
    return Arrays{lax::reduce_sum(lax::square(m), {0, 1})};
  }, {f32({3}), f32({2})});
  // Reductions over other dims than the closed forms need.
  same([](const Arrays& in) {
    Array m = outer(in[0], in[1]);
    return Arrays{lax::reduce_sum(lax::square(m), {2}), lax::reduce_sum(m, {0, 1})};
  }, {f32({4, 3}), f32({4, 2})});
  // A weight that varies along a non-batch dim.
  same([](const Arrays& in) {
    Array m = outer(in[0], in[1]);
    return Arrays{lax::reduce_sum(lax::mul(m, lax::reshape(in[2], {1, 3, 1})), {0})};
  }, {f32({4, 3}), f32({4, 2}), f32({3})});
  // integer_pow with another exponent.
  same([](const Arrays& in) {
    return Arrays{lax::reduce_sum(lax::integer_pow(outer(in[0], in[1]), 3), {1, 2})};
  }, {f32({4, 3}), f32({4, 2})});
}

TEST(PerExample, EnvSwitchDisablesIt) {
  ir::Jaxpr j = closed_jaxpr(
      [](const Arrays& in) { return Arrays{lax::reduce_sum(outer(in[0], in[1]), {0})}; },
      {f32({4, 3}), f32({4, 2})});
  ::setenv("JX_PER_EXAMPLE_REWRITE", "0", 1);
  ir::Jaxpr off = run_pass(j);
  ::unsetenv("JX_PER_EXAMPLE_REWRITE");
  EXPECT_TRUE(cc::passes::same_jaxpr(off, j));
  EXPECT_EQ(batched_products(cc::eliminate_dead_code(run_pass(j))), 0);
}

TEST(PerExample, ShapeOpsBatchPositionsAndUnitContractions) {
  struct Case {
    const char* name;
    tr::FlatFn f;
    std::vector<ops::Aval> in;
  };
  const std::vector<Case> cases = {
      {"transposed kernel",
       [](const Arrays& in) {
         Array m = lax::transpose(outer(in[0], in[1]), {0, 2, 1});  // [B, 2, 3]
         return Arrays{lax::reduce_sum(lax::square(m), {1, 2}),
                       lax::reduce_sum(lax::mul(m, per_example(in[2], 3)), {0})};
       },
       {f32({6, 3}), f32({6, 2}), f32({6})}},
      {"flattened per example",
       [](const Arrays& in) {
         Array m = lax::reshape(outer(in[0], in[1]), {6, 12});
         return Arrays{lax::reduce_sum(lax::integer_pow(m, 2), {1}),
                       lax::reduce_sum(lax::mul(per_example(in[2], 2), m), {0})};
       },
       {f32({6, 4}), f32({6, 3}), f32({6})}},
      {"batch dims last, examples as [1, n]",
       [](const Arrays& in) {
         // x [n, 1, B], g [1, k, B]: contracting dim of size 1, batch dim 2 of each.
         Array m = lax::dot_general(in[0], in[1], {{1}, {0}, {2}, {2}});  // [B, n, k]
         return Arrays{lax::reduce_sum(lax::square(m), {1, 2}),
                       lax::reduce_sum(lax::mul(m, per_example(in[2], 3)), {0})};
       },
       {f32({5, 1, 7}), f32({1, 4, 7}), f32({7})}},
      {"two batch dims, bigger weighted operand",
       [](const Arrays& in) {
         Array m = lax::dot_general(in[0], in[1], {{}, {}, {0, 1}, {0, 1}});  // [2, 3, 9, 4]
         Array c = lax::reshape(in[2], {2, 3, 1, 1});
         return Arrays{lax::reduce_sum(lax::square(m), {2, 3}),
                       lax::reduce_sum(lax::mul(m, c), {0, 1})};
       },
       {f32({2, 3, 9}), f32({2, 3, 4}), f32({6})}},
      {"scalar weight",
       [](const Arrays& in) {
         Array m = outer(in[0], in[1]);
         return Arrays{lax::reduce_sum(lax::mul(m, lax::reshape(in[2], {1, 1, 1})), {0})};
       },
       {f32({6, 3}), f32({6, 2}), f32({1})}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ir::Jaxpr j = closed_jaxpr(c.f, c.in);
    ir::Jaxpr r = cc::eliminate_dead_code(run_pass(j));
    EXPECT_EQ(batched_products(r), 0) << ir::to_string(r);
    expect_same_values(j, r, 1e-5);
  }
}

TEST(PerExample, Float64) {
  ir::Jaxpr j = closed_jaxpr(
      [](const Arrays& in) {
        Array m = outer(in[0], in[1]);
        return Arrays{lax::reduce_sum(lax::square(m), {1, 2}),
                      lax::reduce_sum(lax::mul(m, per_example(in[2], 3)), {0})};
      },
      {ops::Aval{{8, 5}, DType::Float64, false}, ops::Aval{{8, 6}, DType::Float64, false},
       ops::Aval{{8}, DType::Float64, false}});
  ir::Jaxpr r = cc::eliminate_dead_code(run_pass(j));
  EXPECT_EQ(batched_products(r), 0);
  expect_same_values(j, r, 1e-12);
}

// ---- DP-SGD: the clipped mean of vmap(grad) of an MLP with biases ----

Array mlp_loss(const Array& w0, const Array& b0, const Array& w1, const Array& b1,
               const Array& x, const Array& y) {
  Array h = jnp::maximum(jnp::matmul(x, w0) + b0, 0.0);
  Array out = jnp::matmul(h, w1) + b1;
  return jnp::sum(jnp::square(out - y));
}

// Per-example gradients, each clipped to norm <= clip, then averaged (as a user writes
// it); with `also_grads`, the per-example gradients are returned too.
Arrays clipped_mean(const Arrays& in, double clip, bool also_grads) {
  auto per_example_grads =
      jx::vmap(jx::grad<0, 1, 2, 3>(mlp_loss), {.in_axes = {jx::none, jx::none, jx::none, jx::none, 0, 0}});
  auto [gw0, gb0, gw1, gb1] = per_example_grads(in[0], in[1], in[2], in[3], in[4], in[5]);
  const Arrays grads{gw0, gb0, gw1, gb1};
  Array norm2;
  for (const Array& g : grads) {
    std::vector<int64_t> axes;
    for (int64_t d = 1; d < g.ndim(); ++d) axes.push_back(d);
    Array s = jnp::sum(jnp::square(g), axes);
    norm2 = norm2.valid() ? norm2 + s : s;
  }
  Array scale = jnp::minimum(1.0, clip / (jnp::sqrt(norm2) + 1e-6));
  Arrays out;
  for (const Array& g : grads) {
    Shape s(size_t(g.ndim()), 1);
    s[0] = g.shape()[0];
    out.push_back(jnp::mean(g * scale.reshape(s), 0));
  }
  if (also_grads) out.insert(out.end(), grads.begin(), grads.end());
  return out;
}

std::vector<ops::Aval> mlp_avals(int64_t batch, int64_t n_in, int64_t hidden, int64_t n_out) {
  return {f32({n_in, hidden}), f32({hidden}), f32({hidden, n_out}), f32({n_out}),
          f32({batch, n_in}),  f32({batch, n_out})};
}

TEST(PerExample, ClippedMeanOfVmapGrad) {
  for (auto [batch, n_in, hidden, n_out] : {std::tuple{8, 5, 7, 3}, std::tuple{16, 12, 6, 4},
                                            std::tuple{3, 1, 9, 2}}) {
    SCOPED_TRACE(str("batch ", batch, " sizes ", n_in, "-", hidden, "-", n_out));
    // A clip of 0.5 clips most examples at these scales; 1e6 none.
    for (double clip : {0.5, 1e6}) {
      ir::Jaxpr j = closed_jaxpr([&](const Arrays& in) { return clipped_mean(in, clip, false); },
                                 mlp_avals(batch, n_in, hidden, n_out));
      EXPECT_EQ(batched_products(j), 2);
      ir::Jaxpr o = cc::optimize(j, "clipped_mean");
      ir::verify(o);
      EXPECT_EQ(batched_products(o), 0) << ir::to_string(o);
      expect_same_values(j, o, 1e-5);
    }
  }
}

TEST(PerExample, ClippedMeanAlsoReturningTheGradients) {
  ir::Jaxpr j = closed_jaxpr([](const Arrays& in) { return clipped_mean(in, 0.5, true); },
                             mlp_avals(8, 5, 7, 3));
  ir::Jaxpr o = cc::optimize(j, "clipped_mean_and_grads");
  // The products are returned, so they are computed once and read as they are.
  EXPECT_EQ(batched_products(o), 2);
  expect_same_values(j, o, 1e-5);
}

TEST(PerExample, JitOfTheClippedMeanEqualsEager) {
  Arrays args = random_args(closed_jaxpr([](const Arrays& in) { return clipped_mean(in, 0.5, false); },
                                         mlp_avals(8, 5, 7, 3)),
                            7);
  auto f = [](const Arrays& in) { return clipped_mean(in, 0.5, false); };
  Arrays eager = f(args);
  Arrays compiled = jx::jit(f)(args);
  EXPECT_TRUE(close_to_scale(compiled, eager, 1e-5));
}

}  // namespace
}  // namespace jx::testing
