// jx::lax::fft against FFTW called directly in this binary, so that jx's overhead (dispatch,
// the output allocation, the plan lookup, for IFFT the 1/N scaling pass) reads off one run as
// the ratio jx / direct. Issue 20: FFT of 2^20 complex64 points at no less than 80% of
// calling the chosen library directly, beside NumPy and PyTorch in the same run (their side:
// bench/peers/fft_peer.py; bench/fft.sh runs both and prints the ratios).
//
// Six cases (the argument of every benchmark, kCases below): complex64 FFT of 2^20 points
// (the issue's), complex128 FFT 2^20, complex64 IFFT 2^20, float32 RFFT 2^20, 1024 signals
// of 1024 complex64 points (batched 1-D), and a 1024 x 1024 complex64 2-D FFT. Rows:
//   jx_eager       lax::fft on an input made once, outside the timed loop
//   jx_jit         jx::jit of the same function (compiled outside the timing)
//   fftw_estimate  the plan jx makes (src/backend/cpu/fft.cpp): fftw*_plan_many_dft(_r2c)
//                  with FFTW_ESTIMATE, out of place, planned once outside the loop with
//                  fftw*_plan_with_nthreads(omp_get_max_threads()) (jx threads every case
//                  here: each writes >= 2^15 values), executed with fftw*_execute_dft* on a
//                  fresh output buffer each iteration, as jx allocates its output each call.
//                  The buffers are memory of the kind jx's allocator hands out
//                  (src/core/allocator.cpp: blocks >= 2 MiB are 2 MiB-aligned and
//                  madvise(MADV_HUGEPAGE)d, so with THP in "madvise" mode they sit on huge
//                  pages): aligned_alloc + madvise + free per iteration here, a pop from jx's
//                  caching pool there. No 1/N scaling: FFTW's backward transform is
//                  unnormalized, so for IFFT this is the bare library call and the scaling
//                  pass is jx's extra (scale_pass isolates it).
//   fftw_estimate_out_once  the same, into one output buffer allocated outside the loop
//                  (what the allocation costs)
//   fftw_estimate_4k  the same plan on fftw_malloc'd input and output (4 KiB pages unless
//                  THP is "always"), a fresh output each iteration: what a program calling
//                  FFTW the usual way gets, and so what the huge pages are worth
//   fftw_measure   an FFTW_MEASURE plan for the same transform on jx-like memory, made once
//                  in main() before any timing (the planning seconds are in the context line
//                  "fftw_measure_plan_s"): what a measured plan would gain over jx's
//                  ESTIMATE one
//   scale_pass     IFFT only: jx's scaling loop alone (omp parallel for simd, the same
//                  thread count) over the 2^21 floats of the output
//
// FFTW accumulates "wisdom" while planning, and a later FFTW_ESTIMATE plan of the same
// problem would reuse what FFTW_MEASURE learned: main() therefore makes jx's plans (one
// eager call per case) and the direct ESTIMATE plans first, and forgets the wisdom after
// each MEASURE plan.
#include <benchmark/benchmark.h>
#include <fftw3.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "jx/jx.h"

