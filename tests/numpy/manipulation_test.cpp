// jnp manipulation against NumPy goldens (tests/golden/gen_manipulation.py), plus dtype
// promotion, Array methods and error cases by type and message.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "jx/lax.h"
#include "jx/numpy.h"
#include "testing/expect_error.h"
#include "testing/golden.h"

namespace {

using jx::Array;
using jx::DType;
using jx::Shape;
namespace jnp = jx::numpy;
namespace lax = jx::lax;

const std::vector<jx::testing::NamedGolden> kGoldens = {
#include "golden/manipulation_golden.inc"
};

void expect_golden(const std::string& name, const Array& x, double tol = 0) {
  jx::testing::expect_named_golden(kGoldens, name, x, tol);
}

void expect_goldens(const std::string& name, const std::vector<Array>& xs) {
  for (size_t k = 0; k < xs.size(); ++k) expect_golden(name + "_" + std::to_string(k), xs[k]);
  const std::string next = name + "_" + std::to_string(xs.size());
  for (const auto& c : kGoldens) EXPECT_NE(next, c.name) << "too few parts for " << name;
}

// val(i) = ((7 i) mod 11 - 5) / 2, as the generator.
Array val(Shape s) {
  std::vector<float> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float((int64_t(7 * i) % 11) - 5) / 2.0f;
  return jnp::array(v, s);
}
const Array A = val({2, 3, 4});
const Array B = val({4, 6});
const Array V = val({7});
const Array S = val({1, 3, 1});

using jx::testing::expect_error;

TEST(Manipulation, ShapesAndAxes) {
  expect_golden("reshape_a_4_m1", jnp::reshape(A, {4, -1}));
  expect_golden("ravel_a", jnp::ravel(A));
  expect_golden("transpose_a", jnp::transpose(A));
  expect_golden("transpose_a_102", jnp::transpose(A, {1, 0, 2}));
  expect_golden("transpose_a_102", jnp::permute_dims(A, {1, 0, -1}));
  expect_golden("swapaxes_a_0_2", jnp::swapaxes(A, 0, 2));
  expect_golden("moveaxis_a_0_m1", jnp::moveaxis(A, 0, -1));
  expect_golden("moveaxis_a_01_m1m2", jnp::moveaxis(A, {0, 1}, {-1, -2}));
  expect_golden("expand_dims_a_0_3", jnp::expand_dims(A, {0, 3}));
  expect_golden("squeeze_s", jnp::squeeze(S));
  expect_golden("squeeze_s_2", jnp::squeeze(S, 2));
  expect_golden("matrix_transpose_a", jnp::matrix_transpose(A));
  expect_golden("broadcast_to_v", jnp::broadcast_to(V, {2, 7}));
  EXPECT_EQ(jnp::expand_dims(V, -1).shape(), (Shape{7, 1}));
}

TEST(Manipulation, ArrayMethods) {
  expect_golden("reshape_a_4_m1", A.reshape({4, -1}));
  expect_golden("transpose_a", A.T());
  expect_golden("transpose_a_102", A.transpose({1, 0, 2}));
  expect_golden("ravel_a", A.flatten());
  expect_golden("ravel_a", A.ravel());
  expect_golden("squeeze_s", S.squeeze());
  expect_golden("squeeze_s_2", S.squeeze(-1));
  expect_golden("swapaxes_a_0_2", A.swapaxes(-3, 2));
  Array c = V.copy();
  EXPECT_EQ(c.to_vector<float>(), V.to_vector<float>());
  EXPECT_TRUE(Array(2.0).copy().weak_type());
  Array i = V.astype(DType::Int32);
  EXPECT_EQ(i.dtype(), DType::Int32);
  EXPECT_FALSE(i.weak_type());
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{-2, 1, -1, 2, 0, -1, 2}));  // truncation
  EXPECT_FALSE(Array(2.0).astype(DType::Float32).weak_type());
}

