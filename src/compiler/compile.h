// The compiler's entry point: a jaxpr in, an executable out (DESIGN section 2, "jit and
// the compiler"). compile() runs the pass pipeline (pipeline.h), fuses, generates C++ for
// the fused kernels, builds and loads them, and plans buffers. With no C++ compiler found
// the executable runs the optimized jaxpr op by op.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "jx/aot.h"

namespace jx::compiler {

struct Program;

struct CompileOptions {
  std::string name = "jit";   // for logs and dump file names
  std::vector<bool> donate;   // per invar: its buffer may be reused for an output
};

class Executable {
 public:
  virtual ~Executable() = default;
  // Runs on concrete arrays, one per invar of the compiled jaxpr (constvars are bound
  // inside). Donated arguments must not be used by the caller afterwards.
  virtual std::vector<Array> run(std::span<const Array> args) const = 0;
  // One line per step (fused kernel or library call), for logs and tests.
  virtual std::string describe() const = 0;
  // What the executable was built from (ahead-of-time inspection, jx/aot.h).
  virtual const Program& program() const = 0;
  // Bytes of arguments, outputs, constants, the peak of intermediates under the buffer
  // plan, and of the loaded kernels (JAX's Compiled.memory_analysis()).
  virtual MemoryAnalysis memory_analysis() const = 0;
};

// FLOPs, transcendental operations and bytes accessed of each step of the program and in
// all (JAX's Compiled.cost_analysis(); analysis.cpp says how each primitive counts).
CostAnalysis cost_analysis(const Program& p);

std::shared_ptr<const Executable> compile(const ir::Jaxpr& j, const CompileOptions& opts);

}  // namespace jx::compiler
