// Golden jaxprs of cond, while and scan under jvp, grad and vmap. Each follows the shape
// of JAX's printout of the same program (jax/_src/lax/control_flow: _cond_jvp,
// _cond_partial_eval + _cond_transpose, _cond_batching_rule, _while_loop_jvp,
// _while_loop_batching_rule, _scan_partial_eval + _scan_transpose, _scan_batching_rule);
// Sub-jaxprs print as JAX's pretty printer lays them out, with variable names continuing
// the outer ones; jx omits JAX's `linear` and `_split_transpose` params.
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

// JAX's own printout of this program, verbatim from its docs ("JAX internals: The jaxpr
// language", func7): sub-jaxprs break onto lines as JAX's pretty printer breaks them, and
// their variables continue the outer names.
TEST(ControlJaxpr, PrintsAsJaxDocsFunc7) {
  auto func7 = [](const Array& arg) {
    return lax::cond(arg >= 0.0, [](const Array& xtrue) { return xtrue + 3.0; },
                     [](const Array& xfalse) { return xfalse - 3.0; }, arg);
  };
  EXPECT_EQ(jx::make_jaxpr(func7)(f32(5)).str(),
            "{ lambda ; a:f32[]. let\n"
            "    b:bool[] = ge a 0.0:f32[]\n"
            "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n"
            "    d:f32[] = cond[\n"
            "      branches=(\n"
            "        { lambda ; e:f32[]. let f:f32[] = sub e 3.0:f32[] in (f,) }\n"
            "        { lambda ; g:f32[]. let h:f32[] = add g 3.0:f32[] in (h,) }\n"
            "      )\n"
            "    ] c a\n"
            "  in (d,) }");
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
            "    _:f32[] e:f32[] = cond[\n"
            "      branches=(\n"
            "        { lambda ; f:f32[] g:f32[]. let\n"
            "            h:f32[] = cos f\n"
            "            i:f32[] = sin f\n"
            "            j:f32[] = mul g i\n"
            "            k:f32[] = neg j\n"
            "          in (h, k) }\n"
            "        { lambda ; l:f32[] m:f32[]. let\n"
            "            n:f32[] = sin l\n"
            "            o:f32[] = cos l\n"
            "            p:f32[] = mul m o\n"
            "          in (n, p) }\n"
            "      )\n"
            "    ] d a b\n"
            "  in (e,) }");
}

