// Building error messages and logs.
#pragma once
#include <sstream>
#include <string>
#include <vector>

#include "jx/dtype.h"
#include "jx/shape.h"

namespace jx {

template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// "f32[32,10]": the jaxpr spelling of a type, used in error messages.
std::string type_str(DType dtype, const Shape& shape);

template <class T>
std::string list_str(const std::vector<T>& v) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  if (v.size() == 1) os << ",";
  os << ")";
  return os.str();
}

}  // namespace jx
