// Batching rule of dot_general (ops/dot.cpp): vmap against a loop over the batch for
// several dimension-number configurations, dtypes, preferred_element_type, in_axes
// none/0/1/-1 per operand, out_axes and batch sizes 0/1/3; jnp::matmul and einsum under
// vmap; nested vmap; hand-derived values; jaxprs showing that no operand is transposed.
#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>

#include "jx/transforms.h"
#include "testing/jaxpr_text.h"
#include "transforms/vmap_testing.h"

namespace {

using namespace vmap_testing;
using DN = lax::DotDimensionNumbers;

struct DotCase {
  std::string name;
  DN dn;
  Shape lhs, rhs;
};

const DotCase kDots[] = {
    {"matmul", {{1}, {0}, {}, {}}, {2, 3}, {3, 4}},
    {"rhs transposed", {{1}, {1}, {}, {}}, {2, 3}, {4, 3}},
    {"lhs contracting first", {{0}, {0}, {}, {}}, {3, 2}, {3, 4}},
    {"vector dot", {{0}, {0}, {}, {}}, {3}, {3}},
    {"outer product", {{}, {}, {}, {}}, {2}, {3}},
    {"matrix-vector", {{1}, {0}, {}, {}}, {2, 3}, {3}},
    {"batched matmul", {{2}, {1}, {0}, {0}}, {2, 3, 4}, {2, 4, 5}},
    {"batch dims not leading", {{0}, {2}, {2}, {0}}, {3, 4, 2}, {2, 5, 3}},
    {"two contracting", {{0, 2}, {1, 0}, {}, {}}, {2, 3, 4}, {4, 2, 5}},
    {"empty contraction", {{1}, {0}, {}, {}}, {2, 0}, {0, 3}},
};

TEST(VmapDot, DotGeneral) {
  for (const DotCase& c : kDots) {
    for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Float16}) {
      Fn f = [&c](const Arrays& a) { return Arrays{lax::dot_general(a[0], a[1], c.dn)}; };
      check_vmap("dot_general " + c.name + " " + jx::dtype_name(t), f, {{c.lhs, t}, {c.rhs, t}},
                 t == DType::Float16 ? 1e-3 : 1e-6);
    }
  }
}

TEST(VmapDot, PreferredElementType) {
  const DotCase& c = kDots[6];
  Fn wide = [&c](const Arrays& a) {
    return Arrays{lax::dot_general(a[0], a[1], c.dn, DType::Float32)};
  };
  check_vmap("f16 -> f32", wide, {{c.lhs, DType::Float16}, {c.rhs, DType::Float16}}, 1e-6);
  Fn ints = [&c](const Arrays& a) {
    return Arrays{lax::dot_general(a[0], a[1], c.dn, DType::Int64)};
  };
  check_vmap("i32 -> i64", ints, {{c.lhs, DType::Int32}, {c.rhs, DType::Int32}});
}

TEST(VmapDot, Nested) {
  const DotCase& c = kDots[6];
  Fn f = [&c](const Arrays& a) { return Arrays{lax::dot_general(a[0], a[1], c.dn)}; };
  check_nested("batched matmul", f, {{c.lhs}, {c.rhs}}, {1, kNone}, {3, 0}, 1e-6);
  check_nested("batched matmul both", f, {{c.lhs}, {c.rhs}}, {0, 2}, {kNone, 1}, 1e-6);
  const DotCase& m = kDots[0];
  Fn g = [&m](const Arrays& a) { return Arrays{lax::dot_general(a[0], a[1], m.dn)}; };
  check_nested("matmul", g, {{m.lhs}, {m.rhs}}, {kNone, 1}, {2, 0}, 1e-6);
}

