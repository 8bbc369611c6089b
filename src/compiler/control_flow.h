// Compiled control flow (docs/compiler.md, "Compiled control flow"): the sub-jaxprs of
// `scan`, `while` and `cond` equations inside a jitted program are compiled like the top
// level (fused, code-generated, library calls inside), and a driver runs the loop over
// them with no allocation per iteration:
//   - loop carries are double-buffered: iteration t+1's carry is written into the buffer
//     that held iteration t-1's (for scan, the last iteration writes the step's output);
//   - the body's intermediates live in an arena planned at compile time (buffers shared
//     between values whose lifetimes do not overlap), allocated once per call;
//   - scan reads each row of xs in place and writes each row of ys in place (a kernel
//     reads and writes through a pointer offset; only a library call that reads a row
//     gets a copy in a staging buffer, since an Array cannot view part of a buffer);
//   - a scan whose body never mixes the rows of its carries (scan_shard.cpp) runs as
//     independent loops over blocks of rows, one per thread, with no barrier per step.
// Nested control flow keeps its state in its parent's frame, so a loop inside a loop
// allocates once per call of the outer program too.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compiler/fusion.h"
#include "compiler/toolchain.h"
#include "ir/jaxpr.h"

namespace jx::compiler {

using KernelFn = void (*)(const void* const* in, void* const* out);

// Per-run state of a driver (scratch carries, body frames), reused across the runs of
// one call of the enclosing program.
struct ControlState {
  virtual ~ControlState() = default;
};

// Runs one cond/while/scan equation on its compiled sub-jaxprs. Called as a library step:
// `in` are the equation's operands, `out` arrive allocated with its output types, and the
// results are written into them.
class ControlDriver {
 public:
  virtual ~ControlDriver() = default;
  virtual std::unique_ptr<ControlState> new_state() const = 0;
  virtual void run(ControlState& st, std::span<const Array> in, std::span<Array> out) const = 0;
  // The driver and its bodies' steps, each line prefixed by `indent`.
  virtual std::string describe(const std::string& indent) const = 0;
};

class CompiledBody;

// describe(j, plan) with each control step's driver (bodies and their steps) on the lines
// after it, one indent deeper; every line prefixed by `indent`.
std::string describe_with_controls(const ir::Jaxpr& j, const FusionPlan& plan,
                                   const std::vector<std::shared_ptr<const ControlDriver>>& controls,
                                   const std::string& indent);

// Builds the drivers of a program's control-flow steps, recursively through nested
// control flow, and gathers every sub-jaxpr as a unit so that the whole program's kernels
// build as one shared library (sub-jaxpr kernels are renamed jx_kernel_u<unit>_<k>).
class ControlCompiler {
 public:
  explicit ControlCompiler(bool kernels) : kernels_(kernels) {}
  ~ControlCompiler();
  // One entry per step of `plan`: a driver for cond/while/scan library steps, else null.
  std::vector<std::shared_ptr<const ControlDriver>> drivers(const ir::Jaxpr& j, const FusionPlan& plan);
  int num_kernels() const;  // kernel steps over all units
  // The units' kernels, to append to the top-level source (which supplies the prelude).
  // Units whose source cannot be split from its prelude are built on their own by bind().
  std::string source(const std::string& name);
  // Resolves every unit's kernels in `lib` (or builds the units left out of source()).
  // Returns an empty string, or why a kernel could not be loaded.
  std::string bind(const std::shared_ptr<SharedLibrary>& lib, const std::string& name);
  // Libraries built by bind() for units left out of the shared source.
  const std::vector<std::shared_ptr<SharedLibrary>>& extra_libraries() const { return extra_; }

 private:
  std::shared_ptr<CompiledBody> body(const ir::Jaxpr& j, const std::vector<bool>& in_array,
                                     const std::vector<bool>& out_array,
                                     std::shared_ptr<const ir::Jaxpr> owner = nullptr);
  bool kernels_;
  std::vector<std::shared_ptr<CompiledBody>> units_;
  std::vector<bool> in_source_;
  std::vector<std::shared_ptr<SharedLibrary>> extra_;
};

}  // namespace jx::compiler
