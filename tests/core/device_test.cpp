// Devices and committed arrays (include/jx/device.h): device_put commits an array, results
// of eager and jitted operations on it stay on its device, operands on two devices are an
// error, device_get uncommits; inside pmap replica i computes on device i.
#include <gtest/gtest.h>

#include <mutex>
#include <set>

#include "jx/jx.h"
#include "testing/expect_error.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;
using jx::testing::expect_error;

class Devices : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { jx::set_cpu_device_count(3); }
  jx::Device cpu(int i) { return jx::local_devices()[size_t(i)]; }
};

TEST_F(Devices, ListAndDefault) {
  ASSERT_EQ(jx::device_count(), 3);
  EXPECT_EQ(jx::devices(), jx::local_devices());
  EXPECT_EQ(cpu(2).str(), "cpu:2");
  Array x = jnp::arange(4);
  EXPECT_FALSE(x.committed());
  EXPECT_EQ(x.device(), cpu(0));
}

TEST_F(Devices, ResultsStayOnTheCommittedDevice) {
  Array x = jnp::arange(4).astype(jx::float32);
  Array y = jx::device_put(x, cpu(1));
  EXPECT_TRUE(y.committed());
  EXPECT_EQ(y.device(), cpu(1));
  EXPECT_FALSE(x.committed()) << "device_put changed its argument";
  EXPECT_EQ(y.to_vector<float>(), x.to_vector<float>());
  Array z = jnp::sin(y * 2.0f + x);  // uncommitted operands follow the committed one
  EXPECT_EQ(z.device(), cpu(1));
  EXPECT_EQ(y(jx::slice(1, 3)).device(), cpu(1));
  Array j = jx::jit([](const Array& a) { return jnp::sum(a * a); })(y);
  EXPECT_EQ(j.device(), cpu(1));
  EXPECT_EQ(j.item<float>(), 14.0f);
  Array g = jx::grad([](const Array& a) { return jnp::sum(a * a); })(y);
  EXPECT_EQ(g.device(), cpu(1));
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{0, 2, 4, 6}));
  Array back = jx::device_get(z);
  EXPECT_FALSE(back.committed());
  EXPECT_TRUE(z.committed()) << "device_get changed its argument";
  EXPECT_EQ(back.to_vector<float>(), z.to_vector<float>());
}

TEST_F(Devices, OperandsOnTwoDevicesAreAnError) {
  Array a = jx::device_put(jnp::ones({3}), cpu(1));
  Array b = jx::device_put(jnp::ones({3}), cpu(2));
  expect_error<jx::ValueError>([&] { (void)(a + b); },
                               {"[add]", "committed to different devices, cpu:1 and cpu:2", "jx::device_put"});
  expect_error<jx::ValueError>([&] { (void)jx::jit([](const Array& p, const Array& q) { return p * q; })(a, b); },
                               {"[jit]", "cpu:1 and cpu:2"});
  EXPECT_EQ((jx::device_put(a, cpu(2)) + b).device(), cpu(2));  // moved first: fine
  expect_error<jx::ValueError>([&] { (void)jx::device_put(a, jx::Device{.id = 5}); },
                               {"[device_put]", "cpu:5", "jx::local_devices()"});
  expect_error<jx::ConcretizationError>(
      [&] { (void)jx::jit([](const Array& p) { return jx::device_get(p); })(a); }, {"[device_get]", "concrete"});
}

TEST_F(Devices, JitResultsThatAreCachedConstantsKeepTheirOwnDevice) {
  auto f = jx::jit([](const Array& p) { return std::make_pair(p + 1.0f, jnp::ones({2})); });
  auto [a, c1] = f(jx::device_put(jnp::zeros({2}), cpu(2)));
  EXPECT_EQ(c1.device(), cpu(2));
  auto [b, c2] = f(jnp::zeros({2}));
  EXPECT_FALSE(c2.committed());
  EXPECT_EQ(c1.device(), cpu(2));
  // Under jit, device_put passes its (traced) argument through.
  EXPECT_EQ(jx::jit([&](const Array& p) { return jx::device_put(p, cpu(1)) * 2.0f; })(jnp::ones({2})).to_vector<float>(),
            (std::vector<float>{2.0f, 2.0f}));
}

TEST_F(Devices, PytreesAndPmapReplicas) {
  jx::Tree t{{"w", jnp::ones({2})}, {"b", jnp::zeros({})}};
  jx::Tree on = jx::device_put(t, cpu(1));
  EXPECT_EQ(on["w"].array().device(), cpu(1));
  EXPECT_FALSE(jx::device_get(on)["b"].array().committed());
  // Replica i computes on device i (eagerly here, to look at its arrays), whatever device
  // the arguments were on; the stacked result is uncommitted.
  std::mutex mu;
  std::set<int> seen;
  jx::config::Scoped eager(jx::config::disable_jit, true);
  Array out = jx::pmap(
      [&](const Array& x, const Array& w) {
        std::lock_guard<std::mutex> g(mu);
        seen.insert((x * w).device().id);
        return x * w;
      },
      {.in_axes = {0, jx::none}})(jx::device_put(jnp::ones({3, 2}), cpu(2)), on["w"].array());
  EXPECT_EQ(seen, (std::set<int>{0, 1, 2}));
  EXPECT_FALSE(out.committed());
}

// PmapOptions::devices: replica i runs on devices[i] (under disable_jit its values show
// their device), and bad lists say what is wrong.
TEST_F(Devices, PmapRunsReplicasOnTheDevicesGiven) {
  jx::config::Scoped eager(jx::config::disable_jit, true);
  auto which = jx::pmap([](const Array& x) { return x * 0.0f + float(x.device().id); },
                        {.devices = {cpu(2), cpu(0)}});
  EXPECT_EQ(which(jnp::ones({2})).to_vector<float>(), (std::vector<float>{2.0f, 0.0f}));
  expect_error<jx::ValueError>([&] { jx::pmap([](const Array& x) { return x; }, {.devices = {cpu(1)}})(jnp::ones({2})); },
                               {"axis of size 2 over 1 devices", "one device per slice"});
  expect_error<jx::ValueError>(
      [&] { jx::pmap([](const Array& x) { return x; }, {.devices = {cpu(1), cpu(1)}})(jnp::ones({2})); }, {"twice"});
  expect_error<jx::ValueError>(
      [&] { jx::pmap([](const Array& x) { return x; }, {.devices = {cpu(0), jx::Device{.id = 7}}})(jnp::ones({2})); },
      {"cpu:7", "not one of this process' 3 devices"});
}

}  // namespace
