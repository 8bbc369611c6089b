// Batching rules of the shape family (ops/shape.cpp): vmap against a loop over the batch
// for every primitive, in_axes none/0/1/-1 per operand, out_axes 0/1/-1, batch sizes
// 0/1/3 and several dtypes; hand-derived values; jaxprs showing which rules move no data.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "jx/transforms.h"
#include "ops/primitive.h"
#include "transforms/vmap_testing.h"

namespace {

using namespace vmap_testing;
using jx::ops::PrimitiveInfo;

const DType kDtypes[] = {DType::Float32, DType::Int32, DType::Bool, DType::Float16, DType::Float64};

std::string dname(DType t) { return jx::dtype_name(t); }

TEST(VmapShape, Reshape) {
  for (DType t : kDtypes) {
    auto f = [](Shape s) { return [s](const Arrays& a) { return Arrays{lax::reshape(a[0], s)}; }; };
    check_vmap("reshape " + dname(t), f({3, 2}), {{{2, 3}, t}});
    check_vmap("reshape flat " + dname(t), f({6}), {{{2, 3}, t}});
    check_vmap("reshape scalar " + dname(t), f({1, 1}), {{{}, t}});
    check_vmap("reshape empty " + dname(t), f({0, 5}), {{{5, 0}, t}});
  }
}

TEST(VmapShape, BroadcastInDim) {
  for (DType t : kDtypes) {
    auto f = [](Shape s, std::vector<int64_t> bd) {
      return [=](const Arrays& a) { return Arrays{lax::broadcast_in_dim(a[0], s, bd)}; };
    };
    check_vmap("bcast row " + dname(t), f({2, 3}, {1}), {{{3}, t}});
    check_vmap("bcast col " + dname(t), f({3, 2}, {0}), {{{3}, t}});
    check_vmap("bcast size-1 " + dname(t), f({4, 2, 3}, {1, 2}), {{{1, 3}, t}});
    check_vmap("bcast gaps " + dname(t), f({2, 3, 4, 5}, {1, 3}), {{{3, 5}, t}});
    check_vmap("bcast scalar " + dname(t), f({2}, {}), {{{}, t}});
  }
}

TEST(VmapShape, Transpose) {
  for (DType t : kDtypes) {
    auto f = [](std::vector<int64_t> perm) {
      return [=](const Arrays& a) { return Arrays{lax::transpose(a[0], perm)}; };
    };
    check_vmap("transpose 2d " + dname(t), f({1, 0}), {{{2, 3}, t}});
    check_vmap("transpose 3d " + dname(t), f({2, 0, 1}), {{{2, 3, 4}, t}});
    check_vmap("transpose id " + dname(t), f({0}), {{{3}, t}});
  }
}

TEST(VmapShape, Squeeze) {
  for (DType t : kDtypes) {
    auto f = [](std::vector<int64_t> d) {
      return [=](const Arrays& a) { return Arrays{lax::squeeze(a[0], d)}; };
    };
    check_vmap("squeeze both " + dname(t), f({0, 2}), {{{1, 3, 1}, t}});
    check_vmap("squeeze last " + dname(t), f({1}), {{{3, 1}, t}});
    check_vmap("squeeze to scalar " + dname(t), f({0}), {{{1}, t}});
  }
}

TEST(VmapShape, Rev) {
  for (DType t : kDtypes) {
    auto f = [](std::vector<int64_t> d) {
      return [=](const Arrays& a) { return Arrays{lax::rev(a[0], d)}; };
    };
    check_vmap("rev all " + dname(t), f({0, 1}), {{{2, 3}, t}});
    check_vmap("rev one " + dname(t), f({1}), {{{2, 3}, t}});
    check_vmap("rev none " + dname(t), f({}), {{{4}, t}});
  }
}

TEST(VmapShape, Concatenate) {
  for (DType t : kDtypes) {
    auto f = [](int64_t dim) {
      return [=](const Arrays& a) { return Arrays{lax::concatenate(a, dim)}; };
    };
    check_vmap("concat dim 1 " + dname(t), f(1), {{{2, 1}, t}, {{2, 3}, t}, {{2, 0}, t}});
    check_vmap("concat dim 0 " + dname(t), f(0), {{{1, 2}, t}, {{3, 2}, t}});
    check_vmap("concat one " + dname(t), f(0), {{{3}, t}});
  }
}

TEST(VmapShape, Pad) {
  for (DType t : kDtypes) {
    auto f = [](std::vector<lax::PadConfig> c) {
      return [=](const Arrays& a) { return Arrays{lax::pad(a[0], a[1], c)}; };
    };
    check_vmap("pad lo/hi " + dname(t), f({{1, 2, 0}}), {{{3}, t}, {{}, t}});
    check_vmap("pad interior " + dname(t), f({{0, 1, 1}, {2, 0, 2}}), {{{2, 3}, t}, {{}, t}});
    check_vmap("pad crop " + dname(t), f({{-1, 1, 1}, {1, -2, 0}}), {{{3, 4}, t}, {{}, t}});
    check_vmap("pad empty " + dname(t), f({{1, 1, 3}}), {{{0}, t}, {{}, t}});
  }
}

TEST(VmapShape, IotaUnderVmap) {
  // iota has no operands, so vmap never batches it: it stays unbatched and broadcasts.
  Fn f = [](const Arrays& a) {
    return Arrays{lax::add(a[0], lax::broadcasted_iota(DType::Int32, {2, 3}, 1))};
  };
  check_vmap("x + iota", f, {{{2, 3}, DType::Int32}});
  const PrimitiveInfo& io = jx::ops::info(jx::ops::Prim::Iota);
  ASSERT_NE(io.batch, nullptr);
  EXPECT_THROW(io.batch({}, {}, {}), jx::InternalError);
}

TEST(VmapShape, Nested) {
  Fn tr = [](const Arrays& a) { return Arrays{lax::transpose(a[0], {1, 0})}; };
  check_nested("transpose", tr, {{{2, 3}}}, {1}, {2});
  Fn re = [](const Arrays& a) { return Arrays{lax::reshape(a[0], {6})}; };
  check_nested("reshape", re, {{{3, 2}}}, {2}, {0});
  Fn cat = [](const Arrays& a) { return Arrays{lax::concatenate(a, 0)}; };
  check_nested("concatenate", cat, {{{2}}, {{3}}}, {0, kNone}, {1, 0});
  Fn pad = [](const Arrays& a) { return Arrays{lax::pad(a[0], a[1], {{1, 1, 1}})}; };
  check_nested("pad", pad, {{{2}}, {{}}}, {1, 0}, {kNone, 0});
}

// Hand-derived: x = [[0, 1, 2], [3, 4, 5]] mapped over axis 1 (members [0, 3], [1, 4],
// [2, 5]).
TEST(VmapShape, HandValues) {
  Array x = jnp::array<int32_t>({0, 1, 2, 3, 4, 5}, {2, 3});
  auto rev = jx::vmap([](const Array& m) { return lax::rev(m, {0}); }, {.in_axes = 1});
  EXPECT_EQ(rev(x).to_vector<int32_t>(), (std::vector<int32_t>{3, 0, 4, 1, 5, 2}));
  auto pad = jx::vmap([](const Array& m, const Array& v) { return lax::pad(m, v, {{1, 0, 1}}); },
                      {.in_axes = {1, 0}});
  // member j: [v_j, m_j0, v_j, m_j1]
  EXPECT_EQ(pad(x, jnp::array<int32_t>({7, 8, 9})).to_vector<int32_t>(),
            (std::vector<int32_t>{7, 0, 7, 3, 8, 1, 8, 4, 9, 2, 9, 5}));
  auto cat = jx::vmap([](const Array& m, const Array& c) { return lax::concatenate({m, c}, 0); },
                      {.in_axes = {1, jx::none}, .out_axes = 1});
  EXPECT_EQ(cat(x, jnp::array<int32_t>({9})).to_vector<int32_t>(),
            (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 9, 9, 9}));
  auto bc = jx::vmap([](const Array& m) { return lax::broadcast_in_dim(m, {2, 2}, {1}); },
                     {.in_axes = 1});
  EXPECT_EQ(bc(x).to_vector<int32_t>(),
            (std::vector<int32_t>{0, 3, 0, 3, 1, 4, 1, 4, 2, 5, 2, 5}));
}