TEST(Manipulation, Atleast) {
  Array s = Array(3.0f);
  EXPECT_EQ(jnp::atleast_1d(s).shape(), (Shape{1}));
  EXPECT_EQ(jnp::atleast_2d(s).shape(), (Shape{1, 1}));
  EXPECT_EQ(jnp::atleast_3d(s).shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(jnp::atleast_2d(V).shape(), (Shape{1, 7}));
  EXPECT_EQ(jnp::atleast_3d(V).shape(), (Shape{1, 7, 1}));
  EXPECT_EQ(jnp::atleast_3d(B).shape(), (Shape{4, 6, 1}));
  EXPECT_EQ(jnp::atleast_1d(B).shape(), (Shape{4, 6}));
  auto v = jnp::atleast_2d(std::vector<Array>{s, V, A});
  EXPECT_EQ(v[0].shape(), (Shape{1, 1}));
  EXPECT_EQ(v[1].shape(), (Shape{1, 7}));
  EXPECT_EQ(v[2].shape(), (Shape{2, 3, 4}));
  EXPECT_TRUE(jnp::atleast_1d(s).weak_type());
}

TEST(Manipulation, Broadcasting) {
  EXPECT_EQ(jnp::broadcast_shapes({{3, 1}, {4}, {1, 1, 1}}), (Shape{1, 3, 4}));
  EXPECT_EQ(jnp::broadcast_shapes({}), (Shape{}));
  auto b = jnp::broadcast_arrays({jnp::reshape(V, {7, 1}), jnp::arange(3.0), Array(1.0f)});
  for (const Array& x : b) EXPECT_EQ(x.shape(), (Shape{7, 3}));
  EXPECT_EQ(b[1].to_vector<float>()[4], 1.0f);
  EXPECT_EQ(b[0].to_vector<float>()[4], 1.0f);  // row 1 of V is 1.0
  expect_error<jx::ShapeError>([] { jnp::broadcast_shapes({{3}, {4}}); },
                               "[broadcast_shapes] shapes (3,) and (4,) are incompatible");
  expect_error<jx::ShapeError>([] { jnp::broadcast_to(B, {4, 5}); }, "[broadcast_to]");
}

TEST(Manipulation, Joining) {
  expect_golden("concatenate_aa_1", jnp::concatenate({A, A}, 1));
  expect_golden("concatenate_aa_1", jnp::concat({A, A}, -2));
  expect_golden("concatenate_ab_none", jnp::concatenate({A, B}, std::nullopt));
  expect_golden("stack_bb_1", jnp::stack({B, B}, 1));
  expect_golden("stack_bb_m1", jnp::stack({B, B}, -1));
  expect_golden("hstack_vv", jnp::hstack({V, V}));
  expect_golden("hstack_bb", jnp::hstack({B, B}));
  expect_golden("vstack_vv", jnp::vstack({V, V}));
  expect_golden("dstack_bb", jnp::dstack({B, B}));
  expect_golden("column_stack_vv", jnp::column_stack({V, V}));
  // more than 16 operands go through a tree of concatenations
  std::vector<Array> many(40, V);
  Array m = jnp::concatenate(many);
  ASSERT_EQ(m.shape(), (Shape{280}));
  auto mv = m.to_vector<float>();
  auto vv = V.to_vector<float>();
  for (size_t i = 0; i < mv.size(); ++i) ASSERT_EQ(mv[i], vv[i % 7]);
}

TEST(Manipulation, JoiningPromotesDtypes) {
  Array i = jnp::array<int32_t>({1, 2});
  Array f = jnp::array<float>({0.5f});
  Array c = jnp::concatenate({i, f});
  EXPECT_EQ(c.dtype(), DType::Float32);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 2, 0.5f}));
  // a weak int never widens a typed int8
  Array i8 = jnp::array<int8_t>({1, 2});
  Array weak = jnp::full({2}, Array(7));
  ASSERT_TRUE(weak.weak_type());
  Array c8 = jnp::concatenate({i8, weak});
  EXPECT_EQ(c8.dtype(), DType::Int8);
  EXPECT_FALSE(c8.weak_type());
  EXPECT_TRUE(jnp::concatenate({weak, weak}).weak_type());
  Array cd = jnp::concatenate({i8, weak}, 0, DType::Float64);
  EXPECT_EQ(cd.dtype(), DType::Float64);
  EXPECT_FALSE(cd.weak_type());
  EXPECT_EQ(jnp::stack({jnp::array<bool>({true, false}), jnp::array<int16_t>({3, 4})}).dtype(),
            DType::Int16);
  Array u = jnp::vstack({jnp::array<uint8_t>({1}), jnp::array<int8_t>({-1})});
  EXPECT_EQ(u.dtype(), DType::Int16);
  EXPECT_EQ(u.to_vector<int16_t>(), (std::vector<int16_t>{1, -1}));
}

