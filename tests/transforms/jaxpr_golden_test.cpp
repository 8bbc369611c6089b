// Golden jaxprs of small programs and of their jvp and grad, against what JAX 0.4.x
// prints for the same program. Each JAX printout below is derived by hand from JAX's rules
// (lax.py's jvp rules, ad.backward_pass's order of accumulation, partial_eval's order of
// known equations); jx's string is pinned only where its equations are JAX's, and every
// difference is named:
//  (seed)  grad's cotangent seed is jx::ad::ones_like's staged broadcast_in_dim, where
//          JAX's seed is the literal 1.0:f32[];
//  (add)   jx adds tangents with `add`; JAX has a separate add_any primitive;
//  (rank0) jx's elementwise primitives take no rank-0 operand beside a higher-rank one,
//          so a scalar constant is reshaped to f32[1] where JAX prints `sub 1.0:f32[] c`;
//  (order) C++ evaluates a call's arguments right to left here, so a jvp rule written as
//          one nested expression stages its operands in the opposite order to JAX's;
//  (sub)   a sub-jaxpr restarts its variable names at `a` and is printed on the outer
//          equation's line; JAX continues the outer names and indents it.
#include <gtest/gtest.h>

#include "jx/jx.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;

Array f32(float v) { return jnp::array<float>({v}).reshape({}); }
Array vec3() { return jnp::array<float>({1.0f, 2.0f, 3.0f}); }

template <class F>
auto jvp_program(F f) {
  return [f](const Array& x, const Array& t) {
    auto [y, dy] = jx::jvp(f, std::make_tuple(x), std::make_tuple(t));
    return std::make_tuple(y, dy);
  };
}

Array sin_fn(const Array& x) { return jnp::sin(x); }

TEST(JaxprGolden, Sin) {
  // JAX: { lambda ; a:f32[]. let b:f32[] = sin a in (b,) }
  EXPECT_EQ(jx::make_jaxpr(sin_fn)(f32(1)).str(), "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }");
}

TEST(JaxprGolden, JvpOfSin) {
  // JAX, identical: sin's jvp rule is mul(g, cos(x)).
  EXPECT_EQ(jx::make_jaxpr(jvp_program(sin_fn))(f32(1), f32(1)).str(),
            "{ lambda ; a:f32[] b:f32[]. let\n"
            "    c:f32[] = sin a\n"
            "    d:f32[] = cos a\n"
            "    e:f32[] = mul b d\n"
            "  in (c, e) }");
}

TEST(JaxprGolden, GradOfSin) {
  // JAX:
  //   { lambda ; a:f32[]. let
  //       _:f32[] = sin a
  //       b:f32[] = cos a
  //       c:f32[] = mul 1.0:f32[] b
  //     in (c,) }
  // jx: the same, with (seed).
  EXPECT_EQ(jx::make_jaxpr(jx::grad(sin_fn))(f32(1)).str(),
            "{ lambda ; a:f32[]. let\n"
            "    _:f32[] = sin a\n"
            "    b:f32[] = cos a\n"
            "    c:f32[] = broadcast_in_dim[broadcast_dimensions=() shape=()] 1.0:f32[]\n"
            "    d:f32[] = mul c b\n"
            "  in (d,) }");
}

TEST(JaxprGolden, MulAndItsJvp) {
  auto mul = [](const Array& x, const Array& y) { return x * y; };
  EXPECT_EQ(jx::make_jaxpr(mul)(vec3(), vec3()).str(),
            "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = mul a b in (c,) }");
  // JAX (mul's jvp: mul(xdot, y) and mul(x, ydot), summed):
  //   { lambda ; a:f32[3] b:f32[3] c:f32[3] d:f32[3]. let
  //       e:f32[3] = mul a b
  //       f:f32[3] = mul c b
  //       g:f32[3] = mul a d
  //       h:f32[3] = add_any f g
  //     in (e, h) }
  // jx: the same, with (add).
  auto program = [&](const Array& x, const Array& y, const Array& tx, const Array& ty) {
    auto [o, d] = jx::jvp(mul, std::make_tuple(x, y), std::make_tuple(tx, ty));
    return std::make_tuple(o, d);
  };
  EXPECT_EQ(jx::make_jaxpr(program)(vec3(), vec3(), vec3(), vec3()).str(),
            "{ lambda ; a:f32[3] b:f32[3] c:f32[3] d:f32[3]. let\n"
            "    e:f32[3] = mul a b\n"
            "    f:f32[3] = mul c b\n"
            "    g:f32[3] = mul a d\n"
            "    h:f32[3] = add f g\n"
            "  in (e, h) }");
}

Array sum_tanh(const Array& x) { return jnp::sum(jnp::tanh(x)); }

TEST(JaxprGolden, SumOfTanh) {
  // JAX 0.4.x, identical.
  EXPECT_EQ(jx::make_jaxpr(sum_tanh)(vec3()).str(),
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[3] = tanh a\n"
            "    c:f32[] = reduce_sum[axes=(0,)] b\n"
            "  in (c,) }");
}

