// float32 convolution on oneDNN. A convolution of any dimension numbers is one of three
// oneDNN problems (read as matrix products, with (N, C) the lhs batch and feature):
//  - forward: out = conv(lhs, rhs), the common case;
//  - backward weights: a convolution whose "kernel" is larger than its output is the
//    weight gradient of another convolution (what the rhs transpose rule binds: the lhs
//    batch and feature swap roles, strides and dilations swap). oneDNN's weight-gradient
//    kernels compute it far faster than a forward convolution with a 28x28 window.
//  - backward data: a convolution with lhs dilation and unit window strides is the input
//    gradient of a strided convolution (what the lhs transpose rule binds), with the
//    kernel flipped back and its features swapped.
// Primitives and reorders are created once per geometry and cached: creating one JITs code.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/cpu/conv.h"
#include "backend/cpu/scratch.h"

namespace jx::cpu {
namespace {

using dnnl::memory;
using Dims = memory::dims;

enum class Kind { Forward, BackwardData, BackwardWeights };

// One oneDNN convolution: src (N, C, sp), weights ([G,] O/G, C/G, k), dst (N, O, sp'),
// each with the user's element strides; `output` says which of the three is written.
struct Problem {
  Kind kind = Kind::Forward;
  int64_t groups = 1;
  Dims src, wei, dst, src_strides, wei_strides, dst_strides;
  Dims strides, dilates, pad_l, pad_r;
  const float* src_ptr = nullptr;
  const float* wei_ptr = nullptr;
  const float* dst_ptr = nullptr;
  float* out_ptr = nullptr;
  // Forward problems only: out = relu?(conv + bias).
  const float* bias_ptr = nullptr;
  bool relu = false;
};

std::string key_of(const Problem& p) {
  std::string k = std::to_string(int(p.kind)) + ":" + std::to_string(p.groups) + ":" +
                  std::to_string(p.bias_ptr != nullptr) + std::to_string(p.relu);
  for (const Dims* d : {&p.src, &p.wei, &p.dst, &p.src_strides, &p.wei_strides, &p.dst_strides,
                        &p.strides, &p.dilates, &p.pad_l, &p.pad_r}) {
    k += "|";
    for (auto v : *d) k += std::to_string(v) + ",";
  }
  return k;
}

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

memory::desc any_desc(const Dims& d) {
  return memory::desc(d, memory::data_type::f32, memory::format_tag::any);
}
memory::desc user_desc(const Dims& d, const Dims& s) {
  return memory::desc(d, memory::data_type::f32, s);
}

// A user tensor and the layout the primitive wants, with the reorder between them.
struct Operand {
  memory::desc user, chosen;
  std::unique_ptr<dnnl::reorder> to_chosen, from_chosen;
  void prepare(bool is_output) {
    if (user == chosen) return;
    if (is_output)
      from_chosen = std::make_unique<dnnl::reorder>(
          dnnl::reorder::primitive_desc(engine(), chosen, engine(), user));
    else
      to_chosen = std::make_unique<dnnl::reorder>(
          dnnl::reorder::primitive_desc(engine(), user, engine(), chosen));
  }
};

struct Plan {
  dnnl::primitive prim;
  Operand src, wei, dst;
  size_t scratch_bytes = 0;
};

memory::desc bias_desc(const Problem& p) {
  const int64_t features = p.dst[1];
  return memory::desc({features}, memory::data_type::f32, memory::format_tag::a);
}

dnnl::convolution_forward::primitive_desc forward_pd(const Problem& p, const memory::desc& s,
                                                     const memory::desc& w, const memory::desc& d,
                                                     dnnl::prop_kind prop) {
  const memory::desc b = p.bias_ptr ? bias_desc(p) : memory::desc();
  dnnl::convolution_forward::desc desc(prop, dnnl::algorithm::convolution_direct, s, w, b, d,
                                       p.strides, p.dilates, p.pad_l, p.pad_r);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (p.relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  return dnnl::convolution_forward::primitive_desc(desc, attr, engine());
}

// The plan for the layouts s, w, d (user layouts or format_tag::any), and the name of
// the implementation oneDNN picked.
std::unique_ptr<Plan> make_plan_with(const Problem& p, const memory::desc& s, const memory::desc& w,
                                     const memory::desc& d, std::string& impl) {
  auto plan = std::make_unique<Plan>();
  plan->src.user = user_desc(p.src, p.src_strides);
  plan->wei.user = user_desc(p.wei, p.wei_strides);
  plan->dst.user = user_desc(p.dst, p.dst_strides);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  memory::desc scratch;
  if (p.kind == Kind::Forward) {
    auto pd = forward_pd(p, s, w, d, dnnl::prop_kind::forward_inference);
    plan->src.chosen = pd.src_desc();
    plan->wei.chosen = pd.weights_desc();
    plan->dst.chosen = pd.dst_desc();
    scratch = pd.scratchpad_desc();
    impl = pd.impl_info_str();
    plan->prim = dnnl::convolution_forward(pd);
  } else if (p.kind == Kind::BackwardData) {
    auto hint = forward_pd(p, s, w, d, dnnl::prop_kind::forward_training);
    dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, s, w, d,
                                               p.strides, p.dilates, p.pad_l, p.pad_r);
    dnnl::convolution_backward_data::primitive_desc pd(desc, attr, engine(), hint);
    plan->src.chosen = pd.diff_src_desc();
    plan->wei.chosen = pd.weights_desc();
    plan->dst.chosen = pd.diff_dst_desc();
    scratch = pd.scratchpad_desc();
    impl = pd.impl_info_str();
    plan->prim = dnnl::convolution_backward_data(pd);
  } else {
    auto hint = forward_pd(p, s, w, d, dnnl::prop_kind::forward_training);
    dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, s, w, d,
                                                  p.strides, p.dilates, p.pad_l, p.pad_r);
    dnnl::convolution_backward_weights::primitive_desc pd(desc, attr, engine(), hint);
    plan->src.chosen = pd.src_desc();
    plan->wei.chosen = pd.diff_weights_desc();
    plan->dst.chosen = pd.diff_dst_desc();
    scratch = pd.scratchpad_desc();
    impl = pd.impl_info_str();
    plan->prim = dnnl::convolution_backward_weights(pd);
  }
  plan->scratch_bytes = scratch.get_size();
  plan->src.prepare(p.kind == Kind::BackwardData);
  plan->wei.prepare(p.kind == Kind::BackwardWeights);
  plan->dst.prepare(p.kind == Kind::Forward);
  return plan;
}

// The activations (src, dst) in the user's layout when oneDNN has a JIT kernel for it
// (NHWC has, on AVX-512 and AVX2): reordering a [128, 14, 14, 64] tensor to a blocked
// layout and back costs 0.7 ms, against 4 ms for the convolution. Otherwise oneDNN's
// own layouts, with reorders.
std::unique_ptr<Plan> make_plan(const Problem& p) {
  std::string impl;
  try {
    auto plan = make_plan_with(p, user_desc(p.src, p.src_strides), any_desc(p.wei),
                               user_desc(p.dst, p.dst_strides), impl);
    if (impl.find("ref") == std::string::npos && impl.find("gemm") == std::string::npos) return plan;
  } catch (const dnnl::error&) {
  }
  return make_plan_with(p, any_desc(p.src), any_desc(p.wei), any_desc(p.dst), impl);
}

// nullptr when oneDNN has no implementation for the problem. At most kMaxPlans
// geometries are kept (a program with ever new shapes would otherwise grow without
// bound); a plan in use stays alive through its shared_ptr.
constexpr size_t kMaxPlans = 512;
std::shared_ptr<const Plan> plan_for(const Problem& p) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<const Plan>> cache;
  const std::string key = key_of(p);
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it == cache.end()) {
    std::shared_ptr<const Plan> plan;
    try {
      plan = make_plan(p);
    } catch (const dnnl::error&) {
      plan = nullptr;
    }
    if (cache.size() >= kMaxPlans) cache.clear();
    it = cache.emplace(key, std::move(plan)).first;
  }
  return it->second;
}

