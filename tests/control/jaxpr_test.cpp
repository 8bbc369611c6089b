// Golden jaxprs of cond, while and scan under jvp, grad and vmap. Each follows the shape
// of JAX's printout of the same program (jax/_src/lax/control_flow: _cond_jvp,
// _cond_partial_eval + _cond_transpose, _cond_batching_rule, _while_loop_jvp,
// _while_loop_batching_rule, _scan_partial_eval + _scan_transpose, _scan_batching_rule);
// jx prints sub-jaxprs inline with their own variable names and omits JAX's `linear` and
// `_split_transpose` params.
#include <gtest/gtest.h>

#include <cmath>

#include "jx/jx.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;

Array f32(float v) { return jnp::array<float>({v}).reshape({}); }

Array sin_or_cos(const Array& x) {
  return lax::cond(x > 0, [](const Array& v) { return jnp::sin(v); }, [](const Array& v) { return jnp::cos(v); }, x);
}

Array doubling(const Array& x) {
  return lax::while_loop([](const Array& v) { return v < 10.0; }, [](const Array& v) { return v * 2.0; }, x);
}

TEST(ControlJaxpr, CondJvp) {
  // One cond over (primal, tangent) branches; the primal output is unused here.
  auto f = [](const Array& x, const Array& t) {
    return jx::jvp(sin_or_cos, std::make_tuple(x), std::make_tuple(t)).second;
  };
  EXPECT_EQ(jx::make_jaxpr(f)(f32(1), f32(1)).str(),
            "{ lambda ; a:f32[] b:f32[]. let\n"
            "    c:bool[] = gt a 0.0:f32[]\n"
            "    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c\n"
            "    _:f32[] e:f32[] = cond[branches=({ lambda ; a:f32[] b:f32[]. let\n"
            "    c:f32[] = cos a\n"
            "    d:f32[] = sin a\n"
            "    e:f32[] = mul b d\n"
            "    f:f32[] = neg e\n"
            "  in (c, f) }, { lambda ; a:f32[] b:f32[]. let\n"
            "    c:f32[] = sin a\n"
            "    d:f32[] = cos a\n"
            "    e:f32[] = mul b d\n"
            "  in (c, e) })] d a b\n"
            "  in (e,) }");
}

TEST(ControlJaxpr, CondGrad) {
  // A primal cond that also returns the residual (sin a / cos a, merged into one slot),
  // then the transposed tangent cond over (residual, cotangent).
  EXPECT_EQ(jx::make_jaxpr(jx::grad(sin_or_cos))(f32(1)).str(),
            "{ lambda ; a:f32[]. let\n"
            "    b:bool[] = gt a 0.0:f32[]\n"
            "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n"
            "    _:f32[] d:f32[] = cond[branches=({ lambda ; a:f32[]. let b:f32[] = cos a; c:f32[] = sin a in (b, c) }, "
            "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = cos a in (b, c) })] c a\n"
            "    e:f32[] = broadcast_in_dim[broadcast_dimensions=() shape=()] 1.0:f32[]\n"
            "    f:f32[] = cond[branches=({ lambda ; a:f32[] b:f32[]. let c:f32[] = neg b; d:f32[] = mul c a in (d,) }, "
            "{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul b a in (c,) })] c d e\n"
            "  in (f,) }");
}

TEST(ControlJaxpr, CondVmapBatchedPredicate) {
  // Both branches on the whole batch, then select_n on the clamped index.
  EXPECT_EQ(jx::make_jaxpr(jx::vmap(sin_or_cos))(jnp::zeros({3})).str(),
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[1] = reshape[dimensions=() new_sizes=(1,)] 0.0:f32[]\n"
            "    c:bool[3] = gt a b\n"
            "    d:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] c\n"
            "    e:f32[3] = cos a\n"
            "    f:f32[3] = sin a\n"
            "    g:i32[3] = clamp 0:i32[] d 1:i32[]\n"
            "    h:f32[3] = select_n g e f\n"
            "  in (h,) }");
}

