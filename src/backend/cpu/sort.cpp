// Sorting along one axis. One operand: each row is copied and sorted by value. Several
// operands: each row's indices are sorted by the keys, then every operand is gathered
// through that permutation. Rows are split across threads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "backend/cpu/loops.h"
#include "backend/cpu/reduce_ops.h"
#include "support/dtype_switch.h"

namespace jx::cpu {
namespace {

// One part of a complex key as JAX's _operands_to_keys canonicalizes it before comparing:
// -0.0 equals +0.0 and every NaN equals every other, after all numbers. -1, 0, 1.
template <class R>
inline int canonical_cmp(R a, R b) {
  const bool na = a != a, nb = b != b;
  if (na || nb) return int(na) - int(nb);
  return a < b ? -1 : (b < a ? 1 : 0);
}

// lax.sort's total order: -0.0 < +0.0 and NaNs after everything. Complex keys compare
// (real, imag) lexicographically, each part canonicalized (canonical_cmp), as
// jax/_src/lax/lax.py's _sort_lt_comparator does.
template <class T>
inline bool total_less(T a, T b) {
  if constexpr (cx::is_complex_v<T>) {
    const int c = canonical_cmp(a.real(), b.real());
    return c != 0 ? c < 0 : canonical_cmp(a.imag(), b.imag()) < 0;
  } else if constexpr (red::is_half_v<T>) {
    return total_less<float>(float(a), float(b));
  } else if constexpr (std::is_floating_point_v<T>) {
    const bool na = a != a, nb = b != b;
    if (na || nb) return !na && nb;
    if (a < b) return true;
    if (a == b) return std::signbit(a) && !std::signbit(b);
    return false;
  } else {
    return a < b;
  }
}

// Three-way compare of element i vs j of one operand's row.
using Cmp3 = int (*)(const void* row, int64_t stride, int64_t i, int64_t j);
template <class T>
int cmp3(const void* row, int64_t stride, int64_t i, int64_t j) {
  const T* p = static_cast<const T*>(row);
  T a = p[i * stride], b = p[j * stride];
  if (total_less<T>(a, b)) return -1;
  if (total_less<T>(b, a)) return 1;
  return 0;
}

Cmp3 cmp3_for(DType t) {
  Cmp3 f = nullptr;
  JX_DTYPE_SWITCH_C(t, T, f = &cmp3<T>);
  return f;
}

struct Job {
  int n;
  const DType* dtypes;
  const void* const* in;
  void* const* out;
  int64_t outer, len, inner;
  int num_keys;
  bool stable;
};

template <class T>
void sort_values_row(const T* src, T* dst, int64_t len, int64_t inner, std::vector<T>& buf,
                     bool stable) {
  buf.resize(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i) buf[size_t(i)] = src[i * inner];
  auto lt = [](T a, T b) { return total_less<T>(a, b); };
  if (stable) std::stable_sort(buf.begin(), buf.end(), lt);
  else std::sort(buf.begin(), buf.end(), lt);
  for (int64_t i = 0; i < len; ++i) dst[i * inner] = buf[size_t(i)];
}

// Sorts row r (r = o * inner + k) of every operand.
void sort_row(const Job& jb, int64_t r, std::vector<int64_t>& perm, const std::vector<Cmp3>& cmps) {
  const int64_t o = r / jb.inner, k = r % jb.inner;
  const int64_t base = o * jb.len * jb.inner + k;
  if (jb.n == 1) {
    JX_DTYPE_SWITCH_C(jb.dtypes[0], T, {
      thread_local std::vector<T> tmp;
      sort_values_row<T>(static_cast<const T*>(jb.in[0]) + base, static_cast<T*>(jb.out[0]) + base,
                         jb.len, jb.inner, tmp, jb.stable);
    });
    return;
  }
  perm.resize(static_cast<size_t>(jb.len));
  std::iota(perm.begin(), perm.end(), int64_t(0));
  std::vector<const char*> rows(static_cast<size_t>(jb.num_keys));
  for (int q = 0; q < jb.num_keys; ++q)
    rows[size_t(q)] = static_cast<const char*>(jb.in[q]) + base * int64_t(itemsize(jb.dtypes[q]));
  auto lt = [&](int64_t i, int64_t j) {
    for (int q = 0; q < jb.num_keys; ++q) {
      int c = cmps[size_t(q)](rows[size_t(q)], jb.inner, i, j);
      if (c) return c < 0;
    }
    return false;
  };
  if (jb.stable) std::stable_sort(perm.begin(), perm.end(), lt);
  else std::sort(perm.begin(), perm.end(), lt);
  for (int q = 0; q < jb.n; ++q) {
    const size_t isz = itemsize(jb.dtypes[q]);
    const char* src = static_cast<const char*>(jb.in[q]) + size_t(base) * isz;
    char* dst = static_cast<char*>(jb.out[q]) + size_t(base) * isz;
    for (int64_t i = 0; i < jb.len; ++i)
      std::memcpy(dst + size_t(i * jb.inner) * isz, src + size_t(perm[size_t(i)] * jb.inner) * isz,
                  isz);
  }
}

Job make_job(int n, const DType* dtypes, const void* const* in, void* const* out,
             const int64_t* shape, int ndim, int axis, int num_keys, bool stable) {
  red::AxisSplit s(shape, ndim, axis);
  return Job{n, dtypes, in, out, s.outer, s.n, s.inner, num_keys, stable};
}

}  // namespace

void sort(int n, const DType* dtypes, const void* const* in, void* const* out,
          const int64_t* shape, int ndim, int axis, int num_keys, bool stable) {
  Job jb = make_job(n, dtypes, in, out, shape, ndim, axis, num_keys, stable);
  const int64_t rows = jb.outer * jb.inner;
  if (rows * jb.len == 0) return;
  std::vector<Cmp3> cmps;
  for (int q = 0; q < num_keys; ++q) cmps.push_back(cmp3_for(dtypes[q]));
  // Sorting costs ~len*log(len) per row; weigh the work accordingly.
  const int64_t work = rows * jb.len * int64_t(std::log2(double(jb.len) + 1) + 1);
  int nt = rows > 1 ? num_threads_for(work) : 1;
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    std::vector<int64_t> perm;
#pragma omp for schedule(dynamic, 16)
    for (int64_t r = 0; r < rows; ++r) sort_row(jb, r, perm, cmps);
  }
}

