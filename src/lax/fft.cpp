// jx::lax::fft: the fft primitive's wrapper (rules in ops/fft.cpp).
#include "jx/lax/fft.h"

#include "transforms/bind.h"

namespace jx::lax {

Array fft(const Array& x, FftType fft_type, const std::vector<int64_t>& fft_lengths) {
  // The names JAX's jaxprs print for the enum.
  const char* name = fft_type == FftType::FFT    ? "FftType.FFT"
                     : fft_type == FftType::IFFT ? "FftType.IFFT"
                     : fft_type == FftType::RFFT ? "FftType.RFFT"
                                                 : "FftType.IRFFT";
  return bind1(ops::Prim::Fft, {x}, {{"fft_type", std::string(name)}, {"fft_lengths", fft_lengths}});
}

}  // namespace jx::lax
