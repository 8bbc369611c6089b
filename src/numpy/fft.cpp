// jnp.fft, following jax/_src/numpy/fft.py: `core` moves the transformed axes to the end,
// crops / zero-pads them to the requested lengths, binds lax::fft (in groups of at most 3
// axes), scales for `norm`, and moves the axes back. Only static shapes are involved, so
// everything here traces under jit and vmap, and differentiates through lax::fft's rules.
#include "jx/numpy/fft.h"

#include <algorithm>
#include <cmath>

#include "jx/lax.h"
#include "jx/lax/fft.h"
#include "jx/numpy.h"
#include "ops/common.h"
#include "support/str.h"

namespace jx::numpy::fft {

namespace {

using lax::FftType;

std::string t_str(const Array& a) { return type_str(a.dtype(), a.shape()); }

bool is_inverse(FftType t) { return t == FftType::IFFT || t == FftType::IRFFT; }

// How the caller spelled its arguments, so that messages use its names ("n" or "s").
struct Call {
  const char* name;  // "fft", "rfft2", ...
  bool one_axis;     // n / axis rather than s / axes
};

enum class Norm { Backward, Ortho, Forward };

Norm parse_norm(const Call& c, const std::string& norm) {
  if (norm == "backward") return Norm::Backward;
  if (norm == "ortho") return Norm::Ortho;
  if (norm == "forward") return Norm::Forward;
  throw ValueError(str("[fft.", c.name, "] invalid norm \"", norm,
                       "\"; use \"backward\" (the default), \"ortho\" or \"forward\""));
}

// hfft / ihfft are irfft / rfft of the conjugate with the direction of the scaling swapped
// (NumPy's _swap_direction).
std::string swapped(Norm n) {
  return n == Norm::Backward ? "forward" : n == Norm::Forward ? "backward" : "ortho";
}

// lax.fft's input conversion: RFFT takes a real array (computed in float32 unless float64),
// the other three a complex one (float64 -> complex128, other reals -> complex64).
Array convert_input(const Call& c, FftType type, const Array& a) {
  const DType t = a.dtype();
  if (type == FftType::RFFT) {
    if (is_complex(t)) {
      // rfft -> fft, rfft2 -> fft2, rfftn -> fftn, ihfft -> ifft
      const std::string name = c.name;
      const std::string alt = name == "ihfft" ? "ifft" : name.substr(1);
      throw DTypeError(str("[fft.", name, "] needs a real input, got ", t_str(a),
                           "; use jnp::fft::", alt, " for complex data, or pass jnp::real(x)"));
    }
    const DType r = t == DType::Float64 ? DType::Float64 : DType::Float32;
    return t == r ? a : lax::convert_element_type(a, r);
  }
  if (is_complex(t)) return a;
  return lax::convert_element_type(a, t == DType::Float64 ? DType::Complex128 : DType::Complex64);
}

std::string lengths_str(const Call& c, const std::vector<int64_t>& s) {
  return c.one_axis ? str("n = ", s[0]) : str("s = ", list_str(s));
}

// Canonical axes; out of range is an IndexError (as everywhere in jnp), a repeated axis a
// ValueError (as JAX's fft).
std::vector<int64_t> check_axes(const Call& c, const std::vector<int64_t>& axes, int64_t ndim) {
  const std::string op = str("fft.", c.name);
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    const int64_t k = ops::canonical_axis(op.c_str(), a, ndim);
    if (std::find(out.begin(), out.end(), k) != out.end())
      throw ValueError(str("[", op, "] axes ", list_str(axes), " name axis ", k,
                           " twice; each axis can be transformed once (apply the function ",
                           "again to transform it twice)"));
    out.push_back(k);
  }
  return out;
}

Array transpose_if_needed(const Array& x, const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != int64_t(i)) return lax::transpose(x, perm);
  return x;
}

// The permutation that moves `axes` (canonical, in this order) to the last positions, and
// its inverse.
std::vector<int64_t> to_end_perm(int64_t ndim, const std::vector<int64_t>& axes) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < ndim; ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) perm.push_back(i);
  perm.insert(perm.end(), axes.begin(), axes.end());
  return perm;
}

