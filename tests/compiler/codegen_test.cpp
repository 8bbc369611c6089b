// Code generation: the shape of the generated source (headers, loop forms, simd
// reductions, literals), and compiled-vs-interpreted values over seeded random programs
// of broadcasting elementwise ops, reductions, reshapes, transposes and conversions.
#include "compiler/codegen.h"

#include <random>

#include "compiler/jit_testing.h"
#include "compiler/pipeline.h"
#include "support/str.h"

namespace {

using namespace jx;
using namespace jx::testing;
namespace jnp = jx::numpy;
using ops::Arrays;

std::string source_of(const tr::FlatFn& f, const std::vector<ops::Aval>& in) {
  ir::Jaxpr j = compiler::optimize(trace_closed(f, in), "codegen_test");
  return compiler::generate_source(j, compiler::fuse(j), "codegen_test");
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(Codegen, SourceIncludesNoJxHeader) {
  std::string src = source_of([](const Arrays& a) -> Arrays { return {lax::tanh(a[0])}; },
                              {aval(DType::Float32, {100})});
  EXPECT_EQ(src.find("#include \"jx"), std::string::npos);
  EXPECT_EQ(src.find("#include \""), std::string::npos);
  for (const char* h : {"<cmath>", "<cstdint>", "<cstring>"}) EXPECT_NE(src.find(h), std::string::npos) << h;
  EXPECT_NE(src.find("extern \"C\" {"), std::string::npos);
  EXPECT_NE(src.find("void jx_kernel_0(const void* const* jx_in, void* const* jx_out)"), std::string::npos);
  EXPECT_NE(src.find("omp declare simd notinbranch"), std::string::npos);  // libmvec, no -ffast-math
}

TEST(Codegen, FlatLoopsAreSimdAndLargeOnesParallel) {
  std::string small = source_of([](const Arrays& a) -> Arrays { return {lax::exp(a[0])}; },
                                {aval(DType::Float32, {1000})});
  // Whole 16-lane blocks; the last 8 elements in a padded block (see below).
  EXPECT_NE(small.find("#pragma omp simd\n  for (int64_t i = 0; i < 992LL; ++i)"), std::string::npos) << small;
  EXPECT_EQ(small.find("parallel"), std::string::npos);
  std::string big = source_of([](const Arrays& a) -> Arrays { return {lax::exp(a[0])}; },
                              {aval(DType::Float32, {1 << 20})});
  EXPECT_NE(big.find("#pragma omp parallel for schedule(static)\n  for (int64_t jx_c = 0; jx_c < 1048576LL; jx_c += 8192LL)"),
            std::string::npos) << big;
  EXPECT_NE(big.find("#pragma omp simd\n    for (int64_t i = jx_c; i < jx_e; ++i)"), std::string::npos) << big;
}

TEST(Codegen, BroadcastReadsUseRowAndColumnIndices) {
  std::string src = source_of([](const Arrays& a) -> Arrays { return {lax::add(a[0], a[1])}; },
                              {aval(DType::Float32, {6, 1}), aval(DType::Float32, {1, 20})});
  EXPECT_NE(src.find("for (int64_t o = 0; o < 6LL; ++o)"), std::string::npos) << src;
  EXPECT_NE(src.find("for (int64_t i1 = 0; i1 < 16LL; ++i1)"), std::string::npos) << src;
  EXPECT_NE(src.find("jx_base = o * 20LL + 16LL, jx_count = 4LL"), std::string::npos) << src;
  EXPECT_NE(src.find("in0[i0]"), std::string::npos) << src;
  EXPECT_NE(src.find("in1[i1]"), std::string::npos) << src;
}

TEST(Codegen, SoftmaxPhasesAreSimdReductions) {
  auto softmax = [](const Arrays& a) -> Arrays {
    Array m = lax::broadcast_in_dim(lax::reduce_max(a[0], {1}), {4, 50}, {0});
    Array e = lax::exp(lax::sub(a[0], m));
    return {lax::div(e, lax::broadcast_in_dim(lax::reduce_sum(e, {1}), {4, 50}, {0}))};
  };
  std::string src = source_of(softmax, {aval(DType::Float32, {4, 50})});
  EXPECT_EQ(count(src, "void jx_kernel_"), 1) << src;
  EXPECT_EQ(count(src, "reduction(max:"), 1) << src;  // phase 1
  EXPECT_EQ(count(src, "reduction(+:"), 1) << src;    // phase 2
  EXPECT_EQ(count(src, "for (int64_t r = 0; r < 50LL; ++r)"), 3) << src;  // + the output pass
  // exp(x - max) is computed once, by the sum's phase, and kept for the output pass in a
  // row-local array (it was computed in both).
  const std::string kernel = src.substr(src.find("void jx_kernel_0"));
  EXPECT_EQ(count(kernel, "std::exp("), 1) << kernel;
  EXPECT_EQ(count(kernel, "_r[50];"), 1) << kernel;
}

TEST(Codegen, SpecialLiteralsRoundTrip) {
  // -0.0, infinities, NaN and a value that decimal printing would round.
  auto f = [](const Arrays& a) -> Arrays {
    const Shape& s = a[0].shape();
    auto splat = [&](float v) { return lax::broadcast_in_dim(Array(v), s, {}); };
    Array x = a[0];
    return {lax::mul(x, splat(-0.0f)), lax::max(x, splat(-INFINITY)), lax::min(x, splat(INFINITY)),
            lax::add(x, splat(NAN)), lax::mul(x, splat(0.1f)),
            lax::add(lax::convert_element_type(x, DType::Int32),
                     lax::broadcast_in_dim(lax::convert_element_type(Array(-2147483647 - 1), DType::Int32), s, {}))};
  };
  ir::Jaxpr j = trace_closed(f, {aval(DType::Float32, {17})});
  Array x = input(DType::Float32, {17}, 3, true);
  auto exe = compiler::compile(j, {.name = "literals", .donate = {}});
  Arrays got = exe->run(std::vector<Array>{x}), want = ir::eval_jaxpr(j, std::vector<Array>{x});
  EXPECT_TRUE(close_values(got, want, 0));
  // The sign of zero survives: x * -0.0 for x > 0 is -0.0.
  std::vector<float> z = got[0].to_vector<float>(), xs = x.to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i)
    if (xs[i] > 0) {
      EXPECT_TRUE(std::signbit(z[i])) << i;
    }
}

// ---- random programs ----

class RandomProgram {
 public:
  explicit RandomProgram(uint32_t seed) : rng_(seed) {
    for (int i = pick(1, 3); i > 0; --i) {
      Shape s;
      for (int r = pick(0, 3); r > 0; --r) s.push_back(pick(1, 5));
      in_.push_back(aval(coin() ? DType::Float32 : DType::Int32, s));
    }
    steps_ = pick(3, 10);
  }
  const std::vector<ops::Aval>& in_avals() const { return in_; }

