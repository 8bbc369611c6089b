// compile(): passes -> fusion -> C++ source -> system compiler (disk-cached) -> dlopen ->
// an executable with a buffer plan. The sub-jaxprs of cond/while/scan steps are fused and
// generated the same way, recursively, into the same source file, and run by compiled
// loop drivers (control_flow.h). Without a working compiler the same runtime runs every
// equation of the optimized jaxpr (and of its sub-jaxprs) as a library call, and says so
// once.
#include "compiler/compile.h"

#include "compiler/codegen.h"
#include "compiler/control_flow.h"
#include "compiler/executable.h"
#include "compiler/fusion.h"
#include "compiler/pipeline.h"
#include "compiler/toolchain.h"
#include "support/check.h"
#include "support/profiler.h"

namespace jx::compiler {
namespace {

// Fuses the program and its sub-jaxprs and, with `kernels`, builds and loads their
// kernels. Returns the reason when kernels were wanted but could not be built or loaded.
std::string plan_program(Program& p, const std::string& name, bool kernels) {
  prof::Scope codegen("jit",
                      [&](std::string& n, prof::Args& a) { n = "codegen", a.add("program", name); });
  p.plan = fuse(p.jaxpr, FusionOptions{.kernels = kernels});
  ControlCompiler controls(kernels);
  p.controls = controls.drivers(p.jaxpr, p.plan);
  p.kernels.clear();
  int num_kernels = 0;
  for (const FusedStep& st : p.plan.steps) num_kernels += st.is_kernel ? 1 : 0;
  if (num_kernels + controls.num_kernels() == 0) return {};
  std::string src = generate_source(p.jaxpr, p.plan, name);
  src += controls.source(name);
  codegen.end();
  BuildResult b = build_shared_library(src, name);
  if (!b.library) return b.error;
  for (int k = 0; k < num_kernels; ++k) {
    auto fn = reinterpret_cast<KernelFn>(b.library->symbol(kernel_symbol(k)));
    JX_CHECK(fn, "generated library ", b.library->path(), " lacks ", kernel_symbol(k));
    p.kernels.push_back(fn);
  }
  std::string why = controls.bind(b.library, name);
  if (!why.empty()) return why;
  p.library = std::move(b.library);
  p.extra_libraries = controls.extra_libraries();
  p.source = std::move(src);
  return {};
}

}  // namespace

std::shared_ptr<const Executable> compile(const ir::Jaxpr& j, const CompileOptions& opts) {
  Program p;
  p.jaxpr = optimize(j, opts.name, /*for_kernels=*/true);
  p.donate = opts.donate;
  std::string why = plan_program(p, opts.name, true);
  if (!why.empty()) {
    report_fallback_once(why);
    p.jaxpr = optimize(j, opts.name);  // without copies that only kernels profit from
    plan_program(p, opts.name, false);
    p.header = "interpreted (no compiled kernels)";
  }
  return make_executable(std::move(p));
}

}  // namespace jx::compiler
