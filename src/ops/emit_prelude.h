// Code generation for elementwise primitives: the contract between the primitives' emit
// rules (ops/<family>.cpp) and the compiler's C++ generator.
//
// An emit rule returns a C++ expression computing ONE output element, given one
// expression per operand that already has the operand's C type (c_type below), or an
// empty string when it cannot express the operation (float16/bfloat16, functions that jx
// computes with its own approximations such as lgamma); the compiler then runs that
// equation as a library call. The expression has the output dtype's C type and uses only
// operators, <cmath> functions, <cstdint> types and the helpers of kEmitPrelude, which
// the generator pastes at the top of every generated file. The helpers reproduce the
// eager kernels (src/backend/cpu/*.cpp) bit for bit: integer division by zero, shift
// counts out of range, NaN-propagating max/min, saturating float-to-int conversion.
// Complex values are std::complex<float|double>; their expressions call the functions of
// src/backend/cpu/complex_scalar.h in namespace jx_cx (jx_cx::mul, jx_cx::div, ...), which
// the generator pastes, with <complex>, into programs that have complex values.
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "jx/dtype.h"
#include "ops/primitive.h"

namespace jx::ops {

// The C type of one element of `t` in generated code; nullptr for float16/bfloat16, which
// generated code does not handle.
inline const char* c_type(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::Int8: return "int8_t";
    case DType::Int16: return "int16_t";
    case DType::Int32: return "int32_t";
    case DType::Int64: return "int64_t";
    case DType::UInt8: return "uint8_t";
    case DType::UInt16: return "uint16_t";
    case DType::UInt32: return "uint32_t";
    case DType::UInt64: return "uint64_t";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Complex64: return "std::complex<float>";
    case DType::Complex128: return "std::complex<double>";
    case DType::Float16:
    case DType::BFloat16: return nullptr;
  }
  return nullptr;
}

namespace emit {

// "fn(a, b, ...)".
inline std::string call(std::string_view fn, std::span<const std::string> args) {
  std::string s(fn);
  s += '(';
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) s += ", ";
    s += args[i];
  }
  return s + ')';
}
inline std::string paren(const std::string& x) {
  std::string s = "(";
  s += x;
  return s + ')';
}
// Whether every operand and the output have a C type in generated code.
inline bool expressible(std::span<const Aval> in, DType out) {
  for (const Aval& a : in)
    if (!c_type(a.dtype)) return false;
  return c_type(out) != nullptr;
}

}  // namespace emit

// C++ source with the helpers that emitted expressions call. The libm functions are
// redeclared `omp declare simd` (as src/backend/cpu/vmath.h does for the kernels) so that
// GCC calls glibc's vector variants from `#pragma omp simd` loops without -ffast-math.
inline constexpr const char* kEmitPrelude = R"JXPRELUDE(
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#define JX_SIMD_DECL1(name)                                               \
  _Pragma("omp declare simd notinbranch") float name##f(float) noexcept; \
  _Pragma("omp declare simd notinbranch") double name(double) noexcept;
#define JX_SIMD_DECL2(name)                                                      \
  _Pragma("omp declare simd notinbranch") float name##f(float, float) noexcept; \
  _Pragma("omp declare simd notinbranch") double name(double, double) noexcept;
extern "C" {
JX_SIMD_DECL1(exp) JX_SIMD_DECL1(exp2) JX_SIMD_DECL1(expm1) JX_SIMD_DECL1(log)
JX_SIMD_DECL1(log1p) JX_SIMD_DECL1(sin) JX_SIMD_DECL1(cos) JX_SIMD_DECL1(tan)
JX_SIMD_DECL1(asin) JX_SIMD_DECL1(acos) JX_SIMD_DECL1(atan) JX_SIMD_DECL1(sinh)
JX_SIMD_DECL1(cosh) JX_SIMD_DECL1(tanh) JX_SIMD_DECL1(asinh) JX_SIMD_DECL1(acosh)
JX_SIMD_DECL1(atanh) JX_SIMD_DECL1(cbrt) JX_SIMD_DECL1(erf) JX_SIMD_DECL1(erfc)
JX_SIMD_DECL2(pow) JX_SIMD_DECL2(atan2)
// OpenMP's runtime (omp.h, declared here so that the source needs no other header): row
// kernels that split one row's reduced range across threads combine per-thread partials.
int omp_get_thread_num(void) noexcept;
int omp_get_num_threads(void) noexcept;
int omp_get_max_threads(void) noexcept;
}
#undef JX_SIMD_DECL1
#undef JX_SIMD_DECL2

