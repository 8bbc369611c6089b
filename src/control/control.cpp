// Family: control flow (cond, while, scan). Rules are being written (issue 4).
#include "ops/common.h"

namespace jx::ops {
void register_control() {}
}  // namespace jx::ops
