// Windowed reductions. The reference kernels walk every window position of every output
// through the full geometry (any rank, strides, padding, base and window dilation, every
// dtype). The fast kernels cover float32 pooling: at most two consecutive windowed dims
// ("H", "W") between an outer block ("N") and an inner contiguous block ("C") that the
// window leaves alone, no base dilation. With C > 1 (NHWC, window (1,k,k,1)) the loops
// are vectorized across C; with C == 1 (NCHW, window (1,1,k,k)) across the output row.
// They cover reduce_window sum/max/min, select_and_scatter_add and select_and_gather_add.
// Both visit a window's positions in the reference's order, so results are bitwise equal.
#include "backend/cpu/window.h"

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

int64_t numel(const int64_t* s, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; ++i) p *= s[i];
  return p;
}

// Walks the window positions of one output element in row-major window order, giving
// the operand offset of each, or -1 for padding and base-dilation holes.
struct WindowWalker {
  const WindowGeom& g;
  DimVec in_strides, o, k;
  int64_t positions;
  explicit WindowWalker(const WindowGeom& geom)
      : g(geom), in_strides(contiguous_strides(geom.in_shape, geom.ndim)),
        o(size_t(geom.ndim)), k(size_t(geom.ndim)), positions(numel(geom.window, geom.ndim)) {}
  void set_output(int64_t linear) {
    for (int d = g.ndim - 1; d >= 0; --d) {
      o[size_t(d)] = linear % g.out_shape[d];
      linear /= g.out_shape[d];
    }
  }
  int64_t offset(int64_t kl) {
    for (int d = g.ndim - 1; d >= 0; --d) {
      k[size_t(d)] = kl % g.window[d];
      kl /= g.window[d];
    }
    int64_t off = 0;
    for (int d = 0; d < g.ndim; ++d) {
      const int64_t p = o[size_t(d)] * g.strides[d] + k[size_t(d)] * g.window_dilation[d] - g.pad_lo[d];
      if (p < 0 || p % g.base_dilation[d] != 0) return -1;
      const int64_t q = p / g.base_dilation[d];
      if (q >= g.in_shape[d]) return -1;
      off += q * in_strides[size_t(d)];
    }
    return off;
  }
};

constexpr ReduceOp reduce_op(WindowOp op) {
  return op == WindowOp::Sum ? ReduceOp::Sum : op == WindowOp::Max ? ReduceOp::Max : ReduceOp::Min;
}

template <ReduceOp op, class T>
void reduce_ref(const T* x, const WindowGeom& g, T* out) {
  using C = red::acc_t<op, T>;
  WindowWalker w(g);
  const int64_t n = numel(g.out_shape, g.ndim);
  const C id = red::identity<op, C>();
  for (int64_t i = 0; i < n; ++i) {
    w.set_output(i);
    C acc = id;
    for (int64_t kl = 0; kl < w.positions; ++kl) {
      const int64_t off = w.offset(kl);
      acc = red::combine<op, C>(acc, off >= 0 ? C(x[off]) : id);
    }
    out[i] = T(acc);
  }
}

// Compute type of the selecting kernels: float for the half types.
template <class T>
using cmp_t = std::conditional_t<red::is_half_v<T>, float, T>;

template <class C>
inline bool keeps(bool is_ge, C s, C c) {
  return is_ge ? s >= c : s <= c;
}

template <class T>
T add_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a || b;
  else if constexpr (red::is_half_v<T>) return T(float(a) + float(b));
  else if constexpr (std::is_integral_v<T>) return T(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(b));
  else return a + b;
}

template <class C>
C select_identity(bool is_ge) {
  return is_ge ? red::identity<ReduceOp::Max, C>() : red::identity<ReduceOp::Min, C>();
}

