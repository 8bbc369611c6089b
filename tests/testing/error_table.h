// A table of bad calls (tests/<module>/errors_test.cpp): each row's call must throw exactly
// the jx error type of the row (not a subclass) whose message contains every fragment: the
// operation's name, the offending shape/dtype/value and the words of the fix. A failing row
// names itself, the type it threw and the whole message; nothing may escape as a non-jx
// exception.
//   std::vector<ErrorRow> rows = {
//       row<jx::ShapeError>("reshape to a different size", [] { x.reshape({7}); },
//                           {"[reshape]", "f32[2,3]", "(7,)"}),
//   };
//   run_rows(rows);
#pragma once
#include <cxxabi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

namespace jx::testing {

struct ErrorRow {
  std::string name;
  std::function<void()> call;
  const std::type_info* type;  // the exact error type expected
  std::vector<std::string> fragments;
};

template <class E>
ErrorRow row(std::string name, std::function<void()> call, std::vector<std::string> fragments) {
  return {std::move(name), std::move(call), &typeid(E), std::move(fragments)};
}

inline std::string type_name(const std::type_info& t) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> s(abi::__cxa_demangle(t.name(), nullptr, nullptr, &status),
                                           std::free);
  return status == 0 ? s.get() : t.name();
}

inline void run_rows(const std::vector<ErrorRow>& rows) {
  for (const ErrorRow& r : rows) {
    try {
      r.call();
      ADD_FAILURE() << "[" << r.name << "] no exception; expected " << type_name(*r.type);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      if (typeid(e) != *r.type) {
        ADD_FAILURE() << "[" << r.name << "] threw " << type_name(typeid(e)) << ", expected "
                      << type_name(*r.type) << ": " << what;
        continue;
      }
      for (const std::string& f : r.fragments)
        EXPECT_NE(what.find(f), std::string::npos)
            << "[" << r.name << "] " << what << "\n  lacks: " << f;
    } catch (...) {
      ADD_FAILURE() << "[" << r.name << "] threw something that is not a std::exception";
    }
  }
}

}  // namespace jx::testing
