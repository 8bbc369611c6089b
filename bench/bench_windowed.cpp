// Max pooling 2x2 stride 2 over a [128, 28, 28, 32] NHWC float32 input, forward and
// forward + backward: jx (lax::reduce_window_max and its vjp, i.e. select_and_scatter_add)
// against oneDNN's pooling called directly with cached primitives (forward_training keeps
// a workspace of argmax indices that its backward reads). PyTorch's side of the same
// workload is bench/peers/torch_windowed.py (max_pool2d on a channels_last tensor).
#include <benchmark/benchmark.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <random>

#include "jx/jx.h"

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;

namespace {

constexpr int64_t N = 128, H = 28, W = 28, C = 32;

Array input() {
  std::vector<float> v(size_t(N * H * W * C));
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (auto& e : v) e = d(gen);
  return jnp::array(v, {N, H, W, C});
}

Array pool(const Array& x) { return lax::reduce_window_max(x, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"); }

void BM_maxpool_fwd_jx(benchmark::State& st) {
  Array x = input();
  for (auto _ : st) {
    Array y = pool(x);
    benchmark::DoNotOptimize(y);
  }
}
BENCHMARK(BM_maxpool_fwd_jx)->UseRealTime()->Unit(benchmark::kMillisecond);

// What a training step does: the forward pass and the gradient through jx::vjp.
void BM_maxpool_fwd_bwd_jx(benchmark::State& st) {
  Array x = input();
  Array g = jnp::ones({N, H / 2, W / 2, C});
  for (auto _ : st) {
    auto [y, pullback] = jx::vjp(pool, x);
    Array gx = std::get<0>(pullback(g));
    benchmark::DoNotOptimize(y);
    benchmark::DoNotOptimize(gx);
  }
}
BENCHMARK(BM_maxpool_fwd_bwd_jx)->UseRealTime()->Unit(benchmark::kMillisecond);

// The two primitives bound directly (no linearize/transpose machinery around them).
void BM_maxpool_fwd_bwd_jx_prims(benchmark::State& st) {
  Array x = input();
  Array g = jnp::ones({N, H / 2, W / 2, C});
  for (auto _ : st) {
    Array y = pool(x);
    Array gx = lax::select_and_scatter_add(g, x, lax::WindowSelect::ge, {1, 2, 2, 1}, {1, 2, 2, 1},
                                           {{0, 0}, {0, 0}, {0, 0}, {0, 0}});
    benchmark::DoNotOptimize(y);
    benchmark::DoNotOptimize(gx);
  }
}
BENCHMARK(BM_maxpool_fwd_bwd_jx_prims)->UseRealTime()->Unit(benchmark::kMillisecond);

struct Dnnl {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::memory::desc src_md{{N, C, H, W}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nhwc};
  dnnl::memory::desc dst_md{{N, C, H / 2, W / 2}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nhwc};
  dnnl::pooling_forward::primitive_desc fwd_pd, inf_pd;
  dnnl::pooling_backward::primitive_desc bwd_pd;
  dnnl::pooling_forward fwd, inf;
  dnnl::pooling_backward bwd;
  dnnl::memory src, dst, ws, ddst, dsrc;
  Dnnl() {
    auto desc = [&](dnnl::prop_kind k) {
      return dnnl::pooling_forward::desc(k, dnnl::algorithm::pooling_max, src_md, dst_md, {2, 2}, {2, 2},
                                         {0, 0}, {0, 0});
    };
    fwd_pd = dnnl::pooling_forward::primitive_desc(desc(dnnl::prop_kind::forward_training), eng);
    inf_pd = dnnl::pooling_forward::primitive_desc(desc(dnnl::prop_kind::forward_inference), eng);
    bwd_pd = dnnl::pooling_backward::primitive_desc(
        dnnl::pooling_backward::desc(dnnl::algorithm::pooling_max, src_md, dst_md, {2, 2}, {2, 2}, {0, 0}, {0, 0}),
        eng, fwd_pd);
    fwd = dnnl::pooling_forward(fwd_pd);
    inf = dnnl::pooling_forward(inf_pd);
    bwd = dnnl::pooling_backward(bwd_pd);
    src = dnnl::memory(src_md, eng);
    dst = dnnl::memory(dst_md, eng);
    ws = dnnl::memory(fwd_pd.workspace_desc(), eng);
    ddst = dnnl::memory(dst_md, eng);
    dsrc = dnnl::memory(src_md, eng);
    float* s = static_cast<float*>(src.get_data_handle());
    std::mt19937 gen(1);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (int64_t i = 0; i < N * H * W * C; ++i) s[i] = d(gen);
    float* g = static_cast<float*>(ddst.get_data_handle());
    for (int64_t i = 0; i < N * (H / 2) * (W / 2) * C; ++i) g[i] = 1.0f;
  }
};

void BM_maxpool_fwd_onednn(benchmark::State& st) {
  Dnnl d;
  for (auto _ : st) {
    d.inf.execute(d.strm, {{DNNL_ARG_SRC, d.src}, {DNNL_ARG_DST, d.dst}});
    d.strm.wait();
  }
}
BENCHMARK(BM_maxpool_fwd_onednn)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_maxpool_fwd_bwd_onednn(benchmark::State& st) {
  Dnnl d;
  for (auto _ : st) {
    d.fwd.execute(d.strm, {{DNNL_ARG_SRC, d.src}, {DNNL_ARG_DST, d.dst}, {DNNL_ARG_WORKSPACE, d.ws}});
    d.bwd.execute(d.strm, {{DNNL_ARG_DIFF_DST, d.ddst}, {DNNL_ARG_DIFF_SRC, d.dsrc}, {DNNL_ARG_WORKSPACE, d.ws}});
    d.strm.wait();
  }
}
BENCHMARK(BM_maxpool_fwd_bwd_onednn)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