void sort_reference(int n, const DType* dtypes, const void* const* in, void* const* out,
                    const int64_t* shape, int ndim, int axis, int num_keys, bool stable) {
  // Insertion sort of an index permutation per row: stable by construction, and simple
  // enough to trust. (The reference is always stable; for an unstable sort compare only
  // the key operands.)
  Job jb = make_job(n, dtypes, in, out, shape, ndim, axis, num_keys, stable);
  std::vector<Cmp3> cmps;
  for (int q = 0; q < num_keys; ++q) cmps.push_back(cmp3_for(dtypes[q]));
  for (int64_t r = 0; r < jb.outer * jb.inner; ++r) {
    const int64_t o = r / jb.inner, k = r % jb.inner;
    const int64_t base = o * jb.len * jb.inner + k;
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < jb.len; ++i) {
      size_t pos = perm.size();
      while (pos > 0) {
        int c = 0;
        for (int q = 0; q < num_keys && c == 0; ++q) {
          const char* row =
              static_cast<const char*>(in[q]) + base * int64_t(itemsize(dtypes[q]));
          c = cmps[size_t(q)](row, jb.inner, perm[pos - 1], i);
        }
        if (c <= 0) break;
        --pos;
      }
      perm.insert(perm.begin() + int64_t(pos), i);
    }
    for (int q = 0; q < n; ++q) {
      const size_t isz = itemsize(dtypes[q]);
      for (int64_t i = 0; i < jb.len; ++i)
        std::memcpy(static_cast<char*>(out[q]) + size_t(base + i * jb.inner) * isz,
                    static_cast<const char*>(in[q]) + size_t(base + perm[size_t(i)] * jb.inner) * isz,
                    isz);
    }
  }
}

}  // namespace jx::cpu