// Rounding through nearbyint, which vectorizes (floor/ceil/trunc need -fno-trapping-math);
// exact for every input, zeros keep x's sign.
template <class T> static inline T jx_floor(T x) {
  T t = std::nearbyint(x);
  return std::copysign(t > x ? t - T(1) : t, x);
}
template <class T> static inline T jx_ceil(T x) {
  T t = std::nearbyint(x);
  return std::copysign(t < x ? t + T(1) : t, x);
}
template <class T> static inline T jx_trunc(T x) {
  T t = std::nearbyint(x);
  T a = std::fabs(x), ta = std::fabs(t);
  return std::copysign(ta > a ? ta - T(1) : ta, x);
}
// Half-way cases away from zero (lax.round's default).
template <class T> static inline T jx_round_away(T x) {
  T t = jx_trunc(x);
  T r = std::fabs(x - t) >= T(0.5) ? t + std::copysign(T(1), x) : t;
  return std::copysign(r, x);
}
// Half-way cases to even (the default rounding mode).
template <class T> static inline T jx_round_even(T x) { return std::nearbyint(x); }

template <class T> static inline T jx_logistic(T x) { return T(1) / (T(1) + std::exp(-x)); }

// -1, 0 or 1; floats keep -0.0 and NaN.
template <class T> static inline T jx_sign(T x) {
  if constexpr (std::is_floating_point_v<T>) return x > T(0) ? T(1) : (x < T(0) ? T(-1) : x);
  else if constexpr (std::is_signed_v<T>) return T((x > 0) - (x < 0));
  else return T(x > 0 ? 1 : 0);
}

// |x|; integers wrap (abs(INT_MIN) is INT_MIN).
template <class T> static inline T jx_abs(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::fabs(x);
  else if constexpr (std::is_signed_v<T>) return x < 0 ? T(uint64_t(0) - uint64_t(x)) : x;
  else return x;
}

// x ** y for a constant integer y, multiplying in XLA's order (lax._integer_pow);
// integers wrap.
template <class T> static inline T jx_ipow(T x, int64_t y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (y == 0) return T(1);
    bool recip = y < 0;
    uint64_t e = recip ? uint64_t(-y) : uint64_t(y);
    T acc = T(1);
    bool first = true;
    while (e > 0) {
      if (e & 1) {
        acc = first ? x : acc * x;
        first = false;
      }
      e >>= 1;
      if (e > 0) x = x * x;
    }
    return recip ? T(1) / acc : acc;
  } else {
    uint64_t base = uint64_t(x), acc = 1, e = uint64_t(y);
    while (e) {
      if (e & 1) acc = acc * base;
      base = base * base;
      e >>= 1;
    }
    return T(acc);
  }
}
// jx_ipow with the exponent known when the kernel is generated: the same multiplications in
// the same order, unrolled at compile time, so that the loop around it stays a simd loop
// (GCC does not vectorize a loop containing jx_ipow's exponent loop: "control flow in loop").
template <uint64_t E, bool First, class T> static inline T jx_ipow_unrolled(T acc, T x) {
  if constexpr (E == 0) {
    return acc;
  } else {
    if constexpr ((E & 1) != 0) {
      if constexpr (First) acc = x;
      else acc = acc * x;
    }
    if constexpr ((E >> 1) > 0) return jx_ipow_unrolled<(E >> 1), First && (E & 1) == 0, T>(acc, x * x);
    else return acc;
  }
}
template <uint64_t E, class U> static inline U jx_uipow_unrolled(U acc, U base) {
  if constexpr (E == 0) {
    return acc;
  } else {
    if constexpr ((E & 1) != 0) acc = acc * base;
    return jx_uipow_unrolled<(E >> 1), U>(acc, base * base);
  }
}
template <int64_t Y, class T> static inline T jx_ipow_c(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    if constexpr (Y == 0) {
      return T(1);
    } else {
      constexpr uint64_t E = Y < 0 ? uint64_t(-Y) : uint64_t(Y);
      T acc = jx_ipow_unrolled<E, true, T>(T(1), x);
      if constexpr (Y < 0) return T(1) / acc;
      else return acc;
    }
  } else if constexpr (Y >= 0) {
    return T(jx_uipow_unrolled<uint64_t(Y), uint64_t>(1, uint64_t(x)));
  } else {
    return jx_ipow(x, Y);
  }
}

