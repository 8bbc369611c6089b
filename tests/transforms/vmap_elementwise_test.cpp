// Batching rules of the elementwise families (unary, binary, convert_select, random, ad):
// vmap of each primitive against the loop over slices (vmap_oracle.h) for every dtype
// class it accepts, operands mapped along different axes or not at all, out_axes 0 and 1,
// batch sizes 0, 1 and 3; nested vmap; and the jaxpr of a vmapped function, which moves
// no batch dim that does not need moving (as JAX's).
#include <gtest/gtest.h>

#include <set>
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

constexpr DType f32 = DType::Float32, f64 = DType::Float64, f16 = DType::Float16,
                i8 = DType::Int8, i32 = DType::Int32, i64 = DType::Int64, u8 = DType::UInt8,
                u16 = DType::UInt16, u32 = DType::UInt32, b1 = DType::Bool;

struct Entry {
  std::string name;
  vo::Fn f;
  std::vector<std::vector<DType>> dtype_sets;  // one dtype per operand, per run
  std::vector<std::vector<Shape>> shape_sets;  // unbatched operand shapes, per run
};

void run(const Entry& e) {
  for (const auto& dts : e.dtype_sets)
    for (const auto& shapes : e.shape_sets)
      for (const vo::Case& c : vo::standard_cases(dts, shapes)) vo::check(e.f, c, e.name);
}

std::vector<std::vector<DType>> each(std::vector<DType> ts, size_t nargs) {
  std::vector<std::vector<DType>> out;
  for (DType t : ts) out.push_back(std::vector<DType>(nargs, t));
  return out;
}

const std::vector<std::vector<Shape>> kUnaryShapes = {{Shape{3, 4}}, {Shape{}}, {Shape{2, 1, 3}}};
const std::vector<std::vector<Shape>> kBinaryShapes = {
    {Shape{3, 4}, Shape{3, 4}}, {Shape{3, 1}, Shape{1, 4}}, {Shape{}, Shape{}}};

// ---- unary ----

TEST(VmapElementwise, UnaryFloatOps) {
  const Prim ops[] = {Prim::Floor, Prim::Ceil,  Prim::IsFinite, Prim::Exp,   Prim::Exp2,
                      Prim::Log,   Prim::Log1p, Prim::Expm1,    Prim::Tanh,  Prim::Logistic,
                      Prim::Sin,   Prim::Cos,   Prim::Tan,      Prim::Asin,  Prim::Acos,
                      Prim::Atan,  Prim::Sinh,  Prim::Cosh,     Prim::Asinh, Prim::Acosh,
                      Prim::Atanh, Prim::Sqrt,  Prim::Rsqrt,    Prim::Cbrt,  Prim::Lgamma,
                      Prim::Digamma, Prim::Erf, Prim::Erfc,     Prim::ErfInv};
  for (Prim p : ops)
    run({jx::ops::name(p), vo::prim_fn(p), each({f32, f64}, 1), kUnaryShapes});
  run({"exp f16", vo::prim_fn(Prim::Exp), each({f16}, 1), {{Shape{3, 4}}}});
}

TEST(VmapElementwise, UnaryNumericAndIntegerOps) {
  for (Prim p : {Prim::Neg, Prim::Sign, Prim::Square})
    run({jx::ops::name(p), vo::prim_fn(p), each({f32, i32, i8, u8}, 1), kUnaryShapes});
  run({"abs", vo::prim_fn(Prim::Abs), each({f32, i32, i8}, 1), kUnaryShapes});
  run({"not", vo::prim_fn(Prim::Not), each({b1, i32, u8}, 1), kUnaryShapes});
  for (Prim p : {Prim::PopulationCount, Prim::Clz})
    run({jx::ops::name(p), vo::prim_fn(p), each({i32, u16, i64}, 1), kUnaryShapes});
  run({"copy", vo::prim_fn(Prim::Copy), each({f32, b1, i64}, 1), kUnaryShapes});
  for (int64_t y : {3, 0, -2})
    run({jx::str("integer_pow y=", y),
         [y](const std::vector<Array>& a) { return std::vector<Array>{lax::integer_pow(a[0], y)}; },
         y < 0 ? each({f32, f64}, 1) : each({f32, i32, u8}, 1), kUnaryShapes});
  for (auto m : {lax::RoundingMethod::away_from_zero, lax::RoundingMethod::to_nearest_even})
    run({"round",
         [m](const std::vector<Array>& a) { return std::vector<Array>{lax::round(a[0], m)}; },
         each({f32, f64}, 1), kUnaryShapes});
  run({"stop_gradient", vo::prim_fn(Prim::StopGradient), each({f32, i32}, 1), kUnaryShapes});
}

