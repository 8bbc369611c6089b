// compile() then run equals ir::eval_jaxpr over the primitive registry: a table of small
// programs per primitive, at odd sizes, size 0, scalars and size-1 broadcasting, in
// float32/float64/int32/bool where the primitive accepts them. Every case of one dtype and
// shape is one jaxpr with many outputs (one compiler run instead of one per primitive).
//
// Exactness: everything is bit-exact (NaN payload and the sign of a zero aside) except
//  - transcendentals (exp, log, tanh, sin, pow, ...): generated code calls glibc's libmvec
//    at the vector width GCC picks for the fused loop, the eager kernels at theirs, and
//    the widths' variants may differ by an ulp or two; 4 ulps allowed;
//  - float sums and products: the generated loop accumulates in simd lanes, the eager
//    kernel in 16 accumulators with pairwise halves; relative 1e-5 (f32), 1e-12 (f64).
#include <set>

#include "compiler/jit_testing.h"
#include "ops/common.h"
#include "jx/control_flow.h"
#include "jx/lax/fft.h"
#include "jx/lax/special.h"
#include "jx/random.h"
#include "jx/transforms.h"

namespace {

using namespace jx;
using namespace jx::testing;
namespace jnp = jx::numpy;
using ops::Arrays;
using ops::Prim;

enum class Tol { Exact, Ulps, Sum };

struct Op {
  std::string name;
  Tol tol;
  std::function<Array(const Arrays&)> f;  // over inputs a (x), b (y), c (z)
};

const std::set<std::string> kTranscendental = {
    "exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "cbrt", "lgamma", "digamma", "erf", "erfc",
    "erf_inv", "pow", "atan2", "rsqrt"};

Tol tol_of(const std::string& name) { return kTranscendental.count(name) ? Tol::Ulps : Tol::Exact; }

#define UNARY(fn) Op{#fn, tol_of(#fn), [](const Arrays& a) { return lax::fn(a[0]); }}
#define BINARY(fn) Op{#fn, tol_of(#fn), [](const Arrays& a) { return lax::fn(a[0], a[1]); }}

std::vector<Op> float_ops(DType t) {
  std::vector<Op> ops = {
      UNARY(neg), UNARY(sign), UNARY(floor), UNARY(ceil), UNARY(round), UNARY(is_finite),
      UNARY(exp), UNARY(exp2), UNARY(log), UNARY(log1p), UNARY(expm1), UNARY(tanh),
      UNARY(logistic), UNARY(sin), UNARY(cos), UNARY(tan), UNARY(asin), UNARY(acos), UNARY(atan),
      UNARY(sinh), UNARY(cosh), UNARY(asinh), UNARY(acosh), UNARY(atanh), UNARY(abs), UNARY(sqrt),
      UNARY(rsqrt), UNARY(cbrt), UNARY(square), UNARY(lgamma), UNARY(digamma), UNARY(erf),
      UNARY(erfc), UNARY(erf_inv), UNARY(copy), BINARY(add), BINARY(sub), BINARY(mul), BINARY(div),
      BINARY(rem), BINARY(pow), BINARY(max), BINARY(min), BINARY(atan2), BINARY(nextafter),
      BINARY(eq), BINARY(ne), BINARY(lt), BINARY(le), BINARY(gt), BINARY(ge),
      Op{"round_even", Tol::Exact, [](const Arrays& a) { return lax::round(a[0], lax::RoundingMethod::to_nearest_even); }},
      Op{"integer_pow", Tol::Exact, [](const Arrays& a) { return lax::integer_pow(a[0], 3); }},
      Op{"integer_pow_neg", Tol::Exact, [](const Arrays& a) { return lax::integer_pow(a[0], -2); }},
      Op{"clamp", Tol::Exact, [](const Arrays& a) { return lax::clamp(a[1], a[0], a[2]); }},
      Op{"select_n", Tol::Exact, [](const Arrays& a) { return lax::select_n(lax::lt(a[0], a[1]), {a[1], a[2]}); }},
      Op{"convert_i32", Tol::Exact, [](const Arrays& a) { return lax::convert_element_type(lax::mul(a[0], a[2]), DType::Int32); }},
      Op{"convert_bool", Tol::Exact, [](const Arrays& a) { return lax::convert_element_type(a[0], DType::Bool); }},
      Op{"stop_gradient", Tol::Exact, [](const Arrays& a) { return jx::stop_gradient(a[0]); }},
      Op{"chain", Tol::Ulps, [](const Arrays& a) {
         return lax::mul(lax::tanh(lax::add(a[0], a[1])), lax::logistic(lax::sub(a[2], a[0])));
       }},
      // Special functions (ops/special.cpp): library calls under jit, so exact; abs, floor
      // and division (fused around them, and exact in generated code too) put the operands
      // inside the domains.
      Op{"igamma", Tol::Exact, [](const Arrays& a) { return lax::igamma(lax::abs(a[0]), lax::abs(a[1])); }},
      Op{"igammac", Tol::Exact, [](const Arrays& a) { return lax::igammac(lax::abs(a[0]), lax::abs(a[1])); }},
      Op{"igamma_grad_a", Tol::Exact, [](const Arrays& a) { return lax::igamma_grad_a(lax::abs(a[0]), lax::abs(a[1])); }},
      Op{"betainc", Tol::Exact, [](const Arrays& a) {  // x = |c| / (|c| + 1): exact ops only
         Array c = lax::abs(a[2]);
         return lax::betainc(lax::abs(a[0]), lax::abs(a[1]), lax::div(c, lax::add(c, jnp::ones_like(c))));
       }},
      Op{"zeta", Tol::Exact, [](const Arrays& a) { return lax::zeta(lax::abs(a[0]), a[1]); }},
      Op{"polygamma", Tol::Exact, [](const Arrays& a) { return lax::polygamma(lax::floor(lax::abs(a[0])), a[1]); }},
      UNARY(bessel_i0e), UNARY(bessel_i1e),
      // Complex values in the middle of a real program: library calls under jit.
      Op{"complex_parts", Tol::Exact, [](const Arrays& a) {
         Array z = lax::complex(a[0], a[1]);
         return lax::add(lax::real(lax::conj(z)), lax::imag(lax::mul(z, z)));
       }},
      Op{"fft", Tol::Exact, [](const Arrays& a) {
         Array x = a[0].ndim() == 0 ? lax::reshape(a[0], {1}) : a[0];  // fft needs a dim
         const int64_t n = x.shape(-1);
         Array spectrum = lax::fft(x, lax::FftType::RFFT, {n});
         return lax::fft(lax::mul(spectrum, spectrum), lax::FftType::IRFFT, {n});
       }},
  };
  ops.push_back(Op{"convert_other", Tol::Exact, [t](const Arrays& a) {
                     return lax::convert_element_type(a[0], t == DType::Float32 ? DType::Float64 : DType::Float32);
                   }});
  ops.push_back(Op{"bitcast", Tol::Exact, [t](const Arrays& a) {
                     return lax::bitcast_convert_type(a[0], t == DType::Float32 ? DType::Int32 : DType::Int64);
                   }});
  return ops;
}

std::vector<Op> int_ops() {
  return {UNARY(neg), UNARY(sign), UNARY(abs), UNARY(square), UNARY(population_count), UNARY(clz),
          UNARY(copy), BINARY(add), BINARY(sub), BINARY(mul), BINARY(div), BINARY(rem), BINARY(max),
          BINARY(min), BINARY(bitwise_and), BINARY(bitwise_or), BINARY(bitwise_xor),
          BINARY(shift_left), BINARY(shift_right_arithmetic), BINARY(shift_right_logical),
          BINARY(eq), BINARY(ne), BINARY(lt), BINARY(le), BINARY(gt), BINARY(ge),
          Op{"not", Tol::Exact, [](const Arrays& a) { return lax::bitwise_not(a[0]); }},
          Op{"integer_pow", Tol::Exact, [](const Arrays& a) { return lax::integer_pow(a[0], 5); }},
          Op{"clamp", Tol::Exact, [](const Arrays& a) { return lax::clamp(a[1], a[0], a[2]); }},
          Op{"select_n3", Tol::Exact, [](const Arrays& a) {
             return lax::select_n(lax::clamp(lax::convert_element_type(Array(0), DType::Int32), a[0], lax::convert_element_type(Array(2), DType::Int32)), {a[0], a[1], a[2]});
           }},
          Op{"convert_f32", Tol::Exact, [](const Arrays& a) { return lax::convert_element_type(a[0], DType::Float32); }},
          Op{"convert_u8", Tol::Exact, [](const Arrays& a) { return lax::convert_element_type(a[0], DType::UInt8); }},
          Op{"bitcast_f32", Tol::Exact, [](const Arrays& a) { return lax::bitcast_convert_type(a[0], DType::Float32); }}};
}

std::vector<Op> bool_ops() {
  return {BINARY(bitwise_and), BINARY(bitwise_or), BINARY(bitwise_xor), BINARY(eq), BINARY(ne),
          UNARY(copy),
          Op{"not", Tol::Exact, [](const Arrays& a) { return lax::bitwise_not(a[0]); }},
          Op{"select_n", Tol::Exact, [](const Arrays& a) { return lax::select_n(a[0], {a[1], a[2]}); }},
          Op{"convert_i32", Tol::Exact, [](const Arrays& a) { return lax::convert_element_type(a[0], DType::Int32); }}};
}

// Reductions over each axis set, and shape ops (fused or library), on a rank-2 input.
std::vector<Op> rank2_ops(DType t) {
  std::vector<Op> ops;
  const std::vector<std::vector<int64_t>> axes_sets = {{0}, {1}, {0, 1}};
  for (const auto& axes : axes_sets) {
    const std::string sfx = axes.size() == 2 ? "_all" : str("_", axes[0]);
    const Tol sum_tol = is_floating(t) ? Tol::Sum : Tol::Exact;
    if (t != DType::Bool) {
      ops.push_back({"reduce_sum" + sfx, sum_tol, [axes](const Arrays& a) { return lax::reduce_sum(a[0], axes); }});
      ops.push_back({"reduce_prod" + sfx, sum_tol, [axes](const Arrays& a) { return lax::reduce_prod(a[0], axes); }});
    }
    ops.push_back({"reduce_max" + sfx, Tol::Exact, [axes](const Arrays& a) { return lax::reduce_max(a[0], axes); }});
    ops.push_back({"reduce_min" + sfx, Tol::Exact, [axes](const Arrays& a) { return lax::reduce_min(a[0], axes); }});
    if (!is_floating(t)) {
      ops.push_back({"reduce_and" + sfx, Tol::Exact, [axes](const Arrays& a) { return lax::reduce_and(a[0], axes); }});
      ops.push_back({"reduce_or" + sfx, Tol::Exact, [axes](const Arrays& a) { return lax::reduce_or(a[0], axes); }});
      ops.push_back({"reduce_xor" + sfx, Tol::Exact, [axes](const Arrays& a) { return lax::reduce_xor(a[0], axes); }});
    }
  }
  auto add_op = [&](std::string n, std::function<Array(const Arrays&)> f) { ops.push_back({std::move(n), Tol::Exact, std::move(f)}); };
  add_op("transpose", [](const Arrays& a) { return lax::transpose(a[0], {1, 0}); });
  add_op("rev", [](const Arrays& a) { return lax::rev(a[0], {1}); });
  add_op("reshape", [](const Arrays& a) { return lax::reshape(a[0], {a[0].shape(1), a[0].shape(0)}); });
  add_op("broadcast_in_dim", [](const Arrays& a) {
    return lax::broadcast_in_dim(a[0], {2, a[0].shape(0), a[0].shape(1)}, {1, 2});
  });
  add_op("squeeze", [](const Arrays& a) { return lax::squeeze(lax::reshape(a[0], {1, a[0].shape(0), a[0].shape(1)}), {0}); });
  add_op("concatenate", [](const Arrays& a) { return lax::concatenate({a[0], a[1]}, 1); });
  add_op("slice", [](const Arrays& a) {
    return lax::slice(a[0], {0, 0}, {a[0].shape(0), a[0].shape(1)}, {1, 2});
  });
  add_op("dynamic_slice", [](const Arrays& a) {
    return lax::dynamic_slice(a[0], {Array(int32_t(1)), Array(int32_t(0))}, {0, a[0].shape(1)});
  });
  add_op("dynamic_update_slice", [](const Arrays& a) {
    return lax::dynamic_update_slice(a[0], lax::slice(a[1], {0, 0}, {a[1].shape(0), 1}),
                                     {Array(int32_t(0)), Array(int32_t(1))});
  });
  add_op("pad", [](const Arrays& a) {
    return lax::pad(a[0], lax::convert_element_type(Array(1), a[0].dtype()), {{1, 2, 0}, {0, 1, 1}});
  });
  add_op("iota_plus", [t](const Arrays& a) {
    DType it = t == DType::Bool ? DType::Int32 : t;
    return lax::add(lax::convert_element_type(a[0], it), lax::broadcasted_iota(it, a[0].shape(), 1));
  });
  if (t != DType::Bool) {
    add_op("argmax", [](const Arrays& a) { return lax::argmax(a[0], 1); });
    add_op("argmin", [](const Arrays& a) { return lax::argmin(a[0], 0); });
    add_op("cumsum", [t](const Arrays& a) { return is_floating(t) ? lax::cummax(a[0], 1) : lax::cumsum(a[0], 1); });
    add_op("cumprod", [](const Arrays& a) { return lax::cummin(lax::cumprod(a[0], 0), 0); });
    add_op("sort", [](const Arrays& a) { return lax::sort(a[0], 1); });
    add_op("dot_general", [](const Arrays& a) { return lax::dot_general(a[0], a[1], {{1}, {1}, {}, {}}); });
    add_op("gather", [](const Arrays& a) { return a[0](jnp::array<int32_t>({1, 0})); });
    add_op("scatter_add", [](const Arrays& a) { return a[0].at(jnp::array<int32_t>({0, 0})).add(a[1](0)); });
    add_op("scatter", [](const Arrays& a) { return a[0].at(0).set(a[1](0)); });
    add_op("scatter_mul", [](const Arrays& a) { return a[0].at(0).multiply(a[1](0)); });
    add_op("scatter_min", [](const Arrays& a) { return a[0].at(0).min(a[1](0)); });
    add_op("scatter_max", [](const Arrays& a) { return a[0].at(0).max(a[1](0)); });
  }
  if (t != DType::Bool) {
    // A 1-D convolution over the [7, 13] operands read as NWC (1, 7, 13) and WIO (7, 13, 1).
    add_op("conv_general_dilated", [](const Arrays& a) {
      return lax::conv_general_dilated(lax::reshape(a[0], {1, 7, 13}), lax::reshape(a[1], {7, 13, 1}),
                                       {2}, "SAME", {}, {}, {"NWC", "WIO", "NWC"});
    });
  }
  // Windowed reductions (ops/windowed.cpp): opaque primitives that jit runs by their impl.
  {
    const std::vector<int64_t> w{2, 2}, st{1, 2};
    const lax::Padding::Pairs pad{{1, 0}, {0, 1}};
    add_op("reduce_window_max", [=](const Arrays& a) { return lax::reduce_window_max(a[0], w, st, pad); });
    add_op("reduce_window_min", [=](const Arrays& a) { return lax::reduce_window_min(a[0], w, st, pad, {2, 1}); });
    if (t != DType::Bool) {
      add_op("reduce_window_sum", [=](const Arrays& a) { return lax::reduce_window_sum(a[0], w, st, pad, {}, {1, 2}); });
      add_op("reduce_window", [=](const Arrays& a) {
        return lax::reduce_window(a[0], lax::convert_element_type(Array(1), a[0].dtype()),
                                  [](const Array& u, const Array& v) { return lax::mul(u, v); }, w, st, pad);
      });
    }
    if (is_floating(t)) {
      add_op("select_and_scatter_add", [=](const Arrays& a) {
        return lax::select_and_scatter_add(lax::reduce_window_max(a[1], w, st, pad), a[0], lax::WindowSelect::ge, w, st, pad);
      });
      add_op("select_and_gather_add", [=](const Arrays& a) {
        return lax::select_and_gather_add(a[1], a[0], lax::WindowSelect::le, w, st, pad);
      });
    }
  }
  if (is_floating(t)) {
    add_op("cumlogsumexp", [](const Arrays& a) { return lax::cumlogsumexp(a[0], 1); });
    ops.back().tol = Tol::Ulps;
    add_op("cond", [](const Arrays& a) {
      return lax::cond(lax::reduce_max(a[0], {0, 1}) > 0.0f, [](Array v) { return lax::exp(v); },
                       [](Array v) { return lax::neg(v); }, a[0]);
    });
    ops.back().tol = Tol::Ulps;
    add_op("fori_loop", [](const Arrays& a) {
      return lax::fori_loop(0, 3, [](Array, Array acc) { return lax::add(acc, acc); }, a[0]);
    });
  }
  return ops;
}

std::set<std::string>& covered() {
  static std::set<std::string> s;
  return s;
}

void note_prims(const ir::Jaxpr& j) {
  for (const ir::Eqn& e : j.eqns) {
    covered().insert(ops::name(e.prim));
    for (const auto& kv : e.params.items())
      if (auto* o = std::get_if<std::shared_ptr<const ops::ParamObject>>(&kv.second))
        if (auto* jp = dynamic_cast<const ir::JaxprsParam*>(o->get()))
          for (const auto& sub : jp->jaxprs) note_prims(*sub);
  }
}

// Traces every op over inputs of `in` avals into one jaxpr, compiles, and compares each
// output with the interpreter's. Ops whose tracing throws (a dtype the primitive rejects)
// are skipped. Returns the compiled step description.
std::string check(const std::vector<Op>& all, const std::vector<ops::Aval>& in, int seed,
                  std::vector<std::string>* skipped = nullptr) {
  std::vector<const Op*> ops;
  Arrays probe;
  for (const ops::Aval& a : in) probe.push_back(input(a.dtype, a.shape, seed));
  for (const Op& op : all) {
    try {
      trace_closed([&](const Arrays& a) -> Arrays { return {op.f(a)}; }, in);
      ops.push_back(&op);
    } catch (const Error&) {
      if (skipped) skipped->push_back(op.name);
    }
  }
  ir::Jaxpr j = trace_closed(
      [&](const Arrays& a) {
        Arrays outs;
        for (const Op* op : ops) outs.push_back(op->f(a));
        return outs;
      },
      in);
  note_prims(j);
  Arrays args;
  for (size_t i = 0; i < in.size(); ++i) args.push_back(input(in[i].dtype, in[i].shape, seed + int(i), i == 0));
  auto exe = compiler::compile(j, {.name = "registry", .donate = {}});
  Arrays got = exe->run(args);
  Arrays want = ir::eval_jaxpr(j, args);
  for (size_t k = 0; k < ops.size(); ++k) {
    const DType t = want[k].dtype();
    const double rel = ops[k]->tol == Tol::Sum ? (t == DType::Float32 ? 1e-5 : 1e-12) : 0;
    EXPECT_TRUE(close_values({got[k]}, {want[k]}, ops[k]->tol == Tol::Ulps ? 4 : 0, rel))
        << ops[k]->name << " on " << ops::aval_str(in[0]);
  }
  return exe->describe();
}

const std::vector<Shape> kShapes = {{7, 13}, {0, 5}, {}, {3, 1}};

std::vector<ops::Aval> three(DType t, const Shape& s) { return {aval(t, s), aval(t, s), aval(t, s)}; }

TEST(JitRegistry, FloatElementwise) {
  for (DType t : {DType::Float32, DType::Float64})
    for (const Shape& s : kShapes) {
      std::vector<std::string> skipped;
      std::string d = check(float_ops(t), three(t, s), 1, &skipped);
      EXPECT_TRUE(skipped.empty()) << skipped[0] << " did not trace";
      if (t == DType::Float32 && s == Shape{7, 13}) {
        EXPECT_GT(count_steps(d, "kernel"), 0) << d;
      }
    }
}

TEST(JitRegistry, IntAndBoolElementwise) {
  for (const Shape& s : kShapes) {
    std::vector<std::string> skipped;
    check(int_ops(), three(DType::Int32, s), 2, &skipped);
    check(bool_ops(), three(DType::Bool, s), 3, &skipped);
    EXPECT_TRUE(skipped.empty()) << skipped[0] << " did not trace";
  }
}

TEST(JitRegistry, SizeOneOperandsBroadcast) {
  // [7,1] op [1,13] op [7,13]: operands broadcast by index arithmetic in the kernel.
  std::vector<ops::Aval> in = {aval(DType::Float32, {7, 1}), aval(DType::Float32, {1, 13}),
                               aval(DType::Float32, {7, 13})};
  std::vector<Op> bin;
  for (const Op& op : float_ops(DType::Float32))
    if (op.name == "add" || op.name == "pow" || op.name == "max" || op.name == "atan2" ||
        op.name == "clamp" || op.name == "select_n" || op.name == "chain")
      bin.push_back(op);
  check(bin, in, 4);
}

TEST(JitRegistry, ReductionsShapesAndLibraryCalls) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Bool})
    for (const Shape& s : std::vector<Shape>{{7, 13}, {0, 5}, {5, 0}, {3, 1}}) {
      std::vector<std::string> skipped;
      check(rank2_ops(t), {aval(t, s), aval(t, s)}, 5, &skipped);
      if (s == Shape{7, 13}) {
        EXPECT_TRUE(skipped.empty()) << skipped[0] << " did not trace for " << dtype_name(t);
      }
    }
}

