#include <array>
#include <cmath>
#include <limits>
#include <ostream>

#include "jx/dtype.h"
#include "jx/error.h"
#include "support/str.h"

namespace jx {

// ---- half <-> float, round to nearest even ----
uint16_t half::from_float(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or nan
    return uint16_t(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  }
  if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to inf
  if (absx < 0x38800000u) {                                   // subnormal or zero in half
    if (absx < 0x33000000u) return uint16_t(sign);            // below half the smallest subnormal
    uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    // value = mant * 2^(e-150) and the half subnormal unit is 2^-24: shift by 126 - e.
    uint32_t drop = uint32_t(126 - int(absx >> 23));
    uint32_t r = mant >> drop;
    uint32_t rem = mant & ((1u << drop) - 1u);
    uint32_t halfway = 1u << (drop - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) r++;
    return uint16_t(sign | r);
  }
  uint32_t e = (absx >> 23) - 112u;  // rebias 127 -> 15
  uint32_t mant = absx & 0x7fffffu;
  uint32_t r = (e << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;  // may carry into the exponent: fine
  return uint16_t(sign | r);
}

float half::to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu;
  uint32_t m = h & 0x3ffu;
  uint32_t x;
  if (e == 0) {
    if (m == 0) {
      x = sign;
    } else {  // subnormal: normalize
      int shift = 0;
      while (!(m & 0x400u)) {
        m <<= 1;
        ++shift;
      }
      m &= 0x3ffu;
      x = sign | (uint32_t(113 - shift) << 23) | (m << 13);
    }
  } else if (e == 31) {
    x = sign | 0x7f800000u | (m << 13);
  } else {
    x = sign | ((e + 112u) << 23) | (m << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

namespace {

struct DTypeRow {
  const char* name;
  const char* short_name;
  size_t size;
};
constexpr std::array<DTypeRow, kNumDTypes> kRows = {{
    {"bool", "bool", 1},
    {"int8", "i8", 1},
    {"int16", "i16", 2},
    {"int32", "i32", 4},
    {"int64", "i64", 8},
    {"uint8", "u8", 1},
    {"uint16", "u16", 2},
    {"uint32", "u32", 4},
    {"uint64", "u64", 8},
    {"float16", "f16", 2},
    {"bfloat16", "bf16", 2},
    {"float32", "f32", 4},
    {"float64", "f64", 8},
    {"complex64", "c64", 8},
    {"complex128", "c128", 16},
}};

// The promotion lattice of JAX's docs/type_promotion.rst.
// Nodes 0..14 are the DType values; then i* (weak int), f* (weak float), c* (weak complex).
constexpr int kWeakInt = kNumDTypes, kWeakFloat = kNumDTypes + 1, kWeakComplex = kNumDTypes + 2,
              kNodes = kNumDTypes + 3;

struct Lattice {
  // upper[a] = bitmask of nodes reachable from a (including a).
  std::array<uint32_t, kNodes> upper{};
  Lattice() {
    std::array<std::vector<int>, kNodes> edges;
    auto E = [&](int a, int b) { edges[size_t(a)].push_back(b); };
    auto d = [](DType t) { return int(t); };
    E(d(DType::Bool), kWeakInt);
    E(kWeakInt, d(DType::UInt8));
    E(kWeakInt, d(DType::Int8));
    E(d(DType::UInt8), d(DType::UInt16));
    E(d(DType::UInt8), d(DType::Int16));
    E(d(DType::UInt16), d(DType::UInt32));
    E(d(DType::UInt16), d(DType::Int32));
    E(d(DType::UInt32), d(DType::UInt64));
    E(d(DType::UInt32), d(DType::Int64));
    E(d(DType::UInt64), kWeakFloat);
    E(d(DType::Int8), d(DType::Int16));
    E(d(DType::Int16), d(DType::Int32));
    E(d(DType::Int32), d(DType::Int64));
    E(d(DType::Int64), kWeakFloat);
    E(kWeakFloat, d(DType::Float16));
    E(kWeakFloat, d(DType::BFloat16));
    E(d(DType::BFloat16), d(DType::Float32));
    E(d(DType::Float16), d(DType::Float32));
    E(d(DType::Float32), d(DType::Float64));
    E(kWeakFloat, kWeakComplex);
    E(kWeakComplex, d(DType::Complex64));
    E(d(DType::Float32), d(DType::Complex64));
    E(d(DType::Float64), d(DType::Complex128));
    E(d(DType::Complex64), d(DType::Complex128));
    for (int a = 0; a < kNodes; ++a) {
      uint32_t seen = 1u << a;
      std::vector<int> stack{a};
      while (!stack.empty()) {
        int n = stack.back();
        stack.pop_back();
        for (int m : edges[size_t(n)]) {
          if (!(seen & (1u << m))) {
            seen |= 1u << m;
            stack.push_back(m);
          }
        }
      }
      upper[size_t(a)] = seen;
    }
  }
  int join(int a, int b) const {
    uint32_t common = upper[size_t(a)] & upper[size_t(b)];
    for (int c = 0; c < kNodes; ++c) {
      if ((common & (1u << c)) && (upper[size_t(c)] & common) == common) return c;
    }
    throw InternalError("jx internal error: promotion lattice has no join");
  }
};

const Lattice& lattice() {
  static const Lattice L;
  return L;
}

int node_of(TypedKind t) {
  if (t.weak) {
    if (is_floating(t.dtype)) return kWeakFloat;
    if (is_integer(t.dtype)) return kWeakInt;
    if (is_complex(t.dtype)) return kWeakComplex;
  }
  return int(t.dtype);
}

TypedKind kind_of_node(int n) {
  if (n == kWeakInt) return {DType::Int32, true};
  if (n == kWeakFloat) return {DType::Float32, true};
  if (n == kWeakComplex) return {DType::Complex64, true};
  return {DType(n), false};
}

}  // namespace

size_t itemsize(DType t) { return kRows[size_t(t)].size; }
const char* dtype_name(DType t) { return kRows[size_t(t)].name; }
const char* dtype_short_name(DType t) { return kRows[size_t(t)].short_name; }
bool is_floating(DType t) { return t >= DType::Float16 && t <= DType::Float64; }
bool is_complex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }
bool is_inexact(DType t) { return is_floating(t) || is_complex(t); }
DType real_dtype(DType t) {
  if (t == DType::Complex64) return DType::Float32;
  if (t == DType::Complex128) return DType::Float64;
  return t;
}
DType complex_dtype(DType t) {
  if (t == DType::Float64 || t == DType::Complex128) return DType::Complex128;
  return DType::Complex64;
}
bool is_signed_integer(DType t) { return t >= DType::Int8 && t <= DType::Int64; }
bool is_unsigned_integer(DType t) { return t >= DType::UInt8 && t <= DType::UInt64; }
bool is_integer(DType t) { return is_signed_integer(t) || is_unsigned_integer(t); }
std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

DType dtype_from_name(const std::string& name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (name == kRows[size_t(i)].name || name == kRows[size_t(i)].short_name) return DType(i);
  }
  if (name == "bool_") return DType::Bool;
  if (name == "float") return DType::Float32;
  if (name == "int") return DType::Int32;
  if (name == "complex") return DType::Complex64;
  throw DTypeError(str("[dtype] unknown dtype name '", name,
                       "'; use one of bool, int8..int64, uint8..uint64, float16, bfloat16, "
                       "float32, float64, complex64, complex128"));
}

DType promote_types(DType a, DType b) {
  return kind_of_node(lattice().join(int(a), int(b))).dtype;
}

namespace {
// A weak result keeps the width of a wider weak operand of its kind: weak i*/f* materialize
// as int32/float32, but a weak float64 array (say, from float64 math on a C++ scalar) must
// not be narrowed by meeting another weak value.
TypedKind widen_weak(TypedKind r, std::initializer_list<TypedKind> xs) {
  if (!r.weak) return r;
  for (const TypedKind& x : xs) {
    bool same_kind = is_floating(x.dtype) == is_floating(r.dtype) &&
                     is_integer(x.dtype) == is_integer(r.dtype) &&
                     is_complex(x.dtype) == is_complex(r.dtype);
    if (x.weak && same_kind && itemsize(x.dtype) > itemsize(r.dtype)) r.dtype = x.dtype;
  }
  return r;
}
}  // namespace

TypedKind promote(TypedKind a, TypedKind b) {
  return widen_weak(kind_of_node(lattice().join(node_of(a), node_of(b))), {a, b});
}

TypedKind result_type(std::initializer_list<TypedKind> xs) {
  if (xs.size() == 0) throw ValueError("[result_type] needs at least one argument");
  int node = node_of(*xs.begin());
  for (auto it = xs.begin() + 1; it != xs.end(); ++it) node = lattice().join(node, node_of(*it));
  return widen_weak(kind_of_node(node), xs);
}

bool can_cast(DType from, DType to) { return promote_types(from, to) == to; }

DType default_float() { return DType::Float32; }
DType default_int() { return DType::Int32; }

FInfo finfo(DType t) {
  if (is_complex(t)) return finfo(real_dtype(t));
  auto fill = [&](auto x) {
    using T = decltype(x);
    using L = std::numeric_limits<T>;
    FInfo f{};
    f.dtype = t;
    f.bits = int(sizeof(T) * 8);
    f.eps = double(L::epsilon());
    f.max = double(L::max());
    f.min = double(L::lowest());
    f.tiny = f.smallest_normal = double(L::min());
    f.nmant = L::digits - 1;
    f.precision = L::digits10;
    f.resolution = std::pow(10.0, -f.precision);
    f.epsneg = f.eps / 2;
    f.maxexp = L::max_exponent;
    f.minexp = L::min_exponent - 1;
    f.nexp = t == DType::Float32 ? 8 : 11;
    return f;
  };
  switch (t) {
    case DType::Float32:
      return fill(0.0f);
    case DType::Float64:
      return fill(0.0);
    case DType::Float16: {
      FInfo f{};
      f.dtype = t;
      f.bits = 16;
      f.eps = std::ldexp(1.0, -10);
      f.epsneg = std::ldexp(1.0, -11);
      f.max = 65504.0;
      f.min = -65504.0;
      f.tiny = f.smallest_normal = std::ldexp(1.0, -14);
      f.nmant = 10;
      f.nexp = 5;
      f.minexp = -14;
      f.maxexp = 16;
      f.precision = 3;
      f.resolution = 1e-3;
      return f;
    }
    case DType::BFloat16: {
      FInfo f{};
      f.dtype = t;
      f.bits = 16;
      f.eps = std::ldexp(1.0, -7);
      f.epsneg = std::ldexp(1.0, -8);
      f.max = 3.3895313892515355e38;
      f.min = -f.max;
      f.tiny = f.smallest_normal = std::ldexp(1.0, -126);
      f.nmant = 7;
      f.nexp = 8;
      f.minexp = -126;
      f.maxexp = 128;
      f.precision = 2;
      f.resolution = 1e-2;
      return f;
    }
    default:
      throw DTypeError(str("[finfo] expects a floating or complex dtype, got ", dtype_name(t),
                           "; use iinfo for integer dtypes"));
  }
}

IInfo iinfo(DType t) {
  IInfo r{};
  r.dtype = t;
  r.bits = int(itemsize(t) * 8);
  if (is_signed_integer(t)) {
    r.min = -int64_t((uint64_t(1) << (r.bits - 1)) - 1) - 1;  // no signed overflow at 64 bits
    r.max = (uint64_t(1) << (r.bits - 1)) - 1;
  } else if (is_unsigned_integer(t)) {
    r.min = 0;
    r.max = r.bits == 64 ? ~uint64_t(0) : (uint64_t(1) << r.bits) - 1;
  } else if (t == DType::Bool) {
    throw DTypeError("[iinfo] expects an integer dtype, got bool");
  } else {
    throw DTypeError(str("[iinfo] expects an integer dtype, got ", dtype_name(t),
                         "; use finfo for floating dtypes"));
  }
  return r;
}


}  // namespace jx