// ---- binary ----

TEST(VmapElementwise, BinaryArithmetic) {
  for (Prim p : {Prim::Add, Prim::Sub, Prim::Mul, Prim::Div, Prim::Rem})
    run({jx::ops::name(p), vo::prim_fn(p), each({f32, f64, i32, u8}, 2), kBinaryShapes});
  for (Prim p : {Prim::Max, Prim::Min})
    run({jx::ops::name(p), vo::prim_fn(p), each({f32, i8, b1}, 2), kBinaryShapes});
  for (Prim p : {Prim::Pow, Prim::Atan2, Prim::Nextafter})
    run({jx::ops::name(p), vo::prim_fn(p), each({f32, f64}, 2), kBinaryShapes});
}

TEST(VmapElementwise, BinaryBitwiseAndComparisons) {
  for (Prim p : {Prim::And, Prim::Or, Prim::Xor})
    run({jx::ops::name(p), vo::prim_fn(p), each({b1, i32, u16}, 2), kBinaryShapes});
  for (Prim p : {Prim::ShiftLeft, Prim::ShiftRightArithmetic, Prim::ShiftRightLogical})
    run({jx::ops::name(p), vo::prim_fn(p), each({i32, u8, i64}, 2), kBinaryShapes});
  for (Prim p : {Prim::Eq, Prim::Ne, Prim::Lt, Prim::Le, Prim::Gt, Prim::Ge})
    run({jx::ops::name(p), vo::prim_fn(p), each({f32, i32, b1}, 2), kBinaryShapes});
}

// ---- casts, selection, random ----

TEST(VmapElementwise, ConvertElementType) {
  const std::pair<DType, DType> pairs[] = {{f32, i32}, {f32, b1}, {i32, f32}, {b1, f32},
                                           {f64, f32}, {f32, f16}, {u8, i8}, {f32, f32}};
  for (auto [from, to] : pairs)
    run({jx::str("convert_element_type ", jx::dtype_name(from), "->", jx::dtype_name(to)),
         [to = to](const std::vector<Array>& a) {
           return std::vector<Array>{lax::convert_element_type(a[0], to)};
         },
         {{from}}, kUnaryShapes});
}

TEST(VmapElementwise, BitcastConvertType) {
  auto bitcast = [](DType to) {
    return [to](const std::vector<Array>& a) {
      return std::vector<Array>{lax::bitcast_convert_type(a[0], to)};
    };
  };
  run({"bitcast f32->i32", bitcast(i32), {{f32}}, kUnaryShapes});
  // A wider source gains a trailing dim (here 4 bytes); a narrower one consumes its last
  // dim, which the rule must keep apart from the batch dim (in_axes -1 maps it there).
  run({"bitcast f32->u8", bitcast(u8), {{f32}}, kUnaryShapes});
  run({"bitcast u8->f32", bitcast(f32), {{u8}}, {{Shape{3, 4}}, {Shape{4}}}});
  run({"bitcast u16->i64", bitcast(i64), {{u16}}, {{Shape{2, 4}}}});
}

