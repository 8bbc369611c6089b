#include "backend/cpu/conv.h"

#include <algorithm>
#include <type_traits>

#include "backend/cpu/kernels.h"
#include "backend/cpu/scratch.h"
#include "jx/error.h"
#include "support/dtype_switch.h"

namespace jx::cpu {
namespace {

// Integers accumulate in the unsigned type of their width, so that sums wrap as in XLA
// without signed overflow.
template <class T, bool = std::is_integral_v<T>>
struct Acc {
  using type = T;
};
template <class T>
struct Acc<T, true> {
  using type = std::make_unsigned_t<T>;
};

// The direct definition: for every output element, the sum over its group's input
// features and the window of lhs (dilated by lhs_dilation, padded) times rhs.
template <class T>
void conv_loops(const T* lhs, const T* rhs, T* out, const ConvGeometry& g) {
  using A = typename Acc<T>::type;
  const int64_t nb = g.batch / g.batch_groups;
  const int64_t cg = g.in_features / g.feature_groups;
  const int64_t og = g.out_features / g.feature_groups;
  const int64_t ob = g.out_features / g.batch_groups;
  const int64_t* ls = g.lhs_strides;
  const int64_t* rs = g.rhs_strides;
  const int64_t* os = g.out_strides;
  int64_t dil_in[kMaxConvSpatial];
  for (int d = 0; d < kMaxConvSpatial; ++d)
    dil_in[d] = g.in[d] == 0 ? 0 : 1 + g.lhs_dilation[d] * (g.in[d] - 1);
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t o = 0; o < g.out_features; ++o) {
      const int64_t lb = (o / ob) * nb + b;  // the lhs batch row of o's batch group
      const int64_t c0 = (o / og) * cg;      // the first lhs feature of o's feature group
      for (int64_t y0 = 0; y0 < g.out[0]; ++y0)
        for (int64_t y1 = 0; y1 < g.out[1]; ++y1)
          for (int64_t y2 = 0; y2 < g.out[2]; ++y2) {
            const int64_t y[3] = {y0, y1, y2};
            A acc = A(0);
            for (int64_t k0 = 0; k0 < g.window[0]; ++k0)
              for (int64_t k1 = 0; k1 < g.window[1]; ++k1)
                for (int64_t k2 = 0; k2 < g.window[2]; ++k2) {
                  const int64_t k[3] = {k0, k1, k2};
                  int64_t loff = lb * ls[0], roff = o * rs[0];
                  bool inside = true;
                  for (int d = 0; d < kMaxConvSpatial && inside; ++d) {
                    const int64_t p = y[d] * g.stride[d] + k[d] * g.rhs_dilation[d] - g.pad_lo[d];
                    if (p < 0 || p >= dil_in[d] || p % g.lhs_dilation[d] != 0) inside = false;
                    loff += (p / std::max<int64_t>(g.lhs_dilation[d], 1)) * ls[2 + d];
                    roff += k[d] * rs[2 + d];
                  }
                  if (!inside) continue;
                  for (int64_t c = 0; c < cg; ++c)
                    acc = A(acc + A(A(lhs[loff + (c0 + c) * ls[1]]) * A(rhs[roff + c * rs[1]])));
                }
            out[b * os[0] + o * os[1] + y0 * os[2] + y1 * os[3] + y2 * os[4]] = T(acc);
          }
    }
}

int64_t extent(const int64_t* sizes, const int64_t* strides, int n) {
  int64_t e = 1;
  for (int i = 0; i < n; ++i) {
    if (sizes[i] == 0) return 0;
    e += (sizes[i] - 1) * strides[i];
  }
  return e;
}

struct Extents {
  int64_t lhs, rhs, out;
};
Extents extents(const ConvGeometry& g) {
  const int n = g.spatial + 2;
  int64_t ls[5] = {g.batch, g.in_features}, rs[5] = {g.out_features, g.in_features / g.feature_groups},
          os[5] = {g.batch / g.batch_groups, g.out_features};
  for (int d = 0; d < g.spatial; ++d) {
    ls[2 + d] = g.in[d];
    rs[2 + d] = g.window[d];
    os[2 + d] = g.out[d];
  }
  return {extent(ls, g.lhs_strides, n), extent(rs, g.rhs_strides, n), extent(os, g.out_strides, n)};
}

// out = act(out + bias) over every output element, after a convolution that did not.
template <class T>
void apply_epilogue(T* out, const T* bias, bool relu, const ConvGeometry& g) {
  const int64_t nb = g.batch / g.batch_groups;
  const int64_t* os = g.out_strides;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t o = 0; o < g.out_features; ++o) {
      const T add = bias ? bias[o] : T(0);
      for (int64_t y0 = 0; y0 < g.out[0]; ++y0)
        for (int64_t y1 = 0; y1 < g.out[1]; ++y1)
          for (int64_t y2 = 0; y2 < g.out[2]; ++y2) {
            T& v = out[b * os[0] + o * os[1] + y0 * os[2] + y1 * os[3] + y2 * os[4]];
            v = T(v + add);
            // max(v, 0) as lax.max: NaN stays NaN.
            if (relu && v < T(0)) v = T(0);
          }
    }
}

