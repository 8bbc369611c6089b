// jit is never slower than eager: a benchmark with a verdict. Each program (reductions over
// every axis subset, softmax / log-softmax / layer norm over rows, BatchNorm statistics and
// training forward/backward in NHWC, mean/var, the gradients of softmax cross-entropy and
// layer norm, a ResNet-like training step) runs eagerly and under jx::jit on the same
// inputs, with a warm cache, in interleaved rounds (eager, jit, jit, eager, ...) so that the
// load of a shared machine hits both; the median of the per-round ratios is the verdict.
// Exit status 1 when a jit run is more than 10% slower than eager in each of up to three
// measurements of that program.
//
//   bench_jit_vs_eager                 # the table and the verdict
//   bench_jit_vs_eager --filter=bn     # only programs whose name contains "bn"
//   bench_jit_vs_eager --compile       # also: cold compile time of the ResNet-like step
//                                      # (fresh JX_CACHE_DIR, 3 runs; fails above 2 s)
//
// Not a Google Benchmark binary: it prints its own table (program, eager ms, jit ms, ratio).
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "support/str.h"

namespace jnp = jx::numpy;
namespace lax = jx::lax;
namespace jr = jx::random;
using jx::Array;
using Arrays = std::vector<Array>;
using Fn = std::function<Arrays(const Arrays&)>;

namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

struct Case {
  std::string name;
  Fn f;
  Arrays inputs;
};

Array normal(int seed, const jx::Shape& s) { return jr::normal(jr::PRNGKey(uint32_t(seed)), s); }

std::string dims_str(const jx::Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += jx::str(i ? "," : "", s[i]);
  return jx::str(r, "]");
}
std::string axes_str(const std::vector<int64_t>& a) {
  std::string r = "(";
  for (size_t i = 0; i < a.size(); ++i) r += jx::str(i ? "," : "", a[i]);
  return jx::str(r, a.size() == 1 ? ",)" : ")");
}

// ---- the programs ----

Array softmax_rows(const Array& x) {
  Array m = jnp::max(x, 1, true);
  Array e = jnp::exp(x - m);
  return e / jnp::sum(e, 1, true);
}
Array log_softmax_rows(const Array& x) {
  Array s = x - jnp::max(x, 1, true);
  return s - jnp::log(jnp::sum(jnp::exp(s), 1, true));
}
Array layer_norm_rows(const Array& x, const Array& scale, const Array& bias) {
  Array mean = jnp::mean(x, 1, true);
  Array var = jnp::mean(jnp::square(x - mean), 1, true);
  return (x - mean) * lax::rsqrt(var + 1e-6) * scale + bias;
}
// Flax BatchNorm in training (use_fast_variance): statistics over N, H, W of NHWC.
Array batch_norm_train(const Array& x, const Array& scale, const Array& bias) {
  const std::vector<int64_t> axes = {0, 1, 2};
  Array mean = jnp::mean(x, axes, true);
  Array mean2 = jnp::mean(jnp::square(x), axes, true);
  Array var = jnp::maximum(mean2 - jnp::square(mean), 0.0);
  return (x - mean) * lax::rsqrt(var + 1e-5) * scale + bias;
}
Array cross_entropy(const Array& logits, const Array& one_hot) {
  return -jnp::mean(jnp::sum(log_softmax_rows(logits) * one_hot, 1));
}

