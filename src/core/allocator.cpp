#include "core/allocator.h"

#include <sys/mman.h>

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "support/profiler.h"

namespace jx::detail {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kHugeThreshold = size_t(2) << 20;

// Size classes: multiples of 64 bytes up to 4 KiB, then powers of two split in four
// (at most 25% waste), so that buffers of nearby sizes share a free list.
size_t round_size(size_t n) {
  if (n <= 4096) return ((n + kAlign - 1) / kAlign) * kAlign;
  size_t p = 4096;
  while (p < n) p <<= 1;
  size_t quarter = p / 8;  // p/2 .. p in steps of p/8
  size_t r = p / 2;
  while (r < n) r += quarter;
  return r;
}

int class_index(size_t rounded) {
  if (rounded <= 4096) return int(rounded / kAlign);  // 0..64
  int idx = 65;
  size_t p = 8192;
  while (p < rounded) {
    p <<= 1;
    idx += 4;
  }
  size_t quarter = p / 8;
  size_t base = p / 2;
  return idx + int((rounded - base + quarter - 1) / quarter) - 1;
}

struct Pool {
  std::mutex mu;
  std::vector<std::vector<void*>> free_lists = std::vector<std::vector<void*>>(512);
  AllocatorStats stats;
  size_t cache_limit = [] {
    const char* e = std::getenv("JX_ALLOCATOR_CACHE_BYTES");
    return e ? size_t(std::strtoull(e, nullptr, 10)) : (size_t(4) << 30);
  }();
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: buffers may outlive static destruction
  return *p;
}

void* os_alloc(size_t rounded) {
  // Large blocks: 2 MiB aligned and sized (aligned_alloc needs a multiple of the
  // alignment) and backed by transparent huge pages, which cut first-touch cost ~50x here.
  bool huge = rounded >= kHugeThreshold;
  size_t align = huge ? kHugeThreshold : kAlign;
  size_t bytes = (rounded + align - 1) / align * align;
  void* p = std::aligned_alloc(align, bytes);
  if (!p) throw std::bad_alloc();
  if (huge) madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

}  // namespace

void* allocate(size_t nbytes) {
  size_t rounded = round_size(nbytes == 0 ? 1 : nbytes);
  int ci = class_index(rounded);
  Pool& P = pool();
  {
    std::lock_guard<std::mutex> lock(P.mu);
    P.stats.num_allocs++;
    P.stats.bytes_in_use += rounded;
    if (P.stats.bytes_in_use > P.stats.peak_bytes_in_use)
      P.stats.peak_bytes_in_use = P.stats.bytes_in_use;
    auto& fl = P.free_lists[size_t(ci)];
    if (!fl.empty()) {
      void* p = fl.back();
      fl.pop_back();
      P.stats.bytes_cached -= rounded;
      return prof::on_alloc(p, rounded);
    }
    P.stats.num_os_allocs++;
  }
  return prof::on_alloc(os_alloc(rounded), rounded);
}

void deallocate(void* p, size_t nbytes) {
  if (!p) return;
  prof::on_free(p);
  size_t rounded = round_size(nbytes == 0 ? 1 : nbytes);
  int ci = class_index(rounded);
  Pool& P = pool();
  {
    std::lock_guard<std::mutex> lock(P.mu);
    P.stats.bytes_in_use -= rounded;
    if (P.stats.bytes_cached + rounded <= P.cache_limit) {
      P.free_lists[size_t(ci)].push_back(p);
      P.stats.bytes_cached += rounded;
      return;
    }
  }
  std::free(p);
}

AllocatorStats allocator_stats() {
  std::lock_guard<std::mutex> lock(pool().mu);
  return pool().stats;
}

void set_cache_limit(size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(pool().mu);
    pool().cache_limit = bytes;
  }
  if (allocator_stats().bytes_cached > bytes) clear_cache();
}

void clear_cache() {
  Pool& P = pool();
  std::lock_guard<std::mutex> lock(P.mu);
  for (auto& fl : P.free_lists) {
    for (void* p : fl) std::free(p);
    fl.clear();
  }
  P.stats.bytes_cached = 0;
}

}  // namespace jx::detail
