// Reductions over any subset of axes. After dropping size-1 dims and merging neighbours
// with the same reduced/kept status, two shapes of work remain:
//   A. the innermost dim is reduced: each output reduces contiguous rows (several
//      accumulators, pairwise for float sums so 16M float32 values stay within ~1e-7;
//      rows of up to 64 add lane by lane across the outer reduced rows, then fold once;
//      rows with no outer reduced dim go straight to the row loop, one output each);
//   B. the innermost dim is kept: each output row accumulates input rows, vectorized
//      across the kept dim, four rows per update of the accumulator row (float sums in
//      blocks of rows for accuracy).
// Both split across threads by outputs when there are enough, else by the reduced range.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "backend/cpu/loops.h"
#include "backend/cpu/reduce_ops.h"
#include "support/check.h"
#include "support/dtype_switch.h"

namespace jx::cpu {
namespace {

using red::acc_t;
using red::combine;
using red::identity;

const char* reduce_name(ReduceOp op) {
  static const char* const names[] = {"sum", "prod", "max", "min", "and", "or", "xor"};
  return names[size_t(op)];
}

// A multi-index over some dims of the input, tracking its element offset. Made once per
// output and range of rows: the index lives inline up to 8 dims, so that short rows
// (576 outputs of 16 rows of 32) do not pay an allocation each.
struct Walker {
  const std::vector<int64_t>* sizes;
  const std::vector<int64_t>* strides;
  int64_t inline_idx[8] = {};
  std::vector<int64_t> heap_idx;
  int64_t* idx;
  int64_t off = 0;
  Walker(const std::vector<int64_t>& sz, const std::vector<int64_t>& st, int64_t linear)
      : sizes(&sz), strides(&st), heap_idx(sz.size() > 8 ? sz.size() : 0, 0),
        idx(sz.size() > 8 ? heap_idx.data() : inline_idx) {
    for (int d = int(sz.size()) - 1; d >= 0; --d) {
      idx[size_t(d)] = linear % sz[size_t(d)];
      linear /= sz[size_t(d)];
      off += idx[size_t(d)] * st[size_t(d)];
    }
  }
  Walker(const Walker&) = delete;  // idx may point into this object
  Walker& operator=(const Walker&) = delete;
  void step() {
    for (int d = int(sizes->size()) - 1; d >= 0; --d) {
      off += (*strides)[size_t(d)];
      if (++idx[size_t(d)] < (*sizes)[size_t(d)]) return;
      off -= (*strides)[size_t(d)] * (*sizes)[size_t(d)];
      idx[size_t(d)] = 0;
    }
  }
};

inline int64_t offset_of(const std::vector<int64_t>& sz, const std::vector<int64_t>& st,
                         int64_t linear) {
  int64_t off = 0;
  for (int d = int(sz.size()) - 1; d >= 0; --d) {
    off += (linear % sz[size_t(d)]) * st[size_t(d)];
    linear /= sz[size_t(d)];
  }
  return off;
}

// A scratch row; not std::vector, whose bool specialization has no data().
template <class C>
struct Row {
  std::unique_ptr<C[]> p;
  size_t n = 0;
  explicit Row(size_t size = 0) : p(new C[size ? size : 1]), n(size) {}
  C* data() { return p.get(); }
  C& operator[](size_t i) { return p[i]; }
  C* begin() { return p.get(); }
  C* end() { return p.get() + n; }
};

inline int64_t prod(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (auto d : v) p *= d;
  return p;
}

// Reduces n contiguous elements.
template <ReduceOp op, class T, class C>
C row_reduce(const T* p, int64_t n) {
  constexpr int W = 16;
  if constexpr (op == ReduceOp::Sum && red::is_float_sum_v<C>) {
    if (n > 1024) {  // pairwise: error grows with log(n), not n
      int64_t h = (n / 2 + W - 1) / W * W;
      return C(row_reduce<op, T, C>(p, h) + row_reduce<op, T, C>(p + h, n - h));
    }
  }
  C acc[W];
  for (int j = 0; j < W; ++j) acc[j] = identity<op, C>();
  int64_t i = 0;
  for (; i + W <= n; i += W) {
#pragma omp simd
    for (int j = 0; j < W; ++j) acc[j] = combine<op, C>(acc[j], C(p[i + j]));
  }
  for (int j = 0; i < n; ++i, ++j) acc[j] = combine<op, C>(acc[j], C(p[i]));
  for (int w = W / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) acc[j] = combine<op, C>(acc[j], acc[j + w]);
  return acc[0];
}

// acc[k] op= row[k] for k < n.
template <ReduceOp op, class T, class C>
inline void row_accumulate(C* __restrict acc, const T* __restrict row, int64_t n) {
#pragma omp simd
  for (int64_t k = 0; k < n; ++k) acc[k] = combine<op, C>(acc[k], C(row[k]));
}

// acc[k] op= (r0[k] op r1[k]) op (r2[k] op r3[k]): one load and store of the accumulator
// per four rows, and the rows combine independently of it. Ties and NaN in max/min keep
// the first row's value as the one-row loop does.
template <ReduceOp op, class T, class C>
inline void rows4_accumulate(C* __restrict acc, const T* __restrict r0, const T* __restrict r1,
                             const T* __restrict r2, const T* __restrict r3, int64_t n) {
#pragma omp simd
  for (int64_t k = 0; k < n; ++k)
    acc[k] = combine<op, C>(acc[k], combine<op, C>(combine<op, C>(C(r0[k]), C(r1[k])),
                                                   combine<op, C>(C(r2[k]), C(r3[k]))));
}

struct Plan {
  std::vector<int64_t> ksz, kst;  // outer kept dims: sizes, input strides
  std::vector<int64_t> rsz, rst;  // outer reduced dims
  int64_t inner = 1;              // the innermost merged dim
  bool inner_reduced = false;
};

// Innermost rows up to this long are accumulated lane by lane across the outer reduced
// rows (reduce_inner_reduced).
constexpr int64_t kShortRow = 64;

template <ReduceOp op, class T>
void reduce_inner_reduced(const Plan& pl, const T* x, T* out) {
  using C = acc_t<op, T>;
  const int64_t R = pl.inner, Nout = prod(pl.ksz), Nr = prod(pl.rsz);
  const int nt = num_threads_for(Nout * Nr * R);
  if (Nr == 1 && Nout >= nt && (pl.ksz.empty() || pl.kst[0] == R)) {
    // Each output one contiguous row ([N, 32] over its last axis: a layer norm's statistics
    // over channels), reduced as below, without the multi-index and the recursion that
    // cost more than a short row's arithmetic.
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t o = 0; o < Nout; ++o) out[o] = T(row_reduce<op, T, C>(x + o * R, R));
    return;
  }
  constexpr bool pairwise = op == ReduceOp::Sum && red::is_float_sum_v<C>;
  auto part = [&](int64_t o, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    const T* base = x + offset_of(pl.ksz, pl.kst, o) + c0;
    auto seq = [&](int64_t a, int64_t b) {
      Walker w(pl.rsz, pl.rst, a);
      const int64_t n = c1 - c0;
      if (n <= kShortRow && b - a > 1) {
        // Short rows (an outer and the innermost dim reduced with kept dims between them:
        // [16, 24, 24, 32] over (0, 3)) add lane by lane and fold once: folding 16 lanes
        // after every row of 32 made such a reduction 6x slower than a contiguous one.
        C lanes[kShortRow];
        for (int64_t k = 0; k < n; ++k) lanes[k] = identity<op, C>();
        for (int64_t r = a; r < b; ++r, w.step()) row_accumulate<op, T, C>(lanes, base + w.off, n);
        return row_reduce<op, C, C>(lanes, n);
      }
      C acc = identity<op, C>();
      for (int64_t r = a; r < b; ++r, w.step())
        acc = combine<op, C>(acc, row_reduce<op, T, C>(base + w.off, n));
      return acc;
    };
    if constexpr (pairwise) {  // pairwise over the rows too
      auto rec = [&](auto& self, int64_t a, int64_t b) -> C {
        if (b - a <= 8) return seq(a, b);
        const int64_t m = a + (b - a) / 2;
        return C(self(self, a, m) + self(self, m, b));
      };
      return rec(rec, r0, r1);
    } else {
      return seq(r0, r1);
    }
  };
  if (nt <= 1) {
    for (int64_t o = 0; o < Nout; ++o) out[o] = T(part(o, 0, Nr, 0, R));
  } else if (Nout >= nt) {
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t o = 0; o < Nout; ++o) out[o] = T(part(o, 0, Nr, 0, R));
  } else {
    Row<C> partial(static_cast<size_t>(nt));
    for (int64_t o = 0; o < Nout; ++o) {
#pragma omp parallel num_threads(nt)
      {
        const int t = omp_get_thread_num(), T_ = omp_get_num_threads();
        if (Nr >= T_) {
          partial[size_t(t)] = part(o, Nr * t / T_, Nr * (t + 1) / T_, 0, R);
        } else {  // split each row; the partials combine in thread order
          C acc = identity<op, C>();
          const int64_t c0 = R * t / T_ / 16 * 16, c1 = t + 1 == T_ ? R : R * (t + 1) / T_ / 16 * 16;
          if (c1 > c0) acc = part(o, 0, Nr, c0, c1);
          partial[size_t(t)] = acc;
        }
      }
      C acc = identity<op, C>();
      for (int t = 0; t < nt; ++t) acc = combine<op, C>(acc, partial[size_t(t)]);
      out[o] = T(acc);
    }
  }
}

