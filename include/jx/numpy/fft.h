// jnp.fft: NumPy's discrete Fourier transforms, as jax/_src/numpy/fft.py builds them on the
// one FFT primitive (jx/lax/fft.h), so all of them trace, vmap and differentiate
// (docs/fft.md).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jx/array.h"

namespace jx::numpy::fft {

// Shared conventions, NumPy's:
// - n / s: the transform length along each axis. The input is cropped or zero-padded to it
//   (for irfft*, the last axis to n / 2 + 1). Absent: the input's size, except that irfft*
//   defaults the last length to 2 * (m - 1) for an input axis of size m.
// - norm: "backward" (the default: the inverse transforms scale by 1 / N), "ortho" (both
//   directions by 1 / sqrt(N)) or "forward" (the forward transforms scale by 1 / N), with N
//   the product of the transform lengths.
// - dtypes: fft / ifft / irfft promote to complex (float64 -> complex128, every other real
//   dtype -> complex64); rfft / ihfft take real inputs only (float64 stays float64, other
//   reals compute in float32) and throw DTypeError for complex ones. irfft / hfft return
//   the real dtype of their complex computation.
// - more than 3 axes are transformed in groups of at most 3, as JAX does.

// One axis.
Array fft(const Array& a, std::optional<int64_t> n = std::nullopt, int64_t axis = -1,
          const std::string& norm = "backward");
Array ifft(const Array& a, std::optional<int64_t> n = std::nullopt, int64_t axis = -1,
           const std::string& norm = "backward");
// Real input; the result has n / 2 + 1 entries along `axis`.
Array rfft(const Array& a, std::optional<int64_t> n = std::nullopt, int64_t axis = -1,
           const std::string& norm = "backward");
// The inverse of rfft: a real result of length n (default 2 * (m - 1)) along `axis`.
Array irfft(const Array& a, std::optional<int64_t> n = std::nullopt, int64_t axis = -1,
            const std::string& norm = "backward");
// The transform of a Hermitian-symmetric signal given by its first half (real result), and
// its inverse (real input). They scale as NumPy's for every norm.
Array hfft(const Array& a, std::optional<int64_t> n = std::nullopt, int64_t axis = -1,
           const std::string& norm = "backward");
Array ihfft(const Array& a, std::optional<int64_t> n = std::nullopt, int64_t axis = -1,
            const std::string& norm = "backward");

// Two axes (exactly two): fft2(x, {4, 6}) or fft2(x, jx::none, {0, 2}).
Array fft2(const Array& a, OptionalShape s = none, const std::vector<int64_t>& axes = {-2, -1},
           const std::string& norm = "backward");
Array ifft2(const Array& a, OptionalShape s = none, const std::vector<int64_t>& axes = {-2, -1},
            const std::string& norm = "backward");
Array rfft2(const Array& a, OptionalShape s = none, const std::vector<int64_t>& axes = {-2, -1},
            const std::string& norm = "backward");
Array irfft2(const Array& a, OptionalShape s = none, const std::vector<int64_t>& axes = {-2, -1},
             const std::string& norm = "backward");

// Any number of axes. axes = jx::none: the last len(s) axes when s is given, else all.
// For rfftn / irfftn the last of `axes` is the halved one.
Array fftn(const Array& a, OptionalShape s = none, Axes axes = none,
           const std::string& norm = "backward");
Array ifftn(const Array& a, OptionalShape s = none, Axes axes = none,
            const std::string& norm = "backward");
Array rfftn(const Array& a, OptionalShape s = none, Axes axes = none,
            const std::string& norm = "backward");
Array irfftn(const Array& a, OptionalShape s = none, Axes axes = none,
             const std::string& norm = "backward");

// Sample frequencies of an n-point transform with sample spacing d: [0, 1, ..., -2, -1] /
// (d n) (fftfreq) and [0, 1, ..., n / 2] / (d n) (rfftfreq). dtype: float32 by default.
Array fftfreq(int64_t n, double d = 1.0, std::optional<DType> dtype = std::nullopt);
Array rfftfreq(int64_t n, double d = 1.0, std::optional<DType> dtype = std::nullopt);

// Rolls each of `axes` (jx::none: all) by half its size, moving the zero frequency to the
// centre; ifftshift undoes it (they differ for odd sizes).
Array fftshift(const Array& x, Axes axes = none);
Array ifftshift(const Array& x, Axes axes = none);

}  // namespace jx::numpy::fft
