// select_n and clamp kernels. select_n only moves bytes, so it dispatches on the item size
// instead of the dtype; clamp needs the dtype's ordering.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "backend/cpu/complex_math.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "support/dtype_switch.h"

namespace jx::cpu {
namespace {

template <class W>
inline int64_t clamp_which(W w, int n) {
  if constexpr (std::is_same_v<W, bool>) {
    return w ? (n > 1 ? 1 : 0) : 0;
  } else {
    int64_t k = int64_t(w);
    return k < 0 ? 0 : (k >= n ? n - 1 : k);
  }
}

// b where take_b, else a, without a branch (E is an unsigned type of the item's size).
template <class E>
inline E blend(bool take_b, E a, E b) {
  E mask = E(E(0) - E(take_b));
  return E((b & mask) | (a & E(~mask)));
}

// complex128's 16 bytes as two words: only 8-byte alignment is guaranteed, which rules
// out unsigned __int128 (16-aligned loads).
struct Item16 {
  uint64_t lo, hi;
};
template <>
inline Item16 blend<Item16>(bool take_b, Item16 a, Item16 b) {
  return {blend<uint64_t>(take_b, a.lo, b.lo), blend<uint64_t>(take_b, a.hi, b.hi)};
}

// The predicate's bytes: GCC does not vectorize loads of bool, but does of uint8_t, and a
// jx bool is stored as one byte 0 or 1.
inline const uint8_t* predicate_bytes(const bool* w) { return reinterpret_cast<const uint8_t*>(w); }

template <class W, class E>
void select2(const W* which, const int64_t* ws, const E* c0, const int64_t* s0, const E* c1,
             const int64_t* s1, E* out, const int64_t* os, int ndim) {
  StridedLoop<3> loop(os, ndim,
                      {broadcast_strides(ws, os, ndim), broadcast_strides(s0, os, ndim),
                       broadcast_strides(s1, os, ndim)});
  loop.run([&](int64_t o, const std::array<int64_t, 3>& off, int64_t n,
               const std::array<int64_t, 3>& st) {
    const W* w = which + off[0];
    const E* a = c0 + off[1];
    const E* b = c1 + off[2];
    E* po = out + o;
    auto unit = [](int64_t s) { return s == 0 || s == 1; };
    if (st[0] == 1 && unit(st[1]) && unit(st[2])) {
      // The common shapes: a full predicate with full or scalar cases (jvp rules select
      // between a tangent and a broadcast constant). Constant strides and a branch-free
      // blend vectorize; a branch would mispredict on data like relu's mask.
      auto run = [&](auto s1, auto s2) {
        if constexpr (std::is_same_v<W, bool>) {
          const uint8_t* wb = predicate_bytes(w);
#pragma omp simd
          for (int64_t i = 0; i < n; ++i) po[i] = blend<E>(wb[i] != 0, a[i * s1], b[i * s2]);
        } else {
#pragma omp simd
          for (int64_t i = 0; i < n; ++i) po[i] = blend<E>(w[i] > W(0), a[i * s1], b[i * s2]);
        }
      };
      using Z = std::integral_constant<int64_t, 0>;
      using O = std::integral_constant<int64_t, 1>;
      if (st[1] == 1 && st[2] == 1) run(O{}, O{});
      else if (st[1] == 1) run(O{}, Z{});
      else if (st[2] == 1) run(Z{}, O{});
      else run(Z{}, Z{});
    } else if (st[0] == 0) {  // one predicate for the whole run: a plain copy
      const E* src = w[0] > W(0) ? b : a;
      int64_t s = w[0] > W(0) ? st[2] : st[1];
      for (int64_t i = 0; i < n; ++i) po[i] = src[i * s];
    } else {
      for (int64_t i = 0; i < n; ++i) po[i] = blend<E>(w[i * st[0]] > W(0), a[i * st[1]], b[i * st[2]]);
    }
  });
}

// n > 2 cases: one masked pass per case.
template <class W, class E>
void select_many(const W* which, const int64_t* ws, const E* const* cases,
                 const int64_t* const* cs, int ncases, E* out, const int64_t* os, int ndim) {
  for (int k = 0; k < ncases; ++k) {
    StridedLoop<2> loop(os, ndim,
                        {broadcast_strides(ws, os, ndim), broadcast_strides(cs[k], os, ndim)});
    const E* c = cases[k];
    loop.run([&](int64_t o, const std::array<int64_t, 2>& off, int64_t n,
                 const std::array<int64_t, 2>& st) {
      const W* w = which + off[0];
      const E* a = c + off[1];
      E* po = out + o;
      for (int64_t i = 0; i < n; ++i)
        if (clamp_which(w[i * st[0]], ncases) == k) po[i] = a[i * st[1]];
    });
  }
}

template <class E>
void select_typed(DType wd, const void* which, const int64_t* ws, const void* const* cases,
                  const int64_t* const* cs, int ncases, void* out, const int64_t* os, int ndim) {
  auto go = [&](auto* w) {
    using W = std::remove_const_t<std::remove_pointer_t<decltype(w)>>;
    if (ncases == 2 && std::is_same_v<W, bool>) {
      select2<W, E>(w, ws, static_cast<const E*>(cases[0]), cs[0], static_cast<const E*>(cases[1]),
                    cs[1], static_cast<E*>(out), os, ndim);
    } else {
      std::vector<const E*> cp;
      for (int k = 0; k < ncases; ++k) cp.push_back(static_cast<const E*>(cases[k]));
      select_many<W, E>(w, ws, cp.data(), cs, ncases, static_cast<E*>(out), os, ndim);
    }
  };
  if (wd == DType::Bool) go(static_cast<const bool*>(which));
  else go(static_cast<const int32_t*>(which));
}

template <class T>
inline T clamp_one(T lo, T x, T hi) {
  using C = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bhalf>, float, T>;
  C l = C(lo), v = C(x), h = C(hi);
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(l) || std::isnan(v) || std::isnan(h)) return T(C(NAN));
  }
  C r = v < l ? l : v;
  r = r > h ? h : r;
  return T(r);
}