template <class T>
void scatter_ref(bool is_ge, const T* src, const T* x, const WindowGeom& g, T* out) {
  using C = cmp_t<T>;
  WindowWalker w(g);
  const int64_t nin = numel(g.in_shape, g.ndim), nout = numel(g.out_shape, g.ndim);
  for (int64_t i = 0; i < nin; ++i) out[i] = T(C(0));
  const C id = select_identity<C>(is_ge);
  for (int64_t i = 0; i < nout; ++i) {
    w.set_output(i);
    C sel = id;
    int64_t sel_off = -1;
    for (int64_t kl = 0; kl < w.positions; ++kl) {
      const int64_t off = w.offset(kl);
      const C v = off >= 0 ? C(x[off]) : id;
      if (kl == 0 || !keeps(is_ge, sel, v)) {
        sel = v;
        sel_off = off;
      }
    }
    if (sel_off >= 0) out[sel_off] = add_values(out[sel_off], src[i]);
  }
}

template <class T>
void gather_ref(bool is_ge, const T* t, const T* x, const WindowGeom& g, T* out) {
  using C = cmp_t<T>;
  WindowWalker w(g);
  const int64_t nout = numel(g.out_shape, g.ndim);
  const C id = select_identity<C>(is_ge);
  for (int64_t i = 0; i < nout; ++i) {
    w.set_output(i);
    C acc = id;
    T acc_t = T(C(0));
    for (int64_t kl = 0; kl < w.positions; ++kl) {
      const int64_t off = w.offset(kl);
      const C v = off >= 0 ? C(x[off]) : id;
      if (!keeps(is_ge, acc, v)) {
        acc = v;
        acc_t = off >= 0 ? t[off] : T(C(0));
      }
    }
    out[i] = acc_t;
  }
}

// ---- float32 pooling fast paths ----

struct Pool2D {
  int64_t N = 1, H = 1, W = 1, C = 1, OH = 1, OW = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
  bool overlapping() const { return (kh - 1) * dh + 1 > sh || (kw - 1) * dw + 1 > sw; }
  // Every operand element lies in exactly one window.
  bool tiles() const {
    return !overlapping() && (kh == 1 || dh == 1) && (kw == 1 || dw == 1) && sh == kh && sw == kw &&
           ph == 0 && pw == 0 && OH * sh == H && OW * sw == W;
  }
};

// The geometry as N x (H, W) x C, if it is one.
bool as_pool2d(const WindowGeom& g, Pool2D& p) {
  auto trivial = [&](int d) {
    return g.window[d] == 1 && g.strides[d] == 1 && g.pad_lo[d] == 0 && g.out_shape[d] == g.in_shape[d];
  };
  int first = -1, last = -1;
  for (int d = 0; d < g.ndim; ++d) {
    if (g.base_dilation[d] != 1) return false;
    if (!trivial(d)) {
      if (first < 0) first = d;
      last = d;
    }
  }
  if (first < 0 || last - first > 1) return false;
  for (int d = 0; d < first; ++d) p.N *= g.in_shape[d];
  for (int d = last + 1; d < g.ndim; ++d) p.C *= g.in_shape[d];
  const int h = last == first ? -1 : first, w = last;
  if (h >= 0) {
    p.H = g.in_shape[h], p.OH = g.out_shape[h], p.kh = g.window[h], p.sh = g.strides[h];
    p.dh = g.window_dilation[h], p.ph = g.pad_lo[h];
  }
  p.W = g.in_shape[w], p.OW = g.out_shape[w], p.kw = g.window[w], p.sw = g.strides[w];
  p.dw = g.window_dilation[w], p.pw = g.pad_lo[w];
  return true;
}

// [lo, hi): the outputs along a dim whose window position k lands inside the operand.
inline void valid_range(int64_t k, int64_t dil, int64_t pad, int64_t stride, int64_t in,
                        int64_t out, int64_t& lo, int64_t& hi) {
  const int64_t base = k * dil - pad;  // operand index of output 0
  lo = base >= 0 ? 0 : (-base + stride - 1) / stride;
  hi = in - 1 - base < 0 ? 0 : (in - 1 - base) / stride + 1;
  lo = std::min(lo, out);
  hi = std::clamp(hi, lo, out);
}

