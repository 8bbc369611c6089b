// Dispatch on a runtime dtype to a template: JX_DTYPE_SWITCH(dt, T, { body using T; }).
// float16/bfloat16 bind T to jx::half / jx::bhalf (storage types; compute through float).
#pragma once
#include "jx/dtype.h"
#include "jx/error.h"

#define JX_DTYPE_CASE(enumv, ctype, T, ...) \
  case ::jx::DType::enumv: {                \
    using T = ctype;                        \
    __VA_ARGS__;                            \
    break;                                  \
  }

// The cases of the real (non-complex) dtypes, shared by both switches below.
#define JX_DTYPE_REAL_CASES(T, ...)                    \
  JX_DTYPE_CASE(Bool, bool, T, __VA_ARGS__)            \
  JX_DTYPE_CASE(Int8, int8_t, T, __VA_ARGS__)          \
  JX_DTYPE_CASE(Int16, int16_t, T, __VA_ARGS__)        \
  JX_DTYPE_CASE(Int32, int32_t, T, __VA_ARGS__)        \
  JX_DTYPE_CASE(Int64, int64_t, T, __VA_ARGS__)        \
  JX_DTYPE_CASE(UInt8, uint8_t, T, __VA_ARGS__)        \
  JX_DTYPE_CASE(UInt16, uint16_t, T, __VA_ARGS__)      \
  JX_DTYPE_CASE(UInt32, uint32_t, T, __VA_ARGS__)      \
  JX_DTYPE_CASE(UInt64, uint64_t, T, __VA_ARGS__)      \
  JX_DTYPE_CASE(Float16, ::jx::half, T, __VA_ARGS__)   \
  JX_DTYPE_CASE(BFloat16, ::jx::bhalf, T, __VA_ARGS__) \
  JX_DTYPE_CASE(Float32, float, T, __VA_ARGS__)        \
  JX_DTYPE_CASE(Float64, double, T, __VA_ARGS__)

#define JX_DTYPE_SWITCH(dt, T, ...)                                    \
  switch (dt) {                                                        \
    JX_DTYPE_REAL_CASES(T, __VA_ARGS__)                                \
    default:                                                           \
      throw ::jx::InternalError("jx internal error: unhandled dtype"); \
  }

// JX_DTYPE_SWITCH plus complex64/complex128 (T = std::complex<float> / std::complex<double>),
// for the kernels that support complex. The plain switch leaves complex out on purpose:
// bind() rejects complex operands of a primitive not marked `complex` (ops/primitive.h)
// before any kernel sees them.
#define JX_DTYPE_SWITCH_C(dt, T, ...)                                     \
  switch (dt) {                                                           \
    JX_DTYPE_REAL_CASES(T, __VA_ARGS__)                                   \
    JX_DTYPE_CASE(Complex64, std::complex<float>, T, __VA_ARGS__)         \
    JX_DTYPE_CASE(Complex128, std::complex<double>, T, __VA_ARGS__)       \
    default:                                                              \
      throw ::jx::InternalError("jx internal error: unhandled dtype");    \
  }
