// gather: XLA semantics. The fast kernel copies each slice (a box of the operand) as merged
// contiguous runs — a whole row per index for x[idx] on a 2-d array — into a
// [batch..., window...] layout, which is the output itself when the offset dims are
// trailing (the common case) and is otherwise permuted into place.
#include <algorithm>
#include <cstring>

#include "backend/cpu/gather.h"
#include "backend/cpu/gather_box.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"

namespace jx::cpu {
namespace {

int64_t numel(const Dims& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

bool contains(const Dims& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Operand dims that are slice (window) dims of the output, in operand order.
Dims window_dims(size_t rank, const GatherDims& dn) {
  Dims w;
  for (size_t d = 0; d < rank; ++d)
    if (!contains(dn.collapsed_slice_dims, int64_t(d)) &&
        !contains(dn.operand_batching_dims, int64_t(d)))
      w.push_back(int64_t(d));
  return w;
}

// Start of the slice for batch position g; false when it must be filled.
bool slice_start(int64_t g, const int64_t* indices, int64_t K, const Dims& batch_shape,
                 const Dims& opshape, const Dims& slice_sizes, const GatherDims& dn, bool fill,
                 int64_t* start) {
  std::fill(start, start + opshape.size(), 0);
  for (int64_t k = 0; k < K; ++k) start[dn.start_index_map[size_t(k)]] = indices[g * K + k];
  if (!dn.operand_batching_dims.empty()) {
    int64_t rem = g;
    std::vector<int64_t> bidx(batch_shape.size());
    for (size_t d = batch_shape.size(); d-- > 0;) {
      bidx[d] = rem % batch_shape[d];
      rem /= batch_shape[d];
    }
    for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i)
      start[dn.operand_batching_dims[i]] = bidx[size_t(dn.start_indices_batching_dims[i])];
  }
  for (int64_t k = 0; k < K; ++k) {
    const size_t d = size_t(dn.start_index_map[size_t(k)]);
    const int64_t hi = opshape[d] - slice_sizes[d];
    if (fill) {
      if (start[d] < 0 || start[d] > hi) return false;
    } else {
      start[d] = std::clamp<int64_t>(start[d], 0, hi);
    }
  }
  return true;
}

struct GatherArgs {
  const char* operand;
  const Dims& opshape;
  const int64_t* indices;
  int64_t K;
  const Dims& batch_shape;
  const GatherDims& dn;
  const Dims& slice_sizes;
  bool fill;
  const void* fill_value;
  char* dst;  // [batch..., window...]
};

template <class S>
struct GatherK {
  static void run(const GatherArgs& a) {
    const auto os = box::row_major(a.opshape);
    const box::Box b = box::make(a.slice_sizes.data(), os.data(), os.size());
    const int64_t W = numel(a.slice_sizes), nb = numel(a.batch_shape);
    const S* src = reinterpret_cast<const S*>(a.operand);
    S* dst = reinterpret_cast<S*>(a.dst);
    S fv{};
    if (a.fill) std::memcpy(&fv, a.fill_value, sizeof(S));
    const int nt = num_threads_for(nb * W);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
      std::vector<int64_t> start(a.opshape.size());
      const int t = omp_get_thread_num(), T = omp_get_num_threads();
      const int64_t g0 = nb * t / T, g1 = nb * (t + 1) / T;
      for (int64_t g = g0; g < g1; ++g) {
        S* o = dst + g * W;
        if (!slice_start(g, a.indices, a.K, a.batch_shape, a.opshape, a.slice_sizes, a.dn, a.fill,
                         start.data())) {
          std::fill(o, o + W, fv);
          continue;
        }
        int64_t base = 0;
        for (size_t d = 0; d < os.size(); ++d) base += start[d] * os[d];
        const S* s = src + base;
        if (W == 1) {
          o[0] = s[0];
          continue;
        }
        box::for_each_run(b, [&](int64_t so, int64_t dd, int64_t n, int64_t st) {
          box::gather_run(o + dd, s + so, n, st);
        });
      }
    }
  }
};

}  // namespace

void gather(size_t itemsize, const void* operand, const Dims& opshape, const int64_t* indices,
            const Dims& ishape, const GatherDims& dn, const Dims& slice_sizes, bool fill,
            const void* fill_value, void* out, const Dims& out_shape) {
  if (numel(out_shape) == 0) return;
  const Dims batch_shape(ishape.begin(), ishape.end() - 1);
  const size_t nbd = batch_shape.size();
  bool trailing = true;
  for (size_t k = 0; k < dn.offset_dims.size(); ++k)
    if (dn.offset_dims[k] != int64_t(nbd + k)) trailing = false;
  std::vector<char> tmp;
  char* dst = static_cast<char*>(out);
  if (!trailing) {
    tmp.resize(size_t(numel(out_shape)) * itemsize);
    dst = tmp.data();
  }
  GatherArgs a{static_cast<const char*>(operand), opshape, indices, ishape.back(), batch_shape,
               dn, slice_sizes, fill, fill_value, dst};
  box::by_size<GatherK>(itemsize, a);
  if (trailing) return;
  // Permute [batch..., window...] into the output's interleaved order.
  Dims tshape = batch_shape;
  for (int64_t d : window_dims(opshape.size(), dn)) tshape.push_back(slice_sizes[size_t(d)]);
  const auto ts = box::row_major(tshape);
  Dims src_strides(out_shape.size());
  size_t m = 0;
  for (size_t j = 0; j < out_shape.size(); ++j) {
    auto it = std::find(dn.offset_dims.begin(), dn.offset_dims.end(), int64_t(j));
    src_strides[j] = it != dn.offset_dims.end() ? ts[nbd + size_t(it - dn.offset_dims.begin())]
                                                : ts[m++];
  }
  copy_strided(itemsize, dst, src_strides.data(), out, out_shape.data(), int(out_shape.size()));
}

void gather_reference(size_t itemsize, const void* operand, const Dims& opshape,
                      const int64_t* indices, const Dims& ishape, const GatherDims& dn,
                      const Dims& slice_sizes, bool fill, const void* fill_value, void* out,
                      const Dims& out_shape) {
  // Straight from XLA's definition, one output element at a time.
  const size_t R = opshape.size();
  const int64_t K = ishape.back();
  const Dims wd = window_dims(R, dn);
  const auto os = box::row_major(opshape);
  const auto is = box::row_major(ishape);
  const int64_t n = numel(out_shape);
  std::vector<int64_t> O(out_shape.size()), G, S(R), In(R);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i;
    for (size_t d = out_shape.size(); d-- > 0;) {
      O[d] = rem % out_shape[d];
      rem /= out_shape[d];
    }
    G.clear();
    for (size_t d = 0; d < out_shape.size(); ++d)
      if (!contains(dn.offset_dims, int64_t(d))) G.push_back(O[d]);
    std::fill(S.begin(), S.end(), 0);
    int64_t ibase = 0;
    for (size_t d = 0; d < G.size(); ++d) ibase += G[d] * is[d];
    for (int64_t k = 0; k < K; ++k) S[size_t(dn.start_index_map[size_t(k)])] = indices[ibase + k];
    for (size_t b = 0; b < dn.operand_batching_dims.size(); ++b)
      S[size_t(dn.operand_batching_dims[b])] = G[size_t(dn.start_indices_batching_dims[b])];
    bool oob = false;
    for (int64_t k = 0; k < K; ++k) {
      size_t d = size_t(dn.start_index_map[size_t(k)]);
      int64_t hi = opshape[d] - slice_sizes[d];
      if (S[d] < 0 || S[d] > hi) {
        oob = true;
        S[d] = S[d] < 0 ? 0 : hi;
      }
    }
    char* o = static_cast<char*>(out) + size_t(i) * itemsize;
    if (fill && oob) {
      std::memcpy(o, fill_value, itemsize);
      continue;
    }
    In = S;
    for (size_t k = 0; k < wd.size(); ++k) In[size_t(wd[k])] += O[size_t(dn.offset_dims[k])];
    int64_t off = 0;
    for (size_t d = 0; d < R; ++d) off += In[d] * os[d];
    std::memcpy(o, static_cast<const char*>(operand) + size_t(off) * itemsize, itemsize);
  }
}

}  // namespace jx::cpu
