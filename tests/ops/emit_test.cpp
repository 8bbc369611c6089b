// Code-generation (emit) rules of the elementwise families: the expressions for a table of
// primitives and dtypes, the cases that must stay library calls (empty string), and that
// every Elementwise primitive of these families has a rule or is a listed exception.
// (The compiler's tests compile the expressions and compare them with eager.)
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "ops/emit_prelude.h"
#include "ops/primitive.h"

namespace {

using jx::DType;
using jx::Shape;
using jx::ops::Aval;
using jx::ops::Params;
using jx::ops::Prim;

std::string emit(Prim p, std::vector<DType> dtypes, const Params& params = {}) {
  const auto& pi = jx::ops::info(p);
  EXPECT_NE(pi.emit, nullptr) << pi.name;
  if (!pi.emit) return "<none>";
  std::vector<std::string> args;
  std::vector<Aval> in;
  const char* names[] = {"a", "b", "c", "d", "e"};
  for (size_t i = 0; i < dtypes.size(); ++i) {
    args.push_back(names[i]);
    in.push_back(Aval{Shape{4}, dtypes[i], false});
  }
  return pi.emit(args, in, params);
}

constexpr DType f32 = DType::Float32, f64 = DType::Float64, f16 = DType::Float16,
                bf16 = DType::BFloat16, i8 = DType::Int8, i16 = DType::Int16,
                i32 = DType::Int32, i64 = DType::Int64, u8 = DType::UInt8, u32 = DType::UInt32,
                b1 = DType::Bool;

TEST(Emit, CTypes) {
  EXPECT_STREQ(jx::ops::c_type(f32), "float");
  EXPECT_STREQ(jx::ops::c_type(f64), "double");
  EXPECT_STREQ(jx::ops::c_type(i16), "int16_t");
  EXPECT_STREQ(jx::ops::c_type(u32), "uint32_t");
  EXPECT_STREQ(jx::ops::c_type(b1), "bool");
  EXPECT_EQ(jx::ops::c_type(f16), nullptr);
  EXPECT_EQ(jx::ops::c_type(bf16), nullptr);
}

TEST(Emit, Unary) {
  EXPECT_EQ(emit(Prim::Exp, {f32}), "std::exp(a)");
  EXPECT_EQ(emit(Prim::Log1p, {f64}), "std::log1p(a)");
  EXPECT_EQ(emit(Prim::Neg, {f32}), "(-(a))");
  // Integer negation wraps (-INT_MIN == INT_MIN) without signed-overflow UB.
  EXPECT_EQ(emit(Prim::Neg, {i8}), "((int8_t)(uint64_t(0) - (uint64_t)(a)))");
  EXPECT_EQ(emit(Prim::Logistic, {f32}), "jx_logistic(a)");
  EXPECT_EQ(emit(Prim::Rsqrt, {f32}), "((float)1 / std::sqrt(a))");
  EXPECT_EQ(emit(Prim::Abs, {f64}), "std::fabs(a)");
  EXPECT_EQ(emit(Prim::Abs, {i32}), "jx_abs(a)");
  EXPECT_EQ(emit(Prim::IsFinite, {f32}), "((bool)std::isfinite(a))");
  EXPECT_EQ(emit(Prim::Round, {f32}, Params{{"rounding_method", int64_t(0)}}), "jx_round_away(a)");
  EXPECT_EQ(emit(Prim::Round, {f32}, Params{{"rounding_method", int64_t(1)}}), "jx_round_even(a)");
  EXPECT_EQ(emit(Prim::IntegerPow, {f64}, Params{{"y", int64_t(-3)}}), "jx_ipow_c<-3>(a)");
  EXPECT_EQ(emit(Prim::Square, {i32}), "jx_ipow_c<2>(a)");
  EXPECT_EQ(emit(Prim::Not, {b1}), "(!(a))");
  EXPECT_EQ(emit(Prim::Not, {u8}), "((uint8_t)~(a))");
  EXPECT_EQ(emit(Prim::Clz, {i64}), "jx_clz(a)");
  EXPECT_EQ(emit(Prim::Copy, {b1}), "(a)");
  EXPECT_EQ(emit(Prim::StopGradient, {f32}), "(a)");
}

TEST(Emit, Binary) {
  EXPECT_EQ(emit(Prim::Add, {f32, f32}), "((a) + (b))");
  EXPECT_EQ(emit(Prim::Mul, {i16, i16}), "((int16_t)((uint64_t)(a) * (uint64_t)(b)))");
  EXPECT_EQ(emit(Prim::Div, {f64, f64}), "((a) / (b))");
  EXPECT_EQ(emit(Prim::Div, {i32, i32}), "jx_div(a, b)");
  EXPECT_EQ(emit(Prim::Rem, {f32, f32}), "jx_rem(a, b)");
  EXPECT_EQ(emit(Prim::Pow, {f32, f32}), "std::pow(a, b)");
  EXPECT_EQ(emit(Prim::Max, {f32, f32}), "jx_max(a, b)");
  EXPECT_EQ(emit(Prim::And, {b1, b1}), "((bool)((a) & (b)))");
  EXPECT_EQ(emit(Prim::ShiftRightLogical, {i32, i32}), "jx_shift_right_logical(a, b)");
  EXPECT_EQ(emit(Prim::Lt, {u8, u8}), "((a) < (b))");
  EXPECT_EQ(emit(Prim::Nextafter, {f64, f64}), "jx_nextafter(a, b)");
}

TEST(Emit, CastsAndSelection) {
  auto to = [](DType t) { return Params{{"new_dtype", t}, {"weak_type", false}}; };
  EXPECT_EQ(emit(Prim::ConvertElementType, {f32}, to(i32)), "jx_convert<int32_t>(a)");
  EXPECT_EQ(emit(Prim::ConvertElementType, {i64}, to(b1)), "jx_convert<bool>(a)");
  EXPECT_EQ(emit(Prim::ConvertElementType, {f32}, to(f32)), "(a)");
  EXPECT_EQ(emit(Prim::BitcastConvertType, {f32}, Params{{"new_dtype", u32}}), "jx_bitcast<uint32_t>(a)");
  EXPECT_EQ(emit(Prim::SelectN, {b1, f32, f32}), "((a) ? (c) : (b))");
  EXPECT_EQ(emit(Prim::SelectN, {i32, f32, f32}), "((a) > 0 ? (c) : (b))");
  EXPECT_EQ(emit(Prim::SelectN, {i32, i8, i8, i8}), "jx_select_n(a, b, c, d)");
  EXPECT_EQ(emit(Prim::SelectN, {b1, f64}), "(b)");
  EXPECT_EQ(emit(Prim::Clamp, {f32, f32, f32}), "jx_clamp(a, b, c)");
}

TEST(Emit, LibraryCallsWhereAnExpressionWouldNotMatchTheKernel) {
  // Half types have no C type in generated code.
  EXPECT_EQ(emit(Prim::Exp, {f16}), "");
  EXPECT_EQ(emit(Prim::Add, {bf16, bf16}), "");
  EXPECT_EQ(emit(Prim::ConvertElementType, {f32}, Params{{"new_dtype", f16}, {"weak_type", false}}), "");
  EXPECT_EQ(emit(Prim::SelectN, {b1, f16, f16}), "");
  // jx's own approximations (vmath.h), not libm's.
  EXPECT_EQ(emit(Prim::Lgamma, {f32}), "");
  EXPECT_EQ(emit(Prim::Digamma, {f64}), "");
  EXPECT_EQ(emit(Prim::ErfInv, {f32}), "");
  // The special functions are per-element loops (backend/cpu/special_math.h): library calls.
  EXPECT_EQ(emit(Prim::Igamma, {f32, f32}), "");
  EXPECT_EQ(emit(Prim::BesselI1e, {f64}), "");
  // A bitcast that changes the element size maps one element to several.
  EXPECT_EQ(emit(Prim::BitcastConvertType, {f32}, Params{{"new_dtype", u8}}), "");
}

TEST(Emit, EveryElementwisePrimitiveOfTheseFamiliesHasARule) {
  const std::set<std::string> families = {"unary", "binary", "convert_select", "random", "ad",
                                          "special"};
  // threefry2x32 has two outputs: not one expression, so generated code calls the kernel.
  const std::set<std::string> exceptions = {"threefry2x32"};
  int checked = 0;
  for (int i = 0; i < jx::ops::kNumPrims; ++i) {
    const auto& pi = jx::ops::info(Prim(i));
    if (!families.count(pi.family) || pi.fusion != jx::ops::FusionKind::Elementwise) continue;
    ++checked;
    EXPECT_EQ(pi.emit != nullptr, !exceptions.count(pi.name)) << pi.name;
  }
  EXPECT_GE(checked, 60);
}

TEST(Emit, PreludeDefinesEveryHelperTheRulesCall) {
  const std::string prelude = jx::ops::kEmitPrelude;
  for (const char* h : {"jx_logistic", "jx_sign", "jx_round_even", "jx_round_away", "jx_floor",
                        "jx_ceil", "jx_rem", "jx_div", "jx_nextafter", "jx_popcount", "jx_clz",
                        "jx_max", "jx_min", "jx_clamp", "jx_abs", "jx_ipow", "jx_ipow_c", "jx_shift_left",
                        "jx_shift_right_logical", "jx_shift_right_arithmetic", "jx_select_n",
                        "jx_convert", "jx_bitcast"})
    EXPECT_TRUE(std::regex_search(prelude, std::regex(std::string("static inline \\w+ ") + h + "\\(")))
        << h;
}

}  // namespace
