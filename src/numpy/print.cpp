// Printing a jx::Array exactly as Python prints a jax.Array: repr() is jax/_src/array.py's
// __repr__ over NumPy's array2string, str() is NumPy's array_str. The structure follows
// numpy/core/arrayprint.py (1.24) closely so that any output difference is easy to trace:
// FloatingFormat / IntegerFormat / BoolFormat (and ComplexFloatingFormat, a FloatingFormat per
// part) pick one width for all printed elements, and _formatArray wraps lines and nests
// brackets. bfloat16 is not a NumPy floating type, so NumPy prints its elements with the
// scalar's repr (ml_dtypes: C++ `ostream << float`), unpadded.
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>
#include <ostream>
#include <sstream>

#include "core/array_impl.h"
#include "jx/numpy/io.h"
#include "numpy/io_dragon4.h"
#include "support/dtype_switch.h"
#include "support/str.h"

namespace jx {

namespace numpy {

namespace {

using detail::Dragon4Options;
using detail::Trim;

std::mutex g_options_mu;
PrintOptions g_options;

void validate(const PrintOptions& o) {
  if (o.precision < 0)
    throw ValueError(str("[set_printoptions] precision must be >= 0, got ", o.precision));
  if (o.threshold < 0)
    throw ValueError(str("[set_printoptions] threshold must be >= 0, got ", o.threshold));
  if (o.edgeitems < 0)
    throw ValueError(str("[set_printoptions] edgeitems must be >= 0, got ", o.edgeitems));
  if (o.linewidth < 1)
    throw ValueError(str("[set_printoptions] linewidth must be >= 1, got ", o.linewidth));
  if (o.sign != '-' && o.sign != '+' && o.sign != ' ')
    throw ValueError(
        str("[set_printoptions] sign must be one of '-', '+', ' ', got '", o.sign, "'"));
  if (o.floatmode != "maxprec" && o.floatmode != "fixed" && o.floatmode != "unique" &&
      o.floatmode != "maxprec_equal")
    throw ValueError(
        str("[set_printoptions] floatmode must be one of \"maxprec\", \"fixed\", "
            "\"unique\", \"maxprec_equal\", got \"",
            o.floatmode, "\""));
}

bool is_float_dtype(DType t) {
  return t == DType::Float16 || t == DType::Float32 || t == DType::Float64;
}
int float_width(DType t) { return t == DType::Float16 ? 16 : t == DType::Float32 ? 32 : 64; }

// The raw bits of element i of a float16/32/64 buffer.
uint64_t float_bits(const void* data, DType t, int64_t i) {
  if (t == DType::Float16) return static_cast<const uint16_t*>(data)[i];
  if (t == DType::Float32) {
    uint32_t u;
    std::memcpy(&u, static_cast<const char*>(data) + 4 * i, 4);
    return u;
  }
  uint64_t u;
  std::memcpy(&u, static_cast<const char*>(data) + 8 * i, 8);
  return u;
}

double as_double(const void* data, DType t, int64_t i) {
  double r = 0;
  JX_DTYPE_SWITCH(t, T, {
    const T v = static_cast<const T*>(data)[i];
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bhalf>)
      r = double(float(v));
    else
      r = double(v);
  });
  return r;
}

// max/min in the array's own float type, as NumPy divides two scalars of that type.
double ratio_in_dtype(double a, double b, DType t) {
  if (t == DType::Float64) return a / b;
  float q = float(a) / float(b);
  if (t == DType::Float16) q = float(half(q));
  return q;
}

// bfloat16 elements: ml_dtypes' scalar repr (`std::ostream << float`, NaN without sign).
std::string bfloat16_str(float f) {
  std::ostringstream os;
  os << (std::isnan(f) ? std::fabs(f) : f);
  return os.str();
}

std::string int_str(const void* data, DType t, int64_t i) {
  std::string r;
  JX_DTYPE_SWITCH(t, T, {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if constexpr (std::is_signed_v<T>)
        r = std::to_string(int64_t(static_cast<const T*>(data)[i]));
      else
        r = std::to_string(uint64_t(static_cast<const T*>(data)[i]));
    }
  });
  return r;
}

// NumPy's FloatingFormat: one layout (positional or scientific, paddings, digits) chosen from
// all printed values, then applied to each. Element i is the float at index i * step + part of
// `data`: step 2 and part 0 / 1 read the real / imaginary parts of a complex buffer, as
// NumPy's ComplexFloatingFormat formats x.real and x.imag each with its own FloatingFormat.
class FloatingFormat {
 public:
  FloatingFormat(const void* data, DType t, const std::vector<int64_t>& shown,
                 const PrintOptions& o, int step = 1, int part = 0)
      : FloatingFormat(data, t, shown, o, o.sign, step, part) {}
  FloatingFormat(const void* data, DType t, const std::vector<int64_t>& shown,
                 const PrintOptions& o, char sign, int step, int part)
      : data_(data), dtype_(t), width_(float_width(t)), opts_(o), sign_(sign), step_(step),
        part_(part) {
    floatmode_ = o.floatmode;
    precision_ = floatmode_ == "unique" ? -1 : o.precision;
    fill(shown);
  }

