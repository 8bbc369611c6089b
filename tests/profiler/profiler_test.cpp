// jx::profiler: the trace file is parsed as JSON and its structure checked (one event per
// eager op with its types, nesting, jit's phases, one track per thread, compiled steps
// covering a training step), the memory profile's byte counts are derived by hand from the
// allocator's size classes, and every error names what went wrong.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "jx/jx.h"
#include "nn/tutorial_models.h"
#include "support/json.h"
#include "support/str.h"
#include "testing/temp_dir.h"

namespace {

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace nn = jx::nn;
namespace optim = jx::optim;
namespace profiler = jx::profiler;
using jx::Array;
using jx::Tree;
using jx::detail::Json;

struct Ev {
  std::string ph, cat, name;
  int64_t tid = 0;
  double ts = 0, dur = 0;  // microseconds
  const Json* args = nullptr;
  double end() const { return ts + dur; }
  bool within(const Ev& o) const { return tid == o.tid && ts >= o.ts && end() <= o.end(); }
  std::string arg(const char* key) const {
    const Json* v = args ? args->find(key) : nullptr;
    return v ? v->s : "";
  }
  std::vector<std::string> arg_list(const char* key) const {
    std::vector<std::string> r;
    const Json* v = args ? args->find(key) : nullptr;
    if (v)
      for (const Json& x : v->arr) r.push_back(x.s);
    return r;
  }
};

struct ParsedTrace {
  Json root;
  std::vector<Ev> events;                       // "X" and "C" events
  std::map<int64_t, std::string> thread_names;  // from "M" thread_name events

