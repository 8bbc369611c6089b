// scatter / scatter_add / scatter_mul / scatter_min / scatter_max: XLA semantics. Updates
// are applied serially in index order, so duplicate indices all apply (and the result is
// deterministic); each update window is combined as merged contiguous runs with
// vectorized inner loops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "backend/cpu/complex_math.h"
#include "backend/cpu/gather.h"
#include "backend/cpu/gather_box.h"
#include "backend/cpu/kernels.h"
#include "support/dtype_switch.h"

namespace jx::cpu {
namespace {

int64_t numel(const Dims& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}
bool contains(const Dims& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

template <class T>
using compute_t =
    std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bhalf>, float, T>;

template <ScatterOp op, class T>
inline T combine(T a, T b) {
  using C = compute_t<T>;
  if constexpr (op == ScatterOp::Set) {
    return b;
  } else if constexpr (std::is_same_v<T, bool>) {
    // XLA's bool arithmetic: add = or, mul = and; min/max are and/or.
    if constexpr (op == ScatterOp::Add || op == ScatterOp::Max) return a || b;
    else return a && b;
  } else {
    const C x = C(a), y = C(b);
    if constexpr (op == ScatterOp::Add) return T(C(x + y));
    else if constexpr (op == ScatterOp::Mul) {
      if constexpr (cx::is_complex_v<C>) return cx::mul(x, y);  // as binary mul
      else return T(C(x * y));
    } else if constexpr (cx::is_complex_v<C>) {
      return a;  // min/max: rejected by check_dtype before any update
    } else {
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(x) || std::isnan(y)) return T(C(NAN));
      }
      if constexpr (op == ScatterOp::Min) return T(x < y ? x : y);
      else return T(x > y ? x : y);
    }
  }
}

template <ScatterOp op, class T>
inline void combine_run(T* dst, const T* src, int64_t n, int64_t st) {
  if (st == 1) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) dst[i] = combine<op, T>(dst[i], src[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i * st] = combine<op, T>(dst[i * st], src[i]);
  }
}

struct Geometry {
  Dims batch_shape;    // scatter dims of the indices (all but the index vector)
  Dims window_dims;    // operand dims covered by update window dims, in order
  Dims window_shape;   // per operand dim: the window extent (1 on inserted/batching dims)
};

Geometry geometry(const Dims& opshape, const Dims& ishape, const Dims& ushape,
                  const ScatterDims& dn) {
  Geometry g;
  g.batch_shape.assign(ishape.begin(), ishape.end() - 1);
  g.window_shape.assign(opshape.size(), 1);
  size_t k = 0;
  for (size_t d = 0; d < opshape.size(); ++d) {
    if (contains(dn.inserted_window_dims, int64_t(d)) ||
        contains(dn.operand_batching_dims, int64_t(d)))
      continue;
    g.window_dims.push_back(int64_t(d));
    g.window_shape[d] = ushape[size_t(dn.update_window_dims[k++])];
  }
  return g;
}

// Start of update window g in the operand; false when the window is dropped.
bool window_start(int64_t g, const int64_t* indices, int64_t K, const Geometry& geo,
                  const Dims& opshape, const ScatterDims& dn, bool clip, int64_t* start) {
  std::fill(start, start + opshape.size(), 0);
  for (int64_t k = 0; k < K; ++k)
    start[dn.scatter_dims_to_operand_dims[size_t(k)]] = indices[g * K + k];
  if (!dn.operand_batching_dims.empty()) {
    int64_t rem = g;
    std::vector<int64_t> bidx(geo.batch_shape.size());
    for (size_t d = geo.batch_shape.size(); d-- > 0;) {
      bidx[d] = rem % geo.batch_shape[d];
      rem /= geo.batch_shape[d];
    }
    for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i)
      start[dn.operand_batching_dims[i]] = bidx[size_t(dn.scatter_indices_batching_dims[i])];
  }
  for (int64_t k = 0; k < K; ++k) {
    const size_t d = size_t(dn.scatter_dims_to_operand_dims[size_t(k)]);
    const int64_t hi = opshape[d] - geo.window_shape[d];
    if (clip) start[d] = std::clamp<int64_t>(start[d], 0, hi);
    else if (start[d] < 0 || start[d] > hi) return false;
  }
  return true;
}