template <ReduceOp op, class T>
void reduce_inner_kept(const Plan& pl, const T* x, T* out) {
  using C = acc_t<op, T>;
  const int64_t K = pl.inner, Nrow = prod(pl.ksz), Nr = prod(pl.rsz);
  constexpr bool blocked = op == ReduceOp::Sum && red::is_float_sum_v<C>;
  // Pairwise over the reduced rows for float sums: blocks of 64 rows are summed directly,
  // larger ranges in halves, each level using one scratch row of `blk`.
  int levels = 1;
  while ((Nr >> (levels - 1)) > 64) ++levels;
  // acc[0..c1-c0) op= rows r0..r1 of output row o, columns c0..c1.
  auto accumulate = [&](int64_t o, int64_t r0, int64_t r1, int64_t c0, int64_t c1, C* acc,
                        C* blk) {
    const T* base = x + offset_of(pl.ksz, pl.kst, o) + c0;
    const int64_t n = c1 - c0;
    auto seq = [&](int64_t a, int64_t b, C* dst) {
      Walker w(pl.rsz, pl.rst, a);
      int64_t r = a;
      for (; r + 4 <= b; r += 4) {
        const T* p[4];
        for (auto& q : p) q = base + w.off, w.step();
        rows4_accumulate<op, T, C>(dst, p[0], p[1], p[2], p[3], n);
      }
      for (; r < b; ++r, w.step()) row_accumulate<op, T, C>(dst, base + w.off, n);
    };
    if constexpr (blocked) {
      auto rec = [&](auto& self, int64_t a, int64_t b, C* dst, int level) -> void {
        if (b - a <= 64) return seq(a, b, dst);
        const int64_t m = a + (b - a) / 2;
        self(self, a, m, dst, level + 1);
        C* tmp = blk + int64_t(level) * (c1 - c0);
        std::fill(tmp, tmp + n, C(0));
        self(self, m, b, tmp, level + 1);
#pragma omp simd
        for (int64_t k = 0; k < n; ++k) dst[k] += tmp[k];
      };
      rec(rec, r0, r1, acc, 0);
    } else {
      seq(r0, r1, acc);
    }
  };
  auto row = [&](int64_t o, Row<C>& acc, Row<C>& blk) {
    std::fill(acc.begin(), acc.end(), identity<op, C>());
    accumulate(o, 0, Nr, 0, K, acc.data(), blk.data());
    T* dst = out + o * K;
    for (int64_t k = 0; k < K; ++k) dst[k] = T(acc[size_t(k)]);
  };
  const int nt = num_threads_for(Nrow * Nr * K);
  const size_t Ks = static_cast<size_t>(K);
  if (nt <= 1 || Nrow >= nt) {
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
      Row<C> acc(Ks), blk(blocked ? Ks * size_t(levels) : 0);
#pragma omp for schedule(static)
      for (int64_t o = 0; o < Nrow; ++o) row(o, acc, blk);
    }
    return;
  }
  // Few output rows: split the reduced range; per-thread partial rows combine in order.
  std::vector<Row<C>> partial;
  for (int t = 0; t < nt; ++t) partial.emplace_back(Ks);
  for (int64_t o = 0; o < Nrow; ++o) {
#pragma omp parallel num_threads(nt)
    {
      const int t = omp_get_thread_num(), T_ = omp_get_num_threads();
      Row<C> blk(blocked ? Ks * size_t(levels) : 0);
      auto& acc = partial[size_t(t)];
      std::fill(acc.begin(), acc.end(), identity<op, C>());
      if (Nr >= T_) {
        accumulate(o, Nr * t / T_, Nr * (t + 1) / T_, 0, K, acc.data(), blk.data());
      } else {
        const int64_t c0 = K * t / T_, c1 = K * (t + 1) / T_;
        if (c1 > c0) accumulate(o, 0, Nr, c0, c1, acc.data() + c0, blk.data());
        // columns outside [c0, c1) stay at the identity in this thread's partial
      }
    }
    T* dst = out + o * K;
    for (int64_t k = 0; k < K; ++k) {
      C a = identity<op, C>();
      for (int t = 0; t < nt; ++t) a = combine<op, C>(a, partial[size_t(t)][size_t(k)]);
      dst[k] = T(a);
    }
  }
}

