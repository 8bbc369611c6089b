// jx::debug::print and callback: eager, under jit (prints at run time, every run), under
// vmap (once per example, as JAX), under grad (the primal values), format strings and
// their errors. Expected text is NumPy's str() of the values, written by hand.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "jx/jx.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;

std::string captured(const std::function<void()>& f) {
  ::testing::internal::CaptureStdout();
  f();
  return ::testing::internal::GetCapturedStdout();
}

TEST(DebugPrint, Eager) {
  Array x = jnp::array<float>({1, 2});
  EXPECT_EQ(captured([&] { jx::debug::print("x = {}, n = {}", x, 3); }), "x = [1. 2.], n = 3\n");
  EXPECT_EQ(captured([&] { jx::debug::print("{1} {0} {{literal}}", x, "s"); }), "s [1. 2.] {literal}\n");
  EXPECT_EQ(captured([&] { jx::debug::print("{:.3f} {:d} {:+.1e}", Array(1.5f), Array(7), 2.5); }),
            "1.500 7 +2.5e+00\n");
}

TEST(DebugPrint, PytreeArguments) {
  std::map<std::string, Array> p{{"b", jnp::array<float>({1})}, {"a", jnp::array<int32_t>({2, 3})}};
  std::vector<Array> v{Array(1.0f)};
  EXPECT_EQ(captured([&] { jx::debug::print("{} {}", p, v); }), "{'a': [2 3], 'b': [1.]} [1.0]\n");
}

TEST(DebugPrint, UnderJitPrintsAtRunTime) {
  auto f = jx::jit([](const Array& x) {
    Array y = x * 2.0f;
    jx::debug::print("y = {}", y);
    return y + 1.0f;
  });
  Array x = jnp::array<float>({1, 2});
  std::string out = captured([&] {
    f(x);
    f(x + 1.0f);
  });
  EXPECT_EQ(out, "y = [2. 4.]\ny = [4. 6.]\n");
  // The staged equation: no outputs, marked as an effect.
  std::string jaxpr = jx::make_jaxpr([](const Array& x) {
                        jx::debug::print("x = {}", x);
                        return x;
                      })(x).str();
  EXPECT_NE(jaxpr.find("debug_callback[callback=print('x = {}') effect=Debug] a"), std::string::npos)
      << jaxpr;
}

TEST(DebugPrint, UnderVmapPrintsEachExample) {
  auto f = [](const Array& x, const Array& w) {
    jx::debug::print("x = {} w = {}", x, w);
    return x * w;
  };
  Array xs = jnp::array<float>({1, 2, 3});
  Array w = jnp::array<float>({5});
  std::string out = captured([&] { jx::vmap(f, {.in_axes = {0, jx::none}})(xs, w); });
  EXPECT_EQ(out, "x = 1.0 w = [5.]\nx = 2.0 w = [5.]\nx = 3.0 w = [5.]\n");
  // Batched along axis 1, through jit.
  Array m = jnp::arange(4).astype(jx::float32).reshape({2, 2});
  out = captured([&] { jx::vmap(jx::jit([](const Array& c) {
                         jx::debug::print("col {}", c);
                         return c;
                       }),
                       {.in_axes = 1})(m); });
  EXPECT_EQ(out, "col [0. 2.]\ncol [1. 3.]\n");
}

TEST(DebugPrint, UnderGradPrintsThePrimal) {
  auto f = [](const Array& x) {
    jx::debug::print("x = {}", x);
    return x * x;
  };
  std::string out = captured([&] {
    Array g = jx::grad(f)(Array(3.0f));
    EXPECT_FLOAT_EQ(g.item<float>(), 6.0f);
  });
  EXPECT_EQ(out, "x = 3.0\n");
  out = captured([&] {
    Array g = jx::grad(jx::jit(f))(Array(3.0f));
    EXPECT_FLOAT_EQ(g.item<float>(), 6.0f);
  });
  EXPECT_EQ(out, "x = 3.0\n");
  out = captured([&] { jx::jvp(f, std::make_tuple(Array(2.0f)), std::make_tuple(Array(1.0f))); });
  EXPECT_EQ(out, "x = 2.0\n");
}

TEST(DebugCallback, GetsConcreteValues) {
  std::vector<float> seen;
  auto f = jx::jit([&](const Array& x) {
    jx::debug::callback([&](const Array& v, int k) { seen.push_back(v.item<float>() * float(k)); }, x.sum(), 10);
    return x;
  });
  f(jnp::array<float>({1, 2}));
  f(jnp::array<float>({3, 4}));
  EXPECT_EQ(seen, (std::vector<float>{30, 70}));
}

TEST(DebugPrint, FormatErrors) {
  Array x = jnp::array<float>({1, 2});
  try {
    jx::debug::print("{} {}", x);
    FAIL() << "expected IndexError";
  } catch (const jx::IndexError& e) {
    EXPECT_EQ(std::string(e.what()),
              "[debug.print] format string \"{} {}\" refers to argument 1 but 1 argument was given");
  }
  EXPECT_THROW(jx::debug::print("{:.2f}", x), jx::ValueError);  // a spec needs a scalar
  EXPECT_THROW(jx::debug::print("{:x}", Array(1)), jx::ValueError);
  EXPECT_THROW(jx::debug::print("{0} {}", x), jx::ValueError);
  EXPECT_THROW(jx::debug::print("oops }", x), jx::ValueError);
}

}  // namespace
