// Per-example weight gradients: vmap(grad) of a dense layer makes a batched dot_general
// with no contraction (an outer product per example), which the CPU kernel computes as
// one product per element (src/backend/cpu/dot.cpp, outer_batched), with non-temporal
// stores above 8 MB. Checked against the naive reference kernel (any layout, float32 and
// float64, sizes not a multiple of the vector width, outputs past the streaming
// threshold) and, end to end, against a loop of grads at a size that streams.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "backend/cpu/dot.h"
#include "jx/jx.h"
#include "support/str.h"
#include "testing/check_grads.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;
using jx::DType;
using jx::Shape;

struct OuterCase {
  Shape lhs, rhs;
  jx::cpu::DotDims dims;
  const char* name;
};

Array random_array(const Shape& s, DType t, uint32_t seed) {
  return jx::random::uniform(jx::random::PRNGKey(seed), s, t, -2.0, 2.0);
}

std::vector<char> bytes_of(const Array& a) {
  std::vector<char> b(size_t(a.size()) * jx::itemsize(a.dtype()) + 64);
  if (a.dtype() == DType::Float32) {
    std::vector<float> v = a.to_vector<float>();
    if (!v.empty()) std::memcpy(b.data(), v.data(), v.size() * sizeof(float));  // data() may be null
  } else {
    std::vector<double> v = a.to_vector<double>();
    if (!v.empty()) std::memcpy(b.data(), v.data(), v.size() * sizeof(double));
  }
  return b;
}

std::vector<double> as_doubles(DType t, const char* p, int64_t n) {
  std::vector<double> r(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (t == DType::Float32) {
      float f;
      std::memcpy(&f, p + i * 4, 4);
      r[size_t(i)] = f;
    } else {
      std::memcpy(&r[size_t(i)], p + i * 8, 8);
    }
  }
  return r;
}

// The product of the dims that are neither batch nor contracting.
int64_t free_size(const Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
  int64_t n = 1;
  for (size_t d = 0; d < s.size(); ++d) {
    auto in = [&](const std::vector<int64_t>& v) { return std::find(v.begin(), v.end(), int64_t(d)) != v.end(); };
    if (!in(batch) && !in(contracting)) n *= s[d];
  }
  return n;
}

TEST(VmapPerExample, OuterProductKernelEqualsTheReference) {
  const std::vector<OuterCase> cases = {
      {{5, 7}, {5, 3}, {{}, {}, {0}, {0}}, "batched outer"},
      {{7, 5}, {3, 5}, {{}, {}, {1}, {1}}, "batch dim last (strided operands)"},
      {{5, 7, 1}, {5, 1, 37}, {{2}, {1}, {0}, {0}}, "size-1 contraction, odd width"},
      {{2, 3, 4}, {2, 3, 5}, {{}, {}, {0, 1}, {0, 1}}, "two batch dims"},
      {{6}, {9}, {{}, {}, {}, {}}, "unbatched outer"},
      {{3, 1}, {3}, {{}, {}, {0}, {0}}, "n = 1"},
      {{0, 4}, {0, 3}, {{}, {}, {0}, {0}}, "empty batch"},
      // 4 * 700 * 800 * 4 bytes = 9 MB: written with non-temporal stores.
      {{4, 700}, {4, 800}, {{}, {}, {0}, {0}}, "streaming output"},
      {{4, 700}, {801, 4}, {{}, {}, {0}, {1}}, "streaming, odd rows, strided rhs"},
  };
  for (DType t : {DType::Float32, DType::Float64}) {
    for (const OuterCase& c : cases) {
      // Small outputs also at an odd element offset; the large ones have odd rows already.
      const bool large = c.lhs.numel() * c.rhs.numel() > 1'000'000;
      for (size_t misalign : {size_t(0), jx::itemsize(t)}) {
        if (large && misalign) continue;
        SCOPED_TRACE(jx::str(c.name, " ", jx::dtype_name(t), " output offset ", misalign));
        std::vector<char> l = bytes_of(random_array(c.lhs, t, 1)), r = bytes_of(random_array(c.rhs, t, 2));
        int64_t n = 1;
        for (int64_t d : c.dims.lhs_batch) n *= c.lhs[size_t(d)];
        n *= free_size(c.lhs, c.dims.lhs_batch, c.dims.lhs_contracting) *
             free_size(c.rhs, c.dims.rhs_batch, c.dims.rhs_contracting);
        std::vector<char> fast(size_t(n) * jx::itemsize(t) + 64, 7), ref(fast.size(), 9);
        jx::cpu::dot_general(t, t, l.data(), c.lhs.data(), int(c.lhs.size()), r.data(), c.rhs.data(),
                             int(c.rhs.size()), c.dims, fast.data() + misalign);
        jx::cpu::dot_general_reference(t, t, l.data(), c.lhs.data(), int(c.lhs.size()), r.data(),
                                       c.rhs.data(), int(c.rhs.size()), c.dims, ref.data());
        // One product per element: the reference's rounding exactly (it adds the product
        // to +0, which only changes the sign of a zero).
        std::vector<double> f = as_doubles(t, fast.data() + misalign, n), g = as_doubles(t, ref.data(), n);
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(f[size_t(i)], g[size_t(i)]) << "element " << i;
        EXPECT_EQ(fast[size_t(n) * jx::itemsize(t) + misalign], 7) << "wrote past the end";
      }
    }
  }
}

TEST(VmapPerExample, StreamingPerExampleGradientsEqualALoopOfGrads) {
  // Large enough that the [B, 700, 400] weight gradient (9 MB) is streamed.
  using Params = std::map<std::string, Array>;
  Params p{{"w", random_array({700, 400}, DType::Float32, 3) * 0.05},
           {"b", random_array({400}, DType::Float32, 4)}};
  const int64_t batch = 8;
  Array xs = random_array({batch, 700}, DType::Float32, 5);
  Array ys = random_array({batch, 400}, DType::Float32, 6);
  auto loss = [](const Params& q, const Array& x, const Array& y) {
    Array pred = jnp::tanh(jnp::matmul(x, q.at("w")) + q.at("b"));
    return jnp::sum((pred - y) * (pred - y));
  };
  Params per = jx::vmap(jx::grad(loss), {.in_axes = {jx::none, 0, 0}})(p, xs, ys);
  ASSERT_EQ(per.at("w").shape(), (Shape{batch, 700, 400}));
  for (int64_t i = 0; i < batch; i += 3) {
    Params g = jx::grad(loss)(p, jnp::take(xs, i, 0), jnp::take(ys, i, 0));
    // Each example's weight gradient is the same outer product either way: bit for bit.
    EXPECT_TRUE(jnp::array_equal(jnp::take(per.at("w"), i, 0), g.at("w")).item<bool>()) << "example " << i;
    jx::testing::expect_close(jnp::take(per.at("b"), i, 0), g.at("b"), 1e-6, 1e-5, "bias gradient");
  }
}

}  // namespace
