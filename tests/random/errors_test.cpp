// Bad input to jx::random (issue 19, "bad input everywhere"): a table of wrong calls --
// malformed keys, wrong dtypes, shapes that do not broadcast, bad axes, out-of-range sizes,
// unknown modes, key reuse -- each of which must throw exactly the expected jx error whose
// message names the operation, the offending shape / dtype / value and the fix.
#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "testing/error_table.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
using jx::Array;
using jx::DType;

namespace {

using jx::testing::ErrorRow;
using jx::testing::row;
using jx::testing::run_rows;

Array key() { return jr::PRNGKey(0); }

std::vector<ErrorRow> random_rows() {
  using jx::DTypeError;
  using jx::IndexError;
  using jx::ShapeError;
  using jx::TypeError;
  using jx::ValueError;
  return {
      row<ShapeError>("PRNGKey of a float seed", [] { jr::PRNGKey(jnp::array({1.5f})); },
                      {"[PRNGKey]", "(1,)", "scalar seed", "jx::vmap"}),
      row<DTypeError>("key_data of a float array", [] { jr::key_data(jnp::zeros({2})); },
                      {"[key_data]", "f32[2]", "uint32[2]", "PRNGKey"}),
      row<DTypeError>("split of a uint32[3] key", [] { jr::split(jnp::zeros({3}, DType::UInt32)); },
                      {"[split]", "u32[3]", "uint32[2]"}),
      row<DTypeError>("split of a float key", [] { jr::split(jnp::zeros({2})); },
                      {"[split]", "f32[2]", "uint32[2]"}),
      row<ValueError>("split into -1 keys", [] { jr::split(key(), int64_t{-1}); },
                      {"[split]", "got -1", ">= 0"}),
      row<ValueError>("split to a negative shape",
                      [] {
                        jr::split(key(), jx::Shape{2, -3});
                      },
                      {"[split]", "(2, -3)", "dimensions must be >= 0"}),
      row<ShapeError>("fold_in with non-scalar data",
                      [] { jr::fold_in(key(), jnp::zeros({3}, DType::Int32)); },
                      {"[fold_in]", "(3,)", "jx::vmap"}),
      row<DTypeError>("bits with a float dtype", [] { jr::bits(key(), {2}, DType::Float32); },
                      {"[bits]", "float32", "uint32"}),
      row<ValueError>("bits with a negative shape", [] { jr::bits(key(), {-2}); },
                      {"[bits]", "(-2,)", "dimensions must be >= 0"}),
      row<DTypeError>("uniform with an int dtype", [] { jr::uniform(key(), {2}, DType::Int32); },
                      {"[uniform]", "int32", "use float32"}),
      row<ShapeError>("uniform minval not broadcastable",
                      [] { jr::uniform(key(), {2}, DType::Float32, jnp::zeros({3}), 1.0); },
                      {"[uniform]", "(2,) and (3,)", "broadcast to the sample shape"}),
      row<DTypeError>("normal with an int dtype", [] { jr::normal(key(), {2}, DType::Int32); },
                      {"[normal]", "int32", "use float32"}),
      row<ShapeError>("truncated_normal bounds of different shapes",
                      [] { jr::truncated_normal(key(), jnp::zeros({2}), jnp::ones({3})); },
                      {"[truncated_normal]", "(2,) and (3,)", "broadcast"}),
      row<ValueError>("gumbel with an unknown mode",
                      [] { jr::gumbel(key(), {2}, DType::Float32, "bogus"); },
                      {"[gumbel]", "\"bogus\"", "\"low\" or \"high\""}),
      row<DTypeError>("bernoulli with an int p",
                      [] { jr::bernoulli(key(), jnp::zeros({2}, DType::Int32)); },
                      {"[bernoulli]", "i32[2]", "float array"}),
      row<DTypeError>("randint with a float dtype",
                      [] { jr::randint(key(), {2}, 0, 10, DType::Float32); },
                      {"[randint]", "float32", "integer dtype"}),
      row<ShapeError>("randint bounds not broadcastable",
                      [] { jr::randint(key(), {2}, jnp::zeros({3}, DType::Int32), 10); },
                      {"[randint]", "(2,) and (3,)", "broadcast"}),
      row<DTypeError>("poisson with a float dtype",
                      [] { jr::poisson(key(), 3.0, std::nullopt, DType::Float32); },
                      {"[poisson]", "float32", "use int32"}),
      row<IndexError>("categorical axis out of range",
                      [] {
                        jr::categorical(key(), jnp::zeros({2, 3}), 2);
                      },
                      {"[categorical]", "axis 2", "rank 2", "-2..1"}),
      row<IndexError>("permutation axis out of range",
                      [] {
                        jr::permutation(key(), jnp::zeros({2, 3}), 5);
                      },
                      {"[permutation]", "axis 5", "-2..1"}),
      row<DTypeError>("permutation of a float scalar", [] { jr::permutation(key(), Array(2.5f)); },
                      {"[permutation]", "f32[]", "integer or at least 1-dimensional"}),
      row<IndexError>("shuffle axis out of range", [] { jr::shuffle(key(), jnp::zeros({4}), -3); },
                      {"[shuffle]", "axis -3", "-1..0"}),
      row<ValueError>("choice without replacement of too many",
                      [] { jr::choice(key(), Array(3), {5}, false); },
                      {"[choice]", "size 5", "size 3", "replace=false"}),
      row<ShapeError>("choice with p of the wrong size",
                      [] { jr::choice(key(), Array(3), {2}, true, jnp::ones({4}) / 4.0f); },
                      {"[choice]", "(4,)", "a.shape[axis] is 3"}),
      row<ValueError>("choice of an empty population", [] { jr::choice(key(), Array(0), {2}); },
                      {"[choice]", "greater than 0"}),
      row<ShapeError>("dirichlet with scalar alpha", [] { jr::dirichlet(key(), Array(1.0f)); },
                      {"[dirichlet]", "alpha.ndim >= 1", "== 0"}),
      row<ShapeError>("multivariate_normal mean/cov mismatch",
                      [] { jr::multivariate_normal(key(), jnp::zeros({3}), jnp::eye(2)); },
                      {"[multivariate_normal]", "(..., n, n) for n=3", "(2, 2)"}),
      row<ValueError>("multivariate_normal unknown method",
                      [] {
                        jr::multivariate_normal(key(), jnp::zeros({2}), jnp::eye(2), std::nullopt,
                                                std::nullopt, "qr");
                      },
                      {"[multivariate_normal]", "\"qr\"", "method=\"cholesky\""}),
      row<ValueError>("orthogonal with negative n", [] { jr::orthogonal(key(), -1); },
                      {"[orthogonal]", "n=-1", ">= 0"}),
      row<DTypeError>("threefry2x32 of float operands",
                      [] {
                        jr::threefry2x32(jnp::zeros({2}), jnp::zeros({2}), jnp::zeros({2}),
                                         jnp::zeros({2}));
                      },
                      {"[threefry2x32]", "f32[2]", "uint32", "convert_element_type"}),
      row<DTypeError>("gamma with an int dtype",
                      [] { jr::gamma(key(), 2.0, std::nullopt, DType::Int32); },
                      {"[gamma]", "int32", "use float32"}),
      row<DTypeError>("exponential with a bool dtype",
                      [] { jr::exponential(key(), {2}, DType::Bool); },
                      {"[exponential]", "bool", "use float32"}),
      row<jx::KeyReuseError>("a key consumed twice under debug_key_reuse",
                             [] {
                               jx::config::Scoped on(jx::config::debug_key_reuse, true);
                               Array k = key();
                               jr::normal(k, {2});
                               jr::uniform(k, {2});
                             },
                             {"[uniform]", "already consumed by normal", "jr::split<2>(key)"}),
  };
}

TEST(RandomErrors, EveryBadCallThrowsATypedErrorNamingTheFix) {
  std::vector<ErrorRow> rows = random_rows();
  EXPECT_GE(rows.size(), 20u);
  run_rows(rows);
}

}  // namespace
