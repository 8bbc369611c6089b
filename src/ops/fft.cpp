// The fft primitive (jax.lax.fft): one primitive, four transforms (FFT, IFFT, RFFT, IRFFT)
// over the trailing len(fft_lengths) dims, computed by FFTW (backend/cpu/fft). All four are
// linear: the jvp applies the same transform to the tangent, and the transposes are JAX's
// (jax/_src/lax/fft.py): FFT and IFFT are symmetric matrices, so each is its own transpose;
// RFFT transposes through its naive form (FFT of the real signal, cut to n / 2 + 1); IRFFT
// through RFFT with the doubled middle coefficients, conjugated (JAX's convention).
#include <string>

#include "backend/cpu/fft.h"
#include "jx/lax/fft.h"
#include "ops/ad_rules.h"
#include "ops/batching.h"
#include "ops/common.h"
#include "core/array_impl.h"
#include "transforms/bind.h"

namespace jx::ops {
namespace {

using lax::FftType;

FftType type_of(const Params& p) {
  const std::string& s = p.s("fft_type");
  if (s == "FftType.FFT") return FftType::FFT;
  if (s == "FftType.IFFT") return FftType::IFFT;
  if (s == "FftType.RFFT") return FftType::RFFT;
  if (s == "FftType.IRFFT") return FftType::IRFFT;
  throw ValueError(str("[fft] unknown fft_type ", s));
}

Shape tail_of(const Shape& s, size_t k) { return Shape(s.end() - std::ptrdiff_t(k), s.end()); }

std::string lengths_str(const std::vector<int64_t>& v) {
  std::string r = "(";
  for (size_t i = 0; i < v.size(); ++i) r += str(i ? ", " : "", v[i]);
  return r + (v.size() == 1 ? ",)" : ")");
}

Avals fft_abstract_eval(std::span<const Aval> in, const Params& p) {
  const Aval& x = in[0];
  const FftType type = type_of(p);
  const std::vector<int64_t>& n = p.ints("fft_lengths");
  if (n.empty() || n.size() > 3)
    throw ValueError(str("[fft] fft_lengths must have 1 to 3 entries (the transformed trailing "
                         "dims), got ", lengths_str(n), "; transform more axes in several calls"));
  for (int64_t d : n)
    if (d < 0) throw ValueError(str("[fft] fft_lengths must be non-negative, got ", lengths_str(n)));
  if (n.size() > x.shape.size())
    throw ShapeError(str("[fft] the input ", aval_str(x), " has fewer dims than fft_lengths ",
                         lengths_str(n)));
  Shape shape = x.shape;
  const size_t k = n.size(), r = shape.size();
  if (type == FftType::RFFT) {
    if (x.dtype != DType::Float32 && x.dtype != DType::Float64)
      throw DTypeError(str("[fft] RFFT takes float32 or float64, got ", aval_str(x),
                           "; convert with astype, or use FFT for complex input"));
    if (tail_of(x.shape, k) != Shape(n.begin(), n.end()))
      throw ShapeError(str("[fft] RFFT's input ", aval_str(x), " must end in fft_lengths ",
                           lengths_str(n)));
    shape[r - 1] = n.back() / 2 + 1;
    return {{shape, complex_dtype(x.dtype)}};
  }
  if (!is_complex(x.dtype))
    throw DTypeError(str("[fft] ", p.s("fft_type"), " takes complex64 or complex128, got ",
                         aval_str(x), "; convert with astype(jx::complex64), or use RFFT"));
  if (type == FftType::IRFFT) {
    Shape want(n.begin(), n.end());
    want.back() = n.back() / 2 + 1;
    if (tail_of(x.shape, k) != want)
      throw ShapeError(str("[fft] IRFFT's input ", aval_str(x), " must end in ",
                           shape_str(want), " for fft_lengths ", lengths_str(n),
                           " (the last one n / 2 + 1)"));
    shape[r - 1] = n.back();
    return {{shape, real_dtype(x.dtype)}};
  }
  if (tail_of(x.shape, k) != Shape(n.begin(), n.end()))
    throw ShapeError(str("[fft] the input ", aval_str(x), " must end in fft_lengths ",
                         lengths_str(n)));
  return {{shape, x.dtype}};
}

void fft_impl(std::span<const Array> in, std::span<Array> out, const Params& p) {
  const auto& x = detail::impl_of(in[0]);
  const std::vector<int64_t>& n = p.ints("fft_lengths");
  const FftType type = type_of(p);
  const cpu::FftKind kind = type == FftType::FFT    ? cpu::FftKind::Forward
                            : type == FftType::IFFT ? cpu::FftKind::Inverse
                            : type == FftType::RFFT ? cpu::FftKind::RealToComplex
                                                    : cpu::FftKind::ComplexToReal;
  int64_t batch = 1;
  for (size_t d = 0; d + n.size() < x.shape.size(); ++d) batch *= x.shape[d];
  cpu::fft(kind, real_dtype(x.dtype), x.buffer->data(), detail::raw_data(out[0]), batch, n.data(),
           int(n.size()));
}

Array fft_of(const Array& x, FftType t, const std::vector<int64_t>& n) { return lax::fft(x, t, n); }

Arrays fft_jvp(std::span<const Array>, std::span<const Array>, std::span<const Array> tangents,
               const Params& p) {
  if (ad_rules::is_zero(tangents[0])) return {Array()};
  return {fft_of(tangents[0], type_of(p), p.ints("fft_lengths"))};
}

Arrays fft_transpose(std::span<const Array> cts, std::span<const Array>, std::span<const Aval>,
                     std::span<const bool>, const Params& p) {
  if (ad_rules::is_zero(cts[0])) return {Array()};
  const Array& t = cts[0];
  const std::vector<int64_t>& n = p.ints("fft_lengths");
  const FftType type = type_of(p);
  if (type == FftType::FFT || type == FftType::IFFT) return {fft_of(t, type, n)};
  const int last = t.ndim() - 1;
  if (type == FftType::RFFT) {
    // rfft(x) = fft(complex(x))[..., :n/2+1]: pad the cut coefficients back with zeros, apply
    // FFT's transpose (FFT), and take convert's transpose (the real part).
    std::vector<lax::PadConfig> cfg(size_t(t.ndim()));
    cfg[size_t(last)].hi = n.back() - t.shape(last);
    Array full = lax::pad(t, ad_rules::zeros(Aval{Shape{}, t.dtype(), false}), cfg);
    return {lax::real(fft_of(full, FftType::FFT, n))};
  }
  // IRFFT: conj(rfft(t) * mask / prod(n)), mask = 1, 2, ..., 2, 1 (no last 1 for odd n).
  Array x = fft_of(t, FftType::RFFT, n);
  const int64_t m = x.shape(last), odd = n.back() % 2;
  double total = 1;
  for (int64_t d : n) total *= double(d);
  Shape ms(size_t(x.ndim()), 1);
  ms[size_t(last)] = m;
  Array w = detail::empty_array(ms, DType::Float64, false);
  double* wp = detail::data<double>(w);
  for (int64_t i = 0; i < m; ++i) wp[i] = 2.0 / total;
  wp[0] = 1.0 / total;
  if (!odd && m > 1) wp[m - 1] = 1.0 / total;
  return {lax::conj(lax::mul(x, lax::convert_element_type(w, x.dtype(), false)))};
}

batching::BatchResult fft_batch(std::span<const Array> in, std::span<const int> dims,
                                const Params& p) {
  const int64_t size = batching::axis_size(in, dims);
  Array x = batching::bdim_to_front(in[0], dims[0], size);
  return {bind(Prim::Fft, {&x, 1}, p), {0}};
}

}  // namespace

void register_fft() {
  PrimitiveInfo& pi = mutable_info(Prim::Fft);
  pi.abstract_eval = fft_abstract_eval;
  pi.impl = fft_impl;
  pi.jvp = fft_jvp;
  pi.transpose = fft_transpose;
  pi.batch = fft_batch;
}

}  // namespace jx::ops
