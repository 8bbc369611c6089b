// optimize() over seeded random programs: small programs of broadcasting elementwise ops,
// reductions, reshapes, transposes, dtype conversions and captured constants, in float32
// and int32, laced with what the passes remove (x * 1, x + 0, transpose pairs, repeated
// subexpressions, foldable constants). Each optimized program must be valid after every
// pass, have no more equations than the original, be a fixpoint of optimize(), and give
// the same values as the original on random inputs. With control flow on, the generator
// also emits cond, scan, fori_loop and while_loop whose bodies draw steps of their own
// (nested at most two deep); those programs are compiled (loop bodies included), alone,
// under vmap and under grad, and must match the interpreter.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <random>

#include "compiler/jit_testing.h"
#include "compiler/pass_testing.h"
#include "compiler/pipeline.h"
#include "jx/control_flow.h"
#include "jx/numpy.h"
#include "jx/random.h"
#include "jx/transforms.h"
#include "jx/vmap.h"
#include "transforms/bind.h"

namespace jx::testing {
namespace {

namespace jnp = jx::numpy;
using ops::Prim;
using Arrays = std::vector<Array>;

class ProgramGenerator {
 public:
  // `allow_while` false draws a fori_loop where a while_loop would go: reverse-mode
  // differentiation does not go through while_loop (as in JAX).
  explicit ProgramGenerator(uint32_t seed, bool control = false, bool allow_while = true)
      : rng_(seed), control_(control), allow_while_(allow_while) {
    const int n_in = pick(1, 3);
    for (int i = 0; i < n_in; ++i) in_avals_.push_back(ops::Aval{random_shape(), coin() ? DType::Float32 : DType::Int32, false});
    steps_ = pick(3, 12);
    // Constants are drawn now, outside the trace, so that tracing captures them.
    for (int i = 0; i < 4; ++i) constants_.push_back(jnp::array<float>(random_floats(64)));
  }

  const std::vector<ops::Aval>& in_avals() const { return in_avals_; }

