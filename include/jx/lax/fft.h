// jx::lax::fft: JAX's jax.lax.fft, one primitive for the four discrete Fourier transforms
// over the trailing len(fft_lengths) (1 to 3) dimensions; the leading ones are batch
// dimensions. FFTW computes it (docs/fft.md). jx::numpy::fft builds NumPy's API on it.
#pragma once
#include <vector>

#include "jx/array.h"

namespace jx::lax {

enum class FftType {
  FFT,    // complex -> complex, forward, unnormalized
  IFFT,   // complex -> complex, inverse, scaled by 1 / prod(fft_lengths)
  RFFT,   // real -> complex: the last dim n becomes n / 2 + 1
  IRFFT,  // complex -> real: the last dim n / 2 + 1 becomes fft_lengths.back() (scaled)
};

// FFT/IFFT: x complex64/complex128 whose trailing dims equal fft_lengths. RFFT: x float32 /
// float64 with trailing dims fft_lengths, result complex64/complex128. IRFFT: x complex
// whose trailing dims are fft_lengths with the last one n / 2 + 1, result real.
Array fft(const Array& x, FftType fft_type, const std::vector<int64_t>& fft_lengths);

}  // namespace jx::lax