TEST(VmapElementwise, SelectN) {
  run({"select_n bool", vo::prim_fn(Prim::SelectN), {{b1, f32, f32}, {b1, i32, i32}},
       {{Shape{3, 4}, Shape{3, 4}, Shape{3, 4}},
        {Shape{}, Shape{3, 4}, Shape{3, 4}},     // a scalar which picks whole cases
        {Shape{3, 4}, Shape{}, Shape{3, 4}},     // a scalar case
        {Shape{3, 1}, Shape{1, 4}, Shape{3, 4}}, // size-1 broadcasting
        {Shape{}, Shape{}, Shape{}}}});
  // int32 which with three cases; out-of-range values clamp.
  run({"select_n int32", vo::prim_fn(Prim::SelectN), {{i32, f32, f32, f32}},
       {{Shape{3, 4}, Shape{3, 4}, Shape{3, 4}, Shape{3, 4}},
        {Shape{}, Shape{3, 4}, Shape{}, Shape{3, 4}}}});
}

TEST(VmapElementwise, Clamp) {
  run({"clamp", vo::prim_fn(Prim::Clamp), each({f32, i32, u8}, 3),
       {{Shape{}, Shape{3, 4}, Shape{}},
        {Shape{3, 4}, Shape{3, 4}, Shape{3, 4}},
        {Shape{3, 1}, Shape{3, 4}, Shape{}},
        {Shape{}, Shape{}, Shape{}}}});
}

TEST(VmapElementwise, Threefry2x32) {
  run({"threefry2x32", vo::prim_fn(Prim::Threefry2x32), each({u32}, 4),
       {{Shape{3, 4}, Shape{3, 4}, Shape{3, 4}, Shape{3, 4}},
        {Shape{1, 1}, Shape{1, 1}, Shape{3, 4}, Shape{3, 4}},
        {Shape{}, Shape{}, Shape{}, Shape{}}}});
}

TEST(VmapElementwise, OutAxesOneForEveryOperandLayout) {
  // out_axes 1 (not the last) of rank-2 results, for each way the operands are mapped.
  const vo::Fn f = vo::prim_fn(Prim::Mul);
  for (std::vector<int> in : {std::vector<int>{0, 0}, {1, 1}, {2, 2}, {0, 2}, {2, vo::kNone},
                              {vo::kNone, 1}})
    for (int64_t size : {3, 1, 0})
      vo::check(f, vo::Case{{f32, f32}, {Shape{3, 4}, Shape{3, 1}}, in, 1, size}, "mul");
  const vo::Fn s = vo::prim_fn(Prim::SelectN);
  for (std::vector<int> in : {std::vector<int>{0, 1, vo::kNone}, {vo::kNone, 2, 0}, {0, vo::kNone, vo::kNone}})
    vo::check(s, vo::Case{{b1, i32, i32}, {Shape{}, Shape{3, 4}, Shape{3, 4}}, in, 1, 3}, "select_n");
}

// ---- through the public API ----

TEST(VmapElementwise, PublicApiWithNegativeAndNoneAxes) {
  Array x = vo::make_input(f32, Shape{3, 5}, 1);  // mapped along its last axis (size 5)
  Array y = vo::make_input(f32, Shape{3}, 2);     // not mapped
  auto f = [](const Array& a, const Array& b) { return lax::mul(a, b); };
  Array got = jx::vmap(f, {.in_axes = {-1, jx::none}, .out_axes = 1})(x, y);
  // out[i, b] = x[i, b] * y[i]
  Array want = lax::mul(x, lax::reshape(y, Shape{3, 1}));
  vo::expect_same(got, want, "vmap(mul, in_axes=(-1, none), out_axes=1)");
}