void run(const Plan& plan, const Problem& p) {
  dnnl::stream stream(engine());
  auto bind = [&](const Operand& op, const float* ptr, Scratch& tmp, bool is_output) {
    memory user(op.user, engine(), const_cast<float*>(ptr));
    if (op.user == op.chosen) return std::pair{user, user};
    tmp.reset(op.chosen.get_size());
    memory chosen(op.chosen, engine(), tmp.data());
    if (!is_output) op.to_chosen->execute(stream, user, chosen);
    return std::pair{user, chosen};
  };
  Scratch ts, tw, td;
  const bool fwd = p.kind == Kind::Forward, bwd_d = p.kind == Kind::BackwardData;
  auto [su, sc] = bind(plan.src, bwd_d ? p.out_ptr : p.src_ptr, ts, bwd_d);
  auto [wu, wc] = bind(plan.wei, p.kind == Kind::BackwardWeights ? p.out_ptr : p.wei_ptr, tw,
                       p.kind == Kind::BackwardWeights);
  auto [du, dc] = bind(plan.dst, fwd ? p.out_ptr : p.dst_ptr, td, fwd);
  Scratch scratch_buf(plan.scratch_bytes);
  memory scratch(memory::desc({int64_t(plan.scratch_bytes)}, memory::data_type::u8, memory::format_tag::x),
                 engine(), scratch_buf.data());
  std::unordered_map<int, memory> args{{DNNL_ARG_SCRATCHPAD, scratch}};
  switch (p.kind) {
    case Kind::Forward:
      args = {{DNNL_ARG_SRC, sc}, {DNNL_ARG_WEIGHTS, wc}, {DNNL_ARG_DST, dc}, {DNNL_ARG_SCRATCHPAD, scratch}};
      if (p.bias_ptr) args.emplace(DNNL_ARG_BIAS, memory(bias_desc(p), engine(), const_cast<float*>(p.bias_ptr)));
      break;
    case Kind::BackwardData:
      args = {{DNNL_ARG_DIFF_SRC, sc}, {DNNL_ARG_WEIGHTS, wc}, {DNNL_ARG_DIFF_DST, dc}, {DNNL_ARG_SCRATCHPAD, scratch}};
      break;
    case Kind::BackwardWeights:
      args = {{DNNL_ARG_SRC, sc}, {DNNL_ARG_DIFF_WEIGHTS, wc}, {DNNL_ARG_DIFF_DST, dc}, {DNNL_ARG_SCRATCHPAD, scratch}};
      break;
  }
  plan.prim.execute(stream, args);
  // The output back into the user's layout, when oneDNN wrote another.
  if (fwd && plan.dst.from_chosen) plan.dst.from_chosen->execute(stream, dc, du);
  if (bwd_d && plan.src.from_chosen) plan.src.from_chosen->execute(stream, sc, su);
  if (p.kind == Kind::BackwardWeights && plan.wei.from_chosen) plan.wei.from_chosen->execute(stream, wc, wu);
  stream.wait();
}

