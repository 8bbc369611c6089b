// Cholesky and SVD of square float32/float64 matrices (n = 256, 1024) through jx::lax::linalg
// against the same LAPACK routines called directly in this binary, so that jx's overhead
// (dispatch, the output allocation, the input copy LAPACK's in-place routines need, for
// cholesky the (x + x^T) / 2 of symmetrize_input and the zeroed upper triangle, for svd the
// workspace query and allocation per call) reads off one run as the ratio jx / direct. Both
// sides run whichever liblapack.so.3 the system selects (OpenBLAS here); the context lines
// at the top say which and with how many threads. NumPy's and PyTorch's side:
// bench/peers/linalg_peer.py; bench/linalg.sh runs both and prints the ratios (issue 20:
// jx at no less than 80% of the direct call).
//
// The direct rows do what jx's kernels do (src/backend/cpu/linalg.cpp): copy the row-major
// input into a buffer allocated once, then potrf('U') on it (a row-major lower factor is a
// column-major upper one), or gesdd with jobz 'S' / 'N' on it (a row-major matrix read
// column-major is its transpose, so U and V^T just swap roles). gesdd's workspace is
// queried once, outside the loop. The extra jx rows isolate pieces of jx's cost:
// cholesky with symmetrize_input = false, the symmetrization alone, and cholesky under
// jx::jit (symmetrize fused into one pass, the factorization a library call).
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "jx/jx.h"

// LAPACK's Fortran ABI, as src/backend/cpu/linalg.cpp declares it (trailing hidden lengths
// of the CHARACTER arguments).
extern "C" {
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork,
             int* iwork, int* info, size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work,
             const int* lwork, int* iwork, int* info, size_t);
}

