// The fixed pass pipeline that compile() runs before fusion: inlining of nested jit
// calls, DCE, CSE, constant folding, algebraic simplification, convolution epilogues.
// One pass per file
// (compiler/pass_<name>.cpp); each maps a jaxpr to an equivalent one.
#pragma once
#include <string>
#include <vector>

#include "ir/jaxpr.h"

namespace jx::compiler {

struct Pass {
  const char* name;
  ir::Jaxpr (*run)(const ir::Jaxpr&);
};

// The passes in the order optimize() runs them.
const std::vector<Pass>& default_pipeline();

// Runs default_pipeline(); verifies the IR after each pass in debug builds (and when
// JX_VERIFY_PASSES=1), writes each stage to JX_DUMP_DIR when set, logs with
// JX_LOG_PASSES=1. `name` names the dump files. With `for_kernels`, the fixpoint is
// followed by the passes that only generated kernels profit from (duplicate_cheap_producers),
// in the program and its sub-jaxprs alike.
ir::Jaxpr optimize(const ir::Jaxpr& j, const std::string& name, bool for_kernels = false);

}  // namespace jx::compiler