  std::string operator()(int64_t i) const {
    double x = value(i);
    if (!std::isfinite(x)) {
      std::string ret;
      if (std::isnan(x))
        ret = (sign_ == '+' ? "+" : "") + opts_.nanstr;
      else
        ret = (x < 0 ? "-" : sign_ == '+' ? "+" : "") + opts_.infstr;
      int pad = pad_left_ + pad_right_ + 1 - int(ret.size());
      return std::string(size_t(std::max(pad, 0)), ' ') + ret;
    }
    Dragon4Options d;
    d.scientific = exp_format_;
    d.precision = precision_;
    d.min_digits = min_digits_;
    d.unique = unique_;
    d.fractional = true;
    d.trim = trim_;
    d.sign = sign_ == '+';
    d.digits_left = pad_left_;
    if (exp_format_)
      d.exp_digits = exp_size_;
    else
      d.digits_right = pad_right_;
    return detail::dragon4(bits(i), width_, d);
  }

 private:
  double value(int64_t i) const { return as_double(data_, dtype_, i * step_ + part_); }
  uint64_t bits(int64_t i) const { return float_bits(data_, dtype_, i * step_ + part_); }

  void fill(const std::vector<int64_t>& shown) {
    std::vector<int64_t> finite;
    bool any_nonfinite = false, neg_inf = false, any_signbit = false;
    double max_val = 0, min_val = 0;
    bool have_nonzero = false;
    for (int64_t i : shown) {
      double v = value(i);
      if (!std::isfinite(v)) {
        any_nonfinite = true;
        if (std::isinf(v) && v < 0) neg_inf = true;
        continue;
      }
      finite.push_back(i);
      if (std::signbit(v)) any_signbit = true;
      if (v != 0) {
        double a = std::fabs(v);
        if (!have_nonzero) max_val = min_val = a;
        max_val = std::max(max_val, a);
        min_val = std::min(min_val, a);
        have_nonzero = true;
      }
    }
    if (have_nonzero) {
      if (max_val >= 1.e8 ||
          (!opts_.suppress &&
           (min_val < 0.0001 || ratio_in_dtype(max_val, min_val, dtype_) > 1000.)))
        exp_format_ = true;
    }
    const bool sign_plus = sign_ == '+';
    if (finite.empty()) {
      pad_left_ = 0;
      pad_right_ = 0;
      trim_ = Trim::zeros;
      exp_size_ = -1;
      unique_ = true;
      min_digits_ = -1;
    } else if (exp_format_) {
      bool unique = true;
      Trim trim = Trim::zeros;
      if (floatmode_ == "fixed") {
        trim = Trim::none;
        unique = false;
      }
      Dragon4Options d;
      d.scientific = true;
      d.precision = precision_;
      d.unique = unique;
      d.trim = trim;
      d.sign = sign_plus;
      size_t max_frac = 0, max_exp = 0, max_int = 0;
      for (int64_t i : finite) {
        std::string s = detail::dragon4(bits(i), width_, d);
        size_t e = s.find('e');
        std::string mant = s.substr(0, e), ex = s.substr(e + 1);
        size_t dot = mant.find('.');
        max_int = std::max(max_int, dot);
        max_frac = std::max(max_frac, mant.size() - dot - 1);
        max_exp = std::max(max_exp, ex.size());
      }
      exp_size_ = int(max_exp) - 1;
      trim_ = Trim::none;
      precision_ = int(max_frac);
      min_digits_ = precision_;
      unique_ = unique;
      pad_left_ = int(max_int);
      pad_right_ = exp_size_ + 2 + precision_;
    } else {
      bool unique = true;
      Trim trim = Trim::zeros;
      if (floatmode_ == "fixed") {
        trim = Trim::none;
        unique = false;
      }
      Dragon4Options d;
      d.precision = precision_;
      d.fractional = true;
      d.unique = unique;
      d.trim = trim;
      d.sign = sign_plus;
      size_t max_int = 0, max_frac = 0;
      for (int64_t i : finite) {
        std::string s = detail::dragon4(bits(i), width_, d);
        size_t dot = s.find('.');
        max_int = std::max(max_int, dot);
        max_frac = std::max(max_frac, s.size() - dot - 1);
      }
      pad_left_ = int(max_int);
      pad_right_ = int(max_frac);
      exp_size_ = -1;
      unique_ = unique;
      if (floatmode_ == "fixed" || floatmode_ == "maxprec_equal") {
        precision_ = min_digits_ = pad_right_;
        trim_ = Trim::none;
      } else {
        trim_ = Trim::zeros;
        min_digits_ = 0;
      }
    }
    if (sign_ == ' ' && !any_signbit) pad_left_ += 1;
    if (any_nonfinite) {
      int neginf = (sign_ != '-' || neg_inf) ? 1 : 0;
      int nanlen = int(opts_.nanstr.size());
      int inflen = int(opts_.infstr.size()) + neginf;
      int offset = pad_right_ + 1;
      pad_left_ = std::max({pad_left_, nanlen - offset, inflen - offset});
    }
  }

