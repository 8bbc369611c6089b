#include "jx/lax.h"
#include "support/str.h"
#include "transforms/bind.h"

namespace jx::lax {

using ops::Prim;

Array dot_general(const Array& lhs, const Array& rhs, const DotDimensionNumbers& dn,
                  std::optional<DType> preferred_element_type) {
  ops::Params p{{"lhs_contracting", dn.lhs_contracting},
                {"rhs_contracting", dn.rhs_contracting},
                {"lhs_batch", dn.lhs_batch},
                {"rhs_batch", dn.rhs_batch}};
  if (preferred_element_type) p.set("preferred_element_type", *preferred_element_type);
  return bind1(Prim::DotGeneral, {lhs, rhs}, p);
}

Array dot(const Array& lhs, const Array& rhs) {
  if (lhs.ndim() < 1 || lhs.ndim() > 2 || rhs.ndim() < 1 || rhs.ndim() > 2)
    throw ShapeError(str("[dot] operands must have rank 1 or 2, got ",
                         type_str(lhs.dtype(), lhs.shape()), " · ",
                         type_str(rhs.dtype(), rhs.shape()),
                         "; use lax::dot_general or jnp::matmul for batched operands"));
  return dot_general(lhs, rhs, {{lhs.ndim() - 1}, {0}, {}, {}});
}

}  // namespace jx::lax