template <ScatterOp op, class T>
void scatter_typed(T* out, const Dims& opshape, const int64_t* indices, const Dims& ishape,
                   const T* upd, const Geometry& geo, const ScatterDims& dn, bool clip) {
  const auto os = box::row_major(opshape);
  const box::Box b = box::make(geo.window_shape.data(), os.data(), os.size());
  const int64_t W = numel(geo.window_shape), nb = numel(geo.batch_shape), K = ishape.back();
  std::vector<int64_t> start(opshape.size());
  for (int64_t g = 0; g < nb; ++g) {
    if (!window_start(g, indices, K, geo, opshape, dn, clip, start.data())) continue;
    int64_t base = 0;
    for (size_t d = 0; d < os.size(); ++d) base += start[d] * os[d];
    T* o = out + base;
    const T* u = upd + g * W;
    if (W == 1) {
      o[0] = combine<op, T>(o[0], u[0]);
      continue;
    }
    box::for_each_run(b, [&](int64_t so, int64_t dd, int64_t n, int64_t st) {
      combine_run<op, T>(o + so, u + dd, n, st);
    });
  }
}

template <class T>
void scatter_op(ScatterOp op, T* out, const Dims& opshape, const int64_t* indices,
                const Dims& ishape, const T* upd, const Geometry& geo, const ScatterDims& dn,
                bool clip) {
  switch (op) {
    case ScatterOp::Set: return scatter_typed<ScatterOp::Set>(out, opshape, indices, ishape, upd, geo, dn, clip);
    case ScatterOp::Add: return scatter_typed<ScatterOp::Add>(out, opshape, indices, ishape, upd, geo, dn, clip);
    case ScatterOp::Mul: return scatter_typed<ScatterOp::Mul>(out, opshape, indices, ishape, upd, geo, dn, clip);
    case ScatterOp::Min: return scatter_typed<ScatterOp::Min>(out, opshape, indices, ishape, upd, geo, dn, clip);
    case ScatterOp::Max: return scatter_typed<ScatterOp::Max>(out, opshape, indices, ishape, upd, geo, dn, clip);
  }
}

template <class T>
T combine_dyn(ScatterOp op, T a, T b) {
  switch (op) {
    case ScatterOp::Set: return combine<ScatterOp::Set, T>(a, b);
    case ScatterOp::Add: return combine<ScatterOp::Add, T>(a, b);
    case ScatterOp::Mul: return combine<ScatterOp::Mul, T>(a, b);
    case ScatterOp::Min: return combine<ScatterOp::Min, T>(a, b);
    case ScatterOp::Max: return combine<ScatterOp::Max, T>(a, b);
  }
  return a;
}

// Complex numbers have no order: scatter_min/max on them is a type error.
void check_dtype(ScatterOp op, DType dtype) {
  if (is_complex(dtype) && (op == ScatterOp::Min || op == ScatterOp::Max))
    cx::unsupported("scatter op", op == ScatterOp::Min ? "scatter_min" : "scatter_max", dtype);
}

}  // namespace

