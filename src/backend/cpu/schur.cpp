#include "backend/cpu/schur.h"

#include <algorithm>
#include <complex>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "backend/cpu/lapack_util.h"

// LAPACK's gees through the Fortran ABI (as linalg.cpp): arguments by pointer, LOGICAL as
// int, the lengths of the two CHARACTER arguments as trailing hidden size_t. The select
// function is never called (sort = 'N').
extern "C" {
using jx_select2_s = int (*)(const float*, const float*);
using jx_select2_d = int (*)(const double*, const double*);
using jx_select1_c = int (*)(const std::complex<float>*);
using jx_select1_z = int (*)(const std::complex<double>*);
void sgees_(const char* jobvs, const char* sort, jx_select2_s select, const int* n, float* a,
            const int* lda, int* sdim, float* wr, float* wi, float* vs, const int* ldvs, float* work,
            const int* lwork, int* bwork, int* info, size_t, size_t);
void dgees_(const char* jobvs, const char* sort, jx_select2_d select, const int* n, double* a,
            const int* lda, int* sdim, double* wr, double* wi, double* vs, const int* ldvs,
            double* work, const int* lwork, int* bwork, int* info, size_t, size_t);
void cgees_(const char* jobvs, const char* sort, jx_select1_c select, const int* n,
            std::complex<float>* a, const int* lda, int* sdim, std::complex<float>* w,
            std::complex<float>* vs, const int* ldvs, std::complex<float>* work, const int* lwork,
            float* rwork, int* bwork, int* info, size_t, size_t);
void zgees_(const char* jobvs, const char* sort, jx_select1_z select, const int* n,
            std::complex<double>* a, const int* lda, int* sdim, std::complex<double>* w,
            std::complex<double>* vs, const int* ldvs, std::complex<double>* work, const int* lwork,
            double* rwork, int* bwork, int* info, size_t, size_t);
}

namespace jx::cpu::linalg {
namespace {

// One call shape for the four routines: the real ones return eigenvalues as (wr, wi), the
// complex ones as w with a real workspace; both are scratch here (t's diagonal has them).
template <class T>
void gees(char jobvs, int n, T* a, T* vs, int ldvs, T* work, int lwork, int* info) {
  using R = Real<T>;
  const char sort = 'N';
  int sdim = 0;
  std::vector<int> bwork(1);
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    std::vector<T> wr(size_t(std::max(n, 1))), wi(size_t(std::max(n, 1)));
    if constexpr (std::is_same_v<T, float>)
      sgees_(&jobvs, &sort, nullptr, &n, a, &n, &sdim, wr.data(), wi.data(), vs, &ldvs, work, &lwork,
             bwork.data(), info, 1, 1);
    else
      dgees_(&jobvs, &sort, nullptr, &n, a, &n, &sdim, wr.data(), wi.data(), vs, &ldvs, work, &lwork,
             bwork.data(), info, 1, 1);
  } else {
    std::vector<T> w(size_t(std::max(n, 1)));
    std::vector<R> rwork(size_t(std::max(n, 1)));
    if constexpr (std::is_same_v<R, float>)
      cgees_(&jobvs, &sort, nullptr, &n, a, &n, &sdim, w.data(), vs, &ldvs, work, &lwork, rwork.data(),
             bwork.data(), info, 1, 1);
    else
      zgees_(&jobvs, &sort, nullptr, &n, a, &n, &sdim, w.data(), vs, &ldvs, work, &lwork, rwork.data(),
             bwork.data(), info, 1, 1);
  }
}

}  // namespace

template <class T>
void schur(const T* a, int64_t count, int64_t n, T* t, T* vs) {
  if (n == 0) return;
  const size_t nn = size_t(n * n);
  const char jobvs = vs ? 'V' : 'N';
  std::vector<T> col(nn), z(vs ? nn : 1);
  const int ldvs = vs ? int(n) : 1;
  T query = 0;
  int info = 0;
  gees(jobvs, int(n), col.data(), z.data(), ldvs, &query, -1, &info);
  std::vector<T> work(size_t(work_size(query)));
  for (int64_t b = 0; b < count; ++b) {
    // A row-major matrix read column-major is its transpose, whose Schur form is not a's:
    // the copy in and out is O(n^2) against gees' O(n^3).
    transpose(a + b * n * n, n, n, col.data());
    gees(jobvs, int(n), col.data(), z.data(), ldvs, work.data(), int(work.size()), &info);
    T* tb = t + b * n * n;
    if (info != 0) {  // the QR iteration did not converge: NaNs, as the other decompositions
      fill_nan(tb, n * n);
      if (vs) fill_nan(vs + b * n * n, n * n);
      continue;
    }
    transpose(col.data(), n, n, tb);
    if (vs) transpose(z.data(), n, n, vs + b * n * n);
  }
}

template void schur<float>(const float*, int64_t, int64_t, float*, float*);
template void schur<double>(const double*, int64_t, int64_t, double*, double*);
template void schur<std::complex<float>>(const std::complex<float>*, int64_t, int64_t, std::complex<float>*,
                                         std::complex<float>*);
template void schur<std::complex<double>>(const std::complex<double>*, int64_t, int64_t,
                                          std::complex<double>*, std::complex<double>*);

}  // namespace jx::cpu::linalg