template <WindowOp op>
inline float comb(float a, float b) {
  if constexpr (op == WindowOp::Sum) return a + b;
  else if constexpr (op == WindowOp::Max) return (b > a || b != b) ? b : a;
  else return (b < a || b != b) ? b : a;
}

template <WindowOp op>
constexpr float ident() {
  return red::identity<reduce_op(op), float>();
}

template <WindowOp op>
void pool_forward(const Pool2D& p, const float* x, float* out) {
  const int64_t rows = p.N * p.OH;
  const int nt = num_threads_for(rows * p.OW * p.C * p.kh * p.kw);
  if (p.C > 1) {
    const int64_t C = p.C;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = r / p.OH, oh = r % p.OH;
      for (int64_t ow = 0; ow < p.OW; ++ow) {
        float* o = out + (r * p.OW + ow) * C;
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) o[c] = ident<op>();
        for (int64_t i = 0; i < p.kh; ++i) {
          const int64_t ih = oh * p.sh - p.ph + i * p.dh;
          if (ih < 0 || ih >= p.H) continue;
          for (int64_t j = 0; j < p.kw; ++j) {
            const int64_t iw = ow * p.sw - p.pw + j * p.dw;
            if (iw < 0 || iw >= p.W) continue;
            const float* xp = x + ((n * p.H + ih) * p.W + iw) * C;
#pragma omp simd
            for (int64_t c = 0; c < C; ++c) o[c] = comb<op>(o[c], xp[c]);
          }
        }
      }
    }
    return;
  }
#pragma omp parallel for schedule(static) num_threads(nt)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / p.OH, oh = r % p.OH;
    float* o = out + r * p.OW;
    const int64_t OW = p.OW, sw = p.sw;
#pragma omp simd
    for (int64_t ow = 0; ow < OW; ++ow) o[ow] = ident<op>();
    for (int64_t i = 0; i < p.kh; ++i) {
      const int64_t ih = oh * p.sh - p.ph + i * p.dh;
      if (ih < 0 || ih >= p.H) continue;
      for (int64_t j = 0; j < p.kw; ++j) {
        int64_t lo, hi;
        valid_range(j, p.dw, p.pw, sw, p.W, OW, lo, hi);
        const float* xr = x + (n * p.H + ih) * p.W + (j * p.dw - p.pw);
        if (sw == 1) {
#pragma omp simd
          for (int64_t ow = lo; ow < hi; ++ow) o[ow] = comb<op>(o[ow], xr[ow]);
        } else if (sw == 2) {
#pragma omp simd
          for (int64_t ow = lo; ow < hi; ++ow) o[ow] = comb<op>(o[ow], xr[2 * ow]);
        } else {
#pragma omp simd
          for (int64_t ow = lo; ow < hi; ++ow) o[ow] = comb<op>(o[ow], xr[ow * sw]);
        }
      }
    }
  }
}

// The selection step of select_and_scatter_add: position k (value v) against the current
// selection (s, at position idx).
inline void select_step(bool is_ge, int32_t k, float v, float& s, int32_t& idx) {
  const bool keep = is_ge ? s >= v : s <= v;
  const bool take = k == 0 || !keep;
  s = take ? v : s;
  idx = take ? k : idx;
}