// Complex max/min: XLA's reducer (lax::max's select, kept as acc = reducer(acc, x)) is not
// associative once a NaN part takes part (a NaN accumulator gives way to the next element),
// so each output folds its elements in row-major order from the identity, one accumulator,
// as XLA's CPU reduce loop does; outputs split across threads.
template <ReduceOp op, class T>
void reduce_in_order(const Plan& pl, const T* x, T* out) {
  const int64_t Nout = prod(pl.ksz), Nr = prod(pl.rsz), R = pl.inner;
  const int nt = num_threads_for(Nout * Nr * R);
  if (pl.inner_reduced) {
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t o = 0; o < Nout; ++o) {
      const T* base = x + offset_of(pl.ksz, pl.kst, o);
      T acc = identity<op, T>();
      Walker w(pl.rsz, pl.rst, 0);
      for (int64_t r = 0; r < Nr; ++r, w.step())
        for (int64_t i = 0; i < R; ++i) acc = combine<op, T>(acc, base[w.off + i]);
      out[o] = acc;
    }
    return;
  }
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
  for (int64_t o = 0; o < Nout; ++o) {
    const T* base = x + offset_of(pl.ksz, pl.kst, o);
    T* dst = out + o * R;
    for (int64_t k = 0; k < R; ++k) dst[k] = identity<op, T>();
    Walker w(pl.rsz, pl.rst, 0);
    for (int64_t r = 0; r < Nr; ++r, w.step())
      for (int64_t k = 0; k < R; ++k) dst[k] = combine<op, T>(dst[k], base[w.off + k]);
  }
}