  Arrays operator()(const Arrays& in) {
    Arrays pool = in;
    for (int s = 0; s < steps_; ++s) pool.push_back(step(pool, pool[size_t(pick(0, int(pool.size()) - 1))]));
    return {pool.back(), pool[size_t(pick(int(in.size()), int(pool.size()) - 1))]};
  }

 private:
  std::mt19937 rng_;
  std::vector<ops::Aval> in_;
  int steps_ = 0;
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin() { return pick(0, 1) == 1; }

  Array step(const Arrays& pool, const Array& x) {
    const bool fl = is_floating(x.dtype());
    switch (pick(0, 11)) {
      case 0: return fl ? jnp::tanh(x) : jnp::negative(x);
      case 1: return fl ? jnp::exp(jnp::negative(jnp::abs(x))) : jnp::abs(x);
      case 2: return x * 1.5 + 0.25;
      case 3: {  // binary with broadcasting against another pool value
        const Array& y = pool[size_t(pick(0, int(pool.size()) - 1))];
        if (!broadcastable(x.shape(), y.shape())) return jnp::square(x);
        switch (pick(0, 3)) {
          case 0: return jnp::add(x, y);
          case 1: return jnp::multiply(x, y);
          case 2: return jnp::maximum(x, y);
          default: return jnp::where(jnp::greater(x, y), x, y);
        }
      }
      case 4: return x.ndim() ? jnp::sum(x, pick(0, x.ndim() - 1), coin()) : x * 2.0;
      case 5: return x.ndim() ? jnp::max(x, pick(0, x.ndim() - 1), coin()) : x - 1.0;
      case 6: return x.reshape({-1});
      case 7: return x.ndim() >= 2 ? x.T() : x;
      case 8: return fl ? x.astype(DType::Int32) : x.astype(DType::Float32);
      case 9: {  // softmax-like row normalization
        if (!fl || x.ndim() == 0) return x;
        Array m = jnp::max(x, -1, true);
        Array e = jnp::exp(x - m);
        return e / jnp::sum(e, -1, true);
      }
      case 10: return x.ndim() ? jnp::mean(x, pick(0, x.ndim() - 1)) : x;
      default: return jnp::expand_dims(x, 0) + jnp::zeros({2}, x.dtype()).reshape({2, 1}).reshape(
                                                   broadcast_shape(x.ndim() + 1));
    }
  }
  static Shape broadcast_shape(int rank) {
    Shape s(size_t(rank), 1);
    s[0] = 2;
    return s;
  }
  static bool broadcastable(const Shape& a, const Shape& b) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      int64_t x = a[a.size() - 1 - i], y = b[b.size() - 1 - i];
      if (x != y && x != 1 && y != 1) return false;
    }
    return true;
  }
};