// The ResNet-like step: conv3x3 + BatchNorm + relu blocks with residual adds, NHWC, global
// average pool, dense, softmax cross-entropy, plain SGD.
constexpr int kBlocks = 3;
Array conv3x3(const Array& x, const Array& w) {
  return lax::conv_general_dilated(x, w, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"});
}
Array resnet_loss(const Arrays& p, const Array& x, const Array& one_hot) {
  Array h = jx::nn::relu(batch_norm_train(conv3x3(x, p[0]), p[1], p[2]));
  for (int b = 0; b < kBlocks; ++b) {
    const size_t k = size_t(3 + 3 * b);
    h = h + jx::nn::relu(batch_norm_train(conv3x3(h, p[k]), p[k + 1], p[k + 2]));
  }
  Array pooled = jnp::mean(h, std::vector<int64_t>{1, 2});
  const size_t d = size_t(3 + 3 * kBlocks);
  return cross_entropy(jnp::matmul(pooled, p[d]) + p[d + 1], one_hot);
}
Arrays resnet_step(const Arrays& a) {
  Arrays params(a.begin(), a.end() - 2);
  auto [loss, grads] = jx::value_and_grad(resnet_loss)(params, a[a.size() - 2], a.back());
  Arrays out;
  for (size_t i = 0; i < params.size(); ++i) out.push_back(params[i] - 0.01 * grads[i]);
  out.push_back(loss);
  return out;
}
Arrays resnet_inputs() {
  const int64_t C = 64;
  Arrays a;
  int seed = 100;
  auto conv_w = [&](int64_t cin) { return normal(seed++, {3, 3, cin, C}) * (1.0 / std::sqrt(9.0 * double(cin))); };
  a.push_back(conv_w(16));
  a.push_back(jnp::ones({C}));
  a.push_back(jnp::zeros({C}));
  for (int b = 0; b < kBlocks; ++b) {
    a.push_back(conv_w(C));
    a.push_back(jnp::ones({C}));
    a.push_back(jnp::zeros({C}));
  }
  a.push_back(normal(seed++, {C, 10}) * 0.1);
  a.push_back(jnp::zeros({10}));
  a.push_back(normal(seed++, {64, 14, 14, 16}));
  a.push_back(jx::nn::one_hot(jr::randint(jr::PRNGKey(7), {64}, 0, 10), 10));
  return a;
}

// Every non-empty axis subset of a rank-n array.
std::vector<std::vector<int64_t>> subsets(int n) {
  std::vector<std::vector<int64_t>> out;
  for (int m = 1; m < (1 << n); ++m) {
    std::vector<int64_t> s;
    for (int d = 0; d < n; ++d)
      if (m & (1 << d)) s.push_back(d);
    out.push_back(s);
  }
  return out;
}

std::vector<Case> all_cases() {
  std::vector<Case> cs;
  auto sum_axes = [&](const jx::Shape& s, std::vector<int64_t> axes) {
    cs.push_back({jx::str("sum ", dims_str(s), " axes=", axes_str(axes)),
                  [axes](const Arrays& a) { return Arrays{jnp::sum(a[0], axes)}; }, {normal(1, s)}});
  };
  sum_axes({12544, 64}, {0});
  sum_axes({64, 14, 14, 64}, {0, 1, 2});
  sum_axes({1000, 1000}, {0});
  sum_axes({1000, 1000}, {1});
  sum_axes({1000, 1000}, {0, 1});
  // The registry's fusible reductions over every axis subset of a rank-4 and a rank-3
  // array (argmax is a library call under jit: the eager kernel either way).
  using R = Array (*)(const Array&, jx::numpy::Axes, bool);
  const std::pair<const char*, R> float_ops[] = {
      {"sum", jnp::sum}, {"max", jnp::max}, {"min", jnp::min}, {"prod", jnp::prod}};
  const jx::Shape r4 = {16, 24, 24, 32}, r3 = {96, 64, 48};
  for (const auto& [name, op] : float_ops)
    for (const jx::Shape& s : {r4, r3})
      for (const auto& axes : subsets(int(s.size()))) {
        if (std::strcmp(name, "sum") != 0 && std::strcmp(name, "max") != 0 && s.size() == 4) continue;
        R fn = op;
        cs.push_back({jx::str(std::string(name), " ", dims_str(s), " axes=", axes_str(axes)),
                      [fn, axes](const Arrays& a) { return Arrays{fn(a[0], axes, false)}; },
                      {std::strcmp(name, "prod") == 0 ? jnp::exp(normal(2, s) * 0.01) : normal(2, s)}});
      }
  for (const auto& axes : subsets(3)) {
    cs.push_back({jx::str("all(x>-2) ", dims_str(r3), " axes=", axes_str(axes)),
                  [axes](const Arrays& a) { return Arrays{jnp::all(a[0] > -2.0, axes)}; }, {normal(3, r3)}});
    cs.push_back({jx::str("any(x>2) ", dims_str(r3), " axes=", axes_str(axes)),
                  [axes](const Arrays& a) { return Arrays{jnp::any(a[0] > 2.0, axes)}; }, {normal(3, r3)}});
  }
  for (int64_t axis : {0, 2})
    cs.push_back({jx::str("argmax ", dims_str(r3), " axis=", axis),
                  [axis](const Arrays& a) { return Arrays{jnp::argmax(a[0], axis)}; }, {normal(4, r3)}});
  // Row programs.
  for (const jx::Shape& s : {jx::Shape{128, 1000}, jx::Shape{4096, 256}}) {
    cs.push_back({jx::str("softmax ", dims_str(s)), [](const Arrays& a) { return Arrays{softmax_rows(a[0])}; },
                  {normal(5, s)}});
    cs.push_back({jx::str("log_softmax ", dims_str(s)),
                  [](const Arrays& a) { return Arrays{log_softmax_rows(a[0])}; }, {normal(5, s)}});
    cs.push_back({jx::str("layer_norm ", dims_str(s)),
                  [](const Arrays& a) { return Arrays{layer_norm_rows(a[0], a[1], a[2])}; },
                  {normal(5, s), normal(6, {s[1]}), normal(7, {s[1]})}});
    cs.push_back({jx::str("mean,var rows ", dims_str(s)),
                  [](const Arrays& a) { return Arrays{jnp::mean(a[0], 1), jnp::var(a[0], 1)}; }, {normal(5, s)}});
    cs.push_back({jx::str("mean,var cols ", dims_str(s)),
                  [](const Arrays& a) { return Arrays{jnp::mean(a[0], 0), jnp::var(a[0], 0)}; }, {normal(5, s)}});
    cs.push_back({jx::str("grad softmax_xent ", dims_str(s)),
                  [](const Arrays& a) { return Arrays{jx::grad(cross_entropy)(a[0], a[1])}; },
                  {normal(8, s), jx::nn::one_hot(jr::randint(jr::PRNGKey(9), {s[0]}, 0, s[1]), s[1])}});
    cs.push_back({jx::str("grad layer_norm ", dims_str(s)),
                  [](const Arrays& a) {
                    auto loss = [](const Array& x, const Array& sc, const Array& b, const Array& dy) {
                      return jnp::sum(layer_norm_rows(x, sc, b) * dy);
                    };
                    auto [gx, gs, gb] = jx::grad<0, 1, 2>(loss)(a[0], a[1], a[2], a[3]);
                    return Arrays{gx, gs, gb};
                  },
                  {normal(5, s), normal(6, {s[1]}), normal(7, {s[1]}), normal(10, s)}});
  }
  // BatchNorm in NHWC.
  for (const jx::Shape& s : {jx::Shape{64, 14, 14, 64}, jx::Shape{128, 28, 28, 32}}) {
    const jx::Shape c = {s[3]};
    cs.push_back({jx::str("bn stats ", dims_str(s)),
                  [](const Arrays& a) {
                    const std::vector<int64_t> axes = {0, 1, 2};
                    return Arrays{jnp::mean(a[0], axes), jnp::var(a[0], axes)};
                  },
                  {normal(11, s)}});
    cs.push_back({jx::str("bn train fwd ", dims_str(s)),
                  [](const Arrays& a) { return Arrays{batch_norm_train(a[0], a[1], a[2])}; },
                  {normal(11, s), normal(12, c), normal(13, c)}});
    cs.push_back({jx::str("bn train grad ", dims_str(s)),
                  [](const Arrays& a) {
                    auto loss = [](const Array& x, const Array& sc, const Array& b, const Array& dy) {
                      return jnp::sum(batch_norm_train(x, sc, b) * dy);
                    };
                    auto [gx, gs, gb] = jx::grad<0, 1, 2>(loss)(a[0], a[1], a[2], a[3]);
                    return Arrays{gx, gs, gb};
                  },
                  {normal(11, s), normal(12, c), normal(13, c), normal(14, s)}});
  }
  // Complex elementwise chains (generated code since 2026-12-02; before, library calls).
  for (const jx::Shape& s : {jx::Shape{1 << 20}, jx::Shape{256, 1024}}) {
    auto cnormal = [&](int seed) { return lax::complex(normal(seed, s), normal(seed + 1, s)); };
    const std::complex<float> i(0, 1);
    cs.push_back({jx::str("complex arith c64", dims_str(s)),
                  [i](const Arrays& a) { return Arrays{a[0] * a[1] + jnp::conj(a[0]) * 0.5f - i}; },
                  {cnormal(20), cnormal(22)}});
    cs.push_back({jx::str("complex exp chain c64", dims_str(s)),
                  [i](const Arrays& a) {
                    return Arrays{jnp::abs(jnp::exp(a[0] * a[1]) + jnp::conj(a[0]) / (a[1] + i))};
                  },
                  {cnormal(20), cnormal(22)}});
    cs.push_back({jx::str("power spectrum rows c64", dims_str(s)),
                  [](const Arrays& a) { return Arrays{jnp::sum(jnp::square(jnp::abs(a[0])), -1)}; },
                  {cnormal(24)}});
    cs.push_back({jx::str("grad |z w + 1|^2 c64", dims_str(s)),
                  [](const Arrays& a) {
                    auto loss = [](const Array& z, const Array& w) {
                      return jnp::sum(jnp::square(jnp::abs(z * w + 1.0f)));
                    };
                    return Arrays{jx::grad(loss)(a[0], a[1])};
                  },
                  {cnormal(20), cnormal(22)}});
  }
  cs.push_back({"resnet step [64,14,14,16] 4x(conv+bn+relu)", resnet_step, resnet_inputs()});
  return cs;
}

// ---- timing ----

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Timing {
  double eager_ms = 0, jit_ms = 0;  // medians of each side's samples
  double ratio = 0;                 // median of the per-round ratios jit / eager
};

// Per side: `rounds` samples of `iters` calls each, the two sides alternating which goes
// first, so that a burst of load from other processes lands on both. The verdict uses the
// median of the per-round ratios: each round's two samples are adjacent in time, so a
// machine that slows down for a second moves both, where the ratio of the two medians
// could pair a slow stretch of one side with a quiet stretch of the other.
Timing measure(const Fn& eager, const Fn& jitted, const Arrays& in, int rounds) {
  auto sample = [&](const Fn& f, int iters) {
    double t0 = now_ms();
    for (int i = 0; i < iters; ++i) {
      Arrays out = f(in);
      (void)out;
    }
    return (now_ms() - t0) / iters;
  };
  // Warm: the jit cache (trace + compile), the allocator's size classes, the pages.
  for (int i = 0; i < 2; ++i) {
    sample(eager, 1);
    sample(jitted, 1);
  }
  // About 20 ms per sample, so that timer resolution and one-off hiccups do not matter.
  const double one = std::min(sample(eager, 1), sample(jitted, 1));
  const int iters = std::max(1, std::min(1000, int(20.0 / std::max(one, 1e-3))));
  std::vector<double> e, j, r;
  for (int k = 0; k < rounds; ++k) {
    if (k % 2 == 0) {
      e.push_back(sample(eager, iters));
      j.push_back(sample(jitted, iters));
    } else {
      j.push_back(sample(jitted, iters));
      e.push_back(sample(eager, iters));
    }
    r.push_back(j.back() / e.back());
  }
  return {median(e), median(j), median(r)};
}

// Cold compile of the ResNet-like step in a fresh disk cache: trace + passes + codegen +
// the C++ compiler + dlopen, i.e. the first call of a new jit.
double cold_compile_ms(const std::string& dir) {
  ::setenv("JX_CACHE_DIR", dir.c_str(), 1);
  jx::clear_jit_cache();
  Arrays in = resnet_inputs();
  auto step = jx::jit(resnet_step, {.name = "resnet_step"});
  double t0 = now_ms();
  Arrays out = step(in);
  double t = now_ms() - t0;
  // The first call also runs the step once; subtract one warm run.
  double t1 = now_ms();
  out = step(in);
  return t - (now_ms() - t1);
}

}  // namespace