// A reduction whose reduced dims hold one element each copies its input: XLA's simplifier
// replaces such a reduce by a reshape (taking the init value for an identity), so complex
// max/min, whose init value is not one (lex_max(-inf + 0j, -inf - 1j) = -inf + 0j), keep the
// element there as in JAX.
template <ReduceOp op, class T>
bool copies_input(const int64_t* shape, int ndim, const bool* reduced) {
  if constexpr (!cx::is_complex_v<T> || (op != ReduceOp::Max && op != ReduceOp::Min)) {
    return false;
  } else {
    for (int d = 0; d < ndim; ++d)
      if (reduced[d] && shape[d] != 1) return false;
    return true;
  }
}

template <ReduceOp op, class T>
void reduce_typed(const T* x, const int64_t* shape, int ndim, const bool* reduced, T* out) {
  if constexpr (!red::supported<op, T>()) {
    if constexpr (cx::is_complex_v<T>) cx::unsupported("reduction", reduce_name(op), dtype_of<T>());
    throw InternalError("jx internal error: reduce kernel called with an unsupported dtype");
  } else {
    using C = acc_t<op, T>;
    int64_t total = 1, nout = 1;
    for (int d = 0; d < ndim; ++d) {
      total *= shape[d];
      if (!reduced[d]) nout *= shape[d];
    }
    if (total == 0) {
      for (int64_t i = 0; i < nout; ++i) out[i] = T(identity<op, C>());
      return;
    }
    if (copies_input<op, T>(shape, ndim, reduced)) {
      std::copy(x, x + total, out);
      return;
    }
    // Merge: drop size-1 dims, join neighbours with equal status.
    std::vector<int64_t> sz, st;
    std::vector<bool> fl;
    auto strides = contiguous_strides(shape, ndim);
    for (int d = 0; d < ndim; ++d) {
      if (shape[d] == 1) continue;
      if (!sz.empty() && fl.back() == reduced[d]) {
        sz.back() *= shape[d];
        st.back() = strides[size_t(d)];
      } else {
        sz.push_back(shape[d]);
        st.push_back(strides[size_t(d)]);
        fl.push_back(reduced[d]);
      }
    }
    if (sz.empty()) {
      out[0] = x[0];
      return;
    }
    Plan pl;
    pl.inner = sz.back();
    pl.inner_reduced = fl.back();
    for (size_t d = 0; d + 1 < sz.size(); ++d) {
      (fl[d] ? pl.rsz : pl.ksz).push_back(sz[d]);
      (fl[d] ? pl.rst : pl.kst).push_back(st[d]);
    }
    if constexpr (cx::is_complex_v<T> && (op == ReduceOp::Max || op == ReduceOp::Min))
      reduce_in_order<op, T>(pl, x, out);
    else if (pl.inner_reduced) reduce_inner_reduced<op, T>(pl, x, out);
    else reduce_inner_kept<op, T>(pl, x, out);
  }
}

