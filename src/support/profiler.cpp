// The profiler's recorder and jx::profiler's public functions (support/profiler.h).
#include "support/profiler.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include "jx/error.h"
#include "jx/profiler.h"
#include "support/json.h"

namespace jx::prof {

using ::jx::detail::json_quote;

std::atomic<unsigned> g_state{kUninit};

struct Group {
  std::string op, shape;
  std::atomic<int64_t> live{0}, peak{0}, buffers{0}, allocs{0};
};

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void atomic_max(std::atomic<int64_t>& a, int64_t v) {
  int64_t cur = a.load(std::memory_order_relaxed);
  while (v > cur && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

// ---- per-thread buffers ----

struct Event {
  char ph = 'X';               // 'X' a range, 'C' a counter sample
  const char* cat = "";        // a literal or a Site's text: lives for the process
  const Site* site = nullptr;  // when set, name and args come from it
  std::string name, args;
  int64_t ts = 0, dur = 0, value = 0;
};

struct Open {
  const char* cat = "";
  const Site* site = nullptr;
  std::string name, args;
  int64_t t0 = 0;
  uint64_t session = 0;
  bool emit = false;        // a trace was running when it began
  bool sets_group = false;  // an op or a compiled step: its allocations are its own
  Group* prev_group = nullptr;
};

struct ThreadBuf {
  std::mutex mu;              // taken by the owner per event (uncontended) and by stop_trace
  std::vector<Event> events;  // under mu
  uint64_t session = 0;       // under mu: the trace the events belong to
  int64_t tid = 0;
  std::string name;
  std::atomic<bool> exited{false};
  // The owner thread's alone:
  std::vector<Open> open;
  Group* group = nullptr;  // where this thread's allocations go now
  std::unordered_map<std::string, Group*> group_cache;
};

struct Control {
  std::mutex mu;  // start/stop, the buffer registry, memory on/off
  std::vector<std::shared_ptr<ThreadBuf>> bufs;
  bool tracing = false;
  bool memory_explicit = false;
  std::string dir;
  int64_t t0 = 0;
  int files = 0;
};

// Never destroyed: hooks may run during static destruction and JX_PROFILE writes at exit.
Control& ctl() {
  static Control* c = new Control();
  return *c;
}

std::atomic<uint64_t> g_session{0};

thread_local ThreadBuf* t_buf = nullptr;
thread_local bool t_dead = false;

struct BufHolder {
  ~BufHolder() {
    if (t_buf) t_buf->exited.store(true);
    t_buf = nullptr;
    t_dead = true;
  }
  void touch() {}
};
thread_local BufHolder t_holder;

ThreadBuf* buf() {
  if (t_buf) return t_buf;
  if (t_dead) return nullptr;
  auto b = std::make_shared<ThreadBuf>();
  b->tid = int64_t(::syscall(SYS_gettid));
  char name[32] = {};
  if (b->tid == int64_t(::getpid()))
    b->name = "main";
  else if (::pthread_getname_np(::pthread_self(), name, sizeof name) == 0 && name[0])
    b->name = str(name, " (", b->tid, ")");
  else
    b->name = str("thread ", b->tid);
  {
    std::lock_guard<std::mutex> lock(ctl().mu);
    // Buffers of threads that ended and hold nothing for a running trace go (a data pipeline
    // or an asynchronous checkpoint starts a thread each time).
    const uint64_t session = g_session.load(std::memory_order_acquire);
    const bool tracing = ctl().tracing;
    std::erase_if(ctl().bufs, [&](const std::shared_ptr<ThreadBuf>& o) {
      if (!o->exited.load()) return false;
      std::lock_guard<std::mutex> bl(o->mu);
      return !tracing || o->session != session || o->events.empty();
    });
    ctl().bufs.push_back(b);
  }
  t_holder.touch();  // registers the thread_local's destructor
  t_buf = b.get();
  return t_buf;
}

void push(ThreadBuf* b, uint64_t session, Event&& e) {
  std::lock_guard<std::mutex> lock(b->mu);
  if (b->session != session) {
    b->events.clear();
    b->session = session;
  }
  b->events.push_back(std::move(e));
}

void init();

unsigned state() {
  unsigned s = g_state.load(std::memory_order_acquire);
  if (s & kUninit) {
    init();
    s = g_state.load(std::memory_order_acquire);
  }
  return s;
}

// ---- memory groups and live buffers ----

struct Groups {
  std::mutex mu;
  std::unordered_map<std::string, Group*> by_key;
  std::vector<Group*> all;
};
Groups& groups() {
  static Groups* g = new Groups();
  return *g;
}

Group* group_for(const std::string& op, const std::string& shape) {
  std::string key = str(op, '\0', shape);
  Groups& G = groups();
  std::lock_guard<std::mutex> lock(G.mu);
  Group*& g = G.by_key[key];
  if (!g) {
    g = new Group();
    g->op = op;
    g->shape = shape;
    G.all.push_back(g);
  }
  return g;
}

Group* outside_group() {
  static Group* g = group_for("(outside ops)", "");
  return g;
}

struct Shard {
  std::mutex mu;
  std::unordered_map<void*, std::pair<Group*, int64_t>> live;
};
constexpr size_t kShards = 64;
std::array<Shard, kShards>& shards() {
  static auto* s = new std::array<Shard, kShards>();
  return *s;
}
Shard& shard_of(void* p) {
  uint64_t h = (uint64_t(reinterpret_cast<uintptr_t>(p)) >> 6) * 0x9e3779b97f4a7c15ULL;
  return shards()[size_t(h >> 58)];
}

std::atomic<int64_t> g_live{0}, g_peak{0};

// Called with ctl().mu held when tracking turns on.
void reset_memory() {
  for (Shard& s : shards()) {
    std::lock_guard<std::mutex> lock(s.mu);
    s.live.clear();
  }
  {
    std::lock_guard<std::mutex> lock(groups().mu);
    for (Group* g : groups().all) {
      g->live = 0;
      g->peak = 0;
      g->buffers = 0;
      g->allocs = 0;
    }
  }
  g_live = 0;
  g_peak = 0;
}

// Sets the state bits from ctl() (its mutex held): memory is tracked during a trace and when
// asked for.
void update_state_locked() {
  Control& c = ctl();
  unsigned old = g_state.load();
  bool mem = c.tracing || c.memory_explicit;
  if (mem && !(old & kMemory)) reset_memory();
  unsigned s = (old & kUninit) | (c.tracing ? kTracing : 0u) | (mem ? kMemory : 0u);
  g_state.store(s, std::memory_order_release);
}

void counter_event(int64_t live) {
  ThreadBuf* b = buf();
  if (!b) return;
  Event e;
  e.ph = 'C';
  e.cat = "memory";
  e.name = "live bytes";
  e.ts = now_ns();
  e.value = live;
  push(b, g_session.load(std::memory_order_acquire), std::move(e));
}

// ---- writing ----

void append_int(std::string& out, int64_t v) {
  char tmp[24];
  auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  out.append(tmp, r.ptr);
}

// Nanoseconds as microseconds with three decimals, exactly.
void append_us(std::string& out, int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  append_int(out, ns / 1000);
  char frac[5] = {'.', char('0' + ns % 1000 / 100), char('0' + ns % 100 / 10), char('0' + ns % 10),
                  0};
  out += frac;
}

std::string host_name() {
  char h[256] = {};
  if (::gethostname(h, sizeof h - 1) != 0 || !h[0]) return "localhost";
  std::string s = h;
  for (char& ch : s)
    if (ch == '/' || ch == ' ') ch = '_';
  return s;
}

struct Collected {
  int64_t tid;
  std::string name;
  std::vector<Event> events;
};

std::string to_json(std::vector<Collected>& threads, int64_t t0, const std::string& dir) {
  const int64_t pid = ::getpid();
  std::string out =
      "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"jx.profiler\",\"log_dir\":";
  json_quote(out, dir);
  out += "},\n\"traceEvents\":[\n";
  std::string pid_text;
  append_int(pid_text, pid);
  out +=
      str("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", pid, ",\"args\":{\"name\":\"jx\"}}");
  for (Collected& t : threads) {
    out += str(",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":", pid, ",\"tid\":", t.tid,
               ",\"args\":{\"name\":");
    json_quote(out, t.name);
    out += "}}";
    std::string tid_text;
    append_int(tid_text, t.tid);
    // Parents before children, as viewers expect for ranges that start together.
    std::vector<const Event*> order;
    order.reserve(t.events.size());
    for (const Event& e : t.events) order.push_back(&e);
    std::stable_sort(order.begin(), order.end(), [](const Event* a, const Event* b) {
      return a->ts != b->ts ? a->ts < b->ts : a->dur > b->dur;
    });
    for (const Event* e : order) {
      const std::string& name = e->site ? e->site->name : e->name;
      const std::string& args = e->site ? e->site->args_json : e->args;
      out += ",\n{\"ph\":\"";
      out += e->ph;
      out += "\",\"cat\":";
      json_quote(out, e->cat);
      out += ",\"name\":";
      json_quote(out, name);
      out += ",\"pid\":";
      out += pid_text;
      out += ",\"tid\":";
      out += tid_text;
      out += ",\"ts\":";
      append_us(out, e->ts - t0);
      if (e->ph == 'X') {
        out += ",\"dur\":";
        append_us(out, e->dur);
        if (!args.empty()) {
          out += ",\"args\":";
          out += args;
        }
      } else {
        out += ",\"args\":{\"bytes\":";
        append_int(out, e->value);
        out += '}';
      }
      out += '}';
    }
  }
  out += "\n]}\n";
  return out;
}

// Writes `text` to `path` through a temporary file in the same directory.
void write_atomically(const std::string& path, const std::string& text, const char* op) {
  std::string tmp = str(path, ".tmp.", ::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (f) f.write(text.data(), std::streamsize(text.size()));
    if (f) f.close();
    if (!f) {
      int err = errno;
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw IOError(str("[", op, "] cannot write '", path, "': ", std::strerror(err),
                        "; give a writable directory"));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw IOError(
        str("[", op, "] cannot write '", path, "': ", ec.message(), "; give a writable directory"));
  }
}

void start_trace_impl(const std::string& log_dir) {
  const char* op = "profiler.start_trace";
  Control& c = ctl();
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.tracing)
    throw ValueError(str("[", op, "] a trace into '", c.dir,
                         "' is already running; cannot start one into '", log_dir,
                         "'. Call stop_trace() first (one trace at a time, as in JAX)"));
  if (log_dir.empty())
    throw ValueError(str("[", op, "] the log directory is empty; give a directory path"));
  std::error_code ec;
  std::filesystem::create_directories(log_dir, ec);
  if (ec || !std::filesystem::is_directory(log_dir))
    throw IOError(str("[", op, "] cannot create the log directory '", log_dir,
                      "': ", ec ? ec.message() : std::string("it is not a directory"),
                      "; give a writable directory"));
  // Fail now rather than after the traced work: the file is written there at stop.
  std::string probe = str(log_dir, "/.jx_profiler_probe.", ::getpid());
  {
    std::ofstream f(probe);
    if (!f)
      throw IOError(str("[", op, "] cannot write in the log directory '", log_dir,
                        "': ", std::strerror(errno), "; give a writable directory"));
  }
  std::filesystem::remove(probe, ec);
  c.dir = log_dir;
  c.t0 = now_ns();
  c.tracing = true;
  g_session.fetch_add(1, std::memory_order_acq_rel);
  update_state_locked();
}

std::string stop_trace_impl() {
  const char* op = "profiler.stop_trace";
  Control& c = ctl();
  std::vector<Collected> threads;
  std::string path, dir;
  int64_t t0;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (!c.tracing)
      throw ValueError(str("[", op, "] no trace is running; call start_trace(log_dir) first"));
    c.tracing = false;
    update_state_locked();
    const uint64_t session = g_session.load(std::memory_order_acquire);
    for (auto& b : c.bufs) {
      std::lock_guard<std::mutex> bl(b->mu);
      if (b->session == session && !b->events.empty())
        threads.push_back({b->tid, b->name, std::move(b->events)});
      b->events.clear();
    }
    std::erase_if(c.bufs, [](const std::shared_ptr<ThreadBuf>& b) { return b->exited.load(); });
    dir = c.dir;
    t0 = c.t0;
    path = str(dir, "/", host_name(), ".", ::getpid(), ".", c.files++, ".trace.json");
  }
  std::sort(threads.begin(), threads.end(),
            [](const Collected& a, const Collected& b) { return a.tid < b.tid; });
  write_atomically(path, to_json(threads, t0, dir), op);
  return path;
}

void init() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_state.fetch_and(~kUninit, std::memory_order_acq_rel);
    const char* dir = std::getenv("JX_PROFILE");
    if (!dir || !*dir) return;
    try {
      start_trace_impl(dir);
      std::atexit([] {
        try {
          if (ctl().tracing)
            std::cerr << "[jx profiler] JX_PROFILE: trace written to " << stop_trace_impl() << "\n";
        } catch (const std::exception& e) {
          std::cerr << "[jx profiler] JX_PROFILE: " << e.what() << "\n";
        }
      });
    } catch (const std::exception& e) {
      std::cerr << "[jx profiler] JX_PROFILE=" << dir << " is ignored: " << e.what() << "\n";
    }
  });
}