  // Traced once: draws the program as it builds it.
  Arrays operator()(const Arrays& in) {
    pool_ = in;
    // Mostly a chain (so most steps reach an output), sometimes a branch.
    for (int s = 0; s < steps_; ++s)
      pool_.push_back(step(pick(0, 9) < 7 ? pool_.back() : pool_[size_t(pick(0, int(pool_.size()) - 1))]));
    Arrays outs = {pool_.back()};
    for (int k = pick(0, 2); k > 0; --k) outs.push_back(pool_[size_t(pick(0, int(pool_.size()) - 1))]);
    return outs;
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin() { return pick(0, 1) == 1; }

  Shape random_shape() {
    Shape s;
    for (int r = pick(0, 3); r > 0; --r) s.push_back(pick(1, 4));
    return s;
  }
  std::vector<float> random_floats(int n) {
    std::vector<float> v;
    for (int i = 0; i < n; ++i) v.push_back(float(pick(-8, 8)) * 0.25f);
    return v;
  }

  static Array strong(double v, DType t) { return lax::convert_element_type(Array(v), t, false); }
  // A splat of v shaped like x with some dims left at 1 (so it broadcasts).
  Array splat_like(const Array& x, double v) {
    Shape s = x.shape();
    for (auto& d : s)
      if (coin()) d = 1;
    return lax::broadcast_in_dim(strong(v, x.dtype()), s, {});
  }
  // A captured constant shaped like x: random values (at most 64), zeros or ones.
  Array constant_like(const Array& x) {
    switch (x.size() <= 64 ? pick(0, 2) : pick(1, 2)) {
      case 0: {
        Array c = lax::slice_in_dim(constants_[size_t(pick(0, 3))], 0, x.size());
        return c.reshape(x.shape()).astype(x.dtype());
      }
      case 1: return jnp::zeros(x.shape(), x.dtype());
      default: return jnp::ones(x.shape(), x.dtype());
    }
  }
  // Another value of the pool that combines with x elementwise, or a splat.
  Array partner(const Array& x) {
    for (int tries = 0; tries < 4; ++tries) {
      const Array& y = pool_[size_t(pick(0, int(pool_.size()) - 1))];
      if (y.dtype() == x.dtype() && y.shape() == x.shape()) return y;
    }
    return splat_like(x, pick(-2, 2));
  }

  Array unary(const Array& x, int which) {
    if (x.dtype() == DType::Int32) return which % 2 ? lax::neg(x) : lax::abs(x);
    switch (which % 5) {
      case 0: return lax::sin(x);
      case 1: return lax::tanh(x);
      case 2: return lax::neg(x);
      case 3: return lax::abs(x);
      default: return lax::exp(lax::min(x, splat_like(x, 3.0)));
    }
  }

  // r made of x's type: converted, and reduced then broadcast onto x when its shape differs
  // (loop carries and cond branches must keep their types).
  static Array conform(Array r, const Array& x) {
    if (r.dtype() != x.dtype()) r = lax::convert_element_type(r, x.dtype(), false);
    if (r.shape() != x.shape()) {
      std::vector<int64_t> all;
      for (int d = 0; d < r.ndim(); ++d) all.push_back(d);
      r = lax::add(x, lax::broadcast_in_dim(lax::reduce_sum(r, all), x.shape(), {}));
    }
    return r;
  }
  // A step inside a body, of v's type; bounded (tanh) for floats so that loops stay finite.
  Array nested(const Array& v) {
    ++depth_;
    Array r = conform(depth_ <= 2 ? step(v) : unary(v, pick(0, 4)), v);
    --depth_;
    return v.dtype() == DType::Int32 ? r : lax::tanh(r);
  }
  Array control_step(const Array& x) {
    switch (pick(0, 3)) {
      case 0: {
        std::vector<int64_t> all;
        for (int d = 0; d < x.ndim(); ++d) all.push_back(d);
        Array pred = lax::gt(lax::reduce_sum(x, all), strong(0, x.dtype()));
        return lax::cond(pred, [&](const Array& v) { return nested(v); }, [&](const Array& v) { return nested(v); }, x);
      }
      case 1:
        if (x.ndim() > 0) {
          Shape row = x.shape();
          row.erase(0);
          const bool stacked = coin();
          if (coin()) {
            // Accumulators that pass_scan_hoist moves out of the loop (a sum of the xs rows
            // and a sum of reductions of body values) and an invariant product of a
            // captured constant, beside a carried state.
            using C = std::tuple<Array, Array, Array>;
            std::vector<int64_t> all;
            for (int d = 0; d + 1 < x.ndim(); ++d) all.push_back(d);
            auto [c, ys] = lax::scan(
                [&](const C& c, const Array& r) {
                  Array n = nested(lax::add(std::get<0>(c), r));
                  Array k = lax::mul(constant_like(r), splat_like(r, 2));
                  Array total = lax::add(std::get<2>(c), lax::reduce_sum(lax::mul(n, k), all));
                  return std::make_pair(C(n, lax::add(std::get<1>(c), r), total), n);
                },
                C(lax::broadcast_in_dim(strong(0, x.dtype()), row, {}),
                  lax::broadcast_in_dim(strong(0, x.dtype()), row, {}),
                  lax::broadcast_in_dim(strong(0, x.dtype()), {}, {})),
                x, {.reverse = coin()});
            if (stacked) return ys;
            Array sum = lax::add(std::get<0>(c), std::get<1>(c));
            return conform(lax::add(sum, lax::broadcast_in_dim(std::get<2>(c), row, {})), x);
          }
          auto [c, ys] = lax::scan(
              [&](const Array& c, const Array& r) {
                Array n = nested(lax::add(c, r));
                return std::make_pair(n, lax::mul(n, r));
              },
              lax::broadcast_in_dim(strong(0, x.dtype()), row, {}), x, {.reverse = coin()});
          return stacked ? ys : conform(c, x);
        }
        [[fallthrough]];
      case 2:
        return lax::fori_loop(0, pick(0, 4), [&](const Array&, const Array& v) { return nested(v); }, x);
      default: {
        if (!allow_while_)
          return lax::fori_loop(0, pick(0, 3), [&](const Array&, const Array& v) { return nested(v); }, x);
        const int trips = pick(0, 3);
        auto [i, v] = lax::while_loop(
            [&](const std::tuple<Array, Array>& c) { return lax::lt(std::get<0>(c), strong(trips, DType::Int32)); },
            [&](const std::tuple<Array, Array>& c) {
              return std::make_tuple(lax::add(std::get<0>(c), strong(1, DType::Int32)), nested(std::get<1>(c)));
            },
            std::make_tuple(lax::broadcast_in_dim(strong(0, DType::Int32), {}, {}), x));
        return v;
      }
    }
  }

  Array step(const Array& x) {
    const bool is_int = x.dtype() == DType::Int32;
    switch (pick(0, control_ ? 15 : 12)) {
      case 13:
      case 14:
      case 15:
        return control_step(x);
      case 12: {  // equations that differ only in their params (CSE must not merge them)
        if (x.ndim() == 0 || is_int) return lax::add(lax::integer_pow(x, 2), lax::integer_pow(x, 3));
        return lax::sub(lax::rev(x, {0}), lax::rev(x, {x.ndim() - 1}));
      }
      case 0: {
        int which = pick(0, 4);
        Array u = unary(x, which);
        return coin() ? lax::add(u, unary(x, which)) : u;  // a repeated subexpression
      }
      case 1: {
        Array y = partner(x);
        switch (pick(0, 3)) {
          case 0: return lax::add(x, y);
          case 1: return lax::sub(y, x);
          case 2: return lax::mul(x, y);
          default: return lax::max(x, y);
        }
      }
      case 2:  // identities the simplifier removes
        switch (pick(0, 5)) {
          case 0: return lax::mul(splat_like(x, 1.0), x);
          case 1: return lax::add(x, splat_like(x, 0.0));
          case 2: return lax::sub(x, splat_like(x, 0.0));
          case 3: return is_int ? lax::mul(x, splat_like(x, 0.0)) : lax::div(x, splat_like(x, 1.0));
          case 4: return bind1(Prim::ConvertElementType, {x}, {{"new_dtype", x.dtype()}, {"weak_type", false}});
          default: return lax::select_n(lax::lt(x, splat_like(x, 0.0)), {x, x});
        }
      case 3: {  // shape ops that are identities or chains
        if (x.ndim() >= 2) {
          std::vector<int64_t> p(size_t(x.ndim()));
          for (size_t i = 0; i < p.size(); ++i) p[i] = int64_t((i + 1) % p.size());
          Array t = lax::transpose(x, p);
          return coin() ? lax::transpose(lax::transpose(t, p), p) : lax::transpose(t, p);
        }
        Shape s = x.shape();
        s.insert(0, 1);
        return lax::squeeze(lax::reshape(lax::reshape(x, s), s), {0});
      }
      case 4: {  // reduction over a random subset of axes
        std::vector<int64_t> axes;
        for (int d = 0; d < x.ndim(); ++d)
          if (coin()) axes.push_back(d);
        return coin() ? lax::reduce_sum(x, axes) : lax::reduce_max(x, axes);
      }
      case 5:
        return x.ndim() > 0 && (coin() || x.size() > 64) ? lax::reshape(x, {x.size()}) : lax::broadcast_in_dim(x, [&] {
          Shape s = x.shape();
          s.insert(0, 2);
          return s;
        }(), [&] {
          std::vector<int64_t> d;
          for (int i = 0; i < x.ndim(); ++i) d.push_back(i + 1);
          return d;
        }());
      case 6: {  // a captured constant
        Array c = constant_like(x);
        return coin() ? lax::add(x, c) : lax::mul(c, x);
      }
      case 7:  // foldable: arithmetic on splats and literals only
        return lax::add(x, lax::mul(splat_like(x, pick(-2, 2)), splat_like(x, pick(1, 3))));
      case 8:
        return lax::convert_element_type(x, is_int ? DType::Float32 : DType::Int32);
      case 9: {
        Array neg = lax::neg(x);
        return lax::select_n(lax::lt(x, splat_like(x, 0.0)), {x, lax::neg(neg)});
      }
      case 10:
        return is_int ? lax::div(x, splat_like(x, pick(1, 3))) : lax::div(x, lax::add(lax::abs(x), splat_like(x, 1.0)));
      default: {
        Array b = lax::broadcast_in_dim(x, x.shape(), [&] {
          std::vector<int64_t> d;
          for (int i = 0; i < x.ndim(); ++i) d.push_back(i);
          return d;
        }());
        return lax::reshape(b, x.shape());
      }
    }
  }

  std::mt19937 rng_;
  bool control_ = false;
  bool allow_while_ = true;
  int depth_ = 0;
  std::vector<ops::Aval> in_avals_;
  int steps_ = 0;
  Arrays constants_;
  Arrays pool_;
};

std::vector<Array> random_args(const std::vector<ops::Aval>& avals, uint32_t seed) {
  std::vector<Array> args;
  Array key = random::PRNGKey(seed);
  for (const ops::Aval& a : avals) {
    auto [k1, k2] = random::split<2>(key);
    key = k1;
    if (a.dtype == DType::Int32) args.push_back(random::randint(k2, a.shape, -5, 6));
    else args.push_back(random::uniform(k2, a.shape, a.dtype, -2.0, 2.0));
  }
  return args;
}

TEST(RandomPrograms, OptimizePreservesValues) {
  ::setenv("JX_VERIFY_PASSES", "1", 1);  // ir::verify and the signature after every pass
  int shrunk = 0;
  for (uint32_t seed = 0; seed < 200; ++seed) {
    SCOPED_TRACE(::testing::Message() << "program seed " << seed);
    ProgramGenerator gen(seed);
    ir::Jaxpr j = closed_jaxpr([&](const Arrays& in) { return gen(in); }, gen.in_avals());
    ir::Jaxpr o;
    ASSERT_NO_THROW(o = compiler::optimize(j, "random")) << ir::to_string(j);
    EXPECT_LE(o.eqns.size(), j.eqns.size()) << ir::to_string(j) << "\n" << ir::to_string(o);
    shrunk += o.eqns.size() < j.eqns.size();
    EXPECT_EQ(ir::to_string(compiler::optimize(o, "again")), ir::to_string(o));
    // Folding evaluates transcendental functions of splats on 0-d operands, which may
    // round differently in the last place from the vectorized kernel.
    std::vector<Array> args = random_args(gen.in_avals(), seed);
    EXPECT_TRUE(same_values(ir::eval_jaxpr(o, args), ir::eval_jaxpr(j, args), 1e-6))
        << ir::to_string(j) << "\n" << ir::to_string(o);
  }
  ::unsetenv("JX_VERIFY_PASSES");
  EXPECT_GT(shrunk, 150);  // the generator does give the passes work
}

// Ten programs with control flow drawn from consecutive seeds, their inputs laid end to
// end, so that one compiled program (one build) checks all ten.
struct ProgramBatch {
  std::vector<std::unique_ptr<ProgramGenerator>> gens;
  std::vector<ops::Aval> in;
  std::vector<size_t> first;  // gens[k] reads in[first[k]], ..., in[first[k + 1] - 1]

