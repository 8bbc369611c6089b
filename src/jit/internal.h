// Shared by the jit front end (jit.cpp) and the pjit primitive's rules (pjit.cpp):
// compiling with stats and logs, running with debug_nans, binding pjit.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "ir/jaxpr.h"

namespace jx::jit_detail {

using ops::Arrays;

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
