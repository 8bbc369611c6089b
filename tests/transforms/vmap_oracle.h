// The vmap oracle of the vmap_*_test files (JAX's _CheckBatching): vmap(f) must equal
// f applied to each slice of the batch, eagerly, with the results stacked along out_axes.
// Inputs are built from a deterministic sequence per dtype; f is any flat function
// (usually one primitive bound directly), so one table covers a whole family.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "ops/primitive.h"
#include "support/str.h"
#include "transforms/batching.h"
#include "transforms/bind.h"

namespace jx::testing::vmap_oracle {

using Fn = std::function<std::vector<Array>(const std::vector<Array>&)>;
inline constexpr int kNone = -1;

// f = one primitive with fixed params.
inline Fn prim_fn(ops::Prim p, ops::Params params = {}) {
  return [p, params](const std::vector<Array>& a) { return bind(p, a, params); };
}

// Values spread over a range that exercises signs, fractions and (for floats) values
// outside [-1, 1]; `seed` varies them per operand.
inline Array make_input(DType dt, const Shape& shape, unsigned seed) {
  const int64_t n = shape.numel();
  std::vector<double> v(static_cast<size_t>(n));
  uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (auto& e : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const double u = double(s >> 11) / double(1ull << 53);  // [0, 1)
    if (dt == DType::Bool) e = u < 0.5 ? 0.0 : 1.0;
    else if (is_floating(dt)) e = std::round((u * 6.0 - 3.0) * 64.0) / 64.0;
    else if (is_signed_integer(dt)) e = std::floor(u * 15.0) - 7.0;
    else e = std::floor(u * 200.0);
  }
  return numpy::array<double>(v, shape).astype(dt);
}

// `shape` with `size` inserted at `axis` (an axis of the batched rank; -1 = not mapped).
inline Shape batched_shape(const Shape& shape, int axis, int64_t size) {
  if (axis == kNone) return shape;
  Shape s = shape;
  s.insert(size_t(axis), size);
  return s;
}

// Slice b of x along axis (x itself when not mapped).
inline Array slice_at(const Array& x, int axis, int64_t b) {
  if (axis == kNone) return x;
  return lax::squeeze(lax::slice_in_dim(x, b, b + 1, 1, axis), {axis});
}

// Exact for integers and bool; for floats within rtol (vector and scalar libm paths may
// differ by an ulp between a slice and the whole batch), NaN equal to NaN.
inline void expect_same(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  if (!is_floating(want.dtype())) {
    EXPECT_EQ(got.astype(DType::Int64).to_vector<int64_t>(),
              want.astype(DType::Int64).to_vector<int64_t>())
        << what;
    return;
  }
  const double rtol = want.dtype() == DType::Float64 ? 1e-13 : want.dtype() == DType::Float32 ? 2e-6 : 1e-2;
  auto g = got.astype(DType::Float64).to_vector<double>();
  auto w = want.astype(DType::Float64).to_vector<double>();
  for (size_t i = 0; i < w.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << what << " at flat index " << i;
    } else if (std::isinf(w[i])) {
      EXPECT_EQ(g[i], w[i]) << what << " at flat index " << i;
    } else {
      EXPECT_NEAR(g[i], w[i], rtol * (1e-300 + std::fabs(w[i])) + 1e-300)
          << what << " at flat index " << i;
    }
  }
}

struct Case {
  std::vector<DType> dtypes;    // one per operand
  std::vector<Shape> shapes;    // unbatched shapes
  std::vector<int> in_axes;     // per operand, of the batched rank; kNone = not mapped
  int out_axis = 0;             // of every output; negative counts from the end
  int64_t size = 3;
};

inline std::string describe(const Case& c) {
  std::string s = "operands";
  for (size_t i = 0; i < c.shapes.size(); ++i)
    s += str(" ", type_str(c.dtypes[i], c.shapes[i]), "@",
             c.in_axes[i] == kNone ? std::string("none") : str(c.in_axes[i]));
  return s + str(" out_axes=", c.out_axis, " size=", c.size);
}

// Runs f under vmap on inputs made for `c` and checks it against the loop of slices.
inline void check(const Fn& f, const Case& c, const std::string& name) {
  const std::string what = name + ": " + describe(c);
  std::vector<Array> args, unbatched_example;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    args.push_back(make_input(c.dtypes[i], batched_shape(c.shapes[i], c.in_axes[i], c.size),
                              unsigned(i)));
    unbatched_example.push_back(make_input(c.dtypes[i], c.shapes[i], unsigned(i)));
  }
  std::vector<Array> got;
  try {
    got = tr::vmap_flat(
        f, args, c.in_axes,
        [&](size_t n) { return std::vector<int>(n, c.out_axis); }, c.size);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << " threw: " << e.what();
    return;
  }
  // The loop: f on every slice, each output stacked along out_axis. With an empty batch
  // f still runs once on an unbatched example to give the outputs' shapes and dtypes.
  std::vector<std::vector<Array>> per_slice;
  for (int64_t b = 0; b < c.size; ++b) {
    std::vector<Array> slice;
    for (size_t i = 0; i < args.size(); ++i) slice.push_back(slice_at(args[i], c.in_axes[i], b));
    per_slice.push_back(f(slice));
  }
  std::vector<Array> example = f(unbatched_example);
  ASSERT_EQ(got.size(), example.size()) << what;
  for (size_t k = 0; k < example.size(); ++k) {
    Array want;
    const int out = c.out_axis < 0 ? c.out_axis + example[k].ndim() + 1 : c.out_axis;
    if (c.size == 0) {
      want = numpy::zeros(batched_shape(example[k].shape(), out, 0), example[k].dtype());
    } else {
      std::vector<Array> parts;
      for (auto& outs : per_slice) parts.push_back(lax::expand_dims(outs[k], {out}));
      want = lax::concatenate(parts, out);
    }
    expect_same(got[k], want, str(what, " output ", k));
  }
}

// The batching configurations every primitive of an n-ary family goes through: each
// operand mapped along its first, a middle and its last batched axis, mixes with unmapped
// operands, out_axes 0 and -1 (the last), batch sizes 0, 1 and 3.
inline std::vector<Case> standard_cases(const std::vector<DType>& dtypes,
                                        const std::vector<Shape>& shapes) {
  std::vector<Case> cases;
  const size_t n = shapes.size();
  auto add = [&](std::vector<int> axes, int out, int64_t size) {
    cases.push_back(Case{dtypes, shapes, std::move(axes), out, size});
  };
  const int out1 = -1;
  for (int64_t size : {int64_t(3), int64_t(1), int64_t(0)}) {
    // All mapped at 0; all at their last axis; all at 1 where the rank allows.
    add(std::vector<int>(n, 0), 0, size);
    std::vector<int> last, mid;
    for (auto& s : shapes) {
      last.push_back(int(s.size()));
      mid.push_back(s.empty() ? 0 : 1);
    }
    add(last, out1, size);
    add(mid, 0, size);
  }
  // Operand i mapped alone (the others unmapped), and operand i at 0 with the others at
  // their last axis (mapped operands that disagree on the batch dim).
  for (size_t i = 0; i < n && n > 1; ++i) {
    std::vector<int> alone(n, kNone), mixed;
    alone[i] = int(shapes[i].size());
    add(alone, 0, 3);
    alone[i] = 0;
    add(alone, out1, 2);
    for (size_t j = 0; j < n; ++j) mixed.push_back(j == i ? 0 : int(shapes[j].size()));
    add(mixed, out1, 3);
  }
  return cases;
}

}  // namespace jx::testing::vmap_oracle