  const void* data_;
  DType dtype_;
  int width_;
  PrintOptions opts_;
  char sign_;
  int step_, part_;
  std::string floatmode_;
  int precision_ = -1, min_digits_ = -1, pad_left_ = 0, pad_right_ = 0, exp_size_ = -1;
  bool exp_format_ = false, unique_ = true;
  Trim trim_ = Trim::zeros;
};

using ElementFormatter = std::function<std::string(int64_t)>;

ElementFormatter make_formatter(const Array& a, const std::vector<int64_t>& shown,
                                const PrintOptions& o) {
  const void* data = detail::raw_data(a);
  DType t = a.dtype();
  if (t == DType::Bool) {
    const bool* b = static_cast<const bool*>(data);
    std::string truestr = a.ndim() != 0 ? " True" : "True";
    return [b, truestr](int64_t i) { return b[i] ? truestr : std::string("False"); };
  }
  if (is_integer(t)) {
    size_t width = 0;
    for (int64_t i : shown) width = std::max(width, int_str(data, t, i).size());
    return [data, t, width](int64_t i) {
      std::string s = int_str(data, t, i);
      if (s.size() < width) s.insert(0, width - s.size(), ' ');
      return s;
    };
  }
  if (t == DType::BFloat16) {
    const bhalf* p = static_cast<const bhalf*>(data);
    return [p](int64_t i) { return bfloat16_str(float(p[i])); };
  }
  if (is_complex(t)) {
    // NumPy's ComplexFloatingFormat: the imaginary part always carries its sign, and its 'j'
    // goes before the padding, so that "1.+2.j " lines up with "3.-4.5j".
    DType part = real_dtype(t);
    auto re = std::make_shared<FloatingFormat>(data, part, shown, o, 2, 0);
    auto im = std::make_shared<FloatingFormat>(data, part, shown, o, '+', 2, 1);
    return [re, im](int64_t i) {
      std::string is = (*im)(i);
      std::string::size_type end = is.find_last_not_of(' ') + 1;
      std::string out = (*re)(i);
      out.append(is, 0, end).push_back('j');
      out.append(is, end, std::string::npos);
      return out;
    };
  }
  auto ff = std::make_shared<FloatingFormat>(data, t, shown, o);
  return [ff](int64_t i) { return (*ff)(i); };
}

// NumPy's _leading_trailing: the flat indices of the corners a summarized print shows.
void collect_shown(const Shape& shape, const std::vector<int64_t>& strides, size_t axis,
                   int64_t base, int64_t edge, bool summarize, std::vector<int64_t>& out) {
  if (axis == shape.size()) {
    out.push_back(base);
    return;
  }
  int64_t n = shape[axis];
  auto visit = [&](int64_t k) {
    collect_shown(shape, strides, axis + 1, base + k * strides[axis], edge, summarize, out);
  };
  if (summarize && n > 2 * edge) {
    for (int64_t k = 0; k < edge; ++k) visit(k);
    // NumPy takes a[-edge:], which for edge 0 is the whole axis.
    for (int64_t k = edge ? n - edge : 0; k < n; ++k) visit(k);
  } else {
    for (int64_t k = 0; k < n; ++k) visit(k);
  }
}

std::string rstrip(const std::string& s) {
  size_t e = s.find_last_not_of(" \t\n\r\f\v");
  return e == std::string::npos ? std::string() : s.substr(0, e + 1);
}

// NumPy's _formatArray (legacy=False).
class ArrayFormatter {
 public:
  ArrayFormatter(const Shape& shape, ElementFormatter fmt, std::string separator, int64_t edge,
                 bool summarize)
      : shape_(shape),
        fmt_(std::move(fmt)),
        sep_(std::move(separator)),
        edge_(edge),
        summarize_(summarize) {
    strides_.assign(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) strides_[i - 1] = strides_[i] * shape[i];
  }