// Appends one dim (size and element stride) to a tensor description.
void push(Dims& dims, Dims& strides, int64_t size, int64_t stride) {
  dims.push_back(size);
  strides.push_back(stride);
}

int64_t prod(const int64_t* v, int n) {
  int64_t r = 1;
  for (int i = 0; i < n; ++i) r *= v[i];
  return r;
}

// The oneDNN spatial extent of an input of size `in` read by windows from pad_lo on, and
// the right padding that makes oneDNN's output-size formula exact; an input the windows
// never reach is dropped (negative right padding), negative left padding skips elements.
struct Span {
  int64_t in, offset, pad_l, pad_r;
};
bool span(int64_t in, int64_t pad_lo, int64_t out, int64_t window, int64_t stride, int64_t dil,
          Span& s) {
  s.offset = 0;
  s.in = in;
  s.pad_l = pad_lo;
  if (pad_lo < 0) {
    s.offset = -pad_lo;
    s.in = in + pad_lo;
    s.pad_l = 0;
  }
  const int64_t reach = (out - 1) * stride + (window - 1) * dil + 1;  // padded extent read
  s.pad_r = reach - s.in - s.pad_l;
  if (s.pad_r < 0) {
    s.in += s.pad_r;
    s.pad_r = 0;
  }
  return s.in > 0 && out > 0 && window > 0;
}