  // `batch` > 0 gives every input a leading axis of that size (for vmap).
  explicit ProgramBatch(uint32_t seed, bool allow_while = true, int64_t batch = 0) {
    for (uint32_t k = 0; k < 10; ++k) {
      gens.push_back(std::make_unique<ProgramGenerator>(seed + k, true, allow_while));
      first.push_back(in.size());
      for (ops::Aval a : gens.back()->in_avals()) {
        if (batch > 0) a.shape.insert(0, batch);
        in.push_back(a);
      }
    }
    first.push_back(in.size());
  }

  // One closed jaxpr: the outputs of run(program k, its inputs), k = 0..9, in order.
  ir::Jaxpr trace(const std::function<Arrays(ProgramGenerator&, const Arrays&)>& run) const {
    return closed_jaxpr(
        [&](const Arrays& a) {
          Arrays outs;
          for (size_t k = 0; k < gens.size(); ++k) {
            Arrays r = run(*gens[k], Arrays(a.begin() + long(first[k]), a.begin() + long(first[k + 1])));
            outs.insert(outs.end(), r.begin(), r.end());
          }
          return outs;
        },
        in);
  }
};

int count_control(const ir::Jaxpr& j) {
  int n = 0;
  for (const ir::Eqn& e : j.eqns) n += e.prim == Prim::Scan || e.prim == Prim::While || e.prim == Prim::Cond;
  return n;
}

// j compiled (loop bodies included) against the interpreter running it op by op; float
// sums may differ in order (rel 1e-5). Returns the interpreter's results.
Arrays expect_compiled_matches_interpreter(const ir::Jaxpr& j, const Arrays& args, const char* name) {
  std::shared_ptr<const compiler::Executable> exe;
  EXPECT_NO_THROW(exe = compiler::compile(j, {.name = name, .donate = {}}));
  Arrays want = ir::eval_jaxpr(j, args);
  if (exe) {
    EXPECT_TRUE(close_values(exe->run(args), want, 4, 1e-5)) << exe->describe();
  }
  return want;
}

Arrays run_program(ProgramGenerator& g, const Arrays& x) { return g(x); }

TEST(RandomPrograms, CompiledControlFlowMatchesInterpreter) {
  // Programs with loops and conds, ten per compiled program: optimized (verified after
  // every pass), compiled with their bodies, and run against the interpreter on the
  // original jaxpr.
  ::setenv("JX_VERIFY_PASSES", "1", 1);
  int with_control = 0;
  for (uint32_t batch = 0; batch < 8; ++batch) {
    ProgramBatch b(1000 + batch * 10);
    ir::Jaxpr j = b.trace(run_program);
    with_control += count_control(j);
    SCOPED_TRACE(::testing::Message() << "batch " << batch << "\n" << ir::to_string(j));
    expect_compiled_matches_interpreter(j, random_args(b.in, batch), "random_control");
  }
  ::unsetenv("JX_VERIFY_PASSES");
  EXPECT_GT(with_control, 40);  // the generator does emit control flow
}

// Programs with control flow (nested up to two deep) under vmap and under grad, ten per
// compiled program: the transformed jaxpr, compiled with its bodies, against the
// interpreter running the same jaxpr op by op (jit against eager); and the vmapped
// results against the same programs run one example at a time.
TEST(RandomPrograms, CompiledControlFlowUnderVmapAndGrad) {
  ::setenv("JX_VERIFY_PASSES", "1", 1);
  constexpr int64_t kBatch = 3;
  int vmapped = 0, differentiated = 0;
  for (uint32_t batch = 0; batch < 4; ++batch) {
    // vmap: every input gets a leading batch axis; the program sees one example.
    {
      ProgramBatch b(2000 + batch * 10, true, kBatch);
      ir::Jaxpr j = b.trace([](ProgramGenerator& g, const Arrays& x) {
        return jx::vmap([&](const Arrays& e) { return g(e); })(x);
      });
      vmapped += count_control(j);
      SCOPED_TRACE(::testing::Message() << "vmap batch " << batch << "\n" << ir::to_string(j));
      const Arrays args = random_args(b.in, 100 + batch);
      const Arrays want = expect_compiled_matches_interpreter(j, args, "random_control_vmap");
      // vmap against a loop: generators of the same seeds draw the same programs (they see
      // the same per-example types), traced without vmap and run on each example.
      ir::Jaxpr plain = ProgramBatch(2000 + batch * 10).trace(run_program);
      auto example = [](const Array& x, int64_t i) { return lax::squeeze(lax::slice_in_dim(x, i, i + 1), {0}); };
      for (int64_t i = 0; i < kBatch; ++i) {
        Arrays xi, got;
        for (const Array& x : args) xi.push_back(example(x, i));
        for (const Array& y : want) got.push_back(example(y, i));
        EXPECT_TRUE(close_values(got, ir::eval_jaxpr(plain, xi), 4, 1e-5)) << "example " << i;
      }
    }
    // grad of the sum of the float32 outputs w.r.t. the float32 inputs (int32 inputs are
    // held fixed); no while_loop, which reverse mode cannot go through.
    {
      ProgramBatch b(3000 + batch * 10, false);
      ir::Jaxpr j = b.trace([](ProgramGenerator& g, const Arrays& args) {
        Arrays floats;
        for (const Array& x : args)
          if (x.dtype() == DType::Float32) floats.push_back(x);
        auto loss = [&](const Arrays& f) {
          Arrays x = args;
          for (size_t i = 0, n = 0; i < x.size(); ++i)
            if (x[i].dtype() == DType::Float32) x[i] = f[n++];
          Array total = jnp::zeros({}, DType::Float32);
          for (const Array& o : g(x))
            if (o.dtype() == DType::Float32) total = total + o.sum();
          return total;
        };
        auto [v, grads] = jx::value_and_grad(loss)(floats);
        Arrays outs = {v};
        outs.insert(outs.end(), grads.begin(), grads.end());
        return outs;
      });
      differentiated += count_control(j);
      SCOPED_TRACE(::testing::Message() << "grad batch " << batch << "\n" << ir::to_string(j));
      expect_compiled_matches_interpreter(j, random_args(b.in, 200 + batch), "random_control_grad");
    }
  }
  ::unsetenv("JX_VERIFY_PASSES");
  // The transformed programs do keep loops and conds (a vmapped cond on a batched
  // predicate becomes a select; the backward pass of a scan is a reverse scan).
  EXPECT_GT(vmapped, 20);
  EXPECT_GT(differentiated, 20);
}

}  // namespace
}  // namespace jx::testing
