// JX_CHECK guards internal invariants: a failure is a jx bug, reported as InternalError.
// User errors are thrown explicitly with a message that names the op and the fix.
#pragma once
#include "jx/error.h"
#include "support/str.h"

#define JX_CHECK(cond, ...)                                                                   \
  do {                                                                                        \
    if (!(cond))                                                                              \
      throw ::jx::InternalError(::jx::str("jx internal error at ", __FILE__, ":", __LINE__, \
                                          ": ", #cond, " ", ##__VA_ARGS__));                  \
  } while (0)
