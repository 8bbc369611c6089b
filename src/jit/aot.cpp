// Ahead-of-time lowering and compilation (include/jx/aot.h). A lowered program is the jit
// cache's entry for one argument signature, held by the Lowered/Compiled objects: lower()
// traces it as a first call would, compile() compiles it once, and a call checks the
// signature and runs it as a cache hit would. So AOT and jit share one program per
// signature and cannot disagree.
#include "jx/aot.h"

#include "compiler/executable.h"
#include "jit/internal.h"
#include "jx/config.h"
#include "support/str.h"
#include "transforms/key_reuse.h"
#include "transforms/trace.h"

namespace jx::jit_detail {

class AotProgram {
 public:
  std::shared_ptr<JitCore> core;
  CacheKey key;
  std::shared_ptr<SignatureEntry> entry;

  const compiler::Executable& exe() const {
    JX_CHECK(entry->exe, "AotProgram used before compile()");
    return *entry->exe;
  }
};

namespace {

void check_eager(const JitCore& core, const char* what, const std::vector<Array>& leaves) {
  if (tr::current_trace() != nullptr)
    throw ValueError(str("[jit] ", what, " of '", core.opts.name,
                         "' runs outside transformations only; under grad, vmap or an enclosing "
                         "jit call the jitted function itself"));
  for (size_t i = 0; i < leaves.size(); ++i)
    if (!leaves[i].valid() || !leaves[i].is_concrete())
      throw ValueError(str("[jit] ", what, " of '", core.opts.name, "': argument leaf ", i,
                           leaves[i].valid() ? " is a traced value" : " is an empty jx::Array",
                           "; give concrete arrays"));
}

}  // namespace

std::shared_ptr<const AotProgram> lower(const std::shared_ptr<JitCore>& core, tree::TreeDef&& in_def,
                                        std::vector<Array>& leaves, TraceFn trace) {
  check_eager(*core, "lower()", leaves);
  auto p = std::make_shared<AotProgram>();
  p->core = core;
  p->key = signature_key(*core, std::move(in_def), leaves);
  std::string why;
  p->entry = traced_entry(*core, p->key, trace, &why);
  return p;
}

std::string lowered_text(const AotProgram& p) {
  // The captured values are the leading invars of the stored jaxpr; show them as constvars.
  ir::Jaxpr j = *p.entry->jaxpr;
  const auto n = long(p.entry->consts.size());
  j.constvars.assign(j.invars.begin(), j.invars.begin() + n);
  j.invars.erase(j.invars.begin(), j.invars.begin() + n);
  j.consts = p.entry->consts;
  return ir::to_string(j);
}

void compile(const AotProgram& p) { compile_once(*p.core, *p.entry, p.key, "lower().compile()"); }

std::string compiled_text(const AotProgram& p) {
  return str("optimized jaxpr:\n", ir::to_string(p.exe().program().jaxpr), "\nsteps:\n", p.exe().describe());
}

std::string compiled_source(const AotProgram& p) { return p.exe().program().source; }

CostAnalysis cost_analysis(const AotProgram& p) { return compiler::cost_analysis(p.exe().program()); }

MemoryAnalysis memory_analysis(const AotProgram& p) { return p.exe().memory_analysis(); }

const tree::TreeDef& out_def(const AotProgram& p) { return *p.entry->out_def; }

std::vector<Array> run_compiled(const AotProgram& p, tree::TreeDef&& in_def, std::vector<Array>& leaves) {
  JitCore& core = *p.core;
  check_eager(core, "a compiled call", leaves);
  CacheKey key = signature_key(core, std::move(in_def), leaves);
  if (!(key == p.key)) {
    std::vector<std::string> d = differences(p.key, key);
    std::string list;
    for (size_t i = 0; i < d.size(); ++i) list += (i ? "; " : "") + d[i];
    throw TypeError(str("[jit] '", core.opts.name,
                        "' was compiled for other argument types than this call's (compiled -> "
                        "called): ",
                        list.empty() ? "the configuration flags differ" : list,
                        ". Lower and compile again for these arguments, or call the jitted "
                        "function, which compiles once per signature"));
  }
  if (config::debug_key_reuse)
    random::key_reuse::consume_arguments(str("jit '", core.opts.name, "'"), leaves, p.entry->consumes);
  return run_entry(core, *p.entry, leaves);
}

}  // namespace jx::jit_detail
