// Jaxpr printouts for tests that look for one equation in them: the printer breaks a long
// equation's params over several lines (as JAX's does), so join them back first.
#pragma once
#include <string>

namespace jx::testing {

// The printout with every line break (and the indentation after it) removed: a break right
// after an opening bracket or before a closing one disappears, any other becomes a space.
inline std::string unbroken(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\n') {
      out += s[i];
      continue;
    }
    size_t j = i + 1;
    while (j < s.size() && s[j] == ' ') ++j;
    const bool after_open = !out.empty() && (out.back() == '[' || out.back() == '(');
    const bool before_close = j < s.size() && (s[j] == ']' || s[j] == ')');
    if (!after_open && !before_close) out += ' ';
    i = j - 1;
  }
  return out;
}

}  // namespace jx::testing