  std::vector<Ev> of(const std::string& cat) const {
    std::vector<Ev> r;
    for (const Ev& e : events)
      if (e.ph == "X" && e.cat == cat) r.push_back(e);
    return r;
  }
  std::vector<Ev> named(const std::string& name) const {
    std::vector<Ev> r;
    for (const Ev& e : events)
      if (e.ph == "X" && e.name == name) r.push_back(e);
    return r;
  }
};

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

ParsedTrace parse_trace(const std::string& path) {
  std::string text = read_text(path);
  ParsedTrace t;
  t.root = jx::detail::parse_json(text.data(), text.size());
  const Json* evs = t.root.find("traceEvents");
  if (!evs) throw std::runtime_error("no traceEvents in " + path);
  for (const Json& j : evs->arr) {
    Ev e;
    e.ph = j.find("ph")->s;
    e.name = j.find("name")->s;
    if (const Json* c = j.find("cat")) e.cat = c->s;
    if (const Json* tid = j.find("tid")) e.tid = std::stoll(tid->s);
    if (e.ph == "M") {
      if (e.name == "thread_name") t.thread_names[e.tid] = j.find("args")->find("name")->s;
      continue;
    }
    e.ts = std::stod(j.find("ts")->s);
    if (const Json* d = j.find("dur")) e.dur = std::stod(d->s);
    e.args = j.find("args");
    t.events.push_back(e);
  }
  return t;
}

// Whether the ranges of each thread nest (no two overlap partially), as viewers require.
bool properly_nested(const ParsedTrace& t) {
  std::map<int64_t, std::vector<Ev>> by_tid;
  for (const Ev& e : t.events)
    if (e.ph == "X") by_tid[e.tid].push_back(e);
  for (auto& [tid, evs] : by_tid) {
    std::sort(evs.begin(), evs.end(),
              [](const Ev& a, const Ev& b) { return a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur; });
    std::vector<double> ends;  // open ranges' ends, innermost last
    for (const Ev& e : evs) {
      while (!ends.empty() && ends.back() <= e.ts) ends.pop_back();
      if (!ends.empty() && e.end() > ends.back()) {
        ADD_FAILURE() << e.name << " [" << e.ts << ", " << e.end()
                      << ") overlaps its parent ending at " << ends.back();
        return false;
      }
      ends.push_back(e.end());
    }
  }
  return true;
}

std::vector<std::string> names(const std::vector<Ev>& evs) {
  std::vector<std::string> r;
  for (const Ev& e : evs) r.push_back(e.name);
  return r;
}

TEST(Profiler, EagerOpsAreOneEventEachWithTheirTypes) {
  jx::testing::TempDir dir;
  Array a = jnp::ones({2, 3});
  Array b = jnp::exp(jnp::ones({2, 3}));
  std::string path;
  {
    profiler::Trace trace(dir.path());
    EXPECT_TRUE(profiler::is_tracing());
    Array c = a * b;
    Array d = jnp::exp(c);
    path = trace.stop();
  }
  EXPECT_FALSE(profiler::is_tracing());
  EXPECT_EQ(path.rfind(dir.path() + "/", 0), 0u) << path;
  EXPECT_TRUE(path.ends_with(".trace.json")) << path;
  EXPECT_EQ(dir.entries().size(), 1u) << "no temporary file may remain";
  ParsedTrace t = parse_trace(path);
  std::vector<Ev> ops = t.of("op");
  ASSERT_EQ(names(ops), (std::vector<std::string>{"mul", "exp"}));
  EXPECT_EQ(ops[0].arg_list("inputs"), (std::vector<std::string>{"f32[2,3]", "f32[2,3]"}));
  EXPECT_EQ(ops[0].arg_list("outputs"), (std::vector<std::string>{"f32[2,3]"}));
  EXPECT_EQ(ops[1].arg_list("inputs"), (std::vector<std::string>{"f32[2,3]"}));
  EXPECT_LE(ops[0].end(), ops[1].ts);
  EXPECT_GT(ops[0].dur, 0.0);
  EXPECT_EQ(ops[0].tid, int64_t(::getpid()));
  EXPECT_EQ(t.thread_names.at(ops[0].tid), "main");
  // The two outputs, 24 bytes each in a 64-byte size class, as the live-bytes counter.
  std::vector<double> counts;
  for (const Ev& e : t.events)
    if (e.ph == "C") counts.push_back(std::stod(e.args->find("bytes")->s));
  EXPECT_EQ(counts, (std::vector<double>{64, 128}));
}

TEST(Profiler, AnnotationsNestOnTheirThread) {
  jx::testing::TempDir dir;
  Array a = jnp::ones({4});
  profiler::Trace trace(dir.path());
  {
    profiler::TraceAnnotation outer("epoch");
    for (int step = 0; step < 2; ++step) {
      profiler::StepTraceAnnotation s("train", step);
      profiler::TraceAnnotation inner("forward");
      Array b = jnp::sin(a);
    }
  }
  ParsedTrace t = parse_trace(trace.stop());
  std::vector<Ev> outer = t.named("epoch"), steps = t.named("train"), inner = t.named("forward"),
                  ops = t.of("op");
  ASSERT_EQ(outer.size(), 1u);
  ASSERT_EQ(steps.size(), 2u);
  ASSERT_EQ(inner.size(), 2u);
  ASSERT_EQ(names(ops), (std::vector<std::string>{"sin", "sin"}));
  EXPECT_EQ(outer[0].cat, "user");
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(steps[size_t(i)].cat, "step");
    EXPECT_EQ(steps[size_t(i)].args->find("step_num")->s, std::to_string(i));
    EXPECT_TRUE(steps[size_t(i)].within(outer[0]));
    EXPECT_TRUE(inner[size_t(i)].within(steps[size_t(i)]));
    EXPECT_TRUE(ops[size_t(i)].within(inner[size_t(i)]));
  }
  EXPECT_LE(steps[0].end(), steps[1].ts);
}

