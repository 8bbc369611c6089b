#include "jx/config.h"

#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "jx/error.h"
#include "support/str.h"

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define JX_HAVE_MXCSR 1
#endif

namespace jx::config {

BoolFlag threefry_partitionable("threefry_partitionable", "JX_THREEFRY_PARTITIONABLE", true);
BoolFlag disable_jit("disable_jit", "JX_DISABLE_JIT", false);
BoolFlag debug_nans("debug_nans", "JX_DEBUG_NANS", false);
BoolFlag log_compiles("log_compiles", "JX_LOG_COMPILES", false);
BoolFlag conv_winograd("conv_winograd", "JX_CONV_WINOGRAD", true);

namespace {

// Innermost last; a flag's override is its last entry here.
thread_local std::vector<std::pair<const BoolFlag*, bool>> t_overrides;

int parse_env(const char* var, bool fallback) {
  const char* s = std::getenv(var);
  if (!s || !*s) return fallback ? 1 : 0;
  for (const char* t : {"1", "true", "True", "TRUE", "yes", "on"})
    if (std::strcmp(s, t) == 0) return 1;
  for (const char* f : {"0", "false", "False", "FALSE", "no", "off"})
    if (std::strcmp(s, f) == 0) return 0;
  throw ValueError(str("[jx::config] environment variable ", var, "='", s,
                       "' is not a boolean; use 0 or 1"));
}

}  // namespace

bool BoolFlag::value() const {
  for (auto it = t_overrides.rbegin(); it != t_overrides.rend(); ++it)
    if (it->first == this) return it->second;
  int s = state_.load(std::memory_order_relaxed);
  if (s < 0) {
    int parsed = parse_env(env_var_, default_);
    int expected = -1;
    // A concurrent set() wins over the environment.
    state_.compare_exchange_strong(expected, parsed);
    s = state_.load(std::memory_order_relaxed);
  }
  return s != 0;
}

void BoolFlag::set(bool v) { state_.store(v ? 1 : 0, std::memory_order_relaxed); }

Scoped::Scoped(BoolFlag& flag, bool value) : flag_(&flag) { t_overrides.emplace_back(&flag, value); }

Scoped::~Scoped() {
  for (auto it = t_overrides.rbegin(); it != t_overrides.rend(); ++it) {
    if (it->first == flag_) {
      t_overrides.erase(std::next(it).base());
      return;
    }
  }
}

bool set_flush_denormal(bool on) {
#ifdef JX_HAVE_MXCSR
  constexpr unsigned kFlushToZero = 0x8000, kDenormalsAreZero = 0x0040;
  auto apply = [on] {
    const unsigned csr = _mm_getcsr();
    _mm_setcsr(on ? csr | kFlushToZero | kDenormalsAreZero : csr & ~(kFlushToZero | kDenormalsAreZero));
  };
  apply();
  // Every thread of the OpenMP pool runs the region; the mode is per thread and stays.
#pragma omp parallel
  apply();
  return true;
#else
  (void)on;
  return false;
#endif
}

}  // namespace jx::config
