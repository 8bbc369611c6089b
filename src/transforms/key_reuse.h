// The PRNG key-reuse checker behind jx::config::debug_key_reuse (JAX's
// jax.experimental.key_reuse, flag jax_debug_key_reuse). jx keys are raw uint32[2] arrays,
// so a key is told apart by what holds it: a concrete key by its buffer (a reshape or a
// copied handle is the same key), a traced key by its tracer. Every sampler, bits and split
// consume their key; fold_in, key_data and PRNGKey do not (as in JAX). A second
// consumption of the same key throws jx::KeyReuseError; under jit, vmap or a control-flow
// body this happens while the function is traced, before anything runs.
//
// The branches of lax::cond / switch are traced one after the other; each consumption
// remembers the jaxpr traces that were being staged when it happened, and two uses in
// different branches (traces that are siblings, not one inside the other) are not a reuse,
// while a use after the cond of a key that a branch consumed is (JAX's rule: a cond
// consumes what any branch consumes).
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "jx/array.h"
#include "jx/config.h"

namespace jx::random::detail {

// Consumes `key` for the public function `fn` (checks, then marks it) when debug_key_reuse
// is on; a no-op costing one flag read when it is off. Lives for the whole call, so that a
// sampler built on another public sampler with the same key (dirichlet on loggamma, choice
// on randint) consumes it once, under the outer name; a call that ends by throwing (a bad
// shape, say) leaves the key unconsumed. Throws jx::KeyReuseError.
class KeyUse {
 public:
  KeyUse(const char* fn, const Array& key);
  ~KeyUse();
  KeyUse(const KeyUse&) = delete;
  KeyUse& operator=(const KeyUse&) = delete;

 private:
  bool active_;
  const void* recorded_ = nullptr;  // the identity this call marked, if it did
  int exceptions_ = 0;              // std::uncaught_exceptions() at the start
};

}  // namespace jx::random::detail

namespace jx::random::key_reuse {

// Hooks for a function that is traced once and then called many times (jit): the mask of
// `inputs` (the tracers it was traced with) that were consumed while it was traced...
std::vector<bool> consumed_inputs(std::span<const Array> inputs);
// ...and, at each call, checks that no argument the program consumes was consumed before,
// then marks those arguments consumed (JAX: a jitted function that consumes its key
// argument consumes the caller's key). `what` names the function in the message.
void consume_arguments(const std::string& what, std::span<const Array> args,
                       const std::vector<bool>& consumes);

// Whether `key` (concrete or traced) has been consumed, as seen from the current trace.
bool is_consumed(const Array& key);
// Identities currently remembered (for tests: forgotten ones are dropped as they die).
size_t tracked_keys();

}  // namespace jx::random::key_reuse