// select_and_scatter_add over an N x (H, W) x C geometry. Windows that tile the operand
// write each element once; otherwise the output is zeroed and windows add in the
// reference's order (threads split N only, when windows overlap).
template <bool is_ge>
void pool_backward(const Pool2D& p, const float* src, const float* x, float* out) {
  const int64_t C = p.C, nwin = p.kh * p.kw;
  const float id = is_ge ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  const bool tiles = p.tiles(), overlap = p.overlapping();
  const int64_t in_total = p.N * p.H * p.W * C;
  const int nt = num_threads_for(in_total + p.N * p.OH * p.OW * C * nwin);
  if (!tiles) {
#pragma omp parallel for simd schedule(static) num_threads(nt)
    for (int64_t i = 0; i < in_total; ++i) out[i] = 0.0f;
  }
  const int64_t rows = p.N * p.OH;
  // Overlapping windows add into shared elements: one thread per image, rows in order.
  const int64_t units = overlap ? p.N : rows;
  const int64_t rows_per_unit = overlap ? p.OH : 1;
  if (C > 1) {
#pragma omp parallel num_threads(nt)
    {
      std::unique_ptr<float[]> best(new float[size_t(C)]);
      std::unique_ptr<int32_t[]> bidx(new int32_t[size_t(C)]);
      float* bs = best.get();
      int32_t* bi = bidx.get();
#pragma omp for schedule(static)
      for (int64_t u = 0; u < units; ++u) {
        for (int64_t r = u * rows_per_unit; r < (u + 1) * rows_per_unit; ++r) {
          const int64_t n = r / p.OH, oh = r % p.OH;
          for (int64_t ow = 0; ow < p.OW; ++ow) {
            int32_t k = 0;
            for (int64_t i = 0; i < p.kh; ++i) {
              const int64_t ih = oh * p.sh - p.ph + i * p.dh;
              for (int64_t j = 0; j < p.kw; ++j, ++k) {
                const int64_t iw = ow * p.sw - p.pw + j * p.dw;
                if (ih < 0 || ih >= p.H || iw < 0 || iw >= p.W) {
#pragma omp simd
                  for (int64_t c = 0; c < C; ++c) select_step(is_ge, k, id, bs[c], bi[c]);
                } else {
                  const float* xp = x + ((n * p.H + ih) * p.W + iw) * C;
#pragma omp simd
                  for (int64_t c = 0; c < C; ++c) select_step(is_ge, k, xp[c], bs[c], bi[c]);
                }
              }
            }
            const float* s = src + (r * p.OW + ow) * C;
            k = 0;
            for (int64_t i = 0; i < p.kh; ++i) {
              const int64_t ih = oh * p.sh - p.ph + i * p.dh;
              for (int64_t j = 0; j < p.kw; ++j, ++k) {
                const int64_t iw = ow * p.sw - p.pw + j * p.dw;
                if (ih < 0 || ih >= p.H || iw < 0 || iw >= p.W) continue;
                float* op = out + ((n * p.H + ih) * p.W + iw) * C;
                if (overlap) {
#pragma omp simd
                  for (int64_t c = 0; c < C; ++c) op[c] += bi[c] == k ? s[c] : 0.0f;
                } else {
#pragma omp simd
                  for (int64_t c = 0; c < C; ++c) op[c] = (bi[c] == k ? s[c] : 0.0f) + 0.0f;  // 0 + s, as the reference
                }
              }
            }
          }
        }
      }
    }
    return;
  }
  // C == 1: select across a whole output row at once, then scatter.
#pragma omp parallel num_threads(nt)
  {
    std::unique_ptr<float[]> best(new float[size_t(p.OW)]);
    std::unique_ptr<int32_t[]> bidx(new int32_t[size_t(p.OW)]);
    float* bs = best.get();
    int32_t* bi = bidx.get();
    const int64_t OW = p.OW, sw = p.sw;
#pragma omp for schedule(static)
    for (int64_t u = 0; u < units; ++u) {
      for (int64_t r = u * rows_per_unit; r < (u + 1) * rows_per_unit; ++r) {
        const int64_t n = r / p.OH, oh = r % p.OH;
        int32_t k = 0;
        for (int64_t i = 0; i < p.kh; ++i) {
          const int64_t ih = oh * p.sh - p.ph + i * p.dh;
          const bool row_ok = ih >= 0 && ih < p.H;
          for (int64_t j = 0; j < p.kw; ++j, ++k) {
            int64_t lo = 0, hi = 0;
            if (row_ok) valid_range(j, p.dw, p.pw, sw, p.W, OW, lo, hi);
            const float* xr = x + (n * p.H + (row_ok ? ih : 0)) * p.W + (j * p.dw - p.pw);
            for (int64_t ow = 0; ow < lo; ++ow) select_step(is_ge, k, id, bs[ow], bi[ow]);
#pragma omp simd
            for (int64_t ow = lo; ow < hi; ++ow) select_step(is_ge, k, xr[ow * sw], bs[ow], bi[ow]);
            for (int64_t ow = hi; ow < OW; ++ow) select_step(is_ge, k, id, bs[ow], bi[ow]);
          }
        }
        const float* s = src + r * OW;
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t i = bi[ow] / p.kw, j = bi[ow] % p.kw;
          const int64_t ih = oh * p.sh - p.ph + i * p.dh, iw = ow * sw - p.pw + j * p.dw;
          if (ih < 0 || ih >= p.H || iw < 0 || iw >= p.W) continue;
          float& o = out[(n * p.H + ih) * p.W + iw];
          if (tiles) {
            // Tiling windows never meet, but the other positions of this one still need
            // their zero.
            int32_t kk = 0;
            for (int64_t a = 0; a < p.kh; ++a)
              for (int64_t b = 0; b < p.kw; ++b, ++kk)
                out[(n * p.H + oh * p.sh + a) * p.W + ow * sw + b] = (kk == bi[ow] ? s[ow] : 0.0f) + 0.0f;
          } else {
            o += s[ow];
          }
        }
      }
    }
  }
}