TEST(Manipulation, Splitting) {
  expect_goldens("split_b_3_1", jnp::split(B, 3, 1));
  expect_goldens("array_split_v_3", jnp::array_split(V, 3));
  expect_goldens("split_v_2_5", jnp::split(V, std::vector<int64_t>{2, 5}));
  expect_goldens("split_v_m2_10", jnp::split(V, std::vector<int64_t>{-2, 10}));
  expect_goldens("hsplit_b_2", jnp::hsplit(B, 2));
  expect_goldens("vsplit_b_1_3", jnp::vsplit(B, std::vector<int64_t>{1, 3}));
  expect_goldens("array_split_a_2_2", jnp::array_split(A, 2, 2));
  auto parts = jnp::array_split(V, 10);  // more sections than elements: trailing empties
  ASSERT_EQ(parts.size(), 10u);
  EXPECT_EQ(parts[6].shape(), (Shape{1}));
  EXPECT_EQ(parts[7].shape(), (Shape{0}));
}

TEST(Manipulation, TileAndRepeat) {
  expect_golden("tile_v_2", jnp::tile(V, 2));
  expect_golden("tile_b_212", jnp::tile(B, {2, 1, 2}));
  expect_golden("tile_a_0", jnp::tile(A, 0));
  expect_golden("repeat_b_2", jnp::repeat(B, 2));
  expect_golden("repeat_b_2_1", jnp::repeat(B, 2, 1));
  expect_golden("repeat_v_per_elem", jnp::repeat(V, {1, 0, 2, 2, 3, 1, 0}, 0));
  expect_golden("repeat_b_0123_0", jnp::repeat(B, {0, 1, 2, 3}, 0));
  EXPECT_EQ(jnp::repeat(B, {0, 0, 0, 0}, 0).shape(), (Shape{0, 6}));
  EXPECT_EQ(jnp::repeat(Array(2.0f), 3).to_vector<float>(), (std::vector<float>{2, 2, 2}));
}

TEST(Manipulation, FlipRollRot90) {
  expect_golden("flip_a", jnp::flip(A));
  expect_golden("flip_a_1", jnp::flip(A, 1));
  expect_golden("flip_a_02", jnp::flip(A, {0, 2}));
  expect_golden("fliplr_b", jnp::fliplr(B));
  expect_golden("flipud_b", jnp::flipud(B));
  expect_golden("roll_v_3", jnp::roll(V, 3));
  expect_golden("roll_v_m10", jnp::roll(V, -10, 0));
  expect_golden("roll_b_2_none", jnp::roll(B, 2));
  expect_golden("roll_b_1m2_01", jnp::roll(B, std::vector<int64_t>{1, -2}, {0, 1}));
  expect_golden("roll_b_1_01", jnp::roll(B, 1, {0, 1}));
  expect_golden("roll_a_11_2", jnp::roll(A, std::vector<int64_t>{1, 1}, 2));
  expect_golden("rot90_b", jnp::rot90(B));
  expect_golden("rot90_b_2", jnp::rot90(B, 2));
  expect_golden("rot90_b_3", jnp::rot90(B, 3));
  expect_golden("rot90_b_m1", jnp::rot90(B, -1));
  expect_golden("rot90_a_1_12", jnp::rot90(A, 1, {1, 2}));
  EXPECT_EQ(jnp::roll(jnp::zeros({0, 3}), 2, 0).shape(), (Shape{0, 3}));
}

TEST(Manipulation, LargeSplitConcatRoundTrip) {
  // 300k elements: the threaded concatenate and copy paths.
  Array x = jnp::reshape(jnp::arange(300000.0), {600, 500});
  auto parts = jnp::split(x, std::vector<int64_t>{7, 250, 250, 499}, 1);
  ASSERT_EQ(parts.size(), 5u);
  EXPECT_EQ(parts[2].shape(), (Shape{600, 0}));
  Array y = jnp::concatenate(parts, 1);
  EXPECT_EQ(y.to_vector<float>(), x.to_vector<float>());
  Array r = jnp::roll(x, 123);
  auto rv = r.to_vector<float>();
  for (int64_t i = 0; i < 300000; i += 997) ASSERT_EQ(rv[size_t((i + 123) % 300000)], float(i));
}