template <class T>
void clamp_typed(const T* lo, const int64_t* ls, const T* x, const int64_t* xs, const T* hi,
                 const int64_t* hs, T* out, const int64_t* os, int ndim) {
  StridedLoop<3> loop(os, ndim,
                      {broadcast_strides(ls, os, ndim), broadcast_strides(xs, os, ndim),
                       broadcast_strides(hs, os, ndim)});
  loop.run([&](int64_t o, const std::array<int64_t, 3>& off, int64_t n,
               const std::array<int64_t, 3>& st) {
    const T* l = lo + off[0];
    const T* v = x + off[1];
    const T* h = hi + off[2];
    T* po = out + o;
    if (st[0] == 0 && st[1] == 1 && st[2] == 0) {  // scalar bounds: the common case
      const T a = l[0], b = h[0];
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) po[i] = clamp_one(a, v[i], b);
    } else {
      for (int64_t i = 0; i < n; ++i) po[i] = clamp_one(l[i * st[0]], v[i * st[1]], h[i * st[2]]);
    }
  });
}

int64_t numel(const int64_t* s, int ndim) {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= s[d];
  return n;
}

// Offset of the element of an operand of shape `s` (dims equal to out's or 1) that out's
// multi-index `idx` reads.
int64_t bcast_offset(const std::vector<int64_t>& idx, const int64_t* s, int ndim) {
  int64_t off = 0, stride = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    off += (s[d] == 1 ? 0 : idx[size_t(d)]) * stride;
    stride *= s[d];
  }
  return off;
}

std::vector<int64_t> unravel(int64_t i, const int64_t* os, int ndim) {
  std::vector<int64_t> idx(static_cast<size_t>(ndim));
  for (int d = ndim - 1; d >= 0; --d) {
    idx[size_t(d)] = i % os[d];
    i /= os[d];
  }
  return idx;
}

}  // namespace

