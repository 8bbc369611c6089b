#include <cmath>
#include <type_traits>

#include "backend/cpu/complex_math.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/vmath.h"
#include "support/dtype_switch.h"

namespace jx::cpu {
namespace {

template <class T>
constexpr bool is_half_v = std::is_same_v<T, half> || std::is_same_v<T, bhalf>;

// Compute type: half types compute in float.
template <class T>
using compute_t = std::conditional_t<is_half_v<T>, float, T>;

// Integer add, sub, mul and pow wrap around, as in XLA. In C++ a signed overflow is undefined,
// and so is uint16 * uint16 (both promoted to int), so they compute in the unsigned type of
// the promoted operands (at least as wide as int); converting back keeps the low bits.
template <class C>
using wrap_t = std::make_unsigned_t<decltype(C() + C())>;

template <BinaryOp op, class C>
inline auto apply(C x, C y) {
  constexpr bool wraps = std::is_integral_v<C> && !std::is_same_v<C, bool>;
  if constexpr (op == BinaryOp::Add) {
    if constexpr (wraps) return C(wrap_t<C>(x) + wrap_t<C>(y));
    else return C(x + y);
  } else if constexpr (op == BinaryOp::Sub) {
    if constexpr (wraps) return C(wrap_t<C>(x) - wrap_t<C>(y));
    else return C(x - y);
  } else if constexpr (op == BinaryOp::Mul) {
    if constexpr (std::is_same_v<C, bool>) return C(x && y);
    else if constexpr (wraps) return C(wrap_t<C>(x) * wrap_t<C>(y));
    else return C(x * y);
  } else if constexpr (op == BinaryOp::Div) {
    if constexpr (std::is_floating_point_v<C>) return C(x / y);
    else if constexpr (std::is_same_v<C, bool>) return C(x);
    else {
      // XLA: x / 0 = -1 (all bits set) for ints; INT_MIN / -1 = INT_MIN.
      if (y == 0) return C(-1);
      if constexpr (std::is_signed_v<C>)
        if (y == C(-1) && x == std::numeric_limits<C>::min()) return x;
      return C(x / y);
    }
  } else if constexpr (op == BinaryOp::Rem) {
    if constexpr (std::is_floating_point_v<C>) return C(std::fmod(x, y));
    else if constexpr (std::is_same_v<C, bool>) return C(false);
    else {
      if (y == 0) return x;
      if constexpr (std::is_signed_v<C>)
        if (y == C(-1)) return C(0);
      return C(x % y);
    }
  } else if constexpr (op == BinaryOp::Pow) {
    if constexpr (std::is_floating_point_v<C>) return C(vm::pow(x, y));
    else {
      // Integer power by squaring; negative exponents give 0 (except base +-1), as XLA.
      if constexpr (std::is_signed_v<C>) {
        if (y < 0) return C(x == 1 ? 1 : (x == -1 ? ((y & 1) ? -1 : 1) : 0));
      }
      using U = wrap_t<std::conditional_t<std::is_same_v<C, bool>, uint8_t, C>>;
      U base = U(x), r = 1;
      auto e = y;
      while (e) {
        if (e & 1) r = U(r * base);
        base = U(base * base);
        e = decltype(e)(e >> 1);
      }
      return C(r);
    }
  } else if constexpr (op == BinaryOp::Max) {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(x) || std::isnan(y)) return C(NAN);
    }
    return x > y ? x : y;
  } else if constexpr (op == BinaryOp::Min) {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(x) || std::isnan(y)) return C(NAN);
    }
    return x < y ? x : y;
  } else if constexpr (op == BinaryOp::Atan2) {
    return C(vm::atan2(x, y));
  } else if constexpr (op == BinaryOp::Nextafter) {
    return C(std::nextafter(x, y));
  } else if constexpr (op == BinaryOp::And) return C(x & y);
  else if constexpr (op == BinaryOp::Or) return C(x | y);
  else if constexpr (op == BinaryOp::Xor) return C(x ^ y);
  else if constexpr (op == BinaryOp::ShiftLeft || op == BinaryOp::ShiftRightLogical ||
                     op == BinaryOp::ShiftRightArithmetic) {
    using U = std::make_unsigned_t<C>;
    constexpr int bits = int(sizeof(C) * 8);
    U uy = U(y);
    bool oob = uy >= U(bits);  // negative shifts are out of range too
    if constexpr (op == BinaryOp::ShiftLeft) return oob ? C(0) : C(U(x) << uy);
    else if constexpr (op == BinaryOp::ShiftRightLogical) return oob ? C(0) : C(U(x) >> uy);
    else {
      if (oob) return C(x < 0 ? -1 : 0);
      if constexpr (std::is_signed_v<C>) return C(x >> uy);
      else return C(x >> uy);
    }
  } else if constexpr (op == BinaryOp::Eq) return bool(x == y);
  else if constexpr (op == BinaryOp::Ne) return bool(x != y);
  else if constexpr (op == BinaryOp::Lt) return bool(x < y);
  else if constexpr (op == BinaryOp::Le) return bool(x <= y);
  else if constexpr (op == BinaryOp::Gt) return bool(x > y);
  else if constexpr (op == BinaryOp::Ge) return bool(x >= y);
}