bool open_scope(Open&& o) {
  const unsigned s = state();
  o.emit = (s & kTracing) != 0;
  if (!o.emit && !(o.sets_group && (s & kMemory))) return false;
  ThreadBuf* b = buf();
  if (!b) return false;
  o.session = g_session.load(std::memory_order_acquire);
  o.prev_group = b->group;
  b->open.push_back(std::move(o));
  b->open.back().t0 = now_ns();
  return true;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

}  // namespace

// ---- the hooks' slow paths ----

namespace detail {

bool begin(const char* cat, std::string name, std::string args_json) {
  Open o;
  o.cat = cat;
  o.name = std::move(name);
  o.args = std::move(args_json);
  return open_scope(std::move(o));
}

bool begin_site(const Site* s) {
  Open o;
  o.cat = s->cat.c_str();
  o.site = s;
  o.sets_group = true;
  if (!open_scope(std::move(o))) return false;
  t_buf->group = s->group;
  return true;
}

bool begin_op(const char* prim, std::vector<std::string> in_types,
              std::vector<std::string> out_types) {
  Open o;
  o.cat = "op";
  o.name = prim;
  o.sets_group = true;
  std::string shape = join(out_types, ", ");
  o.args = Args().add("inputs", in_types).add("outputs", out_types).take();
  if (!open_scope(std::move(o))) return false;
  ThreadBuf* b = t_buf;
  if (g_state.load(std::memory_order_relaxed) & kMemory) {
    std::string key = prim;
    key += '\0';
    key += shape;
    auto it = b->group_cache.find(key);
    if (it == b->group_cache.end())
      it = b->group_cache.emplace(std::move(key), group_for(prim, shape)).first;
    b->group = it->second;
  }
  return true;
}

void end() {
  ThreadBuf* b = t_buf;
  if (!b || b->open.empty()) return;
  const int64_t t1 = now_ns();
  Open o = std::move(b->open.back());
  b->open.pop_back();
  b->group = o.prev_group;
  if (!o.emit || !(g_state.load(std::memory_order_acquire) & kTracing) ||
      g_session.load(std::memory_order_acquire) != o.session)
    return;
  Event e;
  e.cat = o.cat;
  e.site = o.site;
  e.name = std::move(o.name);
  e.args = std::move(o.args);
  e.ts = o.t0;
  e.dur = t1 - o.t0;
  push(b, o.session, std::move(e));
}

void on_alloc(void* p, size_t bytes) {
  const unsigned s = state();
  if (!(s & kMemory) || !p) return;
  Group* g = t_buf && t_buf->group ? t_buf->group : outside_group();
  const int64_t n = int64_t(bytes);
  {
    Shard& sh = shard_of(p);
    std::lock_guard<std::mutex> lock(sh.mu);
    auto [it, fresh] = sh.live.try_emplace(p, g, n);
    if (!fresh) return;  // already tracked: the allocator handed out a live block twice?
  }
  atomic_max(g->peak, g->live.fetch_add(n, std::memory_order_relaxed) + n);
  g->buffers.fetch_add(1, std::memory_order_relaxed);
  g->allocs.fetch_add(1, std::memory_order_relaxed);
  const int64_t live = g_live.fetch_add(n, std::memory_order_relaxed) + n;
  atomic_max(g_peak, live);
  if (s & kTracing) counter_event(live);
}

void on_free(void* p) {
  const unsigned s = state();
  if (!(s & kMemory) || !p) return;
  std::pair<Group*, int64_t> rec;
  {
    Shard& sh = shard_of(p);
    std::lock_guard<std::mutex> lock(sh.mu);
    auto it = sh.live.find(p);
    if (it == sh.live.end()) return;  // allocated before tracking began
    rec = it->second;
    sh.live.erase(it);
  }
  rec.first->live.fetch_sub(rec.second, std::memory_order_relaxed);
  rec.first->buffers.fetch_sub(1, std::memory_order_relaxed);
  const int64_t live = g_live.fetch_sub(rec.second, std::memory_order_relaxed) - rec.second;
  if (s & kTracing) counter_event(live);
}

}  // namespace detail

