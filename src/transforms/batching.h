// vmap: the batching interpreter (JAX's BatchTrace). A BatchTracer is a value with one
// extra dimension, its batch dim; each primitive's batching rule (ops/<family>.cpp) maps
// the batched operands to batched outputs, moving batch dims only where it must.
#pragma once
#include <functional>
#include <string>

#include "transforms/trace.h"

namespace jx::tr {

using FlatFn = std::function<Arrays(const Arrays&)>;

// Marks an output that must come out unbatched (out_axes none); other out_dims may be
// negative (counted from the end of the batched rank).
inline constexpr int kOutNone = -(1 << 30);

// f mapped over axis in_dims[i] of args[i] (-1: not mapped; already normalized); each
// output gets its batch dim at out_dims()[k] (called after f ran, when the number of
// outputs is known). axis_size is needed when no argument is mapped, and
// otherwise must agree with the mapped ones (-1: take it from them). A non-empty
// axis_name names the mapped axis for the collectives in f (ops/collective.h).
Arrays vmap_flat(const FlatFn& f, const Arrays& args, const std::vector<int>& in_dims,
                 const std::function<std::vector<int>(size_t num_outs)>& out_dims,
                 int64_t axis_size = -1, const std::string& axis_name = {});

// For rules of higher-order primitives: f batched with its outputs' batch dims returned
// as they come out (-1 where an output is not batched).
std::pair<Arrays, std::vector<int>> vmap_flat_dims(const FlatFn& f, const Arrays& args,
                                                   const std::vector<int>& in_dims,
                                                   int64_t axis_size);

}  // namespace jx::tr
