// 3x3 stride-1 float32 convolutions by Winograd's minimal filtering F(4x4, 3x3) (Lavin &
// Gray, "Fast Algorithms for Convolutional Neural Networks", 2016), the algorithm cuDNN and
// NNPACK pick for such layers. Each 6x6 input tile d and 3x3 filter g give a 4x4 output
// tile as Y = A^T [(G g G^T) ⊙ (B^T d B)] A: 36 multiplications per tile and channel pair
// instead of 144, so the products become 36 independent matrix products
// [tiles x C] @ [C x K] (one per position of the 6x6 transformed tile), run by oneDNN's
// sgemm, between cheap transforms vectorized across channels.
//
// Taken when it pays (against oneDNN's direct brgconv kernels on a ResNet's 8x8 layers at
// batch 128, bench_conv: 3.55 against 7.33 ms at 128 -> 128 features, 1.00 against 1.72 ms
// at 64 -> 64): 2-D, window 3x3, unit strides and dilations, no groups, padding of 0-2 per
// side, both feature counts multiples of 16 and at least 64, features contiguous in lhs
// and out (NHWC), float32. The result differs from the direct sum by rounding that grows
// with the transforms' constants: about 1e-5 of the output's largest value for unit-scale
// data (tests/ops/conv_winograd_test.cpp bounds it). jx::config::conv_winograd (env
// JX_CONV_WINOGRAD=0) turns it off; the direct kernels then run.
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>

#include "backend/cpu/conv.h"
#include "backend/cpu/scratch.h"
#include "jx/config.h"
#include "support/check.h"

namespace jx::cpu {
namespace {

constexpr int kLanes = 16;  // channels per vector step of the transforms
// Tiles per block: a block's transformed input and products take about 1 MB, so that
// they stay in a core's L2 cache between the steps.
constexpr int64_t kBlockBytes = int64_t(1) << 20;

// G (6x3): the filter transform.
constexpr float kG[6][3] = {{1.f / 4, 0, 0},
                            {-1.f / 6, -1.f / 6, -1.f / 6},
                            {-1.f / 6, 1.f / 6, -1.f / 6},
                            {1.f / 24, 1.f / 12, 1.f / 6},
                            {1.f / 24, -1.f / 12, 1.f / 6},
                            {0, 0, 1}};

// B^T d over six rows of kLanes channels (d[i * in]), into r[i * out].
inline void input_rows(const float* d, float* r, int64_t in, int64_t out) {
#pragma omp simd
  for (int l = 0; l < kLanes; ++l) {
    const float d0 = d[l], d1 = d[in + l], d2 = d[2 * in + l], d3 = d[3 * in + l], d4 = d[4 * in + l],
                d5 = d[5 * in + l];
    r[l] = 4 * d0 - 5 * d2 + d4;
    r[out + l] = -4 * d1 - 4 * d2 + d3 + d4;
    r[2 * out + l] = 4 * d1 - 4 * d2 - d3 + d4;
    r[3 * out + l] = -2 * d1 - d2 + 2 * d3 + d4;
    r[4 * out + l] = 2 * d1 - d2 - 2 * d3 + d4;
    r[5 * out + l] = 4 * d1 - 5 * d3 + d5;
  }
}

// A^T m over six rows (m[i * in]), into four rows r[i * out].
inline void output_rows(const float* m, float* r, int64_t in, int64_t out) {
#pragma omp simd
  for (int l = 0; l < kLanes; ++l) {
    const float a0 = m[l], a1 = m[in + l], a2 = m[2 * in + l], a3 = m[3 * in + l], a4 = m[4 * in + l],
                a5 = m[5 * in + l];
    r[l] = a0 + a1 + a2 + a3 + a4;
    r[out + l] = a1 - a2 + 2 * a3 - 2 * a4;
    r[2 * out + l] = a1 + a2 + 4 * a3 + 4 * a4;
    r[3 * out + l] = a1 - a2 + 8 * a3 - 8 * a4 + a5;
  }
}

struct Plan {
  int64_t n, h, w, c, k, oh, ow, th, tw, tiles;
  int64_t pad_y, pad_x;
};

// U[36][C][K] = G g G^T for every (input feature, output feature) pair.
void transform_filter(const float* rhs, const ConvGeometry& g, const Plan& p, float* u) {
  const int64_t* rs = g.rhs_strides;  // (O, I, ky, kx)
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < p.c; ++c)
    for (int64_t k0 = 0; k0 < p.k; k0 += kLanes) {
      float gg[3][3][kLanes], t[6][3][kLanes];
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
          for (int l = 0; l < kLanes; ++l) gg[a][b][l] = rhs[(k0 + l) * rs[0] + c * rs[1] + a * rs[2] + b * rs[3]];
      for (int i = 0; i < 6; ++i)
        for (int b = 0; b < 3; ++b) {
#pragma omp simd
          for (int l = 0; l < kLanes; ++l) t[i][b][l] = kG[i][0] * gg[0][b][l] + kG[i][1] * gg[1][b][l] + kG[i][2] * gg[2][b][l];
        }
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
          float* q = u + ((i * 6 + j) * p.c + c) * p.k + k0;
#pragma omp simd
          for (int l = 0; l < kLanes; ++l) q[l] = t[i][0][l] * kG[j][0] + t[i][1][l] * kG[j][1] + t[i][2][l] * kG[j][2];
        }
    }
}

