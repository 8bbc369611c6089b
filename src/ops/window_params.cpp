#include "ops/window_params.h"

#include "support/str.h"

namespace jx::ops {

std::string PaddingParam::str() const {
  std::string s = "(";
  for (size_t i = 0; i < pairs.size(); ++i)
    s += jx::str(i ? ", " : "", "(", pairs[i].first, ", ", pairs[i].second, ")");
  return s + (pairs.size() == 1 ? ",)" : ")");
}

bool PaddingParam::equals(const ParamObject& other) const {
  auto* o = dynamic_cast<const PaddingParam*>(&other);
  return o && o->pairs == pairs;
}

size_t PaddingParam::hash() const {
  size_t h = 23;
  for (auto [lo, hi] : pairs) h = (h * 1000003u ^ std::hash<int64_t>()(lo)) * 31u + size_t(hi);
  return h;
}

}  // namespace jx::ops
