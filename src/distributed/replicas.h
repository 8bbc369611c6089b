// The replica runner shared by pmap and shard_map (src/distributed/*.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "jx/array.h"
#include "ops/collective.h"

namespace jx::distributed_detail {

// Runs body(i) for i in [0, n), each on its own thread (0 on the caller's) with the named
// axes axes(i) bound, max(1, cores / n) OpenMP threads and the caller's config flags. The
// first replica that throws aborts every rendezvous (so the others leave their
// collectives) and its exception is rethrown once all have finished.
std::vector<std::vector<Array>> run_replicas(
    int64_t n, const std::vector<std::shared_ptr<ops::collective::Rendezvous>>& rendezvous,
    const std::function<std::vector<ops::collective::NamedAxis>(int64_t)>& axes,
    const std::function<std::vector<Array>(int64_t)>& body);

}  // namespace jx::distributed_detail