TEST(VmapElementwise, NestedVmapKeepsBatchDims) {
  Array a = vo::make_input(f64, Shape{4, 2, 3}, 1);
  Array b = vo::make_input(f64, Shape{4, 2, 3}, 2);
  auto f = [](const Array& x, const Array& y) { return lax::atan2(lax::sin(x), y); };
  auto inner = jx::vmap(f, {.in_axes = 0});
  auto outer = jx::vmap(inner, {.in_axes = 1});
  // outer maps axis 1 (size 2); inner maps axis 0 of the slices (size 4).
  Array got = outer(a, b);
  Array want = lax::transpose(lax::atan2(lax::sin(a), b), {1, 0, 2});
  vo::expect_same(got, want, "vmap(vmap(atan2(sin x, y)))");
  // vmap of vmap of a cast and a comparison, batched at the last axis twice.
  auto g = [](const Array& x, const Array& y) {
    return lax::convert_element_type(lax::lt(x, y), DType::Int32);
  };
  Array got2 = jx::vmap(jx::vmap(g, {.in_axes = -1, .out_axes = -1}), {.in_axes = -1, .out_axes = -1})(a, b);
  vo::expect_same(got2, lax::convert_element_type(lax::lt(a, b), DType::Int32),
                  "vmap(vmap(lt), in_axes=-1, out_axes=-1)");
}

TEST(VmapElementwise, NestedVmapWithUnmappedOperand) {
  if (!jx::ops::info(Prim::Reshape).batch)
    GTEST_SKIP() << "needs reshape's batching rule (shape family)";
  Array a = vo::make_input(f32, Shape{2, 4, 3}, 1);
  Array c = vo::make_input(f32, Shape{3}, 2);
  auto f = [](const Array& x, const Array& y) { return lax::sub(x, y); };
  // The inner vmap reshapes c (unmapped there) while the outer trace is current.
  auto inner = jx::vmap(f, {.in_axes = {0, jx::none}});
  Array got = jx::vmap(inner, {.in_axes = {0, jx::none}})(a, c);
  vo::expect_same(got, lax::sub(a, lax::reshape(c, Shape{1, 1, 3})), "vmap(vmap(sub x, c))");
}

// ---- the jaxpr of a vmapped function ----

TEST(VmapElementwise, JaxprMovesNoBatchDimNeedlessly) {
  // Both operands batched along axis 1: the add runs where they are, no transpose.
  auto f = [](const Array& x, const Array& y) { return lax::add(lax::exp(x), y); };
  Array x = jnp::zeros(Shape{3, 2}), y = jnp::zeros(Shape{3, 2});
  auto vf = jx::vmap(f, {.in_axes = 1, .out_axes = 1});
  EXPECT_EQ(jx::make_jaxpr(vf)(x, y).str(),
            "{ lambda ; a:f32[3,2] b:f32[3,2]. let\n"
            "    c:f32[3,2] = exp a\n"
            "    d:f32[3,2] = add c b\n"
            "  in (d,) }");
  // An unmapped operand only gains a size-1 dim (a reshape) where the batch dim is.
  Array z = jnp::zeros(Shape{3});
  auto vg = jx::vmap(f, {.in_axes = {1, jx::none}, .out_axes = 1});
  EXPECT_EQ(jx::make_jaxpr(vg)(x, z).str(),
            "{ lambda ; a:f32[3,2] b:f32[3]. let\n"
            "    c:f32[3,2] = exp a\n"
            "    d:f32[3,1] = reshape[dimensions=() new_sizes=(3, 1)] b\n"
            "    e:f32[3,2] = add c d\n"
            "  in (e,) }");
}

// ---- registry ----

TEST(VmapElementwise, EveryPrimitiveOfTheseFamiliesHasABatchingRule) {
  const std::set<std::string> families = {"unary", "binary", "convert_select", "reduce",
                                          "cumulative_sort", "random", "ad", "special"};
  std::set<std::string> mine;
  for (int i = 0; i < jx::ops::kNumPrims; ++i) {
    const auto& pi = jx::ops::info(Prim(i));
    if (families.count(pi.family)) mine.insert(pi.name);
  }
  EXPECT_GE(mine.size(), 80u);
  std::string missing;
  for (const std::string& m : jx::ops::missing_rules({.batch = true}))
    if (mine.count(m.substr(0, m.find(':')))) missing += m + "\n";
  EXPECT_EQ(missing, "");
}

}  // namespace