TEST(ControlJaxpr, WhileJvpAndVmap) {
  auto f = [](const Array& x, const Array& t) {
    return jx::jvp(doubling, std::make_tuple(x), std::make_tuple(t)).second;
  };
  EXPECT_EQ(jx::make_jaxpr(f)(f32(1), f32(1)).str(),
            "{ lambda ; a:f32[] b:f32[]. let\n"
            "    _:f32[] c:f32[] = while[body_jaxpr={ lambda ; a:f32[] b:f32[]. let\n"
            "    c:f32[] = mul a 2.0:f32[]\n"
            "    d:f32[] = mul b 2.0:f32[]\n"
            "  in (c, d) } body_nconsts=0 cond_jaxpr={ lambda ; a:f32[] b:f32[]. let c:bool[] = lt a 10.0:f32[] in (c,) } "
            "cond_nconsts=0] a b\n"
            "  in (c,) }");
  // A batched predicate: loop while any is true, keep finished examples with select_n.
  EXPECT_EQ(jx::make_jaxpr(jx::vmap(doubling))(jnp::zeros({3})).str(),
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[3] = while[body_jaxpr={ lambda ; a:f32[3]. let\n"
            "    b:f32[1] = reshape[dimensions=() new_sizes=(1,)] 10.0:f32[]\n"
            "    c:bool[3] = lt a b\n"
            "    d:f32[1] = reshape[dimensions=() new_sizes=(1,)] 2.0:f32[]\n"
            "    e:f32[3] = mul a d\n"
            "    f:f32[3] = select_n c a e\n"
            "  in (f,) } body_nconsts=0 cond_jaxpr={ lambda ; a:f32[3]. let\n"
            "    b:f32[1] = reshape[dimensions=() new_sizes=(1,)] 10.0:f32[]\n"
            "    c:bool[3] = lt a b\n"
            "    d:bool[] = reduce_or[axes=(0,)] c\n"
            "  in (d,) } cond_nconsts=0] a\n"
            "  in (b,) }");
}

TEST(ControlJaxpr, ScanGradAndVmap) {
  Array zero = f32(0);
  auto f = [&](const Array& w, const Array& xs) {
    return lax::scan([&](const Array& c, const Array& x) { return std::make_pair(jnp::sin(c * w) + x, c); }, zero, xs)
        .first;
  };
  // Primal scan: stacks the residuals c (the carry at each step) and cos(c w) as extra ys;
  // w, needed by the tangent scan, is loop-invariant and passed as a constant. The
  // transposed scan runs in reverse, accumulating w's cotangent in its carry.
  EXPECT_EQ(jx::make_jaxpr(jx::grad(f))(f32(1), jnp::zeros({3})).str(),
            "{ lambda ; a:f32[] b:f32[3]. let\n"
            "    _:f32[] = broadcast_in_dim[broadcast_dimensions=() shape=()] 0.0:f32[]\n"
            "    _:f32[] _:f32[3] c:f32[3] d:f32[3] = scan[jaxpr={ lambda ; a:f32[] b:f32[] c:f32[]. let\n"
            "    d:f32[] = mul b a\n"
            "    e:f32[] = sin d\n"
            "    f:f32[] = cos d\n"
            "    g:f32[] = add e c\n"
            "  in (g, b, b, f) } length=3 num_carry=1 num_consts=1 reverse=False unroll=1] a 0.0:f32[] b\n"
            "    e:f32[] = broadcast_in_dim[broadcast_dimensions=() shape=()] 1.0:f32[]\n"
            "    f:f32[] = broadcast_in_dim[broadcast_dimensions=() shape=()] 0.0:f32[]\n"
            "    g:f32[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] 0.0:f32[]\n"
            "    h:f32[] _:f32[] = scan[jaxpr={ lambda ; a:f32[] b:f32[] c:f32[] d:f32[] e:f32[] f:f32[]. let\n"
            "    g:f32[] = mul c e\n"
            "    h:f32[] = mul d g\n"
            "    i:f32[] = mul g a\n"
            "    j:f32[] = add f i\n"
            "    k:f32[] = add b h\n"
            "  in (k, j) } length=3 num_carry=2 num_consts=1 reverse=True unroll=1] a f e c d g\n"
            "  in (h,) }");
  // Batched xs: the batch axis moves to 1 (the scan axis stays 0); the carry is batched by
  // the fixpoint and the unbatched w stays a scalar constant.
  EXPECT_EQ(jx::make_jaxpr(jx::vmap(f, {.in_axes = {jx::none, 0}}))(f32(1), jnp::zeros({2, 3})).str(),
            "{ lambda ; a:f32[] b:f32[2,3]. let\n"
            "    c:f32[2] = broadcast_in_dim[broadcast_dimensions=() shape=(2,)] 0.0:f32[]\n"
            "    d:f32[3,2] = transpose[permutation=(1, 0)] b\n"
            "    e:f32[2] _:f32[3,2] = scan[jaxpr={ lambda ; a:f32[] b:f32[2] c:f32[2]. let\n"
            "    d:f32[1] = reshape[dimensions=() new_sizes=(1,)] a\n"
            "    e:f32[2] = mul b d\n"
            "    f:f32[2] = sin e\n"
            "    g:f32[2] = add f c\n"
            "  in (g, b) } length=3 num_carry=1 num_consts=1 reverse=False unroll=1] a c d\n"
            "  in (e,) }");
}

TEST(ControlJaxpr, GradOfVmapOfCond) {
  // grad(sum(vmap(cond))) equals the per-element derivative (cos or -sin).
  Array xs = jnp::array<float>({0.5f, -0.5f, 2.0f});
  Array g = jx::grad([](const Array& x) { return jnp::sum(jx::vmap(sin_or_cos)(x)); })(xs);
  std::vector<float> gv = g.to_vector<float>();
  EXPECT_NEAR(gv[0], std::cos(0.5f), 1e-6);
  EXPECT_NEAR(gv[1], -std::sin(-0.5f), 1e-6);
  EXPECT_NEAR(gv[2], std::cos(2.0f), 1e-6);
}

}  // namespace
