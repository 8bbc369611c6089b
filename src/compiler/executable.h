// The executable runtime: runs a FusionPlan's steps in order over an environment of
// arrays, one slot per jaxpr variable (plus slots for literal operands of library calls).
//
// Buffer plan, fixed at compile time so that a call does no lookups:
//   - each slot is released right after its last reader, so its buffer goes back to the
//     caching allocator (core/allocator.h) and the next output of that size class reuses
//     it (liveness-based reuse, safe even when a library call aliased the buffer);
//   - outputs are fresh arrays, except that a donated argument's buffer is reused for a
//     returned value of the same shape and dtype once the argument is dead (or, for an
//     elementwise kernel that reads it at the same index it writes, in place).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/control_flow.h"
#include "compiler/fusion.h"
#include "compiler/toolchain.h"

namespace jx::compiler {

struct Program {
  ir::Jaxpr jaxpr;                         // the optimized jaxpr the plan refers to
  FusionPlan plan;
  std::vector<KernelFn> kernels;           // one per kernel step, in step order
  std::shared_ptr<SharedLibrary> library;  // keeps the kernels loaded
  std::vector<std::shared_ptr<SharedLibrary>> extra_libraries;  // sub-jaxpr kernels built apart
  // Per step: the driver of a cond/while/scan step whose sub-jaxprs are compiled
  // (control_flow.h), else null (or empty: none at all).
  std::vector<std::shared_ptr<const ControlDriver>> controls;
  std::vector<bool> donate;                // per invar
  std::string header;                      // first line of describe(), e.g. why interpreted
  std::string source;                      // the generated C++ (empty when interpreted)
};

std::shared_ptr<const Executable> make_executable(Program p);

}  // namespace jx::compiler
