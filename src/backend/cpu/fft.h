// The discrete Fourier transforms on FFTW: contiguous row-major signals in, out.
#pragma once
#include <cstdint>

#include "jx/dtype.h"

namespace jx::cpu {

enum class FftKind { Forward, Inverse, RealToComplex, ComplexToReal };

// `batch` signals of shape lengths[0..rank) (rank 1..3), one after another. `real` is the
// precision (Float32 or Float64): complex data is std::complex of it. Forward and Inverse map
// complex to complex; RealToComplex maps real signals to their first lengths[rank-1] / 2 + 1
// coefficients along the last axis; ComplexToReal maps those back. Inverse and ComplexToReal
// are scaled by 1 / prod(lengths), as lax.fft's IFFT and IRFFT.
void fft(FftKind kind, DType real, const void* in, void* out, int64_t batch,
         const int64_t* lengths, int rank);

}  // namespace jx::cpu