TEST(Codegen, RandomProgramsMatchTheInterpreter) {
  // 160 programs, 40 per compiled executable (independent outputs: one compiler run each).
  for (uint32_t batch = 0; batch < 4; ++batch) {
    std::vector<RandomProgram> progs;
    std::vector<ops::Aval> in;
    std::vector<size_t> first_in;
    for (uint32_t k = 0; k < 40; ++k) {
      progs.emplace_back(batch * 40 + k);
      first_in.push_back(in.size());
      for (const ops::Aval& a : progs.back().in_avals()) in.push_back(a);
    }
    ir::Jaxpr j = trace_closed(
        [&](const Arrays& a) {
          Arrays outs;
          for (size_t k = 0; k < progs.size(); ++k) {
            Arrays mine(a.begin() + std::ptrdiff_t(first_in[k]),
                        a.begin() + std::ptrdiff_t(first_in[k] + progs[k].in_avals().size()));
            for (Array& o : progs[k](mine)) outs.push_back(o);
          }
          return outs;
        },
        in);
    Arrays args;
    for (size_t i = 0; i < in.size(); ++i) args.push_back(input(in[i].dtype, in[i].shape, int(i)));
    auto exe = compiler::compile(j, {.name = "random_programs", .donate = {}});
    Arrays got = exe->run(args), want = ir::eval_jaxpr(j, args);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(close_values({got[i]}, {want[i]}, 0, 2e-6))
          << "batch " << batch << " output " << i << "\n" << exe->describe();
  }
}


// ---- remainders: jit equals eager bit for bit on transcendentals ----

// Every remainder length of a 16-lane loop (n = 1..40 covers body 0, 16 and 32), flat and
// with broadcast rows (short rows and a row tail), float32 and float64: the compiled
// kernel must call the same vector libm variants as the eager kernels for every element,
// so the results are identical, not merely close.
Array splat_like(const Array& x, float v) {
  return lax::broadcast_in_dim(lax::convert_element_type(Array(v), x.dtype()), x.shape(), {});
}