namespace {

namespace jnp = jx::numpy;
namespace la = jx::lax::linalg;
using jx::Array;

template <class T>
constexpr jx::DType kDType = std::is_same_v<T, float> ? jx::DType::Float32 : jx::DType::Float64;

void potrf(char uplo, int n, float* a, int* info) { spotrf_(&uplo, &n, a, &n, info, 1); }
void potrf(char uplo, int n, double* a, int* info) { dpotrf_(&uplo, &n, a, &n, info, 1); }
void gesdd(char jobz, int n, float* a, float* s, float* u, int ldu, float* vt, int ldvt, float* w,
           int lw, int* iw, int* info) {
  sgesdd_(&jobz, &n, &n, a, &n, s, u, &ldu, vt, &ldvt, w, &lw, iw, info, 1);
}
void gesdd(char jobz, int n, double* a, double* s, double* u, int ldu, double* vt, int ldvt,
           double* w, int lw, int* iw, int* info) {
  dgesdd_(&jobz, &n, &n, a, &n, s, u, &ldu, vt, &ldvt, w, &lw, iw, info, 1);
}

// A general n x n matrix of standard normals, and the symmetric positive definite
// a a^T + n I made from it (the same on both sides of each comparison).
Array general(int64_t n, jx::DType t) { return jx::random::normal(jx::random::PRNGKey(0), {n, n}, t); }
Array spd(int64_t n, jx::DType t) {
  Array a = general(n, t);
  return jnp::matmul(a, jnp::transpose(a)) + jnp::eye(n, std::nullopt, 0, t) * double(n);
}

void check(benchmark::State& st, int info, const char* what) {
  if (info != 0) st.SkipWithError((std::string(what) + " failed, info = " + std::to_string(info)).c_str());
}

// ---- Cholesky ----

template <class T>
void BM_jx_cholesky(benchmark::State& st) {
  Array x = spd(st.range(0), kDType<T>);
  for (auto _ : st) {
    Array l = la::cholesky(x).block_until_ready();
    benchmark::DoNotOptimize(l.impl().get());
  }
}

template <class T>
void BM_jx_cholesky_nosym(benchmark::State& st) {
  Array x = spd(st.range(0), kDType<T>);
  for (auto _ : st) {
    Array l = la::cholesky(x, /*symmetrize_input=*/false).block_until_ready();
    benchmark::DoNotOptimize(l.impl().get());
  }
}

template <class T>
void BM_jx_cholesky_jit(benchmark::State& st) {
  Array x = spd(st.range(0), kDType<T>);
  auto f = jx::jit([](const Array& x) { return la::cholesky(x); });
  f(x).block_until_ready();  // compile outside the timing
  for (auto _ : st) {
    Array l = f(x).block_until_ready();
    benchmark::DoNotOptimize(l.impl().get());
  }
}

// symmetrize_input's share alone: (x + x^T) / 2 as lax::linalg::cholesky computes it
// (transpose, add, multiply: three eager ops, each over the whole matrix).
template <class T>
void BM_jx_symmetrize(benchmark::State& st) {
  Array x = spd(st.range(0), kDType<T>);
  const Array half = jx::lax::reshape(jx::lax::convert_element_type(Array(0.5), kDType<T>, true), {1, 1});
  for (auto _ : st) {
    Array y = jx::lax::mul(jx::lax::add(x, jx::lax::transpose(x, {1, 0})), half).block_until_ready();
    benchmark::DoNotOptimize(y.impl().get());
  }
}

template <class T>
void BM_lapack_potrf(benchmark::State& st) {
  const int n = int(st.range(0));
  const std::vector<T> x = spd(n, kDType<T>).template to_vector<T>();
  std::vector<T> a(x.size());
  int info = 0;
  for (auto _ : st) {
    std::copy(x.begin(), x.end(), a.begin());
    potrf('U', n, a.data(), &info);
    benchmark::DoNotOptimize(a.data());
    benchmark::ClobberMemory();
  }
  check(st, info, "potrf");
}

// ---- SVD ----

template <class T>
void BM_jx_svd(benchmark::State& st) {
  Array x = general(st.range(0), kDType<T>);
  for (auto _ : st) {
    la::SvdResult r = la::svd(x, /*full_matrices=*/false);
    r.vh.block_until_ready();
    benchmark::DoNotOptimize(r.u.impl().get());
    benchmark::DoNotOptimize(r.s.impl().get());
    benchmark::DoNotOptimize(r.vh.impl().get());
  }
}

template <class T>
void BM_jx_svdvals(benchmark::State& st) {
  Array x = general(st.range(0), kDType<T>);
  for (auto _ : st) {
    la::SvdResult r = la::svd(x, /*full_matrices=*/false, /*compute_uv=*/false);
    r.s.block_until_ready();
    benchmark::DoNotOptimize(r.s.impl().get());
  }
}

// jobz 'S' (u and vt, n x n here) or 'N' (singular values only) on a copy of the input.
template <class T>
void lapack_gesdd(benchmark::State& st, char jobz) {
  const int n = int(st.range(0));
  const std::vector<T> x = general(n, kDType<T>).template to_vector<T>();
  const bool uv = jobz != 'N';
  std::vector<T> a(x.size()), s(static_cast<size_t>(n)), u(uv ? x.size() : 1), vt(uv ? x.size() : 1);
  std::vector<int> iwork(static_cast<size_t>(8 * n));
  const int ld = uv ? n : 1;
  T query = 0;
  int info = 0;
  gesdd(jobz, n, a.data(), s.data(), u.data(), ld, vt.data(), ld, &query, -1, iwork.data(), &info);
  std::vector<T> work(size_t(std::max(1, int(query))));
  for (auto _ : st) {
    std::copy(x.begin(), x.end(), a.begin());
    gesdd(jobz, n, a.data(), s.data(), u.data(), ld, vt.data(), ld, work.data(), int(work.size()),
          iwork.data(), &info);
    benchmark::DoNotOptimize(s.data());
    benchmark::DoNotOptimize(u.data());
    benchmark::ClobberMemory();
  }
  check(st, info, "gesdd");
}
template <class T>
void BM_lapack_gesdd_S(benchmark::State& st) { lapack_gesdd<T>(st, 'S'); }
template <class T>
void BM_lapack_gesdd_N(benchmark::State& st) { lapack_gesdd<T>(st, 'N'); }

// Which LAPACK/BLAS and how many threads, when it is OpenBLAS (looked up at run time, so
// the binary also runs on reference LAPACK).
std::string blas_info() {
  std::string r;
  if (auto cfg = reinterpret_cast<char* (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_config")))
    r += std::string("OpenBLAS ") + cfg();
  if (auto core = reinterpret_cast<char* (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_corename")))
    r += std::string(", core ") + core();
  if (auto nt = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads")))
    r += ", " + std::to_string(nt()) + " threads";
  Dl_info di;
  void* sym = dlsym(RTLD_DEFAULT, "dpotrf_");
  if (sym && dladdr(sym, &di) && di.dli_fname)
    r += std::string(r.empty() ? "" : "; ") + "dpotrf_ from " + di.dli_fname;
  return r;
}

}  // namespace

#define JX_LINALG_BENCH(name)                                                             \
  BENCHMARK_TEMPLATE(name, float)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime(); \
  BENCHMARK_TEMPLATE(name, double)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
JX_LINALG_BENCH(BM_jx_cholesky)
JX_LINALG_BENCH(BM_jx_cholesky_nosym)
JX_LINALG_BENCH(BM_jx_cholesky_jit)
JX_LINALG_BENCH(BM_jx_symmetrize)
JX_LINALG_BENCH(BM_lapack_potrf)
JX_LINALG_BENCH(BM_jx_svd)
JX_LINALG_BENCH(BM_lapack_gesdd_S)
JX_LINALG_BENCH(BM_jx_svdvals)
JX_LINALG_BENCH(BM_lapack_gesdd_N)

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("lapack", blas_info());
  benchmark::AddCustomContext("omp_max_threads", std::to_string(omp_get_max_threads()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