int main(int argc, char** argv) {
  std::string filter;
  bool compile_time = false;
  int rounds = 9;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--filter=", 0) == 0) filter = a.substr(9);
    else if (a == "--compile") compile_time = true;
    else if (a.rfind("--rounds=", 0) == 0) rounds = std::max(1, std::atoi(a.c_str() + 9));
    else {
      std::fprintf(stderr, "usage: %s [--filter=SUBSTRING] [--rounds=N] [--compile]\n", argv[0]);
      return 2;
    }
  }
  constexpr double kMaxRatio = 1.10;
  int failures = 0;
  std::printf("%-52s %10s %10s %7s\n", "program", "eager ms", "jit ms", "ratio");
  for (const Case& c : all_cases()) {
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    auto jitted = jx::jit(c.f, {.name = "bench_jit_vs_eager"});
    Fn jf = [&](const Arrays& a) { return jitted(a); };
    Timing t = measure(c.f, jf, c.inputs, rounds);
    const char* verdict = "";
    // A program over the line is measured up to twice more, keeping its best measurement:
    // on a shared machine a burst of load can outlast one measurement (9 rounds of about
    // 40 ms), while a jit that really is slower stays slower in all three.
    for (int again = 0; again < 2 && t.ratio > kMaxRatio; ++again) {
      Timing m = measure(c.f, jf, c.inputs, rounds);
      if (m.ratio < t.ratio) t = m;
      verdict = t.ratio > kMaxRatio ? "  SLOWER" : "  (re-measured)";
    }
    if (t.ratio > kMaxRatio) ++failures;
    std::printf("%-52s %10.3f %10.3f %7.2f%s\n", c.name.c_str(), t.eager_ms, t.jit_ms, t.ratio, verdict);
    std::fflush(stdout);
  }
  if (compile_time) {
    const char* old = std::getenv("JX_CACHE_DIR");
    const std::string saved = old ? old : "";
    char tmpl[] = "/tmp/jx_bench_jve_XXXXXX";
    const std::string dir = ::mkdtemp(tmpl);
    std::vector<double> ms;
    for (int i = 0; i < 3; ++i) ms.push_back(cold_compile_ms(jx::str(dir, "/", i)));
    std::filesystem::remove_all(dir);
    if (old) ::setenv("JX_CACHE_DIR", saved.c_str(), 1);
    else ::unsetenv("JX_CACHE_DIR");
    const double m = median(ms);
    std::printf("cold compile of the resnet step: %.0f ms (median of %.0f, %.0f, %.0f)%s\n", m, ms[0], ms[1],
                ms[2], m > 2000 ? "  OVER 2 s" : "");
    if (m > 2000) ++failures;
  }
  if (failures) {
    std::printf("FAIL: %d program(s) slower under jit than eager by more than %.0f%% (or compile over 2 s)\n",
                failures, (kMaxRatio - 1) * 100);
    return 1;
  }
  std::printf("OK: no jit run more than %.0f%% slower than eager\n", (kMaxRatio - 1) * 100);
  return 0;
}