template <BinaryOp op, class T>
constexpr bool supported() {
  using C = compute_t<T>;
  constexpr bool fl = std::is_floating_point_v<C>;
  constexpr bool b = std::is_same_v<C, bool>;
  if constexpr (op == BinaryOp::Atan2 || op == BinaryOp::Nextafter) return fl;
  if constexpr (op == BinaryOp::And || op == BinaryOp::Or || op == BinaryOp::Xor) return !fl;
  if constexpr (op == BinaryOp::ShiftLeft || op == BinaryOp::ShiftRightArithmetic ||
                op == BinaryOp::ShiftRightLogical)
    return !fl && !b;
  if constexpr (op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Pow)
    return !b;
  return true;
}

// nextafter on float16/bfloat16 steps the 16-bit pattern: going through float32 would
// step by a float32 ulp and round straight back to x.
template <class T>
T nextafter16(T x, T y) {
  const float fx = float(x), fy = float(y);
  if (std::isnan(fx) || std::isnan(fy)) return T(NAN);
  if (fx == fy) return y;
  T r;
  if (fx == 0) {  // the smallest subnormal, with y's sign
    r.bits = uint16_t((y.bits & 0x8000u) | 1u);
    return r;
  }
  const bool away_from_zero = (fy > fx) == (fx > 0);
  r.bits = uint16_t(away_from_zero ? x.bits + 1 : x.bits - 1);
  return r;
}

// One output element: compute in C (float for half types), store as R.
template <BinaryOp op, class T, class C, class R>
inline R elem(T a, T b) {
  if constexpr (op == BinaryOp::Nextafter && is_half_v<T>) return nextafter16(a, b);
  else return R(apply<op, C>(C(a), C(b)));
}

template <BinaryOp op, class T>
void run_typed(const void* a, const int64_t* as, const void* b, const int64_t* bs, void* out,
               const int64_t* os, int ndim) {
  if constexpr (!supported<op, T>()) {
    throw InternalError("jx internal error: binary kernel called with an unsupported dtype");
  } else {
    using C = compute_t<T>;
    using R = std::conditional_t<(op >= BinaryOp::Eq), bool, T>;
    const T* A = static_cast<const T*>(a);
    const T* B = static_cast<const T*>(b);
    R* O = static_cast<R*>(out);
    auto body = [&](int64_t o, const std::array<int64_t, 2>& off, int64_t n,
                    const std::array<int64_t, 2>& st) {
      const T* pa = A + off[0];
      const T* pb = B + off[1];
      R* po = O + o;
      if constexpr ((op == BinaryOp::Pow || op == BinaryOp::Atan2) && std::is_floating_point_v<T>) {
        // libm's vector variants: whole 64-byte vectors only, the remainder on a padded
        // copy, so that an element's bits do not depend on its position (unary.cpp's block).
        // Each stride pattern gets its own loop: `pa[i * sa]` with a run-time stride needs
        // gathers, which GCC does not use when tuning for generic AVX2, and the loop would
        // then call scalar libm. Two broadcast scalars go through the padded block only
        // (an invariant call in a loop would be hoisted out of it and made scalar).
        if (st[0] <= 1 && st[1] <= 1) {
          constexpr int64_t W = 64 / int64_t(sizeof(T));
          const int64_t sa = st[0], sb = st[1];
          const int64_t body = sa == 0 && sb == 0 ? 0 : n - n % W;
          if (sa == 1 && sb == 1) {
#pragma omp simd
            for (int64_t i = 0; i < body; ++i) po[i] = elem<op, T, C, R>(pa[i], pb[i]);
          } else if (sa == 1) {
            const T y = pb[0];
#pragma omp simd
            for (int64_t i = 0; i < body; ++i) po[i] = elem<op, T, C, R>(pa[i], y);
          } else if (sb == 1) {
            const T x = pa[0];
#pragma omp simd
            for (int64_t i = 0; i < body; ++i) po[i] = elem<op, T, C, R>(x, pb[i]);
          }
          if (sa == 0 && sb == 0 && n > W) {  // one value, computed as the padded block does
            T xa[W], xb[W];
            R r[W];
            for (int64_t i = 0; i < W; ++i) {
              xa[i] = pa[0];
              xb[i] = pb[0];
            }
#pragma omp simd
            for (int64_t i = 0; i < W; ++i) r[i] = elem<op, T, C, R>(xa[i], xb[i]);
            for (int64_t i = 0; i < n; ++i) po[i] = r[0];
            return;
          }
          if (body < n) {
            T xa[W], xb[W];
            R r[W];
            for (int64_t i = 0; i < W; ++i) {
              int64_t k = body + i < n ? body + i : body;
              xa[i] = pa[k * sa];
              xb[i] = pb[k * sb];
            }
#pragma omp simd
            for (int64_t i = 0; i < W; ++i) r[i] = elem<op, T, C, R>(xa[i], xb[i]);
            for (int64_t i = 0; body + i < n; ++i) po[body + i] = r[i];
          }
          return;
        }
      }
      if (st[0] == 1 && st[1] == 1) {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) po[i] = elem<op, T, C, R>(pa[i], pb[i]);
      } else if (st[0] == 1 && st[1] == 0) {
        const T y = pb[0];
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) po[i] = elem<op, T, C, R>(pa[i], y);
      } else if (st[0] == 0 && st[1] == 1) {
        const T x = pa[0];
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) po[i] = elem<op, T, C, R>(x, pb[i]);
      } else {
        for (int64_t i = 0; i < n; ++i)
          po[i] = elem<op, T, C, R>(pa[i * st[0]], pb[i * st[1]]);
      }
    };
    // Small operands of the output's shape, or one element, run as one row without building
    // the merged loop nest: that setup was a tenth of a 1-element op (bench_eager's dispatch).
    const int64_t total = flat_size(os, ndim);
    if (total > 0 && num_threads_for(total) <= 1) {
      const int64_t sa = flat_size(as, ndim) == 1 ? 0 : 1, sb = flat_size(bs, ndim) == 1 ? 0 : 1;
      if ((sa == 0 || same_dims(as, os, ndim)) && (sb == 0 || same_dims(bs, os, ndim)))
        return body(0, {0, 0}, total, {sa, sb});
    }
    StridedLoop<2> loop(os, ndim, {broadcast_strides(as, os, ndim), broadcast_strides(bs, os, ndim)});
    loop.run(body);
  }
}