  std::string format(const std::string& next_line_prefix, int64_t line_width) {
    return recurse(0, 0, next_line_prefix, line_width);
  }

 private:
  static void extend_line(std::string& s, std::string& line, const std::string& word,
                          int64_t line_width, const std::string& next_line_prefix) {
    bool needs_wrap = int64_t(line.size() + word.size()) > line_width;
    if (line.size() <= next_line_prefix.size()) needs_wrap = false;  // wrapping would not help
    if (needs_wrap) {
      s += rstrip(line) + "\n";
      line = next_line_prefix;
    }
    line += word;
  }

  std::string recurse(size_t axis, int64_t base, const std::string& hanging_indent,
                      int64_t curr_width) {
    size_t axes_left = shape_.size() - axis;
    if (axes_left == 0) return fmt_(base);
    std::string next_hanging_indent = hanging_indent + " ";
    int64_t next_width = curr_width - 1;  // len(']')
    int64_t a_len = shape_[axis];
    bool show_summary = summarize_ && 2 * edge_ < a_len;
    int64_t leading = show_summary ? edge_ : 0;
    int64_t trailing = show_summary ? edge_ : a_len;
    auto child = [&](int64_t k) {
      return recurse(axis + 1, base + k * strides_[axis], next_hanging_indent, next_width);
    };
    std::string s;
    if (axes_left == 1) {
      std::string sep_r = rstrip(sep_);
      int64_t elem_width = curr_width - int64_t(std::max<size_t>(sep_r.size(), 1));
      std::string line = hanging_indent;
      for (int64_t i = 0; i < leading; ++i) {
        extend_line(s, line, child(i), elem_width, hanging_indent);
        line += sep_;
      }
      if (show_summary) {
        extend_line(s, line, "...", elem_width, hanging_indent);
        line += sep_;
      }
      for (int64_t i = trailing; i > 1; --i) {
        extend_line(s, line, child(a_len - i), elem_width, hanging_indent);
        line += sep_;
      }
      extend_line(s, line, child(a_len - 1), elem_width, hanging_indent);
      s += line;
    } else {
      std::string line_sep = rstrip(sep_) + std::string(axes_left - 1, '\n');
      for (int64_t i = 0; i < leading; ++i) s += hanging_indent + child(i) + line_sep;
      if (show_summary) s += hanging_indent + "..." + line_sep;
      for (int64_t i = trailing; i > 1; --i) s += hanging_indent + child(a_len - i) + line_sep;
      s += hanging_indent + child(a_len - 1);
    }
    std::string r;
    r.reserve(s.size() + 2);
    r.push_back('[');
    r.append(s, hanging_indent.size(), std::string::npos);
    r.push_back(']');
    return r;
  }

