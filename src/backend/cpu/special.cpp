// Special-function kernels: a strided walk over the output (StridedLoop, as the binary
// kernels) calling the scalar functions of special_math.h per element. These are loops of
// tens to thousands of steps per element (series, continued fractions), not vectorizable
// arithmetic, so the kernels parallelize on far fewer elements than the cheap ones.
#include "backend/cpu/special.h"

#include <algorithm>
#include <array>
#include <type_traits>
#include <vector>

#include "backend/cpu/loops.h"
#include "backend/cpu/special_math.h"
#include "support/dtype_switch.h"

namespace jx::cpu {
namespace {

namespace sm = special_math;

// Cost of one element relative to a cheap elementwise op, for the threading threshold.
constexpr int64_t kElementCost = 64;

template <SpecialOp op>
inline double eval(const double* v) {
  if constexpr (op == SpecialOp::Igamma) return sm::igamma(v[0], v[1]);
  else if constexpr (op == SpecialOp::Igammac) return sm::igammac(v[0], v[1]);
  else if constexpr (op == SpecialOp::IgammaGradA) return sm::igamma_grad_a(v[0], v[1]);
  else if constexpr (op == SpecialOp::Betainc) return sm::betainc(v[0], v[1], v[2]);
  else if constexpr (op == SpecialOp::Zeta) return sm::zeta(v[0], v[1]);
  else if constexpr (op == SpecialOp::Polygamma) return sm::polygamma(v[0], v[1]);
  else if constexpr (op == SpecialOp::BesselI0e) return sm::bessel_i0e(v[0]);
  else return sm::bessel_i1e(v[0]);
}

template <SpecialOp op>
constexpr size_t kArity = op == SpecialOp::Betainc ? 3
                          : (op == SpecialOp::BesselI0e || op == SpecialOp::BesselI1e) ? 1
                                                                                      : 2;

// float16/bfloat16 are storage types: they convert through float.
template <class T>
inline double to_double(T v) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bhalf>) return double(float(v));
  else return double(v);
}
template <class T>
inline T from_double(double v) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bhalf>) return T(float(v));
  else return T(v);
}

template <class T>
constexpr bool kFloating = std::is_floating_point_v<T> || std::is_same_v<T, half> ||
                           std::is_same_v<T, bhalf>;

template <SpecialOp op, class T>
void run_typed(const void* const* in, const int64_t* const* in_shapes, void* out,
               const int64_t* os, int ndim) {
  constexpr size_t N = kArity<op>;
  std::array<DimVec, N> strides;
  std::array<const T*, N> p;
  for (size_t k = 0; k < N; ++k) {
    strides[k] = broadcast_strides(in_shapes[k], os, ndim);
    p[k] = static_cast<const T*>(in[k]);
  }
  T* o = static_cast<T*>(out);
  const StridedLoop<N> loop(os, ndim, strides);
  const int64_t n = loop.inner(), total = loop.rows() * n;
  if (total == 0) return;
  // The flat output range [b, e), cut out of the rows that hold it.
  auto segment = [&](int64_t b, int64_t e) {
    if (b >= e) return;
    loop.run_rows(b / n, (e - 1) / n + 1,
                  [&](int64_t o0, const std::array<int64_t, N>& off, int64_t len,
                      const std::array<int64_t, N>& step) {
                    const int64_t lo = std::max(b, o0) - o0, hi = std::min(e, o0 + len) - o0;
                    for (int64_t i = lo; i < hi; ++i) {
                      double v[N];
                      for (size_t k = 0; k < N; ++k) v[k] = to_double(p[k][off[k] + i * step[k]]);
                      o[o0 + i] = from_double<T>(eval<op>(v));
                    }
                  });
  };
  const int nt = num_threads_for(total * kElementCost);
  if (nt <= 1) {
    segment(0, total);
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    const int64_t t = omp_get_thread_num(), count = omp_get_num_threads();
    segment(total * t / count, total * (t + 1) / count);
  }
}

template <SpecialOp op>
void dispatch_dtype(DType dtype, const void* const* in, const int64_t* const* in_shapes,
                    void* out, const int64_t* os, int ndim) {
  JX_DTYPE_SWITCH(dtype, T, {
    if constexpr (kFloating<T>) {
      run_typed<op, T>(in, in_shapes, out, os, ndim);
    } else {
      throw InternalError("jx internal error: special kernel called with a non-floating dtype");
    }
  });
}

void dispatch(SpecialOp op, DType dtype, const void* const* in, const int64_t* const* in_shapes,
              void* out, const int64_t* os, int ndim) {
  switch (op) {
#define JX_SP(name) \
  case SpecialOp::name: return dispatch_dtype<SpecialOp::name>(dtype, in, in_shapes, out, os, ndim);
    JX_SP(Igamma) JX_SP(Igammac) JX_SP(IgammaGradA) JX_SP(Betainc) JX_SP(Zeta) JX_SP(Polygamma)
    JX_SP(BesselI0e) JX_SP(BesselI1e)
#undef JX_SP
  }
}

}  // namespace

int special_arity(SpecialOp op) {
  switch (op) {
    case SpecialOp::Betainc: return 3;
    case SpecialOp::BesselI0e: case SpecialOp::BesselI1e: return 1;
    default: return 2;
  }
}

void special(SpecialOp op, DType dtype, const void* const* in, const int64_t* const* in_shapes,
             void* out, const int64_t* out_shape, int ndim) {
  dispatch(op, dtype, in, in_shapes, out, out_shape, ndim);
}

void special_reference(SpecialOp op, DType dtype, const void* const* in,
                       const int64_t* const* in_shapes, void* out, const int64_t* os, int ndim) {
  // Element by element: the flat output index to a multi-index, then each operand's
  // offset with its size-1 dims pinned to 0, then a one-element call of the fast kernel.
  const int nin = special_arity(op);
  int64_t total = 1;
  for (int d = 0; d < ndim; ++d) total *= os[d];
  const size_t item = itemsize(dtype);
  std::vector<int64_t> idx(static_cast<size_t>(ndim));
  const int64_t one = 1;
  for (int64_t i = 0; i < total; ++i) {
    int64_t rem = i;
    for (int d = ndim - 1; d >= 0; --d) {
      idx[size_t(d)] = rem % os[d];
      rem /= os[d];
    }
    const void* elems[3];
    const int64_t* ones[3] = {&one, &one, &one};
    for (int k = 0; k < nin; ++k) {
      int64_t off = 0, stride = 1;
      for (int d = ndim - 1; d >= 0; --d) {
        off += (in_shapes[k][d] == 1 ? 0 : idx[size_t(d)]) * stride;
        stride *= in_shapes[k][d];
      }
      elems[k] = static_cast<const char*>(in[k]) + size_t(off) * item;
    }
    dispatch(op, dtype, elems, ones, static_cast<char*>(out) + size_t(i) * item, &one, 1);
  }
}

}  // namespace jx::cpu