template <class T>
void reduce_dispatch(ReduceOp op, const void* x, const int64_t* shape, int ndim,
                     const bool* reduced, void* out) {
  auto X = static_cast<const T*>(x);
  auto O = static_cast<T*>(out);
  switch (op) {
    case ReduceOp::Sum: return reduce_typed<ReduceOp::Sum, T>(X, shape, ndim, reduced, O);
    case ReduceOp::Prod: return reduce_typed<ReduceOp::Prod, T>(X, shape, ndim, reduced, O);
    case ReduceOp::Max: return reduce_typed<ReduceOp::Max, T>(X, shape, ndim, reduced, O);
    case ReduceOp::Min: return reduce_typed<ReduceOp::Min, T>(X, shape, ndim, reduced, O);
    case ReduceOp::And: return reduce_typed<ReduceOp::And, T>(X, shape, ndim, reduced, O);
    case ReduceOp::Or: return reduce_typed<ReduceOp::Or, T>(X, shape, ndim, reduced, O);
    case ReduceOp::Xor: return reduce_typed<ReduceOp::Xor, T>(X, shape, ndim, reduced, O);
  }
}

template <ReduceOp op, class T>
void reduce_reference_typed(const T* x, const int64_t* shape, int ndim, const bool* reduced,
                            T* out) {
  if constexpr (!red::supported<op, T>()) {
    if constexpr (cx::is_complex_v<T>) cx::unsupported("reduction", reduce_name(op), dtype_of<T>());
    throw InternalError("jx internal error: reduce kernel called with an unsupported dtype");
  } else {
    // One pass over the input in order; each element goes to its output slot. Float sums
    // accumulate in double so that the oracle is more accurate than the kernel under test.
    using C0 = acc_t<op, T>;
    using C = std::conditional_t<
        std::is_floating_point_v<C0> && op == ReduceOp::Sum, double,
        std::conditional_t<cx::is_complex_v<C0> && op == ReduceOp::Sum, std::complex<double>, C0>>;
    int64_t total = 1, nout = 1;
    for (int d = 0; d < ndim; ++d) {
      total *= shape[d];
      if (!reduced[d]) nout *= shape[d];
    }
    std::vector<C> acc(static_cast<size_t>(nout), identity<op, C>());
    std::vector<int64_t> idx(static_cast<size_t>(ndim), 0);
    for (int64_t i = 0; i < total; ++i) {
      int64_t rem = i, o = 0, ostride = 1;
      for (int d = ndim - 1; d >= 0; --d) {
        idx[size_t(d)] = rem % shape[d];
        rem /= shape[d];
      }
      for (int d = ndim - 1; d >= 0; --d) {
        if (reduced[d]) continue;
        o += idx[size_t(d)] * ostride;
        ostride *= shape[d];
      }
      acc[size_t(o)] = combine<op, C>(acc[size_t(o)], C(C0(x[i])));
    }
    for (int64_t o = 0; o < nout; ++o) out[o] = T(C0(acc[size_t(o)]));
    if (copies_input<op, T>(shape, ndim, reduced)) std::copy(x, x + total, out);
  }
}