std::vector<int64_t> inverse_perm(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[size_t(perm[i])] = int64_t(i);
  return inv;
}

// Swaps the block of dims [lo, mid) with [mid, hi): jnp.moveaxis(x, src, dst) of
// _fft_core_nd, where src and dst are adjacent ranges.
Array rotate_dims(const Array& x, int64_t lo, int64_t mid, int64_t hi) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < x.ndim(); ++i) perm.push_back(i);
  std::rotate(perm.begin() + lo, perm.begin() + mid, perm.begin() + hi);
  return transpose_if_needed(x, perm);
}

// _fft_core_nd: lax::fft transforms at most 3 trailing dims, so longer `s` are done in
// groups: the last 3 (2 + 2 for four axes), then the rest as a complex FFT / IFFT with the
// done dims moved out of the way. The real transform is always the one on the last group.
Array core_nd(const Array& x, FftType type, const std::vector<int64_t>& s) {
  if (s.size() <= 3) return lax::fft(x, type, s);
  const int64_t k = int64_t(s.size()), g = k == 4 ? 2 : 3, nd = x.ndim();
  const std::vector<int64_t> last(s.end() - g, s.end()), rest(s.begin(), s.end() - g);
  // [.., rest, last] <-> [.., last, rest]
  const int64_t lo = nd - k;
  if (type == FftType::FFT || type == FftType::RFFT) {
    Array y = lax::fft(x, type, last);
    y = rotate_dims(y, lo, lo + (k - g), nd);
    y = core_nd(y, FftType::FFT, rest);
    return rotate_dims(y, lo, lo + g, nd);
  }
  Array y = rotate_dims(x, lo, lo + (k - g), nd);
  y = core_nd(y, FftType::IFFT, rest);
  y = rotate_dims(y, lo, lo + g, nd);
  return lax::fft(y, type, last);
}

// _fft_core. `axes` absent: the last len(s) axes if s is given, else all of them.
Array core(const Call& c, FftType type, const Array& a0, const OptionalShape& s_in,
           const std::optional<std::vector<int64_t>>& axes_in, const std::string& norm_str) {
  const Norm norm = parse_norm(c, norm_str);
  Array x = convert_input(c, type, a0);
  const int64_t nd = x.ndim();
  std::optional<std::vector<int64_t>> s;
  if (s_in) s = std::vector<int64_t>(s_in->begin(), s_in->end());
  if (s) {
    for (int64_t v : *s)
      if (v < 1)
        throw ValueError(str("[fft.", c.name, "] ", lengths_str(c, *s),
                             ": every transform length must be at least 1"));
    if (axes_in && s->size() != axes_in->size())
      throw ValueError(str("[fft.", c.name, "] s = ", list_str(*s), " has ", s->size(),
                           " lengths but axes = ", list_str(*axes_in), " has ", axes_in->size(),
                           " axes; give one length per axis"));
    if (!axes_in && int64_t(s->size()) > nd)
      throw ValueError(str("[fft.", c.name, "] s = ", list_str(*s), " has ", s->size(),
                           " lengths but the input ", t_str(a0), " has only ", nd, " dims"));
  }
  std::vector<int64_t> axes;
  if (axes_in) {
    axes = check_axes(c, *axes_in, nd);
  } else {
    for (int64_t i = nd - (s ? int64_t(s->size()) : nd); i < nd; ++i) axes.push_back(i);
  }
  if (axes.empty())
    throw ValueError(str("[fft.", c.name, "] has no axis to transform (input ", t_str(a0),
                         "); pass axes, or an array with at least one dim"));
  const size_t k = axes.size();
  const std::vector<int64_t> perm = to_end_perm(nd, axes);
  x = transpose_if_needed(x, perm);
  Shape shape = x.shape();
  std::vector<int64_t> lengths;
  if (s) {
    lengths = *s;
    // Crop, then zero-pad, the trailing dims to the transform's input sizes.
    Shape want = shape;
    for (size_t i = 0; i < k; ++i) want[size_t(nd) - k + i] = lengths[i];
    if (type == FftType::IRFFT) want[size_t(nd) - 1] = lengths.back() / 2 + 1;
    std::vector<int64_t> start(size_t(nd), 0), limit(shape.begin(), shape.end());
    std::vector<lax::PadConfig> pads(static_cast<size_t>(nd));
    bool crop = false, pad = false;
    for (size_t d = 0; d < size_t(nd); ++d) {
      if (want[d] < shape[d]) limit[d] = want[d], crop = true;
      if (want[d] > shape[d]) pads[d].hi = want[d] - shape[d], pad = true;
    }
    if (crop) x = lax::slice(x, start, limit);
    if (pad) x = lax::pad(x, numpy::zeros(Shape{}, x.dtype()), pads);
  } else {
    for (size_t i = 0; i < k; ++i) lengths.push_back(shape[size_t(nd) - k + i]);
    if (type == FftType::IRFFT) {
      const int64_t m = lengths.back();
      lengths.back() = std::max<int64_t>(0, 2 * (m - 1));
      if (lengths.back() < 1)
        throw ValueError(str("[fft.", c.name, "] the default output length 2 * (m - 1) is ",
                             lengths.back(), " for an input axis of size m = ", m, "; pass ",
                             c.one_axis ? "n" : "s", " to choose the output length"));
    }
    for (size_t i = 0; i < k; ++i)
      if (lengths[i] < 1)
        throw ValueError(str("[fft.", c.name, "] axis ", axes[i], " of the input ", t_str(a0),
                             " is empty: a transform needs at least one point; pass ",
                             c.one_axis ? "n" : "s", " to zero-pad it"));
  }
  Array y = core_nd(x, type, lengths);
  if (norm != Norm::Backward) {
    double count = 1;
    for (int64_t v : lengths) count *= double(v);
    const double f = norm == Norm::Ortho ? std::sqrt(count) : count;
    // The inverse transforms already divide by N; the scale moves that factor.
    const double scale = is_inverse(type) ? f : 1.0 / f;
    y = numpy::multiply(y, numpy::scalar(scale, y.dtype()));
  }
  return transpose_if_needed(y, inverse_perm(perm));
}

