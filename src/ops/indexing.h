// Params of the indexing family (ops/indexing.cpp): XLA's gather/scatter dimension numbers
// as printable, comparable param objects, and the GatherScatterMode spelling of jaxprs.
#pragma once
#include <memory>
#include <string>

#include "jx/lax.h"
#include "ops/params.h"

namespace jx::ops {

struct GatherDnumsParam final : ParamObject {
  lax::GatherDimensionNumbers d;
  explicit GatherDnumsParam(lax::GatherDimensionNumbers dn) : d(std::move(dn)) {}
  std::string str() const override;
  bool equals(const ParamObject& other) const override;
  size_t hash() const override;
};

struct ScatterDnumsParam final : ParamObject {
  lax::ScatterDimensionNumbers d;
  explicit ScatterDnumsParam(lax::ScatterDimensionNumbers dn) : d(std::move(dn)) {}
  std::string str() const override;
  bool equals(const ParamObject& other) const override;
  size_t hash() const override;
};

// "GatherScatterMode.CLIP", as JAX prints the mode param.
std::string mode_param(lax::GatherScatterMode m);
lax::GatherScatterMode mode_from_param(const std::string& s);

// The fill value a fill_or_drop gather uses when none is given: NaN for floats, the
// minimum for signed ints, the maximum for unsigned ints, true for bool (as jax).
// Returned as the element's bytes (up to 8).
void default_fill_bytes(DType t, void* out);

// Sets the batching rules of the indexing family (ops/indexing_batching.cpp); called by
// register_indexing().
void register_indexing_batching();

}  // namespace jx::ops