// Only reshape moves the batch dim (as in jax); rev, pad and broadcast_in_dim keep it where
// it is (mapped at 1, wanted at 1), so their jaxprs hold no transpose.
TEST(VmapShape, RulesMoveNoData) {
  Array x = jnp::zeros({2, 3, 4});
  auto jaxpr_of = [&](const Fn& f) {
    auto g = [&](const Array& a) {
      return jx::vmap([&](const Array& m) { return f({m})[0]; }, {.in_axes = 1, .out_axes = 1})(a);
    };
    std::ostringstream os;
    os << jx::make_jaxpr(g)(x);
    return os.str();
  };
  const std::string jrev = jaxpr_of([](const Arrays& a) { return Arrays{lax::rev(a[0], {1})}; });
  EXPECT_NE(jrev.find("rev[dimensions=(2,)]"), std::string::npos) << jrev;
  const std::string jpad = jaxpr_of([](const Arrays& a) {
    return Arrays{lax::pad(a[0], Array(0.0f), {{1, 0, 0}, {0, 1, 1}})};
  });
  EXPECT_NE(jpad.find("hi=(0, 0, 1) interior=(0, 0, 1) lo=(1, 0, 0)"), std::string::npos) << jpad;
  const std::string jbc = jaxpr_of([](const Arrays& a) {
    return Arrays{lax::broadcast_in_dim(a[0], {2, 5, 4}, {0, 2})};
  });
  EXPECT_NE(jbc.find("broadcast_dimensions=(0, 1, 3)"), std::string::npos) << jbc;
  const std::string jsq = jaxpr_of([](const Arrays& a) {
    return Arrays{lax::squeeze(lax::reshape(a[0], {2, 1, 4}), {1})};
  });
  for (const std::string& j : {jrev, jpad, jbc})
    EXPECT_EQ(j.find("transpose"), std::string::npos) << j;
  // reshape needs the batch dim in front: one transpose.
  EXPECT_NE(jsq.find("transpose"), std::string::npos) << jsq;
}

TEST(VmapShape, EveryRuleRegistered) {
  const std::set<std::string> families{"shape", "indexing", "dot"};
  std::set<std::string> ours;
  for (int i = 0; i < jx::ops::kNumPrims; ++i) {
    const PrimitiveInfo& p = jx::ops::info(jx::ops::Prim(i));
    if (families.count(p.family)) ours.insert(p.name);
  }
  EXPECT_EQ(ours.size(), 18u);
  for (const std::string& line : jx::ops::missing_rules({.batch = true})) {
    const std::string name = line.substr(0, line.find(':'));
    EXPECT_EQ(ours.count(name), 0u) << line;
  }
}

}  // namespace
