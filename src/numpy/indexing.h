// The machinery behind Array::index and x.at(...): jnp's index_to_gather and friends
// (jax/_src/numpy/indexing.py), shared with jnp selection functions.
#pragma once
#include <optional>
#include <vector>

#include "jx/array.h"
#include "jx/lax.h"

namespace jx::numpy::detail {

// One parsed index entry. Bool is a scalar boolean (x(true) adds a dim, as NumPy).
struct Idx {
  enum Kind { Int, Sl, None, Ell, Arr, Bool } kind = Sl;
  int64_t i = 0;
  Slice s;
  Array a;
  bool b = false;
};

struct Indexer {
  Shape slice_shape;                      // the result shape of x[idx]
  std::vector<int64_t> gather_slice_shape;
  Array gather_indices;                   // [..., K] int32; shape (0,) when nothing is gathered
  lax::GatherDimensionNumbers dnums;
  bool unique_indices = false, indices_are_sorted = false;
  std::vector<int64_t> newaxis_dims;
  std::vector<int64_t> scalar_bool_dims;
};

std::vector<Idx> to_idx(const std::vector<IndexArg>& args);
// Concrete boolean masks become one int index array per mask dim (NumPy's nonzero).
std::vector<Idx> expand_bool_indices(const std::vector<Idx>& idx, const Shape& shape);
void check_index_dtypes(const std::vector<Idx>& idx);
// Expands the ellipsis and appends trailing full slices; throws for too many indices.
std::vector<Idx> canonicalize_tuple_index(size_t ndim, const std::vector<Idx>& idx);
Indexer index_to_gather(const Shape& x_shape, const std::vector<Idx>& idx);

lax::GatherScatterMode gather_mode(std::optional<IndexMode> m);
lax::GatherScatterMode scatter_mode(std::optional<IndexMode> m);

// x[idx] (and x.at[idx].get(...)).
Array rewriting_take(const Array& x, const std::vector<IndexArg>& idx, const AtOptions& opts);

enum class ScatterKind { Set, Add, Mul, Min, Max };
// x.at[idx].<op>(values): values are promoted with x, then the result converted back to
// x's dtype and weak type, as jax's _scatter_impl.
Array scatter_update(const Array& x, const std::vector<IndexArg>& idx, const Array& values,
                     ScatterKind kind, const AtOptions& opts);

}  // namespace jx::numpy::detail
