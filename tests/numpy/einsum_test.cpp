// jnp::einsum against NumPy goldens (tests/golden/gen_einsum.py), dtype rules and errors.
#include <gtest/gtest.h>

#include <cmath>

#include "jx/jx.h"
#include "testing/expect_error.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;
using jx::DType;
using jx::Shape;

struct EinsumCase {
  const char* subscripts;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<double>> inputs;
  std::vector<int64_t> out_shape;
  std::vector<double> out;
};

const EinsumCase kCases[] = {
#include "golden/einsum_golden.inc"
};

void check_case(const EinsumCase& c, DType t, double tol) {
  SCOPED_TRACE(std::string(c.subscripts) + " " + jx::dtype_name(t));
  std::vector<Array> ops;
  for (size_t i = 0; i < c.shapes.size(); ++i)
    ops.push_back(jnp::array(c.inputs[i], Shape(c.shapes[i])).astype(t));
  Array r = jnp::einsum(c.subscripts, ops);
  ASSERT_EQ(r.shape(), Shape(c.out_shape));
  EXPECT_EQ(r.dtype(), t);
  auto v = r.to_vector<double>();
  ASSERT_EQ(v.size(), c.out.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], c.out[i], tol * (1 + std::abs(c.out[i]))) << i;
}

TEST(Einsum, MatchesNumPyFloat64) {
  for (const auto& c : kCases) check_case(c, DType::Float64, 1e-12);
}

TEST(Einsum, MatchesNumPyFloat32) {
  for (const auto& c : kCases) check_case(c, DType::Float32, 2e-5);
}

TEST(Einsum, VariadicAndImplicitOutput) {
  Array a = jnp::array<float>({{1, 2}, {3, 4}});
  Array b = jnp::array<float>({{5, 6}, {7, 8}});
  EXPECT_EQ(jnp::einsum("ij,jk", a, b).to_vector<float>(), (std::vector<float>{19, 22, 43, 50}));
  // Implicit output sorts the letters: "ji" -> "ij" is a transpose.
  EXPECT_EQ(jnp::einsum("ji", a).to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
  EXPECT_EQ(jnp::einsum("ii", a).item<float>(), 5.0f);
}

TEST(Einsum, PromotionAndPreferredType) {
  Array i = jnp::array<int32_t>({1, 2, 3});
  Array f = jnp::array<float>({1, 1, 1});
  Array r = jnp::einsum("i,i", i, f);
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_EQ(r.item<float>(), 6.0f);
  Array i8 = jnp::array<int8_t>({100, 100});
  Array p = jnp::einsum("i,i", {i8, i8}, DType::Int32);
  EXPECT_EQ(p.dtype(), DType::Int32);
  EXPECT_EQ(p.item<int32_t>(), 20000);
  // Weak scalar operands keep the other operand's dtype.
  Array h = jnp::array<double>({1, 2});
  EXPECT_EQ(jnp::einsum("i,->i", h, Array(2.0)).dtype(), DType::Float64);
}

using jx::testing::expect_error;

TEST(Einsum, Errors) {
  Array a = jnp::zeros({2, 3});
  Array b = jnp::zeros({4, 5});
  expect_error<jx::ShapeError>([&] { jnp::einsum("ij,jk->ik", a, b); },
                               "[einsum] label 'j' has size 4 in operand 1 (shape (4, 5)) but size "
                               "3 in an earlier operand");
  expect_error<jx::ValueError>([&] { jnp::einsum("ij,jk", a); },
                               "[einsum] subscripts \"ij,jk\" name 2 operand(s) but 1 were given");
  expect_error<jx::ValueError>([&] { jnp::einsum("ijk", a); },
                               "[einsum] operand 0 has shape (2, 3) but its subscripts \"ijk\" name "
                               "3 dimension(s)");
  expect_error<jx::ValueError>([&] { jnp::einsum("ij->k", a); },
                               "[einsum] output label 'k' in \"ij->k\" does not appear in any input");
  expect_error<jx::ValueError>([&] { jnp::einsum("ij->ii", a); },
                               "[einsum] output label 'i' appears more than once");
  expect_error<jx::ValueError>([&] { jnp::einsum("i1", a); }, "[einsum] invalid character '1'");
  expect_error<jx::ValueError>([&] { jnp::einsum("..i.j", a); }, "[einsum] invalid ellipsis");
}

}  // namespace