// ---- Args, types and Sites ----

std::string detail::type_text(DType dtype, const Shape& shape) {
  std::string s = dtype_short_name(dtype);
  s += '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    append_int(s, shape[i]);
  }
  s += ']';
  return s;
}

Args& Args::add(std::string_view key, std::string_view value) {
  s_ += s_.empty() ? "{" : ",";
  json_quote(s_, key);
  s_ += ':';
  json_quote(s_, value);
  return *this;
}

Args& Args::add(std::string_view key, int64_t value) {
  s_ += s_.empty() ? "{" : ",";
  json_quote(s_, key);
  s_ += str(':', value);
  return *this;
}

Args& Args::add(std::string_view key, const std::vector<std::string>& values) {
  s_ += s_.empty() ? "{" : ",";
  json_quote(s_, key);
  s_ += ":[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s_ += ',';
    json_quote(s_, values[i]);
  }
  s_ += ']';
  return *this;
}

std::string Args::take() {
  if (s_.empty()) return {};
  s_ += '}';
  return std::move(s_);
}

const Site* intern_site(std::string cat, std::string name, std::string args_json,
                        std::string mem_shape) {
  static std::mutex mu;
  static auto* sites = new std::map<std::string, std::unique_ptr<Site>>();
  std::string key = str(cat, '\0', name, '\0', args_json, '\0', mem_shape);
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = (*sites)[key];
  if (!slot) {
    slot = std::make_unique<Site>();
    slot->group = group_for(name, mem_shape);
    slot->cat = std::move(cat);
    slot->name = std::move(name);
    slot->args_json = std::move(args_json);
    slot->mem_shape = std::move(mem_shape);
  }
  return slot.get();
}

