// Inclusive scans along one axis. With the axis innermost each row is a sequential scan
// (rows split across threads); otherwise the scan steps along the axis and is vectorized
// across the trailing dims. Half types accumulate in float but round every step, so the
// result equals a scan carried out in the storage type.
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/loops.h"
#include "backend/cpu/reduce_ops.h"
#include "support/dtype_switch.h"

namespace jx::cpu {
namespace {

template <class T>
using cum_compute_t = std::conditional_t<red::is_half_v<T>, float, T>;

template <CumOp op, class C>
inline C cum_combine(C a, C b) {
  if constexpr (op == CumOp::Sum) return red::combine<ReduceOp::Sum, C>(a, b);
  else if constexpr (op == CumOp::Prod) return red::combine<ReduceOp::Prod, C>(a, b);
  else if constexpr (op == CumOp::Max) return red::combine<ReduceOp::Max, C>(a, b);
  else if constexpr (op == CumOp::Min) return red::combine<ReduceOp::Min, C>(a, b);
  else {
    // log(exp(a) + exp(b)), stable: max + log1p(exp(-|a - b|)).
    if (a != a || b != b) return a + b;
    if (a == -std::numeric_limits<C>::infinity()) return b;
    if (b == -std::numeric_limits<C>::infinity()) return a;
    C m = a > b ? a : b;
    if (m == std::numeric_limits<C>::infinity()) return m;
    return m + std::log1p(std::exp(-std::fabs(a - b)));
  }
}

template <CumOp op, class T>
constexpr bool cum_supported() {
  if constexpr (cx::is_complex_v<T>) return op != CumOp::LogSumExp;  // max/min: lexicographic
  constexpr bool fl = std::is_floating_point_v<T> || red::is_half_v<T>;
  if constexpr (op == CumOp::LogSumExp) return fl;
  if constexpr (op == CumOp::Sum || op == CumOp::Prod) return !std::is_same_v<T, bool>;
  return true;
}

// Signed ints scan in the unsigned type of the same width, so that overflow wraps.
template <CumOp op, class T>
using wrap_t = typename std::conditional_t<std::is_integral_v<T> && std::is_signed_v<T> &&
                                               (op == CumOp::Sum || op == CumOp::Prod),
                                           std::make_unsigned<T>,
                                           std::type_identity<cum_compute_t<T>>>::type;

template <CumOp op, class T>
void cumulative_typed(const T* x, const red::AxisSplit& s, bool reverse, T* out) {
  using C = wrap_t<op, T>;
  const int64_t outer = s.outer, n = s.n, inner = s.inner;
  if (outer * n * inner == 0) return;
  const int nt = num_threads_for(outer * n * inner);
  if (inner == 1) {
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t o = 0; o < outer; ++o) {
      const T* p = x + o * n;
      T* q = out + o * n;
      if (!reverse) {
        C acc = C(p[0]);
        q[0] = T(acc);
        for (int64_t i = 1; i < n; ++i) {
          acc = C(T(cum_combine<op, C>(acc, C(p[i]))));
          q[i] = T(acc);
        }
      } else {
        C acc = C(p[n - 1]);
        q[n - 1] = T(acc);
        for (int64_t i = n - 2; i >= 0; --i) {
          acc = C(T(cum_combine<op, C>(acc, C(p[i]))));
          q[i] = T(acc);
        }
      }
    }
    return;
  }
  // Step along the axis, a whole row of `inner` elements at a time.
  auto scan_cols = [&](int64_t o, int64_t c0, int64_t c1) {
    const T* p = x + o * n * inner;
    T* q = out + o * n * inner;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = reverse ? n - 1 - j : j;
      const T* row = p + i * inner;
      T* dst = q + i * inner;
      if (j == 0) {
        for (int64_t k = c0; k < c1; ++k) dst[k] = row[k];
        continue;
      }
      const T* prev = q + (reverse ? i + 1 : i - 1) * inner;
#pragma omp simd
      for (int64_t k = c0; k < c1; ++k) dst[k] = T(cum_combine<op, C>(C(prev[k]), C(row[k])));
    }
  };
  if (outer >= nt) {
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t o = 0; o < outer; ++o) scan_cols(o, 0, inner);
  } else {
    for (int64_t o = 0; o < outer; ++o) {
#pragma omp parallel num_threads(nt)
      {
        const int t = omp_get_thread_num(), T_ = omp_get_num_threads();
        scan_cols(o, inner * t / T_, inner * (t + 1) / T_);
      }
    }
  }
}

template <CumOp op, class T>
void cumulative_reference_typed(const T* x, const red::AxisSplit& s, bool reverse, T* out) {
  using C = wrap_t<op, T>;
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t k = 0; k < s.inner; ++k) {
      C acc{};
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t i = reverse ? s.n - 1 - j : j;
        const int64_t at = (o * s.n + i) * s.inner + k;
        acc = j == 0 ? C(x[at]) : C(T(cum_combine<op, C>(acc, C(x[at]))));
        out[at] = T(acc);
      }
    }
}

template <bool ref, class T>
void cumulative_dispatch(CumOp op, const T* x, const red::AxisSplit& s, bool reverse, T* out) {
  auto run = [&](auto tag) {
    constexpr CumOp o = decltype(tag)::value;
    if constexpr (!cum_supported<o, T>()) {
      if constexpr (cx::is_complex_v<T>) {
        constexpr const char* names[] = {"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"};
        cx::unsupported("cumulative op", names[int(o)], dtype_of<T>());
      }
      throw InternalError("jx internal error: cumulative kernel called with an unsupported dtype");
    } else if constexpr (ref) {
      cumulative_reference_typed<o, T>(x, s, reverse, out);
    } else {
      cumulative_typed<o, T>(x, s, reverse, out);
    }
  };
  switch (op) {
    case CumOp::Sum: return run(std::integral_constant<CumOp, CumOp::Sum>{});
    case CumOp::Prod: return run(std::integral_constant<CumOp, CumOp::Prod>{});
    case CumOp::Max: return run(std::integral_constant<CumOp, CumOp::Max>{});
    case CumOp::Min: return run(std::integral_constant<CumOp, CumOp::Min>{});
    case CumOp::LogSumExp: return run(std::integral_constant<CumOp, CumOp::LogSumExp>{});
  }
}

}  // namespace

void cumulative(CumOp op, DType dtype, const void* x, const int64_t* shape, int ndim, int axis,
                bool reverse, void* out) {
  red::AxisSplit s(shape, ndim, axis);
  JX_DTYPE_SWITCH_C(dtype, T,
                  cumulative_dispatch<false, T>(op, static_cast<const T*>(x), s, reverse,
                                                static_cast<T*>(out)));
}

void cumulative_reference(CumOp op, DType dtype, const void* x, const int64_t* shape, int ndim,
                          int axis, bool reverse, void* out) {
  red::AxisSplit s(shape, ndim, axis);
  JX_DTYPE_SWITCH_C(dtype, T,
                  cumulative_dispatch<true, T>(op, static_cast<const T*>(x), s, reverse,
                                               static_cast<T*>(out)));
}

}  // namespace jx::cpu