TEST(Codegen, TranscendentalsEqualEagerAtEveryRemainder) {
  for (DType t : {DType::Float32, DType::Float64}) {
    std::vector<ops::Aval> in;
    for (int64_t n = 1; n <= 40; ++n) in.push_back(aval(t, {n}));
    for (int64_t c = 1; c <= 40; ++c) {
      in.push_back(aval(t, {3, c}));
      in.push_back(aval(t, {c}));
    }
    auto f = [](const Arrays& a) -> Arrays {
      Arrays outs;
      for (size_t k = 0; k < 40; ++k) {
        const Array& x = a[k];
        Array pos = lax::add(lax::abs(x), splat_like(x, 0.25f));
        outs.push_back(lax::exp(x));
        outs.push_back(lax::log(pos));
        outs.push_back(lax::tanh(lax::sin(x)));
        outs.push_back(lax::add(lax::log1p(pos), lax::expm1(x)));
        outs.push_back(lax::pow(pos, x));
        outs.push_back(lax::atan2(x, pos));
      }
      for (size_t k = 0; k < 40; ++k) {
        const Array& x = a[40 + 2 * k];
        const Array& y = a[41 + 2 * k];
        Array yb = lax::broadcast_in_dim(y, x.shape(), {1});
        outs.push_back(lax::exp(lax::add(x, yb)));
        outs.push_back(lax::log(lax::add(lax::abs(x), lax::abs(lax::add(yb, splat_like(yb, 0.5f))))));
        // An iota and a bool output beside the transcendental.
        Array io = lax::convert_element_type(lax::broadcasted_iota(DType::Int32, x.shape(), 1), x.dtype());
        outs.push_back(lax::cos(lax::mul(x, io)));
        outs.push_back(lax::gt(lax::exp(x), yb));
      }
      return outs;
    };
    ir::Jaxpr j = trace_closed(f, in);
    Arrays args;
    for (size_t i = 0; i < in.size(); ++i) args.push_back(input(in[i].dtype, in[i].shape, int(i)));
    auto exe = compiler::compile(j, {.name = "remainders", .donate = {}});
    Arrays got = exe->run(args), want = ir::eval_jaxpr(j, args);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      // float64: 1 ulp. On an Intel Xeon (2026-12-02) the float64 log of a few remainder
      // elements differed by 1 ulp between the compiled kernel and the eager one (libmvec
      // picks its variants by CPU); a remainder bug gives garbage, not an ulp.
      EXPECT_TRUE(close_values({got[i]}, {want[i]}, t == DType::Float64 ? 1 : 0))
          << dtype_name(t) << " output " << i << " of shape " << got[i].repr();
  }
}

TEST(Codegen, LoopsRunWholeVectorsAndPadTheRemainder) {
  auto exp1 = [](const Arrays& a) -> Arrays { return {lax::exp(a[0])}; };
  std::string src = source_of(exp1, {aval(DType::Float32, {1000})});
  EXPECT_NE(src.find("for (int64_t i = 0; i < 992LL; ++i)"), std::string::npos) << src;
  EXPECT_NE(src.find("jx_base = 992LL, jx_count = 8LL"), std::string::npos) << src;
  std::string whole = source_of(exp1, {aval(DType::Float32, {1024})});
  EXPECT_EQ(whole.find("jx_base"), std::string::npos) << whole;
  // Rows of 3: the whole kernel in padded 16-lane blocks.
  auto add_rows = [](const Arrays& a) -> Arrays {
    return {lax::exp(lax::add(a[0], lax::broadcast_in_dim(a[1], {100, 3}, {1})))};
  };
  std::string rows = source_of(add_rows, {aval(DType::Float32, {100, 3}), aval(DType::Float32, {3})});
  EXPECT_NE(rows.find("for (int64_t jx_b = 0; jx_b < 300LL; jx_b += 16LL)"), std::string::npos) << rows;
}

