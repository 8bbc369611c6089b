// Ahead-of-time lowering and compilation, as JAX's `jax.jit(f).lower(*args).compile()`.
//
//   auto step = jx::jit(train_step, {.name = "step"});
//   auto lowered = step.lower(state, x, y);      // traces once; compiles nothing
//   std::cout << lowered.as_text();              // the traced jaxpr
//   auto compiled = lowered.compile();           // passes, fusion, C++, the system compiler
//   std::cout << compiled.as_text();             // optimized jaxpr and the executable's steps
//   std::string cpp = compiled.source();         // the generated kernels
//   jx::CostAnalysis c = compiled.cost_analysis();      // FLOPs, bytes, per step
//   jx::MemoryAnalysis m = compiled.memory_analysis();  // argument/output/temp bytes
//   auto [state2, loss] = compiled(state, x, y); // runs; never traces again
//
// lower() and compile() fill the same cache entry as a call of the jitted function with
// those argument types, so `step(state, x, y)` afterwards neither traces nor compiles, and
// compiled(...) and step(...) run the same executable. A Compiled object only accepts the
// argument types (shapes, dtypes, weak types, pytree structure and static values) it was
// lowered with: anything else is a TypeError that lists the differences (JAX: "Argument
// types differ from the types for which this computation was compiled"); the jitted
// function itself compiles per signature. lower() runs eagerly only (not under a
// transformation), on concrete arguments; donation (donate_argnums) applies to
// compiled(...) as to the jitted call.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jx/jit_detail.h"

namespace jx {

// One step of the executable (a fused kernel or a library call, named as
// Compiled::as_text() lists it) and what it costs.
struct StepCost {
  std::string step;
  double flops = 0;            // multiply-adds count two
  double transcendentals = 0;  // exp, log, tanh, sin, sqrt, pow, erf, ... one per element
  double bytes_accessed = 0;   // read and written at the step's boundary
};

// XLA's cost analysis, in jx's terms (docs/jit.md, "Ahead-of-time compilation").
struct CostAnalysis {
  double flops = 0;
  double transcendentals = 0;
  double bytes_accessed = 0;
  std::vector<StepCost> steps;  // in execution order; they sum to the totals
};

// XLA's memory analysis: what one call holds in memory.
struct MemoryAnalysis {
  int64_t argument_bytes = 0;  // the array arguments
  int64_t output_bytes = 0;    // the results
  int64_t alias_bytes = 0;     // of the outputs, those written into donated arguments
  int64_t temp_bytes = 0;      // peak of the intermediates alive at once (buffer plan)
  int64_t constant_bytes = 0;  // values captured at trace time
  int64_t generated_code_bytes = 0;  // the loaded shared libraries of generated kernels
};

namespace jit_detail {

class AotProgram;  // one argument signature's traced (and later compiled) program

std::shared_ptr<const AotProgram> lower(const std::shared_ptr<JitCore>& core, tree::TreeDef&& in_def,
                                        std::vector<Array>& leaves, TraceFn trace);
std::string lowered_text(const AotProgram& p);
void compile(const AotProgram& p);
std::string compiled_text(const AotProgram& p);
std::string compiled_source(const AotProgram& p);
CostAnalysis cost_analysis(const AotProgram& p);
MemoryAnalysis memory_analysis(const AotProgram& p);
// Checks the arguments against the lowered signature and runs the executable.
std::vector<Array> run_compiled(const AotProgram& p, tree::TreeDef&& in_def, std::vector<Array>& leaves);
const tree::TreeDef& out_def(const AotProgram& p);

}  // namespace jit_detail

// A compiled program for one argument signature. R is the function's result type; Args
// are the argument types it was traced with (a floating-point C++ scalar argument of a
// function taking an Array there is an Array: pass a number, it converts).
template <class R, class... Args>
class Compiled {
 public:
  explicit Compiled(std::shared_ptr<const jit_detail::AotProgram> p) : p_(std::move(p)) {}

  R operator()(const Args&... args) const {
    auto flat = jit_detail::flatten_args(args...);
    std::vector<Array> outs = jit_detail::run_compiled(*p_, std::move(flat.second), flat.first);
    return tree::unflatten<R>(jit_detail::out_def(*p_), std::move(outs));
  }
  // The optimized jaxpr, then one line per step of the executable.
  std::string as_text() const { return jit_detail::compiled_text(*p_); }
  // The generated C++ of every fused kernel (empty when the program has none, or when no
  // C++ compiler was found and the program runs op by op).
  std::string source() const { return jit_detail::compiled_source(*p_); }
  CostAnalysis cost_analysis() const { return jit_detail::cost_analysis(*p_); }
  MemoryAnalysis memory_analysis() const { return jit_detail::memory_analysis(*p_); }

 private:
  std::shared_ptr<const jit_detail::AotProgram> p_;
};

// A traced program, not yet compiled.
template <class R, class... Args>
class Lowered {
 public:
  explicit Lowered(std::shared_ptr<const jit_detail::AotProgram> p) : p_(std::move(p)) {}

  // The jaxpr as traced (values captured from outside are its constvars).
  std::string as_text() const { return jit_detail::lowered_text(*p_); }
  Compiled<R, Args...> compile() const {
    jit_detail::compile(*p_);
    return Compiled<R, Args...>(p_);
  }

 private:
  std::shared_ptr<const jit_detail::AotProgram> p_;
};

}  // namespace jx
