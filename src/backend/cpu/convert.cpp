#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backend/cpu/complex_math.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "support/dtype_switch.h"

namespace jx::cpu {
namespace {

// Complex to real keeps the real part (lax.convert_element_type), except that bool is
// "nonzero" over both parts; real to complex has a zero imaginary part.
template <class To, class From>
inline To convert_one(From x) {
  if constexpr (cx::is_complex_v<From>) {
    if constexpr (cx::is_complex_v<To>) return To(x);
    else if constexpr (std::is_same_v<To, bool>) return x.real() != 0 || x.imag() != 0;
    else return convert_one<To>(x.real());
  } else if constexpr (cx::is_complex_v<To>) {
    using R = typename To::value_type;
    if constexpr (std::is_same_v<From, half> || std::is_same_v<From, bhalf>) return To(R(float(x)), R(0));
    else return To(R(x), R(0));
  } else if constexpr (std::is_same_v<From, half> || std::is_same_v<From, bhalf>) {
    return convert_one<To>(float(x));
  } else if constexpr (std::is_same_v<To, half> || std::is_same_v<To, bhalf>) {
    return To(float(x));
  } else if constexpr (std::is_same_v<To, bool>) {
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

template <class To, class From>
void convert_typed(const From* src, To* dst, int64_t n) {
  int nt = num_threads_for(n);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
  for (int64_t i = 0; i < n; ++i) dst[i] = convert_one<To>(src[i]);
}

}  // namespace

void convert(DType from, DType to, const void* src, void* dst, int64_t n) {
  if (from == to) {
    std::memcpy(dst, src, size_t(n) * itemsize(from));
    return;
  }
  JX_DTYPE_SWITCH_C(from, F, {
    JX_DTYPE_SWITCH_C(to, T, convert_typed(static_cast<const F*>(src), static_cast<T*>(dst), n));
  });
}

void convert_reference(DType from, DType to, const void* src, void* dst, int64_t n) {
  JX_DTYPE_SWITCH_C(from, F, {
    JX_DTYPE_SWITCH_C(to, T, {
      for (int64_t i = 0; i < n; ++i)
        static_cast<T*>(dst)[i] = convert_one<T>(static_cast<const F*>(src)[i]);
    });
  });
}

}  // namespace jx::cpu