void scatter(ScatterOp op, DType dtype, void* out, const Dims& opshape, const int64_t* indices,
             const Dims& ishape, const void* updates, const Dims& ushape, const ScatterDims& dn,
             bool clip) {
  check_dtype(op, dtype);
  if (numel(ushape) == 0 || numel(opshape) == 0) return;
  const Geometry geo = geometry(opshape, ishape, ushape, dn);
  const size_t nbd = geo.batch_shape.size();
  bool trailing = true;
  for (size_t k = 0; k < dn.update_window_dims.size(); ++k)
    if (dn.update_window_dims[k] != int64_t(nbd + k)) trailing = false;
  const size_t isz = itemsize(dtype);
  std::vector<char> tmp;
  const void* upd = updates;
  if (!trailing) {
    // Bring the updates into [scatter dims..., window dims...] order first.
    Dims tshape = geo.batch_shape, perm;
    for (size_t d = 0; d < ushape.size(); ++d)
      if (!contains(dn.update_window_dims, int64_t(d))) perm.push_back(int64_t(d));
    for (int64_t d : dn.update_window_dims) {
      perm.push_back(d);
      tshape.push_back(ushape[size_t(d)]);
    }
    const auto us = box::row_major(ushape);
    Dims ss(perm.size());
    for (size_t j = 0; j < perm.size(); ++j) ss[j] = us[size_t(perm[j])];
    tmp.resize(size_t(numel(ushape)) * isz);
    copy_strided(isz, updates, ss.data(), tmp.data(), tshape.data(), int(tshape.size()));
    upd = tmp.data();
  }
  JX_DTYPE_SWITCH_C(dtype, T,
                  scatter_op<T>(op, static_cast<T*>(out), opshape, indices, ishape,
                                static_cast<const T*>(upd), geo, dn, clip));
}

void scatter_reference(ScatterOp op, DType dtype, void* out, const Dims& opshape,
                       const int64_t* indices, const Dims& ishape, const void* updates,
                       const Dims& ushape, const ScatterDims& dn, bool clip) {
  // Straight from XLA's definition, one update element at a time in row-major order.
  check_dtype(op, dtype);
  const Geometry geo = geometry(opshape, ishape, ushape, dn);
  const size_t R = opshape.size();
  const int64_t K = ishape.back();
  const auto os = box::row_major(opshape);
  const auto is = box::row_major(ishape);
  const int64_t n = numel(ushape);
  std::vector<int64_t> U(ushape.size()), G, S(R);
  JX_DTYPE_SWITCH_C(dtype, T, {
    T* o = static_cast<T*>(out);
    const T* u = static_cast<const T*>(updates);
    for (int64_t i = 0; i < n; ++i) {
      int64_t rem = i;
      for (size_t d = ushape.size(); d-- > 0;) {
        U[d] = rem % ushape[d];
        rem /= ushape[d];
      }
      G.clear();
      for (size_t d = 0; d < ushape.size(); ++d)
        if (!contains(dn.update_window_dims, int64_t(d))) G.push_back(U[d]);
      std::fill(S.begin(), S.end(), 0);
      int64_t ibase = 0;
      for (size_t d = 0; d < G.size(); ++d) ibase += G[d] * is[d];
      for (int64_t k = 0; k < K; ++k)
        S[size_t(dn.scatter_dims_to_operand_dims[size_t(k)])] = indices[ibase + k];
      for (size_t b = 0; b < dn.operand_batching_dims.size(); ++b)
        S[size_t(dn.operand_batching_dims[b])] = G[size_t(dn.scatter_indices_batching_dims[b])];
      bool drop = false;
      for (int64_t k = 0; k < K; ++k) {
        size_t d = size_t(dn.scatter_dims_to_operand_dims[size_t(k)]);
        int64_t hi = opshape[d] - geo.window_shape[d];
        if (S[d] >= 0 && S[d] <= hi) continue;
        if (clip) S[d] = S[d] < 0 ? 0 : hi;
        else drop = true;
      }
      if (drop) continue;
      for (size_t k = 0; k < geo.window_dims.size(); ++k)
        S[size_t(geo.window_dims[k])] += U[size_t(dn.update_window_dims[k])];
      int64_t off = 0;
      for (size_t d = 0; d < R; ++d) off += S[d] * os[d];
      o[off] = combine_dyn<T>(op, o[off], u[i]);
    }
  });
}

}  // namespace jx::cpu
