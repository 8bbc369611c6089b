// jx::profiler: traces and a memory profile, as jax.profiler (docs/profiler.md).
//
//   {
//     jx::profiler::Trace trace("/tmp/jx-trace");          // with jax.profiler.trace(dir):
//     for (int step = 0; step < 5; ++step) {
//       jx::profiler::StepTraceAnnotation s("train", step);
//       state = train_step(state, batch);
//     }
//   }  // writes /tmp/jx-trace/<host>.<pid>.<n>.trace.json; open it in ui.perfetto.dev
//
// A trace is Chrome trace-event JSON (what Perfetto and chrome://tracing open), one track
// per thread. It shows eager primitives with their operand types, jit's phases (trace, each
// optimization pass, code generation, the C++ compiler, loading), every step a compiled
// program runs (fused kernels by name, library calls such as oneDNN's convolution by
// primitive), live bytes as a counter, data-pipeline waits, checkpoint writes, and the
// ranges of TraceAnnotation / StepTraceAnnotation. JX_PROFILE=dir traces from the first jx
// call to the process's exit.
//
// Differences from JAX: no TensorBoard plugin and no XPlane protobuf (the file is the JSON
// that Perfetto reads directly), and the memory profile is text rather than pprof.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace jx::profiler {

// Starts recording into per-thread buffers (jax.profiler.start_trace). Creates `log_dir` if
// needed. Throws jx::ValueError when a trace is already running (naming both directories)
// and jx::IOError when `log_dir` cannot be created or written.
void start_trace(const std::string& log_dir);

// Stops the trace and writes <log_dir>/<host>.<pid>.<n>.trace.json (under a temporary name,
// then renamed: never a half-written file); returns its path (jax.profiler.stop_trace).
// Throws jx::ValueError when no trace is running and jx::IOError when the file cannot be
// written (the trace is stopped either way).
std::string stop_trace();

// Whether a trace is running (started here or by JX_PROFILE).
bool is_tracing();

// start_trace(log_dir) for the object's lifetime (with jax.profiler.trace(log_dir)). A
// destructor cannot throw: a failure to write the file is printed to stderr; call stop()
// to get the path or the exception.
class Trace {
 public:
  explicit Trace(const std::string& log_dir);
  ~Trace();
  std::string stop();  // stop_trace(); the path of the file
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

 private:
  bool active_ = true;
};

// A named range on the calling thread's track (jax.profiler.TraceAnnotation). Ranges nest.
// Costs one atomic load when no trace runs.
class TraceAnnotation {
 public:
  explicit TraceAnnotation(const std::string& name);
  ~TraceAnnotation();
  TraceAnnotation(const TraceAnnotation&) = delete;
  TraceAnnotation& operator=(const TraceAnnotation&) = delete;

 private:
  bool on_ = false;
};

// A training step's range, its number as the event's "step_num" arg
// (jax.profiler.StepTraceAnnotation("train", step_num=n)).
class StepTraceAnnotation {
 public:
  StepTraceAnnotation(const std::string& name, int64_t step_num);
  ~StepTraceAnnotation();
  StepTraceAnnotation(const StepTraceAnnotation&) = delete;
  StepTraceAnnotation& operator=(const StepTraceAnnotation&) = delete;

 private:
  bool on_ = false;
};

// ---- memory ----

// Live jx buffers grouped by the operation that allocated them and its output types. Only
// buffers allocated while tracking was on are seen: tracking is on during a trace and while
// enable_memory_profile(true) holds (keeping a map of every buffer always would slow every
// op). Each time tracking turns on, the counts start again from zero.
struct MemoryProfile {
  struct Entry {
    std::string op;     // primitive or compiled step ("add", "k2: mul add", ...);
                        // "(outside ops)" for buffers made from host data
    std::string shape;  // the op's output types, e.g. "f32[8,10]"
    int64_t live_bytes = 0;
    int64_t live_buffers = 0;
    int64_t peak_bytes = 0;   // the most this group held at once
    int64_t allocations = 0;  // buffers it allocated while tracked
  };
  bool tracking = false;   // whether tracking is on now
  int64_t live_bytes = 0;  // all tracked live buffers (allocator size classes, 64-byte rounded)
  int64_t peak_bytes = 0;  // their most at once since tracking turned on
  std::vector<Entry>
      entries;  // by live bytes, then peak, descending; groups that held nothing omitted
  // A table: a header with the totals, then one line per entry.
  std::string to_string() const;
};

// Turns memory tracking on or off outside a trace (a trace turns it on by itself).
void enable_memory_profile(bool on = true);

// The profile now (jax.profiler.device_memory_profile, which returns pprof bytes).
MemoryProfile device_memory_profile();

// Writes device_memory_profile().to_string() to `path` (temporary name, then rename).
// Throws jx::IOError naming the path when it cannot be written.
void save_device_memory_profile(const std::string& path);

}  // namespace jx::profiler