std::vector<const Site*> step_sites(const std::string& text) {
  std::vector<const Site*> r;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    const std::string_view kernel = "kernel ", library = "library ";
    size_t colon = line.find(": "), arrow = line.find(" -> ");
    if (line.starts_with(kernel) && colon != std::string::npos) {
      std::string head =
          line.substr(kernel.size(), colon - kernel.size());  // "k0 f32[8,10] reducing (1,)"
      std::string eqns = line.substr(colon + 2);
      size_t sp = head.find(' ');
      std::string k = head.substr(0, sp);
      std::string domain = sp == std::string::npos ? "" : head.substr(sp + 1);
      std::string shape = domain.substr(0, domain.find(" reducing"));
      std::string name = str(k, ": ", eqns);
      if (name.size() > 64) name = name.substr(0, 61) + "...";
      r.push_back(intern_site(
          "kernel", std::move(name),
          Args().add("kernel", k).add("domain", domain).add("eqns", eqns).take(), shape));
    } else if (line.starts_with(library) && arrow != std::string::npos) {
      std::string prim = line.substr(library.size(), arrow - library.size());
      std::string outs = line.substr(arrow + 4);
      r.push_back(intern_site("library", prim, Args().add("outputs", outs).take(), outs));
    } else {
      r.push_back(intern_site("step", line, {}, ""));
    }
  }
  return r;
}

}  // namespace jx::prof