template <class T>
void reduce_reference_dispatch(ReduceOp op, const void* x, const int64_t* shape, int ndim,
                               const bool* reduced, void* out) {
  auto X = static_cast<const T*>(x);
  auto O = static_cast<T*>(out);
  switch (op) {
#define JX_CASE(name) \
  case ReduceOp::name: return reduce_reference_typed<ReduceOp::name, T>(X, shape, ndim, reduced, O);
    JX_CASE(Sum) JX_CASE(Prod) JX_CASE(Max) JX_CASE(Min) JX_CASE(And) JX_CASE(Or) JX_CASE(Xor)
#undef JX_CASE
  }
}

// ---- argmax / argmin ----

template <bool is_max, class C>
inline bool better(C v, C best) {
  if constexpr (cx::is_complex_v<C>) {
    // NumPy's complex argmax (and JAX's argmax reducer with a lexicographic comparator):
    // the first value with a NaN part wins, else the first lexicographic extreme.
    auto nan = [](C z) { return z.real() != z.real() || z.imag() != z.imag(); };
    if (nan(best)) return false;
    if (nan(v)) return true;
    if (v.real() != best.real())
      return is_max ? v.real() > best.real() : v.real() < best.real();
    return is_max ? v.imag() > best.imag() : v.imag() < best.imag();
  } else {
    if constexpr (std::is_floating_point_v<C>) {
      if (v != v) return best == best;  // the first NaN wins
    }
    if constexpr (is_max) return v > best;
    else return v < best;
  }
}

template <bool is_max, class T, class I>
void argreduce_typed(const T* x, const red::AxisSplit& s, I* out) {
  using C = std::conditional_t<red::is_half_v<T>, float, T>;
  const int64_t outer = s.outer, n = s.n, inner = s.inner;
  const int nt = num_threads_for(outer * n * inner);
  if constexpr (cx::is_complex_v<C>) {
    if (inner == 1) {  // one pass: complex has no vectorized extreme to look up
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
      for (int64_t o = 0; o < outer; ++o) {
        const T* p = x + o * n;
        int64_t k = 0;
        for (int64_t i = 1; i < n; ++i)
          if (better<is_max, C>(p[i], p[k])) k = i;
        out[o] = I(k);
      }
      return;
    }
  } else if (inner == 1) {
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t o = 0; o < outer; ++o) {
      const T* p = x + o * n;
      // Two passes: a vectorized extreme (NaN-sticky), then the first index holding it.
      constexpr ReduceOp rop = is_max ? ReduceOp::Max : ReduceOp::Min;
      const C m = row_reduce<rop, T, C>(p, n);
      int64_t k = 0;
      if (red::isnan_(m)) {
        while (!red::isnan_(C(p[k]))) ++k;
      } else {
        while (C(p[k]) != m) ++k;
      }
      out[o] = I(k);
    }
    return;
  }
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    Row<C> best(static_cast<size_t>(inner));
    Row<I> bi(static_cast<size_t>(inner));
