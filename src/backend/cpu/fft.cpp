// FFTW plans, made once per (kind, precision, shape, batch, alignment, threads) and kept:
// FFTW's planner is not thread-safe, so planning holds a lock; executing a plan on new
// arrays (fftw_execute_dft and friends) is, and needs only arrays aligned as the planning
// ones were. FFTW_ESTIMATE plans without running trial transforms, so the first call of a
// shape costs microseconds, not the seconds FFTW_MEASURE takes at 2^20 points.
#include "backend/cpu/fft.h"

#include <fftw3.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "jx/error.h"
#include "support/str.h"

namespace jx::cpu {
namespace {

// Below this many output values per call a transform stays on one thread.
constexpr int64_t kThreadedFft = 1 << 15;

template <class R>
struct Fftw;

template <>
struct Fftw<float> {
  using plan = fftwf_plan;
  using cplx = fftwf_complex;
  static int alignment(const void* p) { return fftwf_alignment_of(static_cast<float*>(const_cast<void*>(p))); }
  static void threads(int n) { fftwf_plan_with_nthreads(n); }
  static void* alloc(size_t bytes) { return fftwf_malloc(bytes); }
  static void release(void* p) { fftwf_free(p); }
  static plan c2c(int rank, const int* n, int howmany, int dist, int sign, void* in, void* out) {
    return fftwf_plan_many_dft(rank, n, howmany, static_cast<cplx*>(in), nullptr, 1, dist,
                               static_cast<cplx*>(out), nullptr, 1, dist, sign, FFTW_ESTIMATE);
  }
  static plan r2c(int rank, const int* n, int howmany, int idist, int odist, void* in, void* out) {
    return fftwf_plan_many_dft_r2c(rank, n, howmany, static_cast<float*>(in), nullptr, 1, idist,
                                   static_cast<cplx*>(out), nullptr, 1, odist, FFTW_ESTIMATE);
  }
  static plan c2r(int rank, const int* n, int howmany, int idist, int odist, void* in, void* out) {
    return fftwf_plan_many_dft_c2r(rank, n, howmany, static_cast<cplx*>(in), nullptr, 1, idist,
                                   static_cast<float*>(out), nullptr, 1, odist, FFTW_ESTIMATE);
  }
  static void run_c2c(plan p, void* in, void* out) {
    fftwf_execute_dft(p, static_cast<cplx*>(in), static_cast<cplx*>(out));
  }
  static void run_r2c(plan p, void* in, void* out) {
    fftwf_execute_dft_r2c(p, static_cast<float*>(in), static_cast<cplx*>(out));
  }
  static void run_c2r(plan p, void* in, void* out) {
    fftwf_execute_dft_c2r(p, static_cast<cplx*>(in), static_cast<float*>(out));
  }
};

template <>
struct Fftw<double> {
  using plan = fftw_plan;
  using cplx = fftw_complex;
  static int alignment(const void* p) { return fftw_alignment_of(static_cast<double*>(const_cast<void*>(p))); }
  static void threads(int n) { fftw_plan_with_nthreads(n); }
  static void* alloc(size_t bytes) { return fftw_malloc(bytes); }
  static void release(void* p) { fftw_free(p); }
  static plan c2c(int rank, const int* n, int howmany, int dist, int sign, void* in, void* out) {
    return fftw_plan_many_dft(rank, n, howmany, static_cast<cplx*>(in), nullptr, 1, dist,
                              static_cast<cplx*>(out), nullptr, 1, dist, sign, FFTW_ESTIMATE);
  }
  static plan r2c(int rank, const int* n, int howmany, int idist, int odist, void* in, void* out) {
    return fftw_plan_many_dft_r2c(rank, n, howmany, static_cast<double*>(in), nullptr, 1, idist,
                                  static_cast<cplx*>(out), nullptr, 1, odist, FFTW_ESTIMATE);
  }
  static plan c2r(int rank, const int* n, int howmany, int idist, int odist, void* in, void* out) {
    return fftw_plan_many_dft_c2r(rank, n, howmany, static_cast<cplx*>(in), nullptr, 1, idist,
                                  static_cast<double*>(out), nullptr, 1, odist, FFTW_ESTIMATE);
  }
  static void run_c2c(plan p, void* in, void* out) {
    fftw_execute_dft(p, static_cast<cplx*>(in), static_cast<cplx*>(out));
  }
  static void run_r2c(plan p, void* in, void* out) {
    fftw_execute_dft_r2c(p, static_cast<double*>(in), static_cast<cplx*>(out));
  }
  static void run_c2r(plan p, void* in, void* out) {
    fftw_execute_dft_c2r(p, static_cast<cplx*>(in), static_cast<double*>(out));
  }
};

using Key = std::tuple<int, int, std::vector<int>, int, int, int, bool, int>;

std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

template <class R>
typename Fftw<R>::plan get_plan(FftKind kind, const std::vector<int>& n, int howmany,
                                int idist, int odist, void* in, void* out, int nthreads) {
  using F = Fftw<R>;
  static std::map<Key, typename F::plan>* cache = new std::map<Key, typename F::plan>();
  static bool threads_ready = false;
  Key key{int(kind), int(sizeof(R)), n, howmany, F::alignment(in), F::alignment(out), in == out,
          nthreads};
  std::lock_guard<std::mutex> lock(planner_mutex());
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  if (!threads_ready) {
    if constexpr (std::is_same_v<R, float>) fftwf_init_threads();
    else fftw_init_threads();
    threads_ready = true;
  }
  F::threads(nthreads);
  const int rank = int(n.size());
  typename F::plan p = nullptr;
  switch (kind) {
    case FftKind::Forward: p = F::c2c(rank, n.data(), howmany, idist, FFTW_FORWARD, in, out); break;
    case FftKind::Inverse: p = F::c2c(rank, n.data(), howmany, idist, FFTW_BACKWARD, in, out); break;
    case FftKind::RealToComplex: p = F::r2c(rank, n.data(), howmany, idist, odist, in, out); break;
    case FftKind::ComplexToReal: p = F::c2r(rank, n.data(), howmany, idist, odist, in, out); break;
  }
  if (!p) throw InternalError("jx internal error: FFTW could not plan the transform");
  cache->emplace(std::move(key), p);
  return p;
}

// [rows, cols] -> [cols, rows] for each of `count` matrices, in tiles that fit the cache.
template <class T>
void transpose_tiles(const T* src, T* dst, int64_t count, int64_t rows, int64_t cols,
                     int nthreads) {
  constexpr int64_t kTile = 32;
  const int64_t tr = (rows + kTile - 1) / kTile, tc = (cols + kTile - 1) / kTile;
#pragma omp parallel for collapse(3) schedule(static) num_threads(nthreads) if (nthreads > 1)
  for (int64_t b = 0; b < count; ++b)
    for (int64_t ti = 0; ti < tr; ++ti)
      for (int64_t tj = 0; tj < tc; ++tj) {
        const T* s = src + b * rows * cols;
        T* d = dst + b * rows * cols;
        const int64_t i1 = std::min(rows, (ti + 1) * kTile), j1 = std::min(cols, (tj + 1) * kTile);
        for (int64_t i = ti * kTile; i < i1; ++i)
          for (int64_t j = tj * kTile; j < j1; ++j) d[j * rows + i] = s[i * cols + j];
      }
}

// A complex 2-D transform as two batched 1-D passes: rows, a tiled transpose, rows again
// (the former columns, now contiguous), and the transpose back. FFTW_ESTIMATE's own 2-D plan
// runs the column transforms at a stride of n1 without buffering: 11.7 ms at 1024 x 1024
// complex64, where the batched rows take 0.56 ms a pass (bench/README.md, "FFT").
template <class R>
void complex_2d_by_passes(FftKind kind, const void* in, void* out, int64_t batch, int64_t n0,
                          int64_t n1, int nthreads) {
  using Cx = std::complex<R>;
  const size_t bytes = size_t(batch * n0 * n1) * sizeof(Cx);
  std::unique_ptr<void, void (*)(void*)> tmp(Fftw<R>::alloc(bytes), Fftw<R>::release);
  if (!tmp) throw std::bad_alloc();
  void* src = const_cast<void*>(in);
  auto rows = get_plan<R>(kind, {int(n1)}, int(batch * n0), int(n1), int(n1), src, out, nthreads);
  Fftw<R>::run_c2c(rows, src, out);
  transpose_tiles(static_cast<const Cx*>(out), static_cast<Cx*>(tmp.get()), batch, n0, n1, nthreads);
  auto cols = get_plan<R>(kind, {int(n0)}, int(batch * n1), int(n0), int(n0), tmp.get(), tmp.get(),
                          nthreads);
  Fftw<R>::run_c2c(cols, tmp.get(), tmp.get());
  transpose_tiles(static_cast<const Cx*>(tmp.get()), static_cast<Cx*>(out), batch, n1, n0, nthreads);
}

// All signals through one FFTW plan of the whole transform.
template <class R>
void run_one_plan(FftKind kind, const void* in, void* out, int64_t batch, const std::vector<int>& n,
                  int64_t in_dist, int64_t out_dist, int nthreads) {
  const bool real_out = kind == FftKind::ComplexToReal;
  // FFTW's complex-to-real transforms overwrite their input: they get a copy.
  std::unique_ptr<std::complex<R>[]> scratch;
  void* src = const_cast<void*>(in);
  if (real_out) {
    scratch.reset(new std::complex<R>[size_t(batch * in_dist)]);
    std::memcpy(scratch.get(), in, size_t(batch * in_dist) * sizeof(std::complex<R>));
    src = scratch.get();
  }
  auto plan = get_plan<R>(kind, n, int(batch), int(in_dist), int(out_dist), src, out, nthreads);
  switch (kind) {
    case FftKind::Forward:
    case FftKind::Inverse: Fftw<R>::run_c2c(plan, src, out); break;
    case FftKind::RealToComplex: Fftw<R>::run_r2c(plan, src, out); break;
    case FftKind::ComplexToReal: Fftw<R>::run_c2r(plan, src, out); break;
  }
}

// Both dims at least this long take the two-pass path (shorter ones leave the transposes
// little to gain).
constexpr int64_t kPassesMinDim = 64;

template <class R>
void run(FftKind kind, const void* in, void* out, int64_t batch, const int64_t* lengths, int rank) {
  int64_t total = 1;  // points per signal
  std::vector<int> n(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) {
    total *= lengths[d];
    n[size_t(d)] = int(lengths[d]);
  }
  int64_t half = lengths[rank - 1] / 2 + 1;  // complex values per real-transform signal
  for (int d = 0; d + 1 < rank; ++d) half *= lengths[d];
  const bool real_in = kind == FftKind::RealToComplex, real_out = kind == FftKind::ComplexToReal;
  const int64_t in_dist = real_out ? half : total, out_dist = real_in ? half : total;
  const int64_t out_count = batch * out_dist;  // values (real or complex) written
  if (out_count == 0) return;
  if (total == 0) {  // no points: a zero-length axis transforms to nothing but zeros
    std::memset(out, 0, size_t(out_count) * sizeof(R) * (real_out ? 1 : 2));
    return;
  }
  if (batch > INT_MAX || in_dist > INT_MAX || out_dist > INT_MAX)
    throw ValueError(str("[fft] ", batch, " signals of ", total, " points exceed FFTW's 32-bit "
                         "sizes; split the batch"));
  const int nthreads = out_count >= kThreadedFft ? omp_get_max_threads() : 1;
  const bool by_passes = (kind == FftKind::Forward || kind == FftKind::Inverse) && rank == 2 &&
                         lengths[0] >= kPassesMinDim && lengths[1] >= kPassesMinDim &&
                         batch * std::max(lengths[0], lengths[1]) <= INT_MAX;
  if (by_passes) {
    complex_2d_by_passes<R>(kind, in, out, batch, lengths[0], lengths[1], nthreads);
  } else {
    run_one_plan<R>(kind, in, out, batch, n, in_dist, out_dist, nthreads);
  }
  if (kind == FftKind::Inverse || kind == FftKind::ComplexToReal) {
    const R scale = R(1) / R(total);
    R* o = static_cast<R*>(out);
    const int64_t m = out_count * (real_out ? 1 : 2);
#pragma omp parallel for simd num_threads(nthreads) if (nthreads > 1)
    for (int64_t i = 0; i < m; ++i) o[i] *= scale;
  }
}

}  // namespace

void fft(FftKind kind, DType real, const void* in, void* out, int64_t batch,
         const int64_t* lengths, int rank) {
  if (real == DType::Float32) run<float>(kind, in, out, batch, lengths, rank);
  else if (real == DType::Float64) run<double>(kind, in, out, batch, lengths, rank);
  else throw InternalError("jx internal error: fft of an unsupported precision");
}

}  // namespace jx::cpu