// The pair reduction of select_and_gather_add over an N x (H, W) x C geometry: from
// (identity, 0), an element (v, t) replaces the accumulator (a, u) when !(a >= v) (ge).
inline void gather_step(bool is_ge, float v, float t, float& a, float& u) {
  const bool keep = is_ge ? a >= v : a <= v;
  a = keep ? a : v;
  u = keep ? u : t;
}

template <bool is_ge>
void pool_gather(const Pool2D& p, const float* tan, const float* x, float* out) {
  const float id = is_ge ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  const int64_t rows = p.N * p.OH, C = p.C, OW = p.OW, sw = p.sw;
  const int nt = num_threads_for(rows * OW * C * p.kh * p.kw);
#pragma omp parallel num_threads(nt)
  {
    const int64_t len = C > 1 ? C : OW;
    std::unique_ptr<float[]> acc(new float[size_t(len)]);
    float* a = acc.get();
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = r / p.OH, oh = r % p.OH;
      if (C > 1) {
        for (int64_t ow = 0; ow < OW; ++ow) {
          float* u = out + (r * OW + ow) * C;
#pragma omp simd
          for (int64_t c = 0; c < C; ++c) a[c] = id, u[c] = 0.0f;
          for (int64_t i = 0; i < p.kh; ++i) {
            const int64_t ih = oh * p.sh - p.ph + i * p.dh;
            for (int64_t j = 0; j < p.kw; ++j) {
              const int64_t iw = ow * sw - p.pw + j * p.dw;
              if (ih < 0 || ih >= p.H || iw < 0 || iw >= p.W) {
#pragma omp simd
                for (int64_t c = 0; c < C; ++c) gather_step(is_ge, id, 0.0f, a[c], u[c]);
              } else {
                const int64_t off = ((n * p.H + ih) * p.W + iw) * C;
                const float *xp = x + off, *tp = tan + off;
#pragma omp simd
                for (int64_t c = 0; c < C; ++c) gather_step(is_ge, xp[c], tp[c], a[c], u[c]);
              }
            }
          }
        }
        continue;
      }
      float* u = out + r * OW;
#pragma omp simd
      for (int64_t ow = 0; ow < OW; ++ow) a[ow] = id, u[ow] = 0.0f;
      for (int64_t i = 0; i < p.kh; ++i) {
        const int64_t ih = oh * p.sh - p.ph + i * p.dh;
        const bool row_ok = ih >= 0 && ih < p.H;
        for (int64_t j = 0; j < p.kw; ++j) {
          int64_t lo = 0, hi = 0;
          if (row_ok) valid_range(j, p.dw, p.pw, sw, p.W, OW, lo, hi);
          const int64_t base = (n * p.H + (row_ok ? ih : 0)) * p.W + (j * p.dw - p.pw);
          const float *xr = x + base, *tr = tan + base;
          for (int64_t ow = 0; ow < lo; ++ow) gather_step(is_ge, id, 0.0f, a[ow], u[ow]);
#pragma omp simd
          for (int64_t ow = lo; ow < hi; ++ow) gather_step(is_ge, xr[ow * sw], tr[ow * sw], a[ow], u[ow]);
          for (int64_t ow = hi; ow < OW; ++ow) gather_step(is_ge, id, 0.0f, a[ow], u[ow]);
        }
      }
    }
  }
}

