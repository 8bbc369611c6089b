// jx::config: process-wide switches, the counterpart of jax.config. Each flag has a default,
// may be set from the environment (read once, at first use), set in code for the whole
// process (as jax.config.update), or overridden for a scope on one thread (as JAX's
// `with jax.threefry_partitionable(False):` context managers).
#pragma once
#include <atomic>

namespace jx::config {

class BoolFlag {
 public:
  constexpr BoolFlag(const char* name, const char* env_var, bool default_value)
      : name_(name), env_var_(env_var), default_(default_value) {}
  BoolFlag(const BoolFlag&) = delete;
  BoolFlag& operator=(const BoolFlag&) = delete;

  // The innermost scoped override on this thread, else the process-wide value.
  bool value() const;
  operator bool() const { return value(); }
  // Sets the process-wide value (scoped overrides on any thread still win).
  void set(bool v);
  const char* name() const { return name_; }
  const char* env_var() const { return env_var_; }

 private:
  const char* name_;
  const char* env_var_;
  bool default_;
  // -1: not yet read from the environment; else 0/1.
  mutable std::atomic<int> state_{-1};
};

// Overrides a flag on the current thread until destruction (nests; restores on exit).
class Scoped {
 public:
  Scoped(BoolFlag& flag, bool value);
  ~Scoped();
  Scoped(const Scoped&) = delete;
  Scoped& operator=(const Scoped&) = delete;

 private:
  const BoolFlag* flag_;
};

// jax_threefry_partitionable (JAX's default since 0.5.0: true). When true, element i of
// random bits / split hashes the 64-bit counter i on its own (shard-invariant); false is
// JAX's legacy stream. Env: JX_THREEFRY_PARTITIONABLE=0/1.
extern BoolFlag threefry_partitionable;

// jax_disable_jit: jx::jit calls the function directly (every op runs eagerly), for
// debugging with prints and a debugger. Env: JX_DISABLE_JIT=0/1.
extern BoolFlag disable_jit;
// jax_debug_nans: a jitted function whose outputs contain a NaN is rerun op by op, and a
// jx::FloatingPointError names the first primitive that produced one. Env: JX_DEBUG_NANS.
extern BoolFlag debug_nans;
// jax_log_compiles (with jax_explain_cache_misses): each jit compile is logged to stderr
// with the reason of the cache miss (which argument changed, from what to what).
// Env: JX_LOG_COMPILES.
extern BoolFlag log_compiles;
// jax_debug_key_reuse (JAX's key-reuse checker; off by default): a PRNG key consumed twice
// (by a sampler, bits or split; fold_in and key_data do not consume) throws
// jx::KeyReuseError, at the second call eagerly, while tracing under jit / vmap / control
// flow. Off, it costs one flag read per random call. Env: JX_DEBUG_KEY_REUSE.
// See docs/random.md, "Key reuse".
extern BoolFlag debug_key_reuse;
// 3x3 stride-1 float32 convolutions with at least 64 features each way in NHWC run by
// Winograd's F(4x4, 3x3), as cuDNN picks it on GPUs: about 2x faster at 64-128 features,
// with rounding about 1e-5 of the output's scale instead of the direct sum's (docs/convolution.md,
// "Winograd"). No effect on other convolutions. Read when a convolution runs, so it needs
// no recompile. Env: JX_CONV_WINOGRAD=0/1.
extern BoolFlag conv_winograd;

// Subnormal floats flushed to zero (x86's FTZ and DAZ modes), as torch.set_flush_denormal:
// JAX on CPU always computes so, and operations on subnormals can take a hundred times
// longer. Off by default: jx computes with IEEE subnormals, as NumPy does. It sets the mode
// of the calling thread and of every OpenMP worker thread, and threads created later
// inherit it from their creator, so call it at the start of a program, before starting
// threads of your own. Returns false (and changes nothing) where the CPU has no such mode.
// Why and when: docs/jit.md, "Subnormal numbers".
bool set_flush_denormal(bool on);

}  // namespace jx::config