void select_n(DType wd, const void* which, const int64_t* ws, size_t itemsize,
              const void* const* cases, const int64_t* const* cs, int ncases, void* out,
              const int64_t* os, int ndim) {
  if (numel(os, ndim) == 0) return;
  switch (itemsize) {
    case 1: return select_typed<uint8_t>(wd, which, ws, cases, cs, ncases, out, os, ndim);
    case 2: return select_typed<uint16_t>(wd, which, ws, cases, cs, ncases, out, os, ndim);
    case 4: return select_typed<uint32_t>(wd, which, ws, cases, cs, ncases, out, os, ndim);
    case 8: return select_typed<uint64_t>(wd, which, ws, cases, cs, ncases, out, os, ndim);
    case 16: return select_typed<Item16>(wd, which, ws, cases, cs, ncases, out, os, ndim);
    default: throw InternalError("jx internal error: select_n with an odd item size");
  }
}

void select_n_reference(DType wd, const void* which, const int64_t* ws, size_t itemsize,
                        const void* const* cases, const int64_t* const* cs, int ncases, void* out,
                        const int64_t* os, int ndim) {
  int64_t total = numel(os, ndim);
  for (int64_t i = 0; i < total; ++i) {
    auto idx = unravel(i, os, ndim);
    int64_t wo = bcast_offset(idx, ws, ndim);
    int64_t k = wd == DType::Bool ? (static_cast<const bool*>(which)[wo] ? 1 : 0)
                                  : int64_t(static_cast<const int32_t*>(which)[wo]);
    k = k < 0 ? 0 : (k >= ncases ? ncases - 1 : k);
    int64_t co = bcast_offset(idx, cs[k], ndim);
    const char* src = static_cast<const char*>(cases[k]) + size_t(co) * itemsize;
    char* dst = static_cast<char*>(out) + size_t(i) * itemsize;
    for (size_t b = 0; b < itemsize; ++b) dst[b] = src[b];
  }
}

void clamp(DType dtype, const void* lo, const int64_t* ls, const void* x, const int64_t* xs,
           const void* hi, const int64_t* hs, void* out, const int64_t* os, int ndim) {
  if (is_complex(dtype)) cx::unsupported("op", "clamp", dtype);  // complex has no order
  if (numel(os, ndim) == 0) return;
  JX_DTYPE_SWITCH(dtype, T,
                  clamp_typed<T>(static_cast<const T*>(lo), ls, static_cast<const T*>(x), xs,
                                 static_cast<const T*>(hi), hs, static_cast<T*>(out), os, ndim));
}

void clamp_reference(DType dtype, const void* lo, const int64_t* ls, const void* x,
                     const int64_t* xs, const void* hi, const int64_t* hs, void* out,
                     const int64_t* os, int ndim) {
  if (is_complex(dtype)) cx::unsupported("op", "clamp", dtype);
  int64_t total = numel(os, ndim);
  JX_DTYPE_SWITCH(dtype, T, {
    using C = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bhalf>, float, T>;
    for (int64_t i = 0; i < total; ++i) {
      auto idx = unravel(i, os, ndim);
      C l = C(static_cast<const T*>(lo)[bcast_offset(idx, ls, ndim)]);
      C v = C(static_cast<const T*>(x)[bcast_offset(idx, xs, ndim)]);
      C h = C(static_cast<const T*>(hi)[bcast_offset(idx, hs, ndim)]);
      C r;
      // XLA clamp = min(max(x, lo), hi) by comparison (so clamp(-0.0, lo=0.0) keeps -0.0).
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(l) || std::isnan(v) || std::isnan(h)) r = C(NAN);
        else r = std::min(std::max(v, l), h);
      } else {
        r = std::min(std::max(v, l), h);
      }
      static_cast<T*>(out)[i] = T(r);
    }
  });
}

}  // namespace jx::cpu