TEST(Profiler, JitPhasesOnTheFirstCallOnlyKernelsAfter) {
  jx::testing::TempDir dir, cache;
  // A fresh kernel cache, so that the first call runs the C++ compiler.
  const char* old = std::getenv("JX_CACHE_DIR");
  std::string saved = old ? old : "";
  ::setenv("JX_CACHE_DIR", cache.path().c_str(), 1);
  auto f =
      jx::jit([](const Array& x) { return jnp::tanh(x * 2.0f + 1.0f) * x; }, {.name = "prof_f"});
  Array x = jnp::linspace(-1.0f, 1.0f, 64);
  std::string first, second;
  {
    profiler::Trace trace(dir / "first");
    Array y = f(x);
    first = trace.stop();
  }
  {
    profiler::Trace trace(dir / "second");
    Array y = f(x);
    second = trace.stop();
  }
  if (old)
    ::setenv("JX_CACHE_DIR", saved.c_str(), 1);
  else
    ::unsetenv("JX_CACHE_DIR");

  ParsedTrace t1 = parse_trace(first), t2 = parse_trace(second);
  EXPECT_TRUE(properly_nested(t1));
  std::set<std::string> phases;
  for (const Ev& e : t1.of("jit")) phases.insert(e.name);
  for (const char* p :
       {"trace", "pass inline", "pass simplify", "pass dce", "codegen", "compile", "load"})
    EXPECT_TRUE(phases.count(p)) << p << " is missing from the first call's phases";
  // The passes run after tracing, code generation after the passes, then the compiler.
  EXPECT_LE(t1.named("trace")[0].end(), t1.named("pass inline")[0].ts);
  EXPECT_LE(t1.named("pass inline")[0].end(), t1.named("codegen")[0].ts);
  EXPECT_LE(t1.named("codegen")[0].end(), t1.named("compile")[0].ts);
  EXPECT_LE(t1.named("compile")[0].end(), t1.named("load")[0].ts);
  EXPECT_EQ(t1.named("compile")[0].arg("program"), "prof_f");
  // The whole program is one fused kernel: mul, add, tanh, mul.
  std::vector<Ev> k1 = t1.of("kernel"), k2 = t2.of("kernel");
  ASSERT_EQ(k1.size(), 1u);
  EXPECT_EQ(k1[0].name.rfind("k0: ", 0), 0u) << k1[0].name;
  EXPECT_NE(k1[0].arg("eqns").find("tanh"), std::string::npos) << k1[0].arg("eqns");
  EXPECT_EQ(k1[0].arg("domain"), "f32[64]");
  EXPECT_TRUE(t2.of("jit").empty()) << "the second call traces and compiles nothing";
  EXPECT_TRUE(t2.of("op").empty());
  ASSERT_EQ(k2.size(), 1u);
  EXPECT_EQ(k2[0].name, k1[0].name);
}

TEST(Profiler, EachThreadHasItsTrack) {
  jx::testing::TempDir dir;
  Array a = jnp::ones({8});
  profiler::Trace trace(dir.path());
  int64_t worker_tid = 0;
  std::thread worker([&] {
    worker_tid = int64_t(::gettid());
    profiler::TraceAnnotation r("worker");
    Array b = jnp::cos(a);
  });
  {
    profiler::TraceAnnotation r("main");
    Array b = jnp::sin(a);
  }
  worker.join();
  ParsedTrace t = parse_trace(trace.stop());
  std::vector<Ev> w = t.named("worker"), m = t.named("main"), cos = t.named("cos"),
                  sin = t.named("sin");
  ASSERT_EQ(w.size(), 1u);
  ASSERT_EQ(m.size(), 1u);
  ASSERT_EQ(cos.size(), 1u);
  ASSERT_EQ(sin.size(), 1u);
  EXPECT_EQ(w[0].tid, worker_tid);
  EXPECT_EQ(m[0].tid, int64_t(::getpid()));
  EXPECT_NE(w[0].tid, m[0].tid);
  EXPECT_TRUE(cos[0].within(w[0]));
  EXPECT_TRUE(sin[0].within(m[0]));
  EXPECT_TRUE(t.thread_names.count(w[0].tid));
  EXPECT_EQ(t.thread_names.at(m[0].tid), "main");
}