Array core_1d(const Call& c, FftType type, const Array& a, std::optional<int64_t> n, int64_t axis,
              const std::string& norm) {
  OptionalShape s;
  if (n) s = Shape{*n};
  return core(c, type, a, s, std::vector<int64_t>{axis}, norm);
}

Array core_2d(const Call& c, FftType type, const Array& a, const OptionalShape& s,
              const std::vector<int64_t>& axes, const std::string& norm) {
  if (axes.size() != 2)
    throw ValueError(str("[fft.", c.name, "] takes exactly 2 axes, got axes = ", list_str(axes),
                         "; use ", std::string(c.name).substr(0, std::string(c.name).size() - 1),
                         "n for other numbers of axes"));
  return core(c, type, a, s, axes, norm);
}

}  // namespace

Array fft(const Array& a, std::optional<int64_t> n, int64_t axis, const std::string& norm) {
  return core_1d({"fft", true}, FftType::FFT, a, n, axis, norm);
}
Array ifft(const Array& a, std::optional<int64_t> n, int64_t axis, const std::string& norm) {
  return core_1d({"ifft", true}, FftType::IFFT, a, n, axis, norm);
}
Array rfft(const Array& a, std::optional<int64_t> n, int64_t axis, const std::string& norm) {
  return core_1d({"rfft", true}, FftType::RFFT, a, n, axis, norm);
}
Array irfft(const Array& a, std::optional<int64_t> n, int64_t axis, const std::string& norm) {
  return core_1d({"irfft", true}, FftType::IRFFT, a, n, axis, norm);
}

Array hfft(const Array& a, std::optional<int64_t> n, int64_t axis, const std::string& norm) {
  const Call c{"hfft", true};
  return core_1d(c, FftType::IRFFT, numpy::conj(a), n, axis, swapped(parse_norm(c, norm)));
}
Array ihfft(const Array& a, std::optional<int64_t> n, int64_t axis, const std::string& norm) {
  const Call c{"ihfft", true};
  return numpy::conj(core_1d(c, FftType::RFFT, a, n, axis, swapped(parse_norm(c, norm))));
}