bool forward(const float* lhs, const float* rhs, float* result, const ConvGeometry& g,
             const ConvEpilogue& epilogue) {
  Problem p;
  p.kind = Kind::Forward;
  p.bias_ptr = static_cast<const float*>(epilogue.bias);
  p.relu = epilogue.relu;
  p.groups = g.feature_groups;
  const int64_t G = g.feature_groups;
  int64_t lhs_offset = 0;
  push(p.src, p.src_strides, g.batch, g.lhs_strides[0]);
  push(p.src, p.src_strides, g.in_features, g.lhs_strides[1]);
  if (G > 1) push(p.wei, p.wei_strides, G, g.rhs_strides[0] * (g.out_features / G));
  push(p.wei, p.wei_strides, g.out_features / G, g.rhs_strides[0]);
  push(p.wei, p.wei_strides, g.in_features / G, g.rhs_strides[1]);
  push(p.dst, p.dst_strides, g.batch, g.out_strides[0]);
  push(p.dst, p.dst_strides, g.out_features, g.out_strides[1]);
  for (int d = 0; d < g.spatial; ++d) {
    Span s;
    if (!span(g.in[d], g.pad_lo[d], g.out[d], g.window[d], g.stride[d], g.rhs_dilation[d], s))
      return false;
    lhs_offset += s.offset * g.lhs_strides[2 + d];
    push(p.src, p.src_strides, s.in, g.lhs_strides[2 + d]);
    push(p.wei, p.wei_strides, g.window[d], g.rhs_strides[2 + d]);
    push(p.dst, p.dst_strides, g.out[d], g.out_strides[2 + d]);
    p.strides.push_back(g.stride[d]);
    p.dilates.push_back(g.rhs_dilation[d] - 1);
    p.pad_l.push_back(s.pad_l);
    p.pad_r.push_back(s.pad_r);
  }
  p.src_ptr = lhs + lhs_offset;
  p.wei_ptr = rhs;
  p.out_ptr = result;
  std::shared_ptr<const Plan> plan = plan_for(p);
  if (!plan) return false;
  run(*plan, p);
  return true;
}

// The convolution read as the weight gradient of a forward convolution whose batch is our
// lhs feature, whose input features are our lhs batch, whose kernel is our output and
// whose output is our rhs; its strides are our rhs dilation and its dilation our strides.
bool backward_weights(const float* lhs, const float* rhs, float* result, const ConvGeometry& g) {
  Problem p;
  p.kind = Kind::BackwardWeights;
  const int64_t G = g.batch_groups;  // our batch groups are oneDNN's feature groups
  p.groups = G;
  int64_t lhs_offset = 0;
  push(p.src, p.src_strides, g.in_features, g.lhs_strides[1]);
  push(p.src, p.src_strides, g.batch, g.lhs_strides[0]);
  if (G > 1) push(p.wei, p.wei_strides, G, g.out_strides[1] * (g.out_features / G));
  push(p.wei, p.wei_strides, g.out_features / G, g.out_strides[1]);
  push(p.wei, p.wei_strides, g.batch / G, g.out_strides[0]);
  push(p.dst, p.dst_strides, g.in_features, g.rhs_strides[1]);
  push(p.dst, p.dst_strides, g.out_features, g.rhs_strides[0]);
  for (int d = 0; d < g.spatial; ++d) {
    Span s;
    // Forward-problem sizes: output = our window, kernel = our output.
    if (!span(g.in[d], g.pad_lo[d], g.window[d], g.out[d], g.rhs_dilation[d], g.stride[d], s))
      return false;
    lhs_offset += s.offset * g.lhs_strides[2 + d];
    push(p.src, p.src_strides, s.in, g.lhs_strides[2 + d]);
    push(p.wei, p.wei_strides, g.out[d], g.out_strides[2 + d]);
    push(p.dst, p.dst_strides, g.window[d], g.rhs_strides[2 + d]);
    p.strides.push_back(g.rhs_dilation[d]);
    p.dilates.push_back(g.stride[d] - 1);
    p.pad_l.push_back(s.pad_l);
    p.pad_r.push_back(s.pad_r);
  }
  p.src_ptr = lhs + lhs_offset;
  p.dst_ptr = rhs;
  p.out_ptr = result;
  std::shared_ptr<const Plan> plan = plan_for(p);
  if (!plan) return false;
  run(*plan, p);
  return true;
}