template <class T> static inline T jx_popcount(T x) {
  using U = std::make_unsigned_t<T>;
  return T(__builtin_popcountll(uint64_t(U(x))));
}
template <class T> static inline T jx_clz(T x) {
  using U = std::make_unsigned_t<T>;
  constexpr int bits = int(sizeof(T) * 8);
  U u = U(x);
  return T(u == 0 ? bits : __builtin_clzll(uint64_t(u)) - (64 - bits));
}

// Integer division as XLA: x / 0 is -1 (all bits set), INT_MIN / -1 is INT_MIN. The
// special cases divide by 1 instead of branching, so that the loop still if-converts.
template <class T> static inline T jx_div(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    return x / y;
  } else {
    bool zero = y == 0;
    bool overflow = false;
    if constexpr (std::is_signed_v<T>) overflow = y == T(-1) && x == std::numeric_limits<T>::min();
    T q = T(x / ((zero || overflow) ? T(1) : y));
    return zero ? T(-1) : q;
  }
}
// Remainder with the sign of x (C's fmod and %): x % 0 is x, x % -1 is 0.
template <class T> static inline T jx_rem(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fmod(x, y);
  } else {
    bool zero = y == 0;
    bool minus_one = false;
    if constexpr (std::is_signed_v<T>) minus_one = y == T(-1);
    T r = T(x % ((zero || minus_one) ? T(1) : y));
    return zero ? x : r;
  }
}
template <class T> static inline T jx_nextafter(T x, T y) { return std::nextafter(x, y); }

// max/min propagate NaN (either operand NaN gives NaN). Written without early returns so
// that loops calling libm vector functions beside them still if-convert.
template <class T> static inline T jx_max(T x, T y) {
  if constexpr (std::is_floating_point_v<T>)
    return (std::isnan(x) || std::isnan(y)) ? T(NAN) : (x > y ? x : y);
  else return x > y ? x : y;
}
template <class T> static inline T jx_min(T x, T y) {
  if constexpr (std::is_floating_point_v<T>)
    return (std::isnan(x) || std::isnan(y)) ? T(NAN) : (x < y ? x : y);
  else return x < y ? x : y;
}
// clamp(lo, x, hi) = min(max(x, lo), hi) by comparison; any NaN gives NaN.
template <class T> static inline T jx_clamp(T lo, T x, T hi) {
  T r = x < lo ? lo : x;
  r = r > hi ? hi : r;
  if constexpr (std::is_floating_point_v<T>)
    return (std::isnan(lo) || std::isnan(x) || std::isnan(hi)) ? T(NAN) : r;
  else return r;
}

// Shifts: counts outside [0, bits) give 0 (logical) or the sign fill (arithmetic).
template <class T> static inline T jx_shift_left(T x, T y) {
  using U = std::make_unsigned_t<T>;
  U uy = U(y);
  return uy >= U(sizeof(T) * 8) ? T(0) : T(U(x) << uy);
}
template <class T> static inline T jx_shift_right_logical(T x, T y) {
  using U = std::make_unsigned_t<T>;
  U uy = U(y);
  return uy >= U(sizeof(T) * 8) ? T(0) : T(U(x) >> uy);
}
template <class T> static inline T jx_shift_right_arithmetic(T x, T y) {
  using U = std::make_unsigned_t<T>;
  U uy = U(y);
  if (uy >= U(sizeof(T) * 8)) return T(x < 0 ? -1 : 0);
  return T(x >> uy);
}

// select_n with an int32 `which` and more than two cases: out-of-range clamps.
template <class W, class T, class... Ts> static inline T jx_select_n(W which, T c0, Ts... cs) {
  constexpr int64_t n = int64_t(sizeof...(Ts)) + 1;
  int64_t k = int64_t(which);
  k = k < 0 ? 0 : (k >= n ? n - 1 : k);
  T r = c0;
  int64_t i = 0;
  ((r = (++i == k) ? T(cs) : r), ...);
  return r;
}

// convert_element_type: float to integer saturates and maps NaN to 0; to bool is != 0.
template <class To, class From> static inline To jx_convert(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(x)) return To(0);
    if (x <= From(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (x >= From(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return To(x);
  } else {
    return static_cast<To>(x);
  }
}
// bitcast_convert_type between types of one size.
template <class To, class From> static inline To jx_bitcast(From x) {
  static_assert(sizeof(To) == sizeof(From));
  To r;
  std::memcpy(&r, &x, sizeof(To));
  return r;
}
)JXPRELUDE";

}  // namespace jx::ops
