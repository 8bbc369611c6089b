// CPU kernels: pointers + shapes in, results out. Each fast kernel has a naive reference
// beside it (suffix _reference) that the tests use as the oracle.
#pragma once
#include <cstdint>

#include "jx/dtype.h"

namespace jx::cpu {

enum class BinaryOp {
  Add, Sub, Mul, Div, Rem, Pow, Max, Min, Atan2, Nextafter,
  And, Or, Xor, ShiftLeft, ShiftRightArithmetic, ShiftRightLogical,
  Eq, Ne, Lt, Le, Gt, Ge,
  Complex,  // real, imaginary parts (float32/float64 `dtype`) -> complex64/complex128 out
};

// out[i] = a[i] op b[i] over `ndim`-d shapes; a and b have dims equal to out's or 1.
// Comparisons write bool; everything else writes `dtype`.
void binary(BinaryOp op, DType dtype, const void* a, const int64_t* a_shape, const void* b,
            const int64_t* b_shape, void* out, const int64_t* out_shape, int ndim);
void binary_reference(BinaryOp op, DType dtype, const void* a, const int64_t* a_shape,
                      const void* b, const int64_t* b_shape, void* out, const int64_t* out_shape,
                      int ndim);

// Unary elementwise ops over n contiguous elements; out has `dtype` too, except IsFinite
// (bool) and PopulationCount/Clz (same integer dtype). `param` is integer_pow's exponent.
enum class UnaryOp {
  Neg, Sign, Floor, Ceil, Round, RoundEven, IsFinite, Exp, Exp2, Log, Log1p, Expm1, Tanh,
  Logistic, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Abs, Sqrt, Rsqrt,
  Cbrt, Square, IntegerPow, Not, PopulationCount, Clz, Lgamma, Digamma, Erf, Erfc, ErfInv, Copy,
  Real, Imag, Conj,  // complex parts; Real/Imag (and Abs of complex) write the real dtype
};
void unary(UnaryOp op, DType dtype, const void* x, void* out, int64_t n, int64_t param = 0);
void unary_reference(UnaryOp op, DType dtype, const void* x, void* out, int64_t n,
                     int64_t param = 0);

// out = cases[which] elementwise, clamping `which` to [0, ncases). which is bool or int32;
// every operand has `ndim` dims equal to out's or 1. Cases share one dtype (itemsize).
void select_n(DType which_dtype, const void* which, const int64_t* which_shape, size_t itemsize,
              const void* const* cases, const int64_t* const* case_shapes, int ncases, void* out,
              const int64_t* out_shape, int ndim);
void select_n_reference(DType which_dtype, const void* which, const int64_t* which_shape,
                        size_t itemsize, const void* const* cases,
                        const int64_t* const* case_shapes, int ncases, void* out,
                        const int64_t* out_shape, int ndim);

// out = min(max(x, lo), hi) with NaN propagation (XLA clamp); lo/hi broadcast (dims 1).
void clamp(DType dtype, const void* lo, const int64_t* lo_shape, const void* x,
           const int64_t* x_shape, const void* hi, const int64_t* hi_shape, void* out,
           const int64_t* out_shape, int ndim);
void clamp_reference(DType dtype, const void* lo, const int64_t* lo_shape, const void* x,
                     const int64_t* x_shape, const void* hi, const int64_t* hi_shape, void* out,
                     const int64_t* out_shape, int ndim);

}  // namespace jx::cpu

namespace jx::cpu {

// dst (contiguous, out_shape) = src read through `src_strides` (elements, one per out dim;
// 0 broadcasts). Serves broadcast_in_dim, transpose and strided slices.
void copy_strided(size_t itemsize, const void* src, const int64_t* src_strides, void* dst,
                  const int64_t* out_shape, int ndim);
void copy_strided_reference(size_t itemsize, const void* src, const int64_t* src_strides,
                            void* dst, const int64_t* out_shape, int ndim);

// dst[i] = convert(src[i]) for n elements. Float -> int truncates toward zero and
// saturates (NaN -> 0), as XLA on CPU; anything -> bool is (x != 0).
void convert(DType from, DType to, const void* src, void* dst, int64_t n);
void convert_reference(DType from, DType to, const void* src, void* dst, int64_t n);

}  // namespace jx::cpu