TEST(VmapDot, NumpyMatmulEinsum) {
  const DType f32 = DType::Float32;
  check_vmap("matmul", [](const Arrays& a) { return Arrays{jnp::matmul(a[0], a[1])}; },
             {{{2, 3}, f32}, {{3, 4}, f32}}, 1e-6);
  check_vmap("matmul vec", [](const Arrays& a) { return Arrays{jnp::matmul(a[0], a[1])}; },
             {{{3}, f32}, {{3, 2}, f32}}, 1e-6);
  check_vmap("matmul broadcast batch",
             [](const Arrays& a) { return Arrays{jnp::matmul(a[0], a[1])}; },
             {{{1, 2, 3}, f32}, {{4, 3, 2}, f32}}, 1e-6);
  check_vmap("einsum ij,jk->ki",
             [](const Arrays& a) { return Arrays{jnp::einsum("ij,jk->ki", a[0], a[1])}; },
             {{{2, 3}, f32}, {{3, 4}, f32}}, 1e-6);
  check_vmap("einsum bij,bjk->bik",
             [](const Arrays& a) { return Arrays{jnp::einsum("bij,bjk->bik", a[0], a[1])}; },
             {{{2, 2, 3}, f32}, {{2, 3, 2}, f32}}, 1e-6);
  check_vmap("einsum i,i->",
             [](const Arrays& a) { return Arrays{jnp::einsum("i,i->", a[0], a[1])}; },
             {{{4}, f32}, {{4}, f32}}, 1e-6);
}

// Per-example gradients of a linear layer: grad's transposed dot_generals run batched.
TEST(VmapDot, PerExampleGradients) {
  const DType f64 = DType::Float64;
  check_vmap("grad of sum((x . w)^2) in w", [](const Arrays& a) {
    auto loss = [&](const Array& w) { return jnp::sum(jnp::square(jnp::matmul(a[0], w))); };
    return Arrays{jx::grad(loss)(a[1])};
  }, {{{3}, f64}, {{3, 2}, f64}}, 1e-12);
}

// Hand-derived: x = [[1, 2], [3, 4]], member k of x along axis 1 is column k.
TEST(VmapDot, HandValues) {
  Array x = jnp::array<float>({1, 2, 3, 4}, {2, 2});
  Array w = jnp::array<float>({1, 10, 100, 1000}, {2, 2});
  // Column k of x times w: [x0k + 100 x1k, 10 x0k + 1000 x1k].
  auto vm = jx::vmap([&](const Array& col) { return lax::dot(col, w); }, {.in_axes = 1});
  EXPECT_EQ(vm(x).to_vector<float>(), (std::vector<float>{301, 3010, 402, 4020}));
  // Both batched: per-member dot of column k of x with row k of w.
  auto both = jx::vmap([](const Array& a, const Array& b) { return lax::dot(a, b); },
                       {.in_axes = {1, 0}});
  EXPECT_EQ(both(x, w).to_vector<float>(), (std::vector<float>{1 + 30, 200 + 4000}));
}

std::string jaxpr_of_vmap(const DotCase& c, jx::AxisSpec in_axes, const Array& l, const Array& r) {
  auto f = [&](const Array& a, const Array& b) {
    return jx::vmap([&](const Array& p, const Array& q) { return lax::dot_general(p, q, c.dn); },
                    {.in_axes = in_axes})(a, b);
  };
  std::ostringstream os;
  os << jx::make_jaxpr(f)(l, r);
  return jx::testing::unbroken(os.str());
}

// One batched operand: its batch dim becomes a free dim; the output batch dim is wherever
// that lands, and vmap moves it to out_axes once at the end.
TEST(VmapDot, OneBatchedOperandIsAFreeDim) {
  const DotCase& c = kDots[0];  // [2,3] . [3,4]
  const std::string j = jaxpr_of_vmap(c, {1, jx::none}, jnp::zeros({2, 5, 3}), jnp::zeros({3, 4}));
  EXPECT_NE(j.find("f32[2,5,4] = dot_general[lhs_batch=() lhs_contracting=(2,) rhs_batch=() "
                   "rhs_contracting=(0,)]"),
            std::string::npos)
      << j;
  const std::string k = jaxpr_of_vmap(c, {jx::none, 0}, jnp::zeros({2, 3}), jnp::zeros({5, 3, 4}));
  EXPECT_NE(k.find("f32[2,5,4] = dot_general[lhs_batch=() lhs_contracting=(1,) rhs_batch=() "
                   "rhs_contracting=(1,)]"),
            std::string::npos)
      << k;
  const std::string b = jaxpr_of_vmap(c, {2, 0}, jnp::zeros({2, 3, 5}), jnp::zeros({5, 3, 4}));
  EXPECT_NE(b.find("f32[5,2,4] = dot_general[lhs_batch=(2,) lhs_contracting=(1,) rhs_batch=(0,) "
                   "rhs_contracting=(1,)]"),
            std::string::npos)
      << b;
}

}  // namespace
