// The caching allocator. Freed blocks go back to per-size-class free lists instead of to
// the OS: on these machines the first touch of fresh memory costs ~3-5 ms per MB, so an
// array library that returns large buffers on every op spends its time in page faults.
#pragma once
#include <cstddef>
#include <cstdint>

namespace jx::detail {

struct AllocatorStats {
  size_t bytes_in_use = 0;    // held by live buffers
  size_t bytes_cached = 0;    // in free lists, ready for reuse
  size_t peak_bytes_in_use = 0;
  uint64_t num_allocs = 0;    // allocate() calls
  uint64_t num_os_allocs = 0; // of which served by the OS
};

// 64-byte aligned; size 0 gives a valid, unique pointer. Thread-safe.
void* allocate(size_t nbytes);
void deallocate(void* p, size_t nbytes);
AllocatorStats allocator_stats();
// Upper bound on cached bytes (default 4 GiB, env JX_ALLOCATOR_CACHE_BYTES); cached
// blocks beyond it go back to the OS.
void set_cache_limit(size_t bytes);
// Returns every cached block to the OS.
void clear_cache();

}  // namespace jx::detail