TEST(ManipulationErrors, Reshape) {
  expect_error<jx::ShapeError>([] { jnp::reshape(B, {5, 5}); },
                               "[reshape] cannot reshape f32[4,6] (size 24) into shape (5, 5)");
  expect_error<jx::ShapeError>([] { jnp::reshape(B, {5, -1}); },
                               "[reshape] cannot reshape f32[4,6] (size 24) into shape (5, -1)");
  expect_error<jx::ValueError>([] { jnp::reshape(B, {-1, -1}); },
                               "[reshape] can only specify one unknown dimension");
  expect_error<jx::ValueError>([] { B.reshape({-2, -12}); }, "[reshape] negative dimension -2");
}

TEST(ManipulationErrors, Concatenate) {
  expect_error<jx::ShapeError>([] { jnp::concatenate({B, A}, 0); },
                               "[concatenate] operands must have the same rank");
  expect_error<jx::ShapeError>(
      [] { jnp::concatenate({B, jnp::zeros({4, 5})}, 0); },
      "[concatenate] operand shapes may differ only along dimension 0, got f32[4,6], f32[4,5]");
  expect_error<jx::ValueError>([] { jnp::concatenate({Array(1.0f), Array(2.0f)}); },
                               "[concatenate] zero-dimensional arrays cannot be concatenated");
  expect_error<jx::ValueError>([] { jnp::concatenate({}); }, "[concatenate] needs at least one");
  expect_error<jx::IndexError>([] { jnp::concatenate({B, B}, 2); },
                               "[concatenate] axis 2 is out of bounds for an array of rank 2");
  expect_error<jx::ShapeError>([] { jnp::stack({B, jnp::zeros({6, 4})}); },
                               "[stack] all input arrays must have the same shape");
  expect_error<jx::ValueError>([] { jnp::stack({}); }, "[stack] needs at least one array");
}

TEST(ManipulationErrors, Axes) {
  expect_error<jx::IndexError>([] { jnp::swapaxes(B, 0, 2); },
                               "[swapaxes] axis 2 is out of bounds for an array of rank 2");
  expect_error<jx::IndexError>([] { jnp::transpose(A, {0, 1, 1}); },
                               "[transpose] axis 1 appears twice");
  expect_error<jx::ValueError>([] { jnp::transpose(A, {0, 1}); }, "[transpose] axes (0, 1)");
  expect_error<jx::IndexError>([] { jnp::expand_dims(B, {0, -4}); },
                               "[expand_dims] axis -4 appears twice");
  expect_error<jx::IndexError>([] { jnp::expand_dims(B, 4); }, "[expand_dims] axis 4");
  expect_error<jx::ValueError>([] { jnp::moveaxis(A, {0, 1}, {0}); }, "[moveaxis] source (0, 1)");
  expect_error<jx::ShapeError>([] { jnp::squeeze(S, 1); },
                               "[squeeze] cannot squeeze dimension 1 of f32[1,3,1]");
  expect_error<jx::IndexError>([] { jnp::flip(B, 2); }, "[flip] axis 2");
  expect_error<jx::ValueError>([] { jnp::fliplr(V); }, "[fliplr] only works on arrays of 2");
  expect_error<jx::ValueError>([] { jnp::matrix_transpose(V); }, "[matrix_transpose] needs");
  expect_error<jx::ValueError>([] { jnp::rot90(B, 1, {1, -1}); }, "[rot90] axes must be different");
  expect_error<jx::ValueError>(
      [] { jnp::roll(B, std::vector<int64_t>{1, 2, 3}, {0, 1}); }, "[roll] shift (1, 2, 3)");
}

TEST(ManipulationErrors, SplitTileRepeat) {
  expect_error<jx::ValueError>([] { jnp::split(V, 3); },
                               "[split] array split does not result in an equal division");
  expect_error<jx::ValueError>([] { jnp::split(V, 0); }, "[split] the number of sections");
  expect_error<jx::ValueError>([] { jnp::vsplit(V, 1); }, "[vsplit] only works on arrays of 2");
  expect_error<jx::ValueError>([] { jnp::tile(V, {-1}); }, "[tile] reps (-1,)");
  expect_error<jx::ShapeError>([] { jnp::repeat(V, {1, 2}, 0); },
                               "[repeat] repeats has 2 entries but axis 0 of f32[7] has size 7");
  expect_error<jx::ValueError>([] { jnp::repeat(V, -1); }, "[repeat] repeats may not contain");
}

}  // namespace
