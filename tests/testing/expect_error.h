// expect_error<E>(f, "text"): f must throw an E (a jx error type) whose message contains
// "text", or every one of {"part", "part"}. Error messages are part of jx's interface (they
// name the operation, the shapes and the fix), so the tests read them.
#pragma once
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace jx::testing {

template <class E, class F>
void expect_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one containing: " << *parts.begin();
  } catch (const E& e) {
    const std::string what = e.what();
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << what << "\n  lacks: " << p;
  }
}

template <class E, class F>
void expect_error(F&& f, const std::string& text) {
  expect_error<E>(std::forward<F>(f), {text});
}

}  // namespace jx::testing