// Reductions whose kept dims are innermost (a bias gradient, BatchNorm's statistics over
// N, H, W of NHWC): the rows are the outer loop, the kept (contiguous) columns the simd
// loop, one accumulator per column.
TEST(Codegen, ColumnReductionsLoopOverRowsOutside) {
  auto col_sum = [](const Arrays& a) -> Arrays { return {lax::reduce_sum(a[0], {0})}; };
  std::string small = source_of(col_sum, {aval(DType::Float32, {300, 70})});
  EXPECT_NE(small.find("float jx_a1[70];"), std::string::npos) << small;
  // Rows in groups of 4, combined in registers and then into the block's sums (one
  // update of each per group); blocks of 64 rows end between groups; the rest one by one.
  EXPECT_NE(small.find("for (; jx_rg + 4LL <= 300LL; jx_rg += 4LL)"), std::string::npos) << small;
  EXPECT_EQ(count(small, "const int64_t r = jx_rg + "), 4) << small;
  EXPECT_EQ(count(small, "jx_b1[jx_c] += (float)jx_g1;"), 1) << small;
  EXPECT_NE(small.find("if ((jx_rg + 3LL - 0) % 64LL == 63LL || jx_rg + 4LL == 300LL)"), std::string::npos) << small;
  EXPECT_NE(small.find("for (int64_t r = jx_rg; r < 300LL; ++r)"), std::string::npos) << small;
  EXPECT_NE(small.find("if ((r - 0) % 64LL == 63LL || r + 1 == 300LL)"), std::string::npos) << small;
  EXPECT_NE(small.find("for (int64_t jx_c = 0; jx_c < 70LL; ++jx_c)"), std::string::npos) << small;
  EXPECT_NE(small.find("in0[r*70LL + jx_c]"), std::string::npos) << small;  // contiguous per row
  EXPECT_EQ(small.find("parallel"), std::string::npos) << small;
  // BatchNorm's statistics over a large NHWC array, 64 channels: one block of columns,
  // whose rows every thread shares; the partials combine after the phase.
  auto stats = [](const Arrays& a) -> Arrays {  // E[x] and E[x^2] - E[x]^2, unscaled
    Array m = lax::reduce_sum(a[0], {0, 1, 2});
    return {m, lax::sub(lax::reduce_sum(lax::mul(a[0], a[0]), {0, 1, 2}), lax::mul(m, m))};
  };
  std::string bn = source_of(stats, {aval(DType::Float32, {32, 8, 8, 64})});
  EXPECT_EQ(count(bn, "void jx_kernel_"), 1) << bn;
  EXPECT_NE(bn.find("omp_get_thread_num()"), std::string::npos) << bn;
  EXPECT_NE(bn.find("#pragma omp barrier"), std::string::npos) << bn;
  EXPECT_NE(bn.find("const int64_t jx_r0 = 2048LL * jx_t / jx_nt"), std::string::npos) << bn;
  // Many blocks of columns: whole blocks go to threads.
  std::string many = source_of([](const Arrays& a) -> Arrays { return {lax::reduce_max(a[0], {1})}; },
                               {aval(DType::Float32, {64, 40, 100})});
  EXPECT_NE(many.find("#pragma omp parallel for schedule(static)\n  for (int64_t jx_u = 0; jx_u < 64LL; ++jx_u)"),
            std::string::npos) << many;
  EXPECT_EQ(many.find("barrier"), std::string::npos) << many;
  // Wide and short (96 rows of 3072 columns): not one block whose few rows the threads
  // share, but narrower blocks that go to threads whole, with no partials to combine.
  std::string wide = source_of(col_sum, {aval(DType::Float32, {96, 3072})});
  EXPECT_NE(wide.find("#pragma omp parallel for schedule(static)\n  for (int64_t jx_u = 0; jx_u < 8LL; ++jx_u)"),
            std::string::npos) << wide;
  EXPECT_NE(wide.find("jx_c0 = jx_u % 8LL * 384LL;"), std::string::npos) << wide;
  EXPECT_EQ(wide.find("barrier"), std::string::npos) << wide;
  // Blocks stay at least 256 columns wide: [128, 1000] is 4 blocks, the last of 232.
  std::string narrow = source_of(col_sum, {aval(DType::Float32, {128, 1000})});
  EXPECT_NE(narrow.find("for (int64_t jx_u = 0; jx_u < 4LL; ++jx_u)"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("jx_c0 = jx_u % 4LL * 256LL;"), std::string::npos) << narrow;
  // Many rows keep the shared rows: [1000, 1000] is one block split by rows.
  std::string tall = source_of(col_sum, {aval(DType::Float32, {1000, 1000})});
  EXPECT_NE(tall.find("const int64_t jx_r0 = 1000LL * jx_t / jx_nt"), std::string::npos) << tall;
}

TEST(Codegen, FullReductionUsesEveryThread) {
  std::string src = source_of([](const Arrays& a) -> Arrays { return {lax::reduce_sum(a[0], {0, 1})}; },
                              {aval(DType::Float32, {512, 512})});
  EXPECT_NE(src.find("omp_get_thread_num()"), std::string::npos) << src;
  // Each thread's share: whole blocks of 64 lanes, then the rest in one simd reduction.
  EXPECT_NE(src.find("const int64_t jx_rb0 = jx_r0 + (jx_r1 - jx_r0) / 64LL * 64LL;"), std::string::npos) << src;
  EXPECT_NE(src.find("for (int64_t jx_b = jx_r0; jx_b < jx_rb0; jx_b += 64LL)"), std::string::npos) << src;
  EXPECT_NE(src.find("for (int64_t r = jx_rb0; r < jx_r1; ++r)"), std::string::npos) << src;
  EXPECT_NE(src.find("if (jx_t == 0) if (o == 0) out0[0]"), std::string::npos) << src;
}

// Every fusible reduction over each axis subset that keeps the last dim (the column
// form), small and large enough for threads (split rows, or blocks of columns when the
// columns exceed one block or the rows are few), against the interpreter; float sums
// within a relative 1e-5 (another summation order), everything else exact. NaN and
// infinities among the floats.
TEST(Codegen, ColumnReductionsMatchTheInterpreter) {
  using Red = Array (*)(const Array&, const std::vector<int64_t>&);
  struct Op {
    const char* name;
    Red fn;
    int input;  // 0: f32, 1: f64, 2: i32, 3: bool, 4: u8
  };
  const Op ops_[] = {{"sum", lax::reduce_sum, 0}, {"max", lax::reduce_max, 0}, {"min", lax::reduce_min, 0},
                     {"prod", lax::reduce_prod, 1}, {"sum", lax::reduce_sum, 2}, {"max", lax::reduce_max, 2},
                     {"and", lax::reduce_and, 3},  {"or", lax::reduce_or, 3},   {"min", lax::reduce_min, 4}};
  const DType types[] = {DType::Float32, DType::Float64, DType::Int32, DType::Bool, DType::UInt8};
  const std::vector<int64_t> subsets[] = {{0}, {1}, {0, 1}};
  // One program per shape, every reduction of it an output (one compile per shape).
  // {64, 20, 60} over axis 0: wide and short, in blocks of 256 columns and a last of 176.
  // {41, 37, 64} over (0, 1): 1517 rows shared by the threads, a share starting at a row
  // that is not a multiple of the group of 4 and ending with a partial group.
  for (const Shape& s :
       {Shape{5, 7, 19}, Shape{40, 30, 70}, Shape{3, 11, 3000}, Shape{64, 20, 60}, Shape{41, 37, 64}}) {
    auto f = [&](const Arrays& a) -> Arrays {
      Arrays out;
      for (const Op& op : ops_)
        for (const auto& axes : subsets) {
          // A fused producer, so that the reduction reads a computed value.
          const Array& x = a[size_t(op.input)];
          out.push_back(op.fn(op.input == 3 ? lax::bitwise_not(x) : lax::max(x, lax::neg(x)), axes));
        }
      return out;
    };
    std::vector<ops::Aval> in;
    Arrays args;
    for (int k = 0; k < 5; ++k) {
      in.push_back(aval(types[k], s));
      args.push_back(input(types[k], s, 40 + k, true));
    }
    args[1] = lax::exp(args[1] * 0.01);  // products of f64 near 1
    ir::Jaxpr j = trace_closed(f, in);
    auto exe = compiler::compile(j, {.name = "codegen_test", .donate = {}});
    Arrays got = exe->run(args), want = ir::eval_jaxpr(j, args);
    EXPECT_EQ(count_steps(exe->describe(), "library"), 0) << exe->describe();
    size_t k = 0;
    for (const Op& op : ops_)
      for (const auto& axes : subsets) {
        const bool float_sum = op.input <= 1 && (std::string(op.name) == "sum" || std::string(op.name) == "prod");
        EXPECT_TRUE(close_values({got[k]}, {want[k]}, 0, float_sum ? 1e-5 : 0))
            << op.name << " " << dtype_name(types[op.input]) << " " << shape_str(s) << " " << list_str(axes);
        ++k;
      }
  }
}

}  // namespace