// The convolution read as the input gradient of a forward convolution whose output
// gradient is our lhs and whose input gradient is our output: its stride is our lhs
// dilation, and its kernel is ours with the features swapped and the window flipped
// back (we compute the transpose of that convolution, which flipped it). Needs unit
// window strides.
bool backward_data(const float* lhs, const float* rhs, float* result, const ConvGeometry& g) {
  const int64_t G = g.feature_groups, K = g.out_features, I = g.in_features / G;
  Problem p;
  p.kind = Kind::BackwardData;
  p.groups = G;
  push(p.src, p.src_strides, g.batch, g.out_strides[0]);
  push(p.src, p.src_strides, K, g.out_strides[1]);
  push(p.dst, p.dst_strides, g.batch, g.lhs_strides[0]);
  push(p.dst, p.dst_strides, g.in_features, g.lhs_strides[1]);
  // Flipped weights, contiguous as (G, I, K / G, window...).
  int64_t window = 1;
  for (int d = 0; d < g.spatial; ++d) window *= g.window[d];
  Dims wdims, wstrides;
  if (G > 1) wdims.push_back(G);
  wdims.push_back(I);
  wdims.push_back(K / G);
  for (int d = 0; d < g.spatial; ++d) wdims.push_back(g.window[d]);
  wstrides.assign(wdims.size(), 1);
  for (size_t i = wdims.size() - 1; i-- > 0;) wstrides[i] = wstrides[i + 1] * wdims[i + 1];
  p.wei = wdims;
  p.wei_strides = wstrides;
  for (int d = 0; d < g.spatial; ++d) {
    if (g.stride[d] != 1) return false;
    const int64_t kd = (g.window[d] - 1) * g.rhs_dilation[d];
    const int64_t pad_l = kd - g.pad_lo[d];
    const int64_t pad_r = (g.in[d] - 1) * g.lhs_dilation[d] + kd + 1 - g.out[d] - pad_l;
    if (pad_l < 0 || pad_r < 0 || g.out[d] <= 0 || g.in[d] <= 0) return false;
    push(p.src, p.src_strides, g.out[d], g.out_strides[2 + d]);
    push(p.dst, p.dst_strides, g.in[d], g.lhs_strides[2 + d]);
    p.strides.push_back(g.lhs_dilation[d]);
    p.dilates.push_back(g.rhs_dilation[d] - 1);
    p.pad_l.push_back(pad_l);
    p.pad_r.push_back(pad_r);
  }
  std::shared_ptr<const Plan> plan = plan_for(p);
  if (!plan) return false;
  Scratch flipped(size_t(K * I * window) * sizeof(float));
  float* w = flipped.as<float>();
  const int64_t kg = K / G;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t i = 0; i < I; ++i)
      for (int64_t x0 = 0; x0 < g.window[0]; ++x0)
        for (int64_t x1 = 0; x1 < g.window[1]; ++x1)
          for (int64_t x2 = 0; x2 < g.window[2]; ++x2) {
            const int64_t dst = (((((k / kg) * I + i) * kg + k % kg) * g.window[0] + x0) * g.window[1] + x1) * g.window[2] + x2;
            w[dst] = rhs[k * g.rhs_strides[0] + i * g.rhs_strides[1] +
                         (g.window[0] - 1 - x0) * g.rhs_strides[2] +
                         (g.window[1] - 1 - x1) * g.rhs_strides[3] +
                         (g.window[2] - 1 - x2) * g.rhs_strides[4]];
          }
  p.dst_ptr = lhs;
  p.wei_ptr = w;
  p.out_ptr = result;
  run(*plan, p);
  return true;
}

}  // namespace

bool conv_f32_onednn(const float* lhs, const float* rhs, float* result, const ConvGeometry& g,
                     const ConvEpilogue& epilogue, bool& epilogue_done) {
  epilogue_done = false;
  bool lhs_dilated = false;
  for (int d = 0; d < g.spatial; ++d) lhs_dilated = lhs_dilated || g.lhs_dilation[d] != 1;
  const int64_t window = prod(g.window, g.spatial), out = prod(g.out, g.spatial);
  if (!lhs_dilated && g.feature_groups == 1 && window > out && backward_weights(lhs, rhs, result, g))
    return true;
  // An lhs-dilated convolution has no forward problem. Without lhs dilation the forward
  // problem wins even where backward data was made for it: the input gradient of the
  // tutorial CNN's 32 -> 64 layer (14x14, NHWC) takes 4.5 ms as a forward conv and 5.0 as
  // backward data (4.1 in oneDNN's blocked layout, plus 1.1 of reorders); 32 -> 1 at 28x28
  // takes 4.0 and 6.2.
  if (lhs_dilated && g.batch_groups == 1 && backward_data(lhs, rhs, result, g)) return true;
  if (lhs_dilated || g.batch_groups != 1) return false;
  epilogue_done = forward(lhs, rhs, result, g, epilogue);
  return epilogue_done;
}

}  // namespace jx::cpu