TEST(JaxprGolden, JvpOfSumOfTanh) {
  // JAX (tanh's jvp: mul(add(g, mul(g, ans)), sub(1, ans))):
  //   { lambda ; a:f32[3] b:f32[3]. let
  //       c:f32[3] = tanh a
  //       d:f32[3] = mul b c
  //       e:f32[3] = add b d
  //       f:f32[3] = sub 1.0:f32[] c
  //       g:f32[3] = mul e f
  //       h:f32[] = reduce_sum[axes=(0,)] c
  //       i:f32[] = reduce_sum[axes=(0,)] g
  //     in (h, i) }
  // jx: the same equations, with (rank0) and (order): the `sub` comes first.
  EXPECT_EQ(jx::make_jaxpr(jvp_program(sum_tanh))(vec3(), vec3()).str(),
            "{ lambda ; a:f32[3] b:f32[3]. let\n"
            "    c:f32[3] = tanh a\n"
            "    d:f32[1] = reshape[dimensions=() new_sizes=(1,)] 1.0:f32[]\n"
            "    e:f32[3] = sub d c\n"
            "    f:f32[3] = mul b c\n"
            "    g:f32[3] = add b f\n"
            "    h:f32[3] = mul g e\n"
            "    i:f32[] = reduce_sum[axes=(0,)] c\n"
            "    j:f32[] = reduce_sum[axes=(0,)] h\n"
            "  in (i, j) }");
}

TEST(JaxprGolden, GradOfSumOfTanh) {
  // JAX: the known equations (tanh, the sub inside its jvp rule, the primal reduce_sum)
  // in the order the jvp ran them, then the transposes in reverse:
  //   { lambda ; a:f32[3]. let
  //       b:f32[3] = tanh a
  //       c:f32[3] = sub 1.0:f32[] b
  //       _:f32[] = reduce_sum[axes=(0,)] b
  //       d:f32[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] 1.0:f32[]
  //       e:f32[3] = mul d c
  //       f:f32[3] = mul e b
  //       g:f32[3] = add_any e f
  //     in (g,) }
  // jx: the same, with (rank0), (seed) and (add).
  EXPECT_EQ(jx::make_jaxpr(jx::grad(sum_tanh))(vec3()).str(),
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[3] = tanh a\n"
            "    c:f32[1] = reshape[dimensions=() new_sizes=(1,)] 1.0:f32[]\n"
            "    d:f32[3] = sub c b\n"
            "    _:f32[] = reduce_sum[axes=(0,)] b\n"
            "    e:f32[] = broadcast_in_dim[broadcast_dimensions=() shape=()] 1.0:f32[]\n"
            "    f:f32[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] e\n"
            "    g:f32[3] = mul f d\n"
            "    h:f32[3] = mul g b\n"
            "    i:f32[3] = add g h\n"
            "  in (i,) }");
}

TEST(JaxprGolden, GradOfTwoArguments) {
  // f(x, y) = sin(x) * y, both gradients. JAX: the backward pass meets add_any's
  // transpose first, then mul(c, ydot)'s, then mul(cdot, b)'s, then sin's mul:
  //   { lambda ; a:f32[] b:f32[]. let
  //       c:f32[] = sin a
  //       d:f32[] = cos a
  //       _:f32[] = mul c b
  //       e:f32[] = mul c 1.0:f32[]
  //       f:f32[] = mul 1.0:f32[] b
  //       g:f32[] = mul f d
  //     in (g, e) }
  // jx: the same, with (seed).
  auto f = [](const Array& x, const Array& y) { return jnp::sin(x) * y; };
  EXPECT_EQ(jx::make_jaxpr(jx::grad<0, 1>(f))(f32(1), f32(2)).str(),
            "{ lambda ; a:f32[] b:f32[]. let\n"
            "    c:f32[] = sin a\n"
            "    d:f32[] = cos a\n"
            "    _:f32[] = mul c b\n"
            "    e:f32[] = broadcast_in_dim[broadcast_dimensions=() shape=()] 1.0:f32[]\n"
            "    f:f32[] = mul c e\n"
            "    g:f32[] = mul e b\n"
            "    h:f32[] = mul g d\n"
            "  in (h, f) }");
}

TEST(JaxprGolden, GradOfCheckpoint) {
  // jax.checkpoint's docstring function g = sin . sin. JAX's remat partial eval runs the
  // known half inline (both sins; nothing is saved but the input a), and remat_transpose
  // binds one checkpoint on the transposed staged jaxpr, which recomputes sin a, cos a
  // and cos(sin a) before multiplying the cotangent through:
  //   { lambda ; a:f32[]. let
  //       b:f32[] = sin a
  //       _:f32[] = sin b
  //       c:f32[] = checkpoint[
  //         differentiated=True
  //         jaxpr={ lambda ; d:f32[] e:f32[]. let
  //             f:f32[] = sin d
  //             g:f32[] = cos d
  //             h:f32[] = cos f
  //             i:f32[] = mul e h
  //             j:f32[] = mul i g
  //           in (j,) }
  //         policy=None
  //         prevent_cse=True
  //       ] a 1.0:f32[]
  //     in (c,) }
  // jx: the same, with (seed) and (sub).
  auto g = jx::checkpoint([](const Array& x) { return jnp::sin(jnp::sin(x)); });
  EXPECT_EQ(jx::make_jaxpr(jx::grad(g))(f32(1)).str(),
            "{ lambda ; a:f32[]. let\n"
            "    b:f32[] = sin a\n"
            "    _:f32[] = sin b\n"
            "    c:f32[] = broadcast_in_dim[broadcast_dimensions=() shape=()] 1.0:f32[]\n"
            "    d:f32[] = checkpoint[\n"
            "      differentiated=True\n"
            "      jaxpr={ lambda ; e:f32[] f:f32[]. let\n"
            "          g:f32[] = sin e\n"
            "          h:f32[] = cos e\n"
            "          i:f32[] = cos g\n"
            "          j:f32[] = mul f i\n"
            "          k:f32[] = mul j h\n"
            "        in (k,) }\n"
            "      policy=None\n"
            "      prevent_cse=True\n"
            "    ] a c\n"
            "  in (d,) }");
}

}  // namespace