TEST(JitRegistry, RandomBits) {
  ir::Jaxpr j = trace_closed(
      [](const Arrays& a) -> Arrays { return {jx::random::split(a[0], 3)}; },
      {aval(DType::UInt32, {2})});
  note_prims(j);
  Array key = jx::random::PRNGKey(7);
  auto exe = compiler::compile(j, {.name = "registry_random", .donate = {}});
  Arrays args = {key};
  EXPECT_TRUE(close_values(exe->run(args), ir::eval_jaxpr(j, args), 0));
}

// Every primitive of the registry appears in some program of the tables above, or is
// listed here with the reason. ctest runs each test in its own process, so the tables are
// traced again here (tracing only; the tests above compile and compare them).
TEST(JitRegistry, EveryPrimitiveCovered) {
  auto note = [](const std::vector<Op>& all, const std::vector<ops::Aval>& in) {
    for (const Op& op : all) {
      try {
        note_prims(trace_closed([&](const Arrays& a) -> Arrays { return {op.f(a)}; }, in));
      } catch (const Error&) {  // a dtype the primitive rejects: another table covers it
      }
    }
  };
  for (DType t : {DType::Float32, DType::Float64}) note(float_ops(t), three(t, {7, 13}));
  note(int_ops(), three(DType::Int32, {7, 13}));
  note(bool_ops(), three(DType::Bool, {7, 13}));
  for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Bool})
    note(rank2_ops(t), {aval(t, {7, 13}), aval(t, {7, 13})});
  note_prims(trace_closed([](const Arrays& a) -> Arrays { return {jx::random::split(a[0], 3)}; },
                          {aval(DType::UInt32, {2})}));
  const std::set<std::string> elsewhere = {
      // Higher-order primitives built by transformations, exercised with jit by the jit
      // front end's tests (tests/jit): custom derivatives, remat, nested jit, callbacks.
      "custom_jvp_call", "custom_vjp_call", "custom_lin", "checkpoint", "pjit", "debug_callback",
      // scan is what fori_loop with static bounds lowers to when while is not used.
      "scan", "while",
      // Collectives need a bound axis: tests/distributed runs them jitted in pmap replicas.
      "psum", "pmax", "pmin", "all_gather", "reduce_scatter", "all_to_all", "ppermute", "axis_index",
      // Linear algebra (LAPACK library calls): tests/lax/linalg_test.cpp compares each one
      // jitted against eager, on well-conditioned inputs these tables do not make.
      "cholesky", "triangular_solve", "lu", "qr", "eigh", "svd", "eig", "schur"};
  for (int p = 0; p < ops::kNumPrims; ++p) {
    std::string n = ops::name(Prim(p));
    if (elsewhere.count(n)) continue;
    EXPECT_TRUE(covered().count(n)) << n << " is in no program of this test";
  }
}

}  // namespace
