// Family: unary (see ops/primitives.def). Rules are filled by the foundation issue's work.
#include "ops/common.h"

namespace jx::ops {

void register_unary() {}

}  // namespace jx::ops
