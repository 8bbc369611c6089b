#include "support/str.h"

namespace jx {

std::string type_str(DType dtype, const Shape& shape) {
  std::ostringstream os;
  os << dtype_short_name(dtype) << "[";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? "," : "") << shape[i];
  os << "]";
  return os.str();
}

}  // namespace jx
