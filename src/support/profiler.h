// The profiler's recorder (include/jx/profiler.h is the public face, docs/profiler.md the
// guide). It lives in `support`, the lowest layer, because every layer reports to it: eager
// dispatch, jit's phases, compiled steps, the allocator, the data pipeline and checkpoints.
//
// Each hook is a scope object (or an inline call) whose fast path, when neither a trace nor
// the memory profile is on, is one relaxed atomic load and a predictable branch: eager
// dispatch costs ~0.3 us an op and is benchmarked (bench_eager). Everything else is out of
// line. Events go to per-thread buffers (one uncontended mutex each, so stop_trace can merge
// them while threads still run); the allocator hooks update a sharded map of live buffers.
#pragma once
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/str.h"

namespace jx::prof {

// g_state bits. kUninit is set until the first hook has read JX_PROFILE, so that the first
// call takes the slow path once.
inline constexpr unsigned kUninit = 1u, kTracing = 2u, kMemory = 4u;
extern std::atomic<unsigned> g_state;

inline bool enabled() { return __builtin_expect(g_state.load(std::memory_order_relaxed) != 0, 0); }

// A JSON object under construction: a trace event's "args".
class Args {
 public:
  Args& add(std::string_view key, std::string_view value);
  Args& add(std::string_view key, const char* value) { return add(key, std::string_view(value)); }
  Args& add(std::string_view key, int64_t value);
  Args& add(std::string_view key, size_t value) { return add(key, int64_t(value)); }
  Args& add(std::string_view key, int value) { return add(key, int64_t(value)); }
  Args& add(std::string_view key, const std::vector<std::string>& values);
  bool empty() const { return s_.empty(); }
  std::string take();  // "{...}", or "" when nothing was added

 private:
  std::string s_;
};

struct Group;  // a memory-profile row: an op and its output types

// A place in the code whose events always look the same (a compiled program's step): its
// texts are built once, when the program is compiled, and interned for the process's life,
// so a traced step copies no strings. `mem_shape` labels the buffers allocated inside it.
struct Site {
  std::string cat, name, args_json, mem_shape;
  Group* group = nullptr;
};
const Site* intern_site(std::string cat, std::string name, std::string args_json,
                        std::string mem_shape);

// One Site per line of compiler::describe(jaxpr, plan): "kernel k0 f32[1000]: mul add" is
// category "kernel", named "k0: mul add"; "library dot_general -> f32[8,10]" is category
// "library", named "dot_general". Any other line becomes a "step" event named by the line.
std::vector<const Site*> step_sites(const std::string& describe_text);

namespace detail {
// The out-of-line halves of the scopes below. begin_* return whether a scope was opened
// (then end() must be called once, on the same thread).
bool begin(const char* cat, std::string name, std::string args_json);
bool begin_site(const Site* s);
bool begin_op(const char* prim, std::vector<std::string> in_types,
              std::vector<std::string> out_types);
void end();
void on_alloc(void* p, size_t bytes);
void on_free(void* p);

// type_str(dtype, shape) without a stream: "f32[8,10]".
std::string type_text(DType dtype, const Shape& shape);
template <class T>
std::string type_text(const T& x) {
  if constexpr (requires { x.shape(); })
    return type_text(DType(x.dtype()), x.shape());
  else
    return type_text(DType(x.dtype), x.shape);
}
template <class R>
std::vector<std::string> type_texts(const R& xs) {
  std::vector<std::string> r;
  r.reserve(xs.size());
  for (const auto& x : xs) r.push_back(type_text(x));
  return r;
}
// Out of line and cold, so that the hot path of eager dispatch stays one load and a branch.
template <class Name, class In, class Out>
[[gnu::noinline, gnu::cold]] bool begin_op_types(const Name& prim, const In& in, const Out& out) {
  return begin_op(prim(), type_texts(in), type_texts(out));
}
}  // namespace detail

// A range on this thread's track: a "ph":"X" event with its start and duration. end() closes
// it early (idempotent); the destructor closes it otherwise.
class Scope {
 public:
  Scope(const char* cat, std::string_view name) {
    if (enabled()) on_ = detail::begin(cat, std::string(name), {});
  }
  // `fill(std::string& name, Args& args)` runs only when recording.
  template <class F>
  requires std::invocable<F&, std::string&, Args&> Scope(const char* cat, F&& fill) {
    if (enabled()) {
      std::string name;
      Args args;
      fill(name, args);
      on_ = detail::begin(cat, std::move(name), args.take());
    }
  }
  explicit Scope(const Site* s) {
    if (enabled()) on_ = detail::begin_site(s);
  }
  ~Scope() { end(); }
  void end() {
    if (on_) [[unlikely]] {
      on_ = false;
      detail::end();
    }
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  bool on_ = false;
};

// An eager primitive: named by the primitive, with its input and output types as args; the
// buffers allocated inside are attributed to it in the memory profile. `prim()` gives the
// name (called only when recording); `in` and `out` are ranges of Arrays (shape(), dtype())
// or avals (.shape, .dtype).
class OpScope {
 public:
  template <class Name, class In, class Out>
  OpScope(const Name& prim, const In& in, const Out& out) {
    if (enabled()) on_ = detail::begin_op_types(prim, in, out);
  }
  ~OpScope() {
    if (on_) [[unlikely]]
      detail::end();
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  bool on_ = false;
};

// The allocator's hooks: p (returned unchanged) holds `bytes`; p is being freed.
inline void* on_alloc(void* p, size_t bytes) {
  if (enabled()) detail::on_alloc(p, bytes);
  return p;
}
inline void on_free(void* p) {
  if (enabled()) detail::on_free(p);
}

}  // namespace jx::prof

#define JX_PROFILE_CAT2(a, b) a##b
#define JX_PROFILE_CAT(a, b) JX_PROFILE_CAT2(a, b)
// A scope to the end of the enclosing block: JX_PROFILE_SCOPE("checkpoint", "save") or
// JX_PROFILE_SCOPE("jit", [&](std::string& name, jx::prof::Args& args) { ... }).
#define JX_PROFILE_SCOPE(...) \
  ::jx::prof::Scope JX_PROFILE_CAT(jx_profile_scope_, __LINE__)(__VA_ARGS__)
// An eager op named by `name_expr`, evaluated only when recording:
// JX_PROFILE_OP(ops::name(p), in, out_avals).
#define JX_PROFILE_OP(name_expr, in, out) \
  ::jx::prof::OpScope JX_PROFILE_CAT(jx_profile_op_, __LINE__)([&] { return (name_expr); }, in, out)