template <class T>
void dispatch_op(BinaryOp op, const void* a, const int64_t* as, const void* b, const int64_t* bs,
                 void* out, const int64_t* os, int ndim) {
  switch (op) {
#define JX_BIN(name) \
  case BinaryOp::name: return run_typed<BinaryOp::name, T>(a, as, b, bs, out, os, ndim);
    JX_BIN(Add) JX_BIN(Sub) JX_BIN(Mul) JX_BIN(Div) JX_BIN(Rem) JX_BIN(Pow) JX_BIN(Max)
    JX_BIN(Min) JX_BIN(Atan2) JX_BIN(Nextafter) JX_BIN(And) JX_BIN(Or) JX_BIN(Xor)
    JX_BIN(ShiftLeft) JX_BIN(ShiftRightArithmetic) JX_BIN(ShiftRightLogical) JX_BIN(Eq)
    JX_BIN(Ne) JX_BIN(Lt) JX_BIN(Le) JX_BIN(Gt) JX_BIN(Ge)
#undef JX_BIN
    case BinaryOp::Complex:
      throw InternalError("jx internal error: binary complex reached the real dispatch");
  }
}

// out = f(a, b) over broadcast operands of types A and B, writing O: complex ops and the
// construction of complex from parts. glibc's complex functions do not vectorize, so the
// contiguous case is a plain loop (add/sub/mul/eq/ne still vectorize there).
template <class A, class B, class O, class F>
void run_loop(const void* a, const int64_t* as, const void* b, const int64_t* bs, void* out,
              const int64_t* os, int ndim, F f) {
  const A* pa0 = static_cast<const A*>(a);
  const B* pb0 = static_cast<const B*>(b);
  O* po0 = static_cast<O*>(out);
  StridedLoop<2> loop(os, ndim, {broadcast_strides(as, os, ndim), broadcast_strides(bs, os, ndim)});
  loop.run([&](int64_t o, const std::array<int64_t, 2>& off, int64_t n,
               const std::array<int64_t, 2>& st) {
    const A* pa = pa0 + off[0];
    const B* pb = pb0 + off[1];
    O* po = po0 + o;
    if (st[0] == 1 && st[1] == 1) {
      for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i]);
    } else if (st[0] == 1 && st[1] == 0) {
      const B y = pb[0];
      for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], y);
    } else if (st[0] == 0 && st[1] == 1) {
      const A x = pa[0];
      for (int64_t i = 0; i < n; ++i) po[i] = f(x, pb[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i * st[0]], pb[i * st[1]]);
    }
  });
}

