// Bad input to the transformations (issue 19, "bad input everywhere"): grad, value_and_grad,
// jvp, vjp, linearize, vmap, jit, jacfwd / jacrev, make_jaxpr, custom_jvp / custom_vjp and
// the control flow (cond, switch, while_loop, scan, fori_loop). Each row is a wrong call --
// integer or non-scalar where a float scalar is needed, mismatched pytrees or shapes between
// primals and tangents, bad batch axes, traced values that escape their transformation or
// are read as concrete values, branches and loop bodies that change their carry -- and must
// throw exactly the expected jx error whose message names the operation, the offending
// shape / dtype / value and the fix.
#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "jx/jx.h"
#include "testing/error_table.h"

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::DType;

namespace {

using jx::testing::ErrorRow;
using jx::testing::row;
using jx::testing::run_rows;

Array vec3() { return jnp::array({1.0f, 2.0f, 3.0f}); }
Array sum_sq(const Array& x) { return (x * x).sum(); }

std::vector<ErrorRow> transform_rows() {
  using jx::ConcretizationError;
  using jx::DTypeError;
  using jx::IndexError;
  using jx::ShapeError;
  using jx::TypeError;
  using jx::ValueError;
  using V = std::vector<Array>;
  return {
      // ---- grad / value_and_grad ----
      row<DTypeError>("grad w.r.t. an int argument", [] { jx::grad(sum_sq)(jnp::arange(3)); },
                      {"[grad]", "dtype int32", "astype(jx::float32)"}),
      row<ValueError>("grad of a non-scalar output",
                      [] { jx::grad([](const Array& x) { return x * 2.0f; })(vec3()); },
                      {"[grad]", "f32[3]", "jnp::sum", "jx::vjp"}),
      row<ValueError>(
          "grad of an int output",
          [] { jx::grad([](const Array& x) { return x.sum().astype(DType::Int32); })(vec3()); },
          {"[grad]", "i32[]", "real scalar output"}),
      row<DTypeError>("value_and_grad w.r.t. a bool argument",
                      [] {
                        jx::value_and_grad([](const Array& x) {
                          return x.astype(DType::Float32).sum();
                        })(jnp::array({true, false}));
                      },
                      {"[grad]", "dtype bool", "astype(jx::float32)"}),
      // ---- jvp / vjp / linearize ----
      row<ValueError>("jvp tangent of another shape",
                      [] { jx::jvp(sum_sq, std::tuple(vec3()), std::tuple(jnp::ones({4}))); },
                      {"[jvp]", "f32[4]", "f32[3]", "tangents must match"}),
      row<ValueError>(
          "jvp tangent of another dtype",
          [] { jx::jvp(sum_sq, std::tuple(vec3()), std::tuple(jnp::ones({3}, DType::Float64))); },
          {"[jvp]", "f64[3]", "f32[3]", "tangents must match"}),
      row<ValueError>("jvp tangents of another pytree",
                      [] {
                        jx::jvp([](const V& xs) { return xs[0] + xs[1]; },
                                std::tuple(V{vec3(), vec3()}), std::tuple(V{vec3()}));
                      },
                      {"[jvp]", "PyTreeDef(([*],))", "PyTreeDef(([*, *],))", "same containers"}),
      row<ValueError>("vjp cotangent of another shape",
                      [] { jx::vjp(sum_sq, vec3()).second(jnp::ones({2})); },
                      {"[vjp]", "f32[2]", "f32[]", "cotangents must match"}),
      row<ValueError>("vjp cotangent of another pytree",
                      [] {
                        jx::vjp([](const Array& x) { return V{x, x}; }, vec3()).second(V{vec3()});
                      },
                      {"[vjp]", "PyTreeDef([*])", "PyTreeDef([*, *])", "same containers"}),
      row<ValueError>("linearize tangent of another shape",
                      [] { jx::linearize(sum_sq, vec3()).second(jnp::ones({5})); },
                      {"[linearize]", "f32[5]", "f32[3]", "tangents must match"}),
      // ---- jacfwd / jacrev / make_jaxpr ----
      row<DTypeError>("jacfwd w.r.t. an int argument",
                      [] { jx::jacfwd([](const Array& x) { return x * 2; })(jnp::arange(3)); },
                      {"[jacfwd]", "dtype int32", "astype(jx::float32)"}),
      row<DTypeError>("jacrev w.r.t. an int argument",
                      [] { jx::jacrev([](const Array& x) { return x * 2; })(jnp::arange(3)); },
                      {"[jacrev]", "dtype int32", "astype(jx::float32)"}),
      row<ConcretizationError>(
          "make_jaxpr of a function reading a traced value",
          [] { jx::make_jaxpr([](const Array& x) { return x * x.sum().item<float>(); })(vec3()); },
          {"[item]", "traced (f32[])", "jx::lax::cond", "static"}),
      // ---- vmap ----
      row<IndexError>("vmap in_axes out of range", [] { jx::vmap(sum_sq, {.in_axes = 1})(vec3()); },
                      {"[vmap]", "in_axes 1", "f32[3]", "-1..0", "jx::none"}),
      row<ValueError>("vmap in_axes with one entry per argument, wrong count",
                      [] {
                        jx::vmap([](const Array& a, const Array& b) { return a + b; },
                                 {.in_axes = {0, 0, 0}})(vec3(), vec3());
                      },
                      {"[vmap]", "3 entries", "2 arguments", "one entry per argument"}),
      row<ValueError>("vmap over arguments of different batch sizes",
                      [] {
                        jx::vmap([](const Array& a, const Array& b) { return a + b; })(
                            vec3(), jnp::ones({4}));
                      },
                      {"[vmap]", "f32[4]", "size 4", "earlier argument has 3", "same size"}),
      row<ValueError>("vmap with every in_axes none and no axis_size",
                      [] { jx::vmap(sum_sq, {.in_axes = jx::none})(vec3()); },
                      {"[vmap]", "axis_size", "all in_axes are none"}),
      row<IndexError>(
          "vmap out_axes out of range",
          [] { jx::vmap([](const Array& x) { return x * 2.0f; }, {.out_axes = 3})(vec3()); },
          {"[vmap]", "out_axes 3", "rank 0", "-1..0"}),
      row<IndexError>("vmap over a scalar", [] { jx::vmap(sum_sq)(Array(1.0f)); },
                      {"[vmap]", "in_axes 0", "f32[]", "rank 0", "jx::none"}),
      row<ValueError>("vmap in_axes dict for a non-dict argument",
                      [] {
                        jx::vmap(sum_sq, {.in_axes = {jx::AxisSpec::dict({{"w", 0}})}})(vec3());
                      },
                      {"[vmap]", "{'w': 0}", "PyTreeDef(*)", "prefix of the tree"}),
      row<ConcretizationError>(
          "vmap reading a batched value as a concrete one",
          [] { jx::vmap([](const Array& x) { return x * x.item<float>(); })(vec3()); },
          {"[item]", "traced", "jnp::where"}),
      // ---- jit: concretization, escaped tracers, donation ----
      row<ConcretizationError>(
          "jit reading a traced value as a concrete one",
          [] { jx::jit([](const Array& x) { return x * x.sum().item<float>(); })(vec3()); },
          {"[item]", "traced (f32[])", "static (non-Array) argument"}),
      row<ConcretizationError>(
          "a tracer escaping jit, used afterwards",
          [] {
            Array leaked;
            jx::jit([&leaked](const Array& x) {
              leaked = x * 2.0f;
              return x;
            })(vec3());
            (leaked + 1.0f).sum();
          },
          {"[add]", "tracer (f32[3])", "jit", "escaped", "Return it from the function"}),
      row<ConcretizationError>("a tracer escaping grad, used afterwards",
                               [] {
                                 Array leaked;
                                 jx::grad([&leaked](const Array& x) {
                                   leaked = x;
                                   return sum_sq(x);
                                 })(vec3());
                                 (leaked * 2.0f).sum();
                               },
                               {"[mul]", "tracer (f32[3])", "grad/vjp/linearize", "escaped",
                                "Return it from the function"}),
      row<ValueError>(
          "a donated argument used after the call",
          [] {
            Array x = vec3();
            jx::jit([](const Array& a) { return a + 1.0f; }, {.donate_argnums = {0}})(x);
            (x * 2.0f).sum();
          },
          {"[mul]", "f32[3]", "deleted", "donate_argnums", "Use the function's outputs"}),
      row<ValueError>(
          "jit donate_argnums out of range",
          [] { jx::jit([](const Array& a) { return a + 1.0f; }, {.donate_argnums = {3}})(vec3()); },
          {"[jit]", "donate_argnums holds 3", "1 arguments", "indices of its arguments"}),
      // ---- custom_jvp / custom_vjp ----
      row<ValueError>("custom_jvp rule with a tangent of another shape",
                      [] {
                        auto f =
                            jx::custom_jvp([](const Array& x) {
                              return x * 2.0f;
                            }).defjvp([](const std::tuple<Array>& p, const std::tuple<Array>&) {
                              return std::pair(std::get<0>(p) * 2.0f, jnp::ones({7}));
                            });
                        jx::jvp(f, std::tuple(vec3()), std::tuple(vec3()));
                      },
                      {"[custom_jvp]", "f32[7]", "f32[3]", "tangent output"}),
      row<ValueError>("custom_vjp bwd with a cotangent of another shape",
                      [] {
                        auto f = jx::custom_vjp(
                            [](const Array& x) { return x * 2.0f; },
                            [](const Array& x) { return std::pair(x * 2.0f, x); },
                            [](const Array&, const Array&) { return std::tuple(jnp::ones({7})); });
                        jx::grad([&f](const Array& x) { return f(x).sum(); })(vec3());
                      },
                      {"[custom_vjp]", "f32[7]", "f32[3]", "bwd rule"}),
      row<ValueError>("custom_vjp under forward mode",
                      [] {
                        auto f = jx::custom_vjp(
                            [](const Array& x) { return x * 2.0f; },
                            [](const Array& x) { return std::pair(x * 2.0f, x); },
                            [](const Array&, const Array& g) { return std::tuple(g * 2.0f); });
                        jx::jvp(f, std::tuple(vec3()), std::tuple(vec3()));
                      },
                      {"[custom_vjp]", "forward-mode autodiff (jvp)", "custom_vjp function"}),
      // ---- control flow ----
      row<TypeError>("cond branches of different shapes",
                     [] {
                       lax::cond(
                           Array(true), [](const Array& x) { return x; },
                           [](const Array& x) { return x.sum(); }, vec3());
                     },
                     {"[cond]", "f32[3] vs. f32[]", "same shapes and dtypes"}),
      row<TypeError>("cond branches of different dtypes",
                     [] {
                       lax::cond(
                           Array(true), [](const Array& x) { return x; },
                           [](const Array& x) { return x.astype(DType::Int32); }, vec3());
                     },
                     {"[cond]", "f32[3] vs. i32[3]", "astype"}),
      row<TypeError>("cond on a non-scalar predicate",
                     [] {
                       lax::cond(
                           jnp::array({true, false}), [](const Array& x) { return x; },
                           [](const Array& x) { return -x; }, vec3());
                     },
                     {"[cond]", "bool[2]", ".any()"}),
      row<TypeError>("switch_ with a float index",
                     [] {
                       std::vector<std::function<Array(const Array&)>> bs = {
                           [](const Array& x) { return x; }, [](const Array& x) { return -x; }};
                       lax::switch_(Array(1.0f), bs, vec3());
                     },
                     {"[switch]", "float32", "astype(jx::int32)"}),
      row<ValueError>("switch_ with no branches",
                      [] {
                        std::vector<std::function<Array(const Array&)>> bs;
                        lax::switch_(Array(0), bs, vec3());
                      },
                      {"[switch]", "empty sequence of branches", "at least one"}),
      row<TypeError>("while_loop body that changes the carry's shape",
                     [] {
                       lax::while_loop([](const Array& c) { return c.sum() < 10.0f; },
                                       [](const Array& c) {
                                         return jnp::concatenate({c, c});
                                       },
                                       vec3());
                     },
                     {"[while_loop]", "f32[3]", "f32[6]", "shapes do not match"}),
      row<TypeError>("while_loop cond_fun that is not a scalar bool",
                     [] {
                       lax::while_loop([](const Array& c) { return c < 10.0f; },
                                       [](const Array& c) { return c + 1.0f; }, vec3());
                     },
                     {"[while_loop]", "bool[3]", "boolean scalar", "x.any()"}),
      row<ValueError>("scan over xs of different leading sizes",
                      [] {
                        lax::scan([](const Array& c,
                                     const V& x) { return std::pair(c + x[0] + x[1], c); },
                                  Array(0.0f), V{jnp::ones({3}), jnp::ones({4})});
                      },
                      {"[scan]", "(3, 4)", "same number of rows"}),
      row<ValueError>("scan with no xs and no length",
                      [] {
                        lax::scan([](const Array& c, jx::None) { return std::pair(c + 1.0f, c); },
                                  Array(0.0f), jx::none);
                      },
                      {"[scan]", "no values to scan over", "ScanOptions{.length = n}"}),
      row<ValueError>("scan length that disagrees with xs",
                      [] {
                        lax::scan(
                            [](const Array& c, const Array& x) { return std::pair(c + x, c); },
                            Array(0.0f), vec3(), {.length = 5});
                      },
                      {"[scan]", "length` argument of 5", "(3,)", "drop `length`"}),
      row<TypeError>("scan body that changes the carry's dtype",
                     [] {
                       lax::scan(
                           [](const Array& c, const Array& x) {
                             return std::pair((c + x).astype(DType::Float64), c);
                           },
                           jnp::zeros({}), vec3());
                     },
                     {"[scan]", "f32[]", "f64[]", "carry"}),
      // With C++ bounds fori_loop is a scan (as in JAX), and the error names the scan.
      row<TypeError>("fori_loop body that changes the carry's shape",
                     [] {
                       lax::fori_loop(
                           0, 3,
                           [](const Array&, const Array& v) {
                             return jnp::concatenate({v, v});
                           },
                           vec3());
                     },
                     {"[scan]", "f32[3]", "f32[6]", "carry"}),
      row<TypeError>("fori_loop with float bounds",
                     [] {
                       lax::fori_loop(
                           Array(0.0f), Array(3.0f),
                           [](const Array&, const Array& v) { return v + 1.0f; }, vec3());
                     },
                     {"[fori_loop]", "f32[] and f32[]", "integer scalars"}),
      // checkify (jx/checkify.h).
      row<TypeError>("checkify check with a non-scalar pred",
                     [] { jx::checkify::check(vec3() > 0.0f, "positive"); },
                     {"takes a scalar bool pred, got bool[3]"}),
      row<ValueError>("checkify check with a 1-d format argument",
                      [] { jx::checkify::check(Array(true), "x = {}", vec3()); },
                      {"format argument 0 is f32[3]"}),
      row<IndexError>("checkify check whose field names a missing argument",
                      [] { jx::checkify::check(Array(true), "{1}", Array(1.0f)); },
                      {"refers to argument 1"}),
      row<ConcretizationError>("checkify Error read inside jit",
                               [] {
                                 jx::jit([](const Array& x) {
                                   auto [err, y] = jx::checkify::checkify([](const Array& v) { return jnp::log(v); },
                                                                           jx::checkify::nan_checks)(x);
                                   (void)err.get();
                                   return y;
                                 })(vec3());
                               },
                               {"return the Error"}),
      row<ValueError>("checkify check staged outside checkify",
                      [] {
                        jx::jit([](const Array& x) {
                          jx::checkify::check(x.sum() > 0.0f, "positive");
                          return x;
                        })(vec3());
                      },
                      {"not functionalized"}),
  };
}

TEST(TransformErrors, EveryBadCallThrowsATypedErrorNamingTheFix) {
  std::vector<ErrorRow> rows = transform_rows();
  EXPECT_GE(rows.size(), 20u);
  run_rows(rows);
}

}  // namespace