namespace {

namespace lax = jx::lax;
using jx::Array;
using lax::FftType;

struct Case {
  const char* name;
  FftType type;
  bool dbl;                      // complex128 (float64) rather than complex64 (float32)
  jx::Shape shape;               // the input's shape
  std::vector<int64_t> lengths;  // fft_lengths: the trailing dims transformed
};

const std::vector<Case> kCases = {
    {"c64_fft_2^20", FftType::FFT, false, {1 << 20}, {1 << 20}},
    {"c128_fft_2^20", FftType::FFT, true, {1 << 20}, {1 << 20}},
    {"c64_ifft_2^20", FftType::IFFT, false, {1 << 20}, {1 << 20}},
    {"f32_rfft_2^20", FftType::RFFT, false, {1 << 20}, {1 << 20}},
    {"c64_fft_1024x1024_batched", FftType::FFT, false, {1024, 1024}, {1024}},
    {"c64_fft2_1024x1024", FftType::FFT, false, {1024, 1024}, {1024, 1024}},
};

// The input: standard normals (real and imaginary parts independent), the same for jx and
// the direct calls.
Array make_input(const Case& c) {
  const jx::DType real = c.dbl ? jx::DType::Float64 : jx::DType::Float32;
  Array re = jx::random::normal(jx::random::PRNGKey(0), c.shape, real);
  if (c.type == FftType::RFFT) return re;
  return lax::complex(re, jx::random::normal(jx::random::PRNGKey(1), c.shape, real));
}

Array run_jx(const Case& c, const Array& x) { return lax::fft(x, c.type, c.lengths); }

// ---- FFTW called directly: one plan, its buffers and the sizes ----

template <class R>
struct Fftw;
template <>
struct Fftw<float> {
  using plan = fftwf_plan;
  using cplx = fftwf_complex;
  static void* alloc(size_t bytes) { return fftwf_malloc(bytes); }
  static void release(void* p) { fftwf_free(p); }
  static void threads(int n) { fftwf_plan_with_nthreads(n); }
  static void forget() { fftwf_forget_wisdom(); }
  static plan c2c(int rank, const int* n, int howmany, int dist, int sign, void* in, void* out, unsigned fl) {
    return fftwf_plan_many_dft(rank, n, howmany, static_cast<cplx*>(in), nullptr, 1, dist,
                               static_cast<cplx*>(out), nullptr, 1, dist, sign, fl);
  }
  static plan r2c(int rank, const int* n, int howmany, int idist, int odist, void* in, void* out, unsigned fl) {
    return fftwf_plan_many_dft_r2c(rank, n, howmany, static_cast<float*>(in), nullptr, 1, idist,
                                   static_cast<cplx*>(out), nullptr, 1, odist, fl);
  }
  static void run_c2c(plan p, void* in, void* out) { fftwf_execute_dft(p, static_cast<cplx*>(in), static_cast<cplx*>(out)); }
  static void run_r2c(plan p, void* in, void* out) { fftwf_execute_dft_r2c(p, static_cast<float*>(in), static_cast<cplx*>(out)); }
};
template <>
struct Fftw<double> {
  using plan = fftw_plan;
  using cplx = fftw_complex;
  static void* alloc(size_t bytes) { return fftw_malloc(bytes); }
  static void release(void* p) { fftw_free(p); }
  static void threads(int n) { fftw_plan_with_nthreads(n); }
  static void forget() { fftw_forget_wisdom(); }
  static plan c2c(int rank, const int* n, int howmany, int dist, int sign, void* in, void* out, unsigned fl) {
    return fftw_plan_many_dft(rank, n, howmany, static_cast<cplx*>(in), nullptr, 1, dist,
                              static_cast<cplx*>(out), nullptr, 1, dist, sign, fl);
  }
  static plan r2c(int rank, const int* n, int howmany, int idist, int odist, void* in, void* out, unsigned fl) {
    return fftw_plan_many_dft_r2c(rank, n, howmany, static_cast<double*>(in), nullptr, 1, idist,
                                  static_cast<cplx*>(out), nullptr, 1, odist, fl);
  }
  static void run_c2c(plan p, void* in, void* out) { fftw_execute_dft(p, static_cast<cplx*>(in), static_cast<cplx*>(out)); }
  static void run_r2c(plan p, void* in, void* out) { fftw_execute_dft_r2c(p, static_cast<double*>(in), static_cast<cplx*>(out)); }
};

// Memory as jx's allocator hands it out: 2 MiB-aligned huge-page-advised blocks from 2 MiB
// on, 64-byte-aligned ones below (src/core/allocator.cpp, os_alloc).
void* jx_like_alloc(size_t bytes) {
  const size_t huge = size_t(2) << 20;
  const size_t align = bytes >= huge ? huge : 64;
  const size_t n = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, n);
  if (!p) throw std::bad_alloc();
  if (bytes >= huge) madvise(p, n, MADV_HUGEPAGE);
  return p;
}

struct Direct {
  void* plan = nullptr;        // fftwf_plan or fftw_plan
  void* in = nullptr;          // the input, copied from make_input's array (jx_like_alloc)
  void* in_4k = nullptr;       // the same, in fftw_malloc'd memory
  size_t out_bytes = 0;        // the output's size
  int64_t out_values = 0;      // complex values written
  int threads = 1;
};

