// shard_map over 1-D and 2-D meshes: blocks and assembled results against hand-computed
// values, equality with pmap on a 1-D mesh, data-parallel gradients, collectives within
// one mesh axis of a 2-D mesh, grad and jit through shard_map, errors.
#include <gtest/gtest.h>

#include "jx/jx.h"
#include "jx/shard_map.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::P;

class ShardMap : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { jx::set_cpu_device_count(6); }
};

std::vector<float> values(const Array& a) { return a.astype(jx::float32).to_vector<float>(); }

Array iota(jx::Shape s) { return jnp::reshape(jnp::arange(s.numel()).astype(jx::float32), s); }

TEST_F(ShardMap, OneDimensionalMeshEqualsPmap) {
  jx::Mesh mesh = jx::make_mesh({3}, {"x"});
  EXPECT_EQ(mesh.str(), "Mesh('x': 3)");
  Array x = iota({6, 2});
  auto f = [](const Array& b) { return jnp::sin(b) * 2.0f + lax::psum(b, "x"); };
  Array sharded = jx::shard_map(f, {.mesh = mesh, .in_specs = {P("x")}, .out_specs = {P("x")}})(x);
  Array mapped = jx::pmap(f, {.axis_name = "x"})(jnp::reshape(x, {3, 2, 2}));
  EXPECT_EQ(sharded.shape(), (jx::Shape{6, 2}));
  EXPECT_EQ(values(sharded), values(jnp::reshape(mapped, {6, 2})));
  // The psum of the blocks: rows r and r + 2 and r + 4 added.
  Array block_sum = jx::shard_map([](const Array& b) { return lax::psum(b, "x"); },
                                  {.mesh = mesh, .in_specs = {P("x")}, .out_specs = {P()}})(x);
  EXPECT_EQ(values(block_sum), (std::vector<float>{0 + 4 + 8, 1 + 5 + 9, 2 + 6 + 10, 3 + 7 + 11}));
}

Array loss(const Array& w, const Array& x, const Array& y) { return jnp::mean(jnp::square(jnp::matmul(x, w) - y)); }

TEST_F(ShardMap, DataParallelGradientsEqualOneDevice) {
  jx::Mesh mesh = jx::make_mesh({3}, {"batch"});
  Array w = jnp::reshape(jnp::arange(6).astype(jx::float32) * 0.2f - 0.5f, {3, 2});
  Array x = jnp::sin(iota({6, 3}));
  Array y = jnp::cos(iota({6, 2}));
  auto step = jx::shard_map(
      [](const Array& w, const Array& xb, const Array& yb) { return lax::pmean(jx::grad(loss)(w, xb, yb), "batch"); },
      {.mesh = mesh, .in_specs = {P(), P("batch"), P("batch")}, .out_specs = {P()}});
  EXPECT_TRUE(jnp::allclose(step(w, x, y), jx::grad(loss)(w, x, y), 1e-5, 1e-7).item<bool>());
}

TEST_F(ShardMap, TwoDimensionalMeshRunsCollectivesWithinOneAxis) {
  jx::Mesh mesh = jx::make_mesh({2, 3}, {"a", "b"});
  Array x = iota({4, 6});
  // Each device holds a [2, 2] block; psum over "b" adds the three column blocks of a row
  // block, the same on the three devices of that row: replicated along "b".
  Array rows = jx::shard_map([](const Array& blk) { return lax::psum(blk, "b"); },
                             {.mesh = mesh, .in_specs = {P("a", "b")}, .out_specs = {P("a")}})(x);
  std::vector<float> want;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 2; ++c) want.push_back(float((r * 6 + c) + (r * 6 + 2 + c) + (r * 6 + 4 + c)));
  EXPECT_EQ(rows.shape(), (jx::Shape{4, 2}));
  EXPECT_EQ(values(rows), want);
  // Mesh indices of each block, through a dim split over both axes ("a" major).
  Array ids = jx::shard_map(
      [](const Array& blk) {
        return blk * 0.0f + (lax::axis_index("a") * 10 + lax::axis_index("b")).astype(jx::float32);
      },
      {.mesh = mesh, .in_specs = {P(P::Entry{"a", "b"})}, .out_specs = {P(P::Entry{"a", "b"})}})(iota({12}));
  EXPECT_EQ(values(ids), (std::vector<float>{0, 0, 1, 1, 2, 2, 10, 10, 11, 11, 12, 12}));
  // The same under jit (nested vmaps with the mesh axis names).
  Array rows_jit = jx::jit([&](const Array& v) {
    return jx::shard_map([](const Array& blk) { return lax::psum(blk, "b"); },
                         {.mesh = mesh, .in_specs = {P("a", "b")}, .out_specs = {P("a")}})(v);
  })(x);
  EXPECT_EQ(values(rows_jit), want);
}

TEST_F(ShardMap, GradThroughShardMapEqualsOneDevice) {
  jx::Mesh mesh = jx::make_mesh({2}, {"x"});
  Array xs = jnp::cos(iota({4, 3}));
  auto total = [&](const Array& w) {
    return jx::shard_map([](const Array& w, const Array& xb) { return lax::psum(jnp::sin(xb * w).sum(), "x"); },
                         {.mesh = mesh, .in_specs = {P(), P("x")}, .out_specs = {P()}})(w, xs);
  };
  auto single = [&](const Array& w) { return jnp::sin(xs * w).sum(); };
  Array w = jnp::arange(3).astype(jx::float32) * 0.5f;
  EXPECT_NEAR(total(w).item<float>(), single(w).item<float>(), 1e-5);
  EXPECT_TRUE(jnp::allclose(jx::grad(total)(w), jx::grad(single)(w), 1e-5, 1e-6).item<bool>());
}

TEST_F(ShardMap, ErrorsNameTheSpecAndTheMesh) {
  jx::Mesh mesh = jx::make_mesh({2}, {"x"});
  auto id = [](const Array& b) { return b; };
  EXPECT_THROW(jx::make_mesh({4, 2}, {"a", "b"}), jx::ValueError);  // 8 devices > 6
  try {
    jx::shard_map(id, {.mesh = mesh, .in_specs = {P("y")}, .out_specs = {P("x")}})(iota({4}));
    FAIL();
  } catch (const jx::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("names 'y', which is not an axis of Mesh('x': 2)"), std::string::npos)
        << e.what();
  }
  try {
    jx::shard_map(id, {.mesh = mesh, .in_specs = {P("x")}, .out_specs = {P("x")}})(iota({5}));
    FAIL();
  } catch (const jx::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("does not split into 2 equal blocks"), std::string::npos) << e.what();
  }
}

}  // namespace