#pragma omp for schedule(static)
    for (int64_t o = 0; o < outer; ++o) {
      const T* p = x + o * n * inner;
      for (int64_t k = 0; k < inner; ++k) {
        best[size_t(k)] = C(p[k]);
        bi[size_t(k)] = 0;
      }
      C* b = best.data();
      I* id = bi.data();
      for (int64_t i = 1; i < n; ++i) {
        const T* row = p + i * inner;
#pragma omp simd
        for (int64_t k = 0; k < inner; ++k) {
          C v = C(row[k]);
          bool u = better<is_max, C>(v, b[k]);
          b[k] = u ? v : b[k];
          id[k] = u ? I(i) : id[k];
        }
      }
      std::memcpy(out + o * inner, id, size_t(inner) * sizeof(I));
    }
  }
}

template <bool is_max, class T, class I>
void argreduce_reference_typed(const T* x, const red::AxisSplit& s, I* out) {
  using C = std::conditional_t<red::is_half_v<T>, float, T>;
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t k = 0; k < s.inner; ++k) {
      int64_t bi = 0;
      C best = C(x[o * s.n * s.inner + k]);
      for (int64_t i = 1; i < s.n; ++i) {
        C v = C(x[(o * s.n + i) * s.inner + k]);
        if (better<is_max, C>(v, best)) {
          best = v;
          bi = i;
        }
      }
      out[o * s.inner + k] = I(bi);
    }
}

template <bool ref>
void argreduce_impl(bool is_max, DType dtype, DType index_dtype, const void* x,
                    const int64_t* shape, int ndim, int axis, void* out) {
  red::AxisSplit s(shape, ndim, axis);
  if (s.outer * s.inner == 0) return;
  JX_CHECK(s.n > 0, "argreduce over an empty axis");
  JX_CHECK(index_dtype == DType::Int32 || index_dtype == DType::Int64,
           "argreduce kernels write int32 or int64 indices");
  JX_DTYPE_SWITCH_C(dtype, T, {
    auto X = static_cast<const T*>(x);
    auto run = [&](auto* O) {
      using I = std::remove_pointer_t<decltype(O)>;
      if constexpr (ref) {
        if (is_max) argreduce_reference_typed<true, T, I>(X, s, O);
        else argreduce_reference_typed<false, T, I>(X, s, O);
      } else {
        if (is_max) argreduce_typed<true, T, I>(X, s, O);
        else argreduce_typed<false, T, I>(X, s, O);
      }
    };
    if (index_dtype == DType::Int32) run(static_cast<int32_t*>(out));
    else run(static_cast<int64_t*>(out));
  });
}

}  // namespace

void reduce(ReduceOp op, DType dtype, const void* x, const int64_t* shape, int ndim,
            const bool* reduced, void* out) {
  JX_DTYPE_SWITCH_C(dtype, T, reduce_dispatch<T>(op, x, shape, ndim, reduced, out));
}

void reduce_reference(ReduceOp op, DType dtype, const void* x, const int64_t* shape, int ndim,
                      const bool* reduced, void* out) {
  JX_DTYPE_SWITCH_C(dtype, T, reduce_reference_dispatch<T>(op, x, shape, ndim, reduced, out));
}

void argreduce(bool is_max, DType dtype, DType index_dtype, const void* x, const int64_t* shape,
               int ndim, int axis, void* out) {
  argreduce_impl<false>(is_max, dtype, index_dtype, x, shape, ndim, axis, out);
}

void argreduce_reference(bool is_max, DType dtype, DType index_dtype, const void* x,
                         const int64_t* shape, int ndim, int axis, void* out) {
  argreduce_impl<true>(is_max, dtype, index_dtype, x, shape, ndim, axis, out);
}

}  // namespace jx::cpu