// The plan jx's kernel makes for this case (sizes as src/backend/cpu/fft.cpp computes them),
// with `flags`. Planned on scratch buffers when FFTW_MEASURE would overwrite them; the input
// is filled afterwards.
template <class R>
Direct make_direct(const Case& c, unsigned flags) {
  using F = Fftw<R>;
  const int rank = int(c.lengths.size());
  std::vector<int> n(c.lengths.begin(), c.lengths.end());
  int64_t total = 1, batch = 1;
  for (int64_t l : c.lengths) total *= l;
  for (size_t d = 0; d + c.lengths.size() < c.shape.size(); ++d) batch *= c.shape[d];
  int64_t half = c.lengths.back() / 2 + 1;
  for (int d = 0; d + 1 < rank; ++d) half *= c.lengths[size_t(d)];
  const bool r2c = c.type == FftType::RFFT;
  const int64_t in_dist = total, out_dist = r2c ? half : total;
  Direct d;
  d.out_values = batch * out_dist;
  d.out_bytes = size_t(d.out_values) * sizeof(std::complex<R>);
  const size_t in_bytes = size_t(batch * in_dist) * (r2c ? sizeof(R) : sizeof(std::complex<R>));
  d.in = jx_like_alloc(in_bytes);
  d.in_4k = F::alloc(in_bytes);
  void* out = jx_like_alloc(d.out_bytes);
  std::memset(d.in, 0, in_bytes);
  d.threads = d.out_values >= (1 << 15) ? omp_get_max_threads() : 1;  // jx's kThreadedFft
  F::threads(d.threads);
  const int sign = c.type == FftType::IFFT ? FFTW_BACKWARD : FFTW_FORWARD;
  d.plan = r2c ? (void*)F::r2c(rank, n.data(), int(batch), int(in_dist), int(out_dist), d.in, out, flags)
               : (void*)F::c2c(rank, n.data(), int(batch), int(in_dist), sign, d.in, out, flags);
  std::free(out);
  const Array x = make_input(c);
  if (r2c) {
    const std::vector<R> v = x.to_vector<R>();
    std::memcpy(d.in, v.data(), in_bytes);
    std::memcpy(d.in_4k, v.data(), in_bytes);
  } else {
    const std::vector<std::complex<R>> v = x.to_vector<std::complex<R>>();
    std::memcpy(d.in, v.data(), in_bytes);
    std::memcpy(d.in_4k, v.data(), in_bytes);
  }
  return d;
}

Direct make_direct(const Case& c, unsigned flags) {
  return c.dbl ? make_direct<double>(c, flags) : make_direct<float>(c, flags);
}

// The plan, executed on `in` (d.in or d.in_4k: both aligned as the planning arrays were,
// which is all fftw*_execute_dft* asks) into `out`.
template <class R>
void execute(const Case& c, const Direct& d, void* in, void* out) {
  using F = Fftw<R>;
  if (c.type == FftType::RFFT) F::run_r2c(typename F::plan(d.plan), in, out);
  else F::run_c2c(typename F::plan(d.plan), in, out);
}
void execute(const Case& c, const Direct& d, void* in, void* out) {
  c.dbl ? execute<double>(c, d, in, out) : execute<float>(c, d, in, out);
}
void* alloc_4k(const Case& c, size_t bytes) { return c.dbl ? fftw_malloc(bytes) : fftwf_malloc(bytes); }
void release_4k(const Case& c, void* p) { c.dbl ? fftw_free(p) : fftwf_free(p); }

// Made in main(), before any timing, in the order that keeps MEASURE's wisdom out of the
// ESTIMATE plans.
std::vector<Direct> g_estimate, g_measure;
std::string g_measure_plan_s;

// ---- the benchmarks (argument: the index into kCases) ----

void BM_jx_eager(benchmark::State& st) {
  const Case& c = kCases[size_t(st.range(0))];
  const Array x = make_input(c);
  run_jx(c, x).block_until_ready();  // the plan exists already (main); this warms the pool
  for (auto _ : st) {
    Array y = run_jx(c, x).block_until_ready();
    benchmark::DoNotOptimize(y.impl().get());
  }
}

void BM_jx_jit(benchmark::State& st) {
  const Case& c = kCases[size_t(st.range(0))];
  const Array x = make_input(c);
  // One jitted function per case for the whole run (repetitions call this again), compiled
  // outside the timing.
  static std::map<int64_t, std::function<Array(const Array&)>> jitted;
  auto it = jitted.find(st.range(0));
  if (it == jitted.end())
    it = jitted.emplace(st.range(0), jx::jit([&c](const Array& x) { return run_jx(c, x); })).first;
  const auto& f = it->second;
  f(x).block_until_ready();
  for (auto _ : st) {
    Array y = f(x).block_until_ready();
    benchmark::DoNotOptimize(y.impl().get());
  }
}

