// Primitive parameters: a small ordered list of named values, printable and comparable
// (the jaxpr printer, CSE and the jit cache all read them).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "jx/dtype.h"
#include "support/check.h"

namespace jx::ops {

// For params that are not plain values (sub-jaxprs, dimension-number structs).
class ParamObject {
 public:
  virtual ~ParamObject() = default;
  virtual std::string str() const = 0;
  virtual bool equals(const ParamObject& other) const = 0;
  virtual size_t hash() const = 0;
};

using ParamValue = std::variant<bool, int64_t, double, std::string, DType, std::vector<int64_t>,
                                std::shared_ptr<const ParamObject>>;

class Params {
 public:
  Params() = default;
  Params(std::initializer_list<std::pair<std::string_view, ParamValue>> items)
      : items_(items.begin(), items.end()) {}

  bool has(std::string_view key) const { return find(key) != nullptr; }
  template <class T>
  const T& get(std::string_view key) const {
    const ParamValue* v = find(key);
    JX_CHECK(v, "missing param ", key);
    const T* p = std::get_if<T>(v);
    JX_CHECK(p, "param ", key, " has another type");
    return *p;
  }
  int64_t i(std::string_view key) const { return get<int64_t>(key); }
  double f(std::string_view key) const { return get<double>(key); }
  bool b(std::string_view key) const { return get<bool>(key); }
  DType dtype(std::string_view key) const { return get<DType>(key); }
  const std::vector<int64_t>& ints(std::string_view key) const {
    return get<std::vector<int64_t>>(key);
  }
  const std::string& s(std::string_view key) const { return get<std::string>(key); }
  template <class T>
  const T& obj(std::string_view key) const {
    auto& p = get<std::shared_ptr<const ParamObject>>(key);
    auto* t = dynamic_cast<const T*>(p.get());
    JX_CHECK(t, "param ", key, " has another object type");
    return *t;
  }

  void set(std::string_view key, ParamValue v) {
    for (auto& kv : items_) {
      if (kv.first == key) {
        kv.second = std::move(v);
        return;
      }
    }
    items_.emplace_back(key, std::move(v));
  }
  const std::vector<std::pair<std::string_view, ParamValue>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }

  // "axes=(0, 1) new_dtype=float32", keys in insertion order.
  std::string str() const;
  friend bool operator==(const Params& a, const Params& b);
  size_t hash() const;

 private:
  const ParamValue* find(std::string_view key) const {
    for (auto& kv : items_)
      if (kv.first == key) return &kv.second;
    return nullptr;
  }
  // Keys are string literals owned by the primitive's family file.
  std::vector<std::pair<std::string_view, ParamValue>> items_;
};

}  // namespace jx::ops
