// NumPy's Dragon4 (Steele & White / Burger & Dybvig, as ported by Ryan Juckett and extended by
// NumPy with min_digits and IEEE unbiased rounding). Printing must agree with NumPy digit for
// digit, including its choices that differ from the shortest-round-trip printers
// (std::to_chars): e.g. with min_digits all integer digits are printed (float16 8192 is "8192.",
// not "8190."), and a cut-off digit is rounded from the exact binary value.
#include "numpy/io_dragon4.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "jx/error.h"
#include "support/str.h"

namespace jx::detail {

namespace {

// Unsigned arbitrary-precision integer, 32-bit limbs, little-endian, no leading zero limbs.
class BigInt {
 public:
  BigInt() = default;
  explicit BigInt(uint64_t v) { set(v); }
  void set(uint64_t v) {
    b_.clear();
    if (v) b_.push_back(uint32_t(v));
    if (v >> 32) b_.push_back(uint32_t(v >> 32));
  }
  static BigInt pow2(int n) {
    BigInt r;
    r.b_.assign(size_t(n / 32) + 1, 0);
    r.b_.back() = 1u << (n % 32);
    return r;
  }
  static BigInt pow10(int n) {
    BigInt r(1);
    while (n >= 9) {
      r.mul_small(1000000000u);
      n -= 9;
    }
    static const uint32_t small[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
    r.mul_small(small[n]);
    return r;
  }
  bool is_zero() const { return b_.empty(); }
  bool is_even() const { return b_.empty() || (b_[0] & 1u) == 0; }

  void shl(int n) {
    if (b_.empty() || n == 0) return;
    size_t words = size_t(n / 32);
    int bits = n % 32;
    std::vector<uint32_t> r(b_.size() + words + 1, 0);
    for (size_t i = 0; i < b_.size(); ++i) {
      uint64_t v = uint64_t(b_[i]) << bits;
      r[i + words] |= uint32_t(v);
      r[i + words + 1] |= uint32_t(v >> 32);
    }
    b_ = std::move(r);
    trim();
  }
  void mul_small(uint32_t m) {
    uint64_t carry = 0;
    for (auto& x : b_) {
      uint64_t v = uint64_t(x) * m + carry;
      x = uint32_t(v);
      carry = v >> 32;
    }
    if (carry) b_.push_back(uint32_t(carry));
    trim();
  }
  static BigInt mul(const BigInt& a, const BigInt& c) {
    BigInt r;
    if (a.is_zero() || c.is_zero()) return r;
    r.b_.assign(a.b_.size() + c.b_.size(), 0);
    for (size_t i = 0; i < a.b_.size(); ++i) {
      uint64_t carry = 0;
      for (size_t j = 0; j < c.b_.size(); ++j) {
        uint64_t v = uint64_t(a.b_[i]) * c.b_[j] + r.b_[i + j] + carry;
        r.b_[i + j] = uint32_t(v);
        carry = v >> 32;
      }
      r.b_[i + c.b_.size()] = uint32_t(carry);
    }
    r.trim();
    return r;
  }
  static BigInt add(const BigInt& a, const BigInt& c) {
    BigInt r;
    size_t n = std::max(a.b_.size(), c.b_.size());
    r.b_.assign(n + 1, 0);
    uint64_t carry = 0;
    for (size_t i = 0; i < n; ++i) {
      uint64_t v = carry;
      if (i < a.b_.size()) v += a.b_[i];
      if (i < c.b_.size()) v += c.b_[i];
      r.b_[i] = uint32_t(v);
      carry = v >> 32;
    }
    r.b_[n] = uint32_t(carry);
    r.trim();
    return r;
  }
  // this -= o, requires this >= o.
  void sub(const BigInt& o) {
    int64_t borrow = 0;
    for (size_t i = 0; i < b_.size(); ++i) {
      int64_t v = int64_t(b_[i]) - borrow - (i < o.b_.size() ? int64_t(o.b_[i]) : 0);
      borrow = v < 0;
      b_[i] = uint32_t(v + (borrow << 32));
    }
    trim();
  }
  static int cmp(const BigInt& a, const BigInt& c) {
    if (a.b_.size() != c.b_.size()) return a.b_.size() < c.b_.size() ? -1 : 1;
    for (size_t i = a.b_.size(); i-- > 0;)
      if (a.b_[i] != c.b_[i]) return a.b_[i] < c.b_[i] ? -1 : 1;
    return 0;
  }
  // Quotient (0..9 by construction) of this / d; this becomes the remainder.
  uint32_t divmod_digit(const BigInt& d) {
    uint32_t q = 0;
    while (cmp(*this, d) >= 0) {
      sub(d);
      ++q;
    }
    return q;
  }

 private:
  void trim() {
    while (!b_.empty() && b_.back() == 0) b_.pop_back();
  }
  std::vector<uint32_t> b_;
};

// The digits of mantissa * 2^exponent and the base-10 exponent of the first one.
struct Digits {
  std::string d;
  int exp10 = 0;
};

Digits run_dragon4(uint64_t mantissa, int exponent, int mantissa_bit, bool unequal_margins,
                   bool unique, bool fractional_cutoff, int cutoff_max, int cutoff_min,
                   int buffer_size) {
  Digits out;
  if (mantissa == 0) {
    out.d.assign(1, '0');
    return out;
  }
  const bool is_even = (mantissa & 1u) == 0;
  BigInt scale, value(mantissa), margin_low, margin_high;
  // value/scale is the number; margins are half the distance to the neighbouring floats,
  // the high one twice the low one just above a power of two.
  if (unequal_margins) {
    if (exponent > 0) {
      value.shl(exponent + 2);
      scale.set(4);
      margin_low = BigInt::pow2(exponent);
      margin_high = BigInt::pow2(exponent + 1);
    } else {
      value.shl(2);
      scale = BigInt::pow2(-exponent + 2);
      margin_low.set(1);
      margin_high.set(2);
    }
  } else {
    if (exponent > 0) {
      value.shl(exponent + 1);
      scale.set(2);
      margin_low = BigInt::pow2(exponent);
    } else {
      value.shl(1);
      scale = BigInt::pow2(-exponent + 1);
      margin_low.set(1);
    }
  }
  auto sync_high = [&] {
    if (unequal_margins) {
      margin_high = margin_low;
      margin_high.shl(1);
    }
  };
  auto high_margin = [&]() -> const BigInt& { return unequal_margins ? margin_high : margin_low; };

  // NumPy's estimate of floor(log10(v)) + 1, correct or one too low.
  const double log10_2 = 0.30102999566398119521373889472449;
  int digit_exp = int(std::ceil(double(mantissa_bit + exponent) * log10_2 - 0.69));
  if (cutoff_max >= 0 && fractional_cutoff && digit_exp <= -cutoff_max) digit_exp = -cutoff_max + 1;
  if (digit_exp > 0) {
    scale = BigInt::mul(scale, BigInt::pow10(digit_exp));
  } else if (digit_exp < 0) {
    BigInt p = BigInt::pow10(-digit_exp);
    value = BigInt::mul(value, p);
    margin_low = BigInt::mul(margin_low, p);
    sync_high();
  }
  if (BigInt::cmp(value, scale) >= 0) {
    digit_exp += 1;
  } else {
    value.mul_small(10);
    margin_low.mul_small(10);
    sync_high();
  }

  int cutoff_max_exp = digit_exp - buffer_size;
  if (cutoff_max >= 0) {
    int desired = fractional_cutoff ? -cutoff_max : digit_exp - cutoff_max;
    if (desired > cutoff_max_exp) cutoff_max_exp = desired;
  }
  int cutoff_min_exp = digit_exp;
  if (cutoff_min >= 0) {
    int desired = fractional_cutoff ? -cutoff_min : digit_exp - cutoff_min;
    if (desired < cutoff_min_exp) cutoff_min_exp = desired;
  }
  out.exp10 = digit_exp - 1;

  bool low = false, high = false;
  uint32_t digit = 0;
  if (unique) {
    for (;;) {
      digit_exp -= 1;
      digit = value.divmod_digit(scale);
      BigInt value_high = BigInt::add(value, high_margin());
      int c = BigInt::cmp(value, margin_low);
      low = is_even ? c <= 0 : c < 0;
      c = BigInt::cmp(value_high, scale);
      high = is_even ? c >= 0 : c > 0;
      if (((low || high) && digit_exp <= cutoff_min_exp) || digit_exp == cutoff_max_exp) break;
      out.d.push_back(char('0' + digit));
      value.mul_small(10);
      margin_low.mul_small(10);
      sync_high();
    }
  } else {
    for (;;) {
      digit_exp -= 1;
      digit = value.divmod_digit(scale);
      if (value.is_zero() || digit_exp == cutoff_max_exp) break;
      out.d.push_back(char('0' + digit));
      value.mul_small(10);
    }
  }

  bool round_down = low;
  if (low == high) {  // both roundings are legal: take the nearer, ties to even
    value.shl(1);
    int c = BigInt::cmp(value, scale);
    round_down = c < 0;
    if (c == 0) round_down = (digit & 1u) == 0;
  }
  if (round_down) {
    out.d.push_back(char('0' + digit));
  } else if (digit == 9) {
    // carry into the earlier nines
    for (;;) {
      if (out.d.empty()) {
        out.d.push_back('1');
        out.exp10 += 1;
        break;
      }
      if (out.d.back() != '9') {
        out.d.back() = char(out.d.back() + 1);
        break;
      }
      out.d.pop_back();
    }
  } else {
    out.d.push_back(char('0' + digit + 1));
  }
  return out;
}

// NumPy's scratch buffer is 16384 characters; it bounds the digits of exact-mode output.
constexpr int kBufferSize = 16384;

std::string format_positional(uint64_t mantissa, int exponent, char signbit, int mantissa_bit,
                              bool unequal, const Dragon4Options& o) {
  std::string s;
  int has_sign = 0;
  if (signbit) {
    s.push_back(signbit);
    has_sign = 1;
  }
  Digits dg = run_dragon4(mantissa, exponent, mantissa_bit, unequal, o.unique, o.fractional,
                          o.precision, o.min_digits, kBufferSize - 1 - has_sign);
  int num_digits = int(dg.d.size());
  int whole = 0, frac = 0;
  if (dg.exp10 >= 0) {
    whole = dg.exp10 + 1;
    if (num_digits <= whole) {
      s += dg.d;
      s.append(size_t(whole - num_digits), '0');
    } else {
      s.append(dg.d, 0, size_t(whole));
      s.push_back('.');
      s.append(dg.d, size_t(whole), std::string::npos);
      frac = num_digits - whole;
    }
  } else {
    int zeros = -(dg.exp10 + 1);
    s += "0.";
    s.append(size_t(zeros), '0');
    s += dg.d;
    frac = num_digits + zeros;
    whole = 1;
  }
  if (o.trim != Trim::dpt_zeros && frac == 0) s.push_back('.');

  int add_digits = o.unique ? o.min_digits : o.precision;
  int desired_frac = add_digits < 0 ? 0 : add_digits;
  if (!o.fractional) desired_frac = add_digits - whole;
  if (o.trim == Trim::one_zero) {
    if (frac == 0) {
      s.push_back('0');
      ++frac;
    }
  } else if (o.trim == Trim::none && desired_frac > frac) {
    s.append(size_t(desired_frac - frac), '0');
    frac = desired_frac;
  }
  if (o.trim != Trim::none && frac > 0) {
    while (s.back() == '0') {
      s.pop_back();
      --frac;
    }
    if (s.back() == '.') {
      if (o.trim == Trim::one_zero) {
        s.push_back('0');
        ++frac;
      } else if (o.trim == Trim::dpt_zeros) {
        s.pop_back();
      }
    }
  }
  if (o.digits_right >= frac) {
    if (o.trim == Trim::dpt_zeros && frac == 0) s.push_back(' ');
    s.append(size_t(o.digits_right - frac), ' ');
  }
  if (o.digits_left > whole + has_sign) s.insert(0, size_t(o.digits_left - whole - has_sign), ' ');
  return s;
}

std::string format_scientific(uint64_t mantissa, int exponent, char signbit, int mantissa_bit,
                              bool unequal, const Dragon4Options& o) {
  std::string s;
  int leftchars = 1 + (signbit ? 1 : 0);
  if (o.digits_left > leftchars) s.append(size_t(o.digits_left - leftchars), ' ');
  if (signbit) s.push_back(signbit);
  Digits dg = run_dragon4(mantissa, exponent, mantissa_bit, unequal, o.unique, false,
                          o.precision < 0 ? -1 : o.precision + 1,
                          o.min_digits < 0 ? -1 : o.min_digits + 1, kBufferSize - int(s.size()));
  s.push_back(dg.d[0]);
  int frac = int(dg.d.size()) - 1;
  if (frac > 0) {
    s.push_back('.');
    s.append(dg.d, 1, std::string::npos);
  }
  if (o.trim != Trim::dpt_zeros && frac == 0) s.push_back('.');
  int add_digits = o.unique ? o.min_digits : o.precision;
  if (add_digits < 0) add_digits = 0;
  if (o.trim == Trim::one_zero) {
    if (frac == 0) {
      s.push_back('0');
      ++frac;
    }
  } else if (o.trim == Trim::none && add_digits > frac) {
    s.append(size_t(add_digits - frac), '0');
    frac = add_digits;
  }
  if (o.trim != Trim::none && frac > 0) {
    while (s.back() == '0') {
      s.pop_back();
      --frac;
    }
    if (o.trim == Trim::one_zero && s.back() == '.') {
      s.push_back('0');
      ++frac;
    }
  }
  int e = dg.exp10;
  int exp_digits = o.exp_digits;
  if (exp_digits > 5) exp_digits = 5;
  if (exp_digits < 0) exp_digits = 2;
  s.push_back('e');
  s.push_back(e >= 0 ? '+' : '-');
  std::string ed = std::to_string(e < 0 ? -e : e);
  if (int(ed.size()) < exp_digits) ed.insert(0, size_t(exp_digits - int(ed.size())), '0');
  s += ed;
  return s;
}

int log2_floor(uint64_t v) { return 63 - __builtin_clzll(v); }

}  // namespace

Trim trim_from_char(char c) {
  switch (c) {
    case 'k':
      return Trim::none;
    case '.':
      return Trim::zeros;
    case '0':
      return Trim::one_zero;
    case '-':
      return Trim::dpt_zeros;
    default:
      throw ValueError(str("[format_float] trim must be one of 'k', '.', '0', '-', got '", c, "'"));
  }
}

std::string dragon4(uint64_t bits, int width, const Dragon4Options& opt) {
  int mant_bits = width == 16 ? 10 : width == 32 ? 23 : 52;
  int exp_bits = width == 16 ? 5 : width == 32 ? 8 : 11;
  int bias = (1 << (exp_bits - 1)) - 1;
  uint64_t fmant = bits & ((uint64_t(1) << mant_bits) - 1);
  uint64_t fexp = (bits >> mant_bits) & ((uint64_t(1) << exp_bits) - 1);
  bool negative = (bits >> (width - 1)) & 1u;
  char signbit = negative ? '-' : opt.sign ? '+' : '\0';
  if (fexp == (uint64_t(1) << exp_bits) - 1) {
    if (fmant != 0) return "nan";  // NumPy never prints a sign for NaN
    return signbit ? std::string(1, signbit) + "inf" : std::string("inf");
  }
  uint64_t mantissa;
  int exponent, mantissa_bit;
  bool unequal;
  if (fexp != 0) {
    mantissa = (uint64_t(1) << mant_bits) | fmant;
    exponent = int(fexp) - bias - mant_bits;
    mantissa_bit = mant_bits;
    unequal = fexp != 1 && fmant == 0;
  } else {
    mantissa = fmant;
    exponent = 1 - bias - mant_bits;
    mantissa_bit = mantissa ? log2_floor(mantissa) : 0;
    unequal = false;
  }
  return opt.scientific
             ? format_scientific(mantissa, exponent, signbit, mantissa_bit, unequal, opt)
             : format_positional(mantissa, exponent, signbit, mantissa_bit, unequal, opt);
}

}  // namespace jx::detail
