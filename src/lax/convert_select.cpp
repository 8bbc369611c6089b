#include "core/array_impl.h"
#include "jx/lax.h"
#include "transforms/bind.h"

namespace jx::lax {

using ops::Prim;

Array convert_element_type(const Array& x, DType new_dtype, bool weak_type) {
  if (x.dtype() == new_dtype && x.weak_type() == weak_type) return x;
  ops::Params params{{"new_dtype", new_dtype}, {"weak_type", weak_type}};
  // A concrete value is converted now even while tracing, as JAX folds conversions of
  // constants: promotion of `x * 2.0` must not stage a convert of the literal 2.0.
  if (x.is_concrete()) {
    // A C++ double rounds once, to the new dtype (not to float32 first).
    if (const auto& v = detail::impl_of(x).cpp_value) {
      Array exact = detail::empty_array({}, DType::Float64, false);
      *detail::data<double>(exact) = *v;
      return eval_primitive(Prim::ConvertElementType, {&exact, 1}, params)[0];
    }
    return eval_primitive(Prim::ConvertElementType, {&x, 1}, params)[0];
  }
  return bind1(Prim::ConvertElementType, {x}, params);
}

Array bitcast_convert_type(const Array& x, DType new_dtype) {
  return bind1(Prim::BitcastConvertType, {x}, {{"new_dtype", new_dtype}});
}

Array select_n(const Array& which, const std::vector<Array>& cases) {
  std::vector<Array> in;
  in.reserve(cases.size() + 1);
  in.push_back(which);
  in.insert(in.end(), cases.begin(), cases.end());
  return bind1(Prim::SelectN, std::span<const Array>(in));
}

Array clamp(const Array& lo, const Array& x, const Array& hi) {
  return bind1(Prim::Clamp, {lo, x, hi});
}

}  // namespace jx::lax
