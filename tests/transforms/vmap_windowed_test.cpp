// Batching rules of the windowed family: vmap of each primitive against the loop over
// slices (vmap_oracle.h), with the batch dim first, between and last, out_axes 0 and -1,
// batch sizes 0, 1 and 3, one of two operands unmapped; nested vmap; vmap of the grad of
// a max pool; the jaxpr of a vmapped pooling (the batch dim gets window 1, no transpose).
#include <gtest/gtest.h>

#include <limits>

#include "jx/jx.h"
#include "jx/transforms.h"
#include "jx/vmap.h"
#include "transforms/vmap_oracle.h"

namespace {

namespace lax = jx::lax;
namespace jnp = jx::numpy;
namespace vo = jx::testing::vmap_oracle;
using jx::Array;
using jx::DType;
using jx::Shape;
using Pairs = lax::Padding::Pairs;
using I = std::vector<int64_t>;

const I kW{2, 3}, kS{2, 1};
const Pairs kP{{1, 0}, {1, 1}};
const Shape kIn{5, 4}, kOut{3, 4};  // windows of kIn

void run(const std::string& name, const vo::Fn& f, const std::vector<DType>& dts, const std::vector<Shape>& shapes) {
  for (const vo::Case& c : vo::standard_cases(dts, shapes)) vo::check(f, c, name);
}

TEST(VmapWindowed, ReduceWindowSumMaxMin) {
  for (DType dt : {DType::Float32, DType::Float64, DType::Int32}) {
    run("reduce_window_sum", [](const std::vector<Array>& a) {
      return std::vector<Array>{lax::reduce_window_sum(a[0], kW, kS, kP, {2, 1}, {1, 2})};
    }, {dt}, {kIn});
    run("reduce_window_max", [](const std::vector<Array>& a) {
      return std::vector<Array>{lax::reduce_window_max(a[0], kW, kS, kP)};
    }, {dt}, {kIn});
    run("reduce_window_min", [](const std::vector<Array>& a) {
      return std::vector<Array>{lax::reduce_window_min(a[0], kW, kS, kP, {1, 2})};
    }, {dt}, {kIn});
  }
  // Every batch position of a rank-3 operand.
  for (int in = 0; in <= 3; ++in)
    vo::check([](const std::vector<Array>& a) {
      return std::vector<Array>{lax::reduce_window_max(a[0], {2, 1, 2}, {1, 1, 2}, "SAME")};
    }, vo::Case{{DType::Float32}, {{3, 2, 5}}, {in}, 1, 3}, "reduce_window_max rank 3");
}

TEST(VmapWindowed, GenericReduceWindow) {
  auto f = [](const std::vector<Array>& a) {
    return std::vector<Array>{lax::reduce_window(a[0], Array(1.0), [](const Array& u, const Array& v) {
      return lax::mul(u, v);
    }, kW, kS, kP)};
  };
  run("reduce_window (mul)", f, {DType::Float64}, {kIn});
}

TEST(VmapWindowed, SelectAndScatterAddAndGatherAdd) {
  for (auto sel : {lax::WindowSelect::ge, lax::WindowSelect::le}) {
    run("select_and_scatter_add", [sel](const std::vector<Array>& a) {
      return std::vector<Array>{lax::select_and_scatter_add(a[0], a[1], sel, kW, kS, kP)};
    }, {DType::Float32, DType::Float32}, {kOut, kIn});
    run("select_and_gather_add", [sel](const std::vector<Array>& a) {
      return std::vector<Array>{lax::select_and_gather_add(a[0], a[1], sel, kW, kS, kP, {1, 2}, {2, 1})};
    }, {DType::Float64, DType::Float64}, {kIn, kIn});
  }
}

TEST(VmapWindowed, NestedAndGradOfMaxPool) {
  auto pool = [](const Array& x) { return lax::reduce_window_max(x, {2, 2}, {2, 2}, "VALID"); };
  Array xs = vo::make_input(DType::Float32, {2, 3, 4, 6}, 4);
  Array got = jx::vmap(jx::vmap(pool))(xs);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(got(i)(j).to_vector<float>(), pool(xs(i)(j)).to_vector<float>());
  auto loss = [&](const Array& x) { return jnp::sum(pool(x) * pool(x)); };
  Array gv = jx::vmap(jx::grad(loss))(xs(0));
  for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(gv(j).to_vector<float>(), jx::grad(loss)(xs(0)(j)).to_vector<float>());
}

TEST(VmapWindowed, JaxprKeepsTheBatchDimInPlace) {
  // jax's _reduce_window_batch_rule: window 1 and stride 1 at the batch dim, no moves.
  auto pool = [](const Array& x) { return lax::reduce_window_max(x, {2, 2}, {2, 2}, "VALID"); };
  Array xs = jnp::zeros({4, 6, 3});
  EXPECT_EQ(jx::make_jaxpr(jx::vmap(pool, {.in_axes = {2}, .out_axes = 2}))(xs).str(),
            "{ lambda ; a:f32[4,6,3]. let\n"
            "    b:f32[2,3,3] = reduce_window_max[\n"
            "      base_dilation=(1, 1, 1)\n"
            "      padding=((0, 0), (0, 0), (0, 0))\n"
            "      window_dilation=(1, 1, 1)\n"
            "      window_dimensions=(2, 2, 1)\n"
            "      window_strides=(2, 2, 1)\n"
            "    ] a\n"
            "  in (b,) }");
}

}  // namespace
