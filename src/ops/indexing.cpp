// Family: indexing (see ops/primitives.def). Rules are filled by the foundation issue's work.
#include "ops/common.h"

namespace jx::ops {

void register_indexing() {}

}  // namespace jx::ops