  Shape shape_;
  ElementFormatter fmt_;
  std::string sep_;
  int64_t edge_;
  bool summarize_;
  std::vector<int64_t> strides_;
};

// One part of a complex scalar, as NumPy's str of a complex scalar formats it (its
// `_either` in scalartypes.c): positional unless tiny or huge, trailing zeros and point
// trimmed, "+" shown when `sign`.
std::string complex_part_str(const void* data, DType part, int index, bool sign) {
  double v = as_double(data, part, index);
  if (std::isnan(v)) return sign ? "+nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : sign ? "+inf" : "inf";
  double av = std::fabs(v);
  Dragon4Options d;
  d.scientific = !(av == 0 || (1.e-4 <= av && av < 1.e16));
  d.trim = Trim::dpt_zeros;
  d.sign = sign;
  return detail::dragon4(float_bits(data, part, index), float_width(part), d);
}

// str() of a complex scalar: "(1+2j)", or "2j" when the real part is +0.
std::string complex_scalar_str(const void* data, DType t) {
  DType part = real_dtype(t);
  double re = as_double(data, part, 0);
  if (re == 0 && !std::signbit(re)) return complex_part_str(data, part, 1, false) + "j";
  std::string out(1, '(');
  out += complex_part_str(data, part, 0, false);
  out += complex_part_str(data, part, 1, true);
  out += "j)";
  return out;
}

// The str() of one element, as NumPy prints a scalar (0-d arrays print this way).
std::string scalar_str(const Array& a) {
  const void* data = detail::raw_data(a);
  DType t = a.dtype();
  if (is_complex(t)) return complex_scalar_str(data, t);
  if (t == DType::Bool) return *static_cast<const bool*>(data) ? "True" : "False";
  if (is_integer(t)) return int_str(data, t, 0);
  if (t == DType::BFloat16) return bfloat16_str(float(*static_cast<const bhalf*>(data)));
  double v = as_double(data, t, 0);
  double av = std::fabs(v);
  Dragon4Options d;
  if (av == 0 || (1.e-4 <= av && av < 1.e16)) {
    d.trim = Trim::one_zero;
  } else {
    d.scientific = true;
    d.trim = Trim::dpt_zeros;
  }
  return detail::dragon4(float_bits(data, t, 0), float_width(t), d);
}

const char* check_printable(const Array& a) {
  if (!a.valid()) return "<invalid jx::Array>";
  return nullptr;
}

// A tracer has no values to show: print its abstract value, as JAX does.
std::string traced_str(const Array& a) {
  std::ostringstream os;
  os << "Traced<ShapedArray(" << dtype_name(a.dtype()) << "[";
  for (size_t i = 0; i < a.shape().size(); ++i) os << (i ? "," : "") << a.shape()[i];
  os << "]" << (a.weak_type() ? ", weak_type=True" : "") << ")>";
  return os.str();
}

}  // namespace

void set_printoptions(const PrintOptions& opts) {
  validate(opts);
  std::lock_guard<std::mutex> lock(g_options_mu);
  g_options = opts;
}

PrintOptions get_printoptions() {
  std::lock_guard<std::mutex> lock(g_options_mu);
  return g_options;
}

printoptions::printoptions(const PrintOptions& opts) : saved_(get_printoptions()) {
  set_printoptions(opts);
}
printoptions::~printoptions() { set_printoptions(saved_); }

std::string array2string(const Array& a, const std::string& separator, const std::string& prefix,
                         const std::string& suffix, std::optional<PrintOptions> opts) {
  if (const char* bad = check_printable(a)) return bad;
  if (!a.is_concrete()) return traced_str(a);
  PrintOptions o = opts ? *opts : get_printoptions();
  if (opts) validate(o);
  int64_t line_width = int64_t(o.linewidth) - int64_t(suffix.size());
  if (a.size() == 0) return "[]";
  bool summarize = a.size() > o.threshold;
  std::vector<int64_t> strides(size_t(a.ndim()), 1);
  for (size_t i = strides.size(); i-- > 1;) strides[i - 1] = strides[i] * a.shape()[i];
  std::vector<int64_t> shown;
  collect_shown(a.shape(), strides, 0, 0, o.edgeitems, summarize, shown);
  ArrayFormatter f(a.shape(), make_formatter(a, shown, o), separator, o.edgeitems, summarize);
  return f.format(std::string(prefix.size() + 1, ' '), line_width);
}

