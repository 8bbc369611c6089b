#include "support/process_group.h"

#include <atomic>

namespace jx::support {
namespace {
std::shared_ptr<ProcessGroup> g_world;  // set once by distributed::initialize, before replicas run
}  // namespace

std::shared_ptr<ProcessGroup> world() { return std::atomic_load(&g_world); }
void set_world(std::shared_ptr<ProcessGroup> group) { std::atomic_store(&g_world, std::move(group)); }
int process_index() {
  auto w = world();
  return w ? w->rank() : 0;
}
int process_count() {
  auto w = world();
  return w ? w->size() : 1;
}

}  // namespace jx::support