bool fast_enabled(DType dtype, const WindowGeom& g, Pool2D& p) {
  return dtype == DType::Float32 && as_pool2d(g, p) && p.kh * p.kw < (int64_t(1) << 30);
}

}  // namespace

void reduce_window_reference(WindowOp op, DType dtype, const void* x, const WindowGeom& g,
                             void* out) {
  JX_DTYPE_SWITCH(dtype, T, {
    const T* xp = static_cast<const T*>(x);
    T* o = static_cast<T*>(out);
    switch (op) {
      case WindowOp::Sum:
        if constexpr (!std::is_same_v<T, bool>) reduce_ref<ReduceOp::Sum, T>(xp, g, o);
        else JX_CHECK(false, "reduce_window sum of bool");
        break;
      case WindowOp::Max: reduce_ref<ReduceOp::Max, T>(xp, g, o); break;
      case WindowOp::Min: reduce_ref<ReduceOp::Min, T>(xp, g, o); break;
    }
  });
}

void reduce_window(WindowOp op, DType dtype, const void* x, const WindowGeom& g, void* out) {
  Pool2D p;
  if (!fast_enabled(dtype, g, p)) return reduce_window_reference(op, dtype, x, g, out);
  const float* xp = static_cast<const float*>(x);
  float* o = static_cast<float*>(out);
  switch (op) {
    case WindowOp::Sum: pool_forward<WindowOp::Sum>(p, xp, o); break;
    case WindowOp::Max: pool_forward<WindowOp::Max>(p, xp, o); break;
    case WindowOp::Min: pool_forward<WindowOp::Min>(p, xp, o); break;
  }
}

void select_and_scatter_add_reference(bool is_ge, DType dtype, const void* source,
                                      const void* operand, const WindowGeom& g, void* out) {
  JX_DTYPE_SWITCH(dtype, T, {
    scatter_ref<T>(is_ge, static_cast<const T*>(source), static_cast<const T*>(operand), g,
                   static_cast<T*>(out));
  });
}

void select_and_scatter_add(bool is_ge, DType dtype, const void* source, const void* operand,
                            const WindowGeom& g, void* out) {
  Pool2D p;
  if (!fast_enabled(dtype, g, p))
    return select_and_scatter_add_reference(is_ge, dtype, source, operand, g, out);
  const float* s = static_cast<const float*>(source);
  const float* x = static_cast<const float*>(operand);
  float* o = static_cast<float*>(out);
  if (is_ge) pool_backward<true>(p, s, x, o);
  else pool_backward<false>(p, s, x, o);
}

void select_and_gather_add_reference(bool is_ge, DType dtype, const void* tangents,
                                     const void* operand, const WindowGeom& g, void* out) {
  JX_DTYPE_SWITCH(dtype, T, {
    if constexpr (std::is_floating_point_v<T> || red::is_half_v<T>) {
      gather_ref<T>(is_ge, static_cast<const T*>(tangents), static_cast<const T*>(operand), g,
                    static_cast<T*>(out));
    } else {
      JX_CHECK(false, "select_and_gather_add of a non-floating dtype");
    }
  });
}

void select_and_gather_add(bool is_ge, DType dtype, const void* tangents, const void* operand,
                           const WindowGeom& g, void* out) {
  Pool2D p;
  if (!fast_enabled(dtype, g, p))
    return select_and_gather_add_reference(is_ge, dtype, tangents, operand, g, out);
  const float* t = static_cast<const float*>(tangents);
  const float* x = static_cast<const float*>(operand);
  float* o = static_cast<float*>(out);
  if (is_ge) pool_gather<true>(p, t, x, o);
  else pool_gather<false>(p, t, x, o);
}

}  // namespace jx::cpu