// V[36][nt][C] = B^T d B for tiles [t0, t0 + nt).
// patch: 36 * C floats of scratch for one tile's pixels.
void transform_input(const float* lhs, const ConvGeometry& g, const Plan& p, int64_t t0, int64_t nt, float* v,
                     float* patch) {
  const int64_t* ls = g.lhs_strides;  // (N, C, y, x), ls[1] == 1
  const bool rows_contiguous = ls[3] == p.c;  // a row of pixels is one run of memory (NHWC)
  for (int64_t t = 0; t < nt; ++t) {
    const int64_t tile = t0 + t, n = tile / (p.th * p.tw), ty = tile / p.tw % p.th, tx = tile % p.tw;
    const int64_t y0 = ty * 4 - p.pad_y, x0 = tx * 4 - p.pad_x;
    // The tile's 6x6 pixels, zeros outside the image, copied row by row: six sequential
    // reads the prefetcher follows, instead of 36 scattered ones per group of channels.
    const int64_t xa = std::max<int64_t>(x0, 0), xb = std::min<int64_t>(x0 + 6, p.w);
    for (int i = 0; i < 6; ++i) {
      float* row = patch + i * 6 * p.c;
      const int64_t y = y0 + i;
      if (y < 0 || y >= p.h || xa >= xb) {
        std::fill(row, row + 6 * p.c, 0.f);
        continue;
      }
      std::fill(row, row + (xa - x0) * p.c, 0.f);
      const float* src = lhs + n * ls[0] + y * ls[2];
      if (rows_contiguous) {
        std::copy(src + xa * ls[3], src + xa * ls[3] + (xb - xa) * p.c, row + (xa - x0) * p.c);
      } else {
        for (int64_t x = xa; x < xb; ++x) std::copy(src + x * ls[3], src + x * ls[3] + p.c, row + (x - x0) * p.c);
      }
      std::fill(row + (xb - x0) * p.c, row + 6 * p.c, 0.f);
    }
    for (int64_t c0 = 0; c0 < p.c; c0 += kLanes) {
      float r[6][6][kLanes];
      // Columns of B^T d, then (B^T d) B with row i written straight to V[i * 6 + j][t].
      for (int j = 0; j < 6; ++j) input_rows(patch + j * p.c + c0, &r[0][j][0], 6 * p.c, 6 * kLanes);
      for (int i = 0; i < 6; ++i) input_rows(&r[i][0][0], v + ((i * 6) * nt + t) * p.c + c0, kLanes, nt * p.c);
    }
  }
}