TEST(Profiler, DataWaitsAndCheckpointWritesAreEvents) {
  jx::testing::TempDir dir;
  Array xs = jnp::arange(12.0f).reshape({12, 1});
  jx::data::Dataset ds = jx::data::from_arrays(Tree{{"x", xs}}).batch(4, true).prefetch(2);
  profiler::Trace trace(dir / "trace");
  jx::data::Iterator it = ds.iterator();
  int batches = 0;
  while (it.next()) ++batches;
  jx::ckpt::save(dir / "ckpt", Tree{{"w", xs}});
  {
    jx::ckpt::CheckpointManager mngr(dir / "run");  // asynchronous: written on its own thread
    mngr.save(1, Tree{{"state", Tree{{"w", xs}}}});
    mngr.wait_until_finished();
  }
  ParsedTrace t = parse_trace(trace.stop());
  EXPECT_EQ(batches, 3);
  std::vector<Ev> waits = t.named("wait for batch");
  ASSERT_GE(waits.size(), 3u);
  EXPECT_EQ(waits[0].cat, "data");
  EXPECT_EQ(waits[0].tid, int64_t(::getpid()));
  EXPECT_EQ(waits[0].args->find("index")->kind, Json::Num);
  EXPECT_EQ(waits[0].arg("index"), "0");
  std::vector<Ev> save = t.named("checkpoint.save"), managed = t.named("CheckpointManager.save");
  ASSERT_EQ(save.size(), 1u);
  EXPECT_EQ(save[0].cat, "checkpoint");
  EXPECT_EQ(save[0].arg("path"), dir / "ckpt");
  EXPECT_EQ(save[0].tid, int64_t(::getpid()));
  ASSERT_EQ(managed.size(), 1u);
  EXPECT_EQ(managed[0].arg("path"), dir / "run/1");
  EXPECT_NE(managed[0].tid, int64_t(::getpid())) << "the asynchronous write has its own track";
}

// ---- a few jitted CNN training steps ----

optim::TrainState cnn_state(const Array& x) {
  tutorial::CNN model;
  Tree variables = model.init(jr::PRNGKey(0), x, true);
  return optim::TrainState::create(
      [model](const Tree& v, const Array& in) { return model.apply(v, in, true); },
      variables["params"],
      optim::chain({optim::clip_by_global_norm(1.0), optim::adamw(1e-3, {.weight_decay = 1e-4})}));
}

std::pair<optim::TrainState, Array> cnn_step(const optim::TrainState& s, const Array& x,
                                             const Array& labels, const Array& key) {
  tutorial::CNN model;
  auto loss_fn = [&](const Tree& params) {
    Array logits = model.apply(Tree{{"params", params}}, x, false, nn::Rngs{{"dropout", key}});
    return jnp::mean(optim::softmax_cross_entropy_with_integer_labels(logits, labels));
  };
  auto [loss, grads] = jx::value_and_grad(loss_fn)(s.params);
  return {s.apply_gradients(grads), loss};
}

// Length of the union of the intervals [ts, end) of `evs` clipped to `range`.
double covered(std::vector<Ev> evs, const Ev& range) {
  std::sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) { return a.ts < b.ts; });
  double total = 0, reach = range.ts;
  for (const Ev& e : evs) {
    double lo = std::max(e.ts, reach), hi = std::min(e.end(), range.end());
    if (hi > lo) total += hi - lo;
    reach = std::max(reach, hi);
  }
  return total;
}

