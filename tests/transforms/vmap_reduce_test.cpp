// Batching rules of the reduce and cumulative_sort families: vmap of each primitive
// against the loop over slices (vmap_oracle.h), with the batch dim before, between and
// after the reduced/scanned axes, out_axes 0 and 1, batch sizes 0, 1 and 3; sort with
// several operands some of which are unmapped; nested vmap; the jaxpr of a vmapped
// reduction (the axes shifted, no transpose).
#include <gtest/gtest.h>

#include <string>

#include "jx/jx.h"
#include "jx/transforms.h"
#include "jx/vmap.h"
#include "ops/primitive.h"
#include "transforms/vmap_oracle.h"

namespace {

namespace lax = jx::lax;
namespace jnp = jx::numpy;
namespace vo = jx::testing::vmap_oracle;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::ops::Prim;

constexpr DType f32 = DType::Float32, f64 = DType::Float64, i32 = DType::Int32,
                i64 = DType::Int64, u8 = DType::UInt8, b1 = DType::Bool;

// Every configuration of standard_cases for a single operand, plus the operand mapped at
// each of its batched axes with out_axes 0, -1 and (for results of rank >= 1) 1.
void run_unary(const std::string& name, const vo::Fn& f, DType dt, const Shape& shape,
               bool rank0_result = false) {
  for (const vo::Case& c : vo::standard_cases({dt}, {shape})) vo::check(f, c, name);
  for (int in = 0; in <= int(shape.size()); ++in)
    for (int out : {0, 1, -1})
      if (out != 1 || !rank0_result) vo::check(f, vo::Case{{dt}, {shape}, {in}, out, 3}, name);
}

vo::Fn reduction(Prim p, std::vector<int64_t> axes) {
  return [p, axes](const std::vector<Array>& a) {
    jx::ops::Params params{{"axes", axes}};
    return jx::bind(p, a, params);
  };
}

TEST(VmapReduce, Reductions) {
  const std::vector<std::vector<int64_t>> axes_sets = {{0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}, {}};
  struct R {
    Prim p;
    std::vector<DType> dtypes;
  };
  const R rs[] = {{Prim::ReduceSum, {f32, i32}}, {Prim::ReduceProd, {f64, i32}},
                  {Prim::ReduceMax, {f32, u8}},  {Prim::ReduceMin, {f64, b1}},
                  {Prim::ReduceAnd, {b1, i32}},  {Prim::ReduceOr, {b1, u8}},
                  {Prim::ReduceXor, {b1, i64}}};
  for (const R& r : rs)
    for (DType dt : r.dtypes)
      for (const auto& axes : axes_sets)
        run_unary(jx::str(jx::ops::name(r.p), " axes=", jx::list_str(axes)), reduction(r.p, axes),
                  dt, Shape{2, 3, 4}, axes.size() == 3);
  // A rank-1 operand reduced to a scalar (the batched output is rank 1).
  run_unary("reduce_sum rank 1", reduction(Prim::ReduceSum, {0}), f32, Shape{5}, true);
}

TEST(VmapReduce, Argmax) {
  for (int64_t axis : {0, 1, 2})
    for (DType idx : {DType::Int32, DType::Int64}) {
      auto amax = [axis, idx](const std::vector<Array>& a) {
        return std::vector<Array>{lax::argmax(a[0], axis, idx)};
      };
      auto amin = [axis, idx](const std::vector<Array>& a) {
        return std::vector<Array>{lax::argmin(a[0], axis, idx)};
      };
      // Coarse values (make_input) give ties: the first index must win in every slice.
      for (DType dt : {f32, i32}) {
        run_unary(jx::str("argmax axis=", axis), amax, dt, Shape{2, 3, 4});
        run_unary(jx::str("argmin axis=", axis), amin, dt, Shape{2, 3, 4});
      }
    }
}

TEST(VmapReduce, Cumulative) {
  using Cum = Array (*)(const Array&, int64_t, bool);
  const std::pair<const char*, Cum> ops[] = {{"cumsum", lax::cumsum},
                                             {"cumprod", lax::cumprod},
                                             {"cummax", lax::cummax},
                                             {"cummin", lax::cummin},
                                             {"cumlogsumexp", lax::cumlogsumexp}};
  for (auto [name, op] : ops)
    for (int64_t axis : {0, 1})
      for (bool reverse : {false, true}) {
        auto f = [op = op, axis, reverse](const std::vector<Array>& a) {
          return std::vector<Array>{op(a[0], axis, reverse)};
        };
        const std::string n = jx::str(name, " axis=", axis, " reverse=", reverse);
        run_unary(n, f, f64, Shape{3, 4});
        if (std::string(name) != "cumlogsumexp") run_unary(n, f, i32, Shape{3, 4});
      }
}

TEST(VmapReduce, SortOneOperand) {
  for (int64_t dim : {0, 1})
    for (DType dt : {f32, i32, b1}) {
      auto f = [dim](const std::vector<Array>& a) {
        return lax::sort(std::vector<Array>{a[0]}, dim, true, 1);
      };
      run_unary(jx::str("sort dimension=", dim), f, dt, Shape{4, 5});
    }
}

TEST(VmapReduce, SortSeveralOperands) {
  // Keys with ties (coarse values), a second key, and a payload: stable sorting makes the
  // permutation unique. Unmapped operands are broadcast along the batch before sorting.
  for (int64_t dim : {0, 1})
    for (int64_t num_keys : {1, 2}) {
      auto f = [dim, num_keys](const std::vector<Array>& a) {
        return lax::sort(a, dim, true, num_keys);
      };
      for (const vo::Case& c : vo::standard_cases({i32, f32, u8}, {Shape{4, 5}, Shape{4, 5}, Shape{4, 5}}))
        vo::check(f, c, jx::str("sort 3 operands dimension=", dim, " num_keys=", num_keys));
    }
}

TEST(VmapReduce, NestedVmapOfAReduction) {
  Array x = vo::make_input(f64, Shape{2, 3, 4}, 5);
  auto f = [](const Array& v) { return lax::reduce_max(v, {0}); };
  // The outer vmap maps axis 2 (size 4), the inner one axis 0 of each [2, 3] slice: the
  // function reduces what is left, axis 1 of x.
  Array got = jx::vmap(jx::vmap(f, {.in_axes = 0}), {.in_axes = 2})(x);
  vo::expect_same(got, lax::transpose(lax::reduce_max(x, {1}), {1, 0}), "vmap(vmap(reduce_max))");
  // Outer over axis 0, inner over axis 1 of the [3, 4] slices (and back to 1): the scan
  // runs along x's axis 1.
  auto g = [](const Array& v) { return lax::cumsum(v, 0, true); };
  Array got2 = jx::vmap(jx::vmap(g, {.in_axes = 1, .out_axes = 1}), {.in_axes = 0})(x);
  vo::expect_same(got2, lax::cumsum(x, 1, true), "vmap(vmap(cumsum))");
}

TEST(VmapReduce, JaxprShiftsAxesWithoutTransposes) {
  auto f = [](const Array& v) { return lax::reduce_sum(v, {0, 1}); };
  Array x = jnp::zeros(Shape{2, 5, 3});
  EXPECT_EQ(jx::make_jaxpr(jx::vmap(f, {.in_axes = 1}))(x).str(),
            "{ lambda ; a:f32[2,5,3]. let b:f32[5] = reduce_sum[axes=(0, 2)] a in (b,) }");
  auto g = [](const Array& v) { return lax::argmax(v, 1, DType::Int32); };
  EXPECT_EQ(jx::make_jaxpr(jx::vmap(g, {.in_axes = 2, .out_axes = 1}))(x).str(),
            "{ lambda ; a:f32[2,5,3]. let\n"
            "    b:i32[2,3] = argmax[axes=(1,) index_dtype=int32] a\n"
            "  in (b,) }");
}

}  // namespace