TEST(ControlJaxpr, CondGrad) {
  // A primal cond that also returns the residual (sin a / cos a, merged into one slot),
  // then the transposed tangent cond over (residual, cotangent).
  EXPECT_EQ(jx::make_jaxpr(jx::grad(sin_or_cos))(f32(1)).str(),
            "{ lambda ; a:f32[]. let\n"
            "    b:bool[] = gt a 0.0:f32[]\n"
            "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n"
            "    _:f32[] d:f32[] = cond[\n"
            "      branches=(\n"
            "        { lambda ; e:f32[]. let f:f32[] = cos e; g:f32[] = sin e in (f, g) }\n"
            "        { lambda ; h:f32[]. let i:f32[] = sin h; j:f32[] = cos h in (i, j) }\n"
            "      )\n"
            "    ] c a\n"
            "    k:f32[] = broadcast_in_dim[broadcast_dimensions=() shape=()] 1.0:f32[]\n"
            "    l:f32[] = cond[\n"
            "      branches=(\n"
            "        { lambda ; m:f32[] n:f32[]. let\n"
            "            o:f32[] = neg n\n"
            "            p:f32[] = mul o m\n"
            "          in (p,) }\n"
            "        { lambda ; q:f32[] r:f32[]. let s:f32[] = mul r q in (s,) }\n"
            "      )\n"
            "    ] c d k\n"
            "  in (l,) }");
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
            "    _:f32[] c:f32[] = while[\n"
            "      body_jaxpr={ lambda ; d:f32[] e:f32[]. let\n"
            "          f:f32[] = mul d 2.0:f32[]\n"
            "          g:f32[] = mul e 2.0:f32[]\n"
            "        in (f, g) }\n"
            "      body_nconsts=0\n"
            "      cond_jaxpr={ lambda ; h:f32[] i:f32[]. let\n"
            "          j:bool[] = lt h 10.0:f32[]\n"
            "        in (j,) }\n"
            "      cond_nconsts=0\n"
            "    ] a b\n"
            "  in (c,) }");
  // A batched predicate: loop while any is true, keep finished examples with select_n.
  EXPECT_EQ(jx::make_jaxpr(jx::vmap(doubling))(jnp::zeros({3})).str(),
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[3] = while[\n"
            "      body_jaxpr={ lambda ; c:f32[3]. let\n"
            "          d:f32[1] = reshape[dimensions=() new_sizes=(1,)] 10.0:f32[]\n"
            "          e:bool[3] = lt c d\n"
            "          f:f32[1] = reshape[dimensions=() new_sizes=(1,)] 2.0:f32[]\n"
            "          g:f32[3] = mul c f\n"
            "          h:f32[3] = select_n e c g\n"
            "        in (h,) }\n"
            "      body_nconsts=0\n"
            "      cond_jaxpr={ lambda ; i:f32[3]. let\n"
            "          j:f32[1] = reshape[dimensions=() new_sizes=(1,)] 10.0:f32[]\n"
            "          k:bool[3] = lt i j\n"
            "          l:bool[] = reduce_or[axes=(0,)] k\n"
            "        in (l,) }\n"
            "      cond_nconsts=0\n"
            "    ] a\n"
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
            "    _:f32[] _:f32[3] c:f32[3] d:f32[3] = scan[\n"
            "      jaxpr={ lambda ; e:f32[] f:f32[] g:f32[]. let\n"
            "          h:f32[] = mul f e\n"
            "          i:f32[] = sin h\n"
            "          j:f32[] = cos h\n"
            "          k:f32[] = add i g\n"
            "        in (k, f, f, j) }\n"
            "      length=3\n"
            "      num_carry=1\n"
            "      num_consts=1\n"
            "      reverse=False\n"
            "      unroll=1\n"
            "    ] a 0.0:f32[] b\n"
            "    l:f32[] = broadcast_in_dim[broadcast_dimensions=() shape=()] 1.0:f32[]\n"
            "    m:f32[] = broadcast_in_dim[broadcast_dimensions=() shape=()] 0.0:f32[]\n"
            "    n:f32[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] 0.0:f32[]\n"
            "    o:f32[] _:f32[] = scan[\n"
            "      jaxpr={ lambda ; p:f32[] q:f32[] r:f32[] s:f32[] t:f32[] u:f32[]. let\n"
            "          v:f32[] = mul r t\n"
            "          w:f32[] = mul s v\n"
            "          x:f32[] = mul v p\n"
            "          y:f32[] = add u x\n"
            "          z:f32[] = add q w\n"
            "        in (z, y) }\n"
            "      length=3\n"
            "      num_carry=2\n"
            "      num_consts=1\n"
            "      reverse=True\n"
            "      unroll=1\n"
            "    ] a m l c d n\n"
            "  in (o,) }");
  // Batched xs: the batch axis moves to 1 (the scan axis stays 0); the carry is batched by
  // the fixpoint and the unbatched w stays a scalar constant.
  EXPECT_EQ(jx::make_jaxpr(jx::vmap(f, {.in_axes = {jx::none, 0}}))(f32(1), jnp::zeros({2, 3})).str(),
            "{ lambda ; a:f32[] b:f32[2,3]. let\n"
            "    c:f32[2] = broadcast_in_dim[broadcast_dimensions=() shape=(2,)] 0.0:f32[]\n"
            "    d:f32[3,2] = transpose[permutation=(1, 0)] b\n"
            "    e:f32[2] _:f32[3,2] = scan[\n"
            "      jaxpr={ lambda ; f:f32[] g:f32[2] h:f32[2]. let\n"
            "          i:f32[1] = reshape[dimensions=() new_sizes=(1,)] f\n"
            "          j:f32[2] = mul g i\n"
            "          k:f32[2] = sin j\n"
            "          l:f32[2] = add k h\n"
            "        in (l, g) }\n"
            "      length=3\n"
            "      num_carry=1\n"
            "      num_consts=1\n"
            "      reverse=False\n"
            "      unroll=1\n"
            "    ] a c d\n"
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
