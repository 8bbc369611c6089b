// compile(): passes -> fusion -> C++ source -> system compiler (disk-cached) -> dlopen ->
// an executable with a buffer plan. Without a working compiler the same runtime runs
// every equation of the optimized jaxpr as a library call, and says so once.
#include "compiler/compile.h"

#include "compiler/codegen.h"
#include "compiler/executable.h"
#include "compiler/fusion.h"
#include "compiler/pipeline.h"
#include "compiler/toolchain.h"
#include "support/check.h"

namespace jx::compiler {

std::shared_ptr<const Executable> compile(const ir::Jaxpr& j, const CompileOptions& opts) {
  Program p;
  p.jaxpr = optimize(j, opts.name);
  p.donate = opts.donate;
  p.plan = fuse(p.jaxpr);
  int num_kernels = 0;
  for (const FusedStep& st : p.plan.steps) num_kernels += st.is_kernel ? 1 : 0;
  if (num_kernels > 0) {
    BuildResult b = build_shared_library(generate_source(p.jaxpr, p.plan, opts.name), opts.name);
    if (b.library) {
      for (int k = 0; k < num_kernels; ++k) {
        auto fn = reinterpret_cast<KernelFn>(b.library->symbol(kernel_symbol(k)));
        JX_CHECK(fn, "generated library ", b.library->path(), " lacks ", kernel_symbol(k));
        p.kernels.push_back(fn);
      }
      p.library = std::move(b.library);
    } else {
      report_fallback_once(b.error);
      p.plan = fuse(p.jaxpr, FusionOptions{.kernels = false});
      p.header = "interpreted (no compiled kernels)";
    }
  }
  return make_executable(std::move(p));
}

}  // namespace jx::compiler
