// Shared by the jit front end (jit.cpp) and the pjit primitive's rules (pjit.cpp):
// compiling with stats and logs, running with debug_nans, binding pjit.
#pragma once
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "ir/jaxpr.h"
#include "jit/cache.h"
#include "jx/jit.h"

namespace jx::jit_detail {

using ops::Arrays;

// One per jit(f): its options, its id in the cache, and the signatures it has seen (to
// explain the next miss).
class JitCore {
 public:
  explicit JitCore(JitOptions o) : opts(std::move(o)), id(next_id().fetch_add(1) + 1) {
    if (opts.name.empty()) opts.name = "<lambda>";
    for (int a : opts.donate_argnums)
      if (a < 0)
        throw ValueError(str("[jit] donate_argnums holds ", a, " for '", opts.name,
                             "'; give non-negative argument indices"));
  }
  ~JitCore() { JitCache::get().erase_owner(id); }

  JitOptions opts;
  const uint64_t id;
  std::mutex mu;
  std::deque<std::shared_ptr<const CacheKey>> seen;  // most recent first
  static constexpr size_t kHistory = 8;

  void remember(const CacheKey& key) {
    std::lock_guard<std::mutex> g(mu);
    seen.push_front(std::make_shared<const CacheKey>(key));
    if (seen.size() > kHistory) seen.pop_back();
  }

 private:
  static std::atomic<uint64_t>& next_id() {
    static std::atomic<uint64_t> n{0};
    return n;
  }
};


// The program of one signature: the traced jaxpr and, once compiled, its executable.
struct SignatureEntry : Entry {
  std::shared_ptr<const ir::Jaxpr> jaxpr;  // invars: [consts..., leaves...]
  Arrays consts;
  std::shared_ptr<const tree::TreeDef> out_def;
  std::atomic<bool> ready{false};
  std::once_flag compiled_once;
  std::shared_ptr<const compiler::Executable> exe;  // consts bound as constvars
  std::vector<bool> donate;                          // per leaf
  std::vector<bool> consumes;  // per leaf: a PRNG key the program consumes (debug_key_reuse)
};

// ---- the call path of a signature (jit.cpp), shared with ahead-of-time compilation ----

CacheKey signature_key(const JitCore& core, tree::TreeDef&& def, const std::vector<Array>& leaves);
// The differences between an earlier signature and this one, as "what: before -> now".
std::vector<std::string> differences(const CacheKey& before, const CacheKey& now);
// "(f32[3], i32[]{weak_type=True})"
std::string signature_text(const CacheKey& key);
// The entry of an eager call's signature, traced (once) if new; `*why` gets the reason of
// a miss when log_compiles is on. On an error the entry is dropped from the cache.
std::shared_ptr<SignatureEntry> traced_entry(JitCore& core, const CacheKey& key, TraceFn fn, std::string* why);
// Compiles the entry's program once.
void compile_once(JitCore& core, SignatureEntry& e, const CacheKey& key, std::string why);
// Runs the compiled entry on the call's leaves (donated ones are consumed).
std::vector<Array> run_entry(JitCore& core, SignatureEntry& e, std::vector<Array>& leaves);

// compiler::compile, counted in jit_stats().compiles and logged under log_compiles with
// `why` (the reason of the miss).
std::shared_ptr<const compiler::Executable> compile_counted(const ir::Jaxpr& j,
                                                            const compiler::CompileOptions& opts,
                                                            const std::string& why);

// j's executable, compiled once per jaxpr (memoized in the jit cache by identity).
std::shared_ptr<const compiler::Executable> compiled(const std::shared_ptr<const ir::Jaxpr>& j,
                                                     const std::string& name);

// Runs exe eagerly (whatever trace is current) on args. With debug_nans, a NaN in a
// floating output reruns `j` (the program exe was compiled from, taking `rerun_args`) op
// by op and throws FloatingPointError naming the first primitive that produced a NaN.
Arrays run_checked(const compiler::Executable& exe, std::span<const Array> args,
                   const ir::Jaxpr& j, std::span<const Array> rerun_args, const std::string& name);

// Binds the pjit primitive on [operands...] under the current trace.
Arrays bind_pjit(const std::shared_ptr<const ir::Jaxpr>& j, const std::string& name,
                 std::span<const Array> operands);

// Rough bytes an entry holding this program costs (equations, variables, constants).
int64_t program_bytes(const ir::Jaxpr& j);
int64_t arrays_bytes(std::span<const Array> xs);

// "(f32[3], i32[])"
std::string avals_list(std::span<const ops::Aval> avals);

}  // namespace jx::jit_detail