TEST(Profiler, CompiledStepsCoverTheTrainingStep) {
  jx::testing::TempDir dir;
  const int64_t batch = 8;
  Array x = jr::normal(jr::PRNGKey(1), {batch, 28, 28, 1});
  Array y = jr::randint(jr::PRNGKey(2), {batch}, 0, 10);
  optim::TrainState s = cnn_state(x);
  auto step = jx::jit(cnn_step, {.donate_argnums = {0}, .name = "cnn_train_step"});
  Array root = jr::PRNGKey(3);
  Array keys[5];
  for (uint32_t i = 0; i < 5; ++i) keys[i] = jr::fold_in(root, i);
  for (int i = 0; i < 2; ++i) s = step(s, x, y, keys[i]).first;  // compile, warm up
  profiler::Trace trace(dir.path());
  for (int i = 2; i < 5; ++i) {
    profiler::StepTraceAnnotation st("train", i);
    auto [next, loss] = step(s, x, y, keys[i]);
    s = std::move(next);
    EXPECT_TRUE(std::isfinite(loss.item<float>()));
  }
  ParsedTrace t = parse_trace(trace.stop());
  std::vector<Ev> steps = t.named("train");
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_TRUE(properly_nested(t));
  std::vector<Ev> work;
  for (const Ev& e : t.events)
    if (e.ph == "X" && (e.cat == "kernel" || e.cat == "library" || e.cat == "op"))
      work.push_back(e);
  std::set<std::string> library;
  for (const Ev& e : t.of("library")) library.insert(e.name);
  EXPECT_TRUE(library.count("conv_general_dilated")) << "oneDNN's convolutions are library steps";
  EXPECT_TRUE(library.count("dot_general"));
  EXPECT_FALSE(t.of("kernel").empty());
  EXPECT_TRUE(t.of("jit").empty()) << "warm steps trace and compile nothing";
  for (const Ev& st : steps) {
    std::vector<Ev> inside;
    for (const Ev& e : work)
      if (e.within(st)) inside.push_back(e);
    double c = covered(inside, st) / st.dur;
    std::printf("[ profiler ] batch %lld step %s: %.1f us, compiled steps cover %.1f%%\n",
                (long long)batch, st.args->find("step_num")->s.c_str(), st.dur, 100 * c);
    // The issue asks for 10% at batch 128 (measured: docs/profiler.md); this bound only
    // catches a hook that went missing, without flaking on a loaded machine.
    EXPECT_GE(c, 0.5);
  }
}

// ---- memory ----

TEST(Profiler, MemoryProfileCountsLiveBytesAndPeaksByOp) {
  Array x = jnp::ones({1000});  // before tracking: not counted
  profiler::enable_memory_profile(true);
  Array y = x + x;  // 4000 bytes: the 4032-byte size class (multiples of 64 up to 4 KiB)
  Array z = jnp::exp(y);
  Array big = jnp::sin(jnp::zeros({1 << 20}));  // 4 MiB exactly a size class
  y = Array();
  profiler::MemoryProfile m = profiler::device_memory_profile();
  jx::testing::TempDir dir;
  profiler::save_device_memory_profile(dir / "memory.txt");
  profiler::enable_memory_profile(false);

  EXPECT_TRUE(m.tracking);
  auto entry = [&](const std::string& op) {
    for (const auto& e : m.entries)
      if (e.op == op) return e;
    ADD_FAILURE() << "no entry for " << op << " in\n" << m.to_string();
    return profiler::MemoryProfile::Entry{};
  };
  profiler::MemoryProfile::Entry add = entry("add"), exp = entry("exp"), sin = entry("sin");
  EXPECT_EQ(add.shape, "f32[1000]");
  EXPECT_EQ(add.live_bytes, 0);  // y was dropped
  EXPECT_EQ(add.live_buffers, 0);
  EXPECT_EQ(add.peak_bytes, 4032);
  EXPECT_EQ(add.allocations, 1);
  EXPECT_EQ(exp.live_bytes, 4032);
  EXPECT_EQ(exp.live_buffers, 1);
  EXPECT_EQ(sin.shape, "f32[1048576]");
  EXPECT_EQ(sin.live_bytes, int64_t(4) << 20);
  // The zeros that fed sin are freed; whatever op made them, nothing else is alive.
  EXPECT_EQ(m.live_bytes, 4032 + (int64_t(4) << 20));
  // At the peak, y, z, the zeros and sin's output were all alive.
  EXPECT_EQ(m.peak_bytes, 2 * 4032 + 2 * (int64_t(4) << 20));
  EXPECT_EQ(m.entries[0].op, "sin");  // sorted by live bytes
  std::string text = read_text(dir / "memory.txt");
  EXPECT_NE(text.find("exp [f32[1000]]"), std::string::npos) << text;
  EXPECT_NE(text.find("live 4198336 bytes"), std::string::npos) << text;
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"memory.txt"}));
}

