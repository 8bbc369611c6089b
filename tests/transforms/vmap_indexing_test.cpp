// Batching rules of the indexing family (ops/indexing_batching.cpp): vmap against a loop
// over the batch for slice, dynamic_slice, dynamic_update_slice, gather and every scatter,
// over several dimension-number configurations, modes (with out-of-bounds indices where the
// mode defines them), dtypes, in_axes none/0/1/-1 per operand, out_axes and batch sizes
// 0/1/3; jnp indexing, take and .at[] under vmap; hand-derived values.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "jx/transforms.h"
#include "transforms/vmap_testing.h"

namespace {

using namespace vmap_testing;
using Mode = lax::GatherScatterMode;
using GDN = lax::GatherDimensionNumbers;
using SDN = lax::ScatterDimensionNumbers;

std::string dname(DType t) { return jx::dtype_name(t); }

TEST(VmapIndexing, Slice) {
  for (DType t : {DType::Float32, DType::Int32, DType::Bool, DType::Float16}) {
    auto f = [](std::vector<int64_t> s, std::vector<int64_t> l, std::vector<int64_t> st) {
      return [=](const Arrays& a) { return Arrays{lax::slice(a[0], s, l, st)}; };
    };
    check_vmap("slice " + dname(t), f({1, 0}, {3, 2}, {}), {{{4, 3}, t}});
    check_vmap("slice strided " + dname(t), f({0, 1}, {4, 3}, {3, 2}), {{{4, 3}, t}});
    check_vmap("slice empty " + dname(t), f({2}, {2}, {}), {{{4}, t}});
  }
}

TEST(VmapIndexing, DynamicSlice) {
  for (DType t : {DType::Float32, DType::Int32, DType::Bool}) {
    auto f = [](std::vector<int64_t> sizes) {
      return [=](const Arrays& a) {
        return Arrays{lax::dynamic_slice(a[0], Arrays(a.begin() + 1, a.end()), sizes, false)};
      };
    };
    // Starts from -1 to 5 in a [5, 4] operand: clamped so the window fits.
    check_vmap("dynamic_slice 2d " + dname(t), f({2, 3}),
               {{{5, 4}, t}, idx({}, -1, 6), idx({}, -1, 5)});
    check_vmap("dynamic_slice 1d " + dname(t), f({2}), {{{4}, t}, idx({}, 0, 4, DType::Int64)});
    check_vmap("dynamic_slice 0d " + dname(t), f({}), {{{}, t}});
    check_vmap("dynamic_slice empty window " + dname(t), f({0, 2}),
               {{{3, 4}, t}, idx({}, 0, 3), idx({}, 0, 3)});
  }
  // Negative starts count from the end (lax's wrapper adds the dim size before binding).
  Fn neg = [](const Arrays& a) { return Arrays{lax::dynamic_slice(a[0], {a[1]}, {2})}; };
  check_vmap("dynamic_slice negative starts", neg, {{{5}}, idx({}, -5, 5)});
  Fn neg_update = [](const Arrays& a) {
    return Arrays{lax::dynamic_update_slice(a[0], a[1], {a[2]})};
  };
  check_vmap("dynamic_update_slice negative starts", neg_update, {{{5}}, {{2}}, idx({}, -5, 5)});
}

TEST(VmapIndexing, DynamicUpdateSlice) {
  for (DType t : {DType::Float32, DType::Int32, DType::Bool}) {
    Fn f = [](const Arrays& a) {
      return Arrays{lax::dynamic_update_slice(a[0], a[1], Arrays(a.begin() + 2, a.end()), false)};
    };
    check_vmap("dynamic_update_slice 2d " + dname(t), f,
               {{{5, 4}, t}, {{2, 3}, t}, idx({}, -1, 6), idx({}, -1, 5)});
    check_vmap("dynamic_update_slice 1d " + dname(t), f, {{{4}, t}, {{2}, t}, idx({}, 0, 4)});
    check_vmap("dynamic_update_slice 0d " + dname(t), f, {{{}, t}, {{}, t}});
  }
}

// Gathers: dimension numbers, slice sizes and the (unbatched) operand and indices.
struct GatherCase {
  std::string name;
  GDN dn;
  std::vector<int64_t> slice_sizes;
  Shape operand, indices;
  int64_t lo, hi;  // index range
};

const GatherCase kGathers[] = {
    {"rows", {{1}, {0}, {0}, {}, {}}, {1, 3}, {4, 3}, {2, 1}, 0, 4},
    {"points", {{}, {0}, {0}, {}, {}}, {1}, {5}, {3, 1}, 0, 5},
    {"points 2 batch dims", {{}, {0}, {0}, {}, {}}, {1}, {5}, {2, 3, 1}, 0, 5},
    {"windows", {{1, 2}, {}, {0, 1}, {}, {}}, {2, 3}, {4, 5}, {2, 2}, 0, 3},
    {"columns", {{0}, {1}, {1}, {}, {}}, {3, 1}, {3, 4}, {2, 1}, 0, 4},
    {"one index", {{0}, {0}, {0}, {}, {}}, {1, 3}, {4, 3}, {1}, 0, 4},
    {"operand batching dims", {{1}, {1}, {1}, {0}, {0}}, {1, 1, 3}, {2, 4, 3}, {2, 1}, 0, 4},
    {"indices batching dim 1", {{}, {1}, {1}, {0}, {1}}, {1, 1}, {2, 5}, {3, 2, 1}, 0, 5},
};

TEST(VmapIndexing, Gather) {
  for (const GatherCase& c : kGathers) {
    for (DType t : {DType::Float32, DType::Int32, DType::Bool, DType::Float16}) {
      for (Mode m : {Mode::promise_in_bounds, Mode::clip, Mode::fill_or_drop}) {
        // The modes differ only in index handling: one dtype covers them.
        if (m != Mode::promise_in_bounds && t != DType::Float32) continue;
        Fn f = [&c, m](const Arrays& a) {
          return Arrays{lax::gather(a[0], a[1], c.dn, c.slice_sizes, m)};
        };
        // clip and fill_or_drop define out-of-bounds windows: test those too.
        const int64_t lo = m == Mode::promise_in_bounds ? c.lo : c.lo - 2;
        const int64_t hi = m == Mode::promise_in_bounds ? c.hi : c.hi + 2;
        check_vmap("gather " + c.name + " " + dname(t) + " mode " + std::to_string(int(m)), f,
                   {{c.operand, t}, idx(c.indices, lo, hi)});
      }
    }
  }
  // A fill value and int64 indices.
  const GatherCase& c = kGathers[3];
  Fn f = [&c](const Arrays& a) {
    return Arrays{lax::gather(a[0], a[1], c.dn, c.slice_sizes, Mode::fill_or_drop, -7.0)};
  };
  check_vmap("gather fill value", f, {{c.operand, DType::Float32}, idx(c.indices, -2, 5, DType::Int64)});
}

struct ScatterCase {
  std::string name;
  SDN dn;
  Shape operand, indices, updates;
  int64_t lo, hi;
};

const ScatterCase kScatters[] = {
    {"points", {{}, {0}, {0}, {}, {}}, {5}, {3, 1}, {3}, 0, 5},
    {"rows", {{1}, {0}, {0}, {}, {}}, {4, 3}, {2, 1}, {2, 3}, 0, 4},
    {"windows", {{1, 2}, {}, {0, 1}, {}, {}}, {4, 5}, {2, 2}, {2, 2, 3}, 0, 3},
    {"columns", {{0}, {1}, {1}, {}, {}}, {3, 4}, {2, 1}, {3, 2}, 0, 4},
    {"operand batching dims", {{1}, {1}, {1}, {0}, {0}}, {2, 4, 3}, {2, 1}, {2, 3}, 0, 4},
    {"indices batching dim 1", {{}, {1}, {1}, {0}, {1}}, {2, 5}, {3, 2, 1}, {3, 2}, 0, 5},
};

using ScatterFn = Array (*)(const Array&, const Array&, const Array&, const SDN&, Mode, bool, bool);

TEST(VmapIndexing, ScatterFamily) {
  const std::pair<const char*, ScatterFn> ops[] = {
      {"scatter_add", lax::scatter_add}, {"scatter_mul", lax::scatter_mul},
      {"scatter_min", lax::scatter_min}, {"scatter_max", lax::scatter_max}};
  for (const ScatterCase& c : kScatters) {
    for (const auto& [name, op] : ops) {
      for (DType t : {DType::Float32, DType::Int32, DType::Float16}) {
        for (Mode m : {Mode::fill_or_drop, Mode::clip}) {
          // Every configuration in float32 and fill_or_drop; clip and the other dtypes on two.
          const bool main_case = c.name == "rows" || c.name == "windows";
          if ((t != DType::Float32 || m == Mode::clip) && !main_case) continue;
          if (t != DType::Float32 && m == Mode::clip) continue;
          Fn f = [&c, op = op, m](const Arrays& a) {
            return Arrays{op(a[0], a[1], a[2], c.dn, m, false, false)};
          };
          check_vmap(std::string(name) + " " + c.name + " " + dname(t) + " mode " +
                         std::to_string(int(m)),
                     f, {{c.operand, t}, idx(c.indices, c.lo - 1, c.hi + 1), {c.updates, t}},
                     t == DType::Float16 ? 1e-3 : 1e-6);
        }
      }
    }
  }
}

// scatter (set): with repeated indices which update wins is unspecified, so the indices of
// each batch member are distinct and the windows do not overlap.
TEST(VmapIndexing, Scatter) {
  for (size_t i : {0, 1, 3, 4}) {
    const ScatterCase& c = kScatters[i];
    for (DType t : {DType::Float32, DType::Int32, DType::Bool}) {
      Fn f = [&c](const Arrays& a) {
        return Arrays{lax::scatter(a[0], a[1], a[2], c.dn, Mode::fill_or_drop, false, true)};
      };
      check_vmap("scatter " + c.name + " " + dname(t), f,
                 {{c.operand, t}, unique_idx(c.indices, c.lo, c.hi), {c.updates, t}});
    }
  }
}

TEST(VmapIndexing, Nested) {
  const GatherCase& g = kGathers[0];
  Fn gather = [&g](const Arrays& a) { return Arrays{lax::gather(a[0], a[1], g.dn, g.slice_sizes)}; };
  check_nested("gather", gather, {{g.operand}, idx(g.indices, 0, 4)}, {1, 0}, {0, 2});
  check_nested("gather indices only", gather, {{g.operand}, idx(g.indices, 0, 4)}, {kNone, 0},
               {kNone, 1});
  const ScatterCase& s = kScatters[1];
  Fn scatter = [&s](const Arrays& a) { return Arrays{lax::scatter_add(a[0], a[1], a[2], s.dn)}; };
  check_nested("scatter_add", scatter, {{s.operand}, idx(s.indices, 0, 4), {s.updates}},
               {kNone, 0, 1}, {1, kNone, 0});
  Fn ds = [](const Arrays& a) { return Arrays{lax::dynamic_slice(a[0], {a[1]}, {2}, false)}; };
  check_nested("dynamic_slice", ds, {{{5}}, idx({}, 0, 5)}, {0, kNone}, {kNone, 0});
}

// jnp-level indexing under vmap (jnp lowers to gather/scatter plus index arithmetic).
TEST(VmapIndexing, NumpyIndexing) {
  const DType f32 = DType::Float32;
  check_vmap("x[idx]", [](const Arrays& a) { return Arrays{a[0](a[1])}; },
             {{{5, 3}, f32}, idx({4}, -5, 5)});
  check_vmap("x[idx, 1:]", [](const Arrays& a) { return Arrays{a[0](a[1], jx::slice(1, 3))}; },
             {{{5, 3}, f32}, idx({2, 2}, 0, 5)});
  check_vmap("x[1, idx]", [](const Arrays& a) { return Arrays{a[0](1, a[1])}; },
             {{{5, 3}, f32}, idx({2}, 0, 3)});
  check_vmap("take axis 1", [](const Arrays& a) { return Arrays{jnp::take(a[0], a[1], 1)}; },
             {{{2, 4}, f32}, idx({3}, -1, 5)});  // default mode fill: out of bounds is NaN
  check_vmap("take flat", [](const Arrays& a) { return Arrays{jnp::take(a[0], a[1])}; },
             {{{2, 4}, DType::Int32}, idx({3}, 0, 8)});
  check_vmap("at add", [](const Arrays& a) { return Arrays{a[0].at(a[1]).add(a[2])}; },
             {{{6}, f32}, idx({4}, -6, 6), {{4}, f32}});
  check_vmap("at rows set", [](const Arrays& a) { return Arrays{a[0].at(a[1]).set(a[2])}; },
             {{{4, 2}, f32}, unique_idx({2}, 0, 4), {{2, 2}, f32}});
  check_vmap("at max", [](const Arrays& a) { return Arrays{a[0].at(a[1]).max(a[2])}; },
             {{{5}, DType::Int32}, idx({3}, 0, 5), {{3}, DType::Int32}});
  check_vmap("at get clip", [](const Arrays& a) {
    jx::AtOptions o;
    o.mode = jx::IndexMode::clip;
    return Arrays{a[0].at(a[1]).get(o)};
  }, {{{5}, f32}, idx({3}, -3, 8)});
}

// Per-example gradients through indexing: grad's transposes (gather -> scatter_add,
// dynamic_slice -> dynamic_update_slice) run batched.
TEST(VmapIndexing, PerExampleGradients) {
  const DType f64 = DType::Float64;
  check_vmap("grad of sum(x[i]^2)", [](const Arrays& a) {
    auto loss = [&](const Array& x) { return jnp::sum(jnp::square(x(a[1]))); };
    return Arrays{jx::grad(loss)(a[0])};
  }, {{{5, 2}, f64}, idx({3}, 0, 5)}, 1e-12);
  check_vmap("grad of sum(dynamic_slice(x, s)^2)", [](const Arrays& a) {
    auto loss = [&](const Array& x) {
      return jnp::sum(jnp::square(lax::dynamic_slice(x, {a[1]}, {2}, false)));
    };
    return Arrays{jx::grad(loss)(a[0])};
  }, {{{5}, f64}, idx({}, 0, 5)}, 1e-12);
}

// Hand-derived: rows of x = [[0, 1], [2, 3], [4, 5]] picked per batch member.
TEST(VmapIndexing, HandValues) {
  Array x = jnp::array<float>({0, 1, 2, 3, 4, 5}, {3, 2});
  Array i = jnp::array<int32_t>({2, 0, 1}, {3});  // member k picks row i[k]
  auto pick = jx::vmap([](const Array& xs, const Array& k) { return xs(k); },
                       {.in_axes = {jx::none, 0}});
  EXPECT_EQ(pick(x, i).to_vector<float>(), (std::vector<float>{4, 5, 0, 1, 2, 3}));
  // Both batched: member k of x is column k of x^T (in_axes 1), element i[k] of it.
  Array xt = jnp::array<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  auto elem = jx::vmap([](const Array& col, const Array& k) { return col(k); },
                       {.in_axes = {1, 0}});
  Array j = jnp::array<int32_t>({1, 0, 1}, {3});
  EXPECT_EQ(elem(xt, j).to_vector<float>(), (std::vector<float>{3, 1, 5}));
  // Per-member .at[].add on a shared zero vector.
  auto add = jx::vmap([](const Array& k, const Array& v) {
    return jnp::zeros({3}).at(k).add(v);
  });
  EXPECT_EQ(add(i, jnp::array<float>({10, 20, 30})).to_vector<float>(),
            (std::vector<float>{0, 0, 10, 20, 0, 0, 0, 30, 0}));
  // dynamic_slice with batched starts, clamped: starts 0, 3 (-> 2), 1 of length 2 in [0..3].
  auto ds = jx::vmap([](const Array& s) {
    return lax::dynamic_slice(jnp::array<float>({0, 1, 2, 3}), {s}, {2}, false);
  });
  EXPECT_EQ(ds(jnp::array<int32_t>({0, 3, 1})).to_vector<float>(),
            (std::vector<float>{0, 1, 2, 3, 1, 2}));
}

// A batched operand is never transposed: the batch dim becomes a window dim where it is.
TEST(VmapIndexing, OperandStaysInPlace) {
  const GatherCase& g = kGathers[0];
  Array idx_arr = jnp::array<int32_t>({1, 3}, {2, 1});
  auto f = [&](const Array& x) {
    return jx::vmap([&](const Array& m) { return lax::gather(m, idx_arr, g.dn, g.slice_sizes); },
                    {.in_axes = 2, .out_axes = 2})(x);
  };
  std::ostringstream os;
  os << jx::make_jaxpr(f)(jnp::zeros({4, 3, 7}));
  const std::string j = os.str();
  EXPECT_EQ(j.find("transpose"), std::string::npos) << j;
  EXPECT_NE(j.find("offset_dims=(1, 2)"), std::string::npos) << j;
  EXPECT_NE(j.find("slice_sizes=(1, 3, 7)"), std::string::npos) << j;
}

}  // namespace