// The type the loops compute in: the result's, float32 for the 16-bit floats.
DType compute_type(DType out) {
  return out == DType::Float16 || out == DType::BFloat16 ? DType::Float32 : out;
}

template <class Run>
void with_converted(DType in, DType out, const void* lhs, const void* rhs, void* result,
                    const ConvGeometry& g, ConvEpilogue& epilogue, Run run) {
  const DType ct = compute_type(out);
  const Extents e = extents(g);
  Scratch lbuf, rbuf, obuf, bbuf;
  if (epilogue.bias && out != ct) {
    bbuf.reset(size_t(g.out_features) * itemsize(ct));
    convert(out, ct, epilogue.bias, bbuf.data(), g.out_features);
    epilogue.bias = bbuf.data();
  }
  if (in != ct) {
    lbuf.reset(size_t(e.lhs) * itemsize(ct));
    rbuf.reset(size_t(e.rhs) * itemsize(ct));
    convert(in, ct, lhs, lbuf.data(), e.lhs);
    convert(in, ct, rhs, rbuf.data(), e.rhs);
    lhs = lbuf.data();
    rhs = rbuf.data();
  }
  void* dst = result;
  if (out != ct) {
    obuf.reset(size_t(e.out) * itemsize(ct));
    dst = obuf.data();
  }
  run(ct, lhs, rhs, dst);
  if (out != ct) convert(ct, out, dst, result, e.out);
}

void check_dtype(DType t) {
  if (t == DType::Bool)
    throw DTypeError("[conv_general_dilated] bool operands are not supported; convert them to "
                     "an integer or float dtype");
}

// The reference loops in the compute type, then the epilogue unless `skip_epilogue`.
void loops(DType ct, const void* l, const void* r, void* o, const ConvGeometry& g,
           const ConvEpilogue& ep, bool skip_epilogue) {
  JX_DTYPE_SWITCH(ct, T, {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, half> || std::is_same_v<T, bhalf>) {
      throw InternalError("jx internal error: conv computes in a 16-bit or bool type");
    } else {
      if (!skip_epilogue)
        conv_loops(static_cast<const T*>(l), static_cast<const T*>(r), static_cast<T*>(o), g);
      if (!ep.empty()) apply_epilogue(static_cast<T*>(o), static_cast<const T*>(ep.bias), ep.relu, g);
    }
  });
}

}  // namespace

void conv_general_reference(DType in, DType out, const void* lhs, const void* rhs, void* result,
                            const ConvGeometry& g, const ConvEpilogue& epilogue) {
  check_dtype(out);
  ConvEpilogue ep = epilogue;
  with_converted(in, out, lhs, rhs, result, g, ep, [&](DType ct, const void* l, const void* r, void* o) {
    loops(ct, l, r, o, g, ep, false);
  });
}

void conv_general(DType in, DType out, const void* lhs, const void* rhs, void* result,
                  const ConvGeometry& g, const ConvEpilogue& epilogue) {
  check_dtype(out);
  ConvEpilogue ep = epilogue;
  with_converted(in, out, lhs, rhs, result, g, ep, [&](DType ct, const void* l, const void* r, void* o) {
    bool done = false;
    if (ct == DType::Float32 &&
        conv_f32_winograd(static_cast<const float*>(l), static_cast<const float*>(r), static_cast<float*>(o), g, ep))
      return;
    if (ct == DType::Float32 &&
        conv_f32_onednn(static_cast<const float*>(l), static_cast<const float*>(r),
                        static_cast<float*>(o), g, ep, done)) {
      // The convolution ran; the epilogue too unless oneDNN could not take it.
      if (!done && !ep.empty()) loops(ct, l, r, o, g, ep, true);
      return;
    }
    loops(ct, l, r, o, g, ep, false);
  });
}

}  // namespace jx::cpu
