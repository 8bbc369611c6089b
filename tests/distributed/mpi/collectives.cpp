// Multi-process runs over MPI, run by ctest as `mpirun -np 2 test_mpi_collectives DIR`
// (tests/CMakeLists.txt), with 1 and with 2 CPU devices per process, and in 3 processes of
// one device (the ring reduce-scatter beyond a pair): the global device
// list, every collective across the processes against hand-computed values, data-parallel
// gradients against the full batch's, mismatched programs as a clear error that leaves the
// processes in step, and checkpoints written once by process 0 and read by both.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "jx/jx.h"
#include "testing/expect_error.h"

namespace {

namespace jnp = jx::numpy;
namespace lax = jx::lax;
using jx::Array;
using jx::Tree;

std::string g_dir;

int64_t local() { return jx::local_device_count(); }
int64_t global() { return local() * jx::process_count(); }
int64_t first() { return jx::process_index() * local(); }

// Replica g's value row: [g + 1, 2g, -g] (float32), for this process' replicas.
Array rows() {
  Array g = jnp::arange(first(), first() + local()).astype(jx::float32);
  return jnp::stack({g + 1.0f, g * 2.0f, -g}, 1);
}

std::vector<float> values(const Array& a) { return a.astype(jx::float32).to_vector<float>(); }

TEST(Mpi, Devices) {
  ASSERT_GE(jx::process_count(), 2);
  EXPECT_TRUE(jx::distributed::is_initialized());
  EXPECT_EQ(jx::device_count(), jx::process_count() * local());
  std::vector<jx::Device> all = jx::devices();
  ASSERT_EQ(int64_t(all.size()), global());
  for (int64_t k = 0; k < global(); ++k) {
    EXPECT_EQ(all[size_t(k)].id, k);
    EXPECT_EQ(all[size_t(k)].process_index, k / local());
  }
  for (const jx::Device& d : jx::local_devices()) EXPECT_EQ(d.process_index, jx::process_index());
  EXPECT_EQ(int64_t(jx::local_devices().size()), local());
}

TEST(Mpi, Reductions) {
  const double G = double(global());
  // sum over g < G of (g + 1), 2g, -g; max and min of each column.
  const std::vector<float> sum{float(G * (G + 1) / 2), float(G * (G - 1)), float(-G * (G - 1) / 2)};
  const std::vector<float> max{float(G), float(2 * (G - 1)), 0.0f};
  const std::vector<float> min{1.0f, 0.0f, float(-(G - 1))};
  auto run = [&](auto f) { return jx::pmap(f, {.axis_name = "i"})(rows()); };
  Array s = run([](const Array& x) { return lax::psum(x, "i"); });
  Array m = run([](const Array& x) { return lax::pmean(x, "i"); });
  Array hi = run([](const Array& x) { return lax::pmax(x, "i"); });
  Array lo = run([](const Array& x) { return lax::pmin(x, "i"); });
  for (int64_t i = 0; i < local(); ++i) {
    EXPECT_EQ(values(s(i)), sum) << "replica " << i;
    std::vector<float> mean = sum;
    for (float& v : mean) v = float(v / G);
    EXPECT_EQ(values(m(i)), mean);
    EXPECT_EQ(values(hi(i)), max);
    EXPECT_EQ(values(lo(i)), min);
  }
  // Without a native MPI reduction (float16) and from bool (psum counts in int32).
  Array h = jx::pmap([](const Array& x) { return lax::psum(x.astype(jx::float16), "i"); }, {.axis_name = "i"})(rows());
  EXPECT_EQ(h.dtype(), jx::float16);
  EXPECT_EQ(values(h(0)), sum);
  Array b = jx::pmap([](const Array& x) { return lax::psum(x > 0.0f, "i"); }, {.axis_name = "i"})(rows());
  EXPECT_EQ(b.dtype(), jx::int32);
  EXPECT_EQ(b(0).to_vector<int32_t>(), (std::vector<int32_t>{int32_t(G), int32_t(G - 1), 0}));
}

// psum of a value that dies there reduces in place in its buffer (the compiled program
// hands it over); an argument, or a value read again after the psum, must keep its values.
TEST(Mpi, InPlaceAllReduceNeverOverwritesALiveValue) {
  const double G = double(global());
  const Array x = rows();
  const std::vector<float> before = values(x);
  auto f = jx::pmap(
      [](const Array& v) {
        Array dies = v * 2.0f;   // read only by its psum
        Array lives = v + 1.0f;  // read again after its psum
        return std::make_tuple(lax::psum(dies, "i"), lax::psum(v, "i"), lax::psum(lives, "i") + lives);
      },
      {.axis_name = "i"});
  auto [twice, sum, plus] = f(x);
  const std::vector<float> total{float(G * (G + 1) / 2), float(G * (G - 1)), float(-G * (G - 1) / 2)};
  EXPECT_EQ(values(x), before);  // the argument
  for (int64_t i = 0; i < local(); ++i) {
    std::vector<float> want_twice = total, want_plus = total;
    for (size_t k = 0; k < 3; ++k) {
      want_twice[k] *= 2;
      want_plus[k] += float(G) + before[size_t(i) * 3 + k] + 1.0f;
    }
    EXPECT_EQ(values(twice(i)), want_twice) << "replica " << i;
    EXPECT_EQ(values(sum(i)), total) << "replica " << i;
    EXPECT_EQ(values(plus(i)), want_plus) << "replica " << i;
  }
}

// A data-parallel update with the parameters donated (updated in place where a replica
// owns them): the same values as without donation, and the caller's array deleted.
TEST(Mpi, DonatedParametersUpdateLikeUndonatedOnes) {
  auto step = [](const Array& p, const Array& g) { return p - lax::pmean(g, "i") * 0.5f; };
  auto plain = jx::pmap(step, {.axis_name = "i", .in_axes = {jx::none, 0}, .out_axes = jx::none});
  auto donating = jx::pmap(step, {.axis_name = "i", .in_axes = {jx::none, 0}, .out_axes = jx::none,
                                  .donate_argnums = {0}});
  Array p = jnp::array<float>({1, 2, 3}), q = jnp::array<float>({1, 2, 3});
  for (int k = 0; k < 3; ++k) {
    Array old = q;
    p = plain(p, rows());
    q = donating(q, rows());
    EXPECT_FALSE(old.is_concrete()) << "step " << k;  // deleted by the donation
    EXPECT_EQ(values(q), values(p)) << "step " << k;
  }
}

// The weight update sharded over the replicas (ZeRO-1, bench_data_parallel
// --shard-update): reduce-scatter the gradient, update this replica's part, all-gather the
// parameters. It must equal the replicated update (pmean, then the same update everywhere).
TEST(Mpi, ShardedUpdateEqualsReplicatedUpdate) {
  const int64_t G = global(), size = 6 * G;
  auto grad_of = [](const Array& p, const Array& x) { return jnp::sin(p * x) * x; };  // per replica
  auto replicated = jx::pmap(
      [&](const Array& p, const Array& x) { return p - lax::pmean(grad_of(p, x), "i") * 0.1f; },
      {.axis_name = "i", .in_axes = {jx::none, 0}, .out_axes = jx::none});
  auto sharded = jx::pmap(
      [&](const Array& p, const Array& x) {
        const Array g = lax::psum_scatter(grad_of(p, x).reshape({G, size / G}), "i") / float(G);
        const Array mine = lax::dynamic_index_in_dim(p.reshape({G, size / G}), lax::axis_index("i"), 0, false);
        return lax::all_gather(mine - g * 0.1f, "i", 0, true);
      },
      {.axis_name = "i", .in_axes = {jx::none, 0}, .out_axes = jx::none});
  Array p = jnp::arange(size).astype(jx::float32) * 0.01f, q = p;
  for (int step = 0; step < 3; ++step) {
    const Array x = jnp::cos(jnp::arange(local() * size).astype(jx::float32) + float(step + first())).reshape({local(), size});
    p = replicated(p, x);
    q = sharded(q, x);
  }
  EXPECT_TRUE(jnp::allclose(p, q, 1e-6, 1e-7).item<bool>()) << jnp::max(jnp::abs(p - q)).item<float>();
}

// optim::sharded_apply_gradients across the processes: clip (triggered) and AdamW on each
// replica's blocks equal the replicated update, and the gathered state equals its state.
TEST(Mpi, ShardedApplyGradientsEqualsReplicatedUpdate) {
  namespace optim = jx::optim;
  const optim::GradientTransformation tx =
      optim::chain({optim::clip_by_global_norm(1.0), optim::adamw(0.05, {.weight_decay = 0.1})});
  auto grads_of = [](const jx::Tree& p, const Array& x) {
    return jx::tree::map([&](const Array& a) { return jnp::sin(a * x + 1.0f) * 3.0f + x; }, p);
  };
  auto replicated = jx::pmap(
      [&](const jx::Tree& p, const jx::Tree& opt, const Array& x) {
        auto [updates, next] = tx.update(lax::pmean(grads_of(p, x), "i"), opt, p);
        return std::make_pair(optim::apply_updates(p, updates), next);
      },
      {.axis_name = "i", .in_axes = {jx::none, jx::none, 0}, .out_axes = jx::none});
  auto sharded = jx::pmap(
      [&](const jx::Tree& p, const jx::Tree& block, const Array& x) {
        return optim::sharded_apply_gradients(tx, grads_of(p, x), block, p, "i");
      },
      {.axis_name = "i", .in_axes = {jx::none, 0, 0}, .out_axes = {jx::none, 0}, .donate_argnums = {1}});
  auto gather = jx::pmap(
      [&](const jx::Tree& block, const jx::Tree& p) { return optim::gather_opt_state(tx, block, p, "i"); },
      {.axis_name = "i", .in_axes = {0, jx::none}, .out_axes = jx::none});
  const jx::Tree init{{"w", jnp::arange(35).astype(jx::float32).reshape({5, 7}) * 0.05f - 0.6f},
                      {"b", jnp::arange(5).astype(jx::float32) * -0.2f}};
  jx::Tree p = init, q = init, opt = tx.init(p);
  jx::Tree blocks = optim::shard_update_state(tx, q, opt);
  for (int step = 0; step < 3; ++step) {
    const Array x = jnp::cos(jnp::arange(first(), first() + local()).astype(jx::float32) * 1.3f + float(step));
    std::tie(p, opt) = replicated(p, opt, x);
    std::tie(q, blocks) = sharded(q, blocks, x);
  }
  auto close = [](const jx::Tree& a, const jx::Tree& b) {
    const auto la = jx::tree::leaves(a), lb = jx::tree::leaves(b);
    bool ok = la.size() == lb.size();
    for (size_t i = 0; ok && i < la.size(); ++i) ok = jnp::allclose(la[i], lb[i], 1e-5, 1e-6).item<bool>();
    return ok;
  };
  EXPECT_TRUE(close(p, q));
  EXPECT_TRUE(close(gather(blocks, q), opt));
}

TEST(Mpi, GatherScatterPermute) {
  const int64_t G = global();
  // all_gather: every replica sees the whole table, stacked or tiled.
  Array table = jnp::stack({jnp::arange(G).astype(jx::float32) + 1.0f, jnp::arange(G).astype(jx::float32) * 2.0f,
                            -jnp::arange(G).astype(jx::float32)},
                           1);
  Array stacked = jx::pmap([](const Array& x) { return lax::all_gather(x, "i"); }, {.axis_name = "i"})(rows());
  Array tiled = jx::pmap([](const Array& x) { return lax::all_gather(x, "i", 0, true); }, {.axis_name = "i"})(rows());
  EXPECT_EQ(values(stacked(local() - 1)), values(table));
  EXPECT_EQ(values(tiled(0)), values(table.reshape({-1})));
  // axis_index is the global index.
  Array idx = jx::pmap([](const Array&) { return lax::axis_index("i"); }, {.axis_name = "i"})(rows());
  for (int64_t i = 0; i < local(); ++i) EXPECT_EQ(idx(i).item<int32_t>(), first() + i);
  // Replica g holds v_g[j] = 10 g + j (j < G).
  Array v = (jnp::arange(first(), first() + local()).astype(jx::float32) * 10.0f).reshape({-1, 1}) +
            jnp::arange(G).astype(jx::float32);
  // psum_scatter: replica g gets element g of the sum, sum_h (10 h + g).
  Array sc = jx::pmap([](const Array& x) { return lax::psum_scatter(x, "i"); }, {.axis_name = "i"})(v);
  // Tiled, and in float16 (no MPI reduction: gathered, then summed): the same blocks.
  Array sc_tiled = jx::pmap([](const Array& x) { return lax::psum_scatter(x, "i", 0, true); }, {.axis_name = "i"})(v);
  Array sc_half = jx::pmap([](const Array& x) { return lax::psum_scatter(x.astype(jx::float16), "i"); },
                           {.axis_name = "i"})(v);
  // all_to_all: replica g receives element g from every h, 10 h + g.
  Array a2a = jx::pmap([](const Array& x) { return lax::all_to_all(x, "i", 0, 0); }, {.axis_name = "i"})(v);
  // ppermute: a ring shift, replica g gets v_{g-1}.
  std::vector<std::pair<int64_t, int64_t>> ring;
  for (int64_t h = 0; h < G; ++h) ring.emplace_back(h, (h + 1) % G);
  Array pp = jx::pmap([&](const Array& x) { return lax::ppermute(x, "i", ring); }, {.axis_name = "i"})(v);
  for (int64_t i = 0; i < local(); ++i) {
    const int64_t g = first() + i;
    EXPECT_EQ(sc(i).item<float>(), float(10 * G * (G - 1) / 2 + G * g)) << "replica " << g;
    EXPECT_EQ(values(sc_tiled(i)), std::vector<float>{float(10 * G * (G - 1) / 2 + G * g)});
    EXPECT_EQ(sc_half(i).astype(jx::float32).item<float>(), float(10 * G * (G - 1) / 2 + G * g));
    std::vector<float> want, prev;
    for (int64_t h = 0; h < G; ++h) want.push_back(float(10 * h + g));
    for (int64_t j = 0; j < G; ++j) prev.push_back(float(10 * ((g + G - 1) % G) + j));
    EXPECT_EQ(values(a2a(i)), want);
    EXPECT_EQ(values(pp(i)), prev);
  }
}

// Data-parallel: each replica's slice of a global batch, gradients averaged by pmean, equals
// the gradient of the whole batch (which every process can compute alone).
// shard_map over a mesh of every process' devices: each process passes and gets back the
// part of the global arrays its devices hold. X is [2 G, 3] with X[r][c] = 3 r + c.
Array global_x(int64_t rows_per_device, int64_t cols) {
  return jnp::arange(global() * rows_per_device * cols).astype(jx::float32).reshape({global() * rows_per_device, cols});
}

TEST(Mpi, ShardMapOverEveryProcessDevices) {
  const jx::Mesh mesh = jx::make_mesh({global()}, {"i"});
  const Array X = global_x(2, 3);
  const Array mine = lax::slice_in_dim(X, first() * 2, (first() + local()) * 2, 1, 0);  // this process' rows
  auto f = jx::shard_map(
      [](const Array& b) {
        return std::make_tuple(lax::psum(b, "i"), b * 2.0f + lax::axis_index("i").astype(jx::float32),
                               lax::all_gather(b, "i", 0, true));
      },
      {.mesh = mesh, .in_specs = {jx::P("i")}, .out_specs = {jx::P(), jx::P("i"), jx::P()}});
  auto [sum, scaled, gathered] = f(mine);
  EXPECT_EQ(values(sum), values(jnp::sum(X.reshape({global(), 2, 3}), 0)));
  const Array index = jnp::repeat(jnp::arange(first(), first() + local()), 2).astype(jx::float32).reshape({-1, 1});
  EXPECT_EQ(values(scaled), values(mine * 2.0f + index));
  EXPECT_EQ(values(gathered), values(X));
  // Equal to pmap on the same data (one slice per device).
  Array by_pmap = jx::pmap([](const Array& b) { return lax::psum(b, "i"); },
                           {.axis_name = "i", .out_axes = jx::none})(mine.reshape({local(), 2, 3}));
  EXPECT_EQ(values(by_pmap), values(sum));
  // pmap's devices across processes: every process' devices, or an error.
  Array on_all = jx::pmap([](const Array& b) { return lax::psum(b, "i"); },
                          {.axis_name = "i", .out_axes = jx::none, .devices = jx::devices()})(mine.reshape({local(), 2, 3}));
  EXPECT_EQ(values(on_all), values(sum));
  jx::testing::expect_error<jx::ValueError>(
      [&] {
        jx::pmap([](const Array& b) { return lax::psum(b, "i"); },
                 {.axis_name = "i", .devices = jx::local_devices()})(mine.reshape({local(), 2, 3}));
      },
      {"every process' devices", "jx::devices()"});
  // Under a transformation it cannot run (one trace sees only this process' part).
  jx::testing::expect_error<jx::ValueError>([&] { jx::jit([&](const Array& x) { return std::get<0>(f(x)); })(mine); },
                                            {"spans", "processes", "outside"});
  jx::testing::expect_error<jx::ValueError>(
      [&] {
        jx::jit([](const Array& x) {
          return jx::pmap([](const Array& b) { return lax::psum(b, "i"); }, {.axis_name = "i"})(x);
        })(mine.reshape({local(), 2, 3}));
      },
      {"[pmap]", "across", "processes", "outside"});
}

// A 2-D mesh of (devices / 2) x 2: with 2 devices per process, psum over "x" runs among
// the processes, one group per "y" (both groups of a process in one transfer), and over "y"
// within each process; with 1 device per process both axes run among processes (each
// process group split from the world). Block (x, y) of the [2 nx, 4] global X is
// X[2x : 2x + 2, 2y : 2y + 2]; each process passes and gets back the blocks it holds.
TEST(Mpi, ShardMapOnATwoDimensionalMesh) {
  if (global() % 2 != 0 || local() > 2) GTEST_SKIP() << "needs an even device count and at most 2 per process";
  const int64_t nx = global() / 2;
  const jx::Mesh mesh = jx::make_mesh({nx, 2}, {"x", "y"});
  const Array X = jnp::arange(8 * nx).astype(jx::float32).reshape({2 * nx, 4});
  // This process' blocks: x in [x0, x0 + xs), y in [y0, y0 + ys).
  const int64_t x0 = first() / 2, xs = std::max<int64_t>(1, local() / 2), y0 = local() == 2 ? 0 : first() % 2,
                ys = local();
  auto part = [&](const Array& a, int64_t rows, int64_t cols) {  // rows/cols per block (0: whole dim)
    Array r = rows ? lax::slice_in_dim(a, x0 * rows, (x0 + xs) * rows, 1, 0) : a;
    return cols ? lax::slice_in_dim(r, y0 * cols, (y0 + ys) * cols, 1, 1) : r;
  };
  const Array mine = part(X, 2, 2);
  auto f = jx::shard_map(
      [](const Array& b) {
        std::vector<std::pair<int64_t, int64_t>> ring;
        const int64_t n = lax::axis_size("x");
        for (int64_t h = 0; h < n; ++h) ring.emplace_back(h, (h + 1) % n);
        const Array where = lax::axis_index("x").astype(jx::float32) * 10.0f + lax::axis_index("y").astype(jx::float32);
        return std::make_tuple(lax::psum(b, "x"), lax::psum(b, "y"), lax::all_gather(b, "x", 0, true),
                               lax::ppermute(b, "x", ring), jnp::full({1, 1}, 0.0f) + where);
      },
      {.mesh = mesh,
       .in_specs = {jx::P("x", "y")},
       .out_specs = {jx::P(jx::none, "y"), jx::P("x"), jx::P(jx::none, "y"), jx::P("x", "y"), jx::P("x", "y")}});
  auto [over_x, over_y, gathered, shifted, where] = f(mine);
  const Array blocks = X.reshape({nx, 2, 4});
  EXPECT_EQ(values(over_x), values(part(jnp::sum(blocks, 0), 0, 2)));
  EXPECT_EQ(values(over_y), values(part(lax::slice_in_dim(X, 0, 2, 1, 1) + lax::slice_in_dim(X, 2, 4, 1, 1), 2, 0)));
  EXPECT_EQ(values(gathered), values(part(X, 0, 2)));
  EXPECT_EQ(values(shifted), values(part(jnp::roll(X, 2, 0), 2, 2)));
  const Array grid = jnp::arange(nx).astype(jx::float32).reshape({nx, 1}) * 10.0f + jnp::arange(2).astype(jx::float32);
  EXPECT_EQ(values(where), values(part(grid, 1, 1)));
  // A dim split over (y, x): with 2 devices per process its blocks there are not contiguous.
  if (local() == 2 && nx > 1)
    jx::testing::expect_error<jx::ValueError>(
        [&] {
          jx::shard_map([](const Array& b) { return b; },
                        {.mesh = mesh, .in_specs = {jx::P(jx::P::Entry{"y", "x"})}, .out_specs = {jx::P()}})(mine);
        },
        {"not contiguous", "across processes first"});
}

TEST(Mpi, DataParallelGradientEqualsFullBatch) {
  const int64_t per = 4, G = global();
  Array X = jnp::sin(jnp::arange(G * per * 3).astype(jx::float32) * 0.37f).reshape({G * per, 3});
  Array Y = jnp::cos(jnp::arange(G * per).astype(jx::float32) * 0.71f);
  Array w = jnp::array({0.5f, -1.0f, 2.0f});
  auto loss = [](const Array& w, const Array& x, const Array& y) { return jnp::mean(jnp::square(jnp::dot(x, w) - y)); };
  Array full = jx::grad(loss)(w, X, Y);
  Array mine_x = X(jx::slice(first() * per, (first() + local()) * per)).reshape({local(), per, 3});
  Array mine_y = Y(jx::slice(first() * per, (first() + local()) * per)).reshape({local(), per});
  Array g = jx::pmap([&](const Array& w, const Array& x, const Array& y) { return lax::pmean(jx::grad(loss)(w, x, y), "i"); },
                     {.axis_name = "i", .in_axes = {jx::none, 0, 0}})(w, mine_x, mine_y);
  for (int64_t i = 0; i < local(); ++i) {
    std::vector<float> got = values(g(i)), want = values(full);
    for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-5 * (1 + std::abs(want[k])));
  }
}