TEST(Profiler, MemoryTrackingRestartsFromZero) {
  profiler::enable_memory_profile(true);
  Array y = jnp::cos(jnp::ones({16}));
  profiler::enable_memory_profile(false);
  profiler::enable_memory_profile(true);
  profiler::MemoryProfile m = profiler::device_memory_profile();
  profiler::enable_memory_profile(false);
  EXPECT_EQ(m.live_bytes, 0);
  EXPECT_EQ(m.peak_bytes, 0);
  EXPECT_TRUE(m.entries.empty()) << m.to_string();
}

// ---- errors ----

template <class E, class F>
std::string message_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw the wrong type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "did not throw";
  return {};
}

TEST(Profiler, StartWhileTracingNamesBothDirectories) {
  jx::testing::TempDir dir;
  profiler::Trace trace(dir / "a");
  std::string msg = message_of<jx::ValueError>([&] { profiler::start_trace(dir / "b"); });
  EXPECT_NE(msg.find("[profiler.start_trace]"), std::string::npos) << msg;
  EXPECT_NE(msg.find(dir / "a"), std::string::npos) << msg;
  EXPECT_NE(msg.find(dir / "b"), std::string::npos) << msg;
  EXPECT_NE(msg.find("stop_trace() first"), std::string::npos) << msg;
  EXPECT_TRUE(profiler::is_tracing()) << "the running trace goes on";
}

TEST(Profiler, StopWithoutStartThrows) {
  std::string msg = message_of<jx::ValueError>([] { profiler::stop_trace(); });
  EXPECT_NE(msg.find("[profiler.stop_trace] no trace is running"), std::string::npos) << msg;
  jx::testing::TempDir dir;
  profiler::Trace trace(dir.path());
  trace.stop();
  msg = message_of<jx::ValueError>([&] { trace.stop(); });
  EXPECT_NE(msg.find("already"), std::string::npos) << msg;
}

TEST(Profiler, UnwritableDirectoriesAreIOErrorsNamingThePath) {
  jx::testing::TempDir dir;
  std::ofstream(dir / "file") << "x";
  std::string bad = dir / "file/sub";
  std::string msg = message_of<jx::IOError>([&] { profiler::start_trace(bad); });
  EXPECT_NE(msg.find("'" + bad + "'"), std::string::npos) << msg;
  EXPECT_FALSE(profiler::is_tracing());
  msg = message_of<jx::IOError>([&] { profiler::save_device_memory_profile(bad + "/m.txt"); });
  EXPECT_NE(msg.find(bad + "/m.txt"), std::string::npos) << msg;

  // The directory vanishes during the trace: stop reports the file and stops anyway.
  std::string gone = dir / "gone";
  profiler::start_trace(gone);
  std::filesystem::remove_all(gone);
  msg = message_of<jx::IOError>([] { profiler::stop_trace(); });
  EXPECT_NE(msg.find("'" + gone + "/"), std::string::npos) << msg;
  EXPECT_FALSE(profiler::is_tracing());
}

// ---- JX_PROFILE ----

// The child half of the next test: does nothing unless started by it.
TEST(Profiler, EnvChild) {
  if (!std::getenv("JX_PROFILER_TEST_CHILD"))
    GTEST_SKIP() << "run by Profiler.EnvTracesTheWholeProcess";
  Array a = jnp::ones({3});
  Array b = jnp::negative(a);
}

TEST(Profiler, EnvTracesTheWholeProcess) {
  jx::testing::TempDir dir;
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string cmd = jx::str("JX_PROFILE='", dir / "env", "' JX_PROFILER_TEST_CHILD=1 '", self,
                            "' --gtest_filter=Profiler.EnvChild > '", dir / "log", "' 2>&1");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_text(dir / "log");
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir / "env"))
    files.push_back(e.path().string());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(files[0].ends_with(".trace.json"));
  ParsedTrace t = parse_trace(files[0]);
  EXPECT_EQ(t.named("neg").size(), 1u);
  EXPECT_NE(read_text(dir / "log").find("trace written to " + files[0]), std::string::npos);
}

}  // namespace
