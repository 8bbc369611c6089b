// Golden jaxprs of a max pool and of its grad, against what JAX 0.4.x prints for
// lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), 'VALID') and
// jax.grad of its sum. The JAX text is composed by hand from JAX's rules (reduce_window
// recognizes lax.max with -inf and binds reduce_window_max; its jvp is
// _reduce_window_chooser_jvp_rule = select_and_gather_add; that transposes to
// select_and_scatter_add; params print sorted, a long param list one per line). The one
// difference, (seed), is the one tests/transforms/jaxpr_golden_test.cpp names: jx's
// cotangent seed is a staged broadcast_in_dim of 1.0 where JAX's is the literal 1.0.
#include <gtest/gtest.h>

#include <limits>

#include "jx/jx.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;

Array maxpool(const Array& x) {
  return lax::reduce_window(x, Array(-std::numeric_limits<double>::infinity()),
                            [](const Array& a, const Array& b) { return lax::max(a, b); }, {1, 2, 2, 1},
                            {1, 2, 2, 1}, "VALID");
}

TEST(JaxprWindowed, MaxPool) {
  EXPECT_EQ(jx::make_jaxpr(maxpool)(jnp::zeros({1, 4, 4, 1})).str(),
            "{ lambda ; a:f32[1,4,4,1]. let\n"
            "    b:f32[1,2,2,1] = reduce_window_max[\n"
            "      base_dilation=(1, 1, 1, 1)\n"
            "      padding=((0, 0), (0, 0), (0, 0), (0, 0))\n"
            "      window_dilation=(1, 1, 1, 1)\n"
            "      window_dimensions=(1, 2, 2, 1)\n"
            "      window_strides=(1, 2, 2, 1)\n"
            "    ] a\n"
            "  in (b,) }");
}

TEST(JaxprWindowed, GradOfMaxPool) {
  // JAX:
  //   { lambda ; a:f32[1,4,4,1]. let
  //       b:f32[1,2,2,1] = reduce_window_max[...as above...] a
  //       _:f32[] = reduce_sum[axes=(0, 1, 2, 3)] b
  //       c:f32[1,2,2,1] = broadcast_in_dim[
  //         broadcast_dimensions=()
  //         shape=(1, 2, 2, 1)
  //       ] 1.0:f32[]
  //       d:f32[1,4,4,1] = select_and_scatter_add[
  //         padding=((0, 0), (0, 0), (0, 0), (0, 0))
  //         select_prim=ge
  //         window_dimensions=(1, 2, 2, 1)
  //         window_strides=(1, 2, 2, 1)
  //       ] c a
  //     in (d,) }
  // (the broadcast's params do not fit the 80 columns either). jx: the same, with (seed).
  auto loss = [](const Array& x) { return jnp::sum(maxpool(x)); };
  EXPECT_EQ(jx::make_jaxpr(jx::grad(loss))(jnp::zeros({1, 4, 4, 1})).str(),
            "{ lambda ; a:f32[1,4,4,1]. let\n"
            "    b:f32[1,2,2,1] = reduce_window_max[\n"
            "      base_dilation=(1, 1, 1, 1)\n"
            "      padding=((0, 0), (0, 0), (0, 0), (0, 0))\n"
            "      window_dilation=(1, 1, 1, 1)\n"
            "      window_dimensions=(1, 2, 2, 1)\n"
            "      window_strides=(1, 2, 2, 1)\n"
            "    ] a\n"
            "    _:f32[] = reduce_sum[axes=(0, 1, 2, 3)] b\n"
            "    c:f32[] = broadcast_in_dim[broadcast_dimensions=() shape=()] 1.0:f32[]\n"
            "    d:f32[1,2,2,1] = broadcast_in_dim[\n"
            "      broadcast_dimensions=()\n"
            "      shape=(1, 2, 2, 1)\n"
            "    ] c\n"
            "    e:f32[1,4,4,1] = select_and_scatter_add[\n"
            "      padding=((0, 0), (0, 0), (0, 0), (0, 0))\n"
            "      select_prim=ge\n"
            "      window_dimensions=(1, 2, 2, 1)\n"
            "      window_strides=(1, 2, 2, 1)\n"
            "    ] d a\n"
            "  in (e,) }");
}

TEST(JaxprWindowed, GenericReduceWindowHoldsItsComputation) {
  // JAX: the generic primitive with the traced computation as its jaxpr param, whose
  // variable names continue the outer ones.
  auto prod = [](const Array& x) {
    return lax::reduce_window(x, Array(1.0), [](const Array& a, const Array& b) { return lax::mul(a, b); }, {2},
                              {1}, "VALID");
  };
  EXPECT_EQ(jx::make_jaxpr(prod)(jnp::zeros({5})).str(),
            "{ lambda ; a:f32[5]. let\n"
            "    b:f32[4] = reduce_window[\n"
            "      base_dilation=(1,)\n"
            "      consts=()\n"
            "      jaxpr={ lambda ; c:f32[] d:f32[]. let e:f32[] = mul c d in (e,) }\n"
            "      padding=((0, 0),)\n"
            "      window_dilation=(1,)\n"
            "      window_dimensions=(2,)\n"
            "      window_strides=(1,)\n"
            "    ] a 1.0:f32[]\n"
            "  in (b,) }");
}

}  // namespace