// Complex operands (dtype complex64/128) or lax.complex (dtype float32/64, complex out).
// Returns false when neither applies.
bool complex_binary(BinaryOp op, DType dtype, const void* a, const int64_t* as, const void* b,
                    const int64_t* bs, void* out, const int64_t* os, int ndim) {
  auto parts = [&](auto r) {
    using R = decltype(r);
    run_loop<R, R, std::complex<R>>(a, as, b, bs, out, os, ndim,
                                    [](R re, R im) { return std::complex<R>(re, im); });
  };
  auto ops = [&](auto r) {
    using R = decltype(r);
    using Cx = std::complex<R>;
    if (!cx::binary_supported(op)) cx::unsupported("binary op", cx::binary_name(op), dtype);
    cx::with_binary_op(op, [&](auto tag) {
      constexpr BinaryOp o = decltype(tag)::value;
      using Out = decltype(cx::binary<o, R>(Cx(), Cx()));
      run_loop<Cx, Cx, Out>(a, as, b, bs, out, os, ndim,
                            [](Cx x, Cx y) { return cx::binary<o, R>(x, y); });
    });
  };
  if (op == BinaryOp::Complex) {
    if (dtype == DType::Float32) parts(float{});
    else if (dtype == DType::Float64) parts(double{});
    else cx::unsupported("binary op", "complex", dtype);
    return true;
  }
  if (dtype == DType::Complex64) ops(float{});
  else if (dtype == DType::Complex128) ops(double{});
  else return false;
  return true;
}

}  // namespace

void binary(BinaryOp op, DType dtype, const void* a, const int64_t* as, const void* b,
            const int64_t* bs, void* out, const int64_t* os, int ndim) {
  if (op == BinaryOp::Complex || is_complex(dtype)) [[unlikely]] {
    complex_binary(op, dtype, a, as, b, bs, out, os, ndim);
    return;
  }
  JX_DTYPE_SWITCH(dtype, T, dispatch_op<T>(op, a, as, b, bs, out, os, ndim));
}

void binary_reference(BinaryOp op, DType dtype, const void* a, const int64_t* as, const void* b,
                      const int64_t* bs, void* out, const int64_t* os, int ndim) {
  // The naive oracle: one multi-index walk, element by element, no merging or threads.
  int64_t total = 1;
  for (int d = 0; d < ndim; ++d) total *= os[d];
  std::vector<int64_t> idx(size_t(ndim), 0);
  if (op == BinaryOp::Complex || is_complex(dtype)) {
    // Element by element through the same scalar functions (complex_math.h).
    const size_t isz = itemsize(dtype);
    const size_t osz = op == BinaryOp::Complex ? 2 * isz : (op >= BinaryOp::Eq ? 1 : isz);
    for (int64_t i = 0; i < total; ++i) {
      int64_t ia = 0, ib = 0, rem = i, sa = 1, sb = 1;
      for (int d = ndim - 1; d >= 0; --d) {
        idx[size_t(d)] = rem % os[d];
        rem /= os[d];
      }
      for (int d = ndim - 1; d >= 0; --d) {
        ia += (as[d] == 1 ? 0 : idx[size_t(d)]) * sa;
        ib += (bs[d] == 1 ? 0 : idx[size_t(d)]) * sb;
        sa *= as[d];
        sb *= bs[d];
      }
      int64_t one = 1;
      complex_binary(op, dtype, static_cast<const char*>(a) + size_t(ia) * isz, &one,
                     static_cast<const char*>(b) + size_t(ib) * isz, &one,
                     static_cast<char*>(out) + size_t(i) * osz, &one, 1);
    }
    return;
  }
  JX_DTYPE_SWITCH(dtype, T, {
    if constexpr (std::is_same_v<T, bool>) {
      // bool uses the same element function through a 1-element call per position
    }
    size_t osz = op >= BinaryOp::Eq ? 1 : sizeof(T);
    for (int64_t i = 0; i < total; ++i) {
      int64_t ia = 0, ib = 0, rem = i;
      for (int d = ndim - 1; d >= 0; --d) {
        int64_t k = rem % os[d];
        rem /= os[d];
        idx[size_t(d)] = k;
      }
      int64_t sa = 1, sb = 1;
      for (int d = ndim - 1; d >= 0; --d) {
        ia += (as[d] == 1 ? 0 : idx[size_t(d)]) * sa;
        ib += (bs[d] == 1 ? 0 : idx[size_t(d)]) * sb;
        sa *= as[d];
        sb *= bs[d];
      }
      int64_t one = 1;
      dispatch_op<T>(op, static_cast<const T*>(a) + ia, &one, static_cast<const T*>(b) + ib, &one,
                     static_cast<char*>(out) + size_t(i) * osz, &one, 1);
    }
  });
}

}  // namespace jx::cpu