std::string array_repr(const Array& a) {
  if (const char* bad = check_printable(a)) return bad;
  if (!a.is_concrete()) return traced_str(a);
  const std::string prefix = "Array(";
  std::string dtype_str =
      str("dtype=", dtype_name(a.dtype()), a.weak_type() ? ", weak_type=True" : "", ")");
  int64_t line_width = get_printoptions().linewidth;
  std::string s =
      a.size() == 0 ? "[], shape=" + shape_str(a.shape()) : array2string(a, ", ", prefix, ",");
  size_t nl = s.rfind('\n');
  int64_t last_line_len = int64_t(s.size()) - (nl == std::string::npos ? -1 : int64_t(nl)) + 1;
  // JAX pads with spaces (no newline) when the dtype does not fit on the last line.
  std::string sep = last_line_len + int64_t(dtype_str.size()) + 1 > line_width
                        ? std::string(prefix.size(), ' ')
                        : " ";
  return prefix + s + "," + sep + dtype_str;
}

std::string array_str(const Array& a) {
  if (const char* bad = check_printable(a)) return bad;
  if (!a.is_concrete()) return traced_str(a);
  if (a.ndim() == 0) return scalar_str(a);
  return array2string(a, " ", "", "");
}

std::string format_float_positional(const Array& x, int precision, bool unique, bool fractional,
                                    char trim, bool sign, int pad_left, int pad_right,
                                    int min_digits) {
  if (!x.valid() || !x.is_concrete() || x.size() != 1 || !is_float_dtype(x.dtype()))
    throw ValueError(
        str("[format_float_positional] needs one concrete float16/float32/float64 "
            "value, got ",
            x.valid() ? type_str(x.dtype(), x.shape()) : "an invalid array"));
  if (!unique && precision < 0)
    throw ValueError("[format_float_positional] precision must be given when unique=false");
  if (!fractional && precision == 0)
    throw ValueError(
        "[format_float_positional] precision must be greater than 0 if fractional=false");
  if (min_digits > 0 && precision > 0 && min_digits > precision)
    throw ValueError(
        "[format_float_positional] min_digits must be less than or equal to precision");
  Dragon4Options d;
  d.precision = precision;
  d.unique = unique;
  d.fractional = fractional;
  d.trim = detail::trim_from_char(trim);
  d.sign = sign;
  d.digits_left = pad_left;
  d.digits_right = pad_right;
  d.min_digits = min_digits;
  return detail::dragon4(float_bits(detail::raw_data(x), x.dtype(), 0), float_width(x.dtype()), d);
}

std::string format_float_scientific(const Array& x, int precision, bool unique, char trim,
                                    bool sign, int pad_left, int exp_digits, int min_digits) {
  if (!x.valid() || !x.is_concrete() || x.size() != 1 || !is_float_dtype(x.dtype()))
    throw ValueError(
        str("[format_float_scientific] needs one concrete float16/float32/float64 "
            "value, got ",
            x.valid() ? type_str(x.dtype(), x.shape()) : "an invalid array"));
  if (!unique && precision < 0)
    throw ValueError("[format_float_scientific] precision must be given when unique=false");
  if (min_digits > 0 && precision > 0 && min_digits > precision)
    throw ValueError(
        "[format_float_scientific] min_digits must be less than or equal to precision");
  Dragon4Options d;
  d.scientific = true;
  d.precision = precision;
  d.unique = unique;
  d.trim = detail::trim_from_char(trim);
  d.sign = sign;
  d.digits_left = pad_left;
  d.exp_digits = exp_digits;
  d.min_digits = min_digits;
  return detail::dragon4(float_bits(detail::raw_data(x), x.dtype(), 0), float_width(x.dtype()), d);
}

}  // namespace numpy

std::string Array::repr() const { return numpy::array_repr(*this); }

std::ostream& operator<<(std::ostream& os, const Array& a) { return os << numpy::array_str(a); }

}  // namespace jx
