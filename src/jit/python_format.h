// Python's str.format number specs, shared by debug::print (debug.cpp) and checkify's
// messages (checkify_error.cpp).
#pragma once
#include <string>
#include <string_view>

namespace jx::jit_detail {

// A Python format spec for one number ("8.3f", "+.2e", "d") as a printf conversion, or
// empty when the spec is outside the supported subset [+][width][.precision][fegdFEG].
inline std::string printf_conversion(std::string_view spec) {
  size_t i = 0;
  std::string out = "%";
  if (i < spec.size() && spec[i] == '+') out += spec[i++];
  while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') out += spec[i++];
  if (i < spec.size() && spec[i] == '.') {
    out += spec[i++];
    if (i >= spec.size() || spec[i] < '0' || spec[i] > '9') return "";
    while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') out += spec[i++];
  }
  char type = i < spec.size() ? spec[i++] : 'g';
  if (i != spec.size() || std::string_view("fegdFEG").find(type) == std::string_view::npos) return "";
  if (type == 'd') return out + "lld";
  return out + type;
}

}  // namespace jx::jit_detail