// out = A^T M A (+ bias, relu) for tiles [t0, t0 + nt), cropped at the output's edges.
void transform_output(const float* m, const ConvGeometry& g, const Plan& p, int64_t t0, int64_t nt,
                      const ConvEpilogue& ep, float* out) {
  const int64_t* os = g.out_strides;  // (N, K, y, x), os[1] == 1
  const float* bias = static_cast<const float*>(ep.bias);
  for (int64_t t = 0; t < nt; ++t) {
    const int64_t tile = t0 + t, n = tile / (p.th * p.tw), ty = tile / p.tw % p.th, tx = tile % p.tw;
    for (int64_t k0 = 0; k0 < p.k; k0 += kLanes) {
      float r[4][6][kLanes], y[4][4][kLanes];
      // A^T M straight from M[i * 6 + j][t] (column j, rows i = 0..5), then (A^T M) A.
      for (int j = 0; j < 6; ++j) output_rows(m + (j * nt + t) * p.k + k0, &r[0][j][0], 6 * nt * p.k, 6 * kLanes);
      for (int i = 0; i < 4; ++i) output_rows(&r[i][0][0], &y[i][0][0], kLanes, kLanes);
      for (int i = 0; i < 4; ++i) {
        const int64_t oy = ty * 4 + i;
        if (oy >= p.oh) break;
        for (int j = 0; j < 4; ++j) {
          const int64_t ox = tx * 4 + j;
          if (ox >= p.ow) break;
          float* dst = out + n * os[0] + oy * os[2] + ox * os[3] + k0;
#pragma omp simd
          for (int l = 0; l < kLanes; ++l) {
            float val = y[i][j][l] + (bias ? bias[k0 + l] : 0.f);
            dst[l] = ep.relu ? std::max(val, 0.f) : val;
          }
        }
      }
    }
  }
}

}  // namespace

bool winograd_applies(const ConvGeometry& g) {
  if (!config::conv_winograd) return false;
  if (g.spatial != 2 || g.feature_groups != 1 || g.batch_groups != 1) return false;
  for (int d = 0; d < 2; ++d) {
    if (g.window[d] != 3 || g.stride[d] != 1 || g.lhs_dilation[d] != 1 || g.rhs_dilation[d] != 1) return false;
    if (g.pad_lo[d] < 0 || g.pad_lo[d] > 2 || g.pad_hi[d] < 0 || g.pad_hi[d] > 2 || g.out[d] < 1) return false;
  }
  if (g.in_features % kLanes || g.out_features % kLanes || g.in_features < 64 || g.out_features < 64) return false;
  return g.lhs_strides[1] == 1 && g.out_strides[1] == 1 && g.batch > 0;
}

bool conv_f32_winograd(const float* lhs, const float* rhs, float* out, const ConvGeometry& g,
                       const ConvEpilogue& ep) {
  if (!winograd_applies(g)) return false;
  Plan p{};
  p.n = g.batch, p.h = g.in[0], p.w = g.in[1], p.c = g.in_features, p.k = g.out_features;
  p.oh = g.out[0], p.ow = g.out[1], p.pad_y = g.pad_lo[0], p.pad_x = g.pad_lo[1];
  p.th = (p.oh + 3) / 4, p.tw = (p.ow + 3) / 4, p.tiles = p.n * p.th * p.tw;
  // Each thread takes blocks of tiles through all three steps (transform, 36 products,
  // transform back) in its own buffers, sized to stay in its L2 cache: the transformed
  // tiles are written and read back from cache instead of memory.
  const int64_t per_tile = 36 * (p.c + p.k) * int64_t(sizeof(float));
  const int64_t block = std::min(p.tiles, std::clamp<int64_t>(kBlockBytes / per_tile, 16, 256));
  const int64_t nblocks = (p.tiles + block - 1) / block;
  Scratch u(size_t(36 * p.c * p.k) * sizeof(float));
  transform_filter(rhs, g, p, u.as<float>());
  const int threads = omp_get_max_threads();
  const int64_t per_thread = 36 * block * (p.c + p.k) + 36 * p.c;
  Scratch work(size_t(threads * per_thread) * sizeof(float));
  bool ok = true;
#pragma omp parallel for schedule(dynamic) reduction(&& : ok)
  for (int64_t b = 0; b < nblocks; ++b) {
    const int64_t t0 = b * block, nt = std::min(block, p.tiles - t0);
    float* v = work.as<float>() + omp_get_thread_num() * per_thread;
    float* m = v + 36 * block * p.c;
    transform_input(lhs, g, p, t0, nt, v, m + 36 * block * p.k);
    // oneDNN runs each product on the calling thread inside a parallel region.
    const float* up = u.as<float>();
    for (int xi = 0; xi < 36; ++xi)
      ok = dnnl_sgemm('N', 'N', nt, p.k, p.c, 1.0f, v + xi * nt * p.c, p.c, up + xi * p.c * p.k, p.k, 0.0f,
                      m + xi * nt * p.k, p.k) == dnnl_success && ok;
    transform_output(m, g, p, t0, nt, ep, out);
  }
  JX_CHECK(ok, "dnnl_sgemm failed in the Winograd convolution");
  return true;
}

}  // namespace jx::cpu
