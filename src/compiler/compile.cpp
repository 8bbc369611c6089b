// Placeholder until code generation lands: runs the optimized jaxpr op by op.
#include "compiler/compile.h"

#include "compiler/pipeline.h"

namespace jx::compiler {
namespace {

class Interpreted : public Executable {
 public:
  explicit Interpreted(ir::Jaxpr j) : j_(std::move(j)) {}
  std::vector<Array> run(std::span<const Array> args) const override { return ir::eval_jaxpr(j_, args); }
  std::string describe() const override { return "interpreted jaxpr"; }

 private:
  ir::Jaxpr j_;
};

}  // namespace

std::shared_ptr<const Executable> compile(const ir::Jaxpr& j, const CompileOptions& opts) {
  return std::make_shared<Interpreted>(optimize(j, opts.name));
}

}  // namespace jx::compiler