// A fresh jx-like output buffer each iteration.
void direct_fresh(benchmark::State& st, const Direct& d) {
  const Case& c = kCases[size_t(st.range(0))];
  for (auto _ : st) {
    void* out = jx_like_alloc(d.out_bytes);
    execute(c, d, d.in, out);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
    std::free(out);
  }
}

void BM_fftw_estimate(benchmark::State& st) { direct_fresh(st, g_estimate[size_t(st.range(0))]); }
void BM_fftw_measure(benchmark::State& st) { direct_fresh(st, g_measure[size_t(st.range(0))]); }

void BM_fftw_estimate_out_once(benchmark::State& st) {
  const Case& c = kCases[size_t(st.range(0))];
  const Direct& d = g_estimate[size_t(st.range(0))];
  void* out = jx_like_alloc(d.out_bytes);
  for (auto _ : st) {
    execute(c, d, d.in, out);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  std::free(out);
}

void BM_fftw_estimate_4k(benchmark::State& st) {
  const Case& c = kCases[size_t(st.range(0))];
  const Direct& d = g_estimate[size_t(st.range(0))];
  for (auto _ : st) {
    void* out = alloc_4k(c, d.out_bytes);
    execute(c, d, d.in_4k, out);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
    release_4k(c, out);
  }
}

// jx's IFFT scaling loop (src/backend/cpu/fft.cpp), alone, on an output-sized buffer.
void BM_scale_pass(benchmark::State& st) {
  const Case& c = kCases[size_t(st.range(0))];
  const Direct& d = g_estimate[size_t(st.range(0))];
  float* p = static_cast<float*>(jx_like_alloc(d.out_bytes));
  const int64_t m = d.out_values * 2;
  std::fill(p, p + m, 1.0f);
  int64_t total = 1;
  for (int64_t l : c.lengths) total *= l;
  const float scale = 1.0f / float(total);
  const int nthreads = d.threads;
  for (auto _ : st) {
#pragma omp parallel for simd num_threads(nthreads) if (nthreads > 1)
    for (int64_t i = 0; i < m; ++i) p[i] *= scale;
    benchmark::DoNotOptimize(p);
    benchmark::ClobberMemory();
  }
  std::free(p);
}

void register_all() {
  for (size_t i = 0; i < kCases.size(); ++i) {
    const std::string tail = std::string("/") + kCases[i].name;
    auto reg = [&](const char* row, void (*fn)(benchmark::State&)) {
      benchmark::RegisterBenchmark((row + tail).c_str(), fn)
          ->Arg(int64_t(i))
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    };
    reg("jx_eager", BM_jx_eager);
    reg("jx_jit", BM_jx_jit);
    reg("fftw_estimate", BM_fftw_estimate);
    reg("fftw_estimate_out_once", BM_fftw_estimate_out_once);
    reg("fftw_estimate_4k", BM_fftw_estimate_4k);
    reg("fftw_measure", BM_fftw_measure);
    if (kCases[i].type == FftType::IFFT) reg("scale_pass", BM_scale_pass);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  fftwf_init_threads();
  fftw_init_threads();
  // 1. jx's plans (one eager call per case) and the direct ESTIMATE plans.
  for (const Case& c : kCases) {
    run_jx(c, make_input(c)).block_until_ready();
    g_estimate.push_back(make_direct(c, FFTW_ESTIMATE));
  }
  // 2. The MEASURE plans, the wisdom forgotten after each.
  for (const Case& c : kCases) {
    const auto t0 = std::chrono::steady_clock::now();
    g_measure.push_back(make_direct(c, FFTW_MEASURE));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    c.dbl ? fftw_forget_wisdom() : fftwf_forget_wisdom();
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s %.2f", g_measure_plan_s.empty() ? "" : ", ", c.name, s);
    g_measure_plan_s += buf;
  }
  register_all();
  benchmark::AddCustomContext("fftw", fftwf_version);
  benchmark::AddCustomContext("omp_max_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("fftw_measure_plan_s", g_measure_plan_s);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
