// Shared by tests/nn/layers_more_*_test.cpp: the float64 goldens of
// tests/golden/gen_nn_layers_more.py (PyTorch), looked up by name, and small helpers.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "jx/nn.h"
#include "testing/check_grads.h"
#include "testing/golden.h"

namespace layers_more {

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace nn = jx::nn;
using jx::Array;
using jx::DType;
using jx::Shape;
using jx::Tree;

inline const std::vector<jx::testing::NamedGolden> kGoldens = {
#include "golden/nn_layers_more_golden.inc"
};

// float64 against PyTorch's float64: the same sums in another order.
constexpr double kF64 = 1e-11;

inline Array golden(const std::string& name) {
  for (const auto& g : kGoldens)
    if (name == g.name) return jnp::array<double>(g.values, Shape(g.shape));
  ADD_FAILURE() << "no golden named " << name;
  return Array();
}

inline void expect_golden(const std::string& name, const Array& x, double tol = kF64) {
  jx::testing::expect_named_golden(kGoldens, name, x, tol);
}

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const jx::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The gradient of sum(f(args) * dy) with respect to each of args (reverse mode), against
// the goldens "<c>_grad_<names[i]>".
inline void expect_vjp_goldens(const std::string& c, const std::function<Array(const std::vector<Array>&)>& f,
                               const std::vector<Array>& args, const std::vector<std::string>& names) {
  const Array dy = golden(c + "_dy");
  auto loss = [&](const std::vector<Array>& a) { return jnp::sum(f(a) * dy); };
  const std::vector<Array> g = jx::grad(loss)(args);
  ASSERT_EQ(g.size(), args.size());
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) continue;
    SCOPED_TRACE(names[i]);
    expect_golden(c + "_grad_" + names[i], g[i], 1e-10);
  }
}

// check_grads (forward vs central differences, reverse vs forward) of f at args.
inline void expect_grads_ok(const std::function<Array(const std::vector<Array>&)>& f,
                            const std::vector<Array>& args, int order = 2) {
  jx::testing::GradCheckOptions o;
  o.order = order;
  try {
    jx::testing::check_grads([&](const std::vector<Array>& a) { return std::vector<Array>{f(a)}; }, args, o);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "check_grads: " << e.what();
  }
}

inline Tree params(Tree p) { return Tree{{"params", std::move(p)}}; }

}  // namespace layers_more
