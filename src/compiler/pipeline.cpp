// Placeholder until the passes land: the identity pipeline.
#include "compiler/pipeline.h"

namespace jx::compiler {

const std::vector<Pass>& default_pipeline() {
  static const std::vector<Pass> passes;
  return passes;
}

ir::Jaxpr optimize(const ir::Jaxpr& j, const std::string&) { return j; }

}  // namespace jx::compiler
