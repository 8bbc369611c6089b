// Element-level pieces shared by the reduction, cumulative and sort kernels: compute
// types, combine functions and identities. Internal to backend/cpu.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "backend/cpu/complex_math.h"
#include "backend/cpu/reduce.h"

namespace jx::cpu::red {

template <class T>
constexpr bool is_half_v = std::is_same_v<T, half> || std::is_same_v<T, bhalf>;

// Accumulator type: half types accumulate in float; signed ints sum/multiply in the
// unsigned type of the same width so that overflow wraps (XLA's semantics) without UB.
template <ReduceOp op, class T>
struct AccType {
  using type = T;
};
template <ReduceOp op>
struct AccType<op, half> {
  using type = float;
};
template <ReduceOp op>
struct AccType<op, bhalf> {
  using type = float;
};
template <ReduceOp op, class T>
using acc_t = typename std::conditional_t<
    std::is_integral_v<T> && std::is_signed_v<T> && (op == ReduceOp::Sum || op == ReduceOp::Prod),
    std::make_unsigned<T>, AccType<op, T>>::type;

// Sums that round (float or complex accumulators): these sum pairwise for accuracy.
template <class C>
inline constexpr bool is_float_sum_v = std::is_floating_point_v<C> || cx::is_complex_v<C>;

template <class C>
inline bool isnan_(C x) {
  if constexpr (std::is_floating_point_v<C>) return x != x;
  else return false;
}

template <ReduceOp op, class C>
inline C combine(C a, C b) {
  if constexpr (op == ReduceOp::Sum) {
    return C(a + b);
  } else if constexpr (op == ReduceOp::Prod) {
    if constexpr (cx::is_complex_v<C>) return cx::mul(a, b);  // as binary mul (NumPy's)
    else if constexpr (std::is_integral_v<C> && sizeof(C) < 4) return C(uint32_t(a) * uint32_t(b));
    else return C(a * b);
  } else if constexpr (op == ReduceOp::Max) {
    if constexpr (std::is_same_v<C, bool>) return a || b;
    else if constexpr (cx::is_complex_v<C>) return cx::lex_max(a, b);  // XLA's reducer(acc, x)
    else return (b > a || isnan_(b)) ? b : a;  // a NaN accumulator stays NaN
  } else if constexpr (op == ReduceOp::Min) {
    if constexpr (std::is_same_v<C, bool>) return a && b;
    else if constexpr (cx::is_complex_v<C>) return cx::lex_min(a, b);
    else return (b < a || isnan_(b)) ? b : a;
  } else if constexpr (op == ReduceOp::And) {
    if constexpr (std::is_same_v<C, bool>) return a && b;
    else return C(a & b);
  } else if constexpr (op == ReduceOp::Or) {
    if constexpr (std::is_same_v<C, bool>) return a || b;
    else return C(a | b);
  } else {
    if constexpr (std::is_same_v<C, bool>) return a != b;
    else return C(a ^ b);
  }
}

template <ReduceOp op, class C>
constexpr C identity() {
  if constexpr (op == ReduceOp::Sum || op == ReduceOp::Or || op == ReduceOp::Xor) return C(0);
  else if constexpr (op == ReduceOp::Prod) return C(1);
  else if constexpr (op == ReduceOp::And) {
    if constexpr (std::is_same_v<C, bool>) return true;
    else return C(~C(0));
  } else if constexpr (op == ReduceOp::Max) {
    if constexpr (std::is_same_v<C, bool>) return false;
    else if constexpr (cx::is_complex_v<C>)  // JAX's _get_max_identity: -inf + 0j
      return C(-std::numeric_limits<typename C::value_type>::infinity(), 0);
    else if constexpr (std::is_floating_point_v<C>) return -std::numeric_limits<C>::infinity();
    else return std::numeric_limits<C>::lowest();
  } else {
    if constexpr (std::is_same_v<C, bool>) return true;
    else if constexpr (cx::is_complex_v<C>)
      return C(std::numeric_limits<typename C::value_type>::infinity(), 0);
    else if constexpr (std::is_floating_point_v<C>) return std::numeric_limits<C>::infinity();
    else return std::numeric_limits<C>::max();
  }
}

// Which (op, dtype) pairs exist; the ops layer rejects the others before a kernel runs.
template <ReduceOp op, class T>
constexpr bool supported() {
  if constexpr (cx::is_complex_v<T>)
    return op == ReduceOp::Sum || op == ReduceOp::Prod || op == ReduceOp::Max || op == ReduceOp::Min;
  constexpr bool b = std::is_same_v<T, bool>;
  constexpr bool fl = std::is_floating_point_v<T> || is_half_v<T>;
  if constexpr (op == ReduceOp::Sum || op == ReduceOp::Prod) return !b;
  if constexpr (op == ReduceOp::And || op == ReduceOp::Or || op == ReduceOp::Xor) return !fl;
  return true;
}

// Merges a contiguous shape into [outer, n, inner] around `axis`.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
  AxisSplit(const int64_t* shape, int ndim, int axis) {
    for (int d = 0; d < axis; ++d) outer *= shape[d];
    n = shape[axis];
    for (int d = axis + 1; d < ndim; ++d) inner *= shape[d];
  }
};

}  // namespace jx::cpu::red
