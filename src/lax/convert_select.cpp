#include "jx/lax.h"
#include "transforms/bind.h"

namespace jx::lax {

using ops::Prim;

Array convert_element_type(const Array& x, DType new_dtype, bool weak_type) {
  if (x.dtype() == new_dtype && x.weak_type() == weak_type) return x;
  return bind1(Prim::ConvertElementType, {x},
               {{"new_dtype", new_dtype}, {"weak_type", weak_type}});
}

}  // namespace jx::lax