// ---- the public API ----

namespace jx::profiler {

using prof::ctl;

void start_trace(const std::string& log_dir) {
  prof::init();
  prof::start_trace_impl(log_dir);
}

std::string stop_trace() {
  prof::init();
  return prof::stop_trace_impl();
}

bool is_tracing() {
  prof::init();
  std::lock_guard<std::mutex> lock(ctl().mu);
  return ctl().tracing;
}

Trace::Trace(const std::string& log_dir) { start_trace(log_dir); }

Trace::~Trace() {
  if (!active_) return;
  try {
    stop();
  } catch (const std::exception& e) {
    std::cerr << "[jx profiler] Trace: " << e.what() << "\n";
  }
}

std::string Trace::stop() {
  if (!active_) throw ValueError("[profiler.Trace] stop() was already called; a Trace stops once");
  active_ = false;
  return stop_trace();
}

TraceAnnotation::TraceAnnotation(const std::string& name) {
  if (prof::enabled()) on_ = prof::detail::begin("user", name, {});
}
TraceAnnotation::~TraceAnnotation() {
  if (on_) prof::detail::end();
}

StepTraceAnnotation::StepTraceAnnotation(const std::string& name, int64_t step_num) {
  if (prof::enabled())
    on_ = prof::detail::begin("step", name, prof::Args().add("step_num", step_num).take());
}
StepTraceAnnotation::~StepTraceAnnotation() {
  if (on_) prof::detail::end();
}

void enable_memory_profile(bool on) {
  prof::init();
  std::lock_guard<std::mutex> lock(ctl().mu);
  ctl().memory_explicit = on;
  prof::update_state_locked();
}

MemoryProfile device_memory_profile() {
  prof::init();
  MemoryProfile m;
  m.tracking = (prof::g_state.load() & prof::kMemory) != 0;
  m.live_bytes = prof::g_live.load();
  m.peak_bytes = prof::g_peak.load();
  {
    std::lock_guard<std::mutex> lock(prof::groups().mu);
    for (const prof::Group* g : prof::groups().all) {
      if (g->allocs.load() == 0) continue;
      m.entries.push_back(
          {g->op, g->shape, g->live.load(), g->buffers.load(), g->peak.load(), g->allocs.load()});
    }
  }
  std::sort(m.entries.begin(), m.entries.end(),
            [](const MemoryProfile::Entry& a, const MemoryProfile::Entry& b) {
              if (a.live_bytes != b.live_bytes) return a.live_bytes > b.live_bytes;
              if (a.peak_bytes != b.peak_bytes) return a.peak_bytes > b.peak_bytes;
              return std::tie(a.op, a.shape) < std::tie(b.op, b.shape);
            });
  return m;
}

std::string MemoryProfile::to_string() const {
  std::string s = str("jx memory profile (tracking ", tracking ? "on" : "off", "): live ",
                      live_bytes, " bytes, peak ", peak_bytes, " bytes\n");
  char line[96];
  std::snprintf(line, sizeof line, "%14s %8s %14s %8s  %s\n", "live_bytes", "buffers", "peak_bytes",
                "allocs", "op [shape]");
  s += line;
  for (const Entry& e : entries) {
    std::snprintf(line, sizeof line, "%14" PRId64 " %8" PRId64 " %14" PRId64 " %8" PRId64 "  ",
                  e.live_bytes, e.live_buffers, e.peak_bytes, e.allocations);
    s += line;
    s += e.op;
    if (!e.shape.empty()) s += str(" [", e.shape, "]");
    s += "\n";
  }
  return s;
}

void save_device_memory_profile(const std::string& path) {
  prof::write_atomically(path, device_memory_profile().to_string(),
                         "profiler.save_device_memory_profile");
}

}  // namespace jx::profiler