Array fft2(const Array& a, OptionalShape s, const std::vector<int64_t>& axes,
           const std::string& norm) {
  return core_2d({"fft2", false}, FftType::FFT, a, s, axes, norm);
}
Array ifft2(const Array& a, OptionalShape s, const std::vector<int64_t>& axes,
            const std::string& norm) {
  return core_2d({"ifft2", false}, FftType::IFFT, a, s, axes, norm);
}
Array rfft2(const Array& a, OptionalShape s, const std::vector<int64_t>& axes,
            const std::string& norm) {
  return core_2d({"rfft2", false}, FftType::RFFT, a, s, axes, norm);
}
Array irfft2(const Array& a, OptionalShape s, const std::vector<int64_t>& axes,
             const std::string& norm) {
  return core_2d({"irfft2", false}, FftType::IRFFT, a, s, axes, norm);
}

Array fftn(const Array& a, OptionalShape s, Axes axes, const std::string& norm) {
  return core({"fftn", false}, FftType::FFT, a, s, axes.axes, norm);
}
Array ifftn(const Array& a, OptionalShape s, Axes axes, const std::string& norm) {
  return core({"ifftn", false}, FftType::IFFT, a, s, axes.axes, norm);
}
Array rfftn(const Array& a, OptionalShape s, Axes axes, const std::string& norm) {
  return core({"rfftn", false}, FftType::RFFT, a, s, axes.axes, norm);
}
Array irfftn(const Array& a, OptionalShape s, Axes axes, const std::string& norm) {
  return core({"irfftn", false}, FftType::IRFFT, a, s, axes.axes, norm);
}

namespace {

// n = 0 divides by zero: NumPy raises, JAX returns an empty array (fftfreq) or [nan]
// (rfftfreq); an error says more.
void check_freq_n(const char* name, int64_t n) {
  if (n < 1)
    throw ValueError(
        str("[fft.", name, "] n = ", n, " is not a transform length; it must be at least 1"));
}

// k / (d n) with k built in `dtype` and d n rounded once to it, as JAX (NumPy multiplies by
// 1 / (d n) instead, which can differ in the last bit). A complex dtype counts in its real
// part (lax::iota is real only).
Array freq(int64_t n, double d, std::optional<DType> dtype, int64_t lo, int64_t hi) {
  const DType t = dtype.value_or(DType::Float32);
  const DType r = is_complex(t) ? real_dtype(t) : t;
  Array k = numpy::arange(int64_t(0), hi, 1, r);
  if (lo < 0) k = numpy::concatenate({k, numpy::arange(lo, int64_t(0), 1, r)});
  if (r != t) k = k.astype(t);
  return numpy::true_divide(k, numpy::scalar(d * double(n), t));
}

}  // namespace

Array fftfreq(int64_t n, double d, std::optional<DType> dtype) {
  check_freq_n("fftfreq", n);
  // [0, 1, ..., (n - 1) / 2, -(n / 2), ..., -1]
  return freq(n, d, dtype, -(n / 2), (n - 1) / 2 + 1);
}

Array rfftfreq(int64_t n, double d, std::optional<DType> dtype) {
  check_freq_n("rfftfreq", n);
  return freq(n, d, dtype, 0, n / 2 + 1);
}

namespace {

Array shift(const char* name, const Array& x, const Axes& axes, bool inverse) {
  std::vector<int64_t> ax;
  if (axes.axes) {
    ax = *axes.axes;
  } else {
    for (int64_t i = 0; i < x.ndim(); ++i) ax.push_back(i);
  }
  if (ax.empty()) return x;
  std::vector<int64_t> shifts;
  for (int64_t a : ax) {
    const int64_t half = x.shape()[size_t(ops::canonical_axis(name, a, x.ndim()))] / 2;
    shifts.push_back(inverse ? -half : half);
  }
  return numpy::roll(x, shifts, ax);
}

}  // namespace

Array fftshift(const Array& x, Axes axes) { return shift("fft.fftshift", x, axes, false); }
Array ifftshift(const Array& x, Axes axes) { return shift("fft.ifftshift", x, axes, true); }

}  // namespace jx::numpy::fft
