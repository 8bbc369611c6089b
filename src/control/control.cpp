// Family: structured control flow. Each primitive's rules live in its own file
// (cond.cpp, while.cpp, scan.cpp); this registers them together.
#include "ops/common.h"

namespace jx::control {
void register_cond();
void register_while();
void register_scan();
}  // namespace jx::control

namespace jx::ops {
void register_control() {
  control::register_cond();
  control::register_while();
  control::register_scan();
}
}  // namespace jx::ops