// Processes that reach different collectives get an error naming both sides, and stay in
// step: the next collective works.
TEST(Mpi, MismatchedProgramsAreAnErrorNotAHang) {
  Array x = jnp::ones({local(), 3 + jx::process_index()});
  try {
    jx::pmap([](const Array& a) { return lax::psum(a, "i"); }, {.axis_name = "i"})(x);
    FAIL() << "mismatched shapes across processes did not throw";
  } catch (const jx::DistributedError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[psum] process"), std::string::npos) << m;
    // Its own size and the first other process' that differs (process 0's, or 1's for 0).
    const int64_t mine = 4 * (3 + jx::process_index()), other = jx::process_index() ? 12 : 16;
    EXPECT_NE(m.find(std::to_string(mine) + " bytes"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(other) + " bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("same program"), std::string::npos) << m;
  }
  Array ok = jx::pmap([](const Array& a) { return lax::psum(a, "i"); }, {.axis_name = "i"})(jnp::ones({local(), 2}));
  EXPECT_EQ(values(ok(0)), (std::vector<float>{float(global()), float(global())}));
  // A pmap with an axis name maps one slice per local device in a multi-process run.
  if (local() == 2) {
    try {
      jx::pmap([](const Array& a) { return lax::psum(a, "i"); }, {.axis_name = "i"})(jnp::ones({1, 2}));
      FAIL() << "a pmap over fewer slices than local devices did not throw";
    } catch (const jx::ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("one slice per local device"), std::string::npos) << e.what();
    }
  }
}

// Checkpoints: process 0 writes, once; after the save both processes see the step and
// restore the same values.
TEST(Mpi, CheckpointsAreWrittenOnceAndReadByAll) {
  namespace fs = std::filesystem;
  const std::string dir = g_dir + "/ckpt_" + std::to_string(local());
  if (jx::process_index() == 0) fs::remove_all(dir);
  jx::distributed::barrier();
  Tree state{{"w", jnp::arange(6).astype(jx::float32)}, {"step", Array(int32_t(7))}};
  {
    jx::ckpt::CheckpointManager mgr(dir, {.max_to_keep = 1, .create = true});
    mgr.save(1, state);
    mgr.save(2, state);  // deletes step 1 (max_to_keep), on process 0 only
    mgr.wait_until_finished();
    EXPECT_EQ(mgr.all_steps(), (std::vector<int64_t>{2}));
    Tree back = mgr.restore(2);
    EXPECT_EQ(back["w"].array().to_vector<float>(), state["w"].array().to_vector<float>());
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"2"})) << "a second writer or a leftover temporary directory";
  jx::distributed::barrier();  // both have listed the directory before process 0 writes again
  jx::ckpt::save(dir + "/single", state);
  EXPECT_EQ(jx::ckpt::restore(dir + "/single")["step"].array().item<int32_t>(), 7);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  jx::distributed::initialize();
  if (jx::process_count() < 2 || argc < 2) {
    std::fprintf(stderr, "usage: mpirun -np 2 %s WORK_DIR (a directory every process can write)\n", argv[0]);
    return 2;
  }
  g_dir = argv[1];
  std::filesystem::create_directories(g_dir);
  return RUN_ALL_TESTS();
}
