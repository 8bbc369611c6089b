// NumPy's float-to-text conversion (Dragon4, numpy/core/src/multiarray/dragon4.c), which its
// array printing is built on. Internal to jx.
#pragma once
#include <cstdint>
#include <string>

namespace jx::detail {

// NumPy's TrimMode, spelled as format_float_positional's `trim` letters.
enum class Trim {
  none,       // 'k': keep trailing zeros and the point
  zeros,      // '.': trim trailing zeros, keep the point
  one_zero,   // '0': trim trailing zeros but leave one after the point
  dpt_zeros,  // '-': trim trailing zeros and the point
};
Trim trim_from_char(char c);  // throws ValueError for another letter

struct Dragon4Options {
  bool scientific = false;
  bool unique = true;      // shortest digits that identify the value; else exact digits
  bool fractional = true;  // positional: precision counts digits after the point
  int precision = -1;      // -1: no cutoff
  int min_digits = -1;
  bool sign = false;  // print '+' for positive values
  Trim trim = Trim::none;
  int digits_left = -1;   // pad with spaces to this many characters left of the point
  int digits_right = -1;  // pad with spaces to this many characters right of the point
  int exp_digits = -1;    // scientific: at least this many exponent digits (default 2)
};

// `bits` holds an IEEE binary16 (width 16), binary32 (32) or binary64 (64) value.
std::string dragon4(uint64_t bits, int width, const Dragon4Options& opt);

inline std::string dragon4(double v, const Dragon4Options& opt) {
  uint64_t b;
  static_assert(sizeof(b) == sizeof(v));
  __builtin_memcpy(&b, &v, 8);
  return dragon4(b, 64, opt);
}

}  // namespace jx::detail
