// Element types, their C++ storage types, and JAX's type-promotion lattice.
#pragma once
#include <complex>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <type_traits>

namespace jx {

enum class DType : uint8_t {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex64,   // two float32: real, imaginary (std::complex<float>)
  Complex128,  // two float64 (std::complex<double>)
};
inline constexpr int kNumDTypes = 15;

inline constexpr DType bool_ = DType::Bool;
inline constexpr DType int8 = DType::Int8;
inline constexpr DType int16 = DType::Int16;
inline constexpr DType int32 = DType::Int32;
inline constexpr DType int64 = DType::Int64;
inline constexpr DType uint8 = DType::UInt8;
inline constexpr DType uint16 = DType::UInt16;
inline constexpr DType uint32 = DType::UInt32;
inline constexpr DType uint64 = DType::UInt64;
inline constexpr DType float16 = DType::Float16;
inline constexpr DType bfloat16 = DType::BFloat16;
inline constexpr DType float32 = DType::Float32;
inline constexpr DType float64 = DType::Float64;
inline constexpr DType complex64 = DType::Complex64;
inline constexpr DType complex128 = DType::Complex128;

// IEEE binary16, stored as bits; arithmetic goes through float.
struct half {
  uint16_t bits = 0;
  half() = default;
  explicit half(float f) : bits(from_float(f)) {}
  operator float() const { return to_float(bits); }
  static uint16_t from_float(float f);
  static float to_float(uint16_t h);
};

// bfloat16: the top 16 bits of a float32, rounded to nearest even.
struct bhalf {
  uint16_t bits = 0;
  bhalf() = default;
  explicit bhalf(float f) : bits(from_float(f)) {}
  operator float() const {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static uint16_t from_float(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return uint16_t(u >> 16);
  }
};

size_t itemsize(DType t);
const char* dtype_name(DType t);       // "float32"
const char* dtype_short_name(DType t); // "f32", as jaxprs print it
bool is_floating(DType t);  // real floating point: float16 .. float64
bool is_complex(DType t);   // complex64, complex128
bool is_inexact(DType t);   // floating or complex: the dtypes that carry tangents
// complex64 -> float32, complex128 -> float64; any other dtype is returned as it is.
DType real_dtype(DType t);
// float32 (and narrower floats) -> complex64, float64 -> complex128; complex stays.
DType complex_dtype(DType t);
bool is_integer(DType t);  // signed or unsigned, not bool
bool is_signed_integer(DType t);
bool is_unsigned_integer(DType t);
std::ostream& operator<<(std::ostream& os, DType t);
// Parses "float32", "f32", "int8", "bool", ...; throws jx::DTypeError on an unknown name.
DType dtype_from_name(const std::string& name);

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return DType::Bool;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::Int8;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::Int16;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::Int32;
  else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, long long>) return DType::Int64;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::UInt8;
  else if constexpr (std::is_same_v<T, uint16_t>) return DType::UInt16;
  else if constexpr (std::is_same_v<T, uint32_t>) return DType::UInt32;
  else if constexpr (std::is_same_v<T, uint64_t> || std::is_same_v<T, unsigned long long>)
    return DType::UInt64;
  else if constexpr (std::is_same_v<T, half>) return DType::Float16;
  else if constexpr (std::is_same_v<T, bhalf>) return DType::BFloat16;
  else if constexpr (std::is_same_v<T, float>) return DType::Float32;
  else if constexpr (std::is_same_v<T, double>) return DType::Float64;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return DType::Complex64;
  else if constexpr (std::is_same_v<T, std::complex<double>>) return DType::Complex128;
  else static_assert(sizeof(T) == 0, "jx: no dtype for this C++ type");
}

// What Array::dtype() returns: a DType (it converts to one, and compares and prints as
// one) that also answers as a numpy.dtype does: x.dtype().name() is JAX's x.dtype.name.
class DTypeObject {
 public:
  constexpr explicit DTypeObject(DType t) : t_(t) {}
  constexpr operator DType() const { return t_; }
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  constexpr explicit operator I() const {  // size_t(x.dtype()), as for the enum
    return I(t_);
  }
  const char* name() const { return dtype_name(t_); }
  size_t itemsize() const { return jx::itemsize(t_); }

 private:
  DType t_;
};

// ---- Promotion (JAX's lattice; see docs/dtypes.md) ----
// A dtype plus JAX's weak-type flag: C++ arithmetic scalars are weak, as Python scalars
// are in JAX, so `x * 2.0` keeps x's dtype.
struct TypedKind {
  DType dtype;
  bool weak = false;
};
// The join of two dtypes on the lattice (both strong). uint64 with a signed int gives
// the default float, as in JAX.
DType promote_types(DType a, DType b);
// The join with weak types taken into account; the result is weak only when it is a
// weak node of the lattice (i*, f*, c*), in which case its dtype is int32 / float32 /
// complex64.
TypedKind promote(TypedKind a, TypedKind b);
TypedKind result_type(std::initializer_list<TypedKind> xs);
// NumPy's can_cast with casting='safe': true when promote_types(from, to) == to.
bool can_cast(DType from, DType to);

DType default_float();  // float32
DType default_int();    // int32

struct FInfo {
  DType dtype;
  int bits;
  double eps, max, min, tiny, smallest_normal, resolution, epsneg;
  int nmant, nexp, minexp, maxexp, precision;
};
struct IInfo {
  DType dtype;
  int bits;
  int64_t min;
  uint64_t max;
};
// For a complex dtype, the finfo of its parts (as NumPy's finfo(complex64) is float32's).
FInfo finfo(DType t);  // throws DTypeError for non-inexact dtypes
IInfo iinfo(DType t);  // throws DTypeError for non-integer dtypes

}  // namespace jx
